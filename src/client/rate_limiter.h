// Rate limiters for work queues and controllers, as client-go's util/workqueue and
// golang.org/x/time/rate, on a Clock:
//
//   - ItemExponentialFailureRateLimiter: base · 2^failures per item, capped at `max`.
//   - BucketRateLimiter: a token bucket of `burst` tokens refilled at `qps`; each When takes a
//     token, waiting (returning the delay) when none is left — rate.Limiter.Reserve().Delay().
//   - MaxOfRateLimiter: the longest delay of several.
//   - DefaultControllerRateLimiter(): max of exponential 5 ms → 1000 s and a 10 qps / 100 burst
//     bucket, client-go's DefaultControllerRateLimiter.
//
// Items are strings (object keys or UIDs), as client-go's queues use.
//
// Thread safety: every method is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "client/clock.h"

namespace kt::client {

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // How long `item` should wait now; counts a failure (or takes a token).
  virtual Duration When(const std::string& item) = 0;
  // Stops tracking `item` (it succeeded).
  virtual void Forget(const std::string& item) = 0;
  // Failures counted for `item` since the last Forget.
  virtual int NumRequeues(const std::string& item) = 0;
};

class ItemExponentialFailureRateLimiter : public RateLimiter {
 public:
  ItemExponentialFailureRateLimiter(Duration base, Duration max) : base_(base), max_(max) {}
  Duration When(const std::string& item) override;
  void Forget(const std::string& item) override;
  int NumRequeues(const std::string& item) override;

 private:
  const Duration base_;
  const Duration max_;
  std::mutex mu_;
  std::unordered_map<std::string, int> failures_;  // guarded by mu_
};

// A token bucket (golang.org/x/time/rate.Limiter) in integer nanoseconds: each token costs
// 1e9/qps ns of refill (rounded to whole ns, so 0.1 qps is exactly one token per 10 s), and the
// bucket holds at most `burst` tokens. Kept as the instant the bucket would be empty, which
// moves forward by one token's refill time per token taken.
class TokenBucket {
 public:
  // `qps` tokens per second, at most `burst` held; starts full. At 0 qps it never gives a
  // token (client-go's "never" limiter, which the node lifecycle controller swaps in).
  TokenBucket(const Clock* clock, double qps, int burst);
  // Takes a token and returns how long to wait until it is available (0 if one is now;
  // Duration::max() at 0 qps).
  Duration Reserve();
  // Takes a token if one is available now.
  bool TryAccept();
  // When TryAccept will next succeed without taking anything (now or earlier if a token is
  // available; Time::max() at 0 qps): for callers that poll on a timer and want to sleep until
  // then.
  Time NextTokenAt() const;
  // Changes the rate, keeping the tokens accumulated so far (rate.Limiter.SetLimit).
  void SetQps(double qps);
  double qps() const;

 private:
  static int64_t IntervalOf(double qps);
  // The empty instant clamped so that at most `burst` tokens are held at `now`.
  Time EmptyAtLocked(Time now) const;

  const Clock* clock_;
  const int64_t burst_;
  mutable std::mutex mu_;
  double qps_;        // guarded by mu_
  int64_t interval_;  // ns per token; 0 when qps is 0; guarded by mu_
  Time empty_at_;     // guarded by mu_
};

class BucketRateLimiter : public RateLimiter {
 public:
  BucketRateLimiter(const Clock* clock, double qps, int burst) : bucket_(clock, qps, burst) {}
  Duration When(const std::string&) override { return bucket_.Reserve(); }
  void Forget(const std::string&) override {}
  int NumRequeues(const std::string&) override { return 0; }

 private:
  TokenBucket bucket_;
};

class MaxOfRateLimiter : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
      : limiters_(std::move(limiters)) {}
  Duration When(const std::string& item) override;
  void Forget(const std::string& item) override;
  int NumRequeues(const std::string& item) override;

 private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(const Clock* clock);

}  // namespace kt::client
