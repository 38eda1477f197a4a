#include "core/hash_slots.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>

namespace kt {
namespace {

TEST(HashSlotsTest, ErasedPayloadsAreReleasedAndTheRestStayFound) {
  HashSlots<std::shared_ptr<int>> slots;
  std::vector<std::shared_ptr<int>> held;
  // Hashes 5 and 5 + 16 share a home slot; 20 and 21 sit at the end of the first 16 slots.
  const uint64_t hashes[] = {5, 21, 6, 20, 37};
  for (uint64_t h : hashes) {
    held.push_back(std::make_shared<int>(static_cast<int>(h)));
    slots.Insert(h, held.back());
  }
  auto is = [](int v) { return [v](const std::shared_ptr<int>& p) { return *p == v; }; };
  EXPECT_EQ(held[0].use_count(), 2);
  EXPECT_TRUE(slots.Erase(5, is(5)));
  EXPECT_EQ(held[0].use_count(), 1);
  EXPECT_FALSE(slots.Erase(5, is(5)));
  EXPECT_EQ(slots.Find(5, is(5)), nullptr);
  for (uint64_t h : {21, 6, 20, 37}) {
    const auto* p = slots.Find(h, is(static_cast<int>(h)));
    ASSERT_NE(p, nullptr) << h;
    EXPECT_EQ(**p, static_cast<int>(h));
  }
  std::set<int> seen;
  slots.ForEach([&](const std::shared_ptr<int>& p) { seen.insert(*p); });
  EXPECT_EQ(seen, (std::set<int>{21, 6, 20, 37}));
  EXPECT_EQ(slots.size(), 4u);
  slots.Clear();
  EXPECT_EQ(slots.size(), 0u);
  EXPECT_EQ(held[1].use_count(), 1);
}

TEST(HashSlotsTest, ZeroIsNeverAKeptHash) {
  EXPECT_EQ(HashSlots<int>::Of(0), 1u);
  EXPECT_EQ(HashSlots<int>::Of(42), 42u);
}

}  // namespace
}  // namespace kt
