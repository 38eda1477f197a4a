#include "api/quantity.h"

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace kt::api {
namespace {

using F = Quantity::Format;

// sign + s, built by appending (GCC 12 warns falsely on `"-" + std::string`).
std::string Signed(char sign, std::string_view s) {
  std::string out(1, sign);
  out += s;
  return out;
}

Quantity Q(std::string_view s) {
  Result<Quantity> q = Quantity::Parse(s);
  EXPECT_TRUE(q.has_value()) << s << ": " << (q ? "" : q.error().message());
  return q.value_or(Quantity());
}

struct ParseCase {
  const char* in;
  const char* canonical;
  F format;
};

// Inputs from upstream TestQuantityParse (apimachinery pkg/api/resource/quantity_test.go); the
// canonical strings are what upstream String() prints for the expected values there.
const ParseCase kParseCases[] = {
    {"0", "0", F::kDecimalSI},
    {"0n", "0", F::kDecimalSI},
    {"0u", "0", F::kDecimalSI},
    {"0m", "0", F::kDecimalSI},
    {"0Ki", "0", F::kBinarySI},
    {"0k", "0", F::kDecimalSI},
    {"0Mi", "0", F::kBinarySI},
    {"0M", "0", F::kDecimalSI},
    {"0Gi", "0", F::kBinarySI},
    {"0G", "0", F::kDecimalSI},
    {"0Ti", "0", F::kBinarySI},
    {"0T", "0", F::kDecimalSI},
    // Quantity-less numbers
    {"1", "1", F::kDecimalSI},
    // Binary suffixes
    {"1Ki", "1Ki", F::kBinarySI},
    {"8Ki", "8Ki", F::kBinarySI},
    {"7Mi", "7Mi", F::kBinarySI},
    {"6Gi", "6Gi", F::kBinarySI},
    {"5Ti", "5Ti", F::kBinarySI},
    {"4Pi", "4Pi", F::kBinarySI},
    {"3Ei", "3Ei", F::kBinarySI},
    {"10Ti", "10Ti", F::kBinarySI},
    {"100Ti", "100Ti", F::kBinarySI},
    // Decimal suffixes
    {"5n", "5n", F::kDecimalSI},
    {"4u", "4u", F::kDecimalSI},
    {"3m", "3m", F::kDecimalSI},
    {"9", "9", F::kDecimalSI},
    {"8k", "8k", F::kDecimalSI},
    {"50k", "50k", F::kDecimalSI},
    {"7M", "7M", F::kDecimalSI},
    {"6G", "6G", F::kDecimalSI},
    {"5T", "5T", F::kDecimalSI},
    {"40T", "40T", F::kDecimalSI},
    {"300T", "300T", F::kDecimalSI},
    {"2P", "2P", F::kDecimalSI},
    {"1E", "1E", F::kDecimalSI},
    // Decimal exponents
    {"1E-3", "1e-3", F::kDecimalExponent},
    {"1e3", "1e3", F::kDecimalExponent},
    {"1E6", "1e6", F::kDecimalExponent},
    {"1e9", "1e9", F::kDecimalExponent},
    {"1E12", "1e12", F::kDecimalExponent},
    {"1e15", "1e15", F::kDecimalExponent},
    {"1E18", "1e18", F::kDecimalExponent},
    // Nonstandard but still parsable
    {"1e14", "100e12", F::kDecimalExponent},
    {"1e13", "10e12", F::kDecimalExponent},
    {"100.035k", "100035", F::kDecimalSI},
    // Things that look like floating point
    {"0.001", "1m", F::kDecimalSI},
    {"0.0005k", "500m", F::kDecimalSI},
    {"0.005", "5m", F::kDecimalSI},
    {"0.05", "50m", F::kDecimalSI},
    {"0.5", "500m", F::kDecimalSI},
    {"0.00050k", "500m", F::kDecimalSI},
    {"0.00500", "5m", F::kDecimalSI},
    {"0.05000", "50m", F::kDecimalSI},
    {"0.50000", "500m", F::kDecimalSI},
    {"0.5e0", "500e-3", F::kDecimalExponent},
    {"0.5e-1", "50e-3", F::kDecimalExponent},
    {"0.5e-2", "5e-3", F::kDecimalExponent},
    {"10.035M", "10035k", F::kDecimalSI},
    {"1.2e3", "1200", F::kDecimalExponent},
    {"1.3E+6", "1300e3", F::kDecimalExponent},
    {"1.40e9", "1400e6", F::kDecimalExponent},
    {"1.53E12", "1530e9", F::kDecimalExponent},
    {"1.6e15", "1600e12", F::kDecimalExponent},
    {"1.7E18", "1700e15", F::kDecimalExponent},
    {"9.01", "9010m", F::kDecimalSI},
    {"8.1k", "8100", F::kDecimalSI},
    {"7.123456M", "7123456", F::kDecimalSI},
    {"6.987654321G", "6987654321", F::kDecimalSI},
    {"5.444T", "5444G", F::kDecimalSI},
    {"40.1T", "40100G", F::kDecimalSI},
    {"300.2T", "300200G", F::kDecimalSI},
    {"2.5P", "2500T", F::kDecimalSI},
    {"1.01E", "1010P", F::kDecimalSI},
    // Things that saturate or round
    {"3.001n", "4n", F::kDecimalSI},
    {"1.1E-9", "2e-9", F::kDecimalExponent},
    {"0.0000000001", "1n", F::kDecimalSI},
    {"0.0000000005", "1n", F::kDecimalSI},
    {"0.00000000050", "1n", F::kDecimalSI},
    {"0.5e-9", "1e-9", F::kDecimalExponent},
    {"0.9n", "1n", F::kDecimalSI},
    {"0.00000012345", "124n", F::kDecimalSI},
    {"0.00000012354", "124n", F::kDecimalSI},
    {"9Ei", "9223372036854775807", F::kBinarySI},
    {"9223372036854775807Ki", "9223372036854775807", F::kBinarySI},
    {"12E", "12E", F::kDecimalSI},
    // Fractional binary quantities
    {"100.035Ki", "102435840m", F::kBinarySI},
    {"0.5Mi", "512Ki", F::kBinarySI},
    {"0.05Gi", "53687091200m", F::kBinarySI},
    {"0.025Ti", "27487790694400m", F::kBinarySI},
    // Things written by trolls
    {"0.000000000001Ki", "2n", F::kDecimalSI},  // rounds up, changes format
    {".001", "1m", F::kDecimalSI},
    {".0001k", "100m", F::kDecimalSI},
    {"1.", "1", F::kDecimalSI},
    {"1.G", "1G", F::kDecimalSI},
    // Upstream TestQuantityParseEmit
    {"1024Mi", "1Gi", F::kBinarySI},
    {"1000M", "1G", F::kDecimalSI},
    {".001Ki", "1024m", F::kBinarySI},
    {".000001Ki", "1024u", F::kDecimalSI},
    {".000000001Ki", "1024n", F::kDecimalSI},
    {".000000000001Ki", "2n", F::kDecimalSI},
    // From the brief and the seeds
    {"100m", "100m", F::kDecimalSI},
    {"500Mi", "500Mi", F::kBinarySI},
    {"1.5Gi", "1536Mi", F::kBinarySI},
    {"2k", "2k", F::kDecimalSI},
    {"1000m", "1", F::kDecimalSI},
    {"+1", "1", F::kDecimalSI},
    {".5", "500m", F::kDecimalSI},
    {"1000E", "1000E", F::kDecimalSI},  // upstream would print "1"; see AppendTo
    {"1e21", "1e21", F::kDecimalExponent},
    {"0.1m", "100u", F::kDecimalSI},
    // Upstream parses these as zero although its regular expression does not allow them.
    {"+", "0", F::kDecimalSI},
    {"-", "0", F::kDecimalSI},
    {".", "0", F::kDecimalSI},
    {"-.", "0", F::kDecimalSI},
    {"Gi", "0", F::kBinarySI},
    {"-0", "0", F::kDecimalSI},
    {"000", "0", F::kDecimalSI},
};

TEST(QuantityTest, ParsesToUpstreamCanonicalForm) {
  for (const ParseCase& c : kParseCases) {
    Result<Quantity> q = Quantity::Parse(c.in);
    ASSERT_TRUE(q.has_value()) << c.in << ": " << q.error().message();
    EXPECT_EQ(q->ToString(), c.canonical) << c.in;
    EXPECT_EQ(q->format(), c.format) << c.in;
    // The canonical form parses back to the same value and prints the same.
    Quantity again = Q(c.canonical);
    EXPECT_EQ(again, *q) << c.in;
    EXPECT_EQ(again.ToString(), c.canonical) << c.in;
  }
}

TEST(QuantityTest, RepeatedParsesGiveTheFirstParsesResult) {
  // A thread remembers its last few parses: texts asked again, alternated with others (more
  // than it remembers), and texts that differ by a byte or a length each get their own value.
  std::vector<std::string> texts;
  for (const ParseCase& c : kParseCases) texts.push_back(c.in);
  for (const char* t : {"1", "1M", "1Mi", "1m", "10", "100m", "100M", "0.1", ".1", "1e3", "1E3"}) {
    texts.push_back(t);
  }
  std::vector<std::pair<std::string, F>> first;
  for (const std::string& t : texts) {
    Quantity q = Q(t);
    first.emplace_back(q.ToString(), q.format());
  }
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < texts.size(); ++i) {
      for (size_t j : {i, i, i / 2}) {
        Quantity q = Q(texts[j]);
        EXPECT_EQ(q.ToString(), first[j].first) << texts[j];
        EXPECT_EQ(q.format(), first[j].second) << texts[j];
      }
    }
  }
  // A failed parse is never remembered.
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(Quantity::Parse("1.1.M"));
    EXPECT_TRUE(Quantity::Parse("1.1M"));
  }
}

