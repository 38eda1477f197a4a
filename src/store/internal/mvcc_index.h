// MvccIndex: the in-memory state shared by the memory and SQLite stores: every key's versions
// since the compacted revision, the event log that watches read, and the watch thread.
//
// Internal to src/store. The backends own the write path: MvccIndex checks writes against the
// current state and applies them, but durability (and the decision of when a write becomes
// visible) belongs to the backend.
//
// Thread safety: reads, Watch and Compact are safe from any thread. Writes (Check, Apply,
// CheckAndApply, LoadRow) must be serialized by the caller: one writer at a time, which is
// what makes a Check's verdict still true at the Apply that follows it. (A Compact in
// between does not change that: it keeps every key's latest live version, and only turns a
// deleted key's tombstone into absence.)
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/key_index.h"
#include "core/status.h"
#include "store/internal/thread_annotations.h"
#include "store/store.h"

namespace kt::store::internal {

// True on a thread that is running write callbacks which the store's committer waits for;
// a synchronous write there would wait for itself. Set by the SQLite committer.
bool InWriteCompletion();
class WriteCompletionScope {
 public:
  WriteCompletionScope();
  ~WriteCompletionScope();
  WriteCompletionScope(const WriteCompletionScope&) = delete;
  WriteCompletionScope& operator=(const WriteCompletionScope&) = delete;
};

// The value stored for a null Bytes.
const Bytes& EmptyBytes();
// The value of a version kept on disk only (history loaded at start-up): a placeholder, never
// handed to a reader. Options::load_value reads the real value when a read needs it.
const Bytes& OnDiskBytes();
inline bool IsOnDisk(const Bytes& value) { return value.get() == OnDiskBytes().get(); }

// One version of a key in MvccIndex.
struct KeyVersion {
  Revision mod_revision;
  Revision create_revision;
  Bytes value;  // null: deleted at mod_revision (a tombstone)
};
// A key's versions: ascending mod_revision, never empty. Versions at or below the compacted
// revision are reduced to at most one live version.
using KeyHistory = std::vector<KeyVersion>;
using KeyMap = std::map<std::string, KeyHistory, std::less<>>;

// Writes checked against the current state (and against the batch's earlier writes), not yet
// applied. Revisions are consecutive from the store's current revision + 1.
class WriteBatch {
 public:
  const std::vector<Event>& events() const { return events_; }

 private:
  friend class MvccIndex;
  struct Staged {
    Revision mod_revision;
    Revision create_revision;
    Bytes value;  // null: deleted earlier in this batch
    KeyMap::iterator hint;
  };
  Revision next_revision_ = 1;
  std::vector<Event> events_;
  // Per event, where Check found its key in the index (or where it would go): Apply starts
  // there rather than searching again, unless keys were erased since (erase_epoch_).
  std::vector<KeyMap::iterator> hints_;
  uint64_t erase_epoch_ = 0;
  std::unordered_map<std::string, Staged> staged_;  // keys written earlier in the batch
  bool single_ = false;  // a batch of one write (CheckAndApply): nothing later reads staged_
};

// One row of a persisted store, as the SQLite backend reads it back at start-up.
struct StoredRow {
  Revision revision = 0;
  std::string_view key;  // the loader's; LoadRow copies it when the key is new
  Revision create_revision = 0;
  Revision prev_revision = 0;  // mod_revision of the version this row replaced; 0 if none
  bool deleted = false;
  Bytes value;  // null for a delete
};

// Create with std::make_shared: Watcher handles hold a weak reference, so that a handle can
// outlive its store.
class MvccIndex : public std::enable_shared_from_this<MvccIndex> {
 public:
  static constexpr std::chrono::microseconds kDefaultWatchGather{150};

  struct Options {
    CompactionOptions compaction;
    // Runs automatic compaction to the given revision (on the watch thread). If empty, the
    // index compacts itself. The SQLite store routes it through its committer instead.
    std::function<void(Revision)> compact;
    // Revisions a watcher may scan in one response; bounds the time a store lock is held
    // and lets other watchers take turns.
    std::size_t max_scan_per_response = 4096;
    // Reads the value of the version at a revision whose value is OnDiskBytes(). Called with
    // no lock of the index held. kNotFound: the version has been compacted away meanwhile.
    // Required when such values are loaded (the SQLite store's history).
    std::function<Result<Bytes>(Revision)> load_value;
    // Releases the value of a superseded version once every watcher has read past the write
    // that superseded it: it is then read back through load_value when a read at an old
    // revision or a watch replay needs it. So memory holds current values, not the history a
    // write burst leaves (until compaction). Requires load_value.
    bool release_history = false;
    // After it has slept for want of writes, the watch thread waits this long once woken
    // before it collects, so that writes that come close together go out in one round: one
    // wake-up (a futex call for the writer, a sleep and a context switch for the watch thread)
    // per round instead of one per write. In process on 2 cores that is a seventh of the
    // scheduler's CPU per pod (README "Watch rounds gathered"). It adds at most this much to
    // a watch event's latency, and only when the store was idle.
    std::chrono::microseconds watch_gather = kDefaultWatchGather;
  };

