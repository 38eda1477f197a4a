// Controller expectations (upstream pkg/controller/controller_utils.go ControllerExpectations):
// how many pod creates and deletes a controller has issued for an object (by key) and not yet
// seen arrive through its informer. A controller does not act on a key again until its last
// round of writes has been observed, so it never creates twice from a stale cache. Expectations
// that are not met within 5 minutes expire (a lost watch event must not block the key for ever).
//
//   expectations.SetExpectations(key, creates, deletes);   // before issuing the writes
//   expectations.CreationObserved(key);                    // from the pod add handler
//   if (expectations.SatisfiedExpectations(key)) ...       // in the sync
//
// Thread safety: ControllerExpectations is thread-safe; a Backoff belongs to one thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "client/clock.h"

namespace kt::controllers::daemonset {

class ControllerExpectations {
 public:
  static constexpr client::Duration kExpectationsTimeout = std::chrono::minutes(5);

  explicit ControllerExpectations(client::Clock* clock) : clock_(clock) {}

  // True when there are no expectations for `key`, they are met (nothing left to observe), or
  // they were set more than kExpectationsTimeout ago.
  bool SatisfiedExpectations(const std::string& key) const;
  void SetExpectations(const std::string& key, int64_t adds, int64_t deletes);
  // Lowers the counts (a create failed, or creates were skipped).
  void LowerExpectations(const std::string& key, int64_t adds, int64_t deletes);
  void CreationObserved(const std::string& key) { LowerExpectations(key, 1, 0); }
  void DeletionObserved(const std::string& key) { LowerExpectations(key, 0, 1); }
  void DeleteExpectations(const std::string& key);

 private:
  struct Expectation {
    int64_t adds = 0;
    int64_t deletes = 0;
    client::Time timestamp;
  };
  client::Clock* clock_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Expectation> expectations_;  // guarded by mu_
};

// flowcontrol.Backoff without jitter: per-key exponential backoff from `initial` up to `max`;
// an entry untouched for twice `max` starts over.
class Backoff {
 public:
  Backoff(client::Duration initial, client::Duration max) : initial_(initial), max_(max) {}

  // Whether `now` is still within the backoff that the last Next for `key` started.
  bool IsInBackOffSinceUpdate(const std::string& key, client::Time now) const;
  // Starts (or doubles) the backoff of `key` at `now`.
  void Next(const std::string& key, client::Time now);
  // The current backoff of `key` (0 without one).
  client::Duration Get(const std::string& key) const;
  // Forgets entries that have expired (upstream's GC, run every minute).
  void GC(client::Time now);

 private:
  struct Entry {
    client::Duration backoff;
    client::Time last_update;
  };
  bool Expired(const Entry& e, client::Time now) const { return now - e.last_update > 2 * max_; }

  const client::Duration initial_;
  const client::Duration max_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace kt::controllers::daemonset
