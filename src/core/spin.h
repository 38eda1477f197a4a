// Spin-then-park: a thread about to sleep on a condition variable first watches for its wake-up
// on the CPU for a few microseconds. Under a steady load the next item comes that soon, and
// catching it this way saves the futex sleep and wake-up, with two context switches, that
// each hand-off would otherwise cost on both sides.
//
//   if (!ready() && !core::SpinUntil([&] { return seq.load() != seen; })) cv.wait(lock, ready);
//
// Call it with no lock held that the waker needs.
//
// Spinning pays only when a core would otherwise sit idle. A pipeline stage (the store's watch
// thread, the scheduler, its binder, the HTTP workers) has more busy threads than a small
// machine has cores, and there the spinning thread takes the core from the very thread it waits
// for: on 2 cores, with no spinning, the in-process scheduler ran about 10 % faster and pods
// created over HTTP 3-20 % faster. So the budget is zero below kMinCoresToSpin cores.
#pragma once

#include <chrono>
#include <thread>

namespace kt::core {

inline constexpr std::chrono::microseconds kSpinOnManyCores{20};
inline constexpr unsigned kMinCoresToSpin = 8;

// The default budget on this machine: kSpinOnManyCores with kMinCoresToSpin cores or more, else
// none.
inline std::chrono::microseconds DefaultSpin() {
  static const std::chrono::microseconds budget =
      std::thread::hardware_concurrency() >= kMinCoresToSpin ? kSpinOnManyCores
                                                             : std::chrono::microseconds(0);
  return budget;
}

// Polls `done` until it returns true (then true) or `budget` passes (then false). With a zero
// budget, asks once.
template <class Done>
bool SpinUntil(Done done, std::chrono::microseconds budget = DefaultSpin()) {
  if (budget.count() <= 0) return done();
  const auto until = std::chrono::steady_clock::now() + budget;
  for (int i = 0;; ++i) {
    if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= until) return false;
  }
}

// Lock acquisition for critical sections of a microsecond or two (the store index's writes and
// its watch thread's reads): try `tries` times, pausing between, before blocking. Unlike a
// hand-off, the holder of such a lock is almost always running, on another core, and about to
// let go, so a short spin saves the futex sleep and wake-up even on 2 cores. `lock` is a
// deferred std::unique_lock or std::shared_lock.
inline constexpr int kLockSpinTries = 64;

template <class Lock>
void LockSpinning(Lock& lock, int tries = kLockSpinTries) {
  for (int i = 0; i < tries; ++i) {
    if (lock.try_lock()) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  lock.lock();
}

}  // namespace kt::core
