#include "core/auth/token_source.h"

#include <ctime>

#include "core/net/www_authenticate.h"

namespace kaja::core::auth {

using net::bearerChallenge;
using net::BearerChallenge;
using net::joinScopes;
using net::splitScopes;

std::shared_ptr<TokenSource> TokenSource::make(OAuthFlow flow, std::optional<OAuthRecord> record,
                                               Options options) {
  return std::shared_ptr<TokenSource>(
      new TokenSource(std::move(flow), std::move(record), std::move(options)));
}

TokenSource::TokenSource(OAuthFlow flow, std::optional<OAuthRecord> record, Options options)
    : flow_(std::move(flow)), record_(std::move(record)), options_(std::move(options)) {}

TokenSource::~TokenSource() {
  std::vector<Worker> workers;
  {
    std::lock_guard lock(mutex_);
    workers.swap(workers_);
  }
  for (auto& worker : workers) {
    // A worker that held the last reference runs this destructor itself, and is ending.
    if (worker.thread.get_id() == std::this_thread::get_id()) {
      worker.thread.detach();
    } else if (worker.thread.joinable()) {
      worker.thread.join();
    }
  }
}

void TokenSource::startWorker(std::function<void()> job) {
  std::lock_guard lock(mutex_);
  // Finished workers are joined here, so a long-running gateway keeps no dead threads.
  std::erase_if(workers_, [](Worker& worker) {
    if (!worker.done->load()) return false;
    worker.thread.join();
    return true;
  });
  auto done = std::make_shared<std::atomic<bool>>(false);
  workers_.push_back(Worker{std::thread([job = std::move(job), done] {
                              job();
                              done->store(true);
                            }),
                            done});
}

bool TokenSource::due() const {
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  return record_ && record_->expiresAt != 0 && !record_->refreshToken.empty() &&
         record_->expiresAt - options_.refreshMargin.count() <= now;
}

std::vector<std::pair<std::string, std::string>> TokenSource::current() const {
  if (!record_ || record_->accessToken.empty()) return {};
  return {{"Authorization", "Bearer " + record_->accessToken}};
}

std::vector<std::pair<std::string, std::string>> TokenSource::headers() {
  // No refresh starts here: one still under way when a short-lived kaja exits could spend
  // a rotated refresh token and save nothing. A token is refreshed when a connection starts
  // (attach) and when the server refuses it; the request that met the 401 waits for it.
  std::lock_guard lock(mutex_);
  return current();
}

bool TokenSource::renew(long status, const std::string& challenge, std::uint64_t generation) {
  std::lock_guard one(flowMutex_);
  std::optional<OAuthRecord> current;
  {
    std::lock_guard lock(mutex_);
    // Someone else got new tokens since this challenge: the request just goes again.
    if (generation_ != generation) return true;
    current = record_;
  }
  const auto bearer = bearerChallenge(challenge);
  const bool wantsScope = bearer && bearer->error == "insufficient_scope";
  if (status == 403 && !wantsScope) return false;  // refused for what no token changes
  if (wantsScope && !options_.signInOnChallenge && flow_.needsPerson()) {
    if (options_.onScopeWanted && !bearer->scope.empty()) options_.onScopeWanted(bearer->scope);
    return false;
  }
  std::optional<Result<OAuthRecord>> renewed;
  if (status == 401 && !wantsScope && current) {
    renewed = options_.refresher ? options_.refresher(*current) : flow_.refresh(*current);
  }
  const bool maySignIn = options_.signInOnChallenge || !flow_.needsPerson();
  if ((!renewed || !*renewed) && maySignIn && signIns_ < options_.maxSignIns) {
    ++signIns_;
    renewed = flow_.signIn(status, challenge, current);
  }
  if (!renewed) {
    std::lock_guard lock(mutex_);
    if (lastError_.empty()) lastError_ = "the server refused the token and it cannot be refreshed";
    return false;
  }
  if (!*renewed) {
    std::lock_guard lock(mutex_);
    lastError_ = renewed->error().message;
    return false;
  }
  OAuthRecord record = std::move(**renewed);
  if (current && record.forUrl.empty()) record.forUrl = current->forUrl;
  if (options_.onNewTokens) options_.onNewTokens(record);
  std::lock_guard lock(mutex_);
  record_ = std::move(record);
  ++generation_;
  lastError_.clear();
  return true;
}

void TokenSource::onChallenge(long status, const std::string& challenge,
                              std::function<void(bool)> retry) {
  std::uint64_t generation = 0;
  {
    std::lock_guard lock(mutex_);
    generation = generation_;
  }
  std::weak_ptr<TokenSource> weak = weak_from_this();
  startWorker([weak, status, challenge, generation, retry = std::move(retry)] {
    auto self = weak.lock();
    retry(self && self->renew(status, challenge, generation));
  });
}

void TokenSource::attach(RemotePlan& plan) {
  std::shared_ptr<TokenSource> self = shared_from_this();
  // A token already due is refreshed before the connection starts, on this thread: a
  // refresh still under way when a short-lived kaja exits could spend a rotated refresh
  // token and save nothing.
  std::uint64_t generation = 0;
  bool refreshNow = false;
  {
    std::lock_guard lock(mutex_);
    refreshNow = due();
    generation = generation_;
  }
  if (refreshNow) renew(401, "", generation);
  {
    std::lock_guard lock(mutex_);
    plan.headers = current();
  }
  plan.freshHeaders = [self] { return self->headers(); };
  plan.onAuthChallenge = [self](long status, const std::string& challenge,
                                std::function<void(bool)> retry) {
    self->onChallenge(status, challenge, std::move(retry));
  };
}

std::optional<OAuthRecord> TokenSource::record() const {
  std::lock_guard lock(mutex_);
  return record_;
}

std::string TokenSource::lastError() const {
  std::lock_guard lock(mutex_);
  return lastError_;
}

}  // namespace kaja::core::auth
