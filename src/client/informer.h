// Informers: a local, indexed copy of one resource's objects, kept current by list-then-watch,
// with add/update/delete handlers — client-go's SharedIndexInformer.
//
//   Informer pods(NewCacheListerWatcher(&registry.cache(Resource::kPods)));
//   pods.AddIndexer("spec.nodeName", [](const StoredObject& o) { ... });
//   pods.AddEventHandler({.on_add = ..., .on_update = ..., .on_delete = ...});
//   pods.Start();                        // lists, then watches from the list's revision
//   WaitForCacheSync({&pods}, deadline);
//   ObjectPtr p = pods.Get("default", "nginx");
//
// Semantics (client-go's):
//   - Start lists, delivers every listed object as an add with `initial` set, then watches
//     from the list's resourceVersion. HasSynced turns true once the listed objects have been
//     delivered to every handler.
//   - A watch that ends with 410 Gone (the server no longer has the history) relists: objects
//     that changed arrive as updates, new ones as adds, vanished ones as deletes (with their
//     last known state). A watch the server closes normally (its timeout) is restarted at once
//     from the last revision seen; one that failed, after a backoff on the Clock (800 ms
//     doubling to 30 s, as client-go's reflector).
//   - The local store and the indexes are updated before the handlers of a change run, so a
//     handler reading the informer sees at least that change.
//   - Updates whose object did not change revision are not delivered (client-go delivers them
//     on relists; handlers there ignore them by resourceVersion).
//
// Objects are the API server's own StoredObjects (JSON bytes plus typed view), shared, never
// copied: in-process informers are fed from the watch caches without re-encoding JSON; HTTP
// informers decode each object once.
//
// Threading: handlers run one at a time, in the order of the changes, on the informer's
// dispatch thread (Start), or on whichever thread calls DispatchPending when the informer was
// made with `manual_dispatch` (tests and simulations drive it then). Handlers must not block
// for long; they usually enqueue keys. Get, List and ByIndex may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "client/clock.h"
#include "core/hash_slots.h"
#include "core/status.h"
#include "server/object.h"
#include "server/watch_cache.h"

namespace kt::client {

using server::ObjectPtr;
using server::StoredObject;

// Where an informer's objects come from: one resource, possibly filtered.
class ListerWatcher {
 public:
  virtual ~ListerWatcher() = default;

  // The resource listed and watched.
  virtual const server::ResourceInfo& Info() const = 0;

  struct ListResult {
    std::vector<ObjectPtr> items;
    store::Revision revision = 0;
  };
  virtual Result<ListResult> List() = 0;
  // Watches the changes after `revision`, delivering them to `sink` until the watch ends
  // (sink->OnEnd) or the handle is destroyed. kGone when `revision` is too old.
  virtual Result<std::unique_ptr<server::WatchCache::WatchHandle>> Watch(
      store::Revision revision, std::shared_ptr<server::WatchSink> sink) = 0;
};

// Lists and watches a watch cache in this process (`filter` narrows it, e.g. a namespace).
std::unique_ptr<ListerWatcher> NewCacheListerWatcher(server::WatchCache* cache,
                                                     server::ObjectFilter filter = {});

struct EventHandler {
  // `initial`: the object came with the first list.
  std::function<void(const ObjectPtr& object, bool initial)> on_add;
  std::function<void(const ObjectPtr& old_object, const ObjectPtr& new_object)> on_update;
  // The object's last state.
  std::function<void(const ObjectPtr& object)> on_delete;
};

// Index values of an object (e.g. its spec.nodeName); empty: not indexed.
using IndexFunc = std::function<std::vector<std::string>(const StoredObject&)>;

class Informer {
 public:
  // At most this many changes wait without waking the dispatcher (Options::wake_for).
  static constexpr size_t kLazyLimit = 1024;

  struct Options {
    // No dispatch thread: the owner calls DispatchPending.
    bool manual_dispatch = false;
    // With manual dispatch: called (on the watch's thread, without the informer's locks) when
    // changes arrive while none were pending, so the owner knows to dispatch.
    std::function<void()> on_pending;
    // Which watch events the owner must hear of at once (called on the watch's thread, with no
    // lock of the informer held; it must not block). The others are queued without waking the
    // dispatcher: they are dispatched, in order, with the next event that does wake it, or
    // within `lazy_delay`, or once kLazyLimit of them wait, whichever comes first. Unset: every
    // event wakes it. For an owner that most changes of a busy resource do not concern (the pod
    // garbage collector and every pod created), this saves a thread wake-up per change.
    std::function<bool(server::WatchEventType type, const StoredObject& object)> wake_for;
    Duration lazy_delay = std::chrono::milliseconds(100);
    // For retry backoff after a failed list or watch (defaults to the real clock).
    Clock* clock = nullptr;
    // Name for logs ("pods").
    std::string name;

    // Handlers run on the informer's own thread.
    static Options Threaded(Clock* clock, std::string name) {
      Options o;
      o.clock = clock;
      o.name = std::move(name);
      return o;
    }
    // Handlers run where DispatchPending is called.
    static Options Manual(Clock* clock, std::string name) {
      Options o = Threaded(clock, std::move(name));
      o.manual_dispatch = true;
      return o;
    }
  };

