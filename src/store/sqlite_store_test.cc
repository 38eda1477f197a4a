// What only the SQLite store promises: state and revisions survive a restart and kill -9, the
// file is locked against a second process, corruption is detected.
#include "store/sqlite_store.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/internal/hooked_vfs_test_util.h"
#include "store/store_test_util.h"

namespace kt::store {
namespace {

using testing::TempDir;
using testing::WatchRecorder;

SqliteOptions Options(const TempDir& dir) {
  SqliteOptions options;
  options.path = dir.File("store.db");
  options.compaction.interval = std::chrono::milliseconds(0);
  return options;
}

std::unique_ptr<Store> MustOpen(const SqliteOptions& options) {
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(options);
  EXPECT_TRUE(store) << store.error().ToString();
  return store ? std::move(*store) : nullptr;
}

// Runs `sql` (statements without results) on the closed store's file; SQLITE_OK on success.
int ExecOnClosedStore(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open(path.c_str(), &db);
  if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  sqlite3_close(db);
  return rc;
}

// Runs `sql` on the closed store's file and returns the first column of the first row.
std::int64_t QueryClosedStore(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  std::int64_t value = -1;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK) {
    const int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) value = sqlite3_column_int64(stmt, 0);
    if (rc == SQLITE_DONE) value = 0;
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

TEST(SqliteStoreTest, ReopenRestoresObjectsHistoryAndContinuesRevisions) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const SqliteOptions options = Options(dir);
  {
    std::unique_ptr<Store> store = MustOpen(options);
    ASSERT_TRUE(store->Create("/registry/pods/a", MakeBytes("a1")));     // 1
    ASSERT_TRUE(store->Update("/registry/pods/a", MakeBytes("a2"), 1));  // 2
    ASSERT_TRUE(store->Create("/registry/pods/b", MakeBytes("b1")));     // 3
    ASSERT_TRUE(store->Delete("/registry/pods/b", 3));                   // 4
    ASSERT_TRUE(store->Create("/registry/nodes/n", MakeBytes("n1")));    // 5
  }
  std::unique_ptr<Store> store = MustOpen(options);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->CurrentRevision(), 5);
  Result<KeyValue> a = store->Get("/registry/pods/a");
  ASSERT_TRUE(a);
  EXPECT_EQ(*a->value, "a2");
  EXPECT_EQ(a->create_revision, 1);
  EXPECT_EQ(a->mod_revision, 2);
  EXPECT_EQ(store->Get("/registry/pods/b").error().code(), StatusCode::kNotFound);

  // History survives too: a list at an old revision, and a watch replaying it.
  Result<RangeResponse> at3 = store->Range(RangeRequest::Prefix("/registry/pods/", 3));
  ASSERT_TRUE(at3);
  ASSERT_EQ(at3->kvs.size(), 2u);
  EXPECT_EQ(*at3->kvs[1].value, "b1");
  WatchRecorder recorder;
  auto watch = store->Watch(WatchRequest::Prefix("/registry/", 2), recorder.Callback());
  ASSERT_TRUE(watch);
  ASSERT_TRUE(recorder.WaitForRevision(5));
  std::vector<Event> events = recorder.events();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(*events[0].prev_value, "a1");
  EXPECT_EQ(events[2].type, Event::Type::kDelete);
  EXPECT_EQ(*events[2].prev_value, "b1");

  Result<WriteResult> next = store->Create("/registry/pods/c", MakeBytes("c1"));
  ASSERT_TRUE(next);
  EXPECT_EQ(next->revision, 6);
}

