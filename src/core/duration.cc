#include "core/duration.h"

#include <cstdint>
#include <cstdio>

namespace kt {

namespace {

Status Invalid(std::string_view text) {
  return BadRequest("time: invalid duration \"" + std::string(text) + "\"");
}

}  // namespace

Result<std::chrono::nanoseconds> ParseGoDuration(std::string_view text) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::chrono::nanoseconds(0);
  if (s.empty()) return Err(Invalid(text));
  // Whole nanoseconds, as Go's, with its overflow limit (about 290 years).
  unsigned __int128 total = 0;
  const unsigned __int128 kMax = static_cast<unsigned __int128>(INT64_MAX) + (negative ? 1 : 0);
  while (!s.empty()) {
    uint64_t whole = 0;
    size_t digits = 0;
    while (!s.empty() && s[0] >= '0' && s[0] <= '9') {
      if (whole > (UINT64_MAX - 9) / 10) return Err(Invalid(text));
      whole = whole * 10 + static_cast<uint64_t>(s[0] - '0');
      s.remove_prefix(1);
      ++digits;
    }
    uint64_t frac = 0, scale = 1;
    size_t frac_digits = 0;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      while (!s.empty() && s[0] >= '0' && s[0] <= '9') {
        if (scale < 1'000'000'000'000'000'000ull) {
          frac = frac * 10 + static_cast<uint64_t>(s[0] - '0');
          scale *= 10;
        }
        s.remove_prefix(1);
        ++frac_digits;
      }
    }
    if (digits == 0 && frac_digits == 0) return Err(Invalid(text));
    size_t u = 0;
    while (u < s.size() && s[u] != '.' && (s[u] < '0' || s[u] > '9')) ++u;
    const std::string_view unit = s.substr(0, u);
    s.remove_prefix(u);
    uint64_t per = 0;
    if (unit.empty()) {
      return Err(BadRequest("time: missing unit in duration \"" + std::string(text) + "\""));
    } else if (unit == "ns") {
      per = 1;
    } else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") {
      per = 1'000;
    } else if (unit == "ms") {
      per = 1'000'000;
    } else if (unit == "s") {
      per = 1'000'000'000;
    } else if (unit == "m") {
      per = 60'000'000'000;
    } else if (unit == "h") {
      per = 3'600'000'000'000;
    } else {
      return Err(BadRequest("time: unknown unit \"" + std::string(unit) + "\" in duration \"" +
                            std::string(text) + "\""));
    }
    total += static_cast<unsigned __int128>(whole) * per;
    total += static_cast<unsigned __int128>(frac) * per / scale;
    if (total > kMax) return Err(Invalid(text));
  }
  const int64_t ns = negative ? -static_cast<int64_t>(total - 1) - 1 : static_cast<int64_t>(total);
  return std::chrono::nanoseconds(ns);
}

std::string FormatGoDuration(std::chrono::nanoseconds d) {
  int64_t ns = d.count();
  if (ns == 0) return "0s";
  const char* sign = ns < 0 ? "-" : "";
  uint64_t u = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  char buf[64];
  if (u < 1'000'000'000) {
    // Below a second: the largest of ns, µs, ms that keeps a whole part.
    const char* unit = "ns";
    uint64_t per = 1;
    if (u >= 1'000'000) {
      unit = "ms";
      per = 1'000'000;
    } else if (u >= 1'000) {
      unit = "\xC2\xB5s";
      per = 1'000;
    }
    std::string frac;
    if (per > 1 && u % per != 0) {
      std::snprintf(buf, sizeof(buf), "%0*llu", per == 1'000 ? 3 : 6,
                    static_cast<unsigned long long>(u % per));
      frac = buf;
      while (!frac.empty() && frac.back() == '0') frac.pop_back();
    }
    std::string out = sign;
    out.append(std::to_string(u / per));
    if (!frac.empty()) out.append(".").append(frac);
    return out.append(unit);
  }
  const uint64_t h = u / 3'600'000'000'000;
  u %= 3'600'000'000'000;
  const uint64_t m = u / 60'000'000'000;
  u %= 60'000'000'000;
  std::string out = sign;
  if (h > 0) out += std::to_string(h) + "h";
  if (h > 0 || m > 0) out += std::to_string(m) + "m";
  std::string frac;
  if (u % 1'000'000'000 != 0) {
    std::snprintf(buf, sizeof(buf), "%09llu", static_cast<unsigned long long>(u % 1'000'000'000));
    frac = buf;
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
  }
  out.append(std::to_string(u / 1'000'000'000));
  if (!frac.empty()) out.append(".").append(frac);
  return out.append("s");
}

}  // namespace kt
