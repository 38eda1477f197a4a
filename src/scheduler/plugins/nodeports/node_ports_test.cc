// NodePorts plugin, after upstream's node_ports_test.go: TestNodePorts and
// Test_isSchedulableAfterPodDeleted (research/plugins.md §5).
#include "scheduler/plugins/nodeports/node_ports.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "scheduler/testing/fakes.h"

namespace kt::scheduler {
namespace {

using testing::FakeHandle;

// Ports written as upstream's newPod helper takes them: "Protocol/HostIP/HostPort".
std::string PortsJson(const std::vector<std::string>& ports) {
  std::string out = "[";
  for (size_t i = 0; i < ports.size(); ++i) {
    std::istringstream in(ports[i]);
    std::string protocol, ip, port;
    std::getline(in, protocol, '/');
    std::getline(in, ip, '/');
    std::getline(in, port, '/');
    if (i > 0) out += ",";
    out += R"({"protocol":")" + protocol + R"(","hostIP":")" + ip + R"(","hostPort":)" + port + "}";
  }
  return out + "]";
}

// upstream newPod(host, ports...): one container with these ports.
ObjectPtr PodWithPorts(const std::string& name, const std::string& node,
                       const std::vector<std::string>& ports) {
  std::string spec = R"("containers":[{"name":"c","ports":)" + PortsJson(ports) + "}]";
  if (!node.empty()) spec += R"(,"nodeName":")" + node + "\"";
  return testing::Pod(R"({"metadata":{"name":")" + name + R"("},"spec":{)" + spec + "}}");
}

// A pod whose only host port is on an init container (a sidecar when `sidecar`).
ObjectPtr PodWithInitContainerPort(bool sidecar) {
  std::string init = R"({"name":"init",)";
  if (sidecar) init += R"("restartPolicy":"Always",)";
  init += R"("ports":[{"containerPort":8001,"hostPort":8001,"protocol":"TCP"}]})";
  return testing::Pod(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c"}],)"
                      R"("initContainers":[)" +
                      init + "]}}");
}

TEST(NodePortsTest, UpstreamTable) {
  // TestNodePorts.
  struct Row {
    const char* name;
    ObjectPtr pod;
    std::vector<std::string> node_ports;  // of the one pod on the node ("" row: none)
    const char* want;                     // "Skip" (PreFilter), "fits", or "conflict"
  };
  const std::vector<Row> rows = {
      {"skip filter", testing::Pod(R"({"metadata":{"name":"p"}})"), {}, "Skip"},
      {"other port", PodWithPorts("p", "", {"UDP/127.0.0.1/8080"}), {"UDP/127.0.0.1/9090"}, "fits"},
      {"same udp port",
       PodWithPorts("p", "", {"UDP/127.0.0.1/8080"}),
       {"UDP/127.0.0.1/8080"},
       "conflict"},
      {"same tcp port",
       PodWithPorts("p", "", {"TCP/127.0.0.1/8080"}),
       {"TCP/127.0.0.1/8080"},
       "conflict"},
      {"different host ip",
       PodWithPorts("p", "", {"TCP/127.0.0.1/8080"}),
       {"TCP/127.0.0.2/8080"},
       "fits"},
      {"different protocol",
       PodWithPorts("p", "", {"UDP/127.0.0.1/8080"}),
       {"TCP/127.0.0.1/8080"},
       "fits"},
      {"second udp port conflict",
       PodWithPorts("p", "", {"UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"}),
       {"UDP/127.0.0.1/8080"},
       "conflict"},
      {"first tcp port conflict",
       PodWithPorts("p", "", {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"}),
       {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"},
       "conflict"},
      {"first tcp port conflict due to 0.0.0.0 hostIP",
       PodWithPorts("p", "", {"TCP/0.0.0.0/8001"}),
       {"TCP/127.0.0.1/8001"},
       "conflict"},
      {"TCP hostPort conflict due to 0.0.0.0 hostIP",
       PodWithPorts("p", "", {"TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"}),
       {"TCP/127.0.0.1/8001"},
       "conflict"},
      {"second tcp port conflict to 0.0.0.0 hostIP",
       PodWithPorts("p", "", {"TCP/127.0.0.1/8001"}),
       {"TCP/0.0.0.0/8001"},
       "conflict"},
      {"second different protocol",
       PodWithPorts("p", "", {"UDP/127.0.0.1/8001"}),
       {"TCP/0.0.0.0/8001"},
       "fits"},
      {"UDP hostPort conflict due to 0.0.0.0 hostIP",
       PodWithPorts("p", "", {"UDP/127.0.0.1/8001"}),
       {"TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"},
       "conflict"},
      {"non-sidecar initContainer using hostPort",
       PodWithInitContainerPort(false),
       {"TCP/0.0.0.0/8001"},
       "Skip"},
      {"TCP hostPort conflict from sidecar initContainer",
       PodWithInitContainerPort(true),
       {"TCP/0.0.0.0/8001"},
       "conflict"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    FakeHandle h;
    std::unique_ptr<Plugin> plugin = testing::NewPlugin(kNodePortsName, &h);
    auto* pre_filter = dynamic_cast<PreFilterPlugin*>(plugin.get());
    auto* filter = dynamic_cast<FilterPlugin*>(plugin.get());
    NodeInfo node(testing::Node(R"({"metadata":{"name":"m1"}})"));
    if (!row.node_ports.empty())
      node.AddPod(NewPodInfo(PodWithPorts("existing", "m1", row.node_ports)));
    PodInfoPtr pod = NewPodInfo(row.pod);
    PreFilterResult result;
    Status pre = pre_filter->PreFilter(*pod, &result);
    EXPECT_TRUE(result.AllNodes());
    if (std::string_view(row.want) == "Skip") {
      EXPECT_TRUE(pre.IsSkip()) << CodeName(pre.code());
      continue;
    }
    ASSERT_TRUE(pre.IsSuccess()) << CodeName(pre.code());
    Status s = filter->Filter(*pod, node);
    if (std::string_view(row.want) == "fits") {
      EXPECT_TRUE(s.IsSuccess()) << s.Message();
    } else {
      EXPECT_EQ(std::string(CodeName(s.code())), "Unschedulable");
      EXPECT_EQ(s.Reasons(), std::vector<std::string>{
                                 "node(s) didn't have free ports for the requested pod ports"});
    }
  }
}

const char* HintName(QueueingHint h) { return h == QueueingHint::kQueue ? "Queue" : "QueueSkip"; }

TEST(NodePortsTest, IsSchedulableAfterPodDeleted) {
  // Test_isSchedulableAfterPodDeleted; the pending pod wants host port 8080 (st HostPort(8080)).
  FakeHandle h;
  std::unique_ptr<Plugin> plugin = testing::NewPlugin(kNodePortsName, &h);
  auto* ext = dynamic_cast<EnqueueExtensions*>(plugin.get());
  ASSERT_NE(ext, nullptr);
  std::vector<ClusterEventWithHint> events = ext->EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event.resource, EventResource::kPod);
  EXPECT_EQ(events[0].event.action, static_cast<uint32_t>(kDelete));
  ASSERT_TRUE(events[0].hint);
  // Node/Add, without a hint: always Queue.
  EXPECT_EQ(events[1].event.resource, EventResource::kNode);
  EXPECT_EQ(events[1].event.action, static_cast<uint32_t>(kAdd));
  EXPECT_FALSE(events[1].hint);

  PodInfoPtr pending = NewPodInfo(PodWithPorts("pending", "", {"TCP/0.0.0.0/8080"}));
  struct Row {
    const char* name;
    ObjectPtr deleted;
    const char* want;
  } rows[] = {
      {"backoff-wrong-old-object", testing::Node(R"({"metadata":{"name":"not-a-pod"}})"), "Queue"},
      {"skip-queue-on-unscheduled", testing::Pod(R"({"metadata":{"name":"d"}})"), "QueueSkip"},
      {"skip-queue-on-non-hostport",
       testing::Pod(R"({"metadata":{"name":"d"},"spec":{"nodeName":"fake-node"}})"), "QueueSkip"},
      {"skip-queue-on-unrelated-hostport", PodWithPorts("d", "fake-node", {"TCP/0.0.0.0/8081"}),
       "QueueSkip"},
      {"queue-on-released-hostport", PodWithPorts("d", "fake-node", {"TCP/0.0.0.0/8080"}), "Queue"},
  };
  for (const Row& row : rows) {
    EXPECT_STREQ(HintName(events[0].hint(*pending, row.deleted, nullptr)), row.want) << row.name;
  }
}

}  // namespace
}  // namespace kt::scheduler
