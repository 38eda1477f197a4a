// UidKey: an object's metadata.uid as 128 bits, for hash maps keyed by object identity without
// string keys. A canonical UUID (what the API server assigns) is its own 128 bits; any other
// UID string is hashed to 128 bits.
//
//   std::unordered_map<api::UidKey, Entry, api::UidKeyHash> by_uid;
//   by_uid[api::UidKeyOf(pod.meta.uid)] = ...;
//
// Thread safety: plain values and pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kt::api {

struct UidKey {
  uint64_t hi = 0, lo = 0;
  bool operator==(const UidKey&) const = default;
};

struct UidKeyHash {
  size_t operator()(const UidKey& k) const {
    return static_cast<size_t>(k.hi ^ (k.lo * 0x9E3779B97F4A7C15ull));
  }
};

namespace internal {

// The value of each hex digit, either case; -1 for any other byte.
inline constexpr std::array<int8_t, 256> kHexValue = [] {
  std::array<int8_t, 256> t{};
  for (int8_t& v : t) v = -1;
  for (int c = '0'; c <= '9'; ++c) t[c] = static_cast<int8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c) t[c] = static_cast<int8_t>(c - 'a' + 10);
  for (int c = 'A'; c <= 'F'; ++c) t[c] = static_cast<int8_t>(c - 'A' + 10);
  return t;
}();

// The N hex digits at `p` as a number; `bad` turns negative if one is not a hex digit.
template <size_t N>
inline uint64_t HexDigits(const char* p, int& bad) {
  uint64_t v = 0;
  for (size_t i = 0; i < N; ++i) {
    const int d = kHexValue[static_cast<unsigned char>(p[i])];
    bad |= d;
    v = (v << 4) | static_cast<uint64_t>(d & 0xf);
  }
  return v;
}

inline uint64_t Fnv64(std::string_view s, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace internal

// A canonical UUID (8-4-4-4-12 hex digits, either case) is its 128 bits, the first 16 digits
// in `hi`; any other string is hashed (FNV-1a twice, `lo` odd).
inline UidKey UidKeyOf(std::string_view uid) {
  if (uid.size() == 36 && uid[8] == '-' && uid[13] == '-' && uid[18] == '-' && uid[23] == '-') {
    const char* p = uid.data();
    int bad = 0;
    UidKey k;
    k.hi = internal::HexDigits<8>(p, bad) << 32 | internal::HexDigits<4>(p + 9, bad) << 16 |
           internal::HexDigits<4>(p + 14, bad);
    k.lo = internal::HexDigits<4>(p + 19, bad) << 48 | internal::HexDigits<12>(p + 24, bad);
    if (bad >= 0) return k;
  }
  return {internal::Fnv64(uid, 0xcbf29ce484222325ull),
          internal::Fnv64(uid, 0x84222325cbf29ce4ull) | 1};
}

}  // namespace kt::api
