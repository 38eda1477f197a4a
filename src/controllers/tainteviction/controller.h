// The taint eviction controller (upstream `taint-eviction-controller`, semantics.md §6): pods
// on a node with NoExecute taints they do not tolerate are deleted at once; pods that tolerate
// them for `tolerationSeconds` are deleted when the smallest such time, counted from when the
// controller first saw the pod tolerating every NoExecute taint, runs out; pods that tolerate
// them forever stay.
//
//   Controller::Options o;
//   o.clock = clock; o.client = client;
//   o.pods = NewCacheListerWatcher(&registry.cache(Resource::kPods));
//   o.nodes = NewCacheListerWatcher(&registry.cache(Resource::kNodes));
//   auto c = std::make_unique<Controller>(std::move(o));
//   c->Start();                      // lists, watches, and runs on its own thread
//
// Upstream's decisions (GetMatchingTolerations' first match, the minimum toleration time, a
// countdown kept when it already runs, cancellation when the taints go or the pod comes to
// tolerate them forever), without upstream's eviction bugs (DESIGN.md "Evictions are keyed by
// pod UID"):
//   - pending work is keyed by pod UID and carries a token: a pod re-created under the same
//     name is a different entry, and a finishing worker removes only its own entry;
//   - when its time comes, the work re-reads node and pod live (not from the informers) and
//     evicts only if the pod still does not tolerate the node's NoExecute taints for ever; the
//     status patch and the delete carry the pod's UID as a precondition, so a new pod of the same
//     name is never touched;
//   - a delete that fails is retried with exponential backoff until the pod is gone;
//   - work that ends without deleting (pod tolerates now, taint gone) looks at the pod again, so
//     a change that arrived while it ran is never lost.
// Before the delete, the pod gets the DisruptionTarget condition (reason
// DeletionByTaintManager) through pods/status; the events `Marking for deletion Pod ns/name` and
// `Cancelling deletion of Pod ns/name` (reason TaintManagerEviction) go through a core/v1 event
// recorder with the controller's name as source. Unlike upstream's, they name the pod with its
// UID, so that `kubectl describe pod` shows them.
//
// Timers: one heap of deadlines for every pending eviction, with one Clock timer armed for the
// earliest; nothing per pod but the heap entry and the map entry.
//
// Threading: the controller runs on one thread of its own (Start), which dispatches its
// informers and handles every event, timer and write completion; or, with `manual`, wherever
// RunPending is called (tests and simulations). Public methods are thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "api/types.h"
#include "api/uid_key.h"
#include "client/client.h"
#include "client/clock.h"
#include "client/event_recorder.h"
#include "client/informer.h"
#include "controllers/mailbox.h"
#include "core/feature_gates.h"
#include "core/taint.h"

