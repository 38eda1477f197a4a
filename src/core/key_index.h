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
// The index is a HashSlots table (core/hash_slots.h) of map iterators: a lookup reads one slot
// (nearly always) and compares keys only when the hashes match, and an insert allocates nothing
// until the table doubles. Keys that share a hash are told apart by comparing the map's keys. An
// index entry holds the map iterator, which stays valid until its map entry is erased or
// extracted: Erase it first (and Insert the entry again once a node handle is back in the map).
// Thread safety: none of its own; guard it as the map.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include "core/hash_slots.h"

namespace kt {

template <class Map, class Hasher = std::hash<std::string_view>>
class KeyIndex {
 public:
  using Iterator = typename Map::iterator;

  static uint64_t Hash(std::string_view key) { return HashSlots<Iterator>::Of(Hasher()(key)); }

  // The map's entry for `key`, or map.end() (an iterator or a const_iterator, as `map` is).
  template <class M>
  auto Find(M& map, std::string_view key) const -> decltype(map.end()) {
    const Iterator* it =
        slots_.Find(Hash(key), [key](Iterator i) { return std::string_view(i->first) == key; });
    return it == nullptr ? map.end() : *it;
  }
  // A new map entry.
  void Insert(Iterator it) { slots_.Insert(Hash(it->first), it); }
  // A map entry about to be erased or extracted.
  void Erase(Iterator it) {
    slots_.Erase(Hash(it->first), [it](Iterator i) { return i == it; });
  }
  void Clear() { slots_.Clear(); }
  void Reserve(size_t n) { slots_.Reserve(n); }
  size_t size() const { return slots_.size(); }

 private:
  HashSlots<Iterator> slots_;
};

}  // namespace kt
