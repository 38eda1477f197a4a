// The simulated kubelets against a real Registry on the memory store, on a simulated clock
// (controllers/testing/api.h):
// Settle() runs the kubelets and their writes to quiescence, Advance() steps through timers, so
// nothing sleeps.
#include "kubelet/kubelet.h"

#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>

#include "api/codec.h"
#include "controllers/testing/api.h"

namespace kt::kubelet {
namespace {

using server::ObjectPtr;
using server::Resource;
using std::chrono::seconds;

class KubeletTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (kubelets_) kubelets_->Stop();
  }
  void Start(NodeTemplate node) {
    Kubelets::Options o;
    o.clock = &api_.clock;
    o.client = kubelet_client_ != nullptr ? kubelet_client_ : client_;
    o.heartbeat_client = heartbeat_client_;
    o.pods = api_.ListerWatcher(Resource::kPods);
    o.nodes = api_.ListerWatcher(Resource::kNodes);
    o.node = std::move(node);
    o.kubelet_version = "v1.35.0";
    o.manual = true;
    kubelets_ = std::make_unique<Kubelets>(std::move(o));
    kubelets_->Start();
    Settle();
  }
  void Start(int count) {
    NodeTemplate t;
    t.count = count;
    Start(std::move(t));
  }
  void Settle() {
    controllers::testing::Settle(*kubelets_, [this] {
      api_.SyncCaches({Resource::kNodes, Resource::kPods, Resource::kLeases});
    });
  }
  void Advance(client::Duration d) {
    controllers::testing::AdvanceTo(api_.clock, api_.clock.Now() + d, [this] { Settle(); });
  }
  ObjectPtr Get(Resource r, std::string_view ns, std::string_view name) {
    return api_.Get(r, ns, name);
  }
  rapidjson::Document Json(const ObjectPtr& o) {
    Result<rapidjson::Document> d = api::ParseJson(*o->json);
    EXPECT_TRUE(d);
    return d ? std::move(*d) : rapidjson::Document();
  }
  static std::string Str(const rapidjson::Value& doc, const char* pointer) {
    const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(doc);
    if (v == nullptr) return "<absent>";
    if (v->IsString()) return v->GetString();
    if (v->IsInt64()) return std::to_string(v->GetInt64());
    if (v->IsBool()) return v->GetBool() ? "true" : "false";
    return "<other>";
  }
  std::string Condition(std::string_view node, std::string_view type) {
    ObjectPtr n = Get(Resource::kNodes, "", node);
    if (!n) return "<no node>";
    for (const api::Condition& c : n->As<api::Node>()->status.conditions) {
      if (c.type == type) return c.status;
    }
    return "<absent>";
  }
  std::string RenewTime(std::string_view node) {
    ObjectPtr l = Get(Resource::kLeases, "kube-node-lease", node);
    return l ? l->As<api::Lease>()->renew_time : "<no lease>";
  }
  void Write(const server::ApiResult<store::Bytes>& r) { ASSERT_TRUE(r) << r.error().message; }
  void Annotate(std::string_view node, std::string_view value) {
    std::string patch = value.empty()
                            ? R"({"metadata":{"annotations":{"kubetaint.io/simulate":null}}})"
                            : R"({"metadata":{"annotations":{"kubetaint.io/simulate":")" +
                                  std::string(value) + R"("}}})";
    Write(client_->PatchSync(Resource::kNodes, "", std::string(node), server::Subresource::kNone,
                             api::PatchType::kMergePatch, patch));
    Settle();
  }
  void CreatePod(std::string_view name, std::string_view node, std::string_view extra = "") {
    std::string pod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" +
                      std::string(name) + R"("},"spec":{"nodeName":")" + std::string(node) +
                      R"(","containers":[{"name":"web","image":"nginx:1.27"}])" +
                      std::string(extra) + "}}";
    Write(client_->CreateSync(Resource::kPods, "default", pod));
    Settle();
  }

  controllers::testing::TestApi api_;
  client::Client* client_ = &api_.client();
  // The kubelets' clients when set (Start); by default client_ for everything.
  client::Client* kubelet_client_ = nullptr;
  client::Client* heartbeat_client_ = nullptr;
  std::unique_ptr<Kubelets> kubelets_;
};

