// The garbage collector (kube-controller-manager's `garbage-collector-controller`, upstream
// pkg/controller/garbagecollector), for the kinds kubetaint serves: it deletes objects whose
// owners are gone, and carries out the Orphan and Foreground deletion of owners.
//
//   - A dependent (a Pod, Lease or DaemonSet with metadata.ownerReferences) all of whose owners
//     are gone — absent, or present under another UID, as a live read confirms — is deleted,
//     with its UID as precondition: pods of a deleted DaemonSet, the Lease of a deleted Node.
//     When some owners remain, only the references to the gone ones are removed. A reference to
//     a kind not served here (e.g. a ReplicaSet) cannot be resolved: such a dependent is left
//     alone, as upstream leaves what it cannot look up.
//   - An owner deleted with propagationPolicy=Orphan keeps the `orphan` finalizer (the registry
//     adds it): its references are removed from every dependent, then the finalizer.
//   - An owner deleted with propagationPolicy=Foreground keeps `foregroundDeletion`: its
//     dependents are deleted, and once none is left the finalizer is removed.
// Owners it resolves: v1 Node and apps/v1 DaemonSet (a Pod as owner is not resolved: its
// dependents are left alone). Its pods informer holds only pods with an owner it resolves
// (DependentFilter), so that pods of other owners cost it nothing. Nothing is done before every
// informer has synced.
//
//   Controller::Options o;
//   o.clock = clock; o.client = client;
//   o.pods = NewCacheListerWatcher(&registry.cache(Resource::kPods), DependentFilter());
//   (and leases, nodes, daemonsets)
//   Controller gc(std::move(o));
//   gc.Start();
//
// Threading: one loop thread (Start), or with `manual` wherever RunPending is called (tests on a
// simulated clock). Public methods are thread-safe.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "client/client.h"
#include "client/clock.h"
#include "client/informer.h"
#include "client/loop.h"

namespace kt::controllers::garbagecollector {

inline constexpr std::string_view kControllerName = "garbage-collector-controller";

// Objects with at least one ownerReference to a kind the collector resolves: what its pods
// informer needs to hold.
server::ObjectFilter DependentFilter();

class Controller {
 public:
  struct Options {
    client::Clock* clock = nullptr;
    client::Client* client = nullptr;
    std::unique_ptr<client::ListerWatcher> pods;  // with DependentFilter
    std::unique_ptr<client::ListerWatcher> leases;
    std::unique_ptr<client::ListerWatcher> nodes;
    std::unique_ptr<client::ListerWatcher> daemonsets;
    // How long a failed step waits before it is tried again.
    client::Duration retry = std::chrono::seconds(1);
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
  bool HasSynced() const;

 private:
  // An object to look at: a dependent (are its owners there?) or an owner being deleted with
  // a garbage collector finalizer.
  struct Item {
    bool owner = false;
    server::Resource resource;
    std::string namespace_;
    std::string name;
    auto operator<=>(const Item&) const = default;
  };

  client::Informer* InformerOf(server::Resource r) const;
  void Enqueue(Item item);
  void EnqueueDependentsOf(std::string_view uid);
  void EnqueueOwnersOf(const server::ObjectPtr& dependent);
  void OnDependent(server::Resource r, const server::ObjectPtr& object);
  void OnOwner(server::Resource r, const server::ObjectPtr& object);
  size_t Drain();
  void ProcessDependent(const Item& item);
  // With every reference checked by a live read: `gone[i]` for references[i].
  void Collect(const Item& item, const server::ObjectPtr& object, std::vector<bool> gone);
  void ProcessOwner(const Item& item);
  // A live read whose answer `done` gets on the loop thread: the object, null when it does not
  // exist, or nullopt on any other error.
  void ReadLive(server::Resource r, const std::string& ns, const std::string& name,
                std::function<void(std::optional<server::ObjectPtr>)> done);
  // The dependents, in every dependent informer, that name `uid` as an owner.
  std::vector<server::ObjectPtr> DependentsOf(std::string_view uid) const;
  void RemoveReferences(const server::ObjectPtr& dependent, const std::vector<bool>& drop,
                        std::function<void(bool)> done);
  // Deletes `object` with its UID as precondition; a failure brings `retry` back later.
  void Delete(const server::StoredObject& object, const Item& retry);
  void RemoveFinalizer(const server::ObjectPtr& owner, std::string_view finalizer);
  void RetryLater(Item item);
  client::WriteDone Tracked(client::WriteDone done);

  Options options_;
  client::Clock* clock_;
  client::Client* client_;
  std::unique_ptr<client::Informer> pods_, leases_, nodes_, daemonsets_;
  std::unique_ptr<client::Loop> loop_;
  bool synced_ = false;     // loop thread
  std::deque<Item> queue_;  // loop thread
  std::set<Item> queued_;   // loop thread
  std::atomic<size_t> in_flight_{0};
};

}  // namespace kt::controllers::garbagecollector
