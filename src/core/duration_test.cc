#include "core/duration.h"

#include <gtest/gtest.h>

namespace kt {
namespace {

using std::chrono::nanoseconds;

// Go's time.ParseDuration cases (time_test.go parseDurationTests), a selection.
TEST(GoDurationTest, ParsesAsGo) {
  struct Case {
    const char* in;
    int64_t ns;
  } cases[] = {
      {"0", 0},
      {"5s", 5'000'000'000},
      {"30s", 30'000'000'000},
      {"1478s", 1'478'000'000'000},
      {"-5s", -5'000'000'000},
      {"+5s", 5'000'000'000},
      {"-0", 0},
      {"+0", 0},
      {"5.0s", 5'000'000'000},
      {"5.6s", 5'600'000'000},
      {"5.s", 5'000'000'000},
      {".5s", 500'000'000},
      {"1.004s", 1'004'000'000},
      {"10ns", 10},
      {"11us", 11'000},
      {"12\xC2\xB5s", 12'000},
      {"13ms", 13'000'000},
      {"15m", 900'000'000'000},
      {"16h", 57'600'000'000'000},
      {"3h30m", 12'600'000'000'000},
      {"1m30s", 90'000'000'000},
      {"39h9m14.425s", 140'954'425'000'000},
      {"9223372036854775807ns", INT64_MAX},
      {"-9223372036854775808ns", INT64_MIN},
  };
  for (const Case& c : cases) {
    Result<nanoseconds> d = ParseGoDuration(c.in);
    ASSERT_TRUE(d) << c.in << ": " << d.error().message();
    EXPECT_EQ(d->count(), c.ns) << c.in;
  }
}

TEST(GoDurationTest, ErrorsAsGo) {
  struct Case {
    const char* in;
    const char* message;
  } cases[] = {
      {"", "time: invalid duration \"\""},
      {"3", "time: missing unit in duration \"3\""},
      {"-", "time: invalid duration \"-\""},
      {"s", "time: invalid duration \"s\""},
      {".", "time: invalid duration \".\""},
      {"-.", "time: invalid duration \"-.\""},
      {".s", "time: invalid duration \".s\""},
      {"3000000h", "time: invalid duration \"3000000h\""},
      {"9223372036854775808ns", "time: invalid duration \"9223372036854775808ns\""},
      {"5x", "time: unknown unit \"x\" in duration \"5x\""},
  };
  for (const Case& c : cases) {
    Result<nanoseconds> d = ParseGoDuration(c.in);
    ASSERT_FALSE(d) << c.in;
    EXPECT_EQ(d.error().message(), c.message) << c.in;
  }
}

TEST(GoDurationTest, FormatsAsGo) {
  EXPECT_EQ(FormatGoDuration(nanoseconds(0)), "0s");
  EXPECT_EQ(FormatGoDuration(nanoseconds(1)), "1ns");
  EXPECT_EQ(FormatGoDuration(nanoseconds(1100)), "1.1\xC2\xB5s");
  EXPECT_EQ(FormatGoDuration(std::chrono::milliseconds(2200)), "2.2s");
  EXPECT_EQ(FormatGoDuration(std::chrono::milliseconds(500)), "500ms");
  EXPECT_EQ(FormatGoDuration(std::chrono::seconds(50)), "50s");
  EXPECT_EQ(FormatGoDuration(std::chrono::minutes(1)), "1m0s");
  EXPECT_EQ(FormatGoDuration(std::chrono::minutes(5)), "5m0s");
  EXPECT_EQ(FormatGoDuration(std::chrono::seconds(3 * 3600 + 30 * 60)), "3h30m0s");
  EXPECT_EQ(FormatGoDuration(-std::chrono::seconds(5)), "-5s");
}

}  // namespace
}  // namespace kt