// Counts the writes it passes on, by resource and subresource.
class CountingClient : public controllers::testing::ForwardingClient {
 public:
  using ForwardingClient::ForwardingClient;
  void Create(Resource r, std::string ns, std::string body, client::WriteDone done) override {
    Count(r, server::Subresource::kNone);
    ForwardingClient::Create(r, std::move(ns), std::move(body), std::move(done));
  }
  void Patch(Resource r, std::string ns, std::string name, server::Subresource sub,
             api::PatchType type, std::string patch, client::WriteDone done) override {
    Count(r, sub);
    ForwardingClient::Patch(r, std::move(ns), std::move(name), sub, type, std::move(patch),
                            std::move(done));
  }
  int Writes(Resource r, server::Subresource sub) {
    std::lock_guard<std::mutex> lock(mu_);
    return counts_[{r, sub}];
  }

 private:
  void Count(Resource r, server::Subresource sub) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_[{r, sub}];
  }
  std::mutex mu_;
  std::map<std::pair<Resource, server::Subresource>, int> counts_;  // guarded by mu_
};

TEST_F(KubeletTest, NodesRegisterWithLabelsCapacityConditionsNodeInfoTaintsAndLeases) {
  NodeTemplate t;
  t.count = 3;
  t.zones = {"zone-a", "zone-b"};
  ASSERT_TRUE(ParseCapacity("cpu=8,nvidia.com/gpu=1", &t).ok());
  Result<std::vector<Taint>> taints = ParseRegisterTaints("gpu=true:NoSchedule");
  ASSERT_TRUE(taints);
  t.taints = *taints;
  Start(std::move(t));
  EXPECT_EQ(kubelets_->Registered(), 3u);
  for (int i = 1; i <= 3; ++i) {
    const std::string name = "node" + std::to_string(i);
    ObjectPtr node = Get(Resource::kNodes, "", name);
    ASSERT_NE(node, nullptr) << name;
    rapidjson::Document d = Json(node);
    EXPECT_EQ(Str(d, "/metadata/labels/kubernetes.io~1hostname"), name);
    EXPECT_EQ(Str(d, "/metadata/labels/topology.kubernetes.io~1zone"),
              i % 2 == 1 ? "zone-a" : "zone-b");
    EXPECT_EQ(Str(d, "/status/capacity/cpu"), "8");
    EXPECT_EQ(Str(d, "/status/capacity/nvidia.com~1gpu"), "1");
    EXPECT_EQ(Str(d, "/status/allocatable/memory"), "16Gi");
    EXPECT_EQ(Str(d, "/spec/taints/0/key"), "gpu");
    EXPECT_EQ(Str(d, "/spec/taints/0/effect"), "NoSchedule");
    for (const char* f : {"machineID", "systemUUID", "bootID", "kernelVersion", "osImage",
                          "containerRuntimeVersion", "kubeletVersion", "kubeProxyVersion",
                          "operatingSystem", "architecture"}) {
      const std::string v = Str(d, ("/status/nodeInfo/" + std::string(f)).c_str());
      EXPECT_NE(v, "<absent>") << f;
      EXPECT_FALSE(v.empty()) << f;
    }
    EXPECT_EQ(Condition(name, "Ready"), "True");
    EXPECT_EQ(Condition(name, "MemoryPressure"), "False");
    EXPECT_EQ(Condition(name, "NetworkUnavailable"), "<absent>");
    ObjectPtr lease = Get(Resource::kLeases, "kube-node-lease", name);
    ASSERT_NE(lease, nullptr) << name;
    EXPECT_EQ(lease->As<api::Lease>()->holder_identity, name);
    EXPECT_EQ(lease->As<api::Lease>()->lease_duration_seconds, 40);
    ASSERT_EQ(lease->meta().owner_references.size(), 1u);
    EXPECT_EQ(lease->meta().owner_references[0].uid, node->meta().uid);
  }
}

