// SetIds: small ids for distinct lists of strings (a node's taints, or its labels), so that nodes
// with equal lists share one id and a plugin can decide once per id instead of once per node.
//
// An id is held by the nodes that have its list (Acquire, Release) and goes when the last one
// releases it, so the ids live at any time are at most the nodes', whatever the churn: a cluster
// autoscaler that marks each node it removes with a taint of its own (a timestamp as the value)
// leaves nothing behind. A released id's slot is reused with the next generation, so an id
// never names two lists: a table a plugin keeps by slot (SetSlot) checks the whole id to tell a
// reused slot from the list it recorded. A slot whose generations are used up is retired.
//
// Thread safety: none; owned by the scheduler's cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kt::scheduler {

// An id's slot: small, dense, from 1; the index of a plugin's table by set. 0 for id 0.
inline constexpr uint32_t kSetSlotBits = 20;
inline constexpr uint32_t SetSlot(uint32_t id) { return id & ((1u << kSetSlotBits) - 1); }

// A plugin's answers by set (a taint set, a label set), each for one epoch of the plugin's: a
// vector by slot, so that the per-node loops look them up without hashing. The whole id is
// checked, since a slot's set can change between the plugin's epochs. Id 0, a node the cache has
// not classified, is never kept.
template <typename T>
class PerSet {
 public:
  // The answer kept for `set` in `epoch`, or null.
  const T* Find(uint32_t set, uint64_t epoch) const {
    const uint32_t slot = SetSlot(set);
    if (slot < entries_.size() && entries_[slot].epoch == epoch && entries_[slot].set == set)
        [[likely]] {
      return &entries_[slot].value;
    }
    return nullptr;
  }
  void Put(uint32_t set, uint64_t epoch, T value) {
    const uint32_t slot = SetSlot(set);
    if (slot == 0) return;
    if (slot >= entries_.size()) entries_.resize(slot + 1);
    entries_[slot] = Entry{epoch, set, value};
  }

 private:
  struct Entry {
    uint64_t epoch = 0;
    uint32_t set = 0;
    T value{};
  };
  std::vector<Entry> entries_;
};

class SetIds {
 public:
  static constexpr uint32_t kMaxSlots = (1u << kSetSlotBits) - 1;
  static constexpr uint32_t kGenerations = 1u << (32 - kSetSlotBits);

  explicit SetIds(uint32_t max_slots = kMaxSlots) : max_slots_(max_slots) {}
  SetIds(const SetIds&) = delete;
  SetIds& operator=(const SetIds&) = delete;

  // The id of `list`, held once more. 0 when every slot is in use: the caller then treats the
  // node as unclassified (plugins decide for it alone), which is slower, never wrong.
  uint32_t Acquire(std::vector<std::string> list);
  // Gives up one hold on `id` (0 is ignored); the last one frees it.
  void Release(uint32_t id);

  // Distinct lists held now.
  size_t size() const { return ids_.size(); }
  // Slots ever allocated (in use, free, or retired): what tables by slot grow to.
  size_t slots() const { return slots_.size() - 1; }

 private:
  using Map = std::map<std::vector<std::string>, uint32_t>;
  struct Slot {
    uint32_t holds = 0;
    uint32_t generation = 0;
    Map::iterator entry;
  };

  const uint32_t max_slots_;
  Map ids_;
  std::vector<Slot> slots_ = std::vector<Slot>(1);  // slot 0 is never handed out
  std::vector<uint32_t> free_;                      // released slots, reused last in, first out
};

}  // namespace kt::scheduler
