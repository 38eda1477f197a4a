// The Store contract, run against every backend.
#include "store/store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "store/sqlite_store.h"
#include "store/store_test_util.h"

namespace kt::store {
namespace {

using testing::TempDir;
using testing::WatchRecorder;

enum class Backend { kMemory, kSqlite };

std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kMemory ? "Memory" : "Sqlite";
}

CompactionOptions NoAutoCompaction() {
  CompactionOptions c;
  c.interval = std::chrono::milliseconds(0);
  return c;
}

class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    store_ = Open(NoAutoCompaction());
    ASSERT_NE(store_, nullptr);
  }

  std::unique_ptr<Store> Open(const CompactionOptions& compaction) {
    if (GetParam() == Backend::kMemory) return NewMemoryStore(MemoryOptions{compaction});
    SqliteOptions options;
    options.path = dir_.File("store.db");
    options.compaction = compaction;
    Result<std::unique_ptr<Store>> store = OpenSqliteStore(options);
    EXPECT_TRUE(store) << store.error().ToString();
    return store ? std::move(*store) : nullptr;
  }

  Revision MustCreate(const std::string& key, const std::string& value) {
    Result<WriteResult> r = store_->Create(key, MakeBytes(value));
    EXPECT_TRUE(r) << key << ": " << r.error().ToString();
    return r ? r->revision : 0;
  }
  Revision MustUpdate(const std::string& key, const std::string& value) {
    Result<WriteResult> r = store_->Update(key, MakeBytes(value), 0);
    EXPECT_TRUE(r) << key << ": " << r.error().ToString();
    return r ? r->revision : 0;
  }

  std::vector<std::string> Keys(const RangeResponse& r) {
    std::vector<std::string> keys;
    for (const KeyValue& kv : r.kvs) keys.push_back(kv.key);
    return keys;
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
};

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::Values(Backend::kMemory, Backend::kSqlite),
                         BackendName);

TEST_P(StoreTest, CreateThenGetSharesTheValueBuffer) {
  EXPECT_EQ(store_->CurrentRevision(), 0);
  Bytes value = MakeBytes(R"({"kind":"Pod"})");
  Result<WriteResult> w = store_->Create("/registry/pods/default/nginx", value);
  ASSERT_TRUE(w) << w.error().ToString();
  EXPECT_EQ(w->revision, 1);
  EXPECT_EQ(w->prev.value, nullptr);
  EXPECT_EQ(store_->CurrentRevision(), 1);

  Result<KeyValue> kv = store_->Get("/registry/pods/default/nginx");
  ASSERT_TRUE(kv) << kv.error().ToString();
  EXPECT_EQ(kv->key, "/registry/pods/default/nginx");
  EXPECT_EQ(*kv->value, R"({"kind":"Pod"})");
  // Encoded once: the store hands back the caller's buffer, not a copy.
  EXPECT_EQ(kv->value.get(), value.get());
  EXPECT_EQ(kv->create_revision, 1);
  EXPECT_EQ(kv->mod_revision, 1);
}

TEST_P(StoreTest, CreateOfAnExistingKeyFailsWithAlreadyExists) {
  MustCreate("/a", "1");
  Result<WriteResult> again = store_->Create("/a", MakeBytes("2"));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(*store_->Get("/a")->value, "1");
  EXPECT_EQ(store_->CurrentRevision(), 1) << "a failed write must not use a revision";
}

TEST_P(StoreTest, GetOfAMissingKeyIsNotFound) {
  Result<KeyValue> kv = store_->Get("/missing");
  ASSERT_FALSE(kv);
  EXPECT_EQ(kv.error().code(), StatusCode::kNotFound);
}

TEST_P(StoreTest, EmptyKeyIsRejected) {
  Result<WriteResult> w = store_->Create("", MakeBytes("x"));
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code(), StatusCode::kBadRequest);
}

TEST_P(StoreTest, NullAndEmptyValuesAndBinaryKeysRoundTrip) {
  ASSERT_TRUE(store_->Create("/null", nullptr));
  ASSERT_TRUE(store_->Create("/empty", MakeBytes("")));
  const std::string binary("a\0b\xff", 4);
  ASSERT_TRUE(store_->Create(std::string("/bin\0ary", 8), MakeBytes(binary)));
  EXPECT_EQ(*store_->Get("/null")->value, "");
  EXPECT_EQ(*store_->Get("/empty")->value, "");
  EXPECT_EQ(*store_->Get(std::string("/bin\0ary", 8))->value, binary);
}