namespace kt::controllers::tainteviction {

inline constexpr std::string_view kControllerName = "taint-eviction-controller";
inline constexpr std::string_view kEventReason = "TaintManagerEviction";
inline constexpr std::string_view kConditionReason = "DeletionByTaintManager";
inline constexpr std::string_view kConditionMessage =
    "Taint manager: deleting due to NoExecute taint";

// What the controller does with a pod on a node with these NoExecute taints.
struct Decision {
  enum Kind : unsigned char {
    kNone,   // the node has no NoExecute taint
    kStay,   // every taint tolerated for ever
    kNow,    // some taint not tolerated, or tolerated for <= 0 s
    kAfter,  // every taint tolerated, the shortest for `seconds`
  } kind = kNone;
  int64_t seconds = 0;
};

// The longest countdown taken as given: larger tolerationSeconds are clamped to it (upstream's
// conversion to nanoseconds overflows above about 9.2e9 s and turns the time negative).
inline constexpr int64_t kMaxTolerationSeconds = int64_t{9'000'000'000};

// Upstream processPodOnNode's decision: GetMatchingTolerations (first match per taint), then the
// minimum toleration time.
Decision Decide(std::span<const Taint> no_execute_taints, std::span<const Toleration> tolerations,
                bool comparison_operators);

// The node's NoExecute taints, in node order.
std::vector<Taint> NoExecuteTaints(const api::Node& node);

class Controller {
 public:
  struct Options {
    client::Clock* clock = nullptr;
    client::Client* client = nullptr;
    std::unique_ptr<client::ListerWatcher> pods;
    std::unique_ptr<client::ListerWatcher> nodes;
    FeatureGates gates;
    // The event source's host; upstream's controller leaves it empty.
    std::string host;
    // No thread: RunPending drives the controller (tests, simulations).
    bool manual = false;
    // Backoff of a failed delete: first retry after `retry_base`, doubling up to `retry_max`.
    client::Duration retry_base = std::chrono::milliseconds(100);
    client::Duration retry_max = std::chrono::seconds(30);
    // At most this many evictions are between their first read and their delete's answer. Each
    // waits on two commits in turn, so more in flight means larger commit batches (100,000 pods
    // evicted in 7.6 s rather than 8.7 s with 512); many more would keep other writers queued
    // behind the evictions for longer.
    int max_in_flight = 2048;
    // Where the events go; default: a core/v1 recorder with the controller's name as source.
    std::unique_ptr<client::EventRecorder> recorder;
    // Called on the controller's thread when a countdown runs out and its pod is queued for
    // eviction (which starts once fewer than max_in_flight are under way), with the deadline
    // and the time it ran out (for measurements).
    std::function<void(client::Time deadline, client::Time started)> on_fire;
  };

  explicit Controller(Options options);
  ~Controller();  // stops
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Lists and watches; with a thread, starts it. Does not wait for the informers to sync.
  void Start();
  void Stop();
  // Whether both informers have synced.
  bool HasSynced() const;

  // Manual mode: handles everything that has arrived (informer changes, due timers, finished
  // writes) without waiting; returns how many things it handled.
  size_t RunPending();
  // Evictions between their first read and their delete's answer.
  size_t InFlight() const { return in_flight_.load(std::memory_order_acquire); }

  // Introspection for tests and benchmarks (call from the controller's thread, or in manual
  // mode between RunPending calls).
  struct PendingEviction {
    std::string namespace_;
    std::string name;
    std::string uid;
    client::Time created_at;
    client::Time fire_at;
    bool running = false;
  };
  std::vector<PendingEviction> Pending() const;
  size_t PendingCount() const { return entries_.size(); }
  bool NodeTainted(std::string_view node) const;
  // Whether bound pods' changes wake the controller (some node has a NoExecute taint, or some
  // eviction is pending), as of its last round. Any thread.
  bool Attentive() const { return attentive_.load(std::memory_order_acquire); }
  client::Informer& pod_informer() { return *pods_; }
  client::Informer& node_informer() { return *nodes_; }

 private:
  using UidKey = api::UidKey;
  using UidHash = api::UidKeyHash;
  static UidKey KeyOf(std::string_view uid) { return api::UidKeyOf(uid); }

  enum class State : unsigned char { kWaiting, kRunning };
  struct Entry {
    server::ObjectPtr pod;  // as last seen; its namespace, name, uid and node
    client::Time created_at;
    client::Time fire_at;
    uint64_t token = 0;
    State state = State::kWaiting;
    bool timed = false;     // waits for a countdown (not an immediate eviction)
    uint16_t failures = 0;  // failed deletes so far
    bool recheck = false;   // a change came while it ran: look at the pod again after
  };
  struct Due {
    client::Time when;
    uint64_t token;
    UidKey key;
    bool operator>(const Due& o) const { return when != o.when ? when > o.when : token > o.token; }
  };
  struct PodItem {
    std::string namespace_;
    std::string name;
    std::string node;
    server::ObjectPtr deleted;  // the pod's last state when it was deleted
  };

  void Run();
  // One round: informers, node items, pod items, timers, completions. Returns work done.
  size_t Round();

  void OnNodeChange(const server::ObjectPtr& old_node, const server::ObjectPtr& new_node);
  void OnPodChange(const server::ObjectPtr& old_pod, const server::ObjectPtr& new_pod);
  void HandleNode(const std::string& name);
  void HandlePod(const PodItem& item);
  void ProcessPodOnNode(const server::ObjectPtr& pod, std::span<const Taint> taints,
                        client::Time now);
  void AddWork(const server::ObjectPtr& pod, client::Time created_at, client::Time fire_at);
  // Cancels waiting work for `key`; true if a countdown was stopped (then the event is sent).
  bool CancelWork(const UidKey& key);
  void Arm();
  void FireDue();
  void StartEviction(const UidKey& key, uint64_t token);
  void Verified(const UidKey& key, uint64_t token, server::ApiResult<server::ObjectPtr> node,
                server::ApiResult<server::ObjectPtr> pod);
  void Deleted(const UidKey& key, uint64_t token, server::ApiResult<store::Bytes> result);
  // The work of `token` ended (evicted, or nothing to do): forgets it if it is still its entry.
  void Finish(const UidKey& key, uint64_t token, bool evicted);
  void Retry(const UidKey& key, uint64_t token);
  void Event(const api::Pod& pod, std::string message);
  const std::vector<Taint>* TaintsOf(std::string_view node) const;

  Options options_;
  client::Clock* clock_;
  client::Client* client_;
  std::unique_ptr<client::EventRecorder> recorder_;
  std::unique_ptr<client::Informer> pods_;
  std::unique_ptr<client::Informer> nodes_;
  bool comparison_operators_ = false;

  // Controller-thread state.
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, std::vector<Taint>, StringHash, std::equal_to<>> tainted_;
  std::unordered_map<UidKey, Entry, UidHash> entries_;
  std::vector<Due> heap_;  // min-heap by (when, token); stale entries skipped when popped
  std::deque<std::string> node_items_;
  std::unordered_set<std::string> node_queued_;
  std::deque<PodItem> pod_items_;
  std::deque<std::pair<UidKey, uint64_t>> ready_;  // due, waiting for an in-flight slot
  uint64_t next_token_ = 1;
  client::TimerId timer_ = 0;
  client::Time armed_for_{};

  // Where other threads (timers, write completions, informers) hand work to this one.
  std::shared_ptr<Mailbox> box_;
  uint64_t arm_generation_ = 0;
  std::atomic<size_t> in_flight_{0};
  // Whether some node has a NoExecute taint or some pod has eviction work: otherwise no pod
  // change can matter now, and the informer's thread lets pod changes wait for the next wake-up
  // instead of waking this thread for each. Set by this thread at the end of each round.
  std::atomic<bool> attentive_{false};
  std::thread thread_;
};

}  // namespace kt::controllers::tainteviction
