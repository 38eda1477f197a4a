#include "store/internal/mvcc_index.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "core/spin.h"
#include "core/thread_name.h"

// "Can't happen" after start-up: crash loudly rather than hand out a wrong revision.
#define KT_STORE_CHECK(cond)                                                                    \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      std::fprintf(stderr, "%s:%d: store invariant violated: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                             \
    }                                                                                           \
  } while (0)

namespace kt::store::internal {

namespace {

thread_local bool t_in_write_completion = false;

Status Gone(std::string m) { return Status(StatusCode::kGone, std::move(m)); }
Status Unavailable(std::string m) { return Status(StatusCode::kUnavailable, std::move(m)); }
std::string Str(Revision r) { return std::to_string(r); }

Status Corrupt(const StoredRow& row, const char* what) {
  return Internal("store is corrupt at revision " + Str(row.revision) + " (key " +
                  std::string(row.key) + "): " + what);
}

}  // namespace

bool InWriteCompletion() { return t_in_write_completion; }
WriteCompletionScope::WriteCompletionScope() { t_in_write_completion = true; }
WriteCompletionScope::~WriteCompletionScope() { t_in_write_completion = false; }

const Bytes& EmptyBytes() {
  static const Bytes* empty = new Bytes(std::make_shared<const std::string>());
  return *empty;
}

const Bytes& OnDiskBytes() {
  static const Bytes* on_disk = new Bytes(std::make_shared<const std::string>("<on disk>"));
  return *on_disk;
}

Status MvccIndex::ResolveOnDisk(Bytes& value, Revision revision) const {
  if (!IsOnDisk(value)) return Status::Ok();
  if (!options_.load_value) return Internal("no loader for the value at revision " + Str(revision));
  Result<Bytes> loaded = options_.load_value(revision);
  if (!loaded) {
    if (loaded.error().code() != StatusCode::kNotFound) return loaded.error();
    return Gone("revision " + Str(revision) + " has been compacted; the compacted revision is " +
                Str(compacted_revision()));
  }
  value = std::move(*loaded);
  return Status::Ok();
}

// A live watch; cancels on destruction. Holds the index weakly so that it may outlive it.
class MvccIndex::Handle final : public Watcher {
 public:
  Handle(std::weak_ptr<MvccIndex> index, std::shared_ptr<WatchState> state)
      : index_(std::move(index)), state_(std::move(state)) {}
  ~Handle() override {
    if (std::shared_ptr<MvccIndex> index = index_.lock()) index->Cancel(state_);
  }

