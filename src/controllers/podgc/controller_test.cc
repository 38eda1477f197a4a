// The pod garbage collector against a real Registry on a simulated clock (controllers/testing):
// Settle() runs it and its writes to quiescence, so nothing sleeps.
#include "controllers/podgc/controller.h"

#include <future>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "controllers/testing/api.h"

namespace kt::controllers::podgc {
namespace {

using server::ObjectPtr;
using server::Resource;
using std::chrono::seconds;

class PodGcTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (gc_) gc_->Stop();
  }
  void Start(int64_t threshold = 12500) {
    Controller::Options o;
    o.clock = &api_.clock;
    o.client = &api_.client();
    o.pods = api_.ListerWatcher(Resource::kPods);
    o.nodes = api_.ListerWatcher(Resource::kNodes);
    o.terminated_pod_gc_threshold = threshold;
    o.manual = true;
    gc_ = std::make_unique<Controller>(std::move(o));
    gc_->Start();
    Settle();
  }
  void Settle() {
    testing::Settle(*gc_, [this] { api_.SyncCaches({Resource::kNodes, Resource::kPods}); });
  }
  void Advance(client::Duration d) {
    testing::AdvanceTo(api_.clock, api_.clock.Now() + d, [this] { Settle(); });
  }
  void Node(const std::string& name, const std::string& ready = "True",
            const std::string& taints = "[]") {
    ASSERT_TRUE(api_.client().CreateSync(
        Resource::kNodes, "",
        R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name +
            R"("},"spec":{"taints":)" + taints +
            R"(},"status":{"conditions":[{"type":"Ready","status":")" + ready + R"("}]}})"));
  }
  void Pod(const std::string& name, const std::string& node, const std::string& extra = "") {
    std::string spec = R"("containers":[{"name":"c","image":"x"}])";
    if (!node.empty()) spec += R"(,"nodeName":")" + node + "\"";
    ASSERT_TRUE(api_.client().CreateSync(Resource::kPods, "default",
                                         R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" +
                                             name + R"(")" + extra + R"(},"spec":{)" + spec +
                                             "}}"));
  }
  void Phase(const std::string& name, const std::string& phase) {
    ASSERT_TRUE(api_.client().PatchSync(Resource::kPods, "default", name,
                                        server::Subresource::kStatus, api::PatchType::kMergePatch,
                                        R"({"status":{"phase":")" + phase + R"("}})"));
  }
  ObjectPtr Get(const std::string& name) { return api_.Get(Resource::kPods, "default", name); }

  controllers::testing::TestApi api_;
  std::unique_ptr<Controller> gc_;
};

TEST_F(PodGcTest, PodsOfADeletedNodeGoAfterTheQuarantineMarkedFailed) {
  Node("alive");
  Pod("orphan", "gone-node");
  // A finalizer keeps this one after its delete, to show what it was marked with.
  Pod("held", "gone-node", R"(,"finalizers":["example.com/hold"])");
  Pod("kept", "alive");
  Start();
  // Seen missing at the first pass (20 s), confirmed after the 40 s quarantine, then deleted.
  Advance(seconds(59));
  ASSERT_NE(Get("orphan"), nullptr);
  Advance(seconds(21));
  EXPECT_EQ(Get("orphan"), nullptr);
  EXPECT_NE(Get("kept"), nullptr);
  ObjectPtr held = Get("held");
  ASSERT_NE(held, nullptr);
  EXPECT_TRUE(held->meta().deletion_timestamp.has_value());
  const api::Pod* p = held->As<api::Pod>();
  EXPECT_EQ(p->status.phase, "Failed");
  const api::Condition* dt = nullptr;
  for (const api::Condition& c : p->status.conditions) {
    if (c.type == "DisruptionTarget") dt = &c;
  }
  ASSERT_NE(dt, nullptr);
  EXPECT_EQ(dt->status, "True");
  EXPECT_EQ(dt->reason, "DeletionByPodGC");
  EXPECT_EQ(dt->message, "PodGC: node no longer exists");
}

TEST_F(PodGcTest, ANodeThatComesBackKeepsItsPods) {
  Pod("p", "late-node");
  Start();
  Advance(seconds(30));
  Node("late-node");
  Advance(seconds(120));
  EXPECT_NE(Get("p"), nullptr);
}

TEST_F(PodGcTest, TerminatingPodsOnAnOutOfServiceNodeThatIsDownAreForceDeleted) {
  Node(
      "down", "False",
      R"([{"key":"node.kubernetes.io/out-of-service","value":"nodeshutdown","effect":"NoExecute"}])");
  Node(
      "up", "True",
      R"([{"key":"node.kubernetes.io/out-of-service","value":"nodeshutdown","effect":"NoExecute"}])");
  Pod("stuck", "down");
  Pod("running", "down");
  Pod("elsewhere", "up");
  Start();
  ASSERT_TRUE(api_.client().DeleteSync(Resource::kPods, "default", "stuck"));
  ASSERT_TRUE(api_.client().DeleteSync(Resource::kPods, "default", "elsewhere"));
  ASSERT_TRUE(Get("stuck")->meta().deletion_timestamp.has_value());
  Advance(seconds(21));
  EXPECT_EQ(Get("stuck"), nullptr);
  EXPECT_NE(Get("running"), nullptr);    // not terminating
  EXPECT_NE(Get("elsewhere"), nullptr);  // its node is Ready
}

TEST_F(PodGcTest, TerminatedPodsBeyondTheThresholdGoOldestFirst) {
  Node("n");
  for (int i = 0; i < 4; ++i) {
    Pod("done-" + std::to_string(i), "n");
    Phase("done-" + std::to_string(i), i == 3 ? "Failed" : "Succeeded");
    api_.clock.Advance(seconds(1));
  }
  Pod("running", "n");
  Start(/*threshold=*/2);
  Advance(seconds(21));
  EXPECT_EQ(Get("done-0"), nullptr);
  EXPECT_EQ(Get("done-1"), nullptr);
  EXPECT_NE(Get("done-2"), nullptr);
  EXPECT_NE(Get("done-3"), nullptr);
  EXPECT_NE(Get("running"), nullptr);
}

}  // namespace
}  // namespace kt::controllers::podgc
