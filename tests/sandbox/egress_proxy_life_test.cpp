// The egress proxy's life in-process, with unix sockets only: where it may listen, and
// that stop() ends its connections and removes its socket. No IP traffic at all.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <thread>

#include "sandbox/egress_proxy.h"
#include "tests/support/temp_dir.h"

namespace kaja::sandbox {
namespace {

using ::testing::HasSubstr;

int connectTo(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  timeval limit{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  return fd;
}

TEST(EgressProxyLifeTest, RefusesPlacesItCannotListen) {
  testing::TempDir dir;
  boost::asio::io_context io;
  const std::string file = dir.write("plain-file", "x");
  auto onFile = EgressProxy::create(io, {.socketPath = file});
  ASSERT_FALSE(onFile);
  EXPECT_THAT(onFile.error().message, HasSubstr("is not a socket"));
  EXPECT_EQ(testing::readFile(file), "x");
  auto tooLong = EgressProxy::create(io, {.socketPath = dir.path() + "/" + std::string(120, 's')});
  ASSERT_FALSE(tooLong);
  EXPECT_THAT(tooLong.error().message, HasSubstr("too long"));
  auto noFolder = EgressProxy::create(io, {.socketPath = dir.path() + "/missing/egress.sock"});
  ASSERT_FALSE(noFolder);
  EXPECT_THAT(noFolder.error().message, HasSubstr("bind("));
}

TEST(EgressProxyLifeTest, StopEndsConnectionsAndRemovesTheSocket) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/egress.sock";
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  // A stale socket from an earlier run is replaced.
  auto first = EgressProxy::create(io, {.socketPath = path});
  ASSERT_TRUE(first) << first.error().message;
  (*first)->start();
  std::thread loop([&] { io.run(); });
  const int stale = connectTo(path);
  ASSERT_GE(stale, 0);
  auto proxy = EgressProxy::create(io, {.socketPath = path});
  ASSERT_TRUE(proxy) << proxy.error().message;
  (*proxy)->start();
  const int client = connectTo(path);
  ASSERT_GE(client, 0);
  ASSERT_EQ(::send(client, "GET http://", 11, MSG_NOSIGNAL), 11);
  for (int i = 0; i < 200 && (*proxy)->counters().active == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ((*proxy)->counters().active, 1u);
  EXPECT_EQ((*proxy)->counters().connections, 1u);
  (*proxy)->stop();
  char byte = 0;
  EXPECT_EQ(::recv(client, &byte, 1, 0), 0);  // the connection ended
  struct stat info {};
  EXPECT_NE(::stat(path.c_str(), &info), 0);  // and the socket is gone
  EXPECT_LT(connectTo(path), 0);
  for (int i = 0; i < 200 && (*proxy)->counters().active != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ((*proxy)->counters().active, 0u);
  (*first)->stop();  // its socket was replaced: nothing to remove, nothing to break
  EXPECT_EQ(::recv(stale, &byte, 1, 0), 0);
  ::close(client);
  ::close(stale);
  work.reset();
  proxy->reset();
  first->reset();
  io.stop();
  loop.join();
}

TEST(EgressProxyLifeTest, AnnouncesTheBridgeToClients) {
  const auto env = egressProxyEnvironment(3128);
  auto value = [&](const std::string& name) {
    for (const auto& [key, text] : env) {
      if (key == name) return text;
    }
    return std::string();
  };
  for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}) {
    EXPECT_EQ(value(name), "http://127.0.0.1:3128") << name;
  }
  EXPECT_EQ(value("NO_PROXY"), "localhost,127.0.0.1,::1");
}

}  // namespace
}  // namespace kaja::sandbox