TEST(QuantityTest, NegativeAndExplicitPlusVersions) {
  for (const ParseCase& c : kParseCases) {
    if (c.in[0] == '+' || c.in[0] == '-') continue;
    Quantity pos = Q(c.in);
    Quantity neg = Q(Signed('-', c.in));
    Quantity plus = Q(Signed('+', c.in));
    EXPECT_EQ(plus, pos) << c.in;
    EXPECT_EQ(plus.format(), pos.format()) << c.in;
    Quantity negated = pos;
    negated.Neg();
    EXPECT_EQ(neg, negated) << c.in;
    EXPECT_EQ(neg.format(), pos.format()) << c.in;
    const std::string want = pos.IsZero() ? "0" : Signed('-', c.canonical);
    EXPECT_EQ(neg.ToString(), want) << c.in;
  }
}

TEST(QuantityTest, RejectsWithUpstreamMessages) {
  const std::string kFormat =
      "quantities must match the regular expression "
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
  const std::string kSuffix = "unable to parse quantity's suffix";
  const struct {
    const char* in;
    std::string message;
  } cases[] = {
      // upstream TestQuantityParse invalid inputs
      {"1.1.M", kFormat},
      {"1+1.0M", kFormat},
      {"0.1mi", kSuffix},
      {"0.1am", kFormat},
      {"aoeu", kFormat},
      {".5i", kSuffix},
      {"1i", kSuffix},
      {"-3.01i", kSuffix},
      {"-3.01e-", kSuffix},
      {" 1", kFormat},
      {"1 ", kFormat},
      {"", kFormat},
      // more
      {"1e", kSuffix},
      {"1K", kSuffix},
      {"1ki", kSuffix},
      {"1Ee3", kSuffix},
      {"1e3.5", kFormat},
      {"1Gib", kFormat},
      {"1Gi5", kSuffix},
      {"one", kFormat},
      {"1,5", kFormat},
      {"1e99999999999999999999", kSuffix},
      {"Non-Numeric", kFormat},
      {"1e40", "quantity too large: kubetaint supports magnitudes below 1e29"},
      {"100000000000000000000000000000",
       "quantity too large: kubetaint supports magnitudes below 1e29"},
  };
  for (const auto& c : cases) {
    Result<Quantity> q = Quantity::Parse(c.in);
    ASSERT_FALSE(q.has_value()) << c.in << " parsed as " << q->ToString();
    EXPECT_EQ(q.error().code(), StatusCode::kBadRequest) << c.in;
    EXPECT_EQ(q.error().message(), c.message) << c.in;
  }
}