TEST_P(StoreTest, UpdateIsCompareAndSwapOnModRevision) {
  const Revision created = MustCreate("/k", "v1");
  Result<WriteResult> w = store_->Update("/k", MakeBytes("v2"), created);
  ASSERT_TRUE(w) << w.error().ToString();
  EXPECT_EQ(w->revision, created + 1);
  EXPECT_EQ(*w->prev.value, "v1");
  EXPECT_EQ(w->prev.mod_revision, created);

  // A writer that read before v2 loses.
  Result<WriteResult> stale = store_->Update("/k", MakeBytes("v3"), created);
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code(), StatusCode::kConflict);

  Result<KeyValue> kv = store_->Get("/k");
  EXPECT_EQ(*kv->value, "v2");
  EXPECT_EQ(kv->create_revision, created) << "an update keeps the create revision";
  EXPECT_EQ(kv->mod_revision, created + 1);

  // Expected 0: unconditional.
  ASSERT_TRUE(store_->Update("/k", MakeBytes("v4"), 0));
  EXPECT_EQ(*store_->Get("/k")->value, "v4");
}

TEST_P(StoreTest, UpdateOfAMissingKeyIsNotFound) {
  Result<WriteResult> w = store_->Update("/missing", MakeBytes("x"), 0);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code(), StatusCode::kNotFound);
}

TEST_P(StoreTest, DeleteReturnsTheDeletedValueAndChecksModRevision) {
  const Revision created = MustCreate("/k", "v1");
  const Revision updated = MustUpdate("/k", "v2");

  Result<WriteResult> stale = store_->Delete("/k", created);
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code(), StatusCode::kConflict);

  Result<WriteResult> d = store_->Delete("/k", updated);
  ASSERT_TRUE(d) << d.error().ToString();
  EXPECT_EQ(d->revision, updated + 1);
  EXPECT_EQ(*d->prev.value, "v2");
  EXPECT_EQ(d->prev.create_revision, created);
  EXPECT_EQ(d->prev.mod_revision, updated);
  EXPECT_EQ(store_->Get("/k").error().code(), StatusCode::kNotFound);

  Result<WriteResult> again = store_->Delete("/k", 0);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), StatusCode::kNotFound);

  // A new incarnation gets a new create revision.
  const Revision recreated = MustCreate("/k", "v3");
  EXPECT_EQ(recreated, d->revision + 1);
  EXPECT_EQ(store_->Get("/k")->create_revision, recreated);
}

TEST_P(StoreTest, RangeSelectsPrefixSingleKeyAndOpenEnd) {
  for (const char* key : {"/registry/pods/a/1", "/registry/pods/b/1", "/registry/pods/b/2",
                          "/registry/podsx/a", "/registry/nodes/n1"}) {
    MustCreate(key, key);
  }
  Result<RangeResponse> pods = store_->Range(RangeRequest::Prefix("/registry/pods/"));
  ASSERT_TRUE(pods);
  EXPECT_EQ(Keys(*pods), (std::vector<std::string>{"/registry/pods/a/1", "/registry/pods/b/1",
                                                   "/registry/pods/b/2"}));
  EXPECT_EQ(pods->revision, 5);
  EXPECT_FALSE(pods->more);

  Result<RangeResponse> one = store_->Range(RangeRequest::Single("/registry/pods/b/1"));
  ASSERT_TRUE(one);
  EXPECT_EQ(Keys(*one), (std::vector<std::string>{"/registry/pods/b/1"}));

  Result<RangeResponse> tail =
      store_->Range(RangeRequest{KeyRange{"/registry/pods/b/", std::string(1, '\0')}, 0, 0});
  ASSERT_TRUE(tail);
  EXPECT_EQ(Keys(*tail), (std::vector<std::string>{"/registry/pods/b/1", "/registry/pods/b/2",
                                                   "/registry/podsx/a"}));

  Result<RangeResponse> all = store_->Range(RangeRequest::Prefix(""));
  ASSERT_TRUE(all);
  EXPECT_EQ(all->kvs.size(), 5u);
}

