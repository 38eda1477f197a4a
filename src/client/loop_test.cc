#include "client/loop.h"

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace kt::client {
namespace {

using std::chrono::seconds;

TEST(LoopTest, TimersRunInDeadlineOrderTiesInCreationOrderOnlyWhenDue) {
  SimulatedClock clock(SimulatedClock::kDefaultStart);
  Loop loop(&clock, {});
  std::vector<std::string> ran;
  const Time t0 = clock.Now();
  loop.At(t0 + seconds(5), [&] { ran.push_back("b"); });
  loop.At(t0 + seconds(2), [&] { ran.push_back("a"); });
  loop.At(t0 + seconds(5), [&] { ran.push_back("c"); });
  const Loop::TimerHandle cancelled = loop.At(t0 + seconds(3), [&] { ran.push_back("x"); });
  EXPECT_TRUE(loop.Cancel(cancelled));
  EXPECT_FALSE(loop.Cancel(cancelled));
  loop.RunPending();
  EXPECT_TRUE(ran.empty());
  clock.Advance(seconds(2));
  loop.RunPending();
  EXPECT_EQ(ran, (std::vector<std::string>{"a"}));
  clock.Advance(seconds(3));
  loop.RunPending();
  EXPECT_EQ(ran, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(loop.PendingTimers(), 0u);
}

TEST(LoopTest, AnEarlierTimerAddedLaterFiresFirstAndTimersMayAddTimers) {
  SimulatedClock clock(SimulatedClock::kDefaultStart);
  Loop loop(&clock, {});
  std::vector<int> ran;
  const Time t0 = clock.Now();
  loop.At(t0 + seconds(10), [&] { ran.push_back(10); });
  loop.At(t0 + seconds(1), [&] {
    ran.push_back(1);
    loop.At(clock.Now() + seconds(1), [&] { ran.push_back(2); });
  });
  for (int i = 0; i < 10; ++i) {
    clock.Advance(seconds(1));
    loop.RunPending();
  }
  EXPECT_EQ(ran, (std::vector<int>{1, 2, 10}));
}

TEST(LoopTest, PostedWorkAndPollRunOnTheLoopThread) {
  std::unique_ptr<Clock> clock = NewRealClock();
  int polled = 0;
  Loop loop(clock.get(), {.name = "kt-loop-test", .poll = [&] { return polled++ < 0 ? 1u : 0u; }});
  loop.Start();
  std::promise<std::thread::id> where;
  loop.Post([&] { where.set_value(std::this_thread::get_id()); });
  EXPECT_NE(where.get_future().get(), std::this_thread::get_id());
  std::promise<void> timed;
  loop.Post(
      [&] { loop.At(clock->Now() + std::chrono::milliseconds(5), [&] { timed.set_value(); }); });
  EXPECT_EQ(timed.get_future().wait_for(seconds(10)), std::future_status::ready);
  loop.Stop();
  EXPECT_GT(polled, 0);
}

}  // namespace
}  // namespace kt::client