// After a reopen only current values are loaded; history is read from disk when a read at an
// old revision or a watch replay reaches it, and must come back exactly.
TEST(SqliteStoreTest, HistoryAfterReopenIsReadFromDiskExactly) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const SqliteOptions options = Options(dir);
  constexpr int kKeys = 20;
  constexpr int kRounds = 5;
  auto value = [](int k, int round) {
    std::string v = "k";
    return v.append(std::to_string(k)).append("-v").append(std::to_string(round));
  };
  auto key = [](int k) { return "/registry/nodes/n" + std::to_string(100 + k); };
  {
    std::unique_ptr<Store> store = MustOpen(options);
    for (int k = 0; k < kKeys; ++k) ASSERT_TRUE(store->Create(key(k), MakeBytes(value(k, 0))));
    for (int round = 1; round < kRounds; ++round) {
      for (int k = 0; k < kKeys; ++k) {
        ASSERT_TRUE(store->Update(key(k), MakeBytes(value(k, round)), 0));
      }
    }
    ASSERT_TRUE(store->Delete(key(0), 0));  // its every version is now history
  }
  // The load hands on_load each current row as it reads the file, newest first, with its value:
  // nothing superseded or deleted, and history is not copied out of the file.
  SqliteOptions reopen = options;
  std::vector<std::pair<Revision, std::string>> loaded;
  reopen.on_load = [&loaded](const LoadedRow& row) {
    ASSERT_NE(row.value, nullptr);
    ASSERT_NE(*row.value, nullptr);
    loaded.emplace_back(row.revision, **row.value);
  };
  std::unique_ptr<Store> store = MustOpen(reopen);
  ASSERT_NE(store, nullptr);
  const Revision last = kKeys * kRounds + 1;
  EXPECT_EQ(store->CurrentRevision(), last);
  // The last round's rows of keys 1..: key 0's was deleted at `last`.
  ASSERT_EQ(loaded.size(), static_cast<size_t>(kKeys - 1));
  for (size_t i = 0; i < loaded.size(); ++i) {
    const int k = kKeys - 1 - static_cast<int>(i);
    EXPECT_EQ(loaded[i].first, (kRounds - 1) * kKeys + k + 1) << i;
    EXPECT_EQ(loaded[i].second, value(k, kRounds - 1)) << i;
  }
  // At the end of each round, every key has that round's value.
  for (int round = 0; round < kRounds; ++round) {
    Result<RangeResponse> at =
        store->Range(RangeRequest::Prefix("/registry/nodes/", (round + 1) * kKeys));
    ASSERT_TRUE(at) << at.error().ToString();
    ASSERT_EQ(at->kvs.size(), static_cast<size_t>(kKeys)) << "round " << round;
    for (int k = 0; k < kKeys; ++k) {
      EXPECT_EQ(*at->kvs[k].value, value(k, round)) << "round " << round;
      EXPECT_EQ(at->kvs[k].mod_revision, round * kKeys + k + 1);
    }
  }
  Result<RangeResponse> now = store->Range(RangeRequest::Prefix("/registry/nodes/"));
  ASSERT_TRUE(now);
  EXPECT_EQ(now->kvs.size(), static_cast<size_t>(kKeys - 1));
  // A replay of all of it: every value and previous value as written.
  WatchRecorder recorder;
  auto watch = store->Watch(WatchRequest::Prefix("/registry/", 1), recorder.Callback());
  ASSERT_TRUE(watch);
  ASSERT_TRUE(recorder.WaitForRevision(last));
  const std::vector<Event> events = recorder.events();
  ASSERT_EQ(events.size(), static_cast<size_t>(last));
  for (int round = 0; round < kRounds; ++round) {
    for (int k = 0; k < kKeys; ++k) {
      const Event& e = events[round * kKeys + k];
      EXPECT_EQ(*e.value, value(k, round));
      if (round == 0) {
        EXPECT_EQ(e.prev_value, nullptr);
      } else {
        ASSERT_NE(e.prev_value, nullptr);
        EXPECT_EQ(*e.prev_value, value(k, round - 1));
      }
    }
  }
  EXPECT_EQ(events.back().type, Event::Type::kDelete);
  EXPECT_EQ(*events.back().prev_value, value(0, kRounds - 1));
  // Compacted history is gone, on disk as in memory.
  ASSERT_TRUE(store->Compact(3 * kKeys).ok());
  EXPECT_EQ(store->Range(RangeRequest::Prefix("/registry/", kKeys)).error().code(),
            StatusCode::kGone);
  Result<RangeResponse> at4 = store->Range(RangeRequest::Prefix("/registry/nodes/", 4 * kKeys));
  ASSERT_TRUE(at4) << at4.error().ToString();
  EXPECT_EQ(*at4->kvs[1].value, value(1, 3));
}

