// The pod garbage collector (kube-controller-manager's `pod-garbage-collector`, upstream
// pkg/controller/podgc): every gc period (20 s) it force-deletes (grace period 0)
//   - pods bound to a node that no longer exists, once the node has been missing for the
//     quarantine time (40 s) and a live read confirms it is gone: first marked Failed with the
//     condition DisruptionTarget=True (reason DeletionByPodGC, message "PodGC: node no longer
//     exists");
//   - terminating pods on a node that is not Ready and carries the
//     node.kubernetes.io/out-of-service NoExecute taint (non-graceful node shutdown): marked
//     Failed first;
//   - terminating pods that were never scheduled;
//   - the oldest terminated pods (Succeeded, Failed) beyond --terminated-pod-gc-threshold
//     (12500; 0 turns that off).
//
//   Controller::Options o;
//   o.clock = clock; o.client = client;
//   o.pods = NewCacheListerWatcher(&registry.cache(Resource::kPods));
//   o.nodes = NewCacheListerWatcher(&registry.cache(Resource::kNodes));
//   Controller gc(std::move(o));
//   gc.Start();
//
// Threading: one loop thread (Start), or with `manual` wherever RunPending is called (tests on a
// simulated clock). Public methods are thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "client/client.h"
#include "client/clock.h"
#include "client/informer.h"
#include "client/loop.h"

namespace kt::controllers::podgc {

inline constexpr std::string_view kControllerName = "pod-garbage-collector";
inline constexpr std::string_view kOutOfServiceTaint = "node.kubernetes.io/out-of-service";

class Controller {
 public:
  struct Options {
    client::Clock* clock = nullptr;
    client::Client* client = nullptr;
    std::unique_ptr<client::ListerWatcher> pods;
    std::unique_ptr<client::ListerWatcher> nodes;
    client::Duration period = std::chrono::seconds(20);      // upstream gcCheckPeriod
    client::Duration quarantine = std::chrono::seconds(40);  // upstream quarantineTime
    int64_t terminated_pod_gc_threshold = 12500;
    bool manual = false;
  };

  explicit Controller(Options options);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  void Start();
  void Stop();
  size_t RunPending();
  size_t InFlight() const { return in_flight_.load(std::memory_order_acquire); }
  bool HasSynced() const { return pods_->HasSynced() && nodes_->HasSynced(); }

 private:
  void Pass();
  void GcTerminated(const std::vector<server::ObjectPtr>& pods);
  void GcOrphaned(const std::vector<server::ObjectPtr>& pods);
  // Marks the pod Failed (with the DisruptionTarget condition when `disruption`) unless it has
  // terminated, then deletes it with grace period 0.
  void MarkFailedAndDelete(const server::ObjectPtr& pod, bool disruption);
  void ForceDelete(const server::ObjectPtr& pod);
  client::WriteDone Tracked(client::WriteDone done);

  Options options_;
  client::Clock* clock_;
  client::Client* client_;
  std::unique_ptr<client::Informer> pods_;
  std::unique_ptr<client::Informer> nodes_;
  std::unique_ptr<client::Loop> loop_;
  // Loop-thread state: nodes pods are bound to but that are not in the informer, since when;
  // and the ones a live read confirmed gone.
  std::unordered_map<std::string, client::Time> missing_since_;
  std::unordered_map<std::string, bool> confirmed_gone_;
  std::atomic<size_t> in_flight_{0};
};

}  // namespace kt::controllers::podgc
