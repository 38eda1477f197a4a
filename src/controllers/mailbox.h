// Mailbox: where other threads (timers, write completions, informers) hand work to a controller
// that runs on one thread of its own, or wherever its owner calls it (manual mode).
//
//   auto box = std::make_shared<Mailbox>();
//   informer.SetOnPending([box] { box->Wake(); });
//   client->Get(..., [box](auto r) { box->Post([r] { /* on the controller's thread */ }); });
//   // the controller's thread:
//   for (;;) {
//     std::deque<std::function<void()>> inbox;
//     if (!box->Take(&inbox)) return;        // stopping
//     ... dispatch informers, run `inbox` ...
//     if (nothing was done && !box->Wait()) return;
//   }
//
// Held by shared_ptr and captured by the callbacks, so that one that comes after the controller
// is gone finds the mailbox (stopping: the work is dropped), not freed memory. Closures posted
// run only on the controller's thread.
//
// Thread safety: every method is thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

namespace kt::controllers {

class Mailbox {
 public:
  // Queues `fn` for the controller's thread; dropped once stopping.
  void Post(std::function<void()> fn);
  // Says that an informer has changes to dispatch.
  void Wake();
  // Moves the posted closures to `*out` and clears the informer flag; false once stopping.
  bool Take(std::deque<std::function<void()>>* out);
  // Blocks until something is posted, an informer has changes, or Stop; false on Stop.
  bool Wait();
  // Drops what is queued and makes Wait return false; false if it was stopped already.
  bool Stop();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> inbox_;  // guarded by mu_
  bool informer_pending_ = false;            // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
};

}  // namespace kt::controllers
