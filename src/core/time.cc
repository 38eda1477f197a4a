#include "core/time.h"

#include <cstdio>
#include <ctime>

namespace kt {

namespace {

// Writes "YYYY-MM-DDTHH:MM:SS" of the whole second at or before `t`; returns the fraction.
std::chrono::nanoseconds FormatSeconds(WallTime t, char (&buf)[48], size_t* len) {
  const auto secs = std::chrono::floor<std::chrono::seconds>(t);
  std::time_t tt = secs.time_since_epoch().count();
  std::tm tm{};
  gmtime_r(&tt, &tm);
  *len = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return t - secs;
}

}  // namespace

std::string FormatRfc3339(WallTime t) {
  char buf[48];
  size_t n = 0;
  FormatSeconds(t, buf, &n);
  std::string out(buf, n);
  out += 'Z';
  return out;
}

std::string FormatRfc3339Micro(WallTime t) {
  char buf[48];
  size_t n = 0;
  const auto fraction = FormatSeconds(t, buf, &n);
  std::snprintf(buf + n, sizeof(buf) - n, ".%06lldZ",
                static_cast<long long>(
                    std::chrono::duration_cast<std::chrono::microseconds>(fraction).count()));
  return buf;
}

}  // namespace kt