TEST_P(StoreTest, PagingAtAFixedRevisionIsAConsistentSnapshot) {
  std::map<std::string, std::string> original;
  for (int i = 0; i < 10; ++i) {
    const std::string key = "/registry/pods/ns/p" + std::to_string(i);
    MustCreate(key, "v1-" + std::to_string(i));
    original[key] = "v1-" + std::to_string(i);
  }
  MustCreate("/registry/nodes/n1", "node");

  Result<RangeResponse> page = store_->Range(RangeRequest::Prefix("/registry/pods/", 0, 3));
  ASSERT_TRUE(page);
  const Revision list_revision = page->revision;
  EXPECT_TRUE(page->more);

  // Writes between pages must not show up in the continued list.
  MustUpdate("/registry/pods/ns/p5", "v2");
  ASSERT_TRUE(store_->Delete("/registry/pods/ns/p7", 0));
  MustCreate("/registry/pods/ns/p45", "new");
  MustCreate("/registry/pods/ns/p99", "new");

  std::map<std::string, std::string> listed;
  int pages = 0;
  for (;;) {
    ++pages;
    ASSERT_EQ(page->revision, list_revision);
    for (const KeyValue& kv : page->kvs) {
      EXPECT_LE(kv.mod_revision, list_revision);
      listed[kv.key] = *kv.value;
    }
    if (!page->more) break;
    RangeRequest next = RangeRequest::Prefix("/registry/pods/", list_revision, 3);
    next.range.key = page->kvs.back().key + '\0';
    page = store_->Range(next);
    ASSERT_TRUE(page) << page.error().ToString();
  }
  EXPECT_EQ(pages, 4);
  EXPECT_EQ(listed, original);

  // And the current state has the later writes.
  Result<RangeResponse> now = store_->Range(RangeRequest::Prefix("/registry/pods/"));
  ASSERT_TRUE(now);
  EXPECT_EQ(now->kvs.size(), 11u);
}

TEST_P(StoreTest, RangeLimitSetsMoreOnlyWhenMoreRemain) {
  MustCreate("/p/a", "a");
  MustCreate("/p/b", "b");
  Result<RangeResponse> exact = store_->Range(RangeRequest::Prefix("/p/", 0, 2));
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->kvs.size(), 2u);
  EXPECT_FALSE(exact->more);
  ASSERT_TRUE(store_->Delete("/p/b", 0));
  Result<RangeResponse> after_delete = store_->Range(RangeRequest::Prefix("/p/", 0, 1));
  ASSERT_TRUE(after_delete);
  EXPECT_FALSE(after_delete->more) << "a deleted key is not 'more'";
}

TEST_P(StoreTest, RangeAtFutureOrCompactedRevisionFails) {
  MustCreate("/k", "1");
  MustUpdate("/k", "2");
  MustUpdate("/k", "3");
  Result<RangeResponse> future = store_->Range(RangeRequest::Prefix("/", 10));
  ASSERT_FALSE(future);
  EXPECT_EQ(future.error().code(), StatusCode::kBadRequest);

  ASSERT_TRUE(store_->Compact(2).ok());
  EXPECT_EQ(store_->CompactedRevision(), 2);
  Result<RangeResponse> old = store_->Range(RangeRequest::Prefix("/", 1));
  ASSERT_FALSE(old);
  EXPECT_EQ(old.error().code(), StatusCode::kGone);
  // The compacted revision itself can still be read.
  Result<RangeResponse> at = store_->Range(RangeRequest::Prefix("/", 2));
  ASSERT_TRUE(at) << at.error().ToString();
  ASSERT_EQ(at->kvs.size(), 1u);
  EXPECT_EQ(*at->kvs[0].value, "2");
}

TEST_P(StoreTest, CompactRejectsTheFutureAndIsIdempotent) {
  MustCreate("/k", "1");
  EXPECT_EQ(store_->Compact(5).code(), StatusCode::kBadRequest);
  EXPECT_TRUE(store_->Compact(1).ok());
  EXPECT_TRUE(store_->Compact(1).ok());
  EXPECT_TRUE(store_->Compact(0).ok());
  EXPECT_EQ(store_->CompactedRevision(), 1);
  EXPECT_EQ(*store_->Get("/k")->value, "1") << "compaction keeps current values";
}

TEST_P(StoreTest, CompactionKeepsTheStateAtTheCompactedRevision) {
  MustCreate("/a", "a1");
  MustUpdate("/a", "a2");                // 2
  MustCreate("/b", "b1");                // 3
  ASSERT_TRUE(store_->Delete("/b", 0));  // 4
  MustCreate("/c", "c1");                // 5
  MustUpdate("/a", "a3");                // 6
  ASSERT_TRUE(store_->Compact(5).ok());
  Result<RangeResponse> at5 = store_->Range(RangeRequest::Prefix("/", 5));
  ASSERT_TRUE(at5);
  ASSERT_EQ(Keys(*at5), (std::vector<std::string>{"/a", "/c"}));
  EXPECT_EQ(*at5->kvs[0].value, "a2");
  Result<RangeResponse> now = store_->Range(RangeRequest::Prefix("/"));
  ASSERT_TRUE(now);
  ASSERT_EQ(Keys(*now), (std::vector<std::string>{"/a", "/c"}));
  EXPECT_EQ(*now->kvs[0].value, "a3");
  EXPECT_EQ(now->kvs[0].create_revision, 1);
}