  explicit MvccIndex(Options options);
  ~MvccIndex();
  MvccIndex(const MvccIndex&) = delete;
  MvccIndex& operator=(const MvccIndex&) = delete;

  // Starts the watch thread; call once, after loading.
  void Start();
  // Delivers pending events, ends every watch with kUnavailable and joins the watch thread.
  // Idempotent. Later Watch calls fail with kUnavailable.
  void Shutdown() KT_LOCKS_EXCLUDED(watch_mu_);

  // Reads.
  Result<KeyValue> Get(std::string_view key) const KT_LOCKS_EXCLUDED(mu_);
  Result<RangeResponse> Range(const RangeRequest& request) const KT_LOCKS_EXCLUDED(mu_);
  Revision current_revision() const KT_LOCKS_EXCLUDED(mu_);
  Revision compacted_revision() const KT_LOCKS_EXCLUDED(mu_);

  // Writes (one writer at a time; see the file comment).
  WriteBatch NewBatch() const;
  // Checks `op` against the current state and the batch's earlier writes; on success runs
  // op.stamp (under the shared lock; CheckAndApply: the exclusive one), adds the event with the
  // stamped value to `batch` and returns what the write will report.
  Result<WriteResult> Check(const WriteOp& op, WriteBatch& batch) const KT_LOCKS_EXCLUDED(mu_);
  // Makes the batch visible to reads and watches. With `wake_watchers` false, reads see it at
  // once and watchers once WakeWatchers runs (the SQLite store acknowledges the writes first).
  void Apply(WriteBatch batch, bool wake_watchers = true) KT_LOCKS_EXCLUDED(mu_, watch_mu_);
  void WakeWatchers() KT_LOCKS_EXCLUDED(watch_mu_) { NotifyWatchThread(); }
  // Check + Apply under one lock (the memory store).
  Result<WriteResult> CheckAndApply(const WriteOp& op) KT_LOCKS_EXCLUDED(mu_, watch_mu_);

  // Discards history before `revision`. Appends the revisions of the versions it dropped
  // (superseded versions and deletes) to `dropped` if not null.
  Status Compact(Revision revision, std::vector<Revision>* dropped) KT_LOCKS_EXCLUDED(mu_);

  // Start-up: rows must come in revision order, before Start. Rows at or below `compacted`
  // only establish the state at `compacted`; the revisions of rows that state supersedes are
  // appended to `dropped` (an interrupted compaction's leftovers). kInternal on any
  // inconsistency (a gap, a prev_revision that does not match), i.e. a corrupt store.
  // With `history_on_disk`, the value of a version that a later row supersedes is released
  // and read back through Options::load_value when a read at an old revision or a watch
  // replay needs it: memory and start-up time then do not grow with the history on disk.
  void BeginLoad(Revision compacted);
  Status LoadRow(StoredRow&& row, std::vector<Revision>& dropped, bool history_on_disk = false);

  Result<std::unique_ptr<Watcher>> Watch(const WatchRequest& request, WatchCallback callback)
      KT_LOCKS_EXCLUDED(mu_, watch_mu_);

 private:
  using Version = KeyVersion;
  using History = KeyHistory;

  struct WatchState {
    KeyRange range;
    bool progress_notify = false;
    WatchCallback callback;
    // The next revision to deliver. Written by Watch before the state is published, then
    // only by the watch thread.
    Revision next = 0;
    bool cancelled = false;    // guarded by watch_mu_
    bool in_callback = false;  // guarded by watch_mu_
  };
  class Handle;

  // Range from memory; values of history loaded at start-up may still be OnDiskBytes().
  Result<RangeResponse> RangeInMemory(const RangeRequest& request) const KT_LOCKS_EXCLUDED(mu_);
  Result<WriteResult> CheckLocked(const WriteOp& op, WriteBatch& batch) const
      KT_SHARED_LOCKS_REQUIRED(mu_);
  void ApplyLocked(WriteBatch& batch) KT_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops the key's versions that compaction to `revision` makes invisible; true if none is
  // left (the caller erases the key).
  bool CompactKeyLocked(KeyMap::iterator it, Revision revision, std::vector<Revision>* dropped)
      KT_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void NotifyWatchThread() KT_LOCKS_EXCLUDED(watch_mu_);
  // Replaces an OnDiskBytes() placeholder in `value` (of the version at `revision`) by the
  // value read from disk. kGone if the version was compacted away in the meantime.
  Status ResolveOnDisk(Bytes& value, Revision revision) const KT_LOCKS_EXCLUDED(mu_);

