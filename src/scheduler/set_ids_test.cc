#include "scheduler/set_ids.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kt::scheduler {
namespace {

std::vector<std::string> List(const std::string& value) { return {"key", value, "NoSchedule"}; }

TEST(SetIdsTest, EqualListsShareAnIdHeldOncePerAcquire) {
  SetIds ids;
  const uint32_t a = ids.Acquire(List("1"));
  const uint32_t b = ids.Acquire(List("2"));
  EXPECT_NE(a, 0u);
  EXPECT_NE(a, b);
  EXPECT_EQ(ids.Acquire(List("1")), a);
  EXPECT_EQ(ids.size(), 2u);
  ids.Release(a);
  EXPECT_EQ(ids.size(), 2u);  // one hold left
  EXPECT_EQ(ids.Acquire(List("1")), a);
  ids.Release(a);
  ids.Release(a);
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids.slots(), 2u);
}

TEST(SetIdsTest, AFreedSlotComesBackUnderAnotherId) {
  SetIds ids;
  const uint32_t a = ids.Acquire(List("1"));
  ids.Release(a);
  EXPECT_EQ(ids.size(), 0u);
  const uint32_t b = ids.Acquire(List("2"));
  EXPECT_EQ(SetSlot(b), SetSlot(a));  // the table a plugin keeps does not grow
  EXPECT_NE(b, a);                    // but the id tells the new list from the old
  EXPECT_EQ(ids.slots(), 1u);
  // The old id is not held any more: releasing it leaves the new list alone.
  ids.Release(a);
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids.Acquire(List("2")), b);
}

TEST(SetIdsTest, ReleasingWhatIsNotHeldChangesNothing) {
  SetIds ids;
  const uint32_t a = ids.Acquire(List("1"));
  ids.Release(0);
  ids.Release(a + 1);                     // a slot never handed out
  ids.Release(a + (1u << kSetSlotBits));  // a later generation of a's slot
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids.Acquire(List("1")), a);
}

// Churn through one slot: every generation is used once, then the slot is retired and a new one
// is taken, so that no id is ever handed out twice.
TEST(SetIdsTest, ASlotIsRetiredAfterItsLastGeneration) {
  SetIds ids;
  std::vector<bool> seen(size_t{1} << 32 >> kSetSlotBits, false);
  for (uint32_t i = 0; i < SetIds::kGenerations; ++i) {
    const uint32_t id = ids.Acquire(List(std::to_string(i)));
    ASSERT_EQ(SetSlot(id), 1u) << i;
    ASSERT_FALSE(seen[id >> kSetSlotBits]) << i;
    seen[id >> kSetSlotBits] = true;
    ids.Release(id);
  }
  const uint32_t next = ids.Acquire(List("next"));
  EXPECT_EQ(SetSlot(next), 2u);
  EXPECT_EQ(ids.slots(), 2u);
}

TEST(SetIdsTest, NoSlotLeftLeavesTheListUnclassified) {
  SetIds ids(/*max_slots=*/2);
  const uint32_t a = ids.Acquire(List("1"));
  const uint32_t b = ids.Acquire(List("2"));
  EXPECT_NE(a, 0u);
  EXPECT_NE(b, 0u);
  EXPECT_EQ(ids.Acquire(List("3")), 0u);
  EXPECT_EQ(ids.Acquire(List("1")), a);  // a list held already still has its id
  ids.Release(b);
  EXPECT_NE(ids.Acquire(List("3")), 0u);
}

}  // namespace
}  // namespace kt::scheduler