TEST_P(StoreTest, WatchReplaysHistoryFromARevisionThenFollows) {
  const Revision r1 = MustCreate("/registry/pods/a", "a1");
  const Revision r2 = MustUpdate("/registry/pods/a", "a2");
  const Revision r3 = MustCreate("/registry/pods/b", "b1");
  WatchRecorder recorder;
  Result<std::unique_ptr<Watcher>> watch =
      store_->Watch(WatchRequest::Prefix("/registry/pods/", r2), recorder.Callback());
  ASSERT_TRUE(watch) << watch.error().ToString();
  const Revision r4 = store_->Delete("/registry/pods/a", 0)->revision;
  const Revision r5 = MustCreate("/registry/pods/a", "a3");
  ASSERT_TRUE(recorder.WaitForRevision(r5));

  std::vector<Event> events = recorder.events();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].mod_revision, r2);
  EXPECT_EQ(events[0].type, Event::Type::kPut);
  EXPECT_FALSE(events[0].IsCreate());
  EXPECT_EQ(*events[0].value, "a2");
  EXPECT_EQ(*events[0].prev_value, "a1");
  EXPECT_EQ(events[0].prev_mod_revision, r1);
  EXPECT_EQ(events[1].mod_revision, r3);
  EXPECT_TRUE(events[1].IsCreate());
  EXPECT_EQ(events[1].prev_value, nullptr);
  EXPECT_EQ(events[2].mod_revision, r4);
  EXPECT_EQ(events[2].type, Event::Type::kDelete);
  EXPECT_EQ(events[2].value, nullptr);
  EXPECT_EQ(*events[2].prev_value, "a2") << "a delete carries the deleted object";
  EXPECT_EQ(events[2].create_revision, r1);
  EXPECT_EQ(events[3].mod_revision, r5);
  EXPECT_TRUE(events[3].IsCreate());
  EXPECT_TRUE(recorder.end().ok());
}

TEST_P(StoreTest, WatchSeesOnlyItsRange) {
  WatchRecorder pods, one_pod;
  auto pods_watch = store_->Watch(WatchRequest::Prefix("/registry/pods/"), pods.Callback());
  auto one_watch = store_->Watch(WatchRequest::Single("/registry/pods/b"), one_pod.Callback());
  ASSERT_TRUE(pods_watch);
  ASSERT_TRUE(one_watch);
  MustCreate("/registry/pods/a", "a");
  MustCreate("/registry/nodes/n", "n");
  MustCreate("/registry/pods/b", "b");
  const Revision last = MustCreate("/registry/podsx", "x");
  ASSERT_TRUE(pods.WaitForRevision(last - 1));
  ASSERT_TRUE(one_pod.WaitForRevision(last - 1));
  ASSERT_EQ(pods.events().size(), 2u);
  EXPECT_EQ(pods.events()[0].key, "/registry/pods/a");
  EXPECT_EQ(pods.events()[1].key, "/registry/pods/b");
  ASSERT_EQ(one_pod.events().size(), 1u);
  EXPECT_EQ(one_pod.events()[0].key, "/registry/pods/b");
}

TEST_P(StoreTest, WatchFromACompactedRevisionIsGone) {
  MustCreate("/k", "1");
  MustUpdate("/k", "2");
  const Revision r3 = MustUpdate("/k", "3");
  ASSERT_TRUE(store_->Compact(2).ok());
  WatchRecorder recorder;
  for (Revision start : {1, 2}) {
    Result<std::unique_ptr<Watcher>> gone =
        store_->Watch(WatchRequest::Prefix("/", start), recorder.Callback());
    ASSERT_FALSE(gone) << start;
    EXPECT_EQ(gone.error().code(), StatusCode::kGone);
  }
  // Just above the compacted revision still works: list at 2, then watch from 3.
  Result<std::unique_ptr<Watcher>> ok =
      store_->Watch(WatchRequest::Prefix("/", 3), recorder.Callback());
  ASSERT_TRUE(ok) << ok.error().ToString();
  ASSERT_TRUE(recorder.WaitForRevision(r3));
  ASSERT_EQ(recorder.events().size(), 1u);
  EXPECT_EQ(*recorder.events()[0].value, "3");
}

