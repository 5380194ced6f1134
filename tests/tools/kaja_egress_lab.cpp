// A small internet for the egress proxy's tests, run inside a network namespace the test
// made (the test puts the addresses on that namespace's loopback):
//
//   kaja_egress_lab --socket PATH [--origin ADDR:PORT]... [--stall ADDR:PORT]
//                   [--allow-private CIDR]... [--connect-timeout-ms N] [--idle-timeout-ms N]
//                   [--request-timeout-ms N] [--max-connections N] [--dns ADDR:PORT]
//
// Each --origin is a tiny HTTP server: it reads one request (head and Content-Length
// body), prints "SAW ADDR:PORT <request line>" and answers 200 with "origin ADDR:PORT",
// the head it got and the body; one it cannot listen on is reported as "NO-ORIGIN ADDR". --stall
// listens with a full backlog and never accepts, so a connection to it hangs. --dns is a DNS server
// (UDP) that answers A queries for rebind.example with 93.184.216.34 the first time and 10.0.0.5
// after that, TTL 0, AAAA queries with no address and anything else with NXDOMAIN; it prints "DNS
// <type> <name>" per query. The egress proxy listens on PATH; its log lines are printed as "LOG
// <line>". Once everything listens it prints "PORT 0". On SIGTERM it stops the proxy, prints
// "COUNTERS connections=… refused=… bad=… failed=… busy=…" and exits 0.
#include <sys/socket.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/net/address_guard.h"
#include "sandbox/cidr.h"
#include "sandbox/egress_proxy.h"

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

tcp::endpoint parseEndpoint(const std::string& text) {
  const auto colon = text.rfind(':');
  auto address = kaja::core::net::parseIpAddress(text.substr(0, colon));
  if (!address) {
    std::fprintf(stderr, "bad endpoint %s\n", text.c_str());
    std::exit(2);
  }
  return {asio::ip::make_address(address->text()),
          static_cast<unsigned short>(std::stoi(text.substr(colon + 1)))};
}

struct OriginRequest : std::enable_shared_from_this<OriginRequest> {
  OriginRequest(tcp::socket s, std::string n) : socket(std::move(s)), name(std::move(n)) {}
  tcp::socket socket;
  std::string name;
  std::string data;
  std::string reply;

  void start() {
    asio::async_read_until(socket, asio::dynamic_buffer(data, 1 << 20), "\r\n\r\n",
                           [self = shared_from_this()](const error_code& error, std::size_t n) {
                             if (!error) self->onHead(n);
                           });
  }
  void onHead(std::size_t headSize) {
    std::size_t length = 0;
    const auto at = data.find("\r\nContent-Length: ");
    if (at != std::string::npos && at < headSize) {
      length = std::strtoul(data.c_str() + at + 18, nullptr, 10);
    }
    const std::size_t have = data.size() - headSize;
    const std::size_t missing = length > have ? length - have : 0;
    data.resize(headSize + std::max(length, have));
    asio::async_read(socket, asio::buffer(data.data() + headSize + have, missing),
                     [self = shared_from_this(), headSize](const error_code& error, std::size_t) {
                       if (!error) self->respond(headSize);
                     });
  }
  void respond(std::size_t headSize) {
    std::printf("SAW %s %s\n", name.c_str(), data.substr(0, data.find("\r\n")).c_str());
    std::fflush(stdout);
    const std::string body =
        "origin " + name + "\n" + data.substr(0, headSize) + data.substr(headSize);
    reply = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
            "\r\nConnection: close\r\n\r\n" + body;
    asio::async_write(socket, asio::buffer(reply),
                      [self = shared_from_this()](const error_code&, std::size_t) {
                        error_code ignored;
                        self->socket.shutdown(tcp::socket::shutdown_both, ignored);
                      });
  }
};

// Answers DNS queries on `socket` as the header describes.
struct DnsServer {
  explicit DnsServer(asio::io_context& io, const asio::ip::udp::endpoint& at) : socket(io, at) {}
  asio::ip::udp::socket socket;
  asio::ip::udp::endpoint peer;
  std::array<unsigned char, 512> query{};
  int rebindAnswers = 0;

  void receive() {
    socket.async_receive_from(asio::buffer(query), peer,
                              [this](const error_code& error, std::size_t size) {
                                if (!error) answer(size);
                                receive();
                              });
  }
  void answer(std::size_t size) {
    if (size < 17) return;
    std::string name;
    std::size_t at = 12;
    while (at < size && query[at] != 0) {
      const std::size_t length = query[at];
      if (at + 1 + length >= size) return;
      if (!name.empty()) name += '.';
      name.append(reinterpret_cast<const char*>(&query[at + 1]), length);
      at += 1 + length;
    }
    if (at + 5 > size) return;
    const int type = query[at + 1] << 8 | query[at + 2];
    const std::size_t questionEnd = at + 5;
    std::printf("DNS %s %s\n", type == 1 ? "A" : type == 28 ? "AAAA" : "other", name.c_str());
    std::fflush(stdout);
    std::vector<unsigned char> reply(query.begin(), query.begin() + questionEnd);
    const bool known = name == "rebind.example";
    reply[2] = 0x81;                 // a response, recursion desired
    reply[3] = known ? 0x80 : 0x83;  // recursion available; NXDOMAIN when unknown
    reply[6] = reply[7] = reply[8] = reply[9] = reply[10] = reply[11] = 0;
    if (known && type == 1) {
      reply[7] = 1;
      const unsigned char address[2][4] = {{93, 184, 216, 34}, {10, 0, 0, 5}};
      const unsigned char* ip = address[rebindAnswers++ == 0 ? 0 : 1];
      const unsigned char record[] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4};
      reply.insert(reply.end(), std::begin(record), std::end(record));
      reply.insert(reply.end(), ip, ip + 4);
    }
    error_code ignored;
    socket.send_to(asio::buffer(reply), peer, 0, ignored);
  }
};

