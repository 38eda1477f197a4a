#include "store/sqlite_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "core/mapped_memory.h"
#include "core/thread_name.h"
#include "store/internal/mvcc_index.h"
#include "store/internal/thread_annotations.h"
#include "store/internal/wal_batching_vfs.h"

namespace kt::store {
namespace {

// The layout is documented in src/store/README.md; bump on any incompatible change.
constexpr int kSchemaVersion = 1;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS kv (
  revision        INTEGER PRIMARY KEY,
  key             TEXT    NOT NULL,
  create_revision INTEGER NOT NULL,
  prev_revision   INTEGER NOT NULL,
  deleted         INTEGER NOT NULL,
  value           BLOB
);
CREATE TABLE IF NOT EXISTS meta (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);
)sql";

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;
struct StmtFinalizer {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using Stmt = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

Status SqlError(sqlite3* db, int rc, std::string_view what) {
  std::string message = "sqlite: " + std::string(what) + ": " + sqlite3_errmsg(db);
  // The file is locked by another process (another kubetaint on the same database).
  if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) {
    return Status(StatusCode::kUnavailable, std::move(message));
  }
  return Internal(std::move(message));
}

Status Exec(sqlite3* db, const char* sql) {
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  return rc == SQLITE_OK ? Status::Ok() : SqlError(db, rc, sql);
}

Result<Stmt> Prepare(sqlite3* db, const char* sql) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  Stmt stmt(raw);
  if (rc != SQLITE_OK) return Err(SqlError(db, rc, sql));
  return stmt;
}

// Runs a statement that returns no rows and resets it for reuse.
Status StepDone(sqlite3* db, sqlite3_stmt* stmt, std::string_view what) {
  const int rc = sqlite3_step(stmt);
  Status status = rc == SQLITE_DONE ? Status::Ok() : SqlError(db, rc, what);
  sqlite3_reset(stmt);
  return status;
}

// The first column of the first row of `sql`, or `fallback` if there is no row.
Result<std::int64_t> QueryInt(sqlite3* db, const char* sql, std::int64_t fallback) {
  Result<Stmt> stmt = Prepare(db, sql);
  if (!stmt) return Err(stmt.error());
  const int rc = sqlite3_step(stmt->get());
  if (rc == SQLITE_ROW) return sqlite3_column_int64(stmt->get(), 0);
  if (rc == SQLITE_DONE) return fallback;
  return Err(SqlError(db, rc, sql));
}

class SqliteStore final : public Store {
 public:
  SqliteStore(const SqliteOptions& options, Db db);
  ~SqliteStore() override;

  // Loads the database into memory and starts the committer and watch threads.
  Status Start();

  Result<KeyValue> Get(std::string_view key) override { return index_->Get(key); }
  Result<RangeResponse> Range(const RangeRequest& request) override {
    return index_->Range(request);
  }
  Revision CurrentRevision() override { return index_->current_revision(); }
  Revision CompactedRevision() override { return index_->compacted_revision(); }
  void Write(WriteOp op, WriteCallback done) override;
  Result<std::unique_ptr<Watcher>> Watch(const WatchRequest& request,
                                         WatchCallback callback) override {
    return index_->Watch(request, std::move(callback));
  }
  Status Compact(Revision revision) override;

 private:
  struct PendingWrite {
    WriteOp op;
    WriteCallback done;
  };
  struct PendingCompaction {
    Revision revision;
    std::function<void(Status)> done;  // may be empty
  };
  using Pending = std::variant<PendingWrite, PendingCompaction>;

  Status Load();
  // The value of the row at `revision` (history left on disk by Load); kNotFound if the row
  // is gone (compacted).
  Result<Bytes> LoadValue(Revision revision) KT_LOCKS_EXCLUDED(db_mu_);
  void Enqueue(Pending pending) KT_LOCKS_EXCLUDED(queue_mu_);
  void CommitterLoop() KT_LOCKS_EXCLUDED(queue_mu_);
  void CommitBatch(std::vector<Pending>& batch);
  // Writes `events`, the first `deletes` of pending_deletes_ and a changed compacted revision
  // in one transaction. On error nothing was written, unless failed_ is set.
  Status WriteTransaction(const std::vector<Event>& events, std::size_t deletes);

