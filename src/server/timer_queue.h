// TimerQueue: one thread runs every timed callback of the API server (watch timeouts and
// bookmarks), so there is no thread per timer.
//
// Thread safety: all methods are thread-safe. Callbacks run on the queue's thread, one at a
// time, and must not block.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace kt::server {

class TimerQueue {
 public:
  using Clock = std::chrono::steady_clock;

  TimerQueue();
  ~TimerQueue();  // cancels pending timers and joins the thread
  TimerQueue(const TimerQueue&) = delete;
  TimerQueue& operator=(const TimerQueue&) = delete;

  // Runs `fn` at `when` unless cancelled first; returns an id for Cancel.
  uint64_t At(Clock::time_point when, std::function<void()> fn);
  uint64_t After(Clock::duration delay, std::function<void()> fn) {
    return At(Clock::now() + delay, std::move(fn));
  }
  // Cancels a pending timer; does nothing if it already ran or is running.
  void Cancel(uint64_t id);

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::multimap<Clock::time_point, std::pair<uint64_t, std::function<void()>>> timers_;  // mu_
  std::map<uint64_t, Clock::time_point> by_id_;  // guarded by mu_
  uint64_t next_id_ = 1;                         // guarded by mu_
  bool stop_ = false;                            // guarded by mu_
  std::thread thread_;
};

}  // namespace kt::server
