// Store: the revisioned key-value store behind the API server, shaped like etcd's v3 KV so that
// an etcd backend can later sit behind the same interface.
//
// Every successful write gets the next store revision: one global, gap-free, monotonic int64
// that the API server exposes as resourceVersion. Each key carries its create_revision and
// mod_revision. History is kept (MVCC) until compacted, so a range can be read at a past
// revision (consistent paging) and a watch can start in the past (list, then watch from the
// list's revision + 1).
//
//   std::unique_ptr<Store> store = NewMemoryStore();
//   Result<WriteResult> w = store->Create("/registry/pods/default/nginx", MakeBytes(json));
//   if (!w) return w.error();                    // kAlreadyExists, kInternal, ...
//   Result<KeyValue> kv = store->Get("/registry/pods/default/nginx");
//   store->UpdateAsync(key, MakeBytes(json2), kv->mod_revision,
//                      [](Result<WriteResult> r) { /* kConflict if someone wrote first */ });
//   auto watch = store->Watch(WatchRequest::Prefix("/registry/pods/", w->revision + 1),
//                             [](WatchResponse r) { /* post r to your executor */ });
//
// Thread safety: every method of Store is safe to call concurrently from any thread without
// external synchronization. In the memory and SQLite backends, reads (Get, Range, *Revision)
// are served from memory and never wait for disk.
//
// Ownership: values are `Bytes`, a shared immutable buffer. A value is encoded once by the
// caller; the store, its history, every watcher and every reader share that one buffer.
// Never mutate the string behind a Bytes after handing it to the store. A write may carry a
// stamp (WriteOp::stamp) that derives the kept value from the revision the write gets, so that
// a value can hold its own revision and still exist once.
//
// Writes complete through a callback (`done`), so an event-loop thread never waits on fsync:
//   - `done` is called exactly once, after the write is durable (SQLite: committed and synced)
//     and visible to reads and watches. Errors are values: kAlreadyExists, kNotFound,
//     kConflict, kBadRequest, kInternal (I/O), kUnavailable (store closing).
//   - It runs either on the calling thread before Write returns (memory backend; a write to
//     a closed store), or on the store's committer thread (SQLite), where every other write
//     waits for it: it must be quick and must not block. Post real work to your own executor.
//     A synchronous write (Create, Update, Delete) or Compact issued from there returns
//     kInternal instead of deadlocking.
//   - Writes submitted from one thread are applied in submission order.
//   The synchronous forms wait on the calling thread and return the same result.
//
// Watches: see `Watch` below. In short, a watch reads the store's shared event history through
// its own cursor: nothing is copied or queued per watcher, and writers never wait for
// watchers. Callbacks run on the store's single watch thread; a watcher that falls behind the
// compacted revision is ended with kGone and must relist.
//
// Errors: no exception leaves this module. Callbacks passed in must not throw.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace kt::store {

// The store's logical clock: every successful write increments it by exactly one.
// 0 means "none" (an empty store has revision 0).
using Revision = std::int64_t;

// A shared, immutable byte buffer (a JSON-encoded object).
using Bytes = std::shared_ptr<const std::string>;

inline Bytes MakeBytes(std::string s) { return std::make_shared<const std::string>(std::move(s)); }

// The key range end that selects every key starting with `prefix` (etcd's GetPrefixRangeEnd):
// "/a/" -> "/a0". For a prefix of only 0xff bytes (or empty) it is "\0": "to the end".
std::string PrefixEnd(std::string_view prefix);

struct KeyValue {
  std::string key;
  Bytes value;                   // never null for a present key
  Revision create_revision = 0;  // revision of the write that created this incarnation
  Revision mod_revision = 0;     // revision of the last write; the resourceVersion
};

// A current row of the store's file as start-up reads it (SqliteOptions::on_load): a live key's
// latest version.
struct LoadedRow {
  std::string_view key;
  Revision revision = 0;
  Revision create_revision = 0;
  const Bytes* value = nullptr;  // the buffer the store keeps; never null
};

// A key range, with etcd's conventions:
//   range_end == ""    -> the single key `key`
//   range_end == "\0"  -> every key >= `key`
//   otherwise          -> [key, range_end)
struct KeyRange {
  std::string key;
  std::string range_end;

