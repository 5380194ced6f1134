#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cstdint>
#include <exception>
#include <expected>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include "core/error.h"

namespace kaja::core {

/// An io_context with a thread of its own, for objects whose async parts live on one
/// event loop while their callers block (the CLI's client, the host). The loop runs until
/// destruction; pending handlers are dropped then.
///
/// Handlers report errors as values. Should one throw all the same (a bug in kaja), the
/// exception is neither let out (std::terminate) nor swallowed: every call() still waiting
/// is answered at once with an internal error that quotes it, and the loop goes on.
class LoopThread {
 public:
  LoopThread() : work_(boost::asio::make_work_guard(io_)) {
    thread_ = std::thread([this] {
      for (;;) {
        try {
          io_.run();
          return;
        } catch (const std::exception& error) {
          failWaiters(error.what());
        } catch (...) {
          failWaiters("an unknown exception");
        }
      }
    });
  }
  ~LoopThread() { stop(); }
  LoopThread(const LoopThread&) = delete;
  LoopThread& operator=(const LoopThread&) = delete;

  /// Returns the loop's io_context.
  boost::asio::io_context& io() { return io_; }

  /// Runs `job` on the loop and blocks until it calls its callback (only the first call
  /// counts); returns the value it passed. When a handler throws before that, returns an
  /// internal Error for a Result<…> T, or T{} otherwise. Never call this from the loop's
  /// own thread.
  template <class T>
  T call(std::function<void(std::function<void(T)>)> job) {
    struct Waiter {
      std::promise<T> promise;
      std::once_flag once;
      void answer(T value) {
        std::call_once(once, [&] { promise.set_value(std::move(value)); });
      }
    };
    auto waiter = std::make_shared<Waiter>();
    auto future = waiter->promise.get_future();
    std::uint64_t key = 0;
    {
      std::lock_guard lock(mutex_);
      key = nextKey_++;
      waiters_[key] = [waiter](const std::string& what) { waiter->answer(failure<T>(what)); };
    }
    boost::asio::post(io_, [job = std::move(job), waiter] {
      job([waiter](T value) { waiter->answer(std::move(value)); });
    });
    T value = future.get();
    std::lock_guard lock(mutex_);
    waiters_.erase(key);
    return value;
  }

  /// Stops the loop and joins its thread; safe to call more than once.
  void stop() {
    work_.reset();
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  template <class T>
  struct IsResult : std::false_type {};
  template <class V>
  struct IsResult<std::expected<V, Error>> : std::true_type {};

  /// Returns what a waiter gets when a handler threw `what`.
  template <class T>
  static T failure(const std::string& what) {
    if constexpr (IsResult<T>::value) {
      return std::unexpected(
          Error{ErrorCode::kInternal,
                "kaja hit an internal error while it worked (" + what + "); please report it.",
                {},
                {}});
    } else {
      return T{};
    }
  }

  void failWaiters(const std::string& what) {
    std::map<std::uint64_t, std::function<void(const std::string&)>> waiters;
    {
      std::lock_guard lock(mutex_);
      waiters = waiters_;
    }
    for (auto& [key, fail] : waiters) fail(what);
  }

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
  std::mutex mutex_;
  std::uint64_t nextKey_ = 0;
  std::map<std::uint64_t, std::function<void(const std::string&)>> waiters_;
};

}  // namespace kaja::core
