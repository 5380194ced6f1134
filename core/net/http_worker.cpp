#include "core/net/http_worker.h"

#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/post.hpp>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "core/net/url.h"

namespace kaja::core::net {
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

// The worker wakes at least this often, so deadlines are noticed without a timer API.
constexpr std::chrono::milliseconds kMaxPoll{100};

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

std::string seconds(std::chrono::milliseconds duration) {
  if (duration.count() % 1000 == 0) return std::to_string(duration.count() / 1000) + " s";
  return std::to_string(duration.count()) + " ms";
}

// Once this little is still waiting for the reader, a paused transfer resumes.
constexpr std::size_t kResumeBelowBytes = kMaxQueuedBodyBytes / 4;

// Returns the name of the first header that holds a control character, or "".
std::string unsafeHeader(const std::vector<std::pair<std::string, std::string>>& headers) {
  const auto control = [](std::string_view text) {
    return std::any_of(text.begin(), text.end(),
                       [](unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; });
  };
  for (const auto& [name, value] : headers) {
    if (name.empty() || control(name) || name.find(':') != std::string::npos || control(value))
      return name.empty() ? "(unnamed)" : name;
  }
  return {};
}

void initCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

bool isVisibleAscii(std::string_view value, std::size_t maxBytes) {
  return !value.empty() && value.size() <= maxBytes &&
         std::all_of(value.begin(), value.end(),
                     [](unsigned char c) { return c >= 0x21 && c <= 0x7e; });
}

std::string HttpHead::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return {};
}

// The io_context side: handlers by id. Touched only on the io_context thread; posted
// events hold it by shared_ptr so they stay safe after the worker is gone.
struct HttpWorker::Delivery {
  std::map<std::uint64_t, HttpHandlers> handlers;
  bool alive = true;
  Thread* thread = nullptr;  // valid while alive
};

// Body bytes of one transfer posted to the io_context and not yet handed to onBody.
// Shared by the worker thread (adds, pauses) and the io_context thread (drains, resumes).
struct BodyFlow {
  std::atomic<std::size_t> queued{0};
  std::atomic<bool> paused{false};
};

// The curl side: everything here belongs to the worker thread except `commands`.
struct HttpWorker::Thread {
  struct Transfer {
    std::uint64_t id = 0;
    Thread* owner = nullptr;
    CURL* easy = nullptr;
    curl_slist* headerList = nullptr;
    curl_slist* resolveList = nullptr;
    HttpRequest request;
    IpAddress pinned;
    HttpHead head;
    bool headDone = false;
    bool stream = false;
    bool tooLarge = false;
    std::size_t bodyBytes = 0;
    std::optional<Clock::time_point> deadline;
    std::optional<Clock::time_point> hardDeadline;
    std::shared_ptr<BodyFlow> flow = std::make_shared<BodyFlow>();
    char errorBuffer[CURL_ERROR_SIZE] = {};

    ~Transfer() {
      if (easy != nullptr) curl_easy_cleanup(easy);
      curl_slist_free_all(headerList);
      curl_slist_free_all(resolveList);
    }
  };
  struct Command {
    enum class Kind { kStart, kCancel, kResume };
    Kind kind = Kind::kStart;
    std::uint64_t id = 0;
    std::optional<HttpRequest> request;  // for kStart
  };

  asio::io_context& io;
  AddressPolicy policy;
  std::shared_ptr<Delivery> delivery;
  CURLM* multi = nullptr;
  std::mutex mutex;
  std::vector<Command> commands;  // guarded by mutex
  bool stopping = false;          // guarded by mutex
  std::map<std::uint64_t, std::unique_ptr<Transfer>> transfers;
  std::map<std::string, Result<PinnedAddress>> pins;  // by "host:port"
  std::thread thread;

  Thread(asio::io_context& ioContext, AddressPolicy addressPolicy, std::shared_ptr<Delivery> d)
      : io(ioContext), policy(addressPolicy), delivery(std::move(d)) {
    initCurlOnce();
    multi = curl_multi_init();
    thread = std::thread([this] { run(); });
  }

  ~Thread() {
    {
      std::lock_guard lock(mutex);
      stopping = true;
    }
    if (multi != nullptr) curl_multi_wakeup(multi);
    if (thread.joinable()) thread.join();
    for (auto& [id, transfer] : transfers) curl_multi_remove_handle(multi, transfer->easy);
    transfers.clear();
    if (multi != nullptr) curl_multi_cleanup(multi);
  }