  static KeyRange Single(std::string key) { return {std::move(key), ""}; }
  static KeyRange Prefix(std::string_view prefix) {
    return {std::string(prefix), PrefixEnd(prefix)};
  }
  bool Contains(std::string_view k) const;
};

struct RangeRequest {
  KeyRange range;
  // Read the store as of this revision; 0 = current. kGone if older than the compacted
  // revision, kBadRequest if newer than the current one.
  Revision revision = 0;
  // At most this many items; <= 0 = no limit. To page: read the next page from
  // last_key + '\0' at the first page's `revision`.
  std::int64_t limit = 0;

  static RangeRequest Prefix(std::string_view prefix, Revision revision = 0,
                             std::int64_t limit = 0) {
    return {KeyRange::Prefix(prefix), revision, limit};
  }
  static RangeRequest Single(std::string key, Revision revision = 0) {
    return {KeyRange::Single(std::move(key)), revision, 0};
  }
};

struct RangeResponse {
  std::vector<KeyValue> kvs;  // in key order
  Revision revision = 0;      // the revision read (the list's resourceVersion)
  bool more = false;          // true if the range holds more keys than `limit` returned
};

// Turns a write's value into the value the store keeps, once the write's revision is known:
// lets a caller put the revision inside the value (the API server's metadata.resourceVersion)
// without a second copy of the bytes. The store does not look inside values; what the stamp
// does to them is the caller's format. See WriteOp::stamp for when it runs.
using ValueStamp = std::function<Bytes(Revision revision, const Bytes& value)>;

struct WriteOp {
  enum class Type : unsigned char { kCreate, kUpdate, kDelete };
  Type type = Type::kCreate;
  std::string key;  // must not be empty
  Bytes value;      // kCreate, kUpdate; null is stored as the empty string
  // kUpdate, kDelete: the mod_revision the caller last read; kConflict if the key's
  // mod_revision differs. 0 = unconditional.
  Revision expected_mod_revision = 0;
  // kCreate, kUpdate, optional. Called once the write has passed its checks and been given its
  // revision, and before it is persisted, made visible or acknowledged: on the committer
  // (SQLite: the committer thread; memory: the writing thread, under the store's lock), once
  // per such write, so exactly once for every write that succeeds. `value` is the op's value
  // (never null: a null value is passed as the empty string). What it returns (null: the empty
  // string) replaces the value everywhere: it is what is persisted, what Get and Range return,
  // what watchers receive (Event::value, and prev_value of the next write), and
  // WriteResult::value. Its buffer is shared by all of them, never copied.
  // It must be quick and side-effect free (a write whose commit fails after the stamp is simply
  // dropped), must not block, throw or call into the store. Values read back from disk are
  // not stamped again: they were persisted stamped.
  ValueStamp stamp;
};

struct WriteResult {
  // The revision of this write: the new mod_revision (for kDelete, the revision of the delete).
  Revision revision = 0;
  // The value this write replaced or deleted (empty, value == nullptr, for kCreate).
  KeyValue prev;
  // kCreate, kUpdate: the value the store keeps (after WriteOp::stamp), the same buffer that
  // Get, Range and watchers hand out. Null for kDelete.
  Bytes value;
};

using WriteCallback = std::function<void(Result<WriteResult>)>;

struct Event {
  enum class Type : unsigned char { kPut, kDelete };
  Type type = Type::kPut;
  std::string key;
  Bytes value;                     // kPut: the new value; kDelete: null
  Bytes prev_value;                // the value before this event; null if the key did not exist
  Revision mod_revision = 0;       // the revision of this event
  Revision create_revision = 0;    // the create revision of the object written or deleted
  Revision prev_mod_revision = 0;  // mod_revision of prev_value; 0 if none

  // A kPut that brought the key into existence (Kubernetes ADDED, not MODIFIED).
  bool IsCreate() const { return type == Type::kPut && create_revision == mod_revision; }
};

struct WatchRequest {
  KeyRange range;
  // The first revision to deliver (inclusive, as in etcd; a Kubernetes watch from
  // resourceVersion N passes N + 1). 0 = from the next write on. kGone if
  // <= CompactedRevision(). A future revision is allowed: the watch waits for it.
  Revision start_revision = 0;
  // Also deliver responses with no events when the watch has moved past writes outside its
  // range, so the watcher learns the store's progress (a bookmark). At most one per batch
  // of writes.
  bool progress_notify = false;