// Many more current rows than the loader hands to its copier at once, values of every size
// (empty, a few bytes, over a 16 KB page, over what the copier stages): on_load sees each current
// row exactly once, newest first, with its exact value, and the store holds exactly those values.
TEST(SqliteStoreTest, ALargeLoadHandsEveryCurrentValueOverInOrder) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const SqliteOptions options = Options(dir);
  constexpr int kKeys = 3000;
  auto key = [](int k) { return "/registry/pods/ns/p" + std::to_string(100000 + k); };
  auto value = [](int k, int round) {
    if (k % 97 == 0) return std::string();
    std::string v = "k";
    v.append(std::to_string(k)).append("-r").append(std::to_string(round)).append(":");
    v.append(k % 1009 == 0  ? 700000
             : k % 101 == 0 ? 40000
                            : static_cast<std::size_t>(k % 300),
             static_cast<char>('a' + k % 26));
    return v;
  };
  {
    std::unique_ptr<Store> store = MustOpen(options);
    for (int k = 0; k < kKeys; ++k) ASSERT_TRUE(store->Create(key(k), MakeBytes(value(k, 0))));
    // Every third key written again, every fifth deleted: history and tombstones between.
    for (int k = 0; k < kKeys; k += 3)
      ASSERT_TRUE(store->Update(key(k), MakeBytes(value(k, 1)), 0));
    for (int k = 0; k < kKeys; k += 5) ASSERT_TRUE(store->Delete(key(k), 0));
  }
  SqliteOptions reopen = options;
  std::vector<std::pair<Revision, std::string>> loaded;
  reopen.on_load = [&loaded](const LoadedRow& row) {
    ASSERT_NE(row.value, nullptr);
    ASSERT_NE(*row.value, nullptr);
    std::string entry(row.key);
    entry.append("=").append(**row.value);
    loaded.emplace_back(row.revision, std::move(entry));
  };
  std::unique_ptr<Store> store = MustOpen(reopen);
  ASSERT_NE(store, nullptr);
  Result<RangeResponse> now = store->Range(RangeRequest::Prefix("/registry/pods/"));
  ASSERT_TRUE(now);
  std::vector<std::pair<Revision, std::string>> want;
  for (const KeyValue& kv : now->kvs) {
    const int k = std::stoi(kv.key.substr(kv.key.size() - 6)) - 100000;
    EXPECT_EQ(*kv.value, value(k, k % 3 == 0 ? 1 : 0)) << kv.key;
    std::string entry = kv.key;
    entry.append("=").append(*kv.value);
    want.emplace_back(kv.mod_revision, std::move(entry));
  }
  EXPECT_EQ(want.size(), static_cast<std::size_t>(kKeys - kKeys / 5));
  std::sort(want.begin(), want.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  EXPECT_EQ(loaded, want);
}

