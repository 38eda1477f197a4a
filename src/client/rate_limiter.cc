#include "client/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace kt::client {

Duration ItemExponentialFailureRateLimiter::When(const std::string& item) {
  int exp;
  {
    std::lock_guard<std::mutex> lock(mu_);
    exp = failures_[item]++;
  }
  // base · 2^exp, capped at max; computed in floating point first, as client-go, so that a
  // large exponent cannot overflow.
  const double backoff = static_cast<double>(base_.count()) * std::pow(2.0, exp);
  if (backoff > static_cast<double>(max_.count())) return max_;
  return Duration(static_cast<int64_t>(backoff));
}

void ItemExponentialFailureRateLimiter::Forget(const std::string& item) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_.erase(item);
}

int ItemExponentialFailureRateLimiter::NumRequeues(const std::string& item) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = failures_.find(item);
  return it == failures_.end() ? 0 : it->second;
}

int64_t TokenBucket::IntervalOf(double qps) {
  if (qps <= 0) return 0;
  return std::max<int64_t>(1, std::llround(1e9 / qps));
}

TokenBucket::TokenBucket(const Clock* clock, double qps, int burst)
    : clock_(clock),
      burst_(std::max(burst, 0)),
      qps_(qps),
      interval_(IntervalOf(qps)),
      empty_at_(clock->Now() - Duration(burst_ * interval_)) {}

Time TokenBucket::EmptyAtLocked(Time now) const {
  return std::max(empty_at_, now - Duration(burst_ * interval_));
}

Duration TokenBucket::Reserve() {
  std::lock_guard<std::mutex> lock(mu_);
  const Time now = clock_->Now();
  if (interval_ == 0) return Duration::max();
  empty_at_ = EmptyAtLocked(now) + Duration(interval_);
  return std::max(Duration::zero(), empty_at_ - now);
}

bool TokenBucket::TryAccept() {
  std::lock_guard<std::mutex> lock(mu_);
  const Time now = clock_->Now();
  if (interval_ == 0) return false;
  const Time next = EmptyAtLocked(now) + Duration(interval_);
  if (next > now) return false;
  empty_at_ = next;
  return true;
}

Time TokenBucket::NextTokenAt() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (interval_ == 0) return Time::max();
  return EmptyAtLocked(clock_->Now()) + Duration(interval_);
}

void TokenBucket::SetQps(double qps) {
  std::lock_guard<std::mutex> lock(mu_);
  const Time now = clock_->Now();
  const int64_t interval = IntervalOf(qps);
  if (interval_ != 0 && interval != 0) {
    // Keep the tokens held (or owed) now: (now - empty_at) / interval tokens.
    const Time empty_at = EmptyAtLocked(now);
    const long double tokens =
        static_cast<long double>((now - empty_at).count()) / static_cast<long double>(interval_);
    empty_at_ = now - Duration(static_cast<int64_t>(tokens * interval));
  } else {
    empty_at_ = now;  // from or to 0 qps: start empty
  }
  qps_ = qps;
  interval_ = interval;
}

double TokenBucket::qps() const {
  std::lock_guard<std::mutex> lock(mu_);
  return qps_;
}

Duration MaxOfRateLimiter::When(const std::string& item) {
  Duration d = Duration::zero();
  for (auto& l : limiters_) d = std::max(d, l->When(item));
  return d;
}

void MaxOfRateLimiter::Forget(const std::string& item) {
  for (auto& l : limiters_) l->Forget(item);
}

int MaxOfRateLimiter::NumRequeues(const std::string& item) {
  int n = 0;
  for (auto& l : limiters_) n = std::max(n, l->NumRequeues(item));
  return n;
}

std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(const Clock* clock) {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(std::make_unique<ItemExponentialFailureRateLimiter>(
      std::chrono::milliseconds(5), std::chrono::seconds(1000)));
  limiters.push_back(std::make_unique<BucketRateLimiter>(clock, 10, 100));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

}  // namespace kt::client
