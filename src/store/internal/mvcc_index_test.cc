#include "store/internal/mvcc_index.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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

// What a watch replays from the log, once compaction has dropped what came before: each event
// as written, with the value it replaced only where that was live.
TEST(MvccIndexTest, EventsReplayedAfterACompactionCarryWhatEachWriteReplaced) {
  auto index = NewIndex();
  ASSERT_TRUE(index->CheckAndApply(Create("/k", "a")).has_value());  // 1
  ASSERT_TRUE(index->CheckAndApply(Update("/k", "b")).has_value());  // 2
  ASSERT_TRUE(index->CheckAndApply(Delete("/k")).has_value());       // 3
  ASSERT_TRUE(index->CheckAndApply(Create("/k", "c")).has_value());  // 4
  ASSERT_TRUE(index->CheckAndApply(Create("/j", "x")).has_value());  // 5
  ASSERT_TRUE(index->CheckAndApply(Update("/k", "d")).has_value());  // 6
  ASSERT_TRUE(index->CheckAndApply(Delete("/j")).has_value());       // 7
  ASSERT_TRUE(index->CheckAndApply(Update("/k", "e")).has_value());  // 8
  ASSERT_TRUE(index->CheckAndApply(Create("/j", "y")).has_value());  // 9: after a kept delete
  // Drops /k's versions 1 and 2 and its tombstone at 3: the create at 4 replaced nothing live.
  ASSERT_TRUE(index->Compact(3, nullptr).ok());
  index->Start();
  std::promise<std::vector<Event>> got;
  auto watch = index->Watch(WatchRequest::Prefix("/", 4), [&](WatchResponse r) {
    if (r.revision == 9) got.set_value(std::move(r.events));
  });
  ASSERT_TRUE(watch.has_value());
  auto future = got.get_future();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  const std::vector<Event> events = future.get();
  ASSERT_EQ(events.size(), 6u);
  auto text = [](const Bytes& b) { return b ? *b : std::string("<null>"); };
  struct Want {
    Event::Type type;
    std::string key, value, prev_value;
    Revision mod, create, prev_mod;
  };
  const Want want[] = {
      {Event::Type::kPut, "/k", "c", "<null>", 4, 4, 0},
      {Event::Type::kPut, "/j", "x", "<null>", 5, 5, 0},
      {Event::Type::kPut, "/k", "d", "c", 6, 4, 4},
      {Event::Type::kDelete, "/j", "<null>", "x", 7, 5, 5},
      {Event::Type::kPut, "/k", "e", "d", 8, 4, 6},
      {Event::Type::kPut, "/j", "y", "<null>", 9, 9, 0},
  };
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    SCOPED_TRACE("event " + std::to_string(i));
    EXPECT_EQ(e.type, want[i].type);
    EXPECT_EQ(e.key, want[i].key);
    EXPECT_EQ(text(e.value), want[i].value);
    EXPECT_EQ(text(e.prev_value), want[i].prev_value);
    EXPECT_EQ(e.mod_revision, want[i].mod);
    EXPECT_EQ(e.create_revision, want[i].create);
    EXPECT_EQ(e.prev_mod_revision, want[i].prev_mod);
  }
  EXPECT_TRUE(events[0].IsCreate());
  EXPECT_FALSE(events[2].IsCreate());
  EXPECT_TRUE(events[5].IsCreate());
  watch->reset();
  index->Shutdown();
}

TEST(MvccIndexTest, WritesThatFollowAWakeUpWithinTheGatherTimeGoOutInOneRound) {
  MvccIndex::Options options;
  options.compaction.interval = std::chrono::milliseconds(0);
  options.watch_gather = std::chrono::milliseconds(500);
  auto index = std::make_shared<MvccIndex>(std::move(options));
  index->Start();
  std::mutex mu;
  std::vector<size_t> rounds;  // events per response
  std::promise<void> first, all;
  auto watch = index->Watch(WatchRequest::Prefix("/"), [&](WatchResponse r) {
    std::lock_guard<std::mutex> lock(mu);
    if (r.events.empty()) return;
    rounds.push_back(r.events.size());
    if (r.revision == 1) first.set_value();
    if (r.revision == 6) all.set_value();
  });
  ASSERT_TRUE(watch.has_value());
  // A first write, delivered: the watch thread then sleeps for want of writes.
  ASSERT_TRUE(index->CheckAndApply(Create("/k0", "v")).has_value());
  auto delivered = first.get_future();
  ASSERT_EQ(delivered.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  // Five more, spaced so that without the gather time each would go out alone; the first of
  // them wakes the thread.
  for (int i = 1; i <= 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(index->CheckAndApply(Create("/k" + std::to_string(i), "v")).has_value());
  }
  auto future = all.get_future();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(rounds, (std::vector<size_t>{1, 5}));
  }
  watch->reset();
  index->Shutdown();
}

}  // namespace
}  // namespace kt::store::internal