  const SqliteOptions options_;
  // Declared before the statements, so that they are finalized before it closes. Used by
  // Start, then by the committer thread's transactions and LoadValue, under db_mu_.
  Db db_;
  Stmt begin_, commit_, rollback_, insert_, delete_, set_compacted_, select_value_;
  std::mutex db_mu_;
  std::shared_ptr<internal::MvccIndex> index_;

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::vector<Pending> queue_ KT_GUARDED_BY(queue_mu_);
  bool stopping_ KT_GUARDED_BY(queue_mu_) = false;

  // Committer thread only (and Start, before it runs).
  std::deque<Revision> pending_deletes_;  // rows superseded by a compaction, not yet deleted
  bool compacted_dirty_ = false;          // the compacted revision is newer than on disk
  // Set when a commit failed in a way that leaves its outcome unknown (the batch may or may
  // not be on disk). Memory no longer provably matches the file, so every later write fails
  // with it until the store is reopened, which reloads the truth from the file.
  Status failed_;
  std::thread committer_;
};

SqliteStore::SqliteStore(const SqliteOptions& options, Db db)
    : options_(options), db_(std::move(db)) {
  internal::MvccIndex::Options index_options;
  index_options.compaction = options.compaction;
  // Automatic compaction must go through the committer, which owns the database; the index
  // (and its watch thread, which calls this) is shut down before `this` goes away.
  index_options.compact = [this](Revision revision) {
    Enqueue(PendingCompaction{revision, nullptr});
  };
  index_options.load_value = [this](Revision revision) { return LoadValue(revision); };
  index_options.release_history = true;
  index_ = std::make_shared<internal::MvccIndex>(std::move(index_options));
}

SqliteStore::~SqliteStore() {
  if (committer_.joinable()) {
    {
      std::lock_guard lock(queue_mu_);
      stopping_ = true;
    }
    queue_cv_.notify_one();
    committer_.join();
  }
  index_->Shutdown();
}

Status SqliteStore::Start() {
  sqlite3* db = db_.get();
  // EXCLUSIVE locking: no other process may use the file while we hold our in-memory copy of
  // it. It must be set before WAL mode, so that SQLite keeps the WAL index in heap memory.
  // Effective only while the file is empty, and before WAL mode is set.
  const std::string page_size = "PRAGMA page_size=" + std::to_string(options_.page_size);
  KT_RETURN_IF_ERROR(Exec(db, page_size.c_str()));
  KT_RETURN_IF_ERROR(Exec(db, "PRAGMA locking_mode=EXCLUSIVE"));
  Result<Stmt> wal = Prepare(db, "PRAGMA journal_mode=WAL");
  if (!wal) return wal.error();
  if (int rc = sqlite3_step(wal->get()); rc != SQLITE_ROW) return SqlError(db, rc, "journal_mode");
  const std::string mode = reinterpret_cast<const char*>(sqlite3_column_text(wal->get(), 0));
  if (mode != "wal") return Internal("sqlite: cannot enable WAL mode (journal_mode=" + mode + ")");
  wal->reset();
  // FULL: the WAL is synced at every commit, so an acknowledged write survives power loss.
  KT_RETURN_IF_ERROR(Exec(db, "PRAGMA synchronous=FULL"));

  // Take the write lock now, so that a second process fails here rather than later.
  KT_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE"));
  Status schema = [&]() -> Status {
    Result<std::int64_t> version = QueryInt(db, "PRAGMA user_version", 0);
    if (!version) return version.error();
    if (*version > kSchemaVersion) {
      return Internal("store schema version " + std::to_string(*version) +
                      " is newer than this kubetaint understands (" +
                      std::to_string(kSchemaVersion) + ")");
    }
    KT_RETURN_IF_ERROR(Exec(db, kSchema));
    const std::string set_version = "PRAGMA user_version=" + std::to_string(kSchemaVersion);
    KT_RETURN_IF_ERROR(Exec(db, set_version.c_str()));
    return Exec(db, "COMMIT");
  }();
  if (!schema.ok()) {
    (void)Exec(db, "ROLLBACK");
    return schema;
  }

  KT_RETURN_IF_ERROR(Load());

  const std::pair<Stmt*, const char*> statements[] = {
      {&begin_, "BEGIN"},
      {&commit_, "COMMIT"},
      {&rollback_, "ROLLBACK"},
      {&insert_,
       "INSERT INTO kv(revision, key, create_revision, prev_revision, deleted, value) "
       "VALUES(?1, ?2, ?3, ?4, ?5, ?6)"},
      {&delete_, "DELETE FROM kv WHERE revision = ?1"},
      {&set_compacted_,
       "INSERT OR REPLACE INTO meta(name, value) VALUES('compacted_revision', ?1)"},
      {&select_value_, "SELECT value FROM kv WHERE revision = ?1"},
  };
  for (const auto& [stmt, sql] : statements) {
    Result<Stmt> prepared = Prepare(db, sql);
    if (!prepared) return prepared.error();
    *stmt = std::move(*prepared);
  }

  committer_ = std::thread([this] {
    core::NameThisThread("kt-sqlite-commit");
    CommitterLoop();
  });
  index_->Start();
  return Status::Ok();
}

