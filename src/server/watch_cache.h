// The watch cache: one per resource, in front of the store (DESIGN.md). It holds every current
// object (decoded once, bytes shared), indexes by namespace (key order) and, for pods, by
// spec.nodeName, and a log of recent events, so that GET, LIST and WATCH are served from memory
// and each event is encoded once for every watcher.
//
// It is fed by one store watch. Reads that must observe a write (read-your-writes) first wait
// for the cache to reach the store's revision (AfterRevision).
//
// Watches: a watch starts from a resourceVersion. 0 replays the current objects as synthetic
// ADDED events; N > 0 replays logged events after N, or fails with kGone ("too old resource
// version") when the log no longer reaches back to N. Events are filtered per watcher by
// namespace, label and field selector, with the upstream transitions: an object that starts
// matching arrives as ADDED, one that stops matching as DELETED.
//
// Thread safety: all methods are thread-safe. Sink callbacks run with the cache's lock held, in
// revision order, on the store's watch thread (or the caller of StartWatch for the replay):
// they must only queue work and must not call back into the cache.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/selector.h"
#include "core/key_index.h"
#include "core/status.h"
#include "server/object.h"
#include "server/resources.h"
#include "store/store.h"

namespace kt::server {

class Predecoder;

enum class WatchEventType : unsigned char { kAdded, kModified, kDeleted };
std::string_view WatchEventTypeName(WatchEventType type);  // "ADDED", ...

// Which objects a list or watch wants.
struct ObjectFilter {
  std::string namespace_;  // "" = all namespaces
  api::labels::Selector labels;
  api::fields::Selector fields;
  // In-process watchers only (no query parameter sets it): a further condition, e.g. the
  // garbage collector's "has an owner of a kind it resolves". Null: none.
  std::function<bool(const StoredObject&)> predicate;

  bool Matches(const StoredObject& object) const;
};

// Receives a watch's events. See the header comment for where and how it is called.
class WatchSink {
 public:
  virtual ~WatchSink() = default;
  // One event; return false to end the watch (client gone or too slow).
  virtual bool OnEvent(WatchEventType type, const ObjectPtr& object) = 0;
  // The cache has applied every write up to `revision` (a bookmark opportunity).
  virtual void OnProgress(store::Revision revision) = 0;
  // The cache ended the watch (kGone: the watcher must relist; kUnavailable: shutting down).
  virtual void OnEnd(Status status) = 0;
};

class WatchCache {
 public:
  struct Options {
    // Events are kept at least this long (upstream keeps 75 s)...
    std::chrono::seconds min_event_age{75};
    // ...and at most this many, beyond which the oldest go.
    size_t max_events = 102'400;  // upstream's cap
  };

  WatchCache(const ResourceInfo& info, store::Store* store, Options options);
  WatchCache(const ResourceInfo& info, store::Store* store) : WatchCache(info, store, Options()) {}
  ~WatchCache();
  WatchCache(const WatchCache&) = delete;
  WatchCache& operator=(const WatchCache&) = delete;

  // Loads the resource from the store and starts following it. Objects `predecoded` decoded
  // during the store's load are taken from it rather than decoded again.
  Status Start(const Predecoder* predecoded = nullptr);
  // Ends every watch with kUnavailable and stops following the store.
  void Stop();

  const ResourceInfo& info() const { return info_; }
  // Every write up to this revision is in the cache.
  store::Revision revision() const;
  // Runs `fn` once the cache has applied every write up to `revision`: at once (on this thread)
  // if it has, else on the store's watch thread. `fn` must not block.
  void AfterRevision(store::Revision revision, std::function<void()> fn);

  ObjectPtr Get(std::string_view namespace_, std::string_view name) const;

  // Hands over the typed view of a write the store is about to make visible at `revision` with
  // the stored bytes `value` (the registry's ValueStamp calls it, on the store's committer, in
  // revision order), so that the cache takes the view instead of decoding the bytes again. The
  // view must already carry `revision` as its resourceVersion. A view whose write never shows
  // up (its commit failed) is dropped once a later revision is applied.
  void Prepare(store::Revision revision, const store::Bytes& value, TypedObject typed);

  struct ListResult {
    std::vector<ObjectPtr> items;  // in key order
    store::Revision revision = 0;
    std::string last_key;  // set when `limit` cut the list short
  };
  // Objects matching `filter` in key order, strictly after `after_key` (for paging), at most
  // `limit` (0 = all).
  ListResult List(const ObjectFilter& filter, std::string_view after_key = {},
                  int64_t limit = 0) const;
  // The same, read from the store as of `revision` (a continue token's): every page of a paged
  // list then shows one snapshot. kGone once that revision is compacted.
  Result<ListResult> ListAt(store::Revision revision, const ObjectFilter& filter,
                            std::string_view after_key, int64_t limit) const;
  size_t size() const;