TEST(QuantityTest, BinaryQuantitiesCapAtInt64Max) {
  EXPECT_EQ(Q("8Ei").Value(), INT64_MAX);
  EXPECT_EQ(Q("-9Ei").Value(), -INT64_MAX);
  EXPECT_EQ(Q("7Ei").Value(), int64_t{7} << 60);
  EXPECT_EQ(Q("99999999999999999999999999999999999999999Ki").Value(), INT64_MAX);
}

TEST(QuantityTest, ValueAndMilliValueRoundUpAwayFromZero) {
  const struct {
    const char* in;
    int64_t value;
    int64_t milli;
  } cases[] = {
      {"1", 1, 1000},
      {"100m", 1, 100},
      {"-100m", -1, -100},
      {"0.5", 1, 500},
      {"1n", 1, 1},
      {"-1n", -1, -1},
      {"1500u", 1, 2},
      {"1.5Gi", 1610612736, 1610612736000},
      {"16Gi", 17179869184, 17179869184000},
      {"32Gi", 34359738368, 34359738368000},
      {"1Ei", int64_t{1} << 60, INT64_MAX},  // saturates where upstream overflows
      {"-1Ei", -(int64_t{1} << 60), INT64_MIN},
      {"12E", INT64_MAX, INT64_MAX},
      {"9.01", 10, 9010},
      {"-9.01", -10, -9010},
      {"0", 0, 0},
  };
  for (const auto& c : cases) {
    Quantity q = Q(c.in);
    EXPECT_EQ(q.Value(), c.value) << c.in;
    EXPECT_EQ(q.MilliValue(), c.milli) << c.in;
    EXPECT_EQ(q.ScaledValue(0), c.value) << c.in;
    EXPECT_EQ(q.ScaledValue(-3), c.milli) << c.in;
  }
  EXPECT_EQ(Q("1n").ScaledValue(-9), 1);
  EXPECT_EQ(Q("1").ScaledValue(-9), 1000000000);
  EXPECT_EQ(Q("1").ScaledValue(-12), 1000000000000);
  EXPECT_EQ(Q("1500").ScaledValue(3), 2);  // kilo, rounded up
  EXPECT_EQ(Q("1G").ScaledValue(9), 1);
  EXPECT_EQ(Q("1").ScaledValue(30), 1);
}

