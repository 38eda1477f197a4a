// A cluster for DaemonSet controller tests: controllers/testing/cluster.h's Registry and
// simulated clock with the controller driven by hand, and what the other actors of a cluster do,
// done by the test: bind a pod to the node its affinity names (the scheduler), mark it Running
// and Ready or Failed through pods/status (a kubelet). For tests only.
//
//   testing::Cluster c;
//   c.CreateNode("node1");
//   c.CreateDaemonSet("agent");
//   EXPECT_EQ(c.PodsByNode("agent").size(), 1u);
//   c.ScheduleAndRunAll("agent");           // bound, Running, Ready
//   EXPECT_EQ(c.GetDaemonSet("agent").number_ready, 1);
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/types.h"
#include "controllers/daemonset/controller.h"
#include "controllers/daemonset/util.h"
#include "controllers/testing/cluster.h"
#include "core/time.h"

namespace kt::controllers::daemonset::testing {

class Cluster : public controllers::testing::ApiCluster {
 public:
  explicit Cluster(FeatureGates gates = {}) : ApiCluster(gates) {
    Controller::Options o;
    o.clock = &clock;
    o.client = inner_;
    o.daemonsets = client::NewCacheListerWatcher(&registry_->cache(server::Resource::kDaemonSets));
    o.pods =
        client::NewCacheListerWatcher(&registry_->cache(server::Resource::kPods), PodsFilter());
    o.nodes = client::NewCacheListerWatcher(&registry_->cache(server::Resource::kNodes));
    o.gates = gates;
    o.manual = true;
    controller = std::make_unique<Controller>(std::move(o));
    controller->Start();
    Settle();
  }
  ~Cluster() override { controller->Stop(); }

  // A node with these labels (a JSON object) and taints (JSON taints); `unschedulable` also
  // sets the unschedulable taint, as the node lifecycle controller would.
  void CreateNode(const std::string& name, const std::string& labels = "{}",
                  const std::vector<std::string>& taints = {}, bool unschedulable = false) {
    std::vector<std::string> all = taints;
    if (unschedulable) {
      all.push_back(R"({"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"})");
    }
    Must(inner_->CreateSync(server::Resource::kNodes, "",
                            Cat({R"({"metadata":{"name":")", name, R"(","labels":)", labels,
                                 R"(},"spec":{"unschedulable":)", unschedulable ? "true" : "false",
                                 R"(,"taints":)", Join(all), "}}"})));
    Settle();
  }
  void SetNodeLabels(const std::string& name, const std::string& labels) {
    Must(inner_->PatchSync(server::Resource::kNodes, "", name, server::Subresource::kNone,
                           api::PatchType::kMergePatch,
                           Cat({R"({"metadata":{"labels":)", labels, "}}"})));
    Settle();
  }

  // A DaemonSet selecting app=<name> with one container of `image`; `spec_extra` and
  // `pod_spec_extra` are more members of spec and of spec.template.spec. Its pods have
  // terminationGracePeriodSeconds 0: there is no kubelet here to end a graceful deletion.
  void CreateDaemonSet(const std::string& name, const std::string& spec_extra = "",
                       const std::string& pod_spec_extra = "", const std::string& image = "v1") {
    std::string spec = Cat({R"({"selector":{"matchLabels":{"app":")", name,
                            R"("}},"template":{"metadata":{"labels":{"app":")", name,
                            R"("}},"spec":{"terminationGracePeriodSeconds":0,)",
                            R"("containers":[{"name":"c","image":")", image, "\"}"});
    spec.append("]").append(pod_spec_extra.empty() ? "" : "," + pod_spec_extra).append("}}");
    if (!spec_extra.empty()) spec.append(",").append(spec_extra);
    spec.append("}");
    Must(inner_->CreateSync(
        server::Resource::kDaemonSets, "default",
        Cat({R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":")", name,
             R"("},"spec":)", spec, "}"})));
    Settle();
  }
  // Changes the container image: a new template.
  void SetImage(const std::string& name, const std::string& image) {
    Must(inner_->PatchSync(
        server::Resource::kDaemonSets, "default", name, server::Subresource::kNone,
        api::PatchType::kStrategicMergePatch,
        Cat({R"({"spec":{"template":{"spec":{"containers":[{"name":"c","image":")", image,
             R"("}]}}}})"})));
    Settle();
  }
  void PatchDaemonSet(const std::string& name, const std::string& merge_patch) {
    Must(inner_->PatchSync(server::Resource::kDaemonSets, "default", name,
                           server::Subresource::kNone, api::PatchType::kMergePatch, merge_patch));
    Settle();
  }

  api::DaemonSet GetDaemonSet(const std::string& name) {
    SyncCaches();
    return *registry_->cache(server::Resource::kDaemonSets)
                .Get("default", name)
                ->As<api::DaemonSet>();
  }
  // The pods the DaemonSet controls, not being deleted.
  std::vector<api::Pod> DaemonPods(const std::string& ds) {
    const std::string uid = GetDaemonSet(ds).meta.uid;
    std::vector<api::Pod> out;
    for (const server::ObjectPtr& o : List(server::Resource::kPods)) {
      const api::Pod& p = *o->As<api::Pod>();
      if (p.meta.deletion_timestamp) continue;
      for (const api::OwnerReference& r : p.meta.owner_references) {
        if (r.controller && r.uid == uid) out.push_back(p);
      }
    }
    return out;
  }
  // Target node → the names of its daemon pods.
  std::map<std::string, std::vector<std::string>> PodsByNode(const std::string& ds) {
    std::map<std::string, std::vector<std::string>> out;
    for (const api::Pod& p : DaemonPods(ds)) {
      out[GetTargetNodeName(p).value_or("?")].push_back(p.meta.name);
    }
    return out;
  }

  // The scheduler's part: binds every unbound daemon pod to the node its affinity names.
  void ScheduleAll(const std::string& ds) {
    for (const api::Pod& p : DaemonPods(ds)) {
      if (p.spec.node_name.empty()) BindPod(p.meta.name, GetTargetNodeName(p).value_or(""));
    }
    Settle();
  }
  // A kubelet's part: phase Running and the Ready condition (lastTransitionTime now).
  void SetReady(const std::string& pod, bool ready = true) {
    const std::string now = FormatRfc3339(clock.Now());
    Must(inner_->PatchSync(
        server::Resource::kPods, "default", pod, server::Subresource::kStatus,
        api::PatchType::kStrategicMergePatch,
        Cat({R"({"status":{"phase":"Running","conditions":[{"type":"Ready","status":")",
             ready ? "True" : "False", R"(","lastTransitionTime":")", now, "\"}]}}"})));
    Settle();
  }
  void SetPhase(const std::string& pod, const std::string& phase) {
    Must(inner_->PatchSync(server::Resource::kPods, "default", pod, server::Subresource::kStatus,
                           api::PatchType::kMergePatch,
                           Cat({R"({"status":{"phase":")", phase, "\"}}"})));
    Settle();
  }
  // Binds every unbound daemon pod and marks every daemon pod that is not Ready Running and
  // Ready.
  void ScheduleAndRunAll(const std::string& ds) {
    ScheduleAll(ds);
    for (const api::Pod& p : DaemonPods(ds)) {
      if (!IsPodReady(p)) SetReady(p.meta.name);
    }
  }

  std::unique_ptr<Controller> controller;

 protected:
  size_t RunControllers() override { return controller->RunPending(); }
};

}  // namespace kt::controllers::daemonset::testing
