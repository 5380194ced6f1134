// The worker's egress proxy: a unix socket, an accept loop, and one session per connection.
#include "sandbox/egress_proxy.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <cerrno>
#include <cstring>

#include "core/util/sys.h"
#include "core/util/unique_fd.h"
#include "sandbox/egress_session.h"

namespace kaja::sandbox {

namespace asio = boost::asio;
using boost::system::error_code;
using unix_stream = asio::local::stream_protocol;

namespace {

core::Result<void> sysFail(std::string_view call, const std::string& what, int err) {
  return core::fail(core::ErrorCode::kIo, core::syscallMessage(call, what, err) + ".", what);
}

// Binds a listening unix socket at `path` with mode 0600, owned by `owner` when given. It
// is bound under a temporary name, made 0600 and given its owner, then renamed into place,
// so nobody else can connect while it is still open to all.
core::Result<core::UniqueFd> bindSocket(const std::string& path,
                                        const std::optional<RunAs>& owner) {
  const std::string temporary = path + ".new";
  sockaddr_un address{};
  if (temporary.size() >= sizeof address.sun_path) {
    return core::fail(core::ErrorCode::kIo,
                      "The egress socket path \"" + path + "\" is too long for a unix socket; " +
                          "choose a shorter one.",
                      path);
  }
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0 && !S_ISSOCK(info.st_mode)) {
    return core::fail(core::ErrorCode::kIo,
                      "\"" + path +
                          "\" exists and is not a socket; remove it or choose another "
                          "path for the egress socket.",
                      path);
  }
  core::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) return std::unexpected(sysFail("socket", "AF_UNIX", errno).error());
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, temporary.c_str(), temporary.size() + 1);
  ::unlink(temporary.c_str());
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return std::unexpected(sysFail("bind", temporary, errno).error());
  }
  if (::chmod(temporary.c_str(), 0600) != 0 ||
      (owner && ::lchown(temporary.c_str(), owner->uid, owner->gid) != 0) ||
      ::rename(temporary.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temporary.c_str());
    return std::unexpected(sysFail("chmod/chown/rename", path, err).error());
  }
  if (::listen(fd.get(), SOMAXCONN) != 0)
    return std::unexpected(sysFail("listen", path, errno).error());
  return fd;
}

void accept(const std::shared_ptr<EgressProxy::Shared>& shared) {
  shared->acceptor.async_accept(
      asio::make_strand(shared->io), [shared](const error_code& error, unix_stream::socket client) {
        if (error == asio::error::operation_aborted || shared->stopped) return;
        if (error) {
          // Out of fds, say: wait a little rather than spin.
          shared->log("egress: accept failed (" + error.message() + "); retrying");
          shared->retry.expires_after(std::chrono::milliseconds(100));
          shared->retry.async_wait([shared](const error_code& waited) {
            if (!waited && !shared->stopped) accept(shared);
          });
          return;
        }
        ++shared->connections;
        std::shared_ptr<EgressSession> session;
        {
          std::lock_guard lock(shared->mutex);
          const auto id = shared->nextId++;
          session = std::make_shared<EgressSession>(shared, std::move(client), id);
          shared->sessions[id] = session;
        }
        const bool busy = shared->active > shared->options.maxConnections;
        asio::dispatch(session->executor(), [session, busy] {
          if (busy) {
            session->refuseBusy();
          } else {
            session->start();
          }
        });
        accept(shared);
      });
}

}  // namespace

EgressProxy::Shared::Shared(asio::io_context& context, EgressOptions opts)
    : io(context),
      options(std::move(opts)),
      acceptor(asio::make_strand(context)),
      retry(acceptor.get_executor()),
      socketPath(options.socketPath) {}

void EgressProxy::Shared::log(const std::string& line) const {
  if (options.log) options.log(line);
}

core::Result<std::unique_ptr<EgressProxy>> EgressProxy::create(asio::io_context& io,
                                                               EgressOptions options) {
  auto fd = bindSocket(options.socketPath, options.socketOwner);
  if (!fd) return std::unexpected(fd.error());
  auto shared = std::make_shared<Shared>(io, std::move(options));
  error_code error;
  shared->acceptor.assign(unix_stream(), fd->get(), error);
  if (error) {
    return core::fail(core::ErrorCode::kIo,
                      "kaja could not listen on the egress socket (" + error.message() + ").",
                      shared->socketPath);
  }
  (void)fd->release();
  struct stat info {};
  if (::stat(shared->socketPath.c_str(), &info) == 0) shared->socketInode = info.st_ino;
  return std::unique_ptr<EgressProxy>(new EgressProxy(std::move(shared)));
}

EgressProxy::EgressProxy(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}

EgressProxy::~EgressProxy() { stop(); }

void EgressProxy::start() {
  asio::dispatch(shared_->acceptor.get_executor(), [shared = shared_] {
    if (!shared->stopped) accept(shared);
  });
}

void EgressProxy::stop() {
  if (shared_->stopped.exchange(true)) return;
  asio::post(shared_->acceptor.get_executor(), [shared = shared_] {
    error_code ignored;
    shared->acceptor.close(ignored);
    shared->retry.cancel();
  });
  std::vector<std::shared_ptr<EgressSession>> open;
  {
    std::lock_guard lock(shared_->mutex);
    for (const auto& [id, weak] : shared_->sessions) {
      if (auto session = weak.lock()) open.push_back(std::move(session));
    }
  }
  for (auto& session : open) {
    asio::post(session->executor(), [session] { session->close(); });
  }
  // Only the socket this proxy made: another proxy may have replaced it since.
  struct stat info {};
  if (::stat(shared_->socketPath.c_str(), &info) == 0 && info.st_ino == shared_->socketInode) {
    ::unlink(shared_->socketPath.c_str());
  }
}

EgressCounters EgressProxy::counters() const {
  return {shared_->connections, shared_->tunnels, shared_->forwarded, shared_->refused,
          shared_->badRequests, shared_->failed,  shared_->busy,      shared_->active};
}

std::vector<std::pair<std::string, std::string>> egressProxyEnvironment(std::uint16_t port) {
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  const std::string local = "localhost,127.0.0.1,::1";
  return {{"HTTP_PROXY", url},  {"HTTPS_PROXY", url}, {"http_proxy", url},
          {"https_proxy", url}, {"NO_PROXY", local},  {"no_proxy", local}};
}

}  // namespace kaja::sandbox