TEST(SqliteStoreTest, SupersededValuesAreReleasedOnceWatchersPassThemAndReadBackFromDisk) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::unique_ptr<Store> store = MustOpen(Options(dir));
  ASSERT_NE(store, nullptr);
  // A watcher that keeps nothing, so that only the store could hold the values.
  std::atomic<Revision> seen{0};
  auto watch = store->Watch(WatchRequest::Prefix("/registry/", 1), [&](WatchResponse r) {
    if (r.status.ok()) seen = r.revision;
  });
  ASSERT_TRUE(watch);
  constexpr int kRounds = 4;
  const std::string key = "/registry/nodes/n1";
  auto value = [](int round) {
    std::string v = "v";
    return v.append(std::to_string(round)).append(100, 'x');
  };
  std::vector<std::weak_ptr<const std::string>> written;
  for (int round = 0; round < kRounds; ++round) {
    Bytes v = MakeBytes(value(round));
    written.push_back(v);
    ASSERT_TRUE(round == 0 ? store->Create(key, std::move(v))
                           : store->Update(key, std::move(v), 0));
  }
  // Every superseded value is let go once the watcher has read past its successor; the
  // current one is kept.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto released = [&] {
    for (int round = 0; round + 1 < kRounds; ++round) {
      if (!written[round].expired()) return false;
    }
    return true;
  };
  while (!(seen.load() == kRounds && released()) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_EQ(seen.load(), kRounds);
  EXPECT_TRUE(released());
  EXPECT_FALSE(written.back().expired());
  // Reads at old revisions and a replay read them back exactly.
  for (int round = 0; round < kRounds; ++round) {
    Result<RangeResponse> at = store->Range(RangeRequest::Prefix("/registry/", round + 1));
    ASSERT_TRUE(at) << at.error().ToString();
    ASSERT_EQ(at->kvs.size(), 1u);
    EXPECT_EQ(*at->kvs[0].value, value(round));
  }
  WatchRecorder recorder;
  auto replay = store->Watch(WatchRequest::Prefix("/registry/", 1), recorder.Callback());
  ASSERT_TRUE(replay);
  ASSERT_TRUE(recorder.WaitForRevision(kRounds));
  const std::vector<Event> events = recorder.events();
  ASSERT_EQ(events.size(), static_cast<size_t>(kRounds));
  for (int round = 0; round < kRounds; ++round) {
    EXPECT_EQ(*events[round].value, value(round));
    if (round > 0) {
      ASSERT_NE(events[round].prev_value, nullptr);
      EXPECT_EQ(*events[round].prev_value, value(round - 1));
    }
  }
}

// The committer applies a batch, runs its writes' callbacks, then wakes the watchers: a callback
// reads its own write, and a watcher gets a lone write with nothing after it to wake it.
TEST(SqliteStoreTest, AWriteIsReadableInItsCallbackAndReachesWatchersAfterIt) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::unique_ptr<Store> store = MustOpen(Options(dir));
  ASSERT_NE(store, nullptr);
  WatchRecorder recorder;
  auto watch = store->Watch(WatchRequest::Prefix("/registry/", 1), recorder.Callback());
  ASSERT_TRUE(watch);
  std::promise<std::string> read;
  store->CreateAsync("/registry/pods/a", MakeBytes("va"), [&](Result<WriteResult> r) {
    if (!r) return read.set_value("write failed: " + r.error().ToString());
    Result<KeyValue> kv = store->Get("/registry/pods/a");
    read.set_value(kv ? *kv->value : "not found: " + kv.error().ToString());
  });
  EXPECT_EQ(read.get_future().get(), "va");
  ASSERT_TRUE(recorder.WaitForRevision(1));
  const std::vector<Event> events = recorder.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(*events[0].value, "va");
}

