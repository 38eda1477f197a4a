// Clock: the one source of time for the scheduler, the controllers and the simulated kubelets
// (DESIGN.md: "Time goes through one Clock interface"). Every timer, backoff, rate limiter and
// timestamp of those components asks a Clock, so that the same code runs on the real clock in
// `kubetaint serve` and on a simulated clock in tests and simulations.
//
//   std::unique_ptr<Clock> clock = NewRealClock();
//   TimerId t = clock->AfterFunc(std::chrono::seconds(1), [] { /* post work */ });
//   clock->Cancel(t);
//
//   SimulatedClock sim(SimulatedClock::kDefaultStart);
//   sim.AfterFunc(std::chrono::seconds(5), fire);
//   sim.Advance(std::chrono::seconds(5));  // runs `fire` here, on this thread
//
// Time is integer nanoseconds of wall time (UTC), so "every 10 s" is exact on the simulated
// clock. The real clock fires timers by the monotonic clock: a wall-clock step moves Now() but
// not when a pending timer fires.
//
// Timer callbacks must be quick and must not block: post real work to your own executor. They
// may add and cancel timers. A callback runs at most once; Cancel before it starts prevents it.
//
// Thread safety: every method is thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/time.h"

namespace kt::client {

using Duration = std::chrono::nanoseconds;
using Time = WallTime;  // core/time.h formats it for the API
using TimerId = uint64_t;

class Clock {
 public:
  virtual ~Clock() = default;

  // Wall time now (UTC).
  virtual Time Now() const = 0;
  // Runs `fn` once, `delay` from now (at once, on the clock's timer thread, when delay <= 0).
  virtual TimerId AfterFunc(Duration delay, std::function<void()> fn) = 0;
  // Runs `fn` once at `when` (wall time).
  virtual TimerId At(Time when, std::function<void()> fn) = 0;
  // Cancels a timer; true if it had not started (it will not run), false if it ran, is running
  // or was cancelled already.
  virtual bool Cancel(TimerId id) = 0;

  // Time elapsed since `t` by this clock.
  Duration Since(Time t) const { return Now() - t; }
};

// The real clock: system time, and one thread that fires every timer.
std::unique_ptr<Clock> NewRealClock();

// A deterministic clock for tests and simulations. Time stands still until Advance, AdvanceTo
// or Step moves it; timers then fire on the calling thread, in deadline order, ties in the
// order they were created. A timer that a callback adds and that falls due within the same
// advance fires within it too, after the timers already due at that instant (it was created
// later). Now() during a callback is that timer's deadline.
class SimulatedClock : public Clock {
 public:
  // 2026-01-01T00:00:00Z.
  static constexpr Time kDefaultStart = Time(std::chrono::seconds(1767225600));

  explicit SimulatedClock(Time start = kDefaultStart);

  Time Now() const override;
  TimerId AfterFunc(Duration delay, std::function<void()> fn) override;
  TimerId At(Time when, std::function<void()> fn) override;
  bool Cancel(TimerId id) override;

  // Moves time forward by `d`, firing every timer due on the way. Returns how many fired.
  size_t Advance(Duration d);
  // Moves time to `t` (never backwards), firing every timer due on the way.
  size_t AdvanceTo(Time t);
  // Fires the timers due now (deadline <= Now()) without moving time.
  size_t RunDue() { return AdvanceTo(Now()); }
  // Moves time to the next timer's deadline and fires every timer due then; false if there is
  // no timer.
  bool Step();

  size_t PendingTimers() const;
  // The earliest pending deadline, or false when there is none.
  bool NextDeadline(Time* out) const;

 private:
  struct Key {
    Time when;
    uint64_t seq;
    bool operator<(const Key& o) const { return when != o.when ? when < o.when : seq < o.seq; }
  };

  mutable std::mutex mu_;
  Time now_;                                     // guarded by mu_
  uint64_t next_seq_ = 1;                        // guarded by mu_
  std::map<Key, std::function<void()>> timers_;  // guarded by mu_
  std::unordered_map<TimerId, Key> by_id_;       // guarded by mu_
  std::mutex advance_mu_;                        // one Advance at a time, so timers fire in order
};

}  // namespace kt::client
