// The garbage collector against a real Registry on a simulated clock (controllers/testing):
// Settle() runs it and its writes to quiescence, so nothing sleeps. The pods here are not
// bound to a node, so a delete removes them at once.
#include "controllers/garbagecollector/controller.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controllers/testing/api.h"

namespace kt::controllers::garbagecollector {
namespace {

using server::ObjectPtr;
using server::Resource;

class GarbageCollectorTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (gc_) gc_->Stop();
  }
  void Start() {
    Controller::Options o;
    o.clock = &api_.clock;
    o.client = &api_.client();
    o.pods = api_.ListerWatcher(Resource::kPods, DependentFilter());
    o.leases = api_.ListerWatcher(Resource::kLeases);
    o.nodes = api_.ListerWatcher(Resource::kNodes);
    o.daemonsets = api_.ListerWatcher(Resource::kDaemonSets);
    o.manual = true;
    gc_ = std::make_unique<Controller>(std::move(o));
    gc_->Start();
    Settle();
  }
  void Settle() {
    testing::Settle(*gc_, [this] {
      api_.SyncCaches(
          {Resource::kPods, Resource::kLeases, Resource::kNodes, Resource::kDaemonSets});
    });
  }
  std::string Create(Resource r, const std::string& ns, const std::string& json) {
    server::ApiResult<store::Bytes> b = api_.client().CreateSync(r, ns, json);
    EXPECT_TRUE(b) << (b ? "" : b.error().message);
    api_.SyncCaches({Resource::kPods, Resource::kLeases, Resource::kNodes, Resource::kDaemonSets});
    return b ? Uid(r, ns, json) : "";
  }
  std::string Uid(Resource r, const std::string& ns, const std::string& json) {
    const size_t at = json.find(R"("name":")") + 8;
    const std::string name = json.substr(at, json.find('"', at) - at);
    ObjectPtr o = api_.Get(r, ns, name);
    return o ? o->meta().uid : "";
  }
  std::string DaemonSet(const std::string& name) {
    return Create(Resource::kDaemonSets, "default",
                  R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":")" + name +
                      R"("},"spec":{"selector":{"matchLabels":{"app":"x"}},"template":{)"
                      R"("metadata":{"labels":{"app":"x"}},"spec":{"containers":[)"
                      R"({"name":"c","image":"x"}]}}}})");
  }
  std::string Node(const std::string& name) {
    return Create(Resource::kNodes, "",
                  R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name + R"("}})");
  }
  static std::string Ref(const std::string& api_version, const std::string& kind,
                         const std::string& name, const std::string& uid) {
    return R"({"apiVersion":")" + api_version + R"(","kind":")" + kind + R"(","name":")" + name +
           R"(","uid":")" + uid + R"("})";
  }
  void Pod(const std::string& name, const std::vector<std::string>& refs) {
    std::string owners;
    for (const std::string& r : refs) owners += (owners.empty() ? "" : ",") + r;
    Create(Resource::kPods, "default",
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
               R"(","ownerReferences":[)" + owners +
               R"(]},"spec":{"containers":[{"name":"c","image":"x"}]}})");
  }
  void Delete(Resource r, const std::string& ns, const std::string& name,
              server::Propagation propagation = server::Propagation::kDefault) {
    server::DeleteOptions o;
    o.propagation = propagation;
    ASSERT_TRUE(api_.client().DeleteSync(r, ns, name, o));
  }
  ObjectPtr Get(Resource r, const std::string& ns, const std::string& name) {
    return api_.Get(r, ns, name);
  }
  std::vector<std::string> OwnerNames(const std::string& pod) {
    std::vector<std::string> out;
    if (ObjectPtr p = Get(Resource::kPods, "default", pod)) {
      for (const api::OwnerReference& r : p->meta().owner_references) out.push_back(r.name);
    }
    return out;
  }

  controllers::testing::TestApi api_;
  std::unique_ptr<Controller> gc_;
};