TEST_P(StoreTest, WatcherOvertakenByCompactionEndsWithGone) {
  const Revision r1 = MustCreate("/k", "1");
  // The first response blocks the callback until the test has written and compacted past
  // the watcher's cursor.
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  WatchRecorder recorder;
  WatchCallback record = recorder.Callback();
  std::atomic<int> calls{0};
  Result<std::unique_ptr<Watcher>> watch =
      store_->Watch(WatchRequest::Prefix("/", r1), [&](WatchResponse r) {
        if (calls++ == 0) {
          entered.set_value();
          released.wait();
        }
        record(std::move(r));
      });
  ASSERT_TRUE(watch);
  ASSERT_EQ(entered.get_future().wait_for(testing::kDeadline), std::future_status::ready);
  MustUpdate("/k", "2");
  const Revision r3 = MustUpdate("/k", "3");
  ASSERT_TRUE(store_->Compact(r3).ok());
  release.set_value();
  Status end = recorder.WaitForEnd();
  EXPECT_EQ(end.code(), StatusCode::kGone) << end.ToString();
  // Whatever it did get came in order from r1, with nothing after the gap.
  std::vector<Event> events = recorder.events();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].mod_revision, r1);
  for (std::size_t i = 1; i < events.size(); ++i) {
    EXPECT_EQ(events[i].mod_revision, events[i - 1].mod_revision + 1);
  }
}

TEST_P(StoreTest, ProgressNotifyReportsWritesOutsideTheRange) {
  WatchRecorder recorder;
  WatchRequest request = WatchRequest::Prefix("/registry/pods/");
  request.progress_notify = true;
  auto watch = store_->Watch(request, recorder.Callback());
  ASSERT_TRUE(watch);
  const Revision r = MustCreate("/registry/nodes/n1", "n");
  ASSERT_TRUE(recorder.WaitForRevision(r));
  EXPECT_TRUE(recorder.events().empty());
  EXPECT_GE(recorder.progress_only(), 1);
}

TEST_P(StoreTest, CancelledWatchGetsNoMoreCallbacks) {
  WatchRecorder recorder;
  auto watch = store_->Watch(WatchRequest::Prefix("/"), recorder.Callback());
  ASSERT_TRUE(watch);
  const Revision r1 = MustCreate("/a", "a");
  ASSERT_TRUE(recorder.WaitForRevision(r1));
  watch->reset();  // returns only once no callback is running
  MustCreate("/b", "b");
  // Another watch seeing /b proves the watch thread has moved past it.
  WatchRecorder witness;
  auto witness_watch = store_->Watch(WatchRequest::Prefix("/", r1), witness.Callback());
  ASSERT_TRUE(witness_watch);
  ASSERT_TRUE(witness.WaitForRevision(r1 + 1));
  EXPECT_EQ(recorder.events().size(), 1u);
}

TEST_P(StoreTest, CallbackMayCancelItsOwnWatch) {
  std::unique_ptr<Watcher> self;
  std::mutex mu;
  std::promise<void> cancelled;
  std::atomic<int> calls{0};
  auto watch = store_->Watch(WatchRequest::Prefix("/"), [&](WatchResponse) {
    if (calls++ > 0) return;
    std::lock_guard lock(mu);
    self.reset();
    cancelled.set_value();
  });
  ASSERT_TRUE(watch);
  {
    std::lock_guard lock(mu);
    self = std::move(*watch);
  }
  MustCreate("/a", "a");
  ASSERT_EQ(cancelled.get_future().wait_for(testing::kDeadline), std::future_status::ready);
  MustCreate("/b", "b");
  WatchRecorder witness;
  auto witness_watch = store_->Watch(WatchRequest::Prefix("/", 1), witness.Callback());
  ASSERT_TRUE(witness.WaitForRevision(2));
  EXPECT_EQ(calls.load(), 1);
}

TEST_P(StoreTest, ClosingTheStoreEndsWatchesWithUnavailable) {
  WatchRecorder recorder;
  auto watch = store_->Watch(WatchRequest::Prefix("/"), recorder.Callback());
  ASSERT_TRUE(watch);
  const Revision r = MustCreate("/a", "a");
  store_.reset();
  // Every acknowledged event is delivered before the end.
  EXPECT_EQ(recorder.WaitForEnd().code(), StatusCode::kUnavailable);
  EXPECT_EQ(recorder.revision(), r);
  ASSERT_EQ(recorder.events().size(), 1u);
  watch->reset();  // the handle may outlive the store
}

TEST_P(StoreTest, AsyncWritesFromOneThreadApplyInSubmissionOrder) {
  constexpr int kWrites = 200;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Revision> revisions;
  int done = 0;
  for (int i = 0; i < kWrites; ++i) {
    store_->CreateAsync("/async/" + std::to_string(i), MakeBytes("v"), [&](Result<WriteResult> r) {
      std::lock_guard lock(mu);
      revisions.push_back(r ? r->revision : -1);
      ++done;
      cv.notify_all();
    });
  }
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, testing::kDeadline, [&] { return done == kWrites; }));
  for (int i = 0; i < kWrites; ++i) {
    EXPECT_EQ(store_->Get("/async/" + std::to_string(i))->mod_revision, i + 1);
  }
}

