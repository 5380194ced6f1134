#include "core/util/loop_thread.h"

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <stdexcept>

namespace kaja::core {
namespace {

TEST(LoopThreadTest, AnswersAWaiterWhenAHandlerThrows) {
  LoopThread loop;
  // The job defers its answer to a handler that throws instead: the waiter must not hang.
  auto result = loop.call<Result<int>>([&loop](std::function<void(Result<int>)> done) {
    boost::asio::post(loop.io(), [done] {
      throw std::runtime_error("a type_error from a bad field");
      done(1);
    });
  });
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kInternal);
  EXPECT_NE(result.error().message.find("a type_error from a bad field"), std::string::npos);

  // The loop goes on serving.
  EXPECT_EQ(loop.call<int>([](std::function<void(int)> done) { done(42); }), 42);
  EXPECT_FALSE(loop.call<bool>([](const std::function<void(bool)>&) { throw 7; }));
}

}  // namespace
}  // namespace kaja::core