TEST_F(GarbageCollectorTest, DependentsOfADeletedOwnerGoAndUnknownKindsAreLeftAlone) {
  Start();
  const std::string ds = DaemonSet("ds");
  const std::string node = Node("n1");
  Pod("owned", {Ref("apps/v1", "DaemonSet", "ds", ds)});
  Pod("replica", {Ref("apps/v1", "ReplicaSet", "web", "11111111-2222-3333-4444-555555555555")});
  Pod("two-owners", {Ref("apps/v1", "DaemonSet", "ds", ds), Ref("v1", "Node", "n1", node)});
  Settle();
  EXPECT_NE(Get(Resource::kPods, "default", "owned"), nullptr) << "its owner is there";
  EXPECT_NE(Get(Resource::kPods, "default", "replica"), nullptr)
      << "a ReplicaSet is not served: its pods are never collected";
  Delete(Resource::kDaemonSets, "default", "ds");
  Settle();
  EXPECT_EQ(Get(Resource::kPods, "default", "owned"), nullptr);
  EXPECT_NE(Get(Resource::kPods, "default", "replica"), nullptr);
  ASSERT_NE(Get(Resource::kPods, "default", "two-owners"), nullptr);
  EXPECT_EQ(OwnerNames("two-owners"), std::vector<std::string>{"n1"})
      << "only the reference to the gone owner is removed";
}

TEST_F(GarbageCollectorTest, AnOwnerOfTheSameNameButAnotherUidIsGone) {
  Start();
  DaemonSet("ds");
  Pod("stale", {Ref("apps/v1", "DaemonSet", "ds", "99999999-0000-0000-0000-000000000000")});
  Settle();
  EXPECT_EQ(Get(Resource::kPods, "default", "stale"), nullptr);
}

TEST_F(GarbageCollectorTest, TheLeaseOfADeletedNodeGoes) {
  Start();
  const std::string node = Node("n1");
  Create(Resource::kLeases, "kube-node-lease",
         R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"n1",)"
         R"("ownerReferences":[)" +
             Ref("v1", "Node", "n1", node) + R"(]},"spec":{"holderIdentity":"n1"}})");
  Settle();
  ASSERT_NE(Get(Resource::kLeases, "kube-node-lease", "n1"), nullptr);
  Delete(Resource::kNodes, "", "n1");
  Settle();
  EXPECT_EQ(Get(Resource::kLeases, "kube-node-lease", "n1"), nullptr);
}

TEST_F(GarbageCollectorTest, OrphanRemovesTheReferencesThenTheFinalizer) {
  Start();
  const std::string ds = DaemonSet("ds");
  Pod("a", {Ref("apps/v1", "DaemonSet", "ds", ds)});
  Pod("b", {Ref("apps/v1", "DaemonSet", "ds", ds)});
  Settle();
  gc_->Stop();  // the registry's half alone first
  Delete(Resource::kDaemonSets, "default", "ds", server::Propagation::kOrphan);
  ObjectPtr marked = Get(Resource::kDaemonSets, "default", "ds");
  ASSERT_NE(marked, nullptr) << "held by its orphan finalizer";
  EXPECT_TRUE(marked->meta().deletion_timestamp.has_value());
  EXPECT_EQ(
      std::vector<std::string>(marked->meta().finalizers.begin(), marked->meta().finalizers.end()),
      std::vector<std::string>{"orphan"});
  gc_.reset();
  Start();
  EXPECT_EQ(Get(Resource::kDaemonSets, "default", "ds"), nullptr);
  for (const char* p : {"a", "b"}) {
    ASSERT_NE(Get(Resource::kPods, "default", p), nullptr) << p;
    EXPECT_TRUE(OwnerNames(p).empty()) << p;
  }
}

TEST_F(GarbageCollectorTest, ForegroundDeletesTheDependentsFirst) {
  Start();
  const std::string ds = DaemonSet("ds");
  Pod("a", {Ref("apps/v1", "DaemonSet", "ds", ds)});
  Settle();
  Delete(Resource::kDaemonSets, "default", "ds", server::Propagation::kForeground);
  Settle();
  EXPECT_EQ(Get(Resource::kPods, "default", "a"), nullptr);
  EXPECT_EQ(Get(Resource::kDaemonSets, "default", "ds"), nullptr);
}

TEST_F(GarbageCollectorTest, BackgroundOrNoPolicyDeletesTheOwnerAtOnce) {
  Start();
  DaemonSet("ds");
  Delete(Resource::kDaemonSets, "default", "ds", server::Propagation::kBackground);
  EXPECT_EQ(Get(Resource::kDaemonSets, "default", "ds"), nullptr);
}

}  // namespace
}  // namespace kt::controllers::garbagecollector