  static WatchRequest Prefix(std::string_view prefix, Revision start_revision = 0) {
    return {KeyRange::Prefix(prefix), start_revision, false};
  }
  static WatchRequest Single(std::string key, Revision start_revision = 0) {
    return {KeyRange::Single(std::move(key)), start_revision, false};
  }
};

struct WatchResponse {
  // Matching events in revision order. Across responses of one watch: no event twice, none
  // skipped, revisions strictly increasing.
  std::vector<Event> events;
  // Every matching event with mod_revision <= `revision` has now been delivered.
  Revision revision = 0;
  // Not OK: the watch has ended and this is its last response. kGone: it fell behind the
  // compacted revision (relist, then watch again). kUnavailable: the store is closing.
  Status status;
};

using WatchCallback = std::function<void(WatchResponse)>;

// A live watch. Destroying it cancels the watch: when the destructor returns, the callback is
// not running (unless the destructor is called from inside the callback itself) and will not
// be called again. It may outlive the Store; after the store closes it does nothing.
class Watcher {
 public:
  virtual ~Watcher() = default;
};

// Automatic compaction, as kube-apiserver does it against etcd: every `interval`, compact to
// the revision seen one interval earlier, so that at least one interval of history is kept,
// and never within the last `min_retain_revisions` revisions.
struct CompactionOptions {
  std::chrono::milliseconds interval = std::chrono::minutes(5);  // zero: never automatically
  std::int64_t min_retain_revisions = 1000;
};

class Store {
 public:
  Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  // Completes every accepted write (acknowledging it), delivers every event, ends open
  // watches with kUnavailable, and joins the store's threads. Watcher handles may be destroyed
  // before or after. Must not be called from one of the store's own callbacks (it aborts).
  virtual ~Store() = default;

  // The current value of `key`; kNotFound if absent.
  virtual Result<KeyValue> Get(std::string_view key) = 0;
  virtual Result<RangeResponse> Range(const RangeRequest& request) = 0;
  // The revision of the last write that is durable and visible (0 for an empty store).
  virtual Revision CurrentRevision() = 0;
  // Reads at revisions below this fail with kGone; watches must start above it.
  virtual Revision CompactedRevision() = 0;

  // Applies `op` and calls `done` once with the outcome (see the header comment).
  // kCreate: kAlreadyExists if the key exists. kUpdate/kDelete: kNotFound if absent,
  // kConflict if expected_mod_revision is set and stale.
  virtual void Write(WriteOp op, WriteCallback done) = 0;

  void CreateAsync(std::string key, Bytes value, WriteCallback done);
  void UpdateAsync(std::string key, Bytes value, Revision expected_mod_revision,
                   WriteCallback done);
  void DeleteAsync(std::string key, Revision expected_mod_revision, WriteCallback done);

  // Synchronous forms: block the calling thread until the write is durable.
  Result<WriteResult> Create(std::string key, Bytes value);
  Result<WriteResult> Update(std::string key, Bytes value, Revision expected_mod_revision);
  Result<WriteResult> Delete(std::string key, Revision expected_mod_revision);
  Result<WriteResult> WriteSync(WriteOp op);

  // Starts a watch. `callback` runs on the store's watch thread, one call at a time per store,
  // never with a store lock held: it may read, submit asynchronous writes, start watches and
  // destroy them (its own included). It must not block, since all watchers share that
  // thread, so no synchronous writes: post the response to your own executor.
  // Watchers are not buffered: each reads the shared history through its own cursor, so a
  // slow watcher costs no memory and never slows a writer; it is ended with kGone when
  // compaction overtakes its cursor, and must then relist. kGone here if start_revision is
  // already compacted.
  virtual Result<std::unique_ptr<Watcher>> Watch(const WatchRequest& request,
                                                 WatchCallback callback) = 0;

  // Discards history before `revision`: reads at lower revisions and watches starting at or
  // below it fail with kGone afterwards. OK and a no-op if already compacted that far;
  // kBadRequest if `revision` is above the current revision.
  virtual Status Compact(Revision revision) = 0;
};

struct MemoryOptions {
  CompactionOptions compaction;
};

// A store that keeps everything in memory (tests, `kubetaint check`, simulations). Writes
// complete on the calling thread before Write returns.
std::unique_ptr<Store> NewMemoryStore(const MemoryOptions& options = {});

}  // namespace kt::store
