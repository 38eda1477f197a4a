// RateLimitedTimedQueue: a zone's queue of nodes waiting for a NoExecute taint, as upstream's
// (pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go), on a Clock.
//
// A node is added once and then stays known to the queue — even after it was processed — until
// Remove: adding it again before that does nothing, so a node is tainted once per outage.
// Items come out in order of when they are due (`process_at`, then the order they were added).
// Each attempt takes a token from a bucket of burst 1 refilled at the zone's rate; at rate 0 the
// bucket never gives one and nothing is processed.
//
//   RateLimitedTimedQueue q(&clock, 0.1f);
//   q.Add("node1", uid);
//   // every 100 ms (upstream's NodeEvictionPeriod), as Try does:
//   while (auto v = q.Next()) {            // takes a token; nullopt if none, or nothing is due
//     bool ok = Taint(v->node);            // may finish later: call Done then
//     q.Done(*v, ok, /*retry_after=*/{});
//   }
//
// Upstream's Try runs its action inside the loop; here Next hands the item out and Done takes
// the result, so the action may be an asynchronous write. Between the two the item stays queued
// (Add of it does nothing; Remove removes it, and Done then does nothing).
//
// Thread safety: none; one thread (the controller's) uses it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "client/clock.h"
#include "client/rate_limiter.h"

namespace kt::controllers::nodelifecycle {

// Upstream's EvictionRateLimiterBurst.
inline constexpr int kEvictionRateLimiterBurst = 1;

class RateLimitedTimedQueue {
 public:
  struct Value {
    std::string node;
    std::string uid;
    client::Time added_at;
    client::Time process_at;
  };

  // `qps` is float32, as the flags are upstream; the bucket starts full.
  RateLimitedTimedQueue(const client::Clock* clock, float qps);

  // Queues `node` due now, unless it is known (queued, or processed and not removed since).
  bool Add(const std::string& node, const std::string& uid);
  // Forgets `node`: it leaves the queue and may be added again. False if it was not known.
  bool Remove(std::string_view node);

  // One step of upstream's Try: the earliest item, if a token is available now (taken) and the
  // item is due; nullopt otherwise. A token is taken even when the earliest item is not due yet,
  // as upstream's loop does.
  std::optional<Value> Next();
  // The result of processing `value` (from Next): done, it leaves the queue but stays known; not
  // done, it is due again `retry_after` (plus 1 ns) from now. Nothing if it was removed since.
  void Done(const Value& value, bool ok, client::Duration retry_after);

  // Upstream's SwapLimiter: a new bucket at `qps` (none at 0: never a token), unless the rate is
  // unchanged. A new bucket starts full, or empty when the old one had no token left.
  void SwapLimiter(float qps);
  float qps() const { return qps_; }
  // When Next can next take a token (Time::max() at rate 0 or when the queue is empty).
  client::Time NextTokenAt() const;

  bool empty() const { return queue_.empty(); }
  size_t size() const { return queue_.size(); }
  // Queued (not yet processed, or waiting for a retry).
  bool Queued(std::string_view node) const;
  // Queued or processed, and not removed since.
  bool Known(std::string_view node) const;
  // The queued nodes, the next due first.
  std::vector<std::string> QueuedNodes() const;

 private:
  struct Key {
    client::Time process_at;
    uint64_t seq;
    bool operator<(const Key& o) const {
      return process_at != o.process_at ? process_at < o.process_at : seq < o.seq;
    }
  };
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };

  void Erase(std::string_view node);

  const client::Clock* clock_;
  float qps_;
  std::optional<client::TokenBucket> bucket_;  // none at rate 0
  uint64_t next_seq_ = 1;
  std::map<Key, Value> queue_;
  std::unordered_map<std::string, Key, StringHash, std::equal_to<>> keys_;  // queued items
  std::unordered_set<std::string, StringHash, std::equal_to<>> known_;
};

}  // namespace kt::controllers::nodelifecycle
