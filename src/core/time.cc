#include "core/time.h"

#include <cstdio>

namespace kt {

namespace {

// Writes `value` as `width` decimal digits, zero-padded.
char* PutDigits(char* out, unsigned value, int width) {
  for (int i = width - 1; i >= 0; --i) {
    out[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  return out + width;
}

// Writes "YYYY-MM-DDTHH:MM:SS" of the whole second at or before `t`; returns the fraction.
// Timestamps are formatted for every write and event: the civil date is computed here rather
// than through gmtime_r and strftime, which cost several times as much. (Nanoseconds since 1970
// in 64 bits span the years 1677 to 2262: always four digits.)
std::chrono::nanoseconds FormatSeconds(WallTime t, char (&buf)[48], size_t* len) {
  const auto secs = std::chrono::floor<std::chrono::seconds>(t);
  const auto day = std::chrono::floor<std::chrono::days>(secs);
  const std::chrono::year_month_day date{day};
  const std::chrono::hh_mm_ss<std::chrono::seconds> time{secs - day};
  char* out = PutDigits(buf, static_cast<unsigned>(static_cast<int>(date.year())), 4);
  *out++ = '-';
  out = PutDigits(out, static_cast<unsigned>(date.month()), 2);
  *out++ = '-';
  out = PutDigits(out, static_cast<unsigned>(date.day()), 2);
  *out++ = 'T';
  out = PutDigits(out, static_cast<unsigned>(time.hours().count()), 2);
  *out++ = ':';
  out = PutDigits(out, static_cast<unsigned>(time.minutes().count()), 2);
  *out++ = ':';
  out = PutDigits(out, static_cast<unsigned>(time.seconds().count()), 2);
  *out = '\0';
  *len = static_cast<size_t>(out - buf);
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
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(fraction).count();
  buf[n++] = '.';
  char* end = PutDigits(buf + n, static_cast<unsigned>(micros), 6);
  *end++ = 'Z';
  return std::string(buf, end);
}

}  // namespace kt
