// A cluster for node lifecycle tests: a Registry on the memory store (controllers/testing), the
// controller driven by hand on a simulated clock, a client between them that records the
// controller's node writes and can make them fail or race with another writer, and a tiny
// kubelet model: nodes post their conditions once and renew their Lease every 10 s until they
// are silenced. Settle() runs everything to quiescence and Advance() moves the clock timer by
// timer, so tests never sleep. For tests only.
//
//   testing::Cluster c;
//   c.CreateNode({.name = "n1", .zone = "a"});
//   c.Silence("n1");
//   c.Advance(std::chrono::seconds(60));
//   EXPECT_TRUE(c.HasTaint("n1", kTaintNodeUnreachable, kEffectNoExecute));
#pragma once

#include <cstdio>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/codec.h"
#include "client/client.h"
#include "client/clock.h"
#include "controllers/nodelifecycle/controller.h"
#include "controllers/testing/api.h"
#include "core/time.h"

namespace kt::controllers::nodelifecycle::testing {

using controllers::testing::TestApi;

// What a write of the controller's meets.
enum class Fault : unsigned char {
  kNone,
  kError,     // 500, nothing written
  kConflict,  // 409, nothing written
  // Another client adds a taint racer<k>=x:NoSchedule (k = 1, 2, ... for each injection) to the
  // node just before the write arrives, as if it had written between the controller's read and
  // its write.
  kForeignTaint,
};

// Passes every call on, recording the controller's node and pod writes; the next node taint
// patches, node status updates and pod status updates meet the faults injected for them.
class RecordingClient : public controllers::testing::ForwardingClient {
 public:
  struct Write {
    client::Time at;
    server::Resource resource;
    server::Subresource sub;
    std::string name;
    std::string body;
    bool ok = false;
  };

  RecordingClient(client::Client* inner, client::Clock* clock)
      : ForwardingClient(inner), clock_(clock) {}

  void Update(server::Resource r, std::string ns, std::string name, server::Subresource sub,
              std::string body, client::WriteDone done) override {
    Forward(r == server::Resource::kNodes ? &status_faults_ : &pod_faults_, r, sub, ns, name,
            std::move(body), /*patch=*/false, std::move(done));
  }
  void Patch(server::Resource r, std::string ns, std::string name, server::Subresource sub,
             api::PatchType type, std::string patch, client::WriteDone done) override {
    if (r != server::Resource::kNodes) {
      return inner()->Patch(r, std::move(ns), std::move(name), sub, type, std::move(patch),
                            std::move(done));
    }
    patch_type_ = type;
    Forward(&taint_faults_, r, sub, ns, name, std::move(patch), /*patch=*/true, std::move(done));
  }

  void InjectTaintWriteFaults(std::vector<Fault> f) { Inject(&taint_faults_, f); }
  void InjectStatusWriteFaults(std::vector<Fault> f) { Inject(&status_faults_, f); }
  void InjectPodStatusFaults(std::vector<Fault> f) { Inject(&pod_faults_, f); }

  // Every write of the controller's (injected failures included, with ok false).
  std::vector<Write> Writes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return writes_;
  }
  // Its node taint patches (spec.taints) that were written.
  size_t TaintWrites() const {
    size_t n = 0;
    for (const Write& w : Writes()) {
      n += w.resource == server::Resource::kNodes && w.sub == server::Subresource::kNone && w.ok;
    }
    return n;
  }
  size_t PendingFaults() const {
    std::lock_guard<std::mutex> lock(mu_);
    return taint_faults_.size() + status_faults_.size() + pod_faults_.size();
  }

