// HashSlots: the open-addressing table under the project's flat hash indexes (KeyIndex over the
// store's and the watch caches' maps, the informers' objects, the event recorder's LRU caches).
// A node-based hash map costs an allocation per entry and, per lookup, a bucket, a node and the
// key's characters to fetch from memory; here a lookup reads one slot (nearly always), and keys
// are compared only when the 64-bit hashes match.
//
//   HashSlots<Payload> slots;
//   const uint64_t h = HashSlots<Payload>::OfKey(key);
//   slots.Insert(h, payload);                                   // the caller keeps keys unique
//   Payload* p = slots.Find(h, [&](const Payload& p) { return KeyOf(p) == key; });
//   slots.Erase(h, [&](const Payload& p) { return &p == ...; });
//
// The caller hashes (so a hash computed once serves several tables, and tests can make keys
// collide) and tells which payload is the one it wants (payloads that share a hash are told
// apart by `eq`). Slots are probed linearly from the hash's home slot; the table is at most ¾
// full, and an erase shifts the rest of its run back, so there are no tombstones. An erased
// slot's payload is reset to Payload{}: whatever it held (a shared_ptr) is released at once.
// Pointers to payloads stay valid until the next Insert, Erase, Reserve or Clear.
// Thread safety: none of its own.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace kt {

template <class Payload>
class HashSlots {
 public:
  // A hash as the table keeps it: never 0, which marks an empty slot.
  static uint64_t Of(uint64_t hash) { return hash == 0 ? 1 : hash; }
  // A string key's hash as the table keeps it.
  static uint64_t OfKey(std::string_view key) { return Of(std::hash<std::string_view>()(key)); }

  // The payload with hash `h` for which eq(payload) holds, or nullptr.
  template <class Eq>
  Payload* Find(uint64_t h, Eq eq) {
    if (size_ == 0) return nullptr;
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.hash == 0) return nullptr;
      if (s.hash == h && eq(s.payload)) return &s.payload;
    }
  }
  template <class Eq>
  const Payload* Find(uint64_t h, Eq eq) const {
    return const_cast<HashSlots*>(this)->Find(h, eq);
  }
  // Adds a payload (the caller has made sure no equal one is there).
  Payload& Insert(uint64_t h, Payload payload) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Resize(std::max<size_t>(16, slots_.size() * 2));
    ++size_;
    return Place(h, std::move(payload));
  }
  // Removes the payload with hash `h` for which eq(payload) holds; false if there is none.
  template <class Eq>
  bool Erase(uint64_t h, Eq eq) {
    if (size_ == 0) return false;
    size_t hole = h & mask_;
    for (;; hole = (hole + 1) & mask_) {
      if (slots_[hole].hash == 0) return false;
      if (slots_[hole].hash == h && eq(slots_[hole].payload)) break;
    }
    // Later slots of the run move back into the hole when their home slot is at or before it,
    // so that no probe stops early at an empty slot.
    for (size_t j = (hole + 1) & mask_; slots_[j].hash != 0; j = (j + 1) & mask_) {
      const size_t home = slots_[j].hash & mask_;
      if (((j - home) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = std::move(slots_[j]);
        hole = j;
      }
    }
    slots_[hole] = Slot{};
    --size_;
    return true;
  }
  void Clear() {
    for (Slot& s : slots_) s = Slot{};
    size_ = 0;
  }
  // Room for `n` payloads without growing.
  void Reserve(size_t n) {
    size_t capacity = 16;
    while (capacity * 3 < n * 4) capacity *= 2;
    if (capacity > slots_.size()) Resize(capacity);
  }
  // f(payload) for every payload, in no particular order.
  template <class F>
  void ForEach(F f) const {
    for (const Slot& s : slots_) {
      if (s.hash != 0) f(s.payload);
    }
  }
  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t hash = 0;
    Payload payload{};
  };

  Payload& Place(uint64_t h, Payload payload) {
    size_t i = h & mask_;
    while (slots_[i].hash != 0) i = (i + 1) & mask_;
    slots_[i] = Slot{h, std::move(payload)};
    return slots_[i].payload;
  }
  // `capacity`: a power of two.
  void Resize(size_t capacity) {
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    mask_ = capacity - 1;
    for (Slot& s : old) {
      if (s.hash != 0) Place(s.hash, std::move(s.payload));
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace kt