  Informer(std::unique_ptr<ListerWatcher> source, Options options);
  explicit Informer(std::unique_ptr<ListerWatcher> source) : Informer(std::move(source), {}) {}
  ~Informer();  // stops
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Before Start.
  void AddEventHandler(EventHandler handler);
  void AddIndexer(std::string name, IndexFunc fn);

  // Lists and starts watching. With a dispatch thread, handlers start running on it.
  void Start();
  // Ends the watch and the dispatch thread. Handlers are not called afterwards.
  void Stop();

  // Manual dispatch: delivers every change received so far (relisting if a watch ended);
  // returns how many changes were delivered.
  size_t DispatchPending();

  // Sets on_pending after construction (before Start): the owner that dispatches.
  void SetOnPending(std::function<void()> fn) { options_.on_pending = std::move(fn); }

  bool HasSynced() const { return synced_.load(std::memory_order_acquire); }
  bool manual_dispatch() const { return options_.manual_dispatch; }

  // The object by namespace and name ("" namespace for cluster-scoped kinds); null if absent.
  ObjectPtr Get(std::string_view namespace_, std::string_view name) const;
  // The object with this storage key (StoredObject::key); null if absent.
  ObjectPtr GetByKey(std::string_view key) const;
  std::vector<ObjectPtr> List() const;
  std::vector<ObjectPtr> ByIndex(std::string_view index, std::string_view value) const;
  size_t size() const;
  // The last revision the informer has seen (its list's, then every watch event's).
  store::Revision LastSyncRevision() const;

 private:
  class Sink;
  struct Lifeline;
  struct Change {
    enum class Kind : unsigned char { kListed, kEvent, kEnded } kind;
    server::WatchEventType type = server::WatchEventType::kAdded;
    ObjectPtr object;
    Status status;  // kEnded
    uint64_t watch_generation = 0;
  };
  struct Index {
    IndexFunc fn;
    std::unordered_map<std::string, std::unordered_set<std::string_view>> values;
  };

  void Run();
  // Lists and starts a watch; on failure, schedules a retry. Called on the dispatch side.
  void ListAndWatch();
  void Watch(store::Revision from);
  void ScheduleRetry(bool relist);
  void Process(Change& change);
  void Apply(const ObjectPtr& object, bool initial);
  void Remove(const ObjectPtr& object);
  void IndexLocked(const StoredObject& object, bool add);
  static uint64_t KeyHash(std::string_view key);
  // The stored object with `key` (hashed to `h`), or nullptr.
  const ObjectPtr* FindLocked(std::string_view key, uint64_t h) const;
  ObjectPtr* FindLocked(std::string_view key, uint64_t h) {
    return const_cast<ObjectPtr*>(std::as_const(*this).FindLocked(key, h));
  }
  void Push(Change change);
  // Wakes the dispatcher (on_pending, or the dispatch thread).
  void Notify();
  // A timer that wakes the dispatcher for changes queued without a wake-up, unless one is set.
  void ArmLazyFlushLocked();

  std::unique_ptr<ListerWatcher> source_;
  Options options_;
  std::unique_ptr<Clock> own_clock_;
  Clock* clock_;
  std::vector<EventHandler> handlers_;

  mutable std::shared_mutex store_mu_;
  // The objects by their keys' hashes (KeyHash); an object is found by its own key.
  HashSlots<ObjectPtr> objects_;                    // guarded by store_mu_
  std::unordered_map<std::string, Index> indexes_;  // guarded by store_mu_
  store::Revision revision_ = 0;                    // guarded by store_mu_

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Change> pending_;  // guarded by mu_
  // An emptied batch kept for its capacity: DispatchPending swaps it in for pending_, so that a
  // dispatch allocates nothing for the queue. Guarded by mu_.
  std::vector<Change> spare_;
  // The dispatcher has been woken for what pends and has not drained it yet; guarded by mu_
  bool woken_ = false;
  TimerId lazy_timer_ = 0;         // flushes changes queued without a wake-up; guarded by mu_
  bool stopping_ = false;          // guarded by mu_
  bool relist_due_ = false;        // a retry timer asked for a relist; guarded by mu_
  bool rewatch_due_ = false;       // a retry timer asked for a re-watch; guarded by mu_
  TimerId retry_timer_ = 0;        // guarded by mu_
  uint64_t watch_generation_ = 0;  // which watch the pending changes belong to; guarded by mu_
  // Shared with the watch sinks and retry timers, which reach the informer only through it,
  // so that none of them touches it once Stop has cut the line.
  std::shared_ptr<Lifeline> lifeline_;
  std::unique_ptr<server::WatchCache::WatchHandle> watch_;  // dispatch side only
  std::shared_ptr<Sink> sink_;                              // dispatch side only
  int failures_ = 0;                                        // dispatch side only
  bool started_ = false;                                    // dispatch side only

  std::atomic<bool> synced_{false};
  std::thread thread_;
};

// Waits until every informer has synced (with manual dispatch, dispatches them meanwhile);
// false at the deadline.
bool WaitForCacheSync(std::initializer_list<Informer*> informers,
                      std::chrono::steady_clock::time_point deadline);

}  // namespace kt::client
