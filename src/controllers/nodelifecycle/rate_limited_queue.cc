#include "controllers/nodelifecycle/rate_limited_queue.h"

#include <utility>

namespace kt::controllers::nodelifecycle {

RateLimitedTimedQueue::RateLimitedTimedQueue(const client::Clock* clock, float qps)
    : clock_(clock), qps_(qps) {
  if (qps > 0) bucket_.emplace(clock, static_cast<double>(qps), kEvictionRateLimiterBurst);
}

bool RateLimitedTimedQueue::Add(const std::string& node, const std::string& uid) {
  if (known_.contains(node)) return false;
  known_.insert(node);
  const client::Time now = clock_->Now();
  const Key key{now, next_seq_++};
  queue_.emplace(key, Value{node, uid, now, now});
  keys_.emplace(node, key);
  return true;
}

void RateLimitedTimedQueue::Erase(std::string_view node) {
  auto it = keys_.find(node);
  if (it == keys_.end()) return;
  queue_.erase(it->second);
  keys_.erase(it);
}

bool RateLimitedTimedQueue::Remove(std::string_view node) {
  auto it = known_.find(node);
  if (it == known_.end()) return false;
  known_.erase(it);
  Erase(node);
  return true;
}

std::optional<RateLimitedTimedQueue::Value> RateLimitedTimedQueue::Next() {
  if (queue_.empty()) return std::nullopt;
  if (!bucket_ || !bucket_->TryAccept()) return std::nullopt;
  const Value& head = queue_.begin()->second;
  if (clock_->Now() < head.process_at) return std::nullopt;
  return head;
}

void RateLimitedTimedQueue::Done(const Value& value, bool ok, client::Duration retry_after) {
  auto it = keys_.find(value.node);
  if (it == keys_.end()) return;  // removed meanwhile
  if (ok) {
    // Upstream's RemoveFromQueue: out of the queue, still known.
    Erase(value.node);
    return;
  }
  Value again = std::move(queue_.at(it->second));
  queue_.erase(it->second);
  again.process_at = clock_->Now() + retry_after + client::Duration(1);
  const Key key{again.process_at, next_seq_++};
  it->second = key;
  queue_.emplace(key, std::move(again));
}

void RateLimitedTimedQueue::SwapLimiter(float qps) {
  if (qps == qps_) return;
  const bool old_had_token = bucket_ && bucket_->TryAccept();
  qps_ = qps;
  bucket_.reset();
  if (qps <= 0) return;
  bucket_.emplace(clock_, static_cast<double>(qps), kEvictionRateLimiterBurst);
  // Burst 1: a limiter that was waiting for its token hands the wait on (upstream).
  if (!old_had_token) bucket_->TryAccept();
}

client::Time RateLimitedTimedQueue::NextTokenAt() const {
  if (queue_.empty() || !bucket_) return client::Time::max();
  return bucket_->NextTokenAt();
}

bool RateLimitedTimedQueue::Queued(std::string_view node) const { return keys_.contains(node); }

std::vector<std::string> RateLimitedTimedQueue::QueuedNodes() const {
  std::vector<std::string> out;
  out.reserve(queue_.size());
  for (const auto& [key, value] : queue_) out.push_back(value.node);
  return out;
}

bool RateLimitedTimedQueue::Known(std::string_view node) const { return known_.contains(node); }

}  // namespace kt::controllers::nodelifecycle
