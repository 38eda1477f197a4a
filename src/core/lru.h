// Lru: a map from string keys, bounded to `capacity` entries, that forgets its least recently
// used entry to make room (client-go's LRU caches, as the event recorders keep them).
//
//   Lru<int> lru(4096);
//   const uint64_t h = Lru<int>::Hash(key);     // once, for Get and Add
//   if (int* v = lru.Get(key, h)) ++*v;         // found: now the most recently used
//   else lru.Add(key, h, 1);                    // absent: added, maybe in place of the oldest
//
// Entries live in one array and are chained in recency order by index; a HashSlots table
// (core/hash_slots.h) finds them by key. Once full, an added key takes over the least recently
// used entry's place, reusing its key's buffer: a cache that sees a new key per call, as the
// recorders do in a mass eviction (one event per pod), allocates nothing for its bookkeeping.
// A pointer to a value stays valid until the next Add, or until its entry is erased.
// Thread safety: none of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/hash_slots.h"

namespace kt {

template <class V>
class Lru {
 public:
  explicit Lru(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  static uint64_t Hash(std::string_view key) { return HashSlots<uint32_t>::OfKey(key); }

  // The value of `key` (hashed to `h`), now the most recently used; nullptr if absent.
  V* Get(std::string_view key, uint64_t h) {
    const uint32_t* i = Find(key, h);
    if (i == nullptr) return nullptr;
    const uint32_t n = *i;
    Unlink(n);
    LinkFront(n);
    return &nodes_[n].value;
  }
  V* Get(std::string_view key) { return Get(key, Hash(key)); }

  // Adds `key` (hashed to `h`), which must be absent, as the most recently used entry; when the
  // cache is full, the least recently used entry goes to make room.
  V& Add(std::string_view key, uint64_t h, V value) {
    uint32_t n;
    if (free_ != kNone) {
      n = free_;
      free_ = nodes_[n].next;
    } else if (nodes_.size() < capacity_) {
      n = static_cast<uint32_t>(nodes_.size());
      nodes_.emplace_back();
    } else {
      n = tail_;
      index_.Erase(nodes_[n].hash, [n](uint32_t i) { return i == n; });
      Unlink(n);
    }
    Node& node = nodes_[n];
    node.key.assign(key);
    node.hash = h;
    node.value = std::move(value);
    LinkFront(n);
    index_.Insert(h, n);
    return node.value;
  }

  // Sets `key` to `value`, adding it if absent; either way it becomes the most recently used.
  V& Put(std::string_view key, V value) {
    const uint64_t h = Hash(key);
    if (V* found = Get(key, h)) {
      *found = std::move(value);
      return *found;
    }
    return Add(key, h, std::move(value));
  }

  void Erase(std::string_view key) {
    const uint64_t h = Hash(key);
    const uint32_t* i = Find(key, h);
    if (i == nullptr) return;
    const uint32_t n = *i;
    index_.Erase(h, [n](uint32_t j) { return j == n; });
    Unlink(n);
    nodes_[n].value = V{};  // released now, not when the place is taken again
    nodes_[n].next = free_;
    free_ = n;
  }

  // f(key, value) for every entry, the most recently used first. `f` must not add or erase.
  template <class F>
  void ForEach(F f) {
    for (uint32_t n = head_; n != kNone; n = nodes_[n].next) f(nodes_[n].key, nodes_[n].value);
  }

  size_t size() const { return index_.size(); }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;

  struct Node {
    std::string key;
    uint64_t hash = 0;
    V value{};
    uint32_t prev = kNone;
    uint32_t next = kNone;
  };

  const uint32_t* Find(std::string_view key, uint64_t h) const {
    return index_.Find(h, [this, key](uint32_t n) { return nodes_[n].key == key; });
  }
  void Unlink(uint32_t n) {
    Node& node = nodes_[n];
    (node.prev == kNone ? head_ : nodes_[node.prev].next) = node.next;
    (node.next == kNone ? tail_ : nodes_[node.next].prev) = node.prev;
    node.prev = node.next = kNone;
  }
  void LinkFront(uint32_t n) {
    Node& node = nodes_[n];
    node.prev = kNone;
    node.next = head_;
    (head_ == kNone ? tail_ : nodes_[head_].prev) = n;
    head_ = n;
  }

  const size_t capacity_;
  std::vector<Node> nodes_;
  HashSlots<uint32_t> index_;
  uint32_t head_ = kNone;  // the most recently used
  uint32_t tail_ = kNone;  // the least recently used
  uint32_t free_ = kNone;  // erased places, chained through `next`
};

}  // namespace kt