TEST_F(KubeletTest, LeasesAreRenewedEveryTenSecondsAndStatusReportedWhenDue) {
  Start(1);
  const std::string first = RenewTime("node1");
  Advance(seconds(11));
  const std::string second = RenewTime("node1");
  EXPECT_NE(first, second);
  EXPECT_GT(second, first);
  // Unchanged status is reported every 5 minutes, not every 10 s.
  ObjectPtr node = Get(Resource::kNodes, "", "node1");
  const store::Revision before = node->revision;
  Advance(seconds(60));
  EXPECT_EQ(Get(Resource::kNodes, "", "node1")->revision, before);
  Advance(std::chrono::minutes(5));
  EXPECT_GT(Get(Resource::kNodes, "", "node1")->revision, before);
}

TEST_F(KubeletTest, HeartbeatsGoThroughTheHeartbeatClientAndPodWorkDoesNot) {
  // As upstream's kubelet and its HeartbeatClient: a backlog of pod writes in the main client
  // (thousands of pods starting at once) never delays a lease renewal or a node status.
  CountingClient work(client_), heartbeats(client_);
  kubelet_client_ = &work;
  heartbeat_client_ = &heartbeats;
  Start(2);
  CreatePod("web", "node1");
  Advance(seconds(21));
  Annotate("node2", "memory-pressure");
  EXPECT_EQ(heartbeats.Writes(Resource::kLeases, server::Subresource::kNone), 2 + 2 * 2)
      << "each lease created, then renewed at 10 s and 20 s";
  EXPECT_GE(heartbeats.Writes(Resource::kNodes, server::Subresource::kStatus), 1);
  EXPECT_EQ(Condition("node2", "MemoryPressure"), "True");
  EXPECT_EQ(work.Writes(Resource::kLeases, server::Subresource::kNone), 0);
  EXPECT_EQ(work.Writes(Resource::kNodes, server::Subresource::kStatus), 0);
  EXPECT_EQ(work.Writes(Resource::kNodes, server::Subresource::kNone), 2) << "registration";
  EXPECT_EQ(work.Writes(Resource::kPods, server::Subresource::kStatus), 1);
  EXPECT_EQ(heartbeats.Writes(Resource::kPods, server::Subresource::kStatus), 0);
}

TEST_F(KubeletTest, PodsBoundToANodeRunAndAreReady) {
  Start(2);
  CreatePod("web", "node2", R"(,"initContainers":[{"name":"init","image":"busybox"}])");
  ObjectPtr pod = Get(Resource::kPods, "default", "web");
  ASSERT_NE(pod, nullptr);
  rapidjson::Document d = Json(pod);
  EXPECT_EQ(Str(d, "/status/phase"), "Running");
  EXPECT_EQ(Str(d, "/status/hostIP"), "172.16.0.2");
  EXPECT_EQ(Str(d, "/status/podIP").rfind("10.64.2.", 0), 0u) << Str(d, "/status/podIP");
  EXPECT_NE(Str(d, "/status/startTime"), "<absent>");
  EXPECT_EQ(Str(d, "/status/containerStatuses/0/name"), "web");
  EXPECT_EQ(Str(d, "/status/containerStatuses/0/image"), "nginx:1.27");
  EXPECT_EQ(Str(d, "/status/containerStatuses/0/ready"), "true");
  EXPECT_NE(Str(d, "/status/containerStatuses/0/state/running/startedAt"), "<absent>");
  EXPECT_EQ(Str(d, "/status/initContainerStatuses/0/state/terminated/reason"), "Completed");
  bool ready = false;
  for (const api::Condition& c : pod->As<api::Pod>()->status.conditions) {
    if (c.type == "Ready") ready = c.status == "True";
  }
  EXPECT_TRUE(ready);
  // A pod on a node that is not one of these kubelets' is left alone.
  CreatePod("elsewhere", "other-node");
  EXPECT_EQ(Get(Resource::kPods, "default", "elsewhere")->As<api::Pod>()->status.phase, "Pending");
}

TEST_F(KubeletTest, AGracefulDeletionEndsAfterTheGracePeriod) {
  Start(1);
  CreatePod("web", "node1", R"(,"terminationGracePeriodSeconds":20)");
  server::DeleteOptions none;
  ASSERT_TRUE(client_->DeleteSync(Resource::kPods, "default", "web", none));
  Settle();
  ObjectPtr pod = Get(Resource::kPods, "default", "web");
  ASSERT_NE(pod, nullptr);
  EXPECT_TRUE(pod->meta().deletion_timestamp.has_value());
  Advance(seconds(19));
  EXPECT_NE(Get(Resource::kPods, "default", "web"), nullptr);
  Advance(seconds(1));
  EXPECT_EQ(Get(Resource::kPods, "default", "web"), nullptr);
}