TEST(SqliteStoreTest, CompactionDeletesSupersededRowsAndRevisionsNeverGoBack) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const SqliteOptions options = Options(dir);
  {
    std::unique_ptr<Store> store = MustOpen(options);
    ASSERT_TRUE(store->Create("/a", MakeBytes("1")));  // 1
    for (Revision r = 1; r < 10; ++r) {
      ASSERT_TRUE(store->Update("/a", MakeBytes(std::to_string(r + 1)), r));  // 2..10
    }
    ASSERT_TRUE(store->Create("/gone", MakeBytes("x")));  // 11
    ASSERT_TRUE(store->Delete("/gone", 0));               // 12
    ASSERT_TRUE(store->Compact(12).ok());
  }
  // Only /a's live version is left; the delete of /gone left nothing behind.
  EXPECT_EQ(QueryClosedStore(options.path, "SELECT count(*) FROM kv"), 1);
  EXPECT_EQ(QueryClosedStore(options.path, "SELECT revision FROM kv"), 10);
  {
    std::unique_ptr<Store> store = MustOpen(options);
    EXPECT_EQ(store->CompactedRevision(), 12);
    EXPECT_EQ(store->CurrentRevision(), 12) << "the last write's row is gone, its revision is not";
    EXPECT_EQ(*store->Get("/a")->value, "10");
    Result<WriteResult> w = store->Create("/b", MakeBytes("b"));
    ASSERT_TRUE(w);
    EXPECT_EQ(w->revision, 13);
  }
}

TEST(SqliteStoreTest, InterruptedCompactionIsFinishedAfterRestart) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  SqliteOptions options = Options(dir);
  {
    std::unique_ptr<Store> store = MustOpen(options);
    ASSERT_TRUE(store->Create("/a", MakeBytes("1")));
    for (Revision r = 1; r < 50; ++r) {
      ASSERT_TRUE(store->Update("/a", MakeBytes(std::to_string(r + 1)), r));
    }
  }
  // Simulate a crash after the compacted revision was recorded but before its rows went.
  ASSERT_EQ(ExecOnClosedStore(options.path,
                              "INSERT INTO meta(name, value) VALUES('compacted_revision', 40);"
                              "DELETE FROM kv WHERE revision <= 10"),
            SQLITE_OK);
  {
    std::unique_ptr<Store> store = MustOpen(options);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->CompactedRevision(), 40);
    Result<RangeResponse> at40 = store->Range(RangeRequest::Prefix("/", 40));
    ASSERT_TRUE(at40);
    EXPECT_EQ(*at40->kvs[0].value, "40");
    // One more write lets the committer run its pending deletes before close.
    ASSERT_TRUE(store->Create("/b", MakeBytes("b")));
  }
  EXPECT_EQ(QueryClosedStore(options.path, "SELECT count(*) FROM kv WHERE revision < 40"), 0);
  EXPECT_EQ(QueryClosedStore(options.path, "SELECT count(*) FROM kv"), 12);  // 40..50, /b
}

TEST(SqliteStoreTest, SecondOpenOfTheSameFileIsUnavailable) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::unique_ptr<Store> first = MustOpen(Options(dir));
  ASSERT_NE(first, nullptr);
  Result<std::unique_ptr<Store>> second = OpenSqliteStore(Options(dir));
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code(), StatusCode::kUnavailable) << second.error().ToString();
  // The first is unaffected.
  EXPECT_TRUE(first->Create("/k", MakeBytes("v")));
}

TEST(SqliteStoreTest, AGapInTheRevisionsIsReportedAsCorruption) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const SqliteOptions options = Options(dir);
  {
    std::unique_ptr<Store> store = MustOpen(options);
    for (int i = 0; i < 5; ++i)
      ASSERT_TRUE(store->Create("/k" + std::to_string(i), MakeBytes("v")));
  }
  ASSERT_EQ(ExecOnClosedStore(options.path, "DELETE FROM kv WHERE revision = 3"), SQLITE_OK);
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(options);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code(), StatusCode::kInternal);
  EXPECT_NE(store.error().message().find("corrupt"), std::string::npos) << store.error().ToString();
}

