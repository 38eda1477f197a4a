#include "api/quantity.h"
#include "core/strings.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace kt::api {

namespace {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 Uint128;

// The upstream errors (resource.ErrFormatWrong, ErrNumeric, ErrSuffix).
constexpr std::string_view kErrFormatWrong =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr std::string_view kErrSuffix = "unable to parse quantity's suffix";
constexpr std::string_view kErrTooLarge =
    "quantity too large: kubetaint supports magnitudes below 1e29";

constexpr int64_t kNanoPerUnit = 1000000000;
// Magnitudes must stay below 10^38 nano-units (10^29 units), well inside the 128-bit range so
// that sums of a few values cannot overflow.
constexpr Uint128 Pow10(int n) {
  Uint128 r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}
constexpr Uint128 kMaxNano = Pow10(38) - 1;
// Upstream caps binary-SI quantities at int64 max units.
constexpr Uint128 kBinaryCapNano = static_cast<Uint128>(INT64_MAX) * kNanoPerUnit;
constexpr Int128 kMaxValue = static_cast<Int128>(kMaxNano);

Status FormatWrong() { return BadRequest(std::string(kErrFormatWrong)); }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// n / D and n % D for a constant D < 2^32, using 64-bit divisions that the compiler turns into
// multiplications (a 128-bit division is a slow library call).
template <uint64_t D>
Uint128 DivModSmall(Uint128 n, uint64_t* rem) {
  static_assert(D > 0 && D < (uint64_t{1} << 32));
  const auto hi = static_cast<uint64_t>(n >> 64);
  const auto lo = static_cast<uint64_t>(n);
  if (hi == 0) {
    *rem = lo % D;
    return lo / D;
  }
  const uint64_t q_hi = hi / D;
  uint64_t r = hi % D;
  const uint64_t x = (r << 32) | (lo >> 32);
  const uint64_t q1 = x / D;
  r = x % D;
  const uint64_t y = (r << 32) | (lo & 0xffffffffu);
  const uint64_t q0 = y / D;
  *rem = y % D;
  return (static_cast<Uint128>(q_hi) << 64) | (static_cast<Uint128>(q1) << 32) | q0;
}

// Appends the decimal digits of n.
void AppendUint128(Uint128 n, std::string* out) {
  char buf[40];
  char* end = buf + sizeof(buf);
  char* p = end;
  do {
    uint64_t chunk;
    n = DivModSmall<1000000000>(n, &chunk);
    // Emit 9 digits per chunk, except for the leading chunk.
    for (int i = 0; i < 9; ++i) {
      *--p = static_cast<char>('0' + chunk % 10);
      chunk /= 10;
      if (n == 0 && chunk == 0) break;
    }
  } while (n != 0);
  out->append(p, end);
}

bool MulOverflow(Uint128 a, Uint128 b, Uint128* out) { return __builtin_mul_overflow(a, b, out); }

// Interprets a suffix (upstream quantitySuffixer.interpret): the base-10 or base-2 exponent and
// the format it implies.
bool InterpretSuffix(std::string_view s, int64_t* exp10, int* exp2, Quantity::Format* format) {
  struct DecimalSuffix {
    char c;
    int exp;
  };
  static constexpr DecimalSuffix kDecimal[] = {{'n', -9}, {'u', -6}, {'m', -3}, {'k', 3}, {'M', 6},
                                               {'G', 9},  {'T', 12}, {'P', 15}, {'E', 18}};
  static constexpr std::string_view kBinaryPrefixes = "KMGTPE";  // Ki = 2^10 ... Ei = 2^60

  *exp10 = 0;
  *exp2 = 0;
  *format = Quantity::Format::kDecimalSI;
  if (s.empty()) return true;
  if (s.size() == 1) {
    for (const DecimalSuffix& d : kDecimal) {
      if (d.c == s[0]) {
        *exp10 = d.exp;
        return true;
      }
    }
    return false;
  }
  if (s.size() == 2 && s[1] == 'i') {
    const size_t i = kBinaryPrefixes.find(s[0]);
    if (i != std::string_view::npos) {
      *format = Quantity::Format::kBinarySI;
      *exp2 = 10 * (static_cast<int>(i) + 1);
      return true;
    }
  }
  if (s[0] == 'e' || s[0] == 'E') {
    *format = Quantity::Format::kDecimalExponent;
    return ParseDecimalInt64(s.substr(1), exp10);
  }
  return false;
}

// The digits of a quantity's number, num then denom, read as one digit string.
class Digits {
 public:
  Digits(std::string_view num, std::string_view denom) : num_(num), denom_(denom) {}
  size_t size() const { return num_.size() + denom_.size(); }
  char operator[](size_t i) const { return i < num_.size() ? num_[i] : denom_[i - num_.size()]; }