 private:
  std::weak_ptr<MvccIndex> index_;
  std::shared_ptr<WatchState> state_;
};

MvccIndex::MvccIndex(Options options) : options_(std::move(options)) {}

MvccIndex::~MvccIndex() { Shutdown(); }

void MvccIndex::Start() {
  {
    std::unique_lock lock(mu_);
    released_ = current_;  // LoadRow released what it loaded as history
    index_.Reserve(keys_.size());
    for (auto it = keys_.begin(); it != keys_.end(); ++it) index_.Insert(it);
    indexed_ = true;
  }
  std::lock_guard lock(watch_mu_);
  KT_STORE_CHECK(!started_);
  started_ = true;
  watch_thread_ = std::thread([this] {
    core::NameBackgroundThread("kt-store-watch");
    WatchLoop();
  });
  watch_thread_id_ = watch_thread_.get_id();
}

void MvccIndex::Shutdown() {
  {
    std::lock_guard lock(watch_mu_);
    // Joining from the watch thread would wait for itself: a callback destroyed the store.
    KT_STORE_CHECK(!started_ || std::this_thread::get_id() != watch_thread_id_);
    shutdown_ = true;
  }
  watch_cv_.notify_one();
  if (watch_thread_.joinable()) watch_thread_.join();
}

// ---------------------------------------------------------------------------------------------
// Reads

KeyMap::iterator MvccIndex::FindLocked(std::string_view key) {
  return indexed_ ? index_.Find(keys_, key) : keys_.find(key);
}

KeyMap::const_iterator MvccIndex::FindLocked(std::string_view key) const {
  return indexed_ ? index_.Find(keys_, key) : keys_.find(key);
}

Result<KeyValue> MvccIndex::Get(std::string_view key) const {
  std::shared_lock lock(mu_);
  auto it = FindLocked(key);
  if (it == keys_.end() || it->second.back().value == nullptr) {
    return Err(NotFound("key not found: " + std::string(key)));
  }
  const Version& v = it->second.back();
  return KeyValue{it->first, v.value, v.create_revision, v.mod_revision};
}

Result<RangeResponse> MvccIndex::Range(const RangeRequest& request) const {
  Result<RangeResponse> response = RangeInMemory(request);
  if (!response) return response;
  // History loaded at start-up may be on disk; read it without holding the lock.
  for (KeyValue& kv : response->kvs) {
    if (Status s = ResolveOnDisk(kv.value, kv.mod_revision); !s.ok()) return Err(std::move(s));
  }
  return response;
}

Result<RangeResponse> MvccIndex::RangeInMemory(const RangeRequest& request) const {
  if (request.revision < 0) return Err(BadRequest("negative revision"));
  std::shared_lock lock(mu_);
  const Revision at = request.revision == 0 ? current_ : request.revision;
  if (at > current_) {
    return Err(
        BadRequest("revision " + Str(at) + " is newer than the current revision " + Str(current_)));
  }
  if (at < compacted_) {
    return Err(Gone("revision " + Str(at) + " has been compacted; the compacted revision is " +
                    Str(compacted_)));
  }
  RangeResponse response;
  response.revision = at;
  // The version of a key visible at `at`, or null if the key did not exist then.
  auto visible = [at](const History& history) -> const Version* {
    for (auto v = history.rbegin(); v != history.rend(); ++v) {
      if (v->mod_revision <= at) return v->value ? &*v : nullptr;
    }
    return nullptr;
  };
  const KeyRange& range = request.range;
  auto it = range.range_end.empty() ? FindLocked(range.key) : keys_.lower_bound(range.key);
  for (; it != keys_.end() && range.Contains(it->first); ++it) {
    const Version* v = visible(it->second);
    if (v == nullptr) continue;
    if (request.limit > 0 && static_cast<std::int64_t>(response.kvs.size()) == request.limit) {
      response.more = true;
      break;
    }
    response.kvs.push_back(KeyValue{it->first, v->value, v->create_revision, v->mod_revision});
    if (range.range_end.empty()) break;
  }
  return response;
}

Revision MvccIndex::current_revision() const {
  std::shared_lock lock(mu_);
  return current_;
}

Revision MvccIndex::compacted_revision() const {
  std::shared_lock lock(mu_);
  return compacted_;
}

// ---------------------------------------------------------------------------------------------
// Writes

WriteBatch MvccIndex::NewBatch() const {
  std::shared_lock lock(mu_);
  WriteBatch batch;
  batch.next_revision_ = current_ + 1;
  batch.erase_epoch_ = erase_epoch_;
  return batch;
}

Result<WriteResult> MvccIndex::Check(const WriteOp& op, WriteBatch& batch) const {
  std::shared_lock lock(mu_);
  return CheckLocked(op, batch);
}

Result<WriteResult> MvccIndex::CheckLocked(const WriteOp& op, WriteBatch& batch) const {
  if (op.key.empty()) return Err(BadRequest("empty key"));
  if (op.expected_mod_revision < 0) return Err(BadRequest("negative expected mod_revision"));

  // The key's state as this write will see it: after the batch's earlier writes.
  Revision cur_mod = 0;
  Revision cur_create = 0;
  Bytes cur_value;
  KeyMap::iterator hint;
  if (auto s = batch.staged_.find(op.key); s != batch.staged_.end()) {
    cur_mod = s->second.mod_revision;
    cur_create = s->second.create_revision;
    cur_value = s->second.value;
    hint = s->second.hint;
  } else {
    // The index is not changed through the iterator here (the shared lock): it only tells
    // Apply where the key is, or where a new key goes.
    KeyMap& keys = const_cast<KeyMap&>(keys_);
    hint = const_cast<MvccIndex*>(this)->FindLocked(op.key);
    if (hint != keys.end()) {
      const Version& v = hint->second.back();
      cur_mod = v.mod_revision;
      cur_create = v.create_revision;
      cur_value = v.value;
    } else {
      hint = keys.lower_bound(op.key);
    }
  }
  const bool exists = cur_value != nullptr;

  Event e;
  e.key = op.key;
  e.mod_revision = batch.next_revision_;
  WriteResult result;
  result.revision = e.mod_revision;
  if (op.type == WriteOp::Type::kCreate) {
    if (exists) return Err(AlreadyExists("key already exists: " + op.key));
    e.type = Event::Type::kPut;
    e.create_revision = e.mod_revision;
  } else {
    if (!exists) return Err(NotFound("key not found: " + op.key));
    if (op.expected_mod_revision != 0 && op.expected_mod_revision != cur_mod) {
      return Err(Conflict("key " + op.key + " has mod_revision " + Str(cur_mod) + ", expected " +
                          Str(op.expected_mod_revision)));
    }
    e.type = op.type == WriteOp::Type::kUpdate ? Event::Type::kPut : Event::Type::kDelete;
    e.prev_value = cur_value;
    e.create_revision = cur_create;
    e.prev_mod_revision = cur_mod;
    result.prev = KeyValue{op.key, cur_value, cur_create, cur_mod};
  }
  if (e.type == Event::Type::kPut) {
    // The write is accepted and its revision known: the one point where the stamp may run
    // (store.h). Staged below, so a later write of the batch sees the stamped value as prev.
    e.value = op.value ? op.value : EmptyBytes();
    if (op.stamp) {
      e.value = op.stamp(e.mod_revision, e.value);
      if (e.value == nullptr) e.value = EmptyBytes();
    }
    result.value = e.value;
  }
  if (!batch.single_) {
    batch.staged_[op.key] = WriteBatch::Staged{e.mod_revision, e.create_revision, e.value, hint};
  }
  ++batch.next_revision_;
  batch.events_.push_back(std::move(e));
  batch.hints_.push_back(hint);
  return result;
}

namespace {

// The version of `history` written at `rev`, or history.end() (a const or mutable history).
template <class H>
auto VersionWrittenAt(H& history, Revision rev) {
  auto v = std::lower_bound(history.begin(), history.end(), rev,
                            [](const KeyVersion& a, Revision r) { return a.mod_revision < r; });
  return v != history.end() && v->mod_revision == rev ? v : history.end();
}

}  // namespace

Event MvccIndex::EventAt(KeyMap::const_iterator key, Revision rev) {
  const History& history = key->second;
  auto v = VersionWrittenAt(history, rev);
  KT_STORE_CHECK(v != history.end());
  Event out;
  out.type = v->value ? Event::Type::kPut : Event::Type::kDelete;
  out.key = key->first;
  out.value = v->value;
  out.mod_revision = rev;
  out.create_revision = v->create_revision;
  // The version this one replaced, if it was live. (A delete before it that compaction dropped
  // was not: a create has no previous value either way.)
  if (v != history.begin() && std::prev(v)->value) {
    out.prev_value = std::prev(v)->value;
    out.prev_mod_revision = std::prev(v)->mod_revision;
  }
  return out;
}

void MvccIndex::ApplyLocked(WriteBatch& batch) {
  const bool hinted = batch.erase_epoch_ == erase_epoch_;
  for (size_t i = 0; i < batch.events_.size(); ++i) {
    Event& e = batch.events_[i];
    // A batch checked against an older state would hand out a revision twice.
    KT_STORE_CHECK(e.mod_revision == current_ + 1);
    KeyMap::iterator it;
    if (hinted) {
      // The key where Check found it, or inserted where Check found its place (emplace_hint
      // returns the key if an earlier write of the batch created it meanwhile).
      it = batch.hints_[i];
      if (it == keys_.end() || it->first != e.key) {
        const size_t before = keys_.size();
        it = keys_.emplace_hint(it, std::move(e.key), History());
        if (indexed_ && keys_.size() != before) index_.Insert(it);
      }
    } else {
      it = FindLocked(e.key);
      if (it == keys_.end()) {
        it = keys_.emplace(std::move(e.key), History()).first;
        if (indexed_) index_.Insert(it);
      }
    }
    it->second.push_back(Version{e.mod_revision, e.create_revision, std::move(e.value)});
    current_ = e.mod_revision;
    log_.push_back(it);
  }
}

void MvccIndex::Apply(WriteBatch batch, bool wake_watchers) {
  if (batch.events_.empty()) return;
  {
    std::unique_lock lock(mu_, std::defer_lock);
    core::LockSpinning(lock);
    ApplyLocked(batch);
  }
  if (wake_watchers) NotifyWatchThread();
}

Result<WriteResult> MvccIndex::CheckAndApply(const WriteOp& op) {
  Result<WriteResult> result;
  {
    std::unique_lock lock(mu_, std::defer_lock);
    core::LockSpinning(lock);
    WriteBatch batch;
    batch.next_revision_ = current_ + 1;
    batch.erase_epoch_ = erase_epoch_;
    batch.single_ = true;
    result = CheckLocked(op, batch);
    if (!result) return result;
    ApplyLocked(batch);
  }
  NotifyWatchThread();
  return result;
}

void MvccIndex::NotifyWatchThread() {
  {
    std::lock_guard lock(watch_mu_);
    ++wake_seq_;
    // With no watcher, the write path need not wake the watch thread at all.
    if (watchers_.empty()) return;
  }
  watch_cv_.notify_one();
}

// ---------------------------------------------------------------------------------------------
// Compaction and loading

Status MvccIndex::Compact(Revision revision, std::vector<Revision>* dropped) {
  {
    std::unique_lock lock(mu_);
    if (revision <= compacted_) return Status::Ok();
    if (revision > current_) {
      return BadRequest("cannot compact to revision " + Str(revision) +
                        ", newer than the current revision " + Str(current_));
    }
    // Only keys written since the last compaction can have versions to drop: walk their
    // events rather than every key. A key whose every version goes is erased only after the
    // loop, since later entries still point at it.
    std::vector<KeyMap::iterator> emptied;
    for (Revision rev = compacted_ + 1; rev <= revision && !log_.empty(); ++rev) {
      KeyMap::iterator it = log_.front();
      if (CompactKeyLocked(it, revision, dropped)) emptied.push_back(it);
      log_.pop_front();
    }
    for (KeyMap::iterator it : emptied) {
      if (indexed_) index_.Erase(it);
      keys_.erase(it);
    }
    if (!emptied.empty()) ++erase_epoch_;
    compacted_ = revision;
  }
  // Watchers behind the new compacted revision learn it now rather than at the next write.
  NotifyWatchThread();
  return Status::Ok();
}

bool MvccIndex::CompactKeyLocked(KeyMap::iterator it, Revision revision,
                                 std::vector<Revision>* dropped) {
  History& history = it->second;
  // Versions at or below `revision` form a prefix; of those only the last is visible at
  // `revision`, and not even that one if it is a delete.
  std::size_t n = 0;
  while (n < history.size() && history[n].mod_revision <= revision) ++n;
  if (n == 0) return false;
  const std::size_t drop = history[n - 1].value ? n - 1 : n;
  if (dropped != nullptr) {
    for (std::size_t i = 0; i < drop; ++i) dropped->push_back(history[i].mod_revision);
  }
  history.erase(history.begin(), history.begin() + static_cast<std::ptrdiff_t>(drop));
  return history.empty();
}

void MvccIndex::BeginLoad(Revision compacted) {
  std::unique_lock lock(mu_);
  compacted_ = compacted;
  current_ = compacted;
}

bool MvccIndex::ReleaseHistory(Revision revision) {
  {
    std::shared_lock lock(mu_);
    if (revision <= std::max(released_, compacted_)) return false;
  }
  std::unique_lock lock(mu_);
  // What compaction dropped needs no release; what start-up loaded was released as it loaded.
  const Revision from = std::max(released_, compacted_) + 1;
  const Revision upto = std::min(revision, current_);
  const Revision to = std::min(upto, from + kMaxReleasePerTurn - 1);
  for (Revision rev = from; rev <= to; ++rev) {
    History& history = log_[static_cast<std::size_t>(rev - compacted_ - 1)]->second;
    // The version the write at `rev` superseded, if it is still kept and in memory.
    auto v = VersionWrittenAt(history, rev);
    if (v == history.begin() || v == history.end()) continue;
    Version& prev = *std::prev(v);
    if (prev.value && !IsOnDisk(prev.value)) prev.value = OnDiskBytes();
  }
  released_ = std::max(released_, to);
  return to < upto;
}

Status MvccIndex::LoadRow(StoredRow&& row, std::vector<Revision>& dropped, bool history_on_disk) {
  std::unique_lock lock(mu_);
  KT_STORE_CHECK(!indexed_);  // before Start: the hash index is built from the loaded map
  // The row's key: where the version it replaced was loaded (the log holds that revision's key),
  // which is most rows after a burst of updates; else one lookup, reused for the insert.
  KeyMap::iterator it;
  bool found = false;
  if (row.revision > compacted_ && row.prev_revision > compacted_ &&
      row.prev_revision <= current_) {
    it = log_[static_cast<std::size_t>(row.prev_revision - compacted_ - 1)];
    found = it->first == row.key;
  }
  if (!found) {
    it = keys_.lower_bound(row.key);
    found = it != keys_.end() && it->first == row.key;
  }
  if (row.revision <= compacted_) {
    // History below the compacted revision: keep only the state at compacted_. Rows it
    // replaced may already be gone (a compaction deletes them over several transactions), so
    // they are not cross-checked.
    if (found) {
      for (const Version& v : it->second) dropped.push_back(v.mod_revision);
    }
    if (row.deleted) {
      dropped.push_back(row.revision);
      if (found) keys_.erase(it);
    } else {
      Version v{row.revision, row.create_revision, std::move(row.value)};
      if (found) {
        it->second.assign(1, std::move(v));
      } else {
        keys_.emplace_hint(it, std::string(row.key), History())->second.push_back(std::move(v));
      }
    }
    return Status::Ok();
  }

  if (row.revision != current_ + 1) return Corrupt(row, "revisions are not consecutive");
  const Version* prev = found ? &it->second.back() : nullptr;
  const bool prev_live = prev != nullptr && prev->value != nullptr;
  if (row.prev_revision != (prev_live ? prev->mod_revision : 0)) {
    return Corrupt(row, "prev_revision does not match the key's previous version");
  }
  if (row.deleted && !prev_live) return Corrupt(row, "delete of an absent key");
  if (!row.deleted && !row.value) return Corrupt(row, "missing value");
  const Revision create_revision = prev_live ? prev->create_revision : row.revision;
  if (row.create_revision != create_revision) return Corrupt(row, "wrong create_revision");

  if (history_on_disk && prev_live && !IsOnDisk(prev->value)) {
    // The version this row supersedes becomes history: release its value, and read it back from
    // disk when a read or a watch needs it.
    it->second.back().value = OnDiskBytes();
  }
  if (!found) it = keys_.emplace_hint(it, std::string(row.key), History());
  it->second.push_back(Version{row.revision, create_revision, std::move(row.value)});
  current_ = row.revision;
  log_.push_back(it);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Watch

Result<std::unique_ptr<Watcher>> MvccIndex::Watch(const WatchRequest& request,
                                                  WatchCallback callback) {
  if (!callback) return Err(BadRequest("watch without a callback"));
  if (request.start_revision < 0) return Err(BadRequest("negative start revision"));
  auto state = std::make_shared<WatchState>();
  state->range = request.range;
  state->progress_notify = request.progress_notify;
  state->callback = std::move(callback);
  {
    std::shared_lock lock(mu_);
    state->next = request.start_revision == 0 ? current_ + 1 : request.start_revision;
    if (state->next <= compacted_) {
      return Err(Gone("watch from revision " + Str(state->next) +
                      " is too old; the compacted revision is " + Str(compacted_)));
    }
  }
  {
    std::lock_guard lock(watch_mu_);
    if (shutdown_) return Err(Unavailable("store is closed"));
    watchers_.push_back(state);
    ++wake_seq_;
  }
  watch_cv_.notify_one();
  return std::unique_ptr<Watcher>(std::make_unique<Handle>(weak_from_this(), std::move(state)));
}

void MvccIndex::Cancel(const std::shared_ptr<WatchState>& state) {
  std::unique_lock lock(watch_mu_);
  state->cancelled = true;
  std::erase(watchers_, state);
  // A callback cancelling its own watch must not wait for itself.
  if (std::this_thread::get_id() != watch_thread_id_) {
    cancel_cv_.wait(lock, [&] { return !state->in_callback; });
  }
}

void MvccIndex::WatchLoop() {
  using Clock = std::chrono::steady_clock;
  const std::chrono::milliseconds interval = options_.compaction.interval;
  Clock::time_point next_tick = Clock::now() + interval;
  std::unique_lock lock(watch_mu_);
  std::uint64_t seen_seq = 0;
  bool again = false;
  for (;;) {
    if (interval.count() > 0 && Clock::now() >= next_tick) {
      lock.unlock();
      RunCompactionTick();
      lock.lock();
      next_tick = Clock::now() + interval;
    }
    auto ready = [&] { return shutdown_ || again || wake_seq_.load() != seen_seq; };
    if (!ready()) {
      lock.unlock();
      // Under a steady write load the next write comes within microseconds (core/spin.h).
      const bool moved =
          core::SpinUntil([&] { return wake_seq_.load(std::memory_order_acquire) != seen_seq; });
      lock.lock();
      if (moved) continue;
    }
    if (!ready()) {
      if (interval.count() > 0) {
        watch_cv_.wait_until(lock, next_tick, ready);
      } else {
        watch_cv_.wait(lock, ready);
      }
      if (options_.watch_gather.count() > 0 && !shutdown_ && wake_seq_ != seen_seq) {
        // Woken by a write after a sleep: let the writes that follow it join the round.
        lock.unlock();
        std::this_thread::sleep_for(options_.watch_gather);
        lock.lock();
      }
      continue;
    }
    seen_seq = wake_seq_;
    again = DispatchRound(lock);
    if (shutdown_ && !again) break;
  }
  // Every acknowledged event has been delivered; end the remaining watches.
  std::vector<std::shared_ptr<WatchState>> remaining = watchers_;
  for (const std::shared_ptr<WatchState>& w : remaining) {
    WatchResponse response;
    response.revision = w->next - 1;
    response.status = Unavailable("store is closed");
    Deliver(w, std::move(response), lock);
  }
}

bool MvccIndex::DispatchRound(std::unique_lock<std::mutex>& lock) {
  std::vector<std::shared_ptr<WatchState>> active;
  active.reserve(watchers_.size());
  for (const std::shared_ptr<WatchState>& w : watchers_) {
    if (!w->cancelled) active.push_back(w);
  }
  bool again = false;
  lock.unlock();
  std::vector<WatchResponse> responses(active.size());
  std::vector<std::uint8_t> send(active.size(), 0);
  {
    std::shared_lock index_lock(mu_, std::defer_lock);
    core::LockSpinning(index_lock);
    for (std::size_t i = 0; i < active.size(); ++i) {
      bool more = false;
      send[i] = CollectEventsLocked(*active[i], responses[i], more) ? 1 : 0;
      again = again || more;
    }
  }
  for (std::size_t i = 0; i < active.size(); ++i) {
    if (send[i]) ResolveEvents(responses[i]);
  }
  lock.lock();
  for (std::size_t i = 0; i < active.size(); ++i) {
    if (send[i]) Deliver(active[i], std::move(responses[i]), lock);
  }
  if (options_.release_history) {
    // Every watcher has read up to the slowest one's cursor: what those writes superseded is
    // needed only by reads at old revisions from then on.
    Revision upto = current_revision();
    for (const std::shared_ptr<WatchState>& w : watchers_) {
      if (!w->cancelled) upto = std::min(upto, w->next - 1);
    }
    lock.unlock();
    const bool more = ReleaseHistory(upto);
    lock.lock();
    again = again || more;
  }
  return again;
}

void MvccIndex::ResolveEvents(WatchResponse& response) const {
  if (!response.status.ok()) return;
  for (Event& e : response.events) {
    Status s = ResolveOnDisk(e.value, e.mod_revision);
    if (s.ok() && e.prev_value) s = ResolveOnDisk(e.prev_value, e.prev_mod_revision);
    if (!s.ok()) {
      response.events.clear();
      response.status = std::move(s);
      return;
    }
  }
}

bool MvccIndex::CollectEventsLocked(WatchState& w, WatchResponse& response, bool& more) const {
  if (w.next <= compacted_) {
    response.revision = w.next - 1;
    response.status = Gone("watch fell behind: revision " + Str(w.next) +
                           " has been compacted; the compacted revision is " + Str(compacted_));
    return true;
  }
  if (w.next > current_) return false;
  const Revision last = std::min<Revision>(
      current_, w.next + static_cast<Revision>(options_.max_scan_per_response) - 1);
  for (Revision rev = w.next; rev <= last; ++rev) {
    const KeyMap::const_iterator key = log_[static_cast<std::size_t>(rev - compacted_ - 1)];
    if (w.range.Contains(key->first)) response.events.push_back(EventAt(key, rev));
  }
  more = last < current_;
  response.revision = last;
  w.next = last + 1;
  return !response.events.empty() || w.progress_notify;
}

void MvccIndex::Deliver(const std::shared_ptr<WatchState>& w, WatchResponse response,
                        std::unique_lock<std::mutex>& lock) {
  if (w->cancelled) return;
  const bool last = !response.status.ok();
  w->in_callback = true;
  lock.unlock();
  w->callback(std::move(response));
  lock.lock();
  w->in_callback = false;
  if (last) {
    w->cancelled = true;
    std::erase(watchers_, w);
  }
  cancel_cv_.notify_all();
}

void MvccIndex::RunCompactionTick() {
  // As kube-apiserver's compactor: compact to what was current one interval ago, so that at
  // least one interval of history survives, and keep min_retain_revisions on top.
  const Revision current = current_revision();
  if (last_tick_revision_ >= 0) {
    const Revision target =
        std::min(last_tick_revision_, current - options_.compaction.min_retain_revisions);
    if (target > compacted_revision()) {
      if (options_.compact) {
        options_.compact(target);
      } else {
        (void)Compact(target, nullptr);
      }
    }
  }
  last_tick_revision_ = current;
}

}  // namespace kt::store::internal
