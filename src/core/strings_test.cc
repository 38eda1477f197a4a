// Go's parsers as kube-controller-manager's flags use them (time.ParseDuration through pflag's
// DurationVar, strconv.ParseFloat through Float32Var); cases from Go's time_test.go and
// strconv's atof_test.go.
#include "core/strings.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

namespace kt {
namespace {

using std::chrono::nanoseconds;

struct DurationRow {
  const char* in;
  int64_t ns;
};

TEST(ParseGoDurationTest, AcceptsWhatGoAccepts) {
  const DurationRow rows[] = {
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
      {"1.0s", 1'000'000'000},
      {"1.00s", 1'000'000'000},
      {"1.004s", 1'004'000'000},
      {"1.0040s", 1'004'000'000},
      {"100.00100s", 100'001'000'000},
      {"10ns", 10},
      {"11us", 11'000},
      {"12\u00b5s", 12'000},  // U+00B5
      {"12\u03bcs", 12'000},  // U+03BC
      {"13ms", 13'000'000},
      {"14s", 14'000'000'000},
      {"15m", 900'000'000'000},
      {"16h", 57'600'000'000'000},
      {"1m", 60'000'000'000},
      {"500ms", 500'000'000},
      {"3h30m", 12'600'000'000'000},
      {"10.5s4m", 250'500'000'000},
      {"-2m3.4s", -123'400'000'000},
      {"1h2m3s4ms5us6ns", 3'723'004'005'006},
      {"39h9m14.425s", 140'954'425'000'000},
      {"52763797000ns", 52'763'797'000},
      {"0.3333333333333333333h", 1'200'000'000'000},
      {"9007199254740993ns", 9'007'199'254'740'993},
      {"9223372036854775807ns", INT64_MAX},
      {"9223372036854775.807us", INT64_MAX},
      {"-9223372036854775808ns", INT64_MIN},
      {"0.100000000000000000000h", 360'000'000'000},
      {"0.830103483285477580700h", 2'988'372'539'827},
  };
  for (const DurationRow& row : rows) {
    nanoseconds d(-1);
    std::string error;
    EXPECT_TRUE(ParseGoDuration(row.in, &d, &error)) << row.in << ": " << error;
    EXPECT_EQ(d.count(), row.ns) << row.in;
  }
}

TEST(ParseGoDurationTest, RefusesWithGosMessages) {
  const std::pair<const char*, const char*> rows[] = {
      {"", R"(time: invalid duration "")"},
      {"3", R"(time: missing unit in duration "3")"},
      {"-", R"(time: invalid duration "-")"},
      {"s", R"(time: invalid duration "s")"},
      {".", R"(time: invalid duration ".")"},
      {"-.", R"(time: invalid duration "-.")"},
      {".s", R"(time: invalid duration ".s")"},
      {"+.s", R"(time: invalid duration "+.s")"},
      {"1d", R"(time: unknown unit "d" in duration "1d")"},
      {"5 s", R"(time: unknown unit " s" in duration "5 s")"},
      {"abc", R"(time: invalid duration "abc")"},
      {"9223372036854775808ns", R"(time: invalid duration "9223372036854775808ns")"},
      {"9223372036854775.808us", R"(time: invalid duration "9223372036854775.808us")"},
      {"9223372036854ms775us808ns", R"(time: invalid duration "9223372036854ms775us808ns")"},
      {"-9223372036854775809ns", R"(time: invalid duration "-9223372036854775809ns")"},
  };
  for (const auto& [in, message] : rows) {
    nanoseconds d(42);
    std::string error;
    EXPECT_FALSE(ParseGoDuration(in, &d, &error)) << in;
    EXPECT_EQ(error, message) << in;
    EXPECT_EQ(d.count(), 42) << in;
  }
}

TEST(ParseFloat32Test, ReadsAsPflagsFloat32Var) {
  float f = 0;
  EXPECT_TRUE(ParseFloat32("0.1", &f));
  EXPECT_EQ(f, 0.1f);
  EXPECT_TRUE(ParseFloat32("0.55", &f));
  EXPECT_EQ(f, 0.55f);
  EXPECT_TRUE(ParseFloat32("1e-2", &f));
  EXPECT_EQ(f, 0.01f);
  EXPECT_TRUE(ParseFloat32("-3", &f));
  EXPECT_EQ(f, -3.0f);
  EXPECT_TRUE(ParseFloat32(".5", &f));
  EXPECT_EQ(f, 0.5f);
  EXPECT_TRUE(ParseFloat32("+Inf", &f));
  EXPECT_TRUE(std::isinf(f));
  bool range = false;
  EXPECT_FALSE(ParseFloat32("1e39", &f, &range));
  EXPECT_TRUE(range);
  EXPECT_FALSE(ParseFloat32("1e", &f, &range));
  EXPECT_FALSE(range);
  f = 7;
  for (const char* bad : {"", " 1", "1 ", "abc", "0.1x", "1e", "--1", "1e39", "-1e39"}) {
    EXPECT_FALSE(ParseFloat32(bad, &f)) << bad;
    EXPECT_EQ(f, 7.0f) << bad;
  }
}

TEST(AppendJsonStringTest, QuotesAndEscapesWhatJsonRequires) {
  std::string out = "x=";
  AppendJsonString(out,
                   "a\"b\\c\nd\te\x01"
                   "f\u00e9");
  EXPECT_EQ(out, "x=\"a\\\"b\\\\c\\nd\\te\\u0001f\u00e9\"");
  out.clear();
  AppendJsonString(out, "");
  EXPECT_EQ(out, "\"\"");
}

TEST(EqualFoldAsciiTest, IgnoresAsciiCaseOnly) {
  EXPECT_TRUE(EqualFoldAscii("Bearer", "bEARER"));
  EXPECT_TRUE(EqualFoldAscii("", ""));
  EXPECT_FALSE(EqualFoldAscii("bearer", "bearer "));
  EXPECT_FALSE(EqualFoldAscii("a-z", "A_Z"));
  // '@' and '[' sit next to 'A' and 'Z': not letters, not folded.
  EXPECT_FALSE(EqualFoldAscii("@[", "`{"));
}

TEST(EncodeBase64Test, MatchesRfc4648Vectors) {
  // RFC 4648 §10's test vectors, padding included.
  const std::pair<std::string_view, std::string_view> rows[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [in, want] : rows) EXPECT_EQ(EncodeBase64(in), want) << in;
  EXPECT_EQ(EncodeBase64(std::string_view("\xff\xfe\x00", 3)), "//4A");
}

TEST(HexTest, AgreesWithPrintf) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> values = {0,
                                  1,
                                  0xf,
                                  0x10,
                                  0xff,
                                  0xffffffff,
                                  0x100000000ULL,
                                  0x7fffffffffffffffULL,
                                  0xffffffffffffffffULL};
  for (int i = 0; i < 10000; ++i) values.push_back(rng() >> (rng() % 64));
  for (uint64_t v : values) {
    char want[40];
    char got[20];
    std::snprintf(want, sizeof want, "%llx", static_cast<unsigned long long>(v));
    ASSERT_EQ(std::string(got, PutHexMinimal(got, v)), want) << v;
    std::snprintf(want, sizeof want, "%012llx",
                  static_cast<unsigned long long>(v & 0xffffffffffffULL));
    ASSERT_EQ(std::string(got, PutHex(got, v, 12)), want) << v;
  }
}

}  // namespace
}  // namespace kt
