#include "scheduler/set_ids.h"

#include <utility>

namespace kt::scheduler {

uint32_t SetIds::Acquire(std::vector<std::string> list) {
  if (auto it = ids_.find(list); it != ids_.end()) {
    ++slots_[SetSlot(it->second)].holds;
    return it->second;
  }
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else if (slots_.size() <= max_slots_) {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    return 0;
  }
  Slot& s = slots_[slot];
  const uint32_t id = s.generation << kSetSlotBits | slot;
  s.holds = 1;
  s.entry = ids_.emplace(std::move(list), id).first;
  return id;
}

void SetIds::Release(uint32_t id) {
  const uint32_t slot = SetSlot(id);
  if (slot == 0 || slot >= slots_.size()) return;
  Slot& s = slots_[slot];
  if (s.holds == 0 || s.entry->second != id) return;  // not held: a caller's bug, kept harmless
  if (--s.holds > 0) return;
  ids_.erase(s.entry);
  s.entry = Map::iterator();
  if (++s.generation < kGenerations) free_.push_back(slot);  // else retired for good
}

}  // namespace kt::scheduler