  // Starts a watch of the changes after `resource_version` (0 = current objects first).
  // kGone when the log no longer reaches back that far. Destroying the handle ends the watch.
  class WatchHandle {
   public:
    virtual ~WatchHandle() = default;
  };
  Result<std::unique_ptr<WatchHandle>> StartWatch(store::Revision resource_version,
                                                  ObjectFilter filter,
                                                  std::shared_ptr<WatchSink> sink);

 private:
  // A logged event. Live watchers get it whole as it happens; the log then keeps only what a
  // later replay cannot read back cheaply: `object` while it is the key's current state (shared
  // with objects_, so it costs nothing), never a superseded state or the state before. A replay
  // reads those back from the store at their revision (spilled history: from disk), so a burst
  // of writes costs the log a few dozen bytes per event rather than a copy of each version.
  struct Event {
    WatchEventType type;
    store::Revision revision;
    // The new state (for kDeleted: the last state at the deletion's revision); null once
    // superseded or, for kDeleted, once delivered live.
    ObjectPtr object;
    // The state before; null once delivered live.
    ObjectPtr prev;
    store::Revision prev_revision = 0;  // the revision of the state before; 0: none
    std::string key;                    // set when `object` is null
    std::chrono::steady_clock::time_point at;
  };
  struct Watcher {
    uint64_t id;
    ObjectFilter filter;
    std::shared_ptr<WatchSink> sink;
    store::Revision from;  // deliver only events after this
  };
  class Handle;

  struct Prepared {
    store::Revision revision;
    const std::string* value;  // identifies the stored buffer
    TypedObject typed;
  };
  // The view Prepare handed over for this write, or an empty one.
  TypedObject TakePrepared(store::Revision revision, const store::Bytes& value);

  void OnStoreResponse(store::WatchResponse response);
  void ApplyLocked(const store::Event& e, std::vector<Event>& applied);
  void IndexLocked(const ObjectPtr& object, bool add);
  // Delivers an event (with its states read back: `prev` may be null when `had_prev` if the
  // filter looks only at the key) to `w`; false if the watcher must go.
  static bool Deliver(WatchEventType type, store::Revision revision, const ObjectPtr& object,
                      const ObjectPtr& prev, bool had_prev, Watcher& w);
  // Drops from a delivered event, and from the logged event of the state it superseded, what
  // a replay reads back from the store (see Event).
  void LightenLocked(Event& e);
  // Replays `e` to `w`, reading back from the store what the log let go. kGone if the store
  // has compacted it away; false in the result: the watcher must go.
  Result<bool> ReplayLocked(const Event& e, Watcher& w) const;
  // The object `key` held at `revision`, read from the store.
  Result<ObjectPtr> ReadBack(const std::string& key, store::Revision revision) const;
  void TrimLogLocked();
  void RemoveWatcher(uint64_t id);
  Status LoadLocked(const Predecoder* predecoded);

  const ResourceInfo& info_;
  store::Store* store_;
  Options options_;

  mutable std::mutex mu_;
  store::Revision revision_ = 0;  // guarded by mu_
  // Held, besides mu_, while objects_ and index_ change, and alone by Get: a point read waits
  // for one change of the map, never for the delivery of a batch to the watchers, which runs
  // under mu_. Taken after mu_.
  mutable std::mutex objects_mu_;
  // Every current object by key. The map's keys are views of the objects' own `key`, so a key
  // is stored once: an entry's key is re-pointed whenever its object is replaced, and an
  // object outlives its entries. Changed under mu_ and objects_mu_; read under either.
  std::map<std::string_view, ObjectPtr> objects_;
  // objects_ by key hash: Get and the writes' lookups without descending the map. As objects_.
  KeyIndex<std::map<std::string_view, ObjectPtr>> index_;
  // spec.nodeName -> the pods bound there, by key (a view of the pod's own, as in objects_);
  // pods only; guarded by mu_
  std::map<std::string, std::map<std::string_view, ObjectPtr>, std::less<>> by_node_;
  std::deque<Event> log_;  // guarded by mu_
  // The oldest revision a watch may start from: events after it are all in the log.
  store::Revision log_floor_ = 0;                                  // guarded by mu_
  std::vector<Watcher> watchers_;                                  // guarded by mu_
  uint64_t next_watcher_id_ = 1;                                   // guarded by mu_
  std::multimap<store::Revision, std::function<void()>> waiters_;  // guarded by mu_
  bool stopped_ = false;                                           // guarded by mu_

  std::unique_ptr<store::Watcher> store_watch_;

  // Views handed over by Prepare, in revision order. A lock of its own: the committer adds
  // while the watch thread applies.
  static constexpr size_t kMaxPrepared = 65'536;
  std::mutex prepared_mu_;
  std::deque<Prepared> prepared_;  // guarded by prepared_mu_
  std::atomic<bool> following_{false};
};

}  // namespace kt::server
