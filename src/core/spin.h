// Spin-then-park: a thread about to sleep on a condition variable first watches for its wake-up
// on the CPU for a few microseconds. Under a steady load the next item comes that soon, and
// catching it this way saves the futex sleep and wake-up, with two context switches, that
// each hand-off would otherwise cost on both sides.
//
//   if (!ready() && !core::SpinUntil([&] { return seq.load() != seen; })) cv.wait(lock, ready);
//
// Call it with no lock held that the waker needs.
#pragma once

#include <chrono>

namespace kt::core {

inline constexpr std::chrono::microseconds kDefaultSpin{20};

// Polls `done` until it returns true (then true) or `budget` passes (then false).
template <class Done>
bool SpinUntil(Done done, std::chrono::microseconds budget = kDefaultSpin) {
  const auto until = std::chrono::steady_clock::now() + budget;
  for (int i = 0;; ++i) {
    if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= until) return false;
  }
}

}  // namespace kt::core