 private:
  std::string_view num_, denom_;
};

// Computes ceil(D × 10^k × 2^exp2) where D is digits[first, last) (no leading or trailing zeros,
// at least one digit). Returns false when the result does not fit below 2^128.
bool ScaleDigits(const Digits& digits, size_t first, size_t last, int64_t k, int exp2,
                 Uint128* out) {
  const auto len = static_cast<int64_t>(last - first);
  // Integer part: the digits left of position len + k (all of them when k >= 0).
  const int64_t int_len = std::min(len, std::max<int64_t>(0, len + k));
  if (int_len + std::max<int64_t>(k, 0) > 38) return false;
  Uint128 v = 0;
  for (int64_t i = 0; i < int_len; ++i) v = v * 10 + static_cast<unsigned>(digits[first + i] - '0');
  if (k > 0 && MulOverflow(v, Pow10(static_cast<int>(k)), &v)) return false;
  if (exp2 > 0) {
    if (exp2 >= 128 || (v >> (128 - exp2)) != 0) return false;
    v <<= exp2;
  }
  if (int_len == len) {
    *out = v;
    return true;
  }
  // Fractional part 0.f with f = (-k - (len - int_len)) zeros then digits[first+int_len, last).
  // The fraction is non-zero (the last digit is non-zero), so the result rounds up. With a binary
  // factor, ceil(f × 2^exp2) is computed by long multiplication from the last digit, keeping
  // only the carry: the final carry is the integer part, and any non-zero digit left behind
  // means a remainder.
  Uint128 add = 1;
  if (exp2 > 0) {
    const uint64_t mul = uint64_t{1} << exp2;
    uint64_t carry = 0;
    bool remainder = false;
    for (int64_t i = len - 1; i >= int_len; --i) {
      const uint64_t t = static_cast<uint64_t>(digits[first + i] - '0') * mul + carry;
      remainder |= (t % 10) != 0;
      carry = t / 10;
    }
    // Leading zeros of the fraction only divide the carry further.
    for (int64_t zeros = -k - (len - int_len); zeros > 0 && carry != 0; --zeros) {
      remainder |= (carry % 10) != 0;
      carry /= 10;
    }
    add = static_cast<Uint128>(carry) + (remainder ? 1 : 0);
  }
  if (__builtin_add_overflow(v, add, &v)) return false;
  *out = v;
  return true;
}

void AppendSuffix(Quantity::Format format, int exp, std::string* out) {
  if (format == Quantity::Format::kDecimalExponent) {
    if (exp == 0) return;
    char buf[16];
    buf[0] = 'e';
    auto r = std::to_chars(buf + 1, buf + sizeof(buf), exp);
    out->append(buf, r.ptr);
    return;
  }
  switch (exp) {
    case -9:
      out->push_back('n');
      break;
    case -6:
      out->push_back('u');
      break;
    case -3:
      out->push_back('m');
      break;
    case 3:
      out->push_back('k');
      break;
    case 6:
      out->push_back('M');
      break;
    case 9:
      out->push_back('G');
      break;
    case 12:
      out->push_back('T');
      break;
    case 15:
      out->push_back('P');
      break;
    case 18:
      out->push_back('E');
      break;
    default:
      break;
  }
}

Int128 SaturatingAdd(Int128 a, Int128 b) {
  Int128 r;
  if (__builtin_add_overflow(a, b, &r) || r > kMaxValue || r < -kMaxValue) {
    return (b > 0) ? kMaxValue : -kMaxValue;
  }
  return r;
}

}  // namespace

// Objects of one workload ask for the same few quantities ("100m", "500Mi") again and again, and
// a create parses each several times (canonical form, QoS class, typed view): the last few short
// texts parsed on this thread are remembered with their value.
Result<Quantity> Quantity::Parse(std::string_view str) {
  struct Remembered {
    unsigned char size = 0;  // 0: empty slot
    char text[23];
    Quantity q;
  };
  static constexpr size_t kSlots = 8;
  thread_local Remembered memo[kSlots];
  thread_local size_t next = 0;
  const bool short_text = !str.empty() && str.size() <= sizeof(Remembered::text);
  if (short_text) {
    for (const Remembered& m : memo) {
      if (m.size == str.size() && std::memcmp(m.text, str.data(), str.size()) == 0) return m.q;
    }
  }
  Result<Quantity> q = ParseText(str);
  if (short_text && q) {
    Remembered& m = memo[next];
    next = (next + 1) % kSlots;
    m.size = static_cast<unsigned char>(str.size());
    std::memcpy(m.text, str.data(), str.size());
    m.q = *q;
  }
  return q;
}

