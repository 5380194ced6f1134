#include "core/mcp/request_ledger.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace kaja::core::mcp {
namespace {

using namespace std::chrono_literals;

struct Note {
  std::string what;
};

// Runs `io` until `done` holds or 10 s pass; returns whether it held.
template <class Predicate>
bool runUntil(boost::asio::io_context& io, Predicate done) {
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (!done() && std::chrono::steady_clock::now() < give_up) {
    io.restart();
    io.run_for(5ms);
  }
  return done();
}

TEST(RequestLedgerTest, HandsOutIdsInOrderAndGivesEachAnswerOnce) {
  boost::asio::io_context io;
  RequestLedger<Note> ledger(io);
  EXPECT_EQ(ledger.nextId(), 1);
  EXPECT_EQ(ledger.nextId(), 2);
  ledger.add(2, Note{"second"}, 0ms);
  ASSERT_NE(ledger.find(2), nullptr);
  EXPECT_EQ(ledger.find(2)->what, "second");
  EXPECT_EQ(ledger.size(), 1U);

  const auto answered = ledger.take(Json(2));
  ASSERT_TRUE(answered.has_value());
  EXPECT_EQ(answered->what, "second");
  EXPECT_FALSE(ledger.take(Json(2)).has_value());
  EXPECT_TRUE(ledger.empty());
  // An answer is not one that was given up on.
  EXPECT_FALSE(ledger.wasGivenUp(Json(2)));
}

TEST(RequestLedgerTest, OnlyWholeNumberIdsFromAPeerMatch) {
  boost::asio::io_context io;
  RequestLedger<Note> ledger(io);
  ledger.add(ledger.nextId(), Note{"one"}, 0ms);
  // A peer that answers id 1 as a string, a fraction, a bool or an array matches nothing.
  for (const Json& spelling : {Json("1"), Json(1.5), Json(true), Json::array({1}), Json(nullptr),
                               Json::object({{"id", 1}})}) {
    EXPECT_EQ(ledger.find(spelling), nullptr) << spelling.dump();
    EXPECT_FALSE(ledger.take(spelling).has_value()) << spelling.dump();
    EXPECT_FALSE(ledger.wasGivenUp(spelling)) << spelling.dump();
  }
  EXPECT_NE(ledger.find(Json(1)), nullptr);
}

TEST(RequestLedgerTest, ARequestPastItsDeadlineIsGivenUpAndHandedToTheHandler) {
  boost::asio::io_context io;
  RequestLedger<Note> ledger(io);
  std::vector<std::int64_t> expired;
  std::vector<std::string> notes;
  ledger.setExpiredHandler([&](std::int64_t id, Note note) {
    expired.push_back(id);
    notes.push_back(note.what);
  });
  ledger.add(1, Note{"slow"}, 20ms);
  ledger.add(2, Note{"no deadline"}, 0ms);
  ASSERT_TRUE(runUntil(io, [&] { return !expired.empty(); }));
  EXPECT_EQ(expired, std::vector<std::int64_t>{1});
  EXPECT_EQ(notes, std::vector<std::string>{"slow"});
  EXPECT_EQ(ledger.find(1), nullptr);
  EXPECT_TRUE(ledger.wasGivenUp(Json(1)));
  // The request without a deadline waits on.
  EXPECT_NE(ledger.find(2), nullptr);
}

TEST(RequestLedgerTest, AnAnsweredRequestNeverExpires) {
  boost::asio::io_context io;
  RequestLedger<Note> ledger(io);
  std::vector<std::int64_t> expired;
  ledger.setExpiredHandler([&](std::int64_t id, Note) { expired.push_back(id); });
  ledger.add(1, Note{"answered early"}, 20ms);
  ASSERT_TRUE(ledger.take(1).has_value());
  ledger.add(2, Note{"later"}, 60ms);
  // The timer armed for request 1 still fires; it must find nothing due but request 2, later.
  ASSERT_TRUE(runUntil(io, [&] { return !expired.empty(); }));
  EXPECT_EQ(expired, std::vector<std::int64_t>{2});
}

TEST(RequestLedgerTest, ARestartedDeadlineIsKept) {
  boost::asio::io_context io;
  RequestLedger<Note> ledger(io);
  std::vector<std::int64_t> expired;
  ledger.setExpiredHandler([&](std::int64_t id, Note) { expired.push_back(id); });
  ledger.add(1, Note{"reports progress"}, 20ms);
  ledger.add(2, Note{"silent"}, 150ms);
  // Progress on request 1 gives it ten seconds more: request 2 must expire first, alone.
  EXPECT_TRUE(ledger.restartDeadline(1, 10s));
  EXPECT_FALSE(ledger.restartDeadline(99, 10s));
  ASSERT_TRUE(runUntil(io, [&] { return !expired.empty(); }));
  EXPECT_EQ(expired, std::vector<std::int64_t>{2});
  EXPECT_NE(ledger.find(1), nullptr);
}

TEST(RequestLedgerTest, AnEarlierDeadlineAddedLaterStillFiresFirst) {
  boost::asio::io_context io;
  RequestLedger<Note> ledger(io);
  std::vector<std::int64_t> expired;
  ledger.setExpiredHandler([&](std::int64_t id, Note) { expired.push_back(id); });
  ledger.add(1, Note{"late"}, 10s);
  ledger.add(2, Note{"soon"}, 20ms);
  ASSERT_TRUE(runUntil(io, [&] { return !expired.empty(); }));
  EXPECT_EQ(expired, std::vector<std::int64_t>{2});
}

TEST(RequestLedgerTest, TheHandlerMayStartRequestsAndTakeOthersThatAreDue) {
  boost::asio::io_context io;
  RequestLedger<Note> ledger(io);
  std::vector<std::int64_t> expired;
  ledger.setExpiredHandler([&](std::int64_t id, Note) {
    expired.push_back(id);
    if (id == 1) {
      // Both were due together; the handler answers 2 itself and starts a new one.
      ledger.take(2);
      ledger.add(3, Note{"started by the handler"}, 20ms);
    }
  });
  ledger.add(1, Note{"a"}, 10ms);
  ledger.add(2, Note{"b"}, 10ms);
  ASSERT_TRUE(runUntil(io, [&] { return expired.size() >= 2; }));
  EXPECT_EQ(expired, (std::vector<std::int64_t>{1, 3}));
  EXPECT_TRUE(ledger.empty());
}

TEST(RequestLedgerTest, AHandlerThatEndsTheLedgerStopsTheWalk) {
  boost::asio::io_context io;
  auto ledger = std::make_unique<RequestLedger<Note>>(io);
  int calls = 0;
  ledger->setExpiredHandler([&](std::int64_t, Note) {
    ++calls;
    ledger.reset();  // the owner goes away with the first expiry
  });
  ledger->add(1, Note{"a"}, 10ms);
  ledger->add(2, Note{"b"}, 10ms);
  ASSERT_TRUE(runUntil(io, [&] { return calls > 0; }));
  io.restart();
  io.run_for(50ms);
  EXPECT_EQ(calls, 1);
}

TEST(RequestLedgerTest, TakeAllEndsEveryWaitAndTheTimer) {
  boost::asio::io_context io;
  RequestLedger<Note> ledger(io);
  int calls = 0;
  ledger.setExpiredHandler([&](std::int64_t, Note) { ++calls; });
  ledger.add(1, Note{"a"}, 10ms);
  ledger.add(4, Note{"b"}, 0ms);
  const auto all = ledger.takeAll();
  ASSERT_EQ(all.size(), 2U);
  EXPECT_EQ(all.at(1).what, "a");
  EXPECT_EQ(all.at(4).what, "b");
  EXPECT_TRUE(ledger.empty());
  io.run_for(60ms);
  EXPECT_EQ(calls, 0);
}

TEST(RequestLedgerTest, ALedgerDestroyedWithDeadlinesPendingCallsNothing) {
  boost::asio::io_context io;
  int calls = 0;
  {
    RequestLedger<Note> ledger(io);
    ledger.setExpiredHandler([&](std::int64_t, Note) { ++calls; });
    ledger.add(1, Note{"a"}, 1ms);
    std::this_thread::sleep_for(20ms);  // due, but the io_context has not run
  }
  io.run_for(50ms);
  EXPECT_EQ(calls, 0);
}

TEST(RequestLedgerTest, GivenUpIdsAreRememberedBoundedOldestFirstOut) {
  boost::asio::io_context io;
  RequestLedger<Note> ledger(io);
  for (std::int64_t id = 1; id <= 300; ++id) {
    ledger.add(id, Note{}, 0ms);
    ASSERT_TRUE(ledger.giveUp(id).has_value());
  }
  EXPECT_FALSE(ledger.giveUp(7).has_value());  // already gone
  EXPECT_FALSE(ledger.wasGivenUp(Json(1)));    // forgotten: only the latest 256 are kept
  EXPECT_TRUE(ledger.wasGivenUp(Json(45)));
  EXPECT_TRUE(ledger.wasGivenUp(Json(300)));
  EXPECT_TRUE(ledger.empty());
}

}  // namespace
}  // namespace kaja::core::mcp