// A row whose prev_revision names a version of another key, or an older version of its own key,
// is corruption, found at load like a gap.
TEST(SqliteStoreTest, APrevRevisionThatIsNotTheKeysLastVersionIsReportedAsCorruption) {
  const struct {
    const char* name;
    const char* sql;
  } cases[] = {
      // Revision 4 updated /a (prev 3); point it at /b's revision 2 instead.
      {"another key's version", "UPDATE kv SET prev_revision = 2 WHERE revision = 4"},
      // Revision 5 updated /a again (prev 4); point it at /a's first version instead.
      {"an older version of its key", "UPDATE kv SET prev_revision = 1 WHERE revision = 5"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    ASSERT_TRUE(dir.ok());
    const SqliteOptions options = Options(dir);
    {
      std::unique_ptr<Store> store = MustOpen(options);
      ASSERT_TRUE(store->Create("/a", MakeBytes("a1")));     // 1
      ASSERT_TRUE(store->Create("/b", MakeBytes("b1")));     // 2
      ASSERT_TRUE(store->Update("/a", MakeBytes("a2"), 0));  // 3
      ASSERT_TRUE(store->Update("/a", MakeBytes("a3"), 0));  // 4
      ASSERT_TRUE(store->Update("/a", MakeBytes("a4"), 0));  // 5
    }
    ASSERT_EQ(ExecOnClosedStore(options.path, c.sql), SQLITE_OK);
    Result<std::unique_ptr<Store>> store = OpenSqliteStore(options);
    ASSERT_FALSE(store);
    EXPECT_EQ(store.error().code(), StatusCode::kInternal);
    EXPECT_NE(store.error().message().find("prev_revision does not match"), std::string::npos)
        << store.error().ToString();
  }
}

TEST(SqliteStoreTest, OpenOfAnUnwritablePathFails) {
  SqliteOptions options;
  options.path = "/nonexistent-dir/kt/store.db";
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(options);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code(), StatusCode::kInternal);
}

// ---------------------------------------------------------------------------------------------
// A failing disk (testing::RegisterHookedVfs): every xSync fails as fsync does on an I/O error,
// or every write to the WAL does. A commit sends its frames to the WAL at its sync
// (WalBatchingVfs), so either fails the commit.

TEST(SqliteStoreTest, AFailedSyncOrWalWriteFailsTheWriteAndRefusesWritesUntilReopened) {
  for (std::atomic<bool>* fault :
       {&testing::Hooks().fail_sync, &testing::Hooks().fail_wal_writes}) {
    SCOPED_TRACE(fault == &testing::Hooks().fail_sync ? "sync fails" : "WAL write fails");
    TempDir dir;
    ASSERT_TRUE(dir.ok());
    SqliteOptions options = Options(dir);
    options.vfs = testing::RegisterHookedVfs();
    {
      std::unique_ptr<Store> store = MustOpen(options);
      ASSERT_NE(store, nullptr);
      ASSERT_TRUE(store->Create("/a", MakeBytes("a")));
      *fault = true;
      Result<WriteResult> b = store->Create("/b", MakeBytes("b"));
      *fault = false;
      ASSERT_FALSE(b);
      EXPECT_EQ(b.error().code(), StatusCode::kInternal) << b.error().ToString();
      // The batch may be on disk or not: no later write may build on either guess.
      Result<WriteResult> c = store->Create("/c", MakeBytes("c"));
      ASSERT_FALSE(c);
      EXPECT_NE(c.error().message().find("reopened"), std::string::npos) << c.error().ToString();
      // Readers still see exactly the acknowledged state.
      EXPECT_EQ(*store->Get("/a")->value, "a");
      EXPECT_EQ(store->Get("/b").error().code(), StatusCode::kNotFound);
      EXPECT_EQ(store->CurrentRevision(), 1);
    }
    options.vfs.clear();
    std::unique_ptr<Store> store = MustOpen(options);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(*store->Get("/a")->value, "a");
    // Whether /b made it is what the disk says (after a failed WAL write: it did not); either
    // way the store is consistent.
    if (Result<KeyValue> b = store->Get("/b")) {
      EXPECT_EQ(fault, &testing::Hooks().fail_sync);
      EXPECT_EQ(b->mod_revision, 2);
    }
    EXPECT_EQ(store->Get("/c").error().code(), StatusCode::kNotFound);
    Result<WriteResult> d = store->Create("/d", MakeBytes("d"));
    ASSERT_TRUE(d) << d.error().ToString();
    EXPECT_EQ(d->revision, store->CurrentRevision());
  }
}