TEST_F(KubeletTest, AnUnreachableNodeGoesSilentAndHealsWhenTheAnnotationGoes) {
  Start(1);
  CreatePod("web", "node1", R"(,"terminationGracePeriodSeconds":5)");
  Annotate("node1", "unreachable");
  const std::string silent_since = RenewTime("node1");
  ASSERT_TRUE(client_->DeleteSync(Resource::kPods, "default", "web", {}));
  Advance(seconds(60));
  EXPECT_EQ(RenewTime("node1"), silent_since);
  // Nobody ends the deletion while the kubelet is cut off.
  EXPECT_NE(Get(Resource::kPods, "default", "web"), nullptr);
  Annotate("node1", "");
  EXPECT_GT(RenewTime("node1"), silent_since);
  Settle();
  EXPECT_EQ(Get(Resource::kPods, "default", "web"), nullptr);
}

TEST_F(KubeletTest, SimulatedConditionsAreReportedAtOnceAndHeal) {
  Start(1);
  Annotate("node1", "memory-pressure, disk-pressure");
  EXPECT_EQ(Condition("node1", "MemoryPressure"), "True");
  EXPECT_EQ(Condition("node1", "DiskPressure"), "True");
  EXPECT_EQ(Condition("node1", "Ready"), "True");
  Annotate("node1", "not-ready,network-unavailable");
  EXPECT_EQ(Condition("node1", "MemoryPressure"), "False");
  EXPECT_EQ(Condition("node1", "Ready"), "False");
  EXPECT_EQ(Condition("node1", "NetworkUnavailable"), "True");
  Annotate("node1", "healthy");
  EXPECT_EQ(Condition("node1", "Ready"), "True");
  EXPECT_EQ(Condition("node1", "NetworkUnavailable"), "False");
}

TEST_F(KubeletTest, ExtendedResourcesAUserAdvertisesSurviveStatusUpdates) {
  Start(1);
  Write(client_->PatchSync(Resource::kNodes, "", "node1", server::Subresource::kStatus,
                           api::PatchType::kMergePatch,
                           R"({"status":{"capacity":{"example.com/dongle":"4"}}})"));
  Annotate("node1", "memory-pressure");
  Advance(std::chrono::minutes(6));
  rapidjson::Document d = Json(Get(Resource::kNodes, "", "node1"));
  EXPECT_EQ(Str(d, "/status/capacity/example.com~1dongle"), "4");
  EXPECT_EQ(Condition("node1", "MemoryPressure"), "True");
}

TEST_F(KubeletTest, AnExistingNodeIsTakenOver) {
  Write(client_->CreateSync(Resource::kNodes, "",
                            R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node1"}})"));
  Start(1);
  EXPECT_EQ(kubelets_->Registered(), 1u);
  EXPECT_EQ(Condition("node1", "Ready"), "True");
  EXPECT_NE(RenewTime("node1"), "<no lease>");
}

TEST(KubeletFlagsTest, BadValuesAreNamed) {
  Result<Simulation> bad = ParseSimulation("unreachable,on-fire");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("unknown value \"on-fire\""), std::string::npos);
  NodeTemplate t;
  Status s = ParseCapacity("cpu=lots", &t);
  EXPECT_EQ(s.message(), "--capacity: cpu: \"lots\" is not a quantity");
  EXPECT_FALSE(ParseCapacity("cpu", &t).ok());
  EXPECT_FALSE(ParseRegisterTaints("k=v:Sometimes"));
  Result<Simulation> two = ParseSimulation(" pid-pressure , not-ready ");
  ASSERT_TRUE(two);
  EXPECT_TRUE(two->pid_pressure);
  EXPECT_TRUE(two->not_ready);
  EXPECT_FALSE(two->unreachable);
}

}  // namespace
}  // namespace kt::kubelet
