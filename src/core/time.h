// Timestamps as upstream writes them: metav1.Time (RFC 3339, whole seconds, UTC) and
// metav1.MicroTime (RFC 3339 with six fraction digits). Parsing is api::ParseTimestamp.
//
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <string>

namespace kt {

// Wall time in integer nanoseconds (UTC), the time of client::Clock.
using WallTime = std::chrono::sys_time<std::chrono::nanoseconds>;

// "2026-01-02T03:04:05Z" (fractions dropped, as metav1.Time).
std::string FormatRfc3339(WallTime t);
// "2026-01-02T03:04:05.123456Z" (metav1.MicroTime).
std::string FormatRfc3339Micro(WallTime t);

// System time now.
inline WallTime WallNow() {
  return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
}

}  // namespace kt