TEST(QuantityTest, ExactArithmetic) {
  // 1m added a thousand times is exactly 1.
  Quantity sum;
  const Quantity milli = Q("1m");
  for (int i = 0; i < 1000; ++i) sum.Add(milli);
  EXPECT_EQ(sum, Q("1"));
  EXPECT_EQ(sum.ToString(), "1");

  Quantity mem = Q("1Gi");
  mem.Add(Q("512Mi"));
  EXPECT_EQ(mem.ToString(), "1536Mi");
  mem.Sub(Q("1536Mi"));
  EXPECT_TRUE(mem.IsZero());
  EXPECT_EQ(mem.ToString(), "0");

  Quantity cpu = Q("2");
  cpu.Sub(Q("2500m"));
  EXPECT_EQ(cpu.ToString(), "-500m");
  EXPECT_EQ(cpu.Sign(), -1);
  EXPECT_EQ(cpu.MilliValue(), -500);

  // Memory up to Ei and cpu down to 1m stay exact together.
  Quantity big = Q("1Ei");
  big.Add(Q("1"));
  EXPECT_EQ(big.Value(), (int64_t{1} << 60) + 1);
  big.Add(Q("1m"));
  big.Sub(Q("1Ei"));
  EXPECT_EQ(big.ToString(), "1001m");

  EXPECT_EQ(Q("100m").Cmp(Q("50m")), 1);
  EXPECT_EQ(Q("50m").Cmp(Q("100m")), -1);
  EXPECT_EQ(Q("0").Cmp(Q("0")), 0);
  EXPECT_EQ(Q("10000T").Cmp(Q("100Gi")), 1);  // upstream TestQuantityCmp
  EXPECT_EQ(Q("1Ki").Cmp(Q("1024")), 0);
  EXPECT_TRUE(Q("1Ki") == Q("1.024k"));
  EXPECT_TRUE(Q("999m") < Q("1"));
}

