// UidKey: an object's metadata.uid as 128 bits, for hash maps keyed by object identity without
// string keys. A canonical UUID (what the API server assigns) is its own 128 bits; any other
// UID string is hashed to 128 bits.
//
//   std::unordered_map<api::UidKey, Entry, api::UidKeyHash> by_uid;
//   by_uid[api::UidKeyOf(pod.meta.uid)] = ...;
//
// Thread safety: plain values and pure functions.
#pragma once

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

inline int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
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

inline UidKey UidKeyOf(std::string_view uid) {
  UidKey k;
  if (uid.size() == 36) {
    int n = 0;
    bool ok = true;
    for (size_t i = 0; i < uid.size() && ok; ++i) {
      if (i == 8 || i == 13 || i == 18 || i == 23) {
        ok = uid[i] == '-';
        continue;
      }
      const int d = internal::HexDigit(uid[i]);
      if (d < 0) {
        ok = false;
        break;
      }
      uint64_t& half = n < 16 ? k.hi : k.lo;
      half = (half << 4) | static_cast<uint64_t>(d);
      ++n;
    }
    if (ok) return k;
  }
  return {internal::Fnv64(uid, 0xcbf29ce484222325ull),
          internal::Fnv64(uid, 0x84222325cbf29ce4ull) | 1};
}

}  // namespace kt::api