TEST_P(StoreTest, ConflictingWritesInFlightTogetherKeepTheirOneAtATimeOutcomes) {
  // Submitted back to back, these land in one SQLite batch; the outcomes must be exactly
  // those of running them one at a time.
  const Revision r1 = MustCreate("/k", "v1");
  std::vector<std::promise<Result<WriteResult>>> results(5);
  auto done = [&](int i) {
    return [&results, i](Result<WriteResult> r) { results[i].set_value(std::move(r)); };
  };
  store_->UpdateAsync("/k", MakeBytes("v2"), r1, done(0));  // ok: r1 + 1
  store_->UpdateAsync("/k", MakeBytes("v3"), r1, done(1));  // stale: conflict
  store_->DeleteAsync("/k", r1 + 1, done(2));               // ok: r1 + 2
  store_->CreateAsync("/k", MakeBytes("v4"), done(3));      // ok again: r1 + 3
  store_->CreateAsync("/k", MakeBytes("v5"), done(4));      // exists
  std::vector<Result<WriteResult>> r;
  for (auto& p : results) r.push_back(p.get_future().get());
  ASSERT_TRUE(r[0]);
  EXPECT_EQ(r[0]->revision, r1 + 1);
  EXPECT_EQ(r[1].error().code(), StatusCode::kConflict);
  ASSERT_TRUE(r[2]);
  EXPECT_EQ(r[2]->revision, r1 + 2);
  EXPECT_EQ(*r[2]->prev.value, "v2");
  ASSERT_TRUE(r[3]);
  EXPECT_EQ(r[3]->revision, r1 + 3);
  EXPECT_EQ(r[4].error().code(), StatusCode::kAlreadyExists);
  Result<KeyValue> kv = store_->Get("/k");
  EXPECT_EQ(*kv->value, "v4");
  EXPECT_EQ(kv->create_revision, r1 + 3);
  EXPECT_EQ(store_->CurrentRevision(), r1 + 3);
}

// A stamp that writes the revision into the value, as the API server puts resourceVersion in.
// Counts its calls, to check "once per accepted write".
struct RevisionStamp {
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
  Bytes operator()(Revision revision, const Bytes& value) const {
    ++*calls;
    return MakeBytes(*value + "@" + std::to_string(revision));
  }
};

WriteOp StampedOp(WriteOp::Type type, std::string key, std::string value, Revision expected,
                  const RevisionStamp& stamp) {
  return WriteOp{.type = type,
                 .key = std::move(key),
                 .value = MakeBytes(std::move(value)),
                 .expected_mod_revision = expected,
                 .stamp = stamp};
}

TEST_P(StoreTest, StampedValueIsTheOneBufferKeptReadWatchedAndPersisted) {
  WatchRecorder recorder;
  auto watch = store_->Watch(WatchRequest::Prefix("/s/", 1), recorder.Callback());
  ASSERT_TRUE(watch);
  RevisionStamp stamp;
  Result<WriteResult> created =
      store_->WriteSync(StampedOp(WriteOp::Type::kCreate, "/s/a", "v", 0, stamp));
  ASSERT_TRUE(created) << created.error().ToString();
  EXPECT_EQ(*created->value, "v@1");
  Result<WriteResult> updated =
      store_->WriteSync(StampedOp(WriteOp::Type::kUpdate, "/s/a", "w", 1, stamp));
  ASSERT_TRUE(updated) << updated.error().ToString();
  EXPECT_EQ(*updated->value, "w@2");
  // The update replaced the stamped value, and the stamp never sees a write that failed its
  // checks.
  EXPECT_EQ(updated->prev.value.get(), created->value.get());
  EXPECT_FALSE(store_->WriteSync(StampedOp(WriteOp::Type::kUpdate, "/s/a", "x", 1, stamp)));
  EXPECT_FALSE(store_->WriteSync(StampedOp(WriteOp::Type::kCreate, "/s/a", "x", 0, stamp)));
  EXPECT_EQ(*stamp.calls, 2);
  // A write without a stamp keeps its value as it is.
  ASSERT_TRUE(store_->Create("/s/b", MakeBytes("plain")));

  // One buffer: the acknowledged value is what Get, Range and the watch hand out.
  Result<KeyValue> kv = store_->Get("/s/a");
  ASSERT_TRUE(kv);
  EXPECT_EQ(kv->value.get(), updated->value.get());
  Result<RangeResponse> range = store_->Range(RangeRequest::Prefix("/s/"));
  ASSERT_TRUE(range);
  ASSERT_EQ(range->kvs.size(), 2u);
  EXPECT_EQ(range->kvs[0].value.get(), updated->value.get());
  EXPECT_EQ(*range->kvs[1].value, "plain");
  // The past is stamped too. (SQLite releases a superseded value once every watcher has read
  // past it, and reads it back from disk: the same bytes, another buffer.)
  Result<RangeResponse> at1 = store_->Range(RangeRequest::Single("/s/a", 1));
  ASSERT_TRUE(at1);
  ASSERT_EQ(at1->kvs.size(), 1u);
  EXPECT_EQ(*at1->kvs[0].value, *created->value);
  if (GetParam() == Backend::kMemory) {
    EXPECT_EQ(at1->kvs[0].value.get(), created->value.get());
  }
  ASSERT_TRUE(recorder.WaitForEvents(3));
  std::vector<Event> events = recorder.events();
  EXPECT_EQ(events[0].value.get(), created->value.get());
  EXPECT_EQ(events[1].value.get(), updated->value.get());
  EXPECT_EQ(events[1].prev_value.get(), created->value.get());
  EXPECT_EQ(*events[2].value, "plain");
  watch->reset();

  if (GetParam() != Backend::kSqlite) return;
  // Persisted as stamped, and not stamped again when read back.
  store_.reset();
  store_ = Open(NoAutoCompaction());
  ASSERT_NE(store_, nullptr);
  EXPECT_EQ(*store_->Get("/s/a")->value, "w@2");
  EXPECT_EQ(*store_->Range(RangeRequest::Single("/s/a", 1))->kvs[0].value, "v@1");
  EXPECT_EQ(*store_->Get("/s/b")->value, "plain");
  WatchRecorder replay;
  auto again = store_->Watch(WatchRequest::Prefix("/s/", 1), replay.Callback());
  ASSERT_TRUE(again);
  ASSERT_TRUE(replay.WaitForEvents(3));
  EXPECT_EQ(*replay.events()[1].value, "w@2");
  EXPECT_EQ(*replay.events()[1].prev_value, "v@1");
}