void acceptOrigin(const std::shared_ptr<tcp::acceptor>& acceptor, const std::string& name) {
  acceptor->async_accept([acceptor, name](const error_code& error, tcp::socket socket) {
    if (error) return;
    std::make_shared<OriginRequest>(std::move(socket), name)->start();
    acceptOrigin(acceptor, name);
  });
}

}  // namespace

int main(int argc, char** argv) {
  asio::io_context io;
  kaja::sandbox::EgressOptions options;
  std::vector<std::shared_ptr<tcp::acceptor>> origins;
  std::vector<std::unique_ptr<tcp::socket>> stalled;
  std::unique_ptr<tcp::acceptor> stall;
  std::unique_ptr<DnsServer> dns;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--socket") {
      options.socketPath = value;
    } else if (flag == "--origin") {
      // An address this kernel cannot have (IPv6 switched off, say) is reported, not fatal.
      auto acceptor = std::make_shared<tcp::acceptor>(io);
      error_code error;
      const auto endpoint = parseEndpoint(value);
      acceptor->open(endpoint.protocol(), error);
      if (!error) acceptor->bind(endpoint, error);
      if (!error) acceptor->listen(asio::socket_base::max_listen_connections, error);
      if (error) {
        std::printf("NO-ORIGIN %s %s\n", value.c_str(), error.message().c_str());
        continue;
      }
      acceptOrigin(acceptor, value);
      origins.push_back(acceptor);
    } else if (flag == "--stall") {
      const auto endpoint = parseEndpoint(value);
      stall = std::make_unique<tcp::acceptor>(io, endpoint.protocol());
      stall->bind(endpoint);
      stall->listen(0);
      // Fill the accept queue: the kernel then drops further SYNs.
      for (int n = 0; n < 3; ++n) {
        auto socket = std::make_unique<tcp::socket>(io, endpoint.protocol());
        socket->non_blocking(true);
        // Not Asio's connect, which would wait for the answer that never comes.
        (void)::connect(socket->native_handle(), endpoint.data(),
                        static_cast<socklen_t>(endpoint.size()));
        stalled.push_back(std::move(socket));
      }
    } else if (flag == "--dns") {
      const auto endpoint = parseEndpoint(value);
      dns = std::make_unique<DnsServer>(
          io, asio::ip::udp::endpoint(endpoint.address(), endpoint.port()));
      dns->receive();
    } else if (flag == "--allow-private") {
      auto cidr = kaja::sandbox::parseCidr(value);
      if (!cidr) {
        std::fprintf(stderr, "%s\n", cidr.error().message.c_str());
        return 2;
      }
      options.allowPrivate.push_back(*cidr);
    } else if (flag == "--connect-timeout-ms") {
      options.connectTimeout = std::chrono::milliseconds(std::stoi(value));
    } else if (flag == "--idle-timeout-ms") {
      options.idleTimeout = std::chrono::milliseconds(std::stoi(value));
    } else if (flag == "--request-timeout-ms") {
      options.requestTimeout = std::chrono::milliseconds(std::stoi(value));
    } else if (flag == "--max-connections") {
      options.maxConnections = std::stoul(value);
    }
  }
  options.log = [](const std::string& line) {
    std::printf("LOG %s\n", line.c_str());
    std::fflush(stdout);
  };
  auto proxy = kaja::sandbox::EgressProxy::create(io, options);
  if (!proxy) {
    std::fprintf(stderr, "%s\n", proxy.error().message.c_str());
    return 1;
  }
  (*proxy)->start();
  asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](const error_code&, int) {
    (*proxy)->stop();
    const auto c = (*proxy)->counters();
    std::printf("COUNTERS connections=%llu refused=%llu bad=%llu failed=%llu busy=%llu\n",
                static_cast<unsigned long long>(c.connections),
                static_cast<unsigned long long>(c.refused),
                static_cast<unsigned long long>(c.badRequests),
                static_cast<unsigned long long>(c.failed), static_cast<unsigned long long>(c.busy));
    std::fflush(stdout);
    io.stop();
  });
  std::printf("PORT 0\n");
  std::fflush(stdout);
  io.run();
  return 0;
}