Result<Quantity> Quantity::ParseText(std::string_view str) {
  if (str.empty()) return Err(FormatWrong());
  Quantity q;
  if (str == "0") return q;

  // Scan as upstream parseQuantityString does: sign, leading zeros, numerator, optional
  // '.' and denominator, then suffix letters, an optional sign and digits. Upstream accepts more
  // than its own regular expression says ("", ".", "Gi" all parse as zero); so do we.
  const size_t end = str.size();
  size_t pos = 0;
  bool positive = true;
  if (str[0] == '-' || str[0] == '+') {
    positive = str[0] == '+';
    ++pos;
  }
  while (pos < end && str[pos] == '0') ++pos;
  if (pos == end) return q;  // all zeros

  size_t i = pos;
  while (i < end && IsDigit(str[i])) ++i;
  std::string_view num = str.substr(pos, i - pos);
  pos = i;
  std::string_view denom;
  if (pos < end && str[pos] == '.') {
    ++pos;
    i = pos;
    while (i < end && IsDigit(str[i])) ++i;
    denom = str.substr(pos, i - pos);
    pos = i;
  }
  const size_t suffix_start = pos;
  static constexpr std::string_view kSuffixChars = "eEinumkKMGTP";
  while (pos < end && kSuffixChars.find(str[pos]) != std::string_view::npos) ++pos;
  if (pos < end && (str[pos] == '-' || str[pos] == '+')) ++pos;
  while (pos < end && IsDigit(str[pos])) ++pos;
  if (pos != end) return Err(FormatWrong());
  const std::string_view suffix = str.substr(suffix_start);

  int64_t exp10 = 0;
  int exp2 = 0;
  Format format = Format::kDecimalSI;
  if (!InterpretSuffix(suffix, &exp10, &exp2, &format)) {
    return Err(BadRequest(std::string(kErrSuffix)));
  }
  q.format_ = format;

  const Digits digits(num, denom);
  size_t first = 0;
  size_t last = digits.size();
  while (first < last && digits[first] == '0') ++first;
  if (first == last) return q;  // zero, in the suffix's format
  size_t trailing_zeros = 0;
  while (digits[last - 1] == '0') {
    --last;
    ++trailing_zeros;
  }

  // value = D × 10^k × 2^exp2 nano-units, D = digits[first, last). Exponents beyond ±10^6 are
  // out of range (or round to 1n) whatever the digits, so clamping keeps the arithmetic small.
  exp10 = std::clamp<int64_t>(exp10, -1000000, 1000000);
  const int64_t k =
      exp10 - static_cast<int64_t>(denom.size()) + static_cast<int64_t>(trailing_zeros) + 9;
  Uint128 mag = 0;
  const bool fits = ScaleDigits(digits, first, last, k, exp2, &mag);
  if (format == Format::kBinarySI) {
    if (!fits || mag > kBinaryCapNano) mag = kBinaryCapNano;
    // A binary quantity between 0 and 1 is shown in decimal, as upstream.
    if (mag < static_cast<Uint128>(kNanoPerUnit)) q.format_ = Format::kDecimalSI;
  } else if (!fits || mag > kMaxNano) {
    return Err(BadRequest(std::string(kErrTooLarge)));
  }
  q.nano_ = positive ? static_cast<Int128>(mag) : -static_cast<Int128>(mag);
  return q;
}

Quantity Quantity::FromInt(int64_t value, Format format) {
  Quantity q;
  q.nano_ = static_cast<Int128>(value) * kNanoPerUnit;
  q.format_ = format;
  return q;
}

Quantity Quantity::FromMilli(int64_t milli, Format format) {
  Quantity q;
  q.nano_ = static_cast<Int128>(milli) * 1000000;
  q.format_ = format;
  return q;
}

