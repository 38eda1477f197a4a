// Resource quantities: "100m", "1.5Gi", "2k", "1e3" — upstream resource.Quantity
// (k8s.io/apimachinery pkg/api/resource), parsed, compared, added and printed exactly as upstream.
//
// A Quantity is an exact fixed-point number in nano-units (the finest precision upstream keeps)
// held in a 128-bit integer, plus the format its string form uses. No floating point anywhere:
// memory up to Ei and cpu down to 1n are exact. Like upstream, parsing rounds anything finer than
// 1n up (away from zero) to the next nano-unit, and caps binary-SI quantities ("Ki".."Ei") at
// 2^63-1. Upstream also keeps arbitrary-precision decimals above int64; kubetaint accepts
// magnitudes below 1e29 and rejects larger ones with an error (nobody requests 100 octillion
// bytes; a bounded representation keeps the type small and copies free).
//
//   Result<Quantity> q = Quantity::Parse("1.5Gi");
//   q->ToString();     // "1536Mi" (canonical form, as upstream)
//   q->Value();        // 1610612736
//   Quantity::Parse("100m")->MilliValue();  // 100
//
// Cheap to copy (32 bytes, trivially copyable, no heap). Value() and MilliValue() round up away
// from zero like upstream and saturate at the int64 limits where upstream would overflow.
//
// Thread safety: a plain value.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace kt::api {

class Quantity {
 public:
  // How the canonical string is written (upstream resource.Format).
  enum class Format : unsigned char {
    kDecimalSI,        // "12M", "500m"
    kBinarySI,         // "12Mi"
    kDecimalExponent,  // "12e6"
  };

  // Zero, DecimalSI.
  constexpr Quantity() = default;

  // Parses the upstream quantity syntax. Errors (kBadRequest) carry the upstream messages
  // ("quantities must match the regular expression ...", "unable to parse quantity's suffix").
  // No surrounding whitespace is allowed (the JSON decoder trims it first, as upstream does).
  static Result<Quantity> Parse(std::string_view text);

  // value × 1 (upstream NewQuantity).
  static Quantity FromInt(int64_t value, Format format = Format::kDecimalSI);
  // value / 1000 (upstream NewMilliQuantity).
  static Quantity FromMilli(int64_t milli, Format format = Format::kDecimalSI);
  // value × 10^scale, DecimalSI (upstream NewScaledQuantity). Values finer than 1n round up away
  // from zero; results beyond the supported range saturate.
  static Quantity FromScaled(int64_t value, int scale);

  // ceil(q) away from zero (upstream Value).
  int64_t Value() const;
  // ceil(q × 1000) away from zero (upstream MilliValue). 1n → 1, -1n → -1.
  int64_t MilliValue() const;
  // ceil(q / 10^scale) away from zero (upstream ScaledValue).
  int64_t ScaledValue(int scale) const;

  bool IsZero() const { return nano_ == 0; }
  int Sign() const { return nano_ > 0 ? 1 : (nano_ < 0 ? -1 : 0); }
  // -1, 0, 1 (values only; formats are ignored, as upstream).
  int Cmp(const Quantity& other) const {
    return nano_ < other.nano_ ? -1 : (nano_ > other.nano_ ? 1 : 0);
  }

  // Exact; a zero receiver takes y's format (upstream Add/Sub). Saturates at the range limits.
  void Add(const Quantity& y);
  void Sub(const Quantity& y);
  void Neg() { nano_ = -nano_; }

  Format format() const { return format_; }
  void set_format(Format format) { format_ = format; }

  // The canonical form (upstream String): "1536Mi", "500m", "1", "1e3", "0".
  std::string ToString() const;
  void AppendTo(std::string* out) const;

  friend bool operator==(const Quantity& a, const Quantity& b) { return a.nano_ == b.nano_; }
  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) {
    return a.nano_ < b.nano_   ? std::strong_ordering::less
           : a.nano_ > b.nano_ ? std::strong_ordering::greater
                               : std::strong_ordering::equal;
  }

 private:
  __extension__ typedef __int128 Int128;

  static int64_t ScaledValueSlow(Int128 nano, int scale);
  static Result<Quantity> ParseText(std::string_view text);

  Int128 nano_ = 0;  // the value in units of 10^-9
  Format format_ = Format::kDecimalSI;
};

inline int64_t Quantity::Value() const {
  if (nano_ >= INT64_MIN && nano_ <= INT64_MAX) {
    const auto n = static_cast<int64_t>(nano_);
    const int64_t q = n / 1000000000;
    if (n % 1000000000 == 0) return q;
    return n > 0 ? q + 1 : q - 1;
  }
  return ScaledValueSlow(nano_, 0);
}

inline int64_t Quantity::MilliValue() const {
  if (nano_ >= INT64_MIN && nano_ <= INT64_MAX) {
    const auto n = static_cast<int64_t>(nano_);
    const int64_t q = n / 1000000;
    if (n % 1000000 == 0) return q;
    return n > 0 ? q + 1 : q - 1;
  }
  return ScaledValueSlow(nano_, -3);
}

}  // namespace kt::api