Status SqliteStore::Load() {
  sqlite3* db = db_.get();
  Result<std::int64_t> compacted =
      QueryInt(db, "SELECT value FROM meta WHERE name = 'compacted_revision'", 0);
  if (!compacted) return compacted.error();
  index_->BeginLoad(*compacted);

  // The rows are read newest first, so that a row is known to be history (a later row of its
  // key names it as its prev_revision) before its value would be read: only current values are
  // copied out of the file, and history stays on disk, where LoadRow would leave it anyway.
  // Each current value goes to on_load as it is read; the rows then load oldest first.
  Result<std::int64_t> lowest = QueryInt(db, "SELECT min(revision) FROM kv", 0);
  if (!lowest) return lowest.error();
  Result<std::int64_t> highest = QueryInt(db, "SELECT max(revision) FROM kv", 0);
  if (!highest) return highest.error();
  const auto span = static_cast<std::size_t>(*highest - *lowest + 1);
  std::vector<bool> superseded(span);
  Result<Stmt> rows =
      Prepare(db,
              "SELECT revision, key, create_revision, prev_revision, deleted, value FROM kv "
              "ORDER BY revision DESC");
  if (!rows) return rows.error();
  sqlite3_stmt* s = rows->get();
  // The rows and their keys live in mappings of their own, returned whole to the system once
  // loaded: reserving the span up front backs only the pages the rows fill, and keeps a vector's
  // growth (copies into ever larger blocks that malloc would then keep) out of the load.
  core::MappedMemory row_memory(span * sizeof(internal::StoredRow), /*huge=*/true);
  auto* newest_first = reinterpret_cast<internal::StoredRow*>(row_memory.data());
  std::size_t count = 0;
  struct Destroy {
    internal::StoredRow* rows;
    const std::size_t& count;
    ~Destroy() { std::destroy_n(rows, count); }
  } destroy{newest_first, count};
  core::MappedArena keys(std::size_t{2} << 20, /*huge=*/true);
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    const Revision revision = sqlite3_column_int64(s, 0);
    // Never past the bitmap, whatever the file holds.
    if (revision < *lowest || revision > *highest || count == span) {
      return Internal("sqlite: load: revision " + std::to_string(revision) +
                      " outside the file's range read before");
    }
    internal::StoredRow& row = *new (newest_first + count) internal::StoredRow();
    ++count;
    row.revision = revision;
    row.key = keys.Copy(std::string_view(reinterpret_cast<const char*>(sqlite3_column_text(s, 1)),
                                         static_cast<std::size_t>(sqlite3_column_bytes(s, 1))));
    row.create_revision = sqlite3_column_int64(s, 2);
    row.prev_revision = sqlite3_column_int64(s, 3);
    row.deleted = sqlite3_column_int64(s, 4) != 0;
    if (row.prev_revision >= *lowest && row.prev_revision < row.revision) {
      superseded[static_cast<std::size_t>(row.prev_revision - *lowest)] = true;
    }
    if (row.deleted) continue;
    if (superseded[static_cast<std::size_t>(row.revision - *lowest)]) {
      row.value = internal::OnDiskBytes();
    } else if (sqlite3_column_type(s, 5) != SQLITE_NULL) {
      // A null column here is corruption, which LoadRow reports; an empty blob reads as null
      // data with size 0.
      const auto* data = static_cast<const char*>(sqlite3_column_blob(s, 5));
      const auto size = static_cast<std::size_t>(sqlite3_column_bytes(s, 5));
      row.value =
          size == 0 ? internal::EmptyBytes() : std::make_shared<const std::string>(data, size);
      if (options_.on_load) {
        options_.on_load(LoadedRow{row.key, row.revision, row.create_revision, &row.value});
      }
    }
  }
  if (rc != SQLITE_DONE) return SqlError(db, rc, "load");
  rows->reset();
  std::vector<Revision> dropped;
  for (std::size_t i = count; i-- > 0;) {
    // The values of the versions this row supersedes stay on disk (LoadRow).
    KT_RETURN_IF_ERROR(
        index_->LoadRow(std::move(newest_first[i]), dropped, /*history_on_disk=*/true));
  }
  // Leftovers of a compaction interrupted by a restart.
  pending_deletes_.assign(dropped.begin(), dropped.end());
  return Status::Ok();
}