Quantity Quantity::FromScaled(int64_t value, int scale) {
  Quantity q;
  if (value == 0) return q;
  const bool neg = value < 0;
  Uint128 mag = neg ? static_cast<Uint128>(0) - static_cast<Uint128>(static_cast<Int128>(value))
                    : static_cast<Uint128>(value);
  const int shift = scale + 9;
  if (shift >= 0) {
    if (shift > 38 || MulOverflow(mag, Pow10(shift), &mag) || mag > kMaxNano) mag = kMaxNano;
  } else {
    const Uint128 div = shift < -38 ? 0 : Pow10(-shift);
    if (div == 0 || mag < div) {
      mag = 1;  // finer than 1n: round up
    } else {
      const bool exact = mag % div == 0;
      mag = mag / div + (exact ? 0 : 1);
    }
  }
  q.nano_ = neg ? -static_cast<Int128>(mag) : static_cast<Int128>(mag);
  return q;
}

int64_t Quantity::ScaledValue(int scale) const { return ScaledValueSlow(nano_, scale); }

int64_t Quantity::ScaledValueSlow(Int128 nano, int scale) {
  if (nano == 0) return 0;
  const bool neg = nano < 0;
  const Uint128 mag = neg ? static_cast<Uint128>(-nano) : static_cast<Uint128>(nano);
  const int shift = scale + 9;  // divide by 10^shift
  Uint128 r;
  if (shift <= 0) {
    if (-shift > 38 || MulOverflow(mag, Pow10(-shift), &r)) r = ~Uint128{0};
  } else if (shift > 38) {
    r = 1;  // any non-zero value rounds up to one unit of the scale
  } else {
    Uint128 q;
    bool exact;
    if (shift == 9) {
      uint64_t rem;
      q = DivModSmall<1000000000>(mag, &rem);
      exact = rem == 0;
    } else if (shift == 6) {
      uint64_t rem;
      q = DivModSmall<1000000>(mag, &rem);
      exact = rem == 0;
    } else {
      const Uint128 div = Pow10(shift);
      q = mag / div;
      exact = mag % div == 0;
    }
    r = q + (exact ? 0 : 1);
  }
  constexpr Uint128 kMax = static_cast<Uint128>(INT64_MAX);
  if (neg) return r > kMax ? INT64_MIN : -static_cast<int64_t>(r);
  return r > kMax ? INT64_MAX : static_cast<int64_t>(r);
}

void Quantity::Add(const Quantity& y) {
  if (nano_ == 0) format_ = y.format_;
  nano_ = SaturatingAdd(nano_, y.nano_);
}

void Quantity::Sub(const Quantity& y) {
  if (nano_ == 0) format_ = y.format_;
  nano_ = SaturatingAdd(nano_, -y.nano_);
}

std::string Quantity::ToString() const {
  std::string s;
  AppendTo(&s);
  return s;
}

void Quantity::AppendTo(std::string* out) const {
  if (nano_ == 0) {
    out->push_back('0');
    return;
  }
  const bool neg = nano_ < 0;
  Uint128 mag = neg ? static_cast<Uint128>(-nano_) : static_cast<Uint128>(nano_);
  if (neg) out->push_back('-');

  // Upstream CanonicalizeBytes: binary SI only for whole numbers of at least 1024; otherwise
  // decimal SI, so that nothing is rounded.
  Format format = format_;
  uint64_t rem = 0;
  Uint128 units = DivModSmall<1000000000>(mag, &rem);
  if (format == Format::kBinarySI && (rem != 0 || units < 1024)) format = Format::kDecimalSI;

  if (format == Format::kBinarySI) {
    static constexpr std::string_view kBinarySuffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int e = 0;
    while (e < 6 && (units & 1023) == 0) {
      units >>= 10;
      ++e;
    }
    AppendUint128(units, out);
    out->append(kBinarySuffixes[e]);
    return;
  }

  // value = m × 10^e with every factor of ten moved into e, then e lowered to a multiple of
  // three. Decimal SI stops at E (10^18); beyond, the mantissa grows ("1000E"), where upstream
  // would print a wrong bare number.
  Uint128 m = mag;
  int e = -9;
  for (;;) {
    uint64_t r;
    const Uint128 q = DivModSmall<10>(m, &r);
    if (r != 0) break;
    m = q;
    ++e;
  }
  const int adjust = ((e % 3) + 3) % 3;
  for (int i = 0; i < adjust; ++i) m *= 10;
  e -= adjust;
  if (format == Format::kDecimalSI && e > 18) {
    for (; e > 18; --e) m *= 10;
  }
  AppendUint128(m, out);
  AppendSuffix(format, e, out);
}

}  // namespace kt::api