  void push(Command command) {
    {
      std::lock_guard lock(mutex);
      commands.push_back(std::move(command));
    }
    if (multi != nullptr) curl_multi_wakeup(multi);
  }

  template <class Fn>
  void post(Fn fn) {
    asio::post(io, [delivery = delivery, fn = std::move(fn)]() mutable {
      if (delivery->alive) fn(*delivery);
    });
  }

  void postHead(std::uint64_t id, HttpHead head) {
    post([id, head = std::move(head)](Delivery& d) {
      const auto it = d.handlers.find(id);
      if (it == d.handlers.end() || !it->second.onHead) return;
      auto callback = it->second.onHead;
      callback(head);
    });
  }

  void postBody(std::uint64_t id, std::string chunk, std::shared_ptr<BodyFlow> flow) {
    post([id, chunk = std::move(chunk), flow = std::move(flow)](Delivery& d) {
      const auto it = d.handlers.find(id);
      if (it != d.handlers.end() && it->second.onBody) {
        auto callback = it->second.onBody;
        callback(chunk);
      }
      // The reader caught up: let curl read the socket again.
      const std::size_t left = flow->queued.fetch_sub(chunk.size()) - chunk.size();
      if (left <= kResumeBelowBytes && flow->paused.exchange(false) && d.alive &&
          d.thread != nullptr) {
        d.thread->push(Command{Command::Kind::kResume, id, std::nullopt});
      }
    });
  }

  void postDone(std::uint64_t id, Result<void> result) {
    post([id, result = std::move(result)](Delivery& d) {
      const auto it = d.handlers.find(id);
      if (it == d.handlers.end()) return;
      auto callback = std::move(it->second.onDone);
      d.handlers.erase(it);
      if (callback) callback(result);
    });
  }

  void run() {
    while (true) {
      std::vector<Command> pending;
      {
        std::lock_guard lock(mutex);
        if (stopping) return;
        pending.swap(commands);
      }
      for (auto& command : pending) {
        switch (command.kind) {
          case Command::Kind::kStart:
            begin(command.id, std::move(*command.request));
            break;
          case Command::Kind::kCancel:
            drop(command.id);
            break;
          case Command::Kind::kResume:
            resume(command.id);
            break;
        }
      }
      int running = 0;
      curl_multi_perform(multi, &running);
      collectFinished();
      enforceDeadlines();
      curl_multi_poll(multi, nullptr, 0, static_cast<int>(kMaxPoll.count()), nullptr);
    }
  }

  void resume(std::uint64_t id) {
    const auto it = transfers.find(id);
    if (it == transfers.end()) return;
    Transfer& t = *it->second;
    // Paused by kaja, not silent: the idle limit starts again now.
    if (t.stream && t.request.streamIdleTimeout.count() > 0) {
      t.deadline = Clock::now() + t.request.streamIdleTimeout;
    }
    curl_easy_pause(t.easy, CURLPAUSE_CONT);
  }

  void drop(std::uint64_t id) {
    const auto it = transfers.find(id);
    if (it == transfers.end()) return;
    curl_multi_remove_handle(multi, it->second->easy);
    transfers.erase(it);
  }

  void finish(std::uint64_t id, Result<void> result) {
    drop(id);
    postDone(id, std::move(result));
  }