Result<Bytes> SqliteStore::LoadValue(Revision revision) {
  std::lock_guard lock(db_mu_);
  sqlite3* db = db_.get();
  sqlite3_stmt* s = select_value_.get();
  sqlite3_bind_int64(s, 1, revision);
  const int rc = sqlite3_step(s);
  Result<Bytes> value =
      Err(Status(StatusCode::kNotFound, "no row at revision " + std::to_string(revision)));
  if (rc == SQLITE_ROW) {
    const auto* data = static_cast<const char*>(sqlite3_column_blob(s, 0));
    const auto size = static_cast<std::size_t>(sqlite3_column_bytes(s, 0));
    value = size == 0 ? internal::EmptyBytes() : std::make_shared<const std::string>(data, size);
  } else if (rc != SQLITE_DONE) {
    value = Err(SqlError(db, rc, "read history"));
  }
  sqlite3_reset(s);
  return value;
}

void SqliteStore::Write(WriteOp op, WriteCallback done) {
  Enqueue(PendingWrite{std::move(op), std::move(done)});
}

Status SqliteStore::Compact(Revision revision) {
  if (internal::InWriteCompletion()) {
    return Internal("Compact from a write callback would deadlock");
  }
  std::promise<Status> promise;
  std::future<Status> future = promise.get_future();
  Enqueue(PendingCompaction{revision, [&promise](Status s) { promise.set_value(std::move(s)); }});
  return future.get();
}

void SqliteStore::Enqueue(Pending pending) {
  {
    std::lock_guard lock(queue_mu_);
    if (!stopping_) {
      queue_.push_back(std::move(pending));
      queue_cv_.notify_one();
      return;
    }
  }
  const Status closed(StatusCode::kUnavailable, "store is closed");
  if (auto* w = std::get_if<PendingWrite>(&pending)) {
    if (w->done) w->done(Err(closed));
  } else if (auto* c = std::get_if<PendingCompaction>(&pending)) {
    if (c->done) c->done(closed);
  }
}

void SqliteStore::CommitterLoop() {
  std::vector<Pending> batch;
  for (;;) {
    batch.clear();
    {
      std::unique_lock lock(queue_mu_);
      queue_cv_.wait(lock,
                     [&] { return stopping_ || !queue_.empty() || !pending_deletes_.empty(); });
      // A clean close finishes a compaction's deletes (in chunks, as always), so that the
      // next start has nothing left to do.
      if (queue_.empty() && stopping_ && pending_deletes_.empty()) break;
      if (queue_.size() <= options_.max_batch) {
        batch.swap(queue_);
      } else {
        auto end = queue_.begin() + static_cast<std::ptrdiff_t>(options_.max_batch);
        batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(end));
        queue_.erase(queue_.begin(), end);
      }
    }
    CommitBatch(batch);
  }
  if (compacted_dirty_ && failed_.ok()) (void)WriteTransaction({}, 0);
}

void SqliteStore::CommitBatch(std::vector<Pending>& batch) {
  // Check every write in order against the current state plus the batch's earlier writes:
  // exactly the outcomes they would have had one at a time.
  internal::WriteBatch writes = index_->NewBatch();
  std::vector<Result<WriteResult>> results(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (auto* w = std::get_if<PendingWrite>(&batch[i])) results[i] = index_->Check(w->op, writes);
  }

  const std::size_t deletes = std::min(pending_deletes_.size(), options_.compaction_rows_per_txn);
  Status written = failed_;
  if (written.ok() && (!writes.events().empty() || deletes > 0 || compacted_dirty_)) {
    written = WriteTransaction(writes.events(), deletes);
  }
  if (written.ok()) {
    pending_deletes_.erase(pending_deletes_.begin(),
                           pending_deletes_.begin() + static_cast<std::ptrdiff_t>(deletes));
    compacted_dirty_ = false;
    // Durable now: make it visible, then acknowledge.
    index_->Apply(std::move(writes), /*wake_watchers=*/false);
  } else {
    for (Result<WriteResult>& r : results) {
      if (r) r = Err(written);
    }
    // Do not retry deletes against a failing disk in a loop; the next start finds the rows
    // again (or the compaction was never recorded, which is as harmless).
    pending_deletes_.clear();
  }

  internal::WriteCompletionScope completion;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (auto* c = std::get_if<PendingCompaction>(&batch[i])) {
      const Revision before = index_->compacted_revision();
      std::vector<Revision> dropped;
      Status s = index_->Compact(c->revision, &dropped);
      pending_deletes_.insert(pending_deletes_.end(), dropped.begin(), dropped.end());
      if (index_->compacted_revision() != before) compacted_dirty_ = true;
      if (c->done) c->done(std::move(s));
    } else {
      auto& w = std::get<PendingWrite>(batch[i]);
      if (w.done) w.done(std::move(results[i]));
    }
  }
  // Watchers are woken after the writers have their answers.
  index_->WakeWatchers();
}

