#pragma once

// One connection to the egress proxy, from its request head to the end of its relay.
// Internal to egress_proxy.cpp and egress_session.cpp (it carries Boost.Asio).
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/net/address_guard.h"
#include "sandbox/egress_proxy.h"
#include "sandbox/egress_request.h"

namespace kaja::sandbox {

class EgressSession;

/// What the proxy and its sessions share; sessions keep it alive until they end.
struct EgressProxy::Shared {
  Shared(boost::asio::io_context& context, EgressOptions opts);

  boost::asio::io_context& io;
  const EgressOptions options;
  boost::asio::local::stream_protocol::acceptor acceptor;
  boost::asio::steady_timer retry;  ///< waits after an accept error (EMFILE) before retrying
  std::string socketPath;
  ino_t socketInode = 0;
  std::atomic<bool> stopped{false};

  std::atomic<std::uint64_t> connections{0}, tunnels{0}, forwarded{0}, refused{0}, badRequests{0},
      failed{0}, busy{0};
  std::atomic<std::size_t> active{0};

  std::mutex mutex;  ///< guards `sessions` and `nextId`
  std::map<std::uint64_t, std::weak_ptr<EgressSession>> sessions;
  std::uint64_t nextId = 0;

  /// Passes `line` to the operator's log, if any.
  void log(const std::string& line) const;
};

/// One client connection. Every handler runs on the connection's strand.
class EgressSession : public std::enable_shared_from_this<EgressSession> {
 public:
  using UnixSocket = boost::asio::local::stream_protocol::socket;
  using TcpSocket = boost::asio::ip::tcp::socket;

  EgressSession(std::shared_ptr<EgressProxy::Shared> shared, UnixSocket client, std::uint64_t id);
  ~EgressSession();
  EgressSession(const EgressSession&) = delete;
  EgressSession& operator=(const EgressSession&) = delete;

  /// Reads the request head and serves it; call on the session's strand.
  void start();
  /// Answers 503 (too many connections) and closes; call on the session's strand.
  void refuseBusy();
  /// Closes both sockets and cancels what is pending; call on the session's strand.
  void close();
  /// Returns the strand the session's handlers run on.
  UnixSocket::executor_type executor() { return client_.get_executor(); }

 private:
  enum class Phase { kHead, kDial, kRelay, kAnswering, kClosed };

  void onHead(const boost::system::error_code& error, std::size_t size);
  void dial();
  void onResolved(const boost::system::error_code& error,
                  const boost::asio::ip::tcp::resolver::results_type& results);
  void checkAndConnect(const std::vector<core::net::IpAddress>& addresses);
  void onConnected(const boost::system::error_code& error);
  void sendToOrigin(std::string bytes);
  void relay();
  template <class From, class To>
  void pump(From& from, To& to, char* buffer, bool& done);
  void arm(std::chrono::milliseconds after);
  void onTimer();
  void answer(int status, const std::string& body);
  void drainThenClose();
  void badRequest(const std::string& why);
  void refuse(const std::string& why);
  void unreachable(int status, const std::string& why);

  std::shared_ptr<EgressProxy::Shared> shared_;
  UnixSocket client_;
  TcpSocket origin_;
  boost::asio::ip::tcp::resolver resolver_;
  boost::asio::steady_timer timer_;
  std::uint64_t id_;
  std::uint64_t timerGeneration_ = 0;
  Phase phase_ = Phase::kHead;
  std::string head_;   ///< the request head, then the bytes that followed it
  std::string reply_;  ///< what is being written to the client or origin
  ProxyRequest request_;
  std::unique_ptr<char[]> buffers_;  ///< two relay buffers, allocated once relaying starts
  bool upDone_ = false;
  bool downDone_ = false;
  std::chrono::steady_clock::time_point lastActivity_;
};

}  // namespace kaja::sandbox
