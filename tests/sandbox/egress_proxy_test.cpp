// The egress proxy for real: tests/tools/kaja_egress_lab runs it in a network namespace
// of the test's own, beside HTTP servers on a public, a private and a metadata address;
// the test speaks to it over its unix socket (see egress_lab.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <random>

#include "tests/sandbox/egress_lab.h"

namespace kaja::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string connectRequest(const std::string& authority) {
  return "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n";
}

std::string getRequest(const std::string& url) {
  return "GET " + url + " HTTP/1.1\r\nHost: ignored.example\r\nUser-Agent: t\r\n\r\n";
}

class EgressProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string problem = namespaceProblem(); !problem.empty()) GTEST_SKIP() << problem;
    lab_ = EgressLab::start({"--connect-timeout-ms", "1000", "--idle-timeout-ms", "1000",
                             "--request-timeout-ms", "1000"});
    ASSERT_TRUE(lab_) << "the egress lab did not start";
  }

  std::string ask(const std::string& request) { return askProxy(lab_->socketPath(), request); }

  std::unique_ptr<EgressLab> lab_;
};

TEST_F(EgressProxyTest, SocketIsOnlyForItsOwner) {
  struct stat info {};
  ASSERT_EQ(::stat(lab_->socketPath().c_str(), &info), 0);
  EXPECT_TRUE(S_ISSOCK(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0600u);
}

TEST_F(EgressProxyTest, ConnectTunnelsToAPublicAddress) {
  // The tunnelled request rides in the same write as the CONNECT head.
  const auto answer = ask(connectRequest("93.184.216.34:80") +
                          "GET /inside HTTP/1.1\r\nHost: 93.184.216.34\r\n\r\n");
  EXPECT_THAT(answer, HasSubstr("HTTP/1.1 200 Connection established\r\n\r\n"));
  EXPECT_THAT(answer, HasSubstr("origin 93.184.216.34:80\nGET /inside HTTP/1.1"));
  EXPECT_EQ(lab_->served("93.184.216.34:80", 1), 1);
}

TEST_F(EgressProxyTest, PlainGetIsRewrittenToOriginForm) {
  const auto answer =
      ask("GET http://93.184.216.34/path?q=1 HTTP/1.1\r\nHost: evil.example\r\n"
          "Proxy-Authorization: Basic c2VjcmV0\r\nConnection: keep-alive, X-Drop\r\n"
          "X-Drop: 1\r\nX-Keep: 2\r\n\r\n");
  ASSERT_EQ(statusOf(answer), 200) << answer;
  EXPECT_THAT(answer, HasSubstr("origin 93.184.216.34:80\nGET /path?q=1 HTTP/1.1\r\n"
                                "Host: 93.184.216.34\r\n"));
  EXPECT_THAT(answer, HasSubstr("X-Keep: 2\r\nConnection: close\r\n\r\n"));
  EXPECT_THAT(answer, Not(HasSubstr("Proxy-Authorization")));
  EXPECT_THAT(answer, Not(HasSubstr("evil.example")));
  EXPECT_THAT(answer, Not(HasSubstr("X-Drop")));
  EXPECT_THAT(answer, Not(HasSubstr("keep-alive")));
}

TEST_F(EgressProxyTest, PostBodyReachesTheOriginWhole) {
  std::string body(300 * 1024, 'x');
  for (std::size_t i = 0; i < body.size(); i += 7) body[i] = static_cast<char>('a' + i % 26);
  const auto answer = ask("POST http://public.example/upload HTTP/1.1\r\nContent-Length: " +
                          std::to_string(body.size()) + "\r\n\r\n" + body);
  ASSERT_EQ(statusOf(answer), 200) << answer.substr(0, 300);
  EXPECT_TRUE(answer.ends_with("\r\n\r\n" + body));
  EXPECT_THAT(answer, HasSubstr("Host: public.example\r\n"));
}

TEST_F(EgressProxyTest, EveryNonPublicDestinationIsRefused) {
  const char* hosts[] = {"10.0.0.5",
                         "169.254.169.254",
                         "127.0.0.1",
                         "100.100.100.200",
                         "0.0.0.0",
                         "[::ffff:10.0.0.5]",
                         "[::ffff:127.0.0.1]",
                         "[64:ff9b::a00:5]",
                         "[64:ff9b::a9fe:a9fe]",
                         "[2002:a00:5::1]",
                         "[::a00:5]",
                         "[::1]",
                         "[::]",
                         "[fd00::1]",
                         "[fe80::1]",
                         "[fd00:ec2::254]",
                         "224.0.0.1",
                         "192.0.2.1",
                         "localhost",
                         "metadata.google.internal",
                         "private.example",
                         "mixed.example",
                         "PRIVATE.example."};
  for (const std::string host : hosts) {
    for (const auto& request : {connectRequest(host + ":80"), getRequest("http://" + host + "/")}) {
      const auto answer = ask(request);
      EXPECT_EQ(statusOf(answer), 403) << host << "\n" << answer;
      EXPECT_THAT(answer, HasSubstr("reach only public addresses")) << host;
    }
  }
  for (const char* origin :
       {"10.0.0.5:80", "169.254.169.254:80", "100.100.100.200:80", "127.0.0.1:80"}) {
    EXPECT_EQ(lab_->served(origin), 0) << origin;
  }
  // One line per refusal for the operator.
  const int refusals = 2 * static_cast<int>(std::size(hosts));
  EXPECT_EQ(lab_->count("LOG egress: 403 ", refusals), refusals);
  EXPECT_EQ(statusOf(ask(getRequest("http://93.184.216.34/"))), 200);
}

TEST_F(EgressProxyTest, ANameIsResolvedOnceAndItsPublicAddressUsed) {
  EXPECT_EQ(statusOf(ask(getRequest("http://public.example/"))), 200);
  EXPECT_EQ(statusOf(ask(connectRequest("public.example:80") +
                         "GET / HTTP/1.1\r\nHost: public.example\r\n\r\n")),
            200);
  EXPECT_EQ(lab_->served("93.184.216.34:80", 2), 2);
}

TEST_F(EgressProxyTest, Ipv6AddressesAreCheckedAndDialledToo) {
  // Checked before any dial: fd00::5 is private whether or not the kernel has IPv6.
  EXPECT_EQ(statusOf(ask(getRequest("http://mixed6.example/"))), 403);
  // IPv4-mapped public addresses are dialled as IPv4.
  EXPECT_EQ(statusOf(ask(getRequest("http://[::ffff:93.184.216.34]/"))), 200);
  EXPECT_EQ(lab_->served("93.184.216.34:80", 1), 1);
  if (lab_->count("NO-ORIGIN [2606:4700::1111]:80", 0) != 0) {
    GTEST_SKIP() << "this kernel has no IPv6; the IPv6 origin did not start";
  }
  EXPECT_EQ(statusOf(ask(connectRequest("[2606:4700::1111]:80") +
                         "GET /six HTTP/1.1\r\nHost: x\r\n\r\n")),
            200);
  EXPECT_EQ(statusOf(ask(getRequest("http://public6.example/"))), 200);
  EXPECT_EQ(lab_->served("[2606:4700::1111]:80", 2), 2);
}

TEST_F(EgressProxyTest, BadRequestsGet400AndTheProxyKeepsServing) {
  const std::string bad[] = {
      std::string("\x00\x01\x02garbage\xff\r\n\r\n", 15),
      "GET / HTTP/1.1\r\nHost: 93.184.216.34\r\n\r\n",
      "GET https://93.184.216.34/ HTTP/1.1\r\n\r\n",
      "GET ftp://93.184.216.34/ HTTP/1.1\r\n\r\n",
      "GET http://user:pw@93.184.216.34/ HTTP/1.1\r\n\r\n",
      "GET http://93.184.216.34:0/ HTTP/1.1\r\n\r\n",
      "GET http://93.184.216.34:99999/ HTTP/1.1\r\n\r\n",
      "GET http://93.184.216.34/ HTTP/2.0\r\n\r\n",
      "GET  http://93.184.216.34/ HTTP/1.1\r\n\r\n",
      "GET http://93.184.216.34/\r\n\r\n",
      "CONNECT 93.184.216.34 HTTP/1.1\r\n\r\n",
      "CONNECT 93.184.216.34: HTTP/1.1\r\n\r\n",
      "CONNECT [::1 HTTP/1.1\r\n\r\n",
      "CONNECT bad_host!:443 HTTP/1.1\r\n\r\n",
      "GET http://93.184.216.34/ HTTP/1.1\r\nNoColon\r\n\r\n",
      "GET http://93.184.216.34/ HTTP/1.1\r\nBad Name: x\r\n\r\n",
      "GET http://93.184.216.34/ HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",
      "GET http://93.184.216.34/ HTTP/1.1\nX: bare-lf\r\n\r\n",
      "GET http://93.184.216.34/ HTTP/1.1\r\nContent-Length: 1\r\n"
      "Transfer-Encoding: chunked\r\n\r\n",
      "GET http://93.184.216.34/ HTTP/1.1\r\nX: " + std::string(20000, 'a') + "\r\n\r\n",
      std::string(100 * 1024, 'z'),
  };
  for (const auto& request : bad) {
    const auto answer = ask(request);
    EXPECT_EQ(statusOf(answer), 400) << request.substr(0, 80) << "\n" << answer;
    EXPECT_EQ(statusOf(ask(getRequest("http://93.184.216.34/"))), 200) << request.substr(0, 80);
  }
  // A connection that ends before its head did.
  const auto cut = askProxy(lab_->socketPath(), "GET http://93.184.216.34/ HTTP/1.1\r\nX: 1\r\n",
                            std::chrono::seconds(15), true);
  EXPECT_EQ(statusOf(cut), 400) << cut;
  EXPECT_THAT(cut, HasSubstr("ended before its head did"));
  EXPECT_EQ(statusOf(ask(getRequest("http://93.184.216.34/"))), 200);
  EXPECT_EQ(lab_->served("93.184.216.34:80", static_cast<int>(std::size(bad)) + 1),
            static_cast<int>(std::size(bad)) + 1);
}

TEST_F(EgressProxyTest, MutatedRequestsNeverReachAPrivateOrigin) {
  const std::string valid[] = {
      "GET http://93.184.216.34/a?b=c HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n",
      "CONNECT 93.184.216.34:80 HTTP/1.1\r\nHost: 93.184.216.34:80\r\n\r\n",
      "GET http://[::ffff:5db8:d822]/ HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
  };
  std::mt19937 random(20261201);
  for (int round = 0; round < 150; ++round) {
    std::string request = valid[round % 3];
    const int flips = 1 + static_cast<int>(random() % 4);
    for (int i = 0; i < flips; ++i) {
      // Keep the closing blank line, so that every request is answered at once.
      request[random() % (request.size() - 4)] = static_cast<char>(random() % 256);
    }
    const auto answer = ask(request);
    const int status = statusOf(answer);
    EXPECT_TRUE(status == 200 || status == 400 || status == 403 || status == 502)
        << ::testing::PrintToString(request) << "\n"
        << answer;
  }
  for (const char* origin :
       {"10.0.0.5:80", "169.254.169.254:80", "100.100.100.200:80", "127.0.0.1:80"}) {
    EXPECT_EQ(lab_->served(origin), 0) << origin;
  }
  EXPECT_EQ(statusOf(ask(getRequest("http://93.184.216.34/"))), 200);
}

TEST_F(EgressProxyTest, UnreachableOriginsGet502AndSilentOnes504) {
  // Nobody listens on port 82; 93.184.216.35 has no route in the namespace.
  for (const char* authority : {"93.184.216.34:82", "93.184.216.35:80"}) {
    EXPECT_EQ(statusOf(ask(connectRequest(authority))), 502) << authority;
  }
  EXPECT_EQ(statusOf(ask(getRequest("http://nosuchname.example/"))), 502);
  const auto start = std::chrono::steady_clock::now();
  const auto answer = ask(connectRequest("93.184.216.34:81"));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(statusOf(answer), 504) << answer;
  EXPECT_THAT(answer, HasSubstr("within 1 s"));
  EXPECT_LT(took, std::chrono::seconds(8));
}

TEST_F(EgressProxyTest, SilentTunnelsAndSilentClientsAreClosed) {
  // The origin waits for a request that never comes; the idle timeout (1 s) ends it.
  const auto start = std::chrono::steady_clock::now();
  const auto answer =
      askProxy(lab_->socketPath(), connectRequest("93.184.216.34:80"), std::chrono::seconds(20));
  EXPECT_EQ(answer, "HTTP/1.1 200 Connection established\r\n\r\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  // A client that sends half a head is dropped after the request timeout (1 s).
  const auto half = askProxy(lab_->socketPath(), "GET http://93.184", std::chrono::seconds(30));
  EXPECT_EQ(half, "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(EgressProxyLimitsTest, AllowPrivateLetsOnlyItsRangeThrough) {
  if (const std::string problem = namespaceProblem(); !problem.empty()) GTEST_SKIP() << problem;
  auto lab = EgressLab::start({"--allow-private", "10.0.0.0/8"});
  ASSERT_TRUE(lab);
  const auto& path = lab->socketPath();
  EXPECT_EQ(statusOf(askProxy(path, getRequest("http://10.0.0.5/"))), 200);
  EXPECT_EQ(statusOf(askProxy(path, getRequest("http://[::ffff:10.0.0.5]/"))), 200);
  EXPECT_EQ(statusOf(askProxy(path, getRequest("http://private.example/"))), 200);
  EXPECT_EQ(statusOf(askProxy(path, getRequest("http://mixed.example/"))), 200);
  EXPECT_EQ(lab->served("10.0.0.5:80", 3), 3);
  for (const char* host : {"169.254.169.254", "127.0.0.1", "100.100.100.200", "0.0.0.0"}) {
    EXPECT_EQ(statusOf(askProxy(path, getRequest(std::string("http://") + host + "/"))), 403)
        << host;
  }
  EXPECT_EQ(lab->served("169.254.169.254:80"), 0);
}

// IPv6 forms that translate to, tunnel to, or are special-purpose beside a public address,
// each with a live origin: refused by default, and reached once the operator allows all of
// IPv6 (which shows the refusal is the policy's, not a missing route).
TEST(EgressProxyLimitsTest, TranslatedTunnelledAndSpecialIpv6FormsAreRefusedThoughReachable) {
  if (const std::string problem = namespaceProblem(); !problem.empty()) GTEST_SKIP() << problem;
  const std::vector<std::string> forms = {
      "64:ff9b:1::5db8:d822",         // local-use NAT64 of 93.184.216.34
      "::ffff:0:5db8:d822",           // SIIT of 93.184.216.34
      "2001:0:5db8:d822::f5ff:fffa",  // Teredo
      "2001:2::1",                    // benchmarking
      "2001:10::1",                   // ORCHID
      "2001:20::1",                   // ORCHIDv2
      "3fff::1",                      // documentation (RFC 9637)
      "5f00::1",                      // SRv6 SIDs
      "100::1",                       // discard-only
  };
  auto lab = EgressLab::start({}, forms);
  ASSERT_TRUE(lab);
  if (lab->count("NO-ORIGIN ", 0) != 0) GTEST_SKIP() << "the namespace has no IPv6";
  for (const auto& form : forms) {
    const std::string host = "[" + form + "]";
    for (const auto& request : {connectRequest(host + ":80"), getRequest("http://" + host + "/")}) {
      const auto answer = askProxy(lab->socketPath(), request);
      EXPECT_EQ(statusOf(answer), 403) << form << "\n" << answer;
      EXPECT_THAT(answer, HasSubstr("reach only public addresses")) << form;
    }
    EXPECT_EQ(lab->served(host + ":80"), 0) << form;
  }
  auto open = EgressLab::start({"--allow-private", "::/0"}, forms);
  ASSERT_TRUE(open);
  for (const auto& form : forms) {
    const std::string host = "[" + form + "]";
    const auto answer = askProxy(open->socketPath(), getRequest("http://" + host + "/"));
    EXPECT_EQ(statusOf(answer), 200) << form << "\n" << answer;
    EXPECT_EQ(open->served(host + ":80", 1), 1) << form;
  }
}

TEST(EgressProxyLimitsTest, ASecondDnsAnswerCannotRedirectARequest) {
  if (const std::string problem = namespaceProblem(); !problem.empty()) GTEST_SKIP() << problem;
  // rebind.example is 93.184.216.34 for the first A query, then 10.0.0.5, with TTL 0.
  auto lab = EgressLab::start({"--dns", "127.0.0.1:53"});
  ASSERT_TRUE(lab);
  const auto first = askProxy(lab->socketPath(), getRequest("http://rebind.example/"));
  EXPECT_EQ(statusOf(first), 200) << first;
  EXPECT_EQ(lab->served("93.184.216.34:80", 1), 1);
  // Resolved once, and the address checked is the one dialled: a proxy that resolved again
  // to connect would have reached 10.0.0.5.
  EXPECT_EQ(lab->count("DNS A rebind.example", 1), 1);
  EXPECT_EQ(lab->served("10.0.0.5:80"), 0);
  const auto second = askProxy(lab->socketPath(), connectRequest("rebind.example:80"));
  EXPECT_EQ(statusOf(second), 403) << second;
  EXPECT_THAT(second, HasSubstr("10.0.0.5"));
  EXPECT_EQ(lab->count("DNS A rebind.example", 2), 2);
  EXPECT_EQ(lab->served("10.0.0.5:80"), 0);
}

TEST(EgressProxyLimitsTest, ConnectionsBeyondTheLimitGet503) {
  if (const std::string problem = namespaceProblem(); !problem.empty()) GTEST_SKIP() << problem;
  auto lab = EgressLab::start({"--max-connections", "2"});
  ASSERT_TRUE(lab);
  std::vector<int> held;
  for (int i = 0; i < 2; ++i) {
    held.push_back(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, lab->socketPath().c_str(), sizeof address.sun_path - 1);
    ASSERT_EQ(::connect(held.back(), reinterpret_cast<const sockaddr*>(&address), sizeof address),
              0);
  }
  std::string answer;
  // The proxy counts a connection once it has accepted it; give it a moment to.
  for (int attempt = 0; attempt < 50 && statusOf(answer) != 503; ++attempt) {
    answer = askProxy(lab->socketPath(), getRequest("http://93.184.216.34/"));
  }
  EXPECT_EQ(statusOf(answer), 503) << answer;
  for (const int fd : held) ::close(fd);
  for (int attempt = 0; attempt < 50 && statusOf(answer) != 200; ++attempt) {
    answer = askProxy(lab->socketPath(), getRequest("http://93.184.216.34/"));
  }
  EXPECT_EQ(statusOf(answer), 200) << answer;
}

}  // namespace
}  // namespace kaja::testing
