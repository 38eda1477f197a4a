// Work queues with client-go's semantics (util/workqueue), on a Clock.
//
// WorkQueue: a FIFO of keys that
//   - de-duplicates: a key added while queued is queued once;
//   - never hands one key to two workers at once: a key added while a worker processes it is
//     queued again only when that worker calls Done;
//   - stops on ShutDown: Get returns false once the queue is empty and shut down.
// AddAfter (delaying queue) adds a key once a delay has passed on the Clock; a key already
// waiting keeps the earlier of its two ready times. AddRateLimited waits as long as the rate
// limiter says (per-key exponential backoff and an overall token bucket by default); Forget
// resets a key's backoff after it succeeds.
//
//   WorkQueue queue(clock, DefaultControllerRateLimiter(clock));
//   queue.Add("default/nginx");                  // handlers only enqueue keys
//   std::string key;
//   while (queue.Get(&key)) {                    // a worker
//     if (Reconcile(key).ok()) queue.Forget(key); else queue.AddRateLimited(key);
//     queue.Done(key);
//   }
//
// Thread safety: every method is thread-safe. Get blocks; TryGet does not (for callers that
// drive the queue themselves, such as simulations).
#pragma once

#include <memory>
#include <string>

#include "client/clock.h"
#include "client/rate_limiter.h"

namespace kt::client {

class WorkQueue {
 public:
  // `limiter` may be null when AddRateLimited is never used.
  WorkQueue(Clock* clock, std::unique_ptr<RateLimiter> limiter);
  ~WorkQueue();  // shuts down and cancels the waiting keys' timers
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Add(const std::string& key);
  // Adds `key` after `delay` (at once when delay <= 0).
  void AddAfter(const std::string& key, Duration delay);
  // Adds `key` after the rate limiter's delay for it.
  void AddRateLimited(const std::string& key);
  // Resets the rate limiter's backoff for `key`.
  void Forget(const std::string& key);
  int NumRequeues(const std::string& key);

  // Waits for a key; false once shut down and empty. The caller must call Done(key).
  bool Get(std::string* key);
  // Get without waiting: false when no key is ready.
  bool TryGet(std::string* key);
  // Marks `key` processed; if it was added meanwhile, it is queued again.
  void Done(const std::string& key);

  // Stops accepting keys and wakes every waiting Get.
  void ShutDown();
  bool ShuttingDown() const;
  // Keys queued (not processing, not waiting for a delay).
  size_t Len() const;
  // Keys waiting for a delay.
  size_t Waiting() const;

 private:
  // Held by shared_ptr so that a delay timer that is already running when the queue is
  // destroyed finds it gone (through a weak_ptr) instead of touching freed memory.
  struct State;
  Clock* clock_;
  std::unique_ptr<RateLimiter> limiter_;
  std::shared_ptr<State> state_;
};

}  // namespace kt::client
