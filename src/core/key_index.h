// KeyIndex: a hash index over the entries of an ordered std::map with string keys, so that a
// point lookup costs one hash and (nearly always) one key comparison instead of a descent of the
// tree: at 150,000 keys that is ~17 levels, each a node and a key's characters to fetch from
// memory, which made the descents of the store's and the watch caches' maps a tenth of an
// eviction's CPU. The map stays what ranges, lists and paging walk, in key order.
//
//   std::map<std::string, V, std::less<>> map;
//   KeyIndex<std::map<std::string, V, std::less<>>> index;
//   auto [it, added] = map.emplace(key, v);
//   if (added) index.Insert(it);
//   auto found = index.Find(map, "key");      // map.end() if absent
//   index.Erase(it); map.erase(it);           // before the entry goes
//
// Entries are keyed by the 64-bit hash of the map's key (integers, not strings: nothing is
// copied or compared but on a hit); keys that share a hash are told apart by comparing the
// map's keys. An index entry holds the map iterator, which stays valid until its map entry is
// erased or extracted: Erase it first (and Insert the entry again once a node handle is back in
// the map).
// Thread safety: none of its own; guard it as the map.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>

namespace kt {

template <class Map, class Hasher = std::hash<std::string_view>>
class KeyIndex {
 public:
  using Iterator = typename Map::iterator;

  static uint64_t Hash(std::string_view key) { return Hasher()(key); }

  // The map's entry for `key`, or map.end() (an iterator or a const_iterator, as `map` is).
  template <class M>
  auto Find(M& map, std::string_view key) const -> decltype(map.end()) {
    auto [b, e] = index_.equal_range(Hash(key));
    for (; b != e; ++b) {
      if (std::string_view(b->second->first) == key) return b->second;
    }
    return map.end();
  }
  // A new map entry.
  void Insert(Iterator it) { index_.emplace(Hash(it->first), it); }
  // A map entry about to be erased or extracted.
  void Erase(Iterator it) {
    auto [b, e] = index_.equal_range(Hash(it->first));
    for (; b != e; ++b) {
      if (b->second == it) {
        index_.erase(b);
        return;
      }
    }
  }
  void Clear() { index_.clear(); }
  void Reserve(size_t n) { index_.reserve(n); }
  size_t size() const { return index_.size(); }

 private:
  std::unordered_multimap<uint64_t, Iterator> index_;
};

}  // namespace kt