  void collectFinished() {
    int left = 0;
    while (CURLMsg* message = curl_multi_info_read(multi, &left)) {
      if (message->msg != CURLMSG_DONE) continue;
      Transfer* transfer = nullptr;
      curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &transfer);
      if (transfer == nullptr) continue;
      const CURLcode code = message->data.result;
      const std::uint64_t id = transfer->id;
      if (code == CURLE_OK) {
        finish(id, {});
        continue;
      }
      if (transfer->tooLarge) {
        finish(
            id,
            fail(ErrorCode::kProtocol,
                 "the response was larger than " +
                     (transfer->request.maxBodyBytes >= 1024UL * 1024
                          ? std::to_string(transfer->request.maxBodyBytes / (1024UL * 1024)) + " MB"
                          : std::to_string(transfer->request.maxBodyBytes / 1024) + " KB")));
        continue;
      }
      std::string reason = curl_easy_strerror(code);
      if (transfer->errorBuffer[0] != '\0') reason = transfer->errorBuffer;
      const ErrorCode kind =
          code == CURLE_OPERATION_TIMEDOUT ? ErrorCode::kTimeout : ErrorCode::kConnect;
      finish(id, fail(kind, reason));
    }
  }

  void enforceDeadlines() {
    const auto now = Clock::now();
    std::vector<std::uint64_t> expired;
    for (const auto& [id, transfer] : transfers) {
      const bool waitingForKaja = transfer->stream && transfer->flow->paused.load();
      if ((transfer->deadline && now >= *transfer->deadline && !waitingForKaja) ||
          (transfer->hardDeadline && now >= *transfer->hardDeadline)) {
        expired.push_back(id);
      }
    }
    for (const std::uint64_t id : expired) {
      const Transfer& transfer = *transfers.at(id);
      std::string reason;
      if (transfer.hardDeadline && now >= *transfer.hardDeadline) {
        reason = "it did not finish within " + seconds(transfer.request.totalTimeout);
      } else if (transfer.stream) {
        reason = "its event stream was silent for " + seconds(transfer.request.streamIdleTimeout);
      } else if (transfer.headDone) {
        reason = "the response body did not finish within " + seconds(transfer.request.timeout);
      } else {
        reason = "no response arrived within " + seconds(transfer.request.timeout);
      }
      finish(id, fail(ErrorCode::kTimeout, reason));
    }
  }

  void begin(std::uint64_t id, HttpRequest request) {
    auto url = parseUrl(request.url);
    if (!url) {
      postDone(id, std::unexpected(url.error()));
      return;
    }
    const std::string key = url->hostPort();
    auto pin = pins.find(key);
    if (pin == pins.end()) {
      pin = pins.emplace(key, resolveAndCheck(url->host, url->port, policy)).first;
    }
    if (!pin->second) {
      postDone(id, std::unexpected(pin->second.error()));
      return;
    }
    if (const std::string bad = unsafeHeader(request.headers); !bad.empty()) {
      // The last line against header injection, whatever put the value there.
      postDone(id,
               fail(ErrorCode::kRefused, "kaja refused to send the header \"" + bad.substr(0, 60) +
                                             "\" because it holds a control character."));
      return;
    }
    auto transfer = std::make_unique<Transfer>();
    transfer->id = id;
    transfer->owner = this;
    transfer->request = std::move(request);
    transfer->pinned = pin->second->address;
    transfer->easy = curl_easy_init();
    if (transfer->easy == nullptr) {
      postDone(id, fail(ErrorCode::kInternal, "curl_easy_init() failed"));
      return;
    }
    configure(*transfer, pin->second->curlResolveEntry());
    if (transfer->request.timeout.count() > 0) {
      transfer->deadline = Clock::now() + transfer->request.timeout;
    }
    if (transfer->request.totalTimeout.count() > 0) {
      transfer->hardDeadline = Clock::now() + transfer->request.totalTimeout;
    }
    if (curl_multi_add_handle(multi, transfer->easy) != CURLM_OK) {
      postDone(id, fail(ErrorCode::kInternal, "curl_multi_add_handle() failed"));
      return;
    }
    transfers.emplace(id, std::move(transfer));
  }

  void configure(Transfer& t, const std::string& resolveEntry) {
    CURL* easy = t.easy;
    const HttpRequest& r = t.request;
    curl_easy_setopt(easy, CURLOPT_URL, r.url.c_str());
    curl_easy_setopt(easy, CURLOPT_PRIVATE, &t);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, t.errorBuffer);
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
    // An empty proxy disables the environment's proxies, which would resolve the host
    // themselves and so bypass the pinned address.
    curl_easy_setopt(easy, CURLOPT_PROXY, "");
    t.resolveList = curl_slist_append(nullptr, resolveEntry.c_str());
    curl_easy_setopt(easy, CURLOPT_RESOLVE, t.resolveList);
    curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, &Thread::openSocket);
    curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, &t);
    if (r.timeout.count() > 0) {
      curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(r.timeout.count()));
    }
    if (r.method == "POST") {
      curl_easy_setopt(easy, CURLOPT_POST, 1L);
      curl_easy_setopt(easy, CURLOPT_POSTFIELDS, r.body.c_str());
      curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(r.body.size()));
    } else if (r.method != "GET") {
      curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, r.method.c_str());
    }
    for (const auto& [name, value] : r.headers) {
      // curl drops "Name:" with nothing after it; "Name;" sends the header empty.
      const std::string line = value.empty() ? name + ";" : name + ": " + value;
      t.headerList = curl_slist_append(t.headerList, line.c_str());
    }
    t.headerList = curl_slist_append(t.headerList, "Expect:");
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, t.headerList);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &Thread::onHeader);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Thread::onWrite);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &t);
  }

  static curl_socket_t openSocket(void* data, curlsocktype, curl_sockaddr* address) {
    const auto* t = static_cast<const Transfer*>(data);
    // The last line of the guard: curl may only ever connect to the checked address.
    bool matches = false;
    if (address->family == AF_INET && !t->pinned.v6) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(&address->addr);
      matches = std::memcmp(&in->sin_addr, t->pinned.bytes.data(), 4) == 0;
    } else if (address->family == AF_INET6 && t->pinned.v6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address->addr);
      matches = std::memcmp(&in6->sin6_addr, t->pinned.bytes.data(), 16) == 0;
    }
    if (!matches) return CURL_SOCKET_BAD;
    return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
  }

  static std::size_t onHeader(char* data, std::size_t size, std::size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const std::size_t bytes = size * count;
    const std::string_view line(data, bytes);
    if (line.starts_with("HTTP/")) {
      t->head = HttpHead{};
      t->headDone = false;
      return bytes;
    }
    if (trim(line).empty()) {
      long status = 0;
      curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
      if (status < 200) return bytes;  // an interim 1xx response; the real one follows
      t->head.status = status;
      std::string type = t->head.header("content-type");
      type = lower(trim(type.substr(0, type.find(';'))));
      t->head.contentType = type;
      t->headDone = true;
      t->stream = t->head.isEventStream();
      if (t->stream) {
        const auto idle = t->request.streamIdleTimeout;
        t->deadline = idle.count() > 0 ? std::optional(Clock::now() + idle) : std::nullopt;
      }
      t->owner->postHead(t->id, t->head);
      return bytes;
    }
    const auto colon = line.find(':');
    if (colon != std::string_view::npos) {
      t->head.headers.emplace_back(lower(trim(line.substr(0, colon))),
                                   trim(line.substr(colon + 1)));
    }
    return bytes;
  }

  static std::size_t onWrite(char* data, std::size_t size, std::size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const std::size_t bytes = size * count;
    t->bodyBytes += bytes;
    if (!t->stream && t->bodyBytes > t->request.maxBodyBytes) {
      t->tooLarge = true;
      return 0;
    }
    if (t->flow->queued.load() >= kMaxQueuedBodyBytes) {
      // The reader is behind: curl keeps this chunk and stops reading the socket until
      // the io_context drains what waits (the server then blocks on a full window).
      t->flow->paused.store(true);
      if (t->flow->queued.load() > kResumeBelowBytes || !t->flow->paused.exchange(false)) {
        return CURL_WRITEFUNC_PAUSE;
      }
    }
    if (t->stream && t->request.streamIdleTimeout.count() > 0) {
      t->deadline = Clock::now() + t->request.streamIdleTimeout;
    }
    t->flow->queued.fetch_add(bytes);
    t->owner->postBody(t->id, std::string(data, bytes), t->flow);
    return bytes;
  }
};

HttpWorker::HttpWorker(asio::io_context& io, AddressPolicy policy)
    : delivery_(std::make_shared<Delivery>()),
      thread_(std::make_unique<Thread>(io, policy, delivery_)) {
  delivery_->thread = thread_.get();
}

HttpWorker::~HttpWorker() {
  delivery_->alive = false;
  delivery_->thread = nullptr;
  delivery_->handlers.clear();
  thread_.reset();
}

std::uint64_t HttpWorker::start(HttpRequest request, HttpHandlers handlers) {
  const std::uint64_t id = nextId_++;
  delivery_->handlers.emplace(id, std::move(handlers));
  thread_->push(Thread::Command{Thread::Command::Kind::kStart, id, std::move(request)});
  return id;
}

void HttpWorker::cancel(std::uint64_t id) {
  if (delivery_->handlers.erase(id) == 0) return;
  thread_->push(Thread::Command{Thread::Command::Kind::kCancel, id, std::nullopt});
}

bool HttpWorker::isActive(std::uint64_t id) const { return delivery_->handlers.contains(id); }

}  // namespace kaja::core::net
