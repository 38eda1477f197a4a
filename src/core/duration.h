// Go's time.ParseDuration and Duration.String, for the duration flags upstream components take
// (--node-monitor-grace-period=50s, --node-status-update-frequency=10s).
//
//   Result<std::chrono::nanoseconds> d = ParseGoDuration("1m30s");   // 90 s
//   FormatGoDuration(std::chrono::seconds(90));                       // "1m30s"
//
// Errors carry Go's messages: `time: invalid duration "x"`, `time: missing unit in duration
// "5"`, `time: unknown unit "x" in duration "5x"`.
//
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "core/status.h"

namespace kt {

Result<std::chrono::nanoseconds> ParseGoDuration(std::string_view text);
std::string FormatGoDuration(std::chrono::nanoseconds d);

}  // namespace kt
