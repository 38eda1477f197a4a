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
// The index is one flat array of slots, each a map iterator and its key's 64-bit hash, probed
// linearly from the hash's slot: a lookup reads one slot (nearly always) and compares keys only
// when the hashes match, and an insert allocates nothing until the array doubles. Keys that
// share a hash are told apart by comparing the map's keys. An index entry holds the map
// iterator, which stays valid until its map entry is erased or extracted: Erase it first (and
// Insert the entry again once a node handle is back in the map).
// Thread safety: none of its own; guard it as the map.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace kt {

template <class Map, class Hasher = std::hash<std::string_view>>
class KeyIndex {
 public:
  using Iterator = typename Map::iterator;

  // Never 0, which marks an empty slot.
  static uint64_t Hash(std::string_view key) {
    const uint64_t h = Hasher()(key);
    return h == 0 ? 1 : h;
  }

  // The map's entry for `key`, or map.end() (an iterator or a const_iterator, as `map` is).
  template <class M>
  auto Find(M& map, std::string_view key) const -> decltype(map.end()) {
    if (size_ == 0) return map.end();
    const uint64_t h = Hash(key);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.hash == 0) return map.end();
      if (s.hash == h && std::string_view(s.it->first) == key) return s.it;
    }
  }
  // A new map entry.
  void Insert(Iterator it) {
    // At most three quarters full, so that probes stay short.
    if ((size_ + 1) * 4 > slots_.size() * 3) Resize(std::max<size_t>(16, slots_.size() * 2));
    Place(Hash(it->first), it);
    ++size_;
  }
  // A map entry about to be erased or extracted.
  void Erase(Iterator it) {
    if (size_ == 0) return;
    const uint64_t h = Hash(it->first);
    size_t hole = h & mask_;
    for (;; hole = (hole + 1) & mask_) {
      if (slots_[hole].hash == 0) return;  // not indexed
      if (slots_[hole].hash == h && slots_[hole].it == it) break;
    }
    // Later slots of the run move back into the hole when their home slot is at or before it,
    // so that no probe stops early at an empty slot.
    for (size_t j = (hole + 1) & mask_; slots_[j].hash != 0; j = (j + 1) & mask_) {
      const size_t home = slots_[j].hash & mask_;
      if (((j - home) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].hash = 0;
    --size_;
  }
  void Clear() {
    for (Slot& s : slots_) s.hash = 0;
    size_ = 0;
  }
  void Reserve(size_t n) {
    size_t capacity = 16;
    while (capacity * 3 < n * 4) capacity *= 2;
    if (capacity > slots_.size()) Resize(capacity);
  }
  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t hash = 0;
    Iterator it{};
  };

  void Place(uint64_t h, Iterator it) {
    size_t i = h & mask_;
    while (slots_[i].hash != 0) i = (i + 1) & mask_;
    slots_[i] = Slot{h, it};
  }
  // `capacity`: a power of two.
  void Resize(size_t capacity) {
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    mask_ = capacity - 1;
    for (const Slot& s : old) {
      if (s.hash != 0) Place(s.hash, s.it);
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace kt