 private:
  void Inject(std::deque<Fault>* q, const std::vector<Fault>& f) {
    std::lock_guard<std::mutex> lock(mu_);
    q->insert(q->end(), f.begin(), f.end());
  }
  void Forward(std::deque<Fault>* faults, server::Resource r, server::Subresource sub,
               std::string ns, std::string name, std::string body, bool patch,
               client::WriteDone done) {
    Fault fault = Fault::kNone;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!faults->empty()) {
        fault = faults->front();
        faults->pop_front();
      }
    }
    Write w{clock_->Now(), r, sub, name, body, false};
    if (fault == Fault::kError || fault == Fault::kConflict) {
      Record(std::move(w));
      if (fault == Fault::kError) {
        return done(server::ApiErr(server::NewInternalError("injected failure")));
      }
      return done(server::ApiErr(server::ConflictError(server::Info(r), name)));
    }
    if (fault == Fault::kForeignTaint) {
      // The racer reads the node and writes its taints back with one more (no precondition).
      std::promise<server::ApiResult<server::ObjectPtr>> got;
      inner()->Get(server::Resource::kNodes, "", name,
                   [&](server::ApiResult<server::ObjectPtr> r) { got.set_value(std::move(r)); });
      server::ApiResult<server::ObjectPtr> node = got.get_future().get();
      if (!node) TestApi::Abort(node.error().message);
      rapidjson::Document patch(rapidjson::kObjectType);
      auto& alloc = patch.GetAllocator();
      rapidjson::Value taints(rapidjson::kArrayType);
      for (const Taint& t : (*node)->As<api::Node>()->spec.taints) {
        taints.PushBack(api::TaintToValue(t, alloc), alloc);
      }
      const std::string key = "racer" + std::to_string(++racers_);
      taints.PushBack(api::TaintToValue(Taint{key, "x", "NoSchedule", std::nullopt}, alloc), alloc);
      rapidjson::Value spec(rapidjson::kObjectType);
      spec.AddMember("taints", taints, alloc);
      patch.AddMember("spec", spec, alloc);
      TestApi::Must(inner()->PatchSync(server::Resource::kNodes, "", name,
                                       server::Subresource::kNone, api::PatchType::kMergePatch,
                                       api::EncodeJson(patch)));
    }
    auto record = [this, w, done = std::move(done)](server::ApiResult<store::Bytes> result) {
      Write written = w;
      written.ok = result.has_value();
      Record(std::move(written));
      done(std::move(result));
    };
    if (patch) {
      inner()->Patch(r, std::move(ns), std::move(name), sub, patch_type_, std::move(body),
                     std::move(record));
    } else {
      inner()->Update(r, std::move(ns), std::move(name), sub, std::move(body), std::move(record));
    }
  }
  void Record(Write w) {
    std::lock_guard<std::mutex> lock(mu_);
    writes_.push_back(std::move(w));
  }

  client::Clock* clock_;
  api::PatchType patch_type_ = api::PatchType::kMergePatch;
  int racers_ = 0;
  mutable std::mutex mu_;
  std::deque<Fault> taint_faults_;   // guarded by mu_
  std::deque<Fault> status_faults_;  // guarded by mu_
  std::deque<Fault> pod_faults_;     // guarded by mu_
  std::vector<Write> writes_;        // guarded by mu_
};

// A node as the test kubelet registers it.
struct NodeSetup {
  std::string name = {};
  std::string zone = {};    // topology.kubernetes.io/zone; "" none
  std::string region = {};  // topology.kubernetes.io/region; "" none
  // Condition type → status, posted at creation with heartbeat now; empty: no status at all.
  std::map<std::string, std::string> conditions = {{"Ready", "True"}};
  bool unschedulable = false;
  std::vector<std::string> taints = {};  // JSON taints
  std::map<std::string, std::string> labels = {};
  bool lease = true;  // the kubelet renews a Lease (every 10 s while not silenced)
};

class Cluster {
 public:
  // `configure` adjusts the controller's options before it starts (flags).
  explicit Cluster(std::function<void(Controller::Options&)> configure = {}, bool start = true)
      : clock(api_.clock) {
    client = std::make_unique<RecordingClient>(&api_.client(), &clock);
    Controller::Options o;
    o.clock = &clock;
    o.client = client.get();
    o.nodes = api_.ListerWatcher(server::Resource::kNodes);
    o.pods = api_.ListerWatcher(server::Resource::kPods);
    server::ObjectFilter leases;
    leases.namespace_ = std::string(kNodeLeaseNamespace);
    o.leases = api_.ListerWatcher(server::Resource::kLeases, leases);
    o.host = "";
    o.manual = true;
    if (configure) configure(o);
    controller = std::make_unique<Controller>(std::move(o));
    if (start) Start();
  }
  ~Cluster() {
    controller->Stop();
    if (kubelet_timer_ != 0) clock.Cancel(kubelet_timer_);
  }

  // Starts the controller (its first pass), and fires what is due at once.
  void Start() {
    start_time = clock.Now();
    controller->Start();
    AdvanceTo(clock.Now());
  }

  void Settle() {
    controllers::testing::Settle(*controller, [this] { api_.SyncCaches(); });
  }
  void Advance(client::Duration d) { AdvanceTo(clock.Now() + d); }
  void AdvanceTo(client::Time end) {
    controllers::testing::AdvanceTo(clock, end, [this] { Settle(); });
  }

  // --- The kubelet model ---------------------------------------------------------------------