// upstream TestQuantityAddZeroPreservesSuffix / TestQuantitySubZeroPreservesSuffix
TEST(QuantityTest, AddingToZeroTakesTheOtherFormat) {
  for (const char* s : {"100m", "1Gi"}) {
    Quantity v1 = Q(s);
    v1.Add(Q("0"));
    EXPECT_EQ(v1.ToString(), s);
    Quantity v2 = Q("0");
    v2.Add(Q(s));
    EXPECT_EQ(v2.ToString(), s);
    Quantity v3 = Q(s);
    v3.Sub(Q("0"));
    EXPECT_EQ(v3.ToString(), s);
    Quantity v4 = Q("0");
    v4.Sub(Q(s));
    EXPECT_EQ(v4.ToString(), Signed('-', s));
  }
}

// upstream TestMilliNewSet, TestNewSet, TestNewScaledSet
TEST(QuantityTest, Constructors) {
  EXPECT_EQ(Quantity::FromMilli(1).ToString(), "1m");
  EXPECT_EQ(Quantity::FromMilli(1000).ToString(), "1");
  EXPECT_EQ(Quantity::FromMilli(1234000).ToString(), "1234");
  EXPECT_EQ(Quantity::FromMilli(1024, F::kBinarySI).ToString(), "1024m");
  EXPECT_EQ(Quantity::FromMilli(1024 * 1024, F::kBinarySI).ToString(), "1048576m");
  EXPECT_EQ(Quantity::FromMilli(1000000, F::kDecimalExponent).ToString(), "1e3");
  EXPECT_EQ(Quantity::FromInt(1).ToString(), "1");
  EXPECT_EQ(Quantity::FromInt(1000).ToString(), "1k");
  EXPECT_EQ(Quantity::FromInt(1234000).ToString(), "1234k");
  EXPECT_EQ(Quantity::FromInt(1024, F::kBinarySI).ToString(), "1Ki");
  EXPECT_EQ(Quantity::FromInt(1024 * 1024, F::kBinarySI).ToString(), "1Mi");
  EXPECT_EQ(Quantity::FromInt(1000000, F::kDecimalExponent).ToString(), "1e6");
  EXPECT_EQ(Quantity::FromInt(1000000, F::kDecimalExponent).Value(), 1000000);
  EXPECT_EQ(Quantity::FromScaled(1, -9).ToString(), "1n");
  EXPECT_EQ(Quantity::FromScaled(1000, -9).ToString(), "1u");
  EXPECT_EQ(Quantity::FromScaled(1, -6).ToString(), "1u");
  EXPECT_EQ(Quantity::FromScaled(1000, -6).ToString(), "1m");
  EXPECT_EQ(Quantity::FromScaled(1, -3).ToString(), "1m");
  EXPECT_EQ(Quantity::FromScaled(1000, -3).ToString(), "1");
  EXPECT_EQ(Quantity::FromScaled(1, 0).ToString(), "1");
  EXPECT_EQ(Quantity::FromScaled(0, -9).ToString(), "0");
  EXPECT_EQ(Quantity::FromScaled(1, -12).ToString(), "1n");  // finer than 1n rounds up
  EXPECT_EQ(Quantity::FromScaled(-1, -12).ToString(), "-1n");
  EXPECT_EQ(Quantity::FromScaled(5, 18).ToString(), "5E");
}

