#pragma once

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/mcp/json_rpc.h"
#include "core/mcp/types.h"

namespace kaja::core::mcp {

/// The requests one end of a JSON-RPC connection has sent and still waits for: their ids,
/// what each caller keeps about its request (`Entry`), each one's deadline, and the ids it gave
/// up on (timed out or cancelled), whose late answers are no surprise. kaja's client keeps one
/// for the requests it sends a server, and each session of `kaja serve` one for the requests
/// it sends its client (elicitation, sampling, roots), so both ends hand out ids, match
/// replies and expire requests in the same way.
///
/// One timer serves every deadline. It is armed for the earliest one it knows of and left
/// running when that request is answered early, which keeps a syscall off each request's path;
/// when it fires it expires what is due and re-arms for the next. Single-threaded: use it only
/// on its io_context's thread.
template <class Entry>
class RequestLedger {
 public:
  using Clock = std::chrono::steady_clock;
  /// Runs for a request whose deadline passed, after the ledger gave up on it.
  using ExpiredHandler = std::function<void(std::int64_t id, Entry entry)>;

  explicit RequestLedger(boost::asio::io_context& io) : timer_(io) {}
  RequestLedger(const RequestLedger&) = delete;
  RequestLedger& operator=(const RequestLedger&) = delete;
  // The timer's destructor cancels its wait; the handler then finds the ledger's token gone.
  ~RequestLedger() = default;

  /// Sets what runs when a request's deadline passes. It may add, take or give up requests.
  void setExpiredHandler(ExpiredHandler handler) { expired_ = std::move(handler); }

  /// Returns the next unused request id: 1, 2, 3, …
  std::int64_t nextId() { return ids_.next(); }

  /// Records request `id`, due within `timeout` (0 or less: no deadline), and returns its entry.
  Entry& add(std::int64_t id, Entry entry, std::chrono::milliseconds timeout) {
    Slot& slot =
        slots_.insert_or_assign(id, Slot{std::move(entry), Clock::time_point::max()}).first->second;
    setDeadline(slot, timeout);
    return slot.entry;
  }

  /// Gives request `id` `timeout` from now (a request that reports progress), but no later
  /// than `latest`; false when it is not waited for.
  bool restartDeadline(std::int64_t id, std::chrono::milliseconds timeout,
                       Clock::time_point latest = Clock::time_point::max()) {
    const auto it = slots_.find(id);
    if (it == slots_.end()) return false;
    setDeadline(it->second, timeout, latest);
    return true;
  }

  /// Returns the entry of request `id`, or null when it is not waited for.
  Entry* find(std::int64_t id) {
    const auto it = slots_.find(id);
    return it == slots_.end() ? nullptr : &it->second.entry;
  }
  /// The same for an id read from a reply: only whole numbers can be kaja's.
  Entry* find(const Json& id) { return isOurs(id) ? find(id.get<std::int64_t>()) : nullptr; }

  /// Removes request `id` (it was answered) and returns its entry.
  std::optional<Entry> take(std::int64_t id) {
    const auto it = slots_.find(id);
    if (it == slots_.end()) return std::nullopt;
    Entry entry = std::move(it->second.entry);
    slots_.erase(it);
    return entry;
  }
  /// The same for an id read from a reply.
  std::optional<Entry> take(const Json& id) {
    return isOurs(id) ? take(id.get<std::int64_t>()) : std::nullopt;
  }

  /// Removes request `id` without an answer (cancelled), remembering that a late answer to it
  /// may still come, and returns its entry.
  std::optional<Entry> giveUp(std::int64_t id) {
    auto entry = take(id);
    if (entry) remember(id);
    return entry;
  }

  /// Returns true when `id` names a request given up on lately (timed out or cancelled).
  [[nodiscard]] bool wasGivenUp(const Json& id) const {
    return isOurs(id) &&
           std::find(givenUp_.begin(), givenUp_.end(), id.get<std::int64_t>()) != givenUp_.end();
  }

  /// Removes every request (the connection ended) and returns them by id; stops the timer.
  std::map<std::int64_t, Entry> takeAll() {
    timer_.cancel();
    armedFor_ = Clock::time_point::max();
    std::map<std::int64_t, Entry> entries;
    for (auto& [id, slot] : slots_) entries.emplace(id, std::move(slot.entry));
    slots_.clear();
    return entries;
  }

  [[nodiscard]] bool empty() const { return slots_.empty(); }
  [[nodiscard]] std::size_t size() const { return slots_.size(); }

 private:
  /// How many given-up ids are remembered, the oldest forgotten first.
  static constexpr std::size_t kGivenUpIds = 256;

  struct Slot {
    Entry entry;
    Clock::time_point deadline;
  };

  static bool isOurs(const Json& id) { return id.is_number_integer(); }

  void remember(std::int64_t id) {
    givenUp_.push_back(id);
    if (givenUp_.size() > kGivenUpIds) givenUp_.pop_front();
  }

  void setDeadline(Slot& slot, std::chrono::milliseconds timeout,
                   Clock::time_point latest = Clock::time_point::max()) {
    if (timeout.count() <= 0) return;
    slot.deadline = std::min(Clock::now() + timeout, latest);
    arm(slot.deadline);
  }

  void arm(Clock::time_point deadline) {
    // A later deadline is found when the armed one fires; only an earlier one re-arms.
    if (deadline >= armedFor_) return;
    armedFor_ = deadline;
    // Re-arming cancels the previous wait; its handler sees operation_aborted and returns. A
    // wait that had already fired when the ledger went away finds its token expired.
    timer_.expires_at(deadline);
    timer_.async_wait([this, alive = std::weak_ptr<char>(alive_)](const auto& ec) {
      if (!ec && !alive.expired()) onTimer();
    });
  }

  void onTimer() {
    armedFor_ = Clock::time_point::max();
    const auto now = Clock::now();
    std::vector<std::int64_t> due;
    auto next = Clock::time_point::max();
    for (const auto& [id, slot] : slots_) {
      if (slot.deadline <= now) {
        due.push_back(id);
      } else {
        next = std::min(next, slot.deadline);
      }
    }
    // The handler may add, take or give up requests, so none runs while the map is walked; a
    // request it took meanwhile is skipped.
    const auto alive = std::weak_ptr<char>(alive_);
    for (const std::int64_t id : due) {
      auto entry = giveUp(id);
      if (!entry || !expired_) continue;
      // A copy: the handler may end the ledger's owner, and the ledger with it.
      const ExpiredHandler handler = expired_;
      handler(id, std::move(*entry));
      if (alive.expired()) return;
    }
    arm(next);
  }

  boost::asio::steady_timer timer_;
  std::shared_ptr<char> alive_ = std::make_shared<char>();
  Clock::time_point armedFor_ = Clock::time_point::max();
  std::map<std::int64_t, Slot> slots_;
  std::deque<std::int64_t> givenUp_;
  IdAllocator ids_;
  ExpiredHandler expired_;
};

}  // namespace kaja::core::mcp
