#include "store/internal/mvcc_index.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace kt::store::internal {
namespace {

WriteOp Op(WriteOp::Type type, std::string key, Bytes value = nullptr) {
  WriteOp op;
  op.type = type;
  op.key = std::move(key);
  op.value = std::move(value);
  return op;
}
WriteOp Create(std::string key, std::string value) {
  return Op(WriteOp::Type::kCreate, std::move(key), MakeBytes(std::move(value)));
}
WriteOp Update(std::string key, std::string value) {
  return Op(WriteOp::Type::kUpdate, std::move(key), MakeBytes(std::move(value)));
}
WriteOp Delete(std::string key) { return Op(WriteOp::Type::kDelete, std::move(key)); }

std::shared_ptr<MvccIndex> NewIndex() {
  MvccIndex::Options options;
  options.compaction.interval = std::chrono::milliseconds(0);  // only explicit compactions
  return std::make_shared<MvccIndex>(std::move(options));
}

// Every key's current value, in key order.
std::vector<std::string> Contents(MvccIndex& index) {
  RangeRequest all;
  all.range = KeyRange::Prefix("/");
  auto r = index.Range(all);
  EXPECT_TRUE(r.has_value());
  std::vector<std::string> out;
  if (!r) return out;
  for (const KeyValue& kv : r->kvs) out.push_back(kv.key + "=" + *kv.value);
  return out;
}

// Apply starts from where Check found each key: keys created in any order, written twice, deleted
// and created again within one batch all land where they belong.
TEST(MvccIndexTest, ABatchOfCreatesUpdatesAndDeletesOfOneKeyAppliesInOrder) {
  auto index = NewIndex();
  ASSERT_TRUE(index->CheckAndApply(Create("/m", "0")).has_value());
  WriteBatch batch = index->NewBatch();
  for (const WriteOp& op :
       {Create("/z", "1"), Create("/b", "2"), Create("/a", "3"), Update("/b", "4"), Delete("/m"),
        Create("/m", "5"), Delete("/a"), Create("/c", "6"), Update("/z", "7")}) {
    ASSERT_TRUE(index->Check(op, batch).has_value()) << op.key;
  }
  index->Apply(std::move(batch));
  EXPECT_EQ(Contents(*index), (std::vector<std::string>{"/b=4", "/c=6", "/m=5", "/z=7"}));
  EXPECT_EQ(index->current_revision(), 10);
  auto m = index->Get("/m");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->create_revision, 7);
}

// A compaction between a batch's Check and its Apply may erase a key the batch's check found (a
// deleted key, here created again): Apply does not use what it found then.
TEST(MvccIndexTest, AKeyErasedByCompactionBetweenCheckAndApplyIsCreatedAgain) {
  auto index = NewIndex();
  ASSERT_TRUE(index->CheckAndApply(Create("/a", "1")).has_value());
  ASSERT_TRUE(index->CheckAndApply(Create("/x", "1")).has_value());
  ASSERT_TRUE(index->CheckAndApply(Delete("/x")).has_value());
  ASSERT_TRUE(index->CheckAndApply(Create("/y", "1")).has_value());
  WriteBatch batch = index->NewBatch();
  ASSERT_TRUE(index->Check(Create("/x", "2"), batch).has_value());
  ASSERT_TRUE(index->Check(Update("/y", "2"), batch).has_value());
  ASSERT_TRUE(index->Compact(index->current_revision(), nullptr).ok());  // erases /x
  index->Apply(std::move(batch));
  EXPECT_EQ(Contents(*index), (std::vector<std::string>{"/a=1", "/x=2", "/y=2"}));
  auto x = index->Get("/x");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->create_revision, 5);
}

}  // namespace
}  // namespace kt::store::internal