// A commit's WAL frames reach the disk in one write (batch_wal_writes, the default); without
// it, SQLite writes each frame's header and page apart.
TEST(SqliteStoreTest, ACommitWritesTheWalOnce) {
  for (const bool batch : {true, false}) {
    SCOPED_TRACE(batch ? "batched" : "not batched");
    TempDir dir;
    ASSERT_TRUE(dir.ok());
    SqliteOptions options = Options(dir);
    options.vfs = testing::RegisterHookedVfs();
    options.batch_wal_writes = batch;
    std::unique_ptr<Store> store = MustOpen(options);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Create("/warm", MakeBytes("w")));
    testing::Hooks().TakeWrites();
    testing::Hooks().record = true;
    ASSERT_TRUE(store->Create("/big", MakeBytes(std::string(60000, 'x'))));  // several pages
    testing::Hooks().record = false;
    int wal_writes = 0;
    for (const testing::VfsWrite& w : testing::Hooks().TakeWrites()) wal_writes += w.wal;
    if (batch) {
      EXPECT_EQ(wal_writes, 1);
    } else {
      EXPECT_GT(wal_writes, 4);
    }
    EXPECT_EQ(store->Get("/big")->value->size(), 60000u);
  }
}

// ---------------------------------------------------------------------------------------------
// Crash durability: a child process writes from many threads and reports each acknowledged
// write on a pipe; the parent kills it with SIGKILL mid-load, reopens the file and checks that
// every acknowledged write is there, at its revision, intact.

struct AckRecord {
  std::uint32_t thread;
  std::uint32_t seq;
  std::int64_t revision;
  std::uint32_t key_index;
  std::uint32_t type;  // 0 put, 1 delete
};
static_assert(sizeof(AckRecord) <= PIPE_BUF, "one write() per record must be atomic");

constexpr int kCrashThreads = 8;
constexpr int kKeysPerThread = 16;

std::string CrashKey(std::uint32_t thread, std::uint32_t key_index) {
  return "/registry/crash/t" + std::to_string(thread) + "/k" + std::to_string(key_index);
}

// A value whose every byte depends on (thread, seq), with a length that varies up to ~6 KB,
// so that a torn or mixed-up value cannot pass for the right one.
std::string CrashValue(std::uint32_t thread, std::uint32_t seq) {
  std::string v =
      "{\"t\":" + std::to_string(thread) + ",\"s\":" + std::to_string(seq) + ",\"p\":\"";
  const std::size_t pad = 200 + (seq * 7919u + thread * 104729u) % 6000u;
  for (std::size_t i = 0; i < pad; ++i) v += static_cast<char>('a' + (seq + thread + i) % 26);
  v += "\"}";
  return v;
}