TEST_P(StoreTest, StampSeesEachWriteOfABatchWithItsOwnRevision) {
  // Submitted back to back, these land in one SQLite batch: each stamp gets the revision its
  // write commits at, and a later write of the batch replaces the stamped value.
  RevisionStamp stamp;
  std::vector<std::promise<Result<WriteResult>>> results(4);
  auto done = [&](int i) {
    return [&results, i](Result<WriteResult> r) { results[i].set_value(std::move(r)); };
  };
  store_->Write(StampedOp(WriteOp::Type::kCreate, "/k", "a", 0, stamp), done(0));
  store_->Write(StampedOp(WriteOp::Type::kUpdate, "/k", "b", 1, stamp), done(1));
  store_->Write(StampedOp(WriteOp::Type::kUpdate, "/k", "stale", 1, stamp), done(2));
  store_->Write(StampedOp(WriteOp::Type::kDelete, "/k", "", 2, stamp), done(3));
  std::vector<Result<WriteResult>> r;
  for (auto& p : results) r.push_back(p.get_future().get());
  ASSERT_TRUE(r[0] && r[1] && r[3]);
  EXPECT_EQ(*r[0]->value, "a@1");
  EXPECT_EQ(*r[1]->value, "b@2");
  EXPECT_EQ(r[1]->prev.value.get(), r[0]->value.get());
  EXPECT_EQ(r[2].error().code(), StatusCode::kConflict);
  EXPECT_EQ(r[3]->value, nullptr) << "a delete keeps no value";
  EXPECT_EQ(r[3]->prev.value.get(), r[1]->value.get());
  EXPECT_EQ(*stamp.calls, 2) << "not for the conflict, not for the delete";
}