  void Cancel(const std::shared_ptr<WatchState>& state) KT_LOCKS_EXCLUDED(watch_mu_);
  void WatchLoop();
  // One turn for every watcher; called and returns with `lock` (on watch_mu_) held. Returns
  // true if some watcher has more to read right away. Every watcher's events are collected
  // under one shared hold of mu_, so that a round contends with the writers once, not once per
  // watcher.
  bool DispatchRound(std::unique_lock<std::mutex>& lock);
  // Reads the on-disk values of the events of `response` (history loaded at start-up); a
  // version compacted meanwhile ends the response with kGone. Called with no lock held.
  void ResolveEvents(WatchResponse& response) const KT_LOCKS_EXCLUDED(mu_);
  // Fills `response` for `w` from the log; false if there is nothing to send. Sets `more` if
  // `w` has more to read at once.
  bool CollectEventsLocked(WatchState& w, WatchResponse& response, bool& more) const
      KT_SHARED_LOCKS_REQUIRED(mu_);
  void Deliver(const std::shared_ptr<WatchState>& w, WatchResponse response,
               std::unique_lock<std::mutex>& lock);
  void RunCompactionTick();
  // Releases the superseded values of the writes up to `revision` (release_history): at most
  // kMaxReleasePerTurn writes per call, so that the exclusive lock is held briefly. Returns
  // true if writes up to `revision` remain to be released.
  bool ReleaseHistory(Revision revision) KT_LOCKS_EXCLUDED(mu_);
  static constexpr Revision kMaxReleasePerTurn = 2048;

  const Options options_;

  mutable std::shared_mutex mu_;
  KeyMap keys_ KT_GUARDED_BY(mu_);
  // keys_ by key hash, from Start on (start-up's LoadRow calls keep to the map): point lookups
  // without descending the map.
  KeyIndex<KeyMap> index_ KT_GUARDED_BY(mu_);
  bool indexed_ KT_GUARDED_BY(mu_) = false;
  KeyMap::iterator FindLocked(std::string_view key) KT_SHARED_LOCKS_REQUIRED(mu_);
  KeyMap::const_iterator FindLocked(std::string_view key) const KT_SHARED_LOCKS_REQUIRED(mu_);
  // Counts the times keys were erased from keys_ (which invalidates a batch's hints).
  uint64_t erase_epoch_ KT_GUARDED_BY(mu_) = 0;
  // The log keeps, per revision, only the key that revision wrote: keys_' own entry, not a copy
  // (a burst of writes to few keys costs the log no string per write, and no lookup finds the
  // key's history). The event is the key's version at that revision and the version before it
  // (EventAt), so a revision costs the log 8 bytes and the release of a superseded value touches
  // only its version. A key outlives its entries: Compact pops an entry before it erases its key.
  using LogEntry = KeyMap::iterator;
  // The event of revision `rev`, which wrote `key`.
  static Event EventAt(KeyMap::const_iterator key, Revision rev);
  // The events of revisions (compacted_, current_], one per revision: log_[i] has revision
  // compacted_ + 1 + i.
  std::deque<LogEntry> log_ KT_GUARDED_BY(mu_);
  Revision current_ KT_GUARDED_BY(mu_) = 0;
  Revision compacted_ KT_GUARDED_BY(mu_) = 0;
  // Writes up to this revision have had the value they superseded released (release_history).
  Revision released_ KT_GUARDED_BY(mu_) = 0;

  std::mutex watch_mu_;
  std::condition_variable watch_cv_;   // wakes the watch thread
  std::condition_variable cancel_cv_;  // a callback returned
  std::vector<std::shared_ptr<WatchState>> watchers_ KT_GUARDED_BY(watch_mu_);
  // Bumped (under watch_mu_) by every write; read without the lock by the watch thread's spin.
  std::atomic<std::uint64_t> wake_seq_{0};
  bool shutdown_ KT_GUARDED_BY(watch_mu_) = false;
  bool started_ KT_GUARDED_BY(watch_mu_) = false;
  std::thread::id watch_thread_id_ KT_GUARDED_BY(watch_mu_);
  std::thread watch_thread_;

  // Automatic compaction; watch thread only.
  Revision last_tick_revision_ = -1;
};

}  // namespace kt::store::internal
