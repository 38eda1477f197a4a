// Loop: the one thread a controller-style component runs on, with its inbox and its timers.
// Other threads (informer watches, write completions, Clock timers) hand work to it with Post;
// timers of any number share one heap and one Clock timer armed for the earliest deadline.
//
//   Loop loop(clock, Loop::Options{.name = "kt-kubelets", .poll = [&] { return
//   pods.DispatchPending(); }}); loop.At(clock->Now() + std::chrono::seconds(10), [&] { Renew();
//   }); loop.Start();                            // or, in tests: loop.RunPending();
//   client->Patch(..., [&loop](auto r) { loop.Post([r] { ... }); });
//
// Everything Posted, every due timer and everything `poll` returns runs on the loop's thread
// (Start), or, with manual mode, wherever RunPending is called — tests and simulations then
// step it on a simulated clock, deterministically: timers run in deadline order, ties in the
// order they were made.
//
// Thread safety: Post, Wake and Stop are thread-safe. At, Cancel, Pending and RunPending belong
// to the loop's thread (or the manual driver).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "client/clock.h"

namespace kt::client {

class Loop {
 public:
  struct Options {
    // The thread's name (at most 15 characters).
    std::string name = "kt-loop";
    // Called at the start of every round, on the loop's thread: e.g. informers' DispatchPending.
    // Returns how much it did.
    std::function<size_t()> poll;
  };
  using TimerHandle = uint64_t;

  Loop(Clock* clock, Options options);
  ~Loop();  // stops
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  // Runs the loop on its own thread.
  void Start();
  // Ends the thread (if any); later Posts are dropped.
  void Stop();

  // Runs `fn` on the loop's thread.
  void Post(std::function<void()> fn);
  // Makes the loop run a round soon (e.g. an informer has changes for `poll`).
  void Wake();

  // Runs `fn` on the loop's thread at `when` (at the next round if it has passed).
  TimerHandle At(Time when, std::function<void()> fn);
  // Cancels a timer that has not run; false if it ran or was cancelled.
  bool Cancel(TimerHandle handle);
  size_t PendingTimers() const { return timers_.size(); }

  // Manual mode: runs rounds until nothing is left to do now; returns how much was done.
  size_t RunPending();

  Clock* clock() const { return clock_; }

 private:
  struct Due {
    Time when;
    TimerHandle handle;
    bool operator>(const Due& o) const {
      return when != o.when ? when > o.when : handle > o.handle;
    }
  };
  // Shared with callbacks from other threads, so that a late one finds it rather than a freed
  // loop.
  struct Inbox {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> items;  // guarded by mu
    bool woken = false;                       // guarded by mu
    bool stopping = false;                    // guarded by mu
    bool due = false;                         // the clock timer fired; guarded by mu
    uint64_t fired_generation = 0;            // the latest that fired; guarded by mu
  };

  void Run();
  size_t Round();
  size_t FireDue();
  void Arm();

  Clock* clock_;
  Options options_;
  std::shared_ptr<Inbox> inbox_;
  // Loop-thread state.
  std::vector<Due> heap_;  // min-heap; entries whose handle is not in timers_ are cancelled
  std::unordered_map<TimerHandle, std::function<void()>> timers_;
  TimerHandle next_handle_ = 1;
  TimerId clock_timer_ = 0;
  uint64_t arm_generation_ = 0;  // of clock_timer_
  Time armed_for_{};
  std::thread thread_;
};

}  // namespace kt::client
