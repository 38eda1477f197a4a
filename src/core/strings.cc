#include "core/strings.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace kt {

std::string Join(std::span<const std::string> parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out.append(sep);
    out.append(parts[i]);
  }
  return out;
}

bool ParseDecimalInt64(std::string_view s, int64_t* out) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (neg ? v > (uint64_t{1} << 63) : v > static_cast<uint64_t>(INT64_MAX)) return false;
  *out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

namespace {

// Go's time.quote for the ASCII a flag value normally is.
std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

// The value of a duration unit in nanoseconds, 0 if unknown.
uint64_t DurationUnit(std::string_view u) {
  if (u == "ns") return 1;
  if (u == "us" || u == "\u00b5s" || u == "\u03bcs") return 1000;
  if (u == "ms") return 1000 * 1000;
  if (u == "s") return 1000 * 1000 * 1000;
  if (u == "m") return 60ull * 1000 * 1000 * 1000;
  if (u == "h") return 3600ull * 1000 * 1000 * 1000;
  return 0;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool ParseGoDuration(std::string_view s, std::chrono::nanoseconds* out, std::string* error) {
  const std::string_view orig = s;
  auto invalid = [&] {
    *error = "time: invalid duration " + GoQuote(orig);
    return false;
  };
  constexpr uint64_t kLimit = uint64_t{1} << 63;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") {
    *out = std::chrono::nanoseconds(0);
    return true;
  }
  if (s.empty()) return invalid();
  uint64_t d = 0;
  while (!s.empty()) {
    if (!(s[0] == '.' || IsDigit(s[0]))) return invalid();
    // The integer part; more than fits in 63 bits is invalid (Go's leadingInt).
    uint64_t v = 0;
    size_t i = 0;
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      if (v > kLimit / 10) return invalid();
      v = v * 10 + static_cast<uint64_t>(s[i] - '0');
      if (v > kLimit) return invalid();
    }
    const bool pre = i > 0;
    s.remove_prefix(i);
    // The fraction: digits past what fits are read and ignored (Go's leadingFraction).
    uint64_t f = 0;
    double scale = 1;
    bool post = false;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      bool overflow = false;
      size_t j = 0;
      for (; j < s.size() && IsDigit(s[j]); ++j) {
        if (overflow) continue;
        if (f > (kLimit - 1) / 10) {
          overflow = true;
          continue;
        }
        const uint64_t y = f * 10 + static_cast<uint64_t>(s[j] - '0');
        if (y > kLimit) {
          overflow = true;
          continue;
        }
        f = y;
        scale *= 10;
      }
      post = j > 0;
      s.remove_prefix(j);
    }
    if (!pre && !post) return invalid();
    size_t u = 0;
    while (u < s.size() && s[u] != '.' && !IsDigit(s[u])) ++u;
    if (u == 0) {
      *error = "time: missing unit in duration " + GoQuote(orig);
      return false;
    }
    const std::string_view unit_name = s.substr(0, u);
    s.remove_prefix(u);
    const uint64_t unit = DurationUnit(unit_name);
    if (unit == 0) {
      *error = "time: unknown unit " + GoQuote(unit_name) + " in duration " + GoQuote(orig);
      return false;
    }
    if (v > kLimit / unit) return invalid();
    v *= unit;
    if (f > 0) {
      v += static_cast<uint64_t>(static_cast<double>(f) * (static_cast<double>(unit) / scale));
      if (v > kLimit) return invalid();
    }
    d += v;
    if (d > kLimit) return invalid();
  }
  if (neg) {
    *out = std::chrono::nanoseconds(static_cast<int64_t>(0 - d));
    return true;
  }
  if (d > kLimit - 1) return invalid();
  *out = std::chrono::nanoseconds(static_cast<int64_t>(d));
  return true;
}

bool ParseFloat32(std::string_view s, float* out, bool* out_of_range) {
  if (out_of_range != nullptr) *out_of_range = false;
  if (s.empty() || s.find('\0') != s.npos) return false;
  const char c = s[0];
  // strtof skips leading spaces and reads a prefix; Go reads the whole string or nothing.
  if (!(IsDigit(c) || c == '+' || c == '-' || c == '.' || c == 'i' || c == 'I' || c == 'n' ||
        c == 'N')) {
    return false;
  }
  const std::string text(s);
  char* end = nullptr;
  errno = 0;
  const float v = std::strtof(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return false;
  if (errno == ERANGE && std::isinf(v)) {
    if (out_of_range != nullptr) *out_of_range = true;
    return false;
  }
  *out = v;
  return true;
}

void AppendJsonString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\t':
        out.append("\\t");
        break;
      case '\r':
        out.append("\\r");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out.append("\\u00");
          out.push_back(kHex[(static_cast<unsigned char>(c) >> 4) & 0xf]);
          out.push_back(kHex[static_cast<unsigned char>(c) & 0xf]);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

bool EqualFoldAscii(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string EncodeBase64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  auto byte = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(bytes[k])); };
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(kAlphabet[(v >> shift) & 63]);
  }
  if (const size_t rest = bytes.size() - i; rest > 0) {
    const uint32_t v = byte(i) << 16 | (rest == 2 ? byte(i + 1) << 8 : 0);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

char* PutHex(char* out, uint64_t v, int width) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (int i = width - 1; i >= 0; --i) {
    out[i] = kDigits[v & 0xf];
    v >>= 4;
  }
  return out + width;
}

char* PutHexMinimal(char* out, uint64_t v) {
  int width = 1;
  while (width < 16 && (v >> (4 * width)) != 0) ++width;
  return PutHex(out, v, width);
}

}  // namespace kt