// upstream TestQuantityString: values in a format print canonically.
TEST(QuantityTest, CanonicalStrings) {
  const struct {
    Quantity q;
    const char* want;
  } cases[] = {
      {Quantity::FromInt(1024 * 1024 * 1024, F::kBinarySI), "1Gi"},
      {Quantity::FromInt(300 * 1024 * 1024, F::kBinarySI), "300Mi"},
      {Quantity::FromInt(6 * 1024, F::kBinarySI), "6Ki"},
      {Quantity::FromInt(int64_t{1001} * 1024 * 1024 * 1024, F::kBinarySI), "1001Gi"},
      {Quantity::FromInt(int64_t{1024} * 1024 * 1024 * 1024, F::kBinarySI), "1Ti"},
      {Quantity::FromInt(5, F::kBinarySI), "5"},
      {Quantity::FromMilli(500, F::kBinarySI), "500m"},
      {Quantity::FromScaled(1, 9), "1G"},
      {Quantity::FromScaled(1000, 6), "1G"},
      {Quantity::FromScaled(1000000, 3), "1G"},
      {Quantity::FromScaled(1000000000, 0), "1G"},
      {Quantity::FromScaled(1, -3), "1m"},
      {Quantity::FromScaled(80, -3), "80m"},
      {Quantity::FromScaled(1080, -3), "1080m"},
      {Quantity::FromScaled(108, -2), "1080m"},
      {Quantity::FromScaled(10800, -4), "1080m"},
      {Quantity::FromScaled(300, 6), "300M"},
      {Quantity::FromScaled(1, 12), "1T"},
      {Quantity::FromScaled(1234567, 6), "1234567M"},
      {Quantity::FromMilli(1234567, F::kBinarySI), "1234567m"},
      {Quantity::FromScaled(3, 3), "3k"},
      {Quantity::FromInt(1025, F::kBinarySI), "1025"},
      {Quantity::FromInt(0, F::kBinarySI), "0"},
      {Quantity::FromInt(1000000000, F::kDecimalExponent), "1e9"},
      {Quantity::FromMilli(1, F::kDecimalExponent), "1e-3"},
      {Quantity::FromMilli(80, F::kDecimalExponent), "80e-3"},
      {Quantity::FromInt(300000000, F::kDecimalExponent), "300e6"},
      {Quantity::FromInt(3000, F::kDecimalExponent), "3e3"},
      {Quantity::FromScaled(1, -9), "1n"},
      {Quantity::FromScaled(80, -9), "80n"},
      {Quantity::FromScaled(1080, -9), "1080n"},
      {Quantity::FromScaled(108, -8), "1080n"},
      {Quantity::FromScaled(10800, -10), "1080n"},
      {Quantity::FromScaled(1, -6), "1u"},
      {Quantity::FromScaled(80, -6), "80u"},
      {Quantity::FromScaled(1080, -6), "1080u"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(c.q.ToString(), c.want);
    Quantity neg = c.q;
    neg.Neg();
    if (!c.q.IsZero()) {
      EXPECT_EQ(neg.ToString(), Signed('-', c.want));
    }
  }
}

TEST(QuantityTest, IsCheapToCopy) {
  static_assert(std::is_trivially_copyable_v<Quantity>);
  static_assert(sizeof(Quantity) <= 32);
  std::string out = "cpu=";
  Q("250m").AppendTo(&out);
  EXPECT_EQ(out, "cpu=250m");
}

}  // namespace
}  // namespace kt::api
