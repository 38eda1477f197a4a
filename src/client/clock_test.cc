#include "client/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "client/rate_limiter.h"
#include "client/work_queue.h"

namespace kt::client {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(SimulatedClockTest, TimersFireOnlyWhenAdvancedInDeadlineOrderTiesInCreationOrder) {
  SimulatedClock clock;
  std::vector<int> fired;
  clock.AfterFunc(seconds(2), [&] { fired.push_back(2); });
  clock.AfterFunc(seconds(1), [&] { fired.push_back(1); });
  clock.AfterFunc(seconds(1), [&] { fired.push_back(11); });  // same deadline, created later
  clock.AfterFunc(seconds(3), [&] { fired.push_back(3); });
  EXPECT_TRUE(fired.empty());
  EXPECT_EQ(clock.Advance(milliseconds(999)), 0u);
  EXPECT_TRUE(fired.empty());
  EXPECT_EQ(clock.Advance(seconds(2)), 3u);
  EXPECT_EQ(fired, (std::vector<int>{1, 11, 2}));
  EXPECT_EQ(clock.PendingTimers(), 1u);
}

TEST(SimulatedClockTest, NowDuringACallbackIsItsDeadline) {
  const Time start = SimulatedClock::kDefaultStart;
  SimulatedClock clock(start);
  Time seen{};
  clock.AfterFunc(seconds(5), [&] { seen = clock.Now(); });
  clock.Advance(seconds(60));
  EXPECT_EQ(seen, start + seconds(5));
  EXPECT_EQ(clock.Now(), start + seconds(60));
}

TEST(SimulatedClockTest, TimersAddedByCallbacksFireWithinTheSameAdvance) {
  SimulatedClock clock;
  std::vector<std::string> fired;
  clock.AfterFunc(seconds(1), [&] {
    fired.push_back("a");
    clock.AfterFunc(seconds(1), [&] { fired.push_back("b"); });  // due at 2 s
    clock.AfterFunc(seconds(0), [&] { fired.push_back("now"); });
  });
  clock.Advance(seconds(2));
  EXPECT_EQ(fired, (std::vector<std::string>{"a", "now", "b"}));
}

TEST(SimulatedClockTest, CancelledTimerNeverFires) {
  SimulatedClock clock;
  bool fired = false;
  TimerId id = clock.AfterFunc(seconds(1), [&] { fired = true; });
  EXPECT_TRUE(clock.Cancel(id));
  EXPECT_FALSE(clock.Cancel(id));
  clock.Advance(seconds(5));
  EXPECT_FALSE(fired);
}

TEST(SimulatedClockTest, StepJumpsToTheNextTimer) {
  const Time start = SimulatedClock::kDefaultStart;
  SimulatedClock clock(start);
  int fired = 0;
  clock.At(start + seconds(300), [&] { ++fired; });
  EXPECT_TRUE(clock.Step());
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(clock.Now(), start + seconds(300));
  EXPECT_FALSE(clock.Step());
}

TEST(RealClockTest, FiresATimerWithinADeadline) {
  std::unique_ptr<Clock> clock = NewRealClock();
  std::mutex mu;
  std::condition_variable cv;
  bool fired = false;
  clock->AfterFunc(milliseconds(5), [&] {
    std::lock_guard<std::mutex> lock(mu);
    fired = true;
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  EXPECT_TRUE(cv.wait_for(lock, seconds(10), [&] { return fired; }));
}

// --- Rate limiters (client-go default_rate_limiters_test.go) ------------------------------------

TEST(RateLimiterTest, ItemExponentialFailureDoublesPerItemUpToTheMax) {
  ItemExponentialFailureRateLimiter l(milliseconds(1), seconds(1));
  EXPECT_EQ(l.When("one"), milliseconds(1));
  EXPECT_EQ(l.When("one"), milliseconds(2));
  EXPECT_EQ(l.When("one"), milliseconds(4));
  EXPECT_EQ(l.When("one"), milliseconds(8));
  EXPECT_EQ(l.When("one"), milliseconds(16));
  EXPECT_EQ(l.NumRequeues("one"), 5);
  EXPECT_EQ(l.When("two"), milliseconds(1));
  EXPECT_EQ(l.When("two"), milliseconds(2));
  EXPECT_EQ(l.NumRequeues("two"), 2);
  l.Forget("one");
  EXPECT_EQ(l.NumRequeues("one"), 0);
  EXPECT_EQ(l.When("one"), milliseconds(1));
  for (int i = 0; i < 40; ++i) l.When("cap");
  EXPECT_EQ(l.When("cap"), seconds(1));
}

TEST(RateLimiterTest, TokenBucketGivesItsBurstThenOneTokenPerInterval) {
  SimulatedClock clock;
  TokenBucket bucket(&clock, 10, 3);  // 10 qps: one token per 100 ms exactly
  EXPECT_EQ(bucket.Reserve(), Duration::zero());
  EXPECT_EQ(bucket.Reserve(), Duration::zero());
  EXPECT_EQ(bucket.Reserve(), Duration::zero());
  EXPECT_EQ(bucket.Reserve(), milliseconds(100));
  EXPECT_EQ(bucket.Reserve(), milliseconds(200));
  clock.Advance(milliseconds(250));
  EXPECT_EQ(bucket.Reserve(), milliseconds(50));
  EXPECT_FALSE(bucket.TryAccept());
  clock.Advance(seconds(10));  // refills to the burst, not beyond
  EXPECT_TRUE(bucket.TryAccept());
  EXPECT_TRUE(bucket.TryAccept());
  EXPECT_TRUE(bucket.TryAccept());
  EXPECT_FALSE(bucket.TryAccept());
}

TEST(RateLimiterTest, TokenBucketAtATenthOfAQpsIsExactlyTenSeconds) {
  SimulatedClock clock;
  TokenBucket bucket(&clock, 0.1, 1);  // the node lifecycle controller's eviction rate
  EXPECT_TRUE(bucket.TryAccept());
  EXPECT_FALSE(bucket.TryAccept());
  clock.Advance(seconds(10) - Duration(1));
  EXPECT_FALSE(bucket.TryAccept());
  clock.Advance(Duration(1));
  EXPECT_TRUE(bucket.TryAccept());
}

TEST(RateLimiterTest, TokenBucketAtZeroQpsNeverGives) {
  SimulatedClock clock;
  TokenBucket bucket(&clock, 0, 1);
  EXPECT_FALSE(bucket.TryAccept());
  EXPECT_EQ(bucket.Reserve(), Duration::max());
  EXPECT_EQ(bucket.NextTokenAt(), Time::max());
}

TEST(RateLimiterTest, TokenBucketSaysWhenItsNextTokenComesWithoutTakingIt) {
  SimulatedClock clock;
  TokenBucket bucket(&clock, 0.1, 1);
  const Time t0 = clock.Now();
  EXPECT_EQ(bucket.NextTokenAt(), t0);  // full: a token now
  EXPECT_EQ(bucket.NextTokenAt(), t0);  // asking takes nothing
  EXPECT_TRUE(bucket.TryAccept());
  EXPECT_EQ(bucket.NextTokenAt(), t0 + seconds(10));
  clock.Advance(seconds(25));  // a burst of 1: the bucket holds one token, not two
  EXPECT_EQ(bucket.NextTokenAt(), clock.Now());
  EXPECT_TRUE(bucket.TryAccept());
  EXPECT_EQ(bucket.NextTokenAt(), clock.Now() + seconds(10));
}

TEST(RateLimiterTest, DefaultControllerRateLimiterIsTheMaxOfBothLimiters) {
  SimulatedClock clock;
  std::unique_ptr<RateLimiter> l = DefaultControllerRateLimiter(&clock);
  EXPECT_EQ(l->When("a"), milliseconds(5));
  EXPECT_EQ(l->When("a"), milliseconds(10));
  // 98 more items use up the bucket's burst of 100; then the bucket (10 qps) dominates.
  for (int i = 0; i < 98; ++i) l->When(std::to_string(i));
  EXPECT_EQ(l->When("fresh"), milliseconds(100));
  EXPECT_EQ(l->NumRequeues("a"), 2);
  l->Forget("a");
  EXPECT_EQ(l->NumRequeues("a"), 0);
}

// --- Work queue (client-go queue_test.go, delaying_queue_test.go) -------------------------------

TEST(WorkQueueTest, DeduplicatesAndNeverHandsOneKeyToTwoWorkers) {
  SimulatedClock clock;
  WorkQueue q(&clock, nullptr);
  q.Add("a");
  q.Add("b");
  q.Add("a");
  EXPECT_EQ(q.Len(), 2u);
  std::string key;
  ASSERT_TRUE(q.TryGet(&key));
  EXPECT_EQ(key, "a");
  q.Add("a");  // while "a" is processed: marked, not queued
  EXPECT_EQ(q.Len(), 1u);
  ASSERT_TRUE(q.TryGet(&key));
  EXPECT_EQ(key, "b");
  EXPECT_FALSE(q.TryGet(&key));  // "a" is still being processed
  q.Done("a");                   // ... and comes back once
  ASSERT_TRUE(q.TryGet(&key));
  EXPECT_EQ(key, "a");
  q.Done("a");
  q.Done("b");
  EXPECT_FALSE(q.TryGet(&key));
}

TEST(WorkQueueTest, AddAfterWaitsOnTheClockAndKeepsTheEarlierTime) {
  SimulatedClock clock;
  WorkQueue q(&clock, nullptr);
  q.AddAfter("a", seconds(10));
  q.AddAfter("a", seconds(5));   // earlier: replaces
  q.AddAfter("a", seconds(30));  // later: ignored
  EXPECT_EQ(q.Len(), 0u);
  EXPECT_EQ(q.Waiting(), 1u);
  clock.Advance(seconds(4));
  EXPECT_EQ(q.Len(), 0u);
  clock.Advance(seconds(1));
  EXPECT_EQ(q.Len(), 1u);
  clock.Advance(seconds(60));
  EXPECT_EQ(q.Len(), 1u);  // the replaced timers did nothing
}

TEST(WorkQueueTest, AddRateLimitedBacksOffAndForgetResets) {
  SimulatedClock clock;
  WorkQueue q(&clock, std::make_unique<ItemExponentialFailureRateLimiter>(seconds(1), seconds(60)));
  q.AddRateLimited("k");
  q.AddRateLimited("k");  // second failure: 2 s, but the earlier 1 s wins
  EXPECT_EQ(q.NumRequeues("k"), 2);
  clock.Advance(seconds(1));
  EXPECT_EQ(q.Len(), 1u);
  q.Forget("k");
  EXPECT_EQ(q.NumRequeues("k"), 0);
}

TEST(WorkQueueTest, ShutDownWakesBlockedWorkers) {
  SimulatedClock clock;
  WorkQueue q(&clock, nullptr);
  std::atomic<int> exited{0};
  std::thread worker([&] {
    std::string key;
    while (q.Get(&key)) q.Done(key);
    exited = 1;
  });
  q.Add("x");
  q.ShutDown();
  worker.join();
  EXPECT_EQ(exited.load(), 1);
  q.Add("y");  // ignored after shutdown
  EXPECT_EQ(q.Len(), 0u);
}

}  // namespace
}  // namespace kt::client