Status SqliteStore::WriteTransaction(const std::vector<Event>& events, std::size_t deletes) {
  std::lock_guard lock(db_mu_);
  sqlite3* db = db_.get();
  KT_RETURN_IF_ERROR(StepDone(db, begin_.get(), "begin"));
  Status status = [&]() -> Status {
    sqlite3_stmt* s = insert_.get();
    for (const Event& e : events) {
      const bool deleted = e.type == Event::Type::kDelete;
      sqlite3_bind_int64(s, 1, e.mod_revision);
      sqlite3_bind_text(s, 2, e.key.data(), static_cast<int>(e.key.size()), SQLITE_STATIC);
      sqlite3_bind_int64(s, 3, e.create_revision);
      sqlite3_bind_int64(s, 4, e.prev_mod_revision);
      sqlite3_bind_int(s, 5, deleted ? 1 : 0);
      if (deleted) {
        sqlite3_bind_null(s, 6);
      } else {
        sqlite3_bind_blob(s, 6, e.value->data(), static_cast<int>(e.value->size()), SQLITE_STATIC);
      }
      KT_RETURN_IF_ERROR(StepDone(db, s, "insert"));
    }
    for (std::size_t i = 0; i < deletes; ++i) {
      sqlite3_bind_int64(delete_.get(), 1, pending_deletes_[i]);
      KT_RETURN_IF_ERROR(StepDone(db, delete_.get(), "compact"));
    }
    if (compacted_dirty_) {
      sqlite3_bind_int64(set_compacted_.get(), 1, index_->compacted_revision());
      KT_RETURN_IF_ERROR(StepDone(db, set_compacted_.get(), "compact"));
    }
    // With synchronous=FULL the commit returns only after the WAL is synced. If it fails
    // (say, fsync reports EIO) the batch may still be on disk.
    Status committed = StepDone(db, commit_.get(), "commit");
    if (!committed.ok()) failed_ = committed.WithPrefix("writes refused until reopened: ");
    return committed;
  }();
  if (!status.ok() && !sqlite3_get_autocommit(db)) {
    if (Status s = StepDone(db, rollback_.get(), "rollback"); !s.ok() && failed_.ok()) {
      failed_ = s.WithPrefix("writes refused until reopened: ");
    }
  }
  return status;
}

}  // namespace

Result<std::unique_ptr<Store>> OpenSqliteStore(const SqliteOptions& options) {
  if (options.path.empty()) return Err(BadRequest("sqlite store: empty path"));
  if (options.max_batch == 0 || options.compaction_rows_per_txn == 0) {
    return Err(BadRequest("sqlite store: max_batch and compaction_rows_per_txn must be > 0"));
  }
  if (options.page_size < 512 || options.page_size > 65536 ||
      (options.page_size & (options.page_size - 1)) != 0) {
    return Err(BadRequest("sqlite store: page_size must be a power of two in [512, 65536]"));
  }
  std::string vfs = options.vfs;
  if (options.batch_wal_writes) {
    Result<std::string> batching = internal::WalBatchingVfs(options.vfs);
    if (!batching) return Err(batching.error());
    vfs = std::move(*batching);
  }
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(options.path.c_str(), &raw,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                 vfs.empty() ? nullptr : vfs.c_str());
  Db db(raw);
  if (rc != SQLITE_OK) {
    return Err(Internal("sqlite: cannot open " + options.path + ": " +
                        (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc))));
  }
  sqlite3_extended_result_codes(raw, 1);
  auto store = std::make_unique<SqliteStore>(options, std::move(db));
  if (Status s = store->Start(); !s.ok()) return Err(s.WithPrefix(options.path + ": "));
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace kt::store