TEST_P(StoreTest, ConcurrentWritersGetUniqueGapFreeRevisionsAndWatchersSeeAllInOrder) {
  constexpr int kThreads = 8;
  constexpr int kKeysPerThread = 40;  // each key: create, update, update
  const Revision start = store_->CurrentRevision();
  WatchRecorder all, thread3;
  auto all_watch = store_->Watch(WatchRequest::Prefix("/registry/"), all.Callback());
  auto t3_watch = store_->Watch(WatchRequest::Prefix("/registry/t3/"), thread3.Callback());
  ASSERT_TRUE(all_watch);
  ASSERT_TRUE(t3_watch);

  std::vector<std::vector<Revision>> revisions(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kKeysPerThread; ++k) {
        const std::string key = "/registry/t" + std::to_string(t) + "/k" + std::to_string(k);
        Result<WriteResult> c = store_->Create(key, MakeBytes("0"));
        if (!c) continue;
        revisions[t].push_back(c->revision);
        Revision mod = c->revision;
        for (int u = 1; u <= 2; ++u) {
          Result<WriteResult> w = store_->Update(key, MakeBytes(std::to_string(u)), mod);
          if (!w) break;
          revisions[t].push_back(w->revision);
          mod = w->revision;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();

  std::vector<Revision> merged;
  for (const auto& r : revisions) {
    EXPECT_EQ(r.size(), kKeysPerThread * 3u);
    EXPECT_TRUE(std::is_sorted(r.begin(), r.end())) << "one thread's writes go forward";
    merged.insert(merged.end(), r.begin(), r.end());
  }
  std::sort(merged.begin(), merged.end());
  const Revision total = kThreads * kKeysPerThread * 3;
  ASSERT_EQ(static_cast<Revision>(merged.size()), total);
  for (Revision i = 0; i < total; ++i) ASSERT_EQ(merged[i], start + 1 + i) << "gap or duplicate";
  EXPECT_EQ(store_->CurrentRevision(), start + total);

  ASSERT_TRUE(all.WaitForRevision(start + total));
  std::vector<Event> events = all.events();
  ASSERT_EQ(static_cast<Revision>(events.size()), total);
  for (Revision i = 0; i < total; ++i) ASSERT_EQ(events[i].mod_revision, start + 1 + i);

  ASSERT_TRUE(thread3.WaitForEvents(kKeysPerThread * 3u));
  std::vector<Event> t3 = thread3.events();
  ASSERT_EQ(t3.size(), kKeysPerThread * 3u);
  EXPECT_EQ(std::vector<Revision>(revisions[3]), [&] {
    std::vector<Revision> r;
    for (const Event& e : t3) r.push_back(e.mod_revision);
    return r;
  }());
}

TEST_P(StoreTest, ConcurrentCompareAndSwapIncrementsLoseNoUpdate) {
  constexpr int kThreads = 8;
  constexpr int kIncrements = 25;
  ASSERT_TRUE(store_->Create("/counter", MakeBytes("0")));
  std::atomic<int> conflicts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        for (;;) {  // the GuaranteedUpdate loop
          Result<KeyValue> kv = store_->Get("/counter");
          const int next = std::stoi(*kv->value) + 1;
          Result<WriteResult> w =
              store_->Update("/counter", MakeBytes(std::to_string(next)), kv->mod_revision);
          if (w) break;
          if (w.error().code() != StatusCode::kConflict) return;
          ++conflicts;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(*store_->Get("/counter")->value, std::to_string(kThreads * kIncrements));
  EXPECT_EQ(store_->CurrentRevision(), 1 + kThreads * kIncrements);
}

TEST_P(StoreTest, AutomaticCompactionKeepsMinRetainRevisions) {
  store_.reset();
  CompactionOptions compaction;
  compaction.interval = std::chrono::milliseconds(10);
  compaction.min_retain_revisions = 5;
  store_ = Open(compaction);
  ASSERT_NE(store_, nullptr);
  for (int i = 0; i < 20; ++i) MustCreate("/k" + std::to_string(i), "v");
  // Two ticks after the last write compact to 20 - 5; never further.
  const auto deadline = std::chrono::steady_clock::now() + testing::kDeadline;
  while (store_->CompactedRevision() < 15 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_EQ(store_->CompactedRevision(), 15);
  EXPECT_EQ(store_->Range(RangeRequest::Prefix("/"))->kvs.size(), 20u);
}

TEST_P(StoreTest, SynchronousWriteFromAWriteCallbackDoesNotDeadlock) {
  std::promise<Result<WriteResult>> inner;
  store_->CreateAsync("/outer", MakeBytes("o"), [&](Result<WriteResult>) {
    inner.set_value(store_->Create("/inner", MakeBytes("i")));
  });
  std::future<Result<WriteResult>> f = inner.get_future();
  ASSERT_EQ(f.wait_for(testing::kDeadline), std::future_status::ready);
  Result<WriteResult> r = f.get();
  if (GetParam() == Backend::kMemory) {
    // The memory store completes on the caller's thread, where waiting is harmless.
    EXPECT_TRUE(r);
  } else {
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), StatusCode::kInternal);
  }
}

TEST(PrefixEndTest, IncrementsTheLastByteBelow0xff) {
  EXPECT_EQ(PrefixEnd("/a/"), "/a0");
  EXPECT_EQ(PrefixEnd("a\xff"), "b");
  EXPECT_EQ(PrefixEnd("\xff\xff"), std::string(1, '\0'));
  EXPECT_EQ(PrefixEnd(""), std::string(1, '\0'));
  EXPECT_TRUE(KeyRange::Prefix("/a/").Contains("/a/b"));
  EXPECT_FALSE(KeyRange::Prefix("/a/").Contains("/a0"));
  EXPECT_FALSE(KeyRange::Prefix("/a/").Contains("/a"));
}

}  // namespace
}  // namespace kt::store
