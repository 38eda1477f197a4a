#include "core/time.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <ctime>
#include <random>
#include <string>

namespace kt {
namespace {

// What the C library writes for the whole second of `seconds` since 1970 (UTC).
std::string Reference(int64_t seconds) {
  std::time_t tt = seconds;
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  const size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return std::string(buf, n);
}

WallTime At(int64_t seconds, int64_t nanos = 0) {
  return WallTime(std::chrono::seconds(seconds)) + std::chrono::nanoseconds(nanos);
}

TEST(TimeTest, FormatsKnownInstants) {
  EXPECT_EQ(FormatRfc3339(At(0)), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(At(951782400)), "2000-02-29T00:00:00Z");   // a leap day
  EXPECT_EQ(FormatRfc3339(At(4107542400)), "2100-03-01T00:00:00Z");  // 2100 is no leap year
  EXPECT_EQ(FormatRfc3339(At(1767225599)), "2025-12-31T23:59:59Z");
  EXPECT_EQ(FormatRfc3339(At(-1)), "1969-12-31T23:59:59Z");
  // The last second that nanoseconds since 1970 in 64 bits hold.
  EXPECT_EQ(FormatRfc3339(WallTime::max()), "2262-04-11T23:47:16Z");
  // The fraction is cut, never rounded up into the next second.
  EXPECT_EQ(FormatRfc3339(At(59, 999'999'999)), "1970-01-01T00:00:59Z");
  EXPECT_EQ(FormatRfc3339Micro(At(59, 999'999'999)), "1970-01-01T00:00:59.999999Z");
  EXPECT_EQ(FormatRfc3339Micro(At(-1, 500'000)), "1969-12-31T23:59:59.000500Z");
  EXPECT_EQ(FormatRfc3339Micro(At(1767225599, 42'000)), "2025-12-31T23:59:59.000042Z");
}

TEST(TimeTest, AgreesWithTheCLibraryOverEveryRepresentableYear) {
  std::mt19937_64 rng(20261125);
  // All whole seconds that WallTime holds (1677 to 2262), and a dense stretch around the present.
  std::uniform_int_distribution<int64_t> any(-9223372035, 9223372035);
  std::uniform_int_distribution<int64_t> recent(946684800, 4102444800);
  for (int i = 0; i < 200000; ++i) {
    const int64_t s = (i % 2 == 0 ? any : recent)(rng);
    ASSERT_EQ(FormatRfc3339(At(s)), Reference(s) + "Z") << "at " << s << " s";
  }
  // Every day boundary of a leap-year cycle, from both sides.
  for (int64_t day = -800; day < 800; ++day) {
    for (const int64_t s : {day * 86400 - 1, day * 86400}) {
      ASSERT_EQ(FormatRfc3339(At(s)), Reference(s) + "Z") << "at " << s << " s";
    }
  }
}

}  // namespace
}  // namespace kt