  void CreateNode(const NodeSetup& n) {
    const std::string now = FormatRfc3339(clock.Now());
    std::string labels = R"("kubernetes.io/hostname":")" + n.name + "\"";
    if (!n.zone.empty()) labels += R"(,"topology.kubernetes.io/zone":")" + n.zone + "\"";
    if (!n.region.empty()) labels += R"(,"topology.kubernetes.io/region":")" + n.region + "\"";
    for (const auto& [k, v] : n.labels) labels += ",\"" + k + "\":\"" + v + "\"";
    std::string spec;
    if (n.unschedulable) spec += R"("unschedulable":true)";
    if (!n.taints.empty()) {
      spec += spec.empty() ? "" : ",";
      spec += "\"taints\":" + Join(n.taints);
    }
    std::string body = R"({"metadata":{"name":")" + n.name + R"(","labels":{)" + labels +
                       R"(}},"spec":{)" + spec + "}";
    if (!n.conditions.empty())
      body += R"(,"status":{"conditions":)" + Conditions(n.conditions) + "}";
    body += "}";
    TestApi::Must(api_.client().CreateSync(server::Resource::kNodes, "", body));
    if (n.lease) {
      TestApi::Must(api_.client().CreateSync(
          server::Resource::kLeases, std::string(kNodeLeaseNamespace),
          R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":")" + n.name +
              R"(","namespace":"kube-node-lease"},"spec":{"holderIdentity":")" + n.name +
              R"(","leaseDurationSeconds":40,"renewTime":")" + FormatRfc3339Micro(clock.Now()) +
              "\"}}"));
      alive_.insert(n.name);
      ArmKubelets();
    }
    (void)now;
  }
  // The kubelet posts these conditions (type → status) with a fresh heartbeat.
  void PostConditions(const std::string& node, const std::map<std::string, std::string>& c) {
    TestApi::Must(api_.client().PatchSync(server::Resource::kNodes, "", node,
                                          server::Subresource::kStatus,
                                          api::PatchType::kStrategicMergePatch,
                                          R"({"status":{"conditions":)" + Conditions(c) + "}}"));
  }
  // The kubelet stops renewing its Lease (and posting status).
  void Silence(const std::string& node) { alive_.erase(node); }
  // It is back: renews its Lease now and every 10 s again.
  void Revive(const std::string& node) {
    alive_.insert(node);
    RenewLease(node);
    ArmKubelets();
  }
  void Cordon(const std::string& node, bool unschedulable = true) {
    TestApi::Must(api_.client().PatchSync(
        server::Resource::kNodes, "", node, server::Subresource::kNone, api::PatchType::kMergePatch,
        std::string(R"({"spec":{"unschedulable":)") + (unschedulable ? "true" : "false") + "}}"));
  }
  void SetTaints(const std::string& node, const std::vector<std::string>& taints) {
    TestApi::Must(api_.client().PatchSync(server::Resource::kNodes, "", node,
                                          server::Subresource::kNone, api::PatchType::kMergePatch,
                                          R"({"spec":{"taints":)" + Join(taints) + "}}"));
  }
  // Deletes the node and its Lease (upstream's garbage collector follows the Lease's owner).
  void DeleteNode(const std::string& node) {
    alive_.erase(node);
    TestApi::Must(api_.client().DeleteSync(server::Resource::kNodes, "", node));
    (void)api_.client().DeleteSync(server::Resource::kLeases, std::string(kNodeLeaseNamespace),
                                   node);
  }
  // A pod on `node` with a Ready condition of `ready`; "" for no status.
  void CreatePod(const std::string& name, const std::string& node, const std::string& ready) {
    TestApi::Must(api_.client().CreateSync(
        server::Resource::kPods, "default",
        R"({"metadata":{"name":")" + name +
            R"("},"spec":{"containers":[{"name":"c","image":"x"}],"nodeName":")" + node + "\"}}"));
    if (ready.empty()) return;
    // A create drops the status, as upstream's: the kubelet posts it.
    TestApi::Must(api_.client().PatchSync(
        server::Resource::kPods, "default", name, server::Subresource::kStatus,
        api::PatchType::kStrategicMergePatch,
        R"({"status":{"phase":"Running","conditions":[{"type":"Ready","status":")" + ready +
            R"(","lastProbeTime":null,"lastTransitionTime":")" + FormatRfc3339(clock.Now()) +
            "\"}]}}"));
  }

  // --- What the cluster shows ----------------------------------------------------------------

  std::vector<Taint> Taints(const std::string& node) {
    server::ObjectPtr o = api_.Get(server::Resource::kNodes, "", node);
    const api::Node* n = o ? o->As<api::Node>() : nullptr;
    return n ? n->spec.taints : std::vector<Taint>{};
  }
  const Taint* FindTaint(const std::vector<Taint>& taints, std::string_view key,
                         std::string_view effect) {
    for (const Taint& t : taints) {
      if (t.key == key && t.effect == effect) return &t;
    }
    return nullptr;
  }
  bool HasTaint(const std::string& node, std::string_view key, std::string_view effect) {
    const std::vector<Taint> t = Taints(node);
    return FindTaint(t, key, effect) != nullptr;
  }
  // Nodes (of those named prefix0..prefix<n-1>) with this taint.
  int CountTainted(std::string_view key, std::string_view effect) {
    int count = 0;
    for (const server::ObjectPtr& o : api_.List(server::Resource::kNodes)) {
      const api::Node* n = o->As<api::Node>();
      if (n == nullptr) continue;
      for (const Taint& t : n->spec.taints) count += t.key == key && t.effect == effect;
    }
    return count;
  }
  std::optional<api::Condition> Condition(const std::string& node, std::string_view type) {
    server::ObjectPtr o = api_.Get(server::Resource::kNodes, "", node);
    const api::Node* n = o ? o->As<api::Node>() : nullptr;
    if (n == nullptr) return std::nullopt;
    for (const api::Condition& c : n->status.conditions) {
      if (c.type == type) return c;
    }
    return std::nullopt;
  }
  std::optional<api::Condition> PodCondition(const std::string& pod, std::string_view type) {
    server::ObjectPtr o = api_.Get(server::Resource::kPods, "default", pod);
    const api::Pod* p = o ? o->As<api::Pod>() : nullptr;
    if (p == nullptr) return std::nullopt;
    for (const api::Condition& c : p->status.conditions) {
      if (c.type == type) return c;
    }
    return std::nullopt;
  }
  // How many times events with this reason and message were recorded (their counts summed).
  // The recorder writes asynchronously: polls until there are `want` (at most 2 s; with `want`
  // 0, for 100 ms, to see that none comes).
  int CountEvents(std::string_view reason, std::string_view message, int want = 1) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(want > 0 ? 2000 : 100);
    int found = 0;
    do {
      found = 0;
      for (const server::ObjectPtr& e : api_.List(server::Resource::kEvents)) {
        const api::Event* ev = e->As<api::Event>();
        if (ev != nullptr && ev->reason == reason && ev->message == message) found += ev->count;
      }
      if (want > 0 && found >= want) return found;
      std::this_thread::yield();
    } while (std::chrono::steady_clock::now() < deadline);
    return found;
  }
  std::optional<api::Event> FindEvent(std::string_view reason, std::string_view message) {
    if (CountEvents(reason, message) == 0) return std::nullopt;
    for (const server::ObjectPtr& e : api_.List(server::Resource::kEvents)) {
      const api::Event* ev = e->As<api::Event>();
      if (ev != nullptr && ev->reason == reason && ev->message == message) return *ev;
    }
    return std::nullopt;
  }

  static std::string Join(const std::vector<std::string>& items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) out.append(i ? "," : "").append(items[i]);
    return out.append("]");
  }

 private:
  TestApi api_;  // first: it outlives everything below

 public:
  client::SimulatedClock& clock;
  std::unique_ptr<RecordingClient> client;
  std::unique_ptr<Controller> controller;
  client::Time start_time{};

 private:
  std::string Conditions(const std::map<std::string, std::string>& c) {
    const std::string now = FormatRfc3339(clock.Now());
    std::vector<std::string> items;
    for (const auto& [type, status] : c) {
      items.push_back(R"({"type":")" + type + R"(","status":")" + status +
                      R"(","reason":"KubeletReason","message":"posted by the test kubelet",)"
                      R"("lastHeartbeatTime":")" +
                      now + R"(","lastTransitionTime":")" + now + "\"}");
    }
    return Join(items);
  }
  void RenewLease(const std::string& node) {
    TestApi::Must(api_.client().PatchSync(
        server::Resource::kLeases, std::string(kNodeLeaseNamespace), node,
        server::Subresource::kNone, api::PatchType::kMergePatch,
        R"({"spec":{"renewTime":")" + FormatRfc3339Micro(clock.Now()) + "\"}}"));
  }
  // Every 10 s (the kubelet's lease renewInterval) the live nodes renew their Leases.
  void ArmKubelets() {
    if (kubelet_timer_ != 0 || alive_.empty()) return;
    kubelet_timer_ = clock.AfterFunc(std::chrono::seconds(10), [this] {
      kubelet_timer_ = 0;
      for (const std::string& node : alive_) RenewLease(node);
      ArmKubelets();
    });
  }

  std::set<std::string> alive_;
  client::TimerId kubelet_timer_ = 0;
};

}  // namespace kt::controllers::nodelifecycle::testing