[[noreturn]] void RunCrashChild(const std::string& path, int ack_fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  SqliteOptions options;
  options.path = path;
  options.compaction.interval = std::chrono::milliseconds(0);
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(options);
  if (!store) _exit(2);
  std::vector<std::thread> threads;
  for (std::uint32_t t = 0; t < kCrashThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<Revision> mod(kKeysPerThread, 0);  // 0: absent
      // Bounded: the parent kills us long before this ends.
      for (std::uint32_t seq = 0; seq < 1'000'000; ++seq) {
        const std::uint32_t k = seq % kKeysPerThread;
        const std::string key = CrashKey(t, k);
        AckRecord record{t, seq, 0, k, 0};
        Result<WriteResult> w;
        if (mod[k] == 0) {
          w = (*store)->Create(key, MakeBytes(CrashValue(t, seq)));
        } else if (seq % 5 == 0) {
          w = (*store)->Delete(key, mod[k]);
          record.type = 1;
        } else {
          w = (*store)->Update(key, MakeBytes(CrashValue(t, seq)), mod[k]);
        }
        if (!w) _exit(3);
        mod[k] = record.type == 1 ? 0 : w->revision;
        record.revision = w->revision;
        if (write(ack_fd, &record, sizeof(record)) != sizeof(record)) _exit(4);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  _exit(0);
}

TEST(SqliteCrashTest, AcknowledgedWritesSurviveKillNine) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.File("store.db");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    RunCrashChild(path, fds[1]);
  }
  close(fds[1]);

  // Let the child get well into its load, then kill it without warning.
  constexpr std::size_t kAcksBeforeKill = 3000;
  std::vector<AckRecord> acks;
  std::string pending;
  auto read_some = [&](int timeout_ms) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) return false;
    char buf[4096];
    const ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n <= 0) return false;
    pending.append(buf, static_cast<std::size_t>(n));
    while (pending.size() >= sizeof(AckRecord)) {
      AckRecord r;
      std::memcpy(&r, pending.data(), sizeof(r));
      pending.erase(0, sizeof(r));
      acks.push_back(r);
    }
    return true;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (acks.size() < kAcksBeforeKill && std::chrono::steady_clock::now() < deadline) {
    if (!read_some(1000)) {
      int status;
      if (waitpid(child, &status, WNOHANG) == child) {
        FAIL() << "writer child exited early with status " << status;
      }
    }
  }
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  while (read_some(0)) {
  }
  close(fds[0]);
  ASSERT_GE(acks.size(), kAcksBeforeKill);
  EXPECT_TRUE(pending.empty()) << "a torn ack record";

  SqliteOptions options;
  options.path = path;
  options.compaction.interval = std::chrono::milliseconds(0);
  std::unique_ptr<Store> store = MustOpen(options);  // validates every row's revision links
  ASSERT_NE(store, nullptr);

  Revision max_acked = 0;
  std::set<Revision> seen;
  for (const AckRecord& ack : acks) {
    max_acked = std::max(max_acked, ack.revision);
    EXPECT_TRUE(seen.insert(ack.revision).second) << "revision acknowledged twice";
    const std::string key = CrashKey(ack.thread, ack.key_index);
    Result<RangeResponse> at = store->Range(RangeRequest::Single(key, ack.revision));
    ASSERT_TRUE(at) << at.error().ToString();
    if (ack.type == 1) {
      EXPECT_TRUE(at->kvs.empty()) << key << " deleted at " << ack.revision;
      continue;
    }
    ASSERT_EQ(at->kvs.size(), 1u) << key << " written at " << ack.revision;
    EXPECT_EQ(at->kvs[0].mod_revision, ack.revision);
    EXPECT_TRUE(*at->kvs[0].value == CrashValue(ack.thread, ack.seq))
        << key << " at " << ack.revision << " has the wrong value";
  }
  // Writes after the last acknowledged one may exist (their batch committed, the ack was not
  // sent); none may be missing before it.
  EXPECT_GE(store->CurrentRevision(), max_acked);

  // Every value now in the store is one the child wrote, whole.
  Result<RangeResponse> all = store->Range(RangeRequest::Prefix("/registry/crash/"));
  ASSERT_TRUE(all);
  for (const KeyValue& kv : all->kvs) {
    unsigned thread = 0, seq = 0;
    ASSERT_EQ(std::sscanf(kv.value->c_str(), "{\"t\":%u,\"s\":%u,", &thread, &seq), 2) << kv.key;
    EXPECT_TRUE(*kv.value == CrashValue(thread, seq)) << kv.key << " is torn";
  }
  // And revisions continue from there.
  Result<WriteResult> next = store->Create("/after-crash", MakeBytes("x"));
  ASSERT_TRUE(next);
  EXPECT_EQ(next->revision, store->CurrentRevision());
}

}  // namespace
}  // namespace kt::store
