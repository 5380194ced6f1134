#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <functional>
#include <future>
#include <memory>
#include <thread>
#include <utility>

namespace kaja::core {

/// An io_context with a thread of its own, for objects whose async parts live on one
/// event loop while their callers block (the CLI's client, the host). The loop runs until
/// destruction; pending handlers are dropped then.
class LoopThread {
 public:
  LoopThread() : work_(boost::asio::make_work_guard(io_)) {
    thread_ = std::thread([this] {
      // Handlers return errors as values; a stray exception from an owner's callback must
      // not end the loop thread with std::terminate.
      for (;;) {
        try {
          io_.run();
          return;
        } catch (...) {
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
  /// counts); returns the value it passed. Never call this from the loop's own thread.
  template <class T>
  T call(std::function<void(std::function<void(T)>)> job) {
    auto promise = std::make_shared<std::promise<T>>();
    auto future = promise->get_future();
    boost::asio::post(io_, [job = std::move(job), promise] {
      auto answered = std::make_shared<bool>(false);
      job([promise, answered](T value) {
        if (!std::exchange(*answered, true)) promise->set_value(std::move(value));
      });
    });
    return future.get();
  }

  /// Stops the loop and joins its thread; safe to call more than once.
  void stop() {
    work_.reset();
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
};

}  // namespace kaja::core
