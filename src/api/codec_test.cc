#include "api/codec.h"

#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/pointer.h>

// Designated initializers leave the other members at their defaults on purpose; GCC 12 still
// warns about them under -Wextra.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace kt::api {
namespace {

using rapidjson::Document;
using rapidjson::Value;

std::string ReadTestFile(const std::string& name) {
  std::ifstream in(std::string(KUBETAINT_SOURCE_DIR) + "/src/api/testdata/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Document Parse(std::string_view json) {
  Result<Document> doc = ParseJson(json);
  EXPECT_TRUE(doc.has_value()) << (doc ? "" : doc.error().message()) << "\n" << json;
  if (!doc) return Document();
  return std::move(*doc);
}

Quantity Q(std::string_view s) { return Quantity::Parse(s).value(); }

// Sets the value at a JSON pointer in `doc`, parsing `json` for the new value.
void SetAt(Document& doc, const char* pointer, std::string_view json) {
  Document v = Parse(json);
  Value copy(v, doc.GetAllocator());
  rapidjson::Pointer(pointer).Set(doc, copy);
}

void EraseAt(Document& doc, const char* pointer) { rapidjson::Pointer(pointer).Erase(doc); }

// ---------------------------------------------------------------------------------------------
// Pods

TEST(CodecPodTest, DecodesRealisticPod) {
  Document doc = Parse(ReadTestFile("pod.json"));
  Result<Pod> pod = DecodePod(doc);
  ASSERT_TRUE(pod.has_value()) << pod.error().message();

  const ObjectMeta& m = pod->meta;
  EXPECT_EQ(m.name, "web-7d4b9c6f5-x2kzq");
  EXPECT_EQ(m.generate_name, "web-7d4b9c6f5-");
  EXPECT_EQ(m.namespace_, "shop");
  EXPECT_EQ(m.uid, "3f6c2b1e-8a4d-4e0f-9b7a-1c2d3e4f5a6b");
  EXPECT_EQ(m.resource_version, "48213");
  EXPECT_EQ(m.generation, 1);
  EXPECT_EQ(m.creation_timestamp, "2025-11-02T09:14:07Z");
  EXPECT_FALSE(m.deletion_timestamp.has_value());
  EXPECT_EQ(m.labels.size(), 3u);
  ASSERT_NE(m.labels.Get("app.kubernetes.io/name"), nullptr);
  EXPECT_EQ(*m.labels.Get("app.kubernetes.io/name"), "web");
  EXPECT_EQ(*m.annotations.Get("prometheus.io/scrape"), "true");
  ASSERT_EQ(m.owner_references.size(), 1u);
  EXPECT_EQ(m.owner_references[0].kind, "ReplicaSet");
  EXPECT_TRUE(m.owner_references[0].controller);
  EXPECT_TRUE(m.owner_references[0].block_owner_deletion);
  EXPECT_EQ(m.finalizers, std::vector<std::string>{"example.com/cleanup"});

  const PodSpec& s = pod->spec;
  EXPECT_EQ(s.node_name, "node-17");
  EXPECT_EQ(s.node_selector.size(), 2u);
  EXPECT_EQ(*s.node_selector.Get("pool"), "general");
  EXPECT_EQ(s.scheduler_name, "default-scheduler");
  EXPECT_EQ(s.priority_class_name, "high");
  EXPECT_EQ(s.priority, 100000);
  EXPECT_EQ(s.preemption_policy, "PreemptLowerPriority");
  EXPECT_EQ(s.termination_grace_period_seconds, 30);
  EXPECT_FALSE(s.host_network);

  ASSERT_EQ(s.tolerations.size(), 4u);
  EXPECT_EQ(
      s.tolerations[0],
      (Toleration{.key = "dedicated", .op = "Equal", .value = "web", .effect = "NoSchedule"}));
  EXPECT_EQ(s.tolerations[1], (Toleration{.key = "node.kubernetes.io/not-ready",
                                          .op = "Exists",
                                          .effect = "NoExecute",
                                          .toleration_seconds = 300}));
  EXPECT_EQ(s.tolerations[3], (Toleration{.op = "Exists", .effect = "PreferNoSchedule"}));

  ASSERT_TRUE(s.node_affinity.has_value());
  ASSERT_TRUE(s.node_affinity->required.has_value());
  const auto& terms = s.node_affinity->required->terms;
  ASSERT_EQ(terms.size(), 2u);
  ASSERT_EQ(terms[0].match_expressions.size(), 2u);
  EXPECT_EQ(terms[0].match_expressions[0].key, "topology.kubernetes.io/zone");
  EXPECT_EQ(terms[0].match_expressions[0].op, "In");
  EXPECT_EQ(terms[0].match_expressions[0].values,
            (std::vector<std::string>{"eu-west-1a", "eu-west-1b"}));
  EXPECT_EQ(terms[0].match_expressions[1].op, "NotIn");
  ASSERT_EQ(terms[1].match_fields.size(), 1u);
  EXPECT_EQ(terms[1].match_fields[0].key, "metadata.name");
  ASSERT_EQ(s.node_affinity->preferred.size(), 2u);
  EXPECT_EQ(s.node_affinity->preferred[0].weight, 50);
  EXPECT_EQ(s.node_affinity->preferred[1].preference.match_expressions[0].op, "Gt");

  ASSERT_EQ(s.containers.size(), 2u);
  const Container& web = s.containers[0];
  EXPECT_EQ(web.name, "web");
  EXPECT_EQ(web.requests.size(), 3u);
  EXPECT_EQ(*web.requests.Get("cpu"), Q("250m"));
  EXPECT_EQ(web.requests.Get("memory")->ToString(), "1536Mi");  // "1.5Gi" canonicalized
  EXPECT_EQ(web.requests.Get("ephemeral-storage")->Value(), 2000000000);
  EXPECT_EQ(*web.limits.Get("nvidia.com/gpu"), Q("1"));
  EXPECT_EQ(web.limits.Get("cpu")->MilliValue(), 2000);
  EXPECT_EQ(s.containers[1].requests.Get("memory")->Value(), 32 << 20);
  ASSERT_EQ(s.init_containers.size(), 1u);
  EXPECT_EQ(s.init_containers[0].requests.Get("cpu")->ToString(), "100m");  // JSON number 0.1
  EXPECT_EQ(*s.overhead.Get("memory"), Q("8Mi"));

  const PodStatus& st = pod->status;
  EXPECT_EQ(st.phase, "Running");
  ASSERT_EQ(st.conditions.size(), 4u);
  EXPECT_EQ(st.conditions[2].type, "Ready");
  EXPECT_EQ(st.conditions[2].status, "True");
  EXPECT_EQ(st.conditions[2].last_transition_time, "2025-11-02T09:14:20Z");
  EXPECT_EQ(st.conditions[2].last_probe_time, "");
  EXPECT_EQ(st.host_ip, "10.0.3.17");
  EXPECT_EQ(st.pod_ip, "10.244.5.23");
  EXPECT_EQ(st.start_time, "2025-11-02T09:14:07Z");
  // Read by field selectors only.
  EXPECT_EQ(s.restart_policy, "Always");
  EXPECT_EQ(s.service_account_name, "web");
  EXPECT_EQ(st.pod_ips, std::vector<std::string>{"10.244.5.23"});
}

TEST(CodecPodTest, SetNodeNameChangesOnlyThatField) {
  const std::string original = ReadTestFile("pod.json");
  Document doc = Parse(original);
  ASSERT_TRUE(SetNodeName(doc, "node-3").ok());
  const std::string encoded = EncodeJson(doc);

  Document want = Parse(original);
  SetAt(want, "/spec/nodeName", R"("node-3")");
  Document got = Parse(encoded);
  EXPECT_TRUE(got == want);
  EXPECT_EQ(encoded, EncodeJson(want));  // member order kept too
  EXPECT_EQ(DecodePod(got)->spec.node_name, "node-3");

  // Unbinding removes the member (omitempty); a pod without nodeName gains it at the end.
  ASSERT_TRUE(SetNodeName(doc, "").ok());
  EraseAt(want, "/spec/nodeName");
  EXPECT_EQ(EncodeJson(doc), EncodeJson(want));
  ASSERT_TRUE(SetNodeName(doc, "node-9").ok());
  EXPECT_EQ(DecodePod(doc)->spec.node_name, "node-9");
  EXPECT_STREQ((doc["spec"].MemberEnd() - 1)->name.GetString(), "nodeName");
}

TEST(CodecPodTest, SetTolerationsChangesOnlyThatField) {
  const std::string original = ReadTestFile("pod.json");
  Document doc = Parse(original);
  const std::vector<Toleration> tolerations = {
      {.key = "dedicated", .op = "Equal", .value = "web", .effect = "NoSchedule"},
      {.key = "node.kubernetes.io/not-ready",
       .op = "Exists",
       .effect = "NoExecute",
       .toleration_seconds = 60},
      {.op = "Exists"},
      {.key = "gpu", .effect = "NoExecute", .toleration_seconds = 0},
  };
  ASSERT_TRUE(SetTolerations(doc, tolerations).ok());

  Document want = Parse(original);
  SetAt(want, "/spec/tolerations", R"([
      {"key":"dedicated","operator":"Equal","value":"web","effect":"NoSchedule"},
      {"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute",
       "tolerationSeconds":60},
      {"operator":"Exists"},
      {"key":"gpu","effect":"NoExecute","tolerationSeconds":0}])");
  Document got = Parse(EncodeJson(doc));
  EXPECT_TRUE(got == want);
  EXPECT_EQ(EncodeJson(got), EncodeJson(want));
  EXPECT_EQ(DecodePod(got)->spec.tolerations, tolerations);

  ASSERT_TRUE(SetTolerations(doc, {}).ok());
  EraseAt(want, "/spec/tolerations");
  EXPECT_EQ(EncodeJson(doc), EncodeJson(want));
}

TEST(CodecPodTest, SetPodConditionUpdatesInPlaceOrAppends) {
  Document doc = Parse(ReadTestFile("pod.json"));
  Document want = Parse(ReadTestFile("pod.json"));
  // An unknown member of the element survives an update.
  SetAt(doc, "/status/conditions/2/observedGeneration", "1");
  SetAt(want, "/status/conditions/2/observedGeneration", "1");

  Condition ready{.type = "Ready",
                  .status = "False",
                  .reason = "ContainersNotReady",
                  .message = "containers with unready status: [web]",
                  .last_transition_time = "2025-11-02T11:00:00Z"};
  ASSERT_TRUE(SetPodCondition(doc, ready).ok());
  SetAt(want, "/status/conditions/2/status", R"("False")");
  SetAt(want, "/status/conditions/2/lastTransitionTime", R"("2025-11-02T11:00:00Z")");
  SetAt(want, "/status/conditions/2/reason", R"("ContainersNotReady")");
  SetAt(want, "/status/conditions/2/message", R"("containers with unready status: [web]")");
  EXPECT_EQ(EncodeJson(doc), EncodeJson(want));

  Condition target{.type = "DisruptionTarget",
                   .status = "True",
                   .reason = "DeletionByTaintManager",
                   .message = "Taint manager: deleting due to NoExecute taint",
                   .last_transition_time = "2025-11-02T11:01:00Z"};
  ASSERT_TRUE(SetPodCondition(doc, target).ok());
  SetAt(want, "/status/conditions/4", R"({"type":"DisruptionTarget","status":"True",
      "lastProbeTime":null,"lastTransitionTime":"2025-11-02T11:01:00Z",
      "reason":"DeletionByTaintManager",
      "message":"Taint manager: deleting due to NoExecute taint"})");
  EXPECT_EQ(EncodeJson(doc), EncodeJson(want));
  Result<Pod> pod = DecodePod(doc);
  ASSERT_EQ(pod->status.conditions.size(), 5u);
  EXPECT_EQ(pod->status.conditions[4].reason, "DeletionByTaintManager");
}

TEST(CodecPodTest, NullMeansUnset) {
  Document doc = Parse(R"({"metadata":{"name":null,"labels":{"a":null},"deletionTimestamp":null,
      "deletionGracePeriodSeconds":null,"ownerReferences":null},
      "spec":{"tolerations":[null,{"key":"k","tolerationSeconds":null}],"affinity":null,
      "priority":null,"nodeName":null,"containers":[{"resources":null},
      {"resources":{"requests":{"cpu":null}}}],"nodeSelector":null},
      "status":null})");
  Result<Pod> pod = DecodePod(doc);
  ASSERT_TRUE(pod.has_value()) << pod.error().message();
  EXPECT_EQ(pod->meta.name, "");
  EXPECT_EQ(*pod->meta.labels.Get("a"), "");
  EXPECT_FALSE(pod->meta.deletion_timestamp.has_value());
  ASSERT_EQ(pod->spec.tolerations.size(), 2u);
  EXPECT_EQ(pod->spec.tolerations[0], Toleration{});
  EXPECT_FALSE(pod->spec.tolerations[1].toleration_seconds.has_value());
  EXPECT_FALSE(pod->spec.node_affinity.has_value());
  EXPECT_FALSE(pod->spec.priority.has_value());
  ASSERT_EQ(pod->spec.containers.size(), 2u);
  EXPECT_TRUE(pod->spec.containers[1].requests.Get("cpu")->IsZero());

  // Present-but-empty affinity pieces are kept apart from absent ones: required with no terms
  // matches no node.
  Result<Pod> empty = DecodePod(Parse(
      R"({"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
          {"nodeSelectorTerms":null}}}}})"));
  ASSERT_TRUE(empty.has_value());
  ASSERT_TRUE(empty->spec.node_affinity.has_value());
  ASSERT_TRUE(empty->spec.node_affinity->required.has_value());
  EXPECT_TRUE(empty->spec.node_affinity->required->terms.empty());
}

TEST(CodecPodTest, QuantitiesAsStringsOrNumbers) {
  Result<Pod> pod = DecodePod(Parse(R"({"spec":{"containers":[{"resources":{"requests":
      {"cpu":1,"memory":134217728,"a":0.25,"b":" 2Gi ","c":1e3,"d":-1}}}]}})"));
  ASSERT_TRUE(pod.has_value()) << pod.error().message();
  const ResourceList& r = pod->spec.containers[0].requests;
  EXPECT_EQ(*r.Get("cpu"), Q("1"));
  EXPECT_EQ(*r.Get("memory"), Q("128Mi"));
  EXPECT_EQ(r.Get("memory")->ToString(), "134217728");  // a number is decimal, as upstream
  EXPECT_EQ(r.Get("a")->ToString(), "250m");
  EXPECT_EQ(r.Get("b")->ToString(), "2Gi");
  EXPECT_EQ(*r.Get("c"), Q("1k"));
  EXPECT_EQ(r.Get("d")->ToString(), "-1");
}

TEST(CodecPodTest, UnknownFieldsAndDuplicateKeys) {
  Result<Pod> pod = DecodePod(Parse(R"({"kind":"Pod","extra":{"deep":[1,2,{"x":null}]},
      "spec":{"nodeName":"a","nodeName":"b","unknown":true},
      "metadata":{"labels":{"x":"1"}},"metadata":{"labels":{"y":"2"}}})"));
  ASSERT_TRUE(pod.has_value()) << pod.error().message();
  EXPECT_EQ(pod->spec.node_name, "b");     // the last wins, as in Go
  EXPECT_EQ(pod->meta.labels.size(), 2u);  // Go decodes into the same map

  // Setters leave one member behind.
  Document doc = Parse(R"({"spec":{"nodeName":"a","x":1,"nodeName":"b"}})");
  ASSERT_TRUE(SetNodeName(doc, "c").ok());
  EXPECT_EQ(EncodeJson(doc), R"({"spec":{"nodeName":"c","x":1}})");
}

// ---------------------------------------------------------------------------------------------
// Nodes

TEST(CodecNodeTest, DecodesRealisticNode) {
  Result<Node> node = DecodeNode(Parse(ReadTestFile("node.json")));
  ASSERT_TRUE(node.has_value()) << node.error().message();
  EXPECT_EQ(node->meta.name, "node-17");
  EXPECT_EQ(node->meta.labels.size(), 8u);
  EXPECT_EQ(*node->meta.labels.Get("topology.kubernetes.io/zone"), "eu-west-1a");
  EXPECT_EQ(node->spec.pod_cidr, "10.244.5.0/24");
  EXPECT_EQ(node->spec.provider_id, "aws:///eu-west-1a/i-0123456789abcdef0");
  EXPECT_FALSE(node->spec.unschedulable);
  ASSERT_EQ(node->spec.taints.size(), 3u);
  EXPECT_EQ(node->spec.taints[0],
            (Taint{.key = "dedicated", .value = "web", .effect = "NoSchedule"}));
  EXPECT_EQ(node->spec.taints[1], (Taint{.key = "node.kubernetes.io/unreachable",
                                         .effect = "NoExecute",
                                         .time_added = "2025-11-02T10:00:00Z"}));
  EXPECT_EQ(node->spec.taints[2], (Taint{.key = "spot", .effect = "PreferNoSchedule"}));
  const NodeStatus& s = node->status;
  ASSERT_EQ(s.conditions.size(), 4u);
  EXPECT_EQ(s.conditions[3].type, "Ready");
  EXPECT_EQ(s.conditions[3].status, "Unknown");
  EXPECT_EQ(s.conditions[3].last_heartbeat_time, "2025-11-02T09:58:00Z");
  EXPECT_EQ(s.conditions[3].reason, "NodeStatusUnknown");
  EXPECT_EQ(s.capacity.Get("cpu")->MilliValue(), 8000);
  EXPECT_EQ(s.capacity.Get("memory")->Value(), int64_t{32386544} * 1024);
  EXPECT_EQ(s.allocatable.Get("cpu")->MilliValue(), 7910);
  EXPECT_EQ(s.allocatable.Get("pods")->Value(), 110);  // a JSON number
  EXPECT_EQ(s.allocatable.Get("ephemeral-storage")->Value(), 96625420948);
  EXPECT_EQ(s.kubelet_version, "v1.35.0");
}

TEST(CodecNodeTest, SetTaintsChangesOnlyThatField) {
  const std::string original = ReadTestFile("node.json");
  Document doc = Parse(original);
  const std::vector<Taint> taints = {
      {.key = "dedicated", .value = "web", .effect = "NoSchedule"},
      {.key = "node.kubernetes.io/not-ready",
       .effect = "NoExecute",
       .time_added = "2025-11-02T10:05:00Z"},
  };
  ASSERT_TRUE(SetTaints(doc, taints).ok());
  Document want = Parse(original);
  SetAt(want, "/spec/taints", R"([{"key":"dedicated","value":"web","effect":"NoSchedule"},
      {"key":"node.kubernetes.io/not-ready","effect":"NoExecute",
       "timeAdded":"2025-11-02T10:05:00Z"}])");
  Document got = Parse(EncodeJson(doc));
  EXPECT_TRUE(got == want);
  EXPECT_EQ(EncodeJson(got), EncodeJson(want));
  EXPECT_EQ(DecodeNode(got)->spec.taints, taints);

  // No taints: spec.taints goes away, the rest of spec stays.
  ASSERT_TRUE(SetTaints(doc, {}).ok());
  EraseAt(want, "/spec/taints");
  EXPECT_EQ(EncodeJson(doc), EncodeJson(want));
  EXPECT_TRUE(doc["spec"].HasMember("podCIDR"));

  // Tainting a node without spec creates it.
  Document bare = Parse(R"({"kind":"Node","metadata":{"name":"n"}})");
  ASSERT_TRUE(SetTaints(bare, std::span<const Taint>(taints).subspan(0, 1)).ok());
  EXPECT_EQ(EncodeJson(bare), R"({"kind":"Node","metadata":{"name":"n"},"spec":{"taints":)"
                              R"([{"key":"dedicated","value":"web","effect":"NoSchedule"}]}})");
}

TEST(CodecNodeTest, SetUnschedulableAndConditions) {
  const std::string original = ReadTestFile("node.json");
  Document doc = Parse(original);
  Document want = Parse(original);
  ASSERT_TRUE(SetUnschedulable(doc, true).ok());
  SetAt(want, "/spec/unschedulable", "true");
  EXPECT_EQ(EncodeJson(doc), EncodeJson(want));
  ASSERT_TRUE(SetUnschedulable(doc, false).ok());
  EraseAt(want, "/spec/unschedulable");
  EXPECT_EQ(EncodeJson(doc), EncodeJson(want));

  Condition ready{.type = "Ready",
                  .status = "True",
                  .reason = "KubeletReady",
                  .message = "kubelet is posting ready status",
                  .last_transition_time = "2025-11-02T10:10:00Z",
                  .last_heartbeat_time = "2025-11-02T10:10:00Z"};
  ASSERT_TRUE(SetNodeCondition(doc, ready).ok());
  SetAt(want, "/status/conditions/3/status", R"("True")");
  SetAt(want, "/status/conditions/3/lastHeartbeatTime", R"("2025-11-02T10:10:00Z")");
  SetAt(want, "/status/conditions/3/lastTransitionTime", R"("2025-11-02T10:10:00Z")");
  SetAt(want, "/status/conditions/3/reason", R"("KubeletReady")");
  SetAt(want, "/status/conditions/3/message", R"("kubelet is posting ready status")");
  EXPECT_EQ(EncodeJson(doc), EncodeJson(want));

  Condition network{.type = "NetworkUnavailable", .status = "False"};
  ASSERT_TRUE(SetNodeCondition(doc, network).ok());
  SetAt(want, "/status/conditions/4",
        R"({"type":"NetworkUnavailable","status":"False","lastHeartbeatTime":null,)"
        R"("lastTransitionTime":null})");
  EXPECT_EQ(EncodeJson(doc), EncodeJson(want));
}

// ---------------------------------------------------------------------------------------------
// Metadata setters

TEST(CodecMetaTest, LabelsAnnotationsAndRegistryFields) {
  Document doc = Parse(R"({"kind":"Pod","metadata":{"name":"p","labels":{"a":"1"}},"spec":{}})");
  ASSERT_TRUE(SetLabel(doc, "b", "2").ok());
  ASSERT_TRUE(SetLabel(doc, "a", "3").ok());
  EXPECT_EQ(EncodeJson(doc),
            R"({"kind":"Pod","metadata":{"name":"p","labels":{"a":"3","b":"2"}},"spec":{}})");
  ASSERT_TRUE(RemoveLabel(doc, "a").ok());
  ASSERT_TRUE(RemoveLabel(doc, "missing").ok());
  ASSERT_TRUE(RemoveLabel(doc, "b").ok());  // the last one: the map goes
  EXPECT_EQ(EncodeJson(doc), R"({"kind":"Pod","metadata":{"name":"p"},"spec":{}})");

  ASSERT_TRUE(SetAnnotation(doc, "k", "v").ok());
  ASSERT_TRUE(SetResourceVersion(doc, "42").ok());
  ASSERT_TRUE(SetUID(doc, "u-1").ok());
  ASSERT_TRUE(SetCreationTimestamp(doc, "2025-11-02T10:00:00Z").ok());
  ASSERT_TRUE(SetGeneration(doc, 3).ok());
  ASSERT_TRUE(SetDeletionTimestamp(doc, "2025-11-02T10:05:00Z").ok());
  ASSERT_TRUE(SetDeletionGracePeriodSeconds(doc, 0).ok());
  ASSERT_TRUE(SetNamespace(doc, "default").ok());
  EXPECT_EQ(EncodeJson(doc),
            R"({"kind":"Pod","metadata":{"name":"p","annotations":{"k":"v"},)"
            R"("resourceVersion":"42","uid":"u-1","creationTimestamp":"2025-11-02T10:00:00Z",)"
            R"("generation":3,"deletionTimestamp":"2025-11-02T10:05:00Z",)"
            R"("deletionGracePeriodSeconds":0,"namespace":"default"},"spec":{}})");
  Result<ObjectMeta> meta = DecodeObjectMeta(doc);
  ASSERT_TRUE(meta.has_value());
  EXPECT_EQ(meta->resource_version, "42");
  EXPECT_EQ(meta->generation, 3);
  EXPECT_EQ(meta->deletion_grace_period_seconds, 0);
  EXPECT_EQ(meta->deletion_timestamp, "2025-11-02T10:05:00Z");

  ASSERT_TRUE(SetResourceVersion(doc, "43").ok());  // in place
  ASSERT_TRUE(RemoveAnnotation(doc, "k").ok());
  ASSERT_TRUE(SetCreationTimestamp(doc, "").ok());
  EXPECT_EQ(EncodeJson(doc),
            R"({"kind":"Pod","metadata":{"name":"p","resourceVersion":"43","uid":"u-1",)"
            R"("creationTimestamp":null,"generation":3,"deletionTimestamp":"2025-11-02T10:05:00Z",)"
            R"("deletionGracePeriodSeconds":0,"namespace":"default"},"spec":{}})");

  // A null metadata is replaced; a metadata of another type is an error, and nothing changes.
  Document null_meta = Parse(R"({"metadata":null})");
  ASSERT_TRUE(SetLabel(null_meta, "a", "b").ok());
  EXPECT_EQ(EncodeJson(null_meta), R"({"metadata":{"labels":{"a":"b"}}})");
  Document bad = Parse(R"({"metadata":"x","spec":[]})");
  EXPECT_EQ(SetLabel(bad, "a", "b").message(), "metadata: expected object, got string");
  EXPECT_EQ(SetNodeName(bad, "n").message(), "spec: expected object, got array");
  EXPECT_EQ(SetTaints(bad, {}).message(), "spec: expected object, got array");
  EXPECT_EQ(EncodeJson(bad), R"({"metadata":"x","spec":[]})");
  Document array = Parse("[1]");
  EXPECT_EQ(SetResourceVersion(array, "1").message(), "expected object, got array");
  EXPECT_EQ(SetPodCondition(array, Condition{}).code(), StatusCode::kBadRequest);
  Document bad_conditions = Parse(R"({"status":{"conditions":{}}})");
  EXPECT_EQ(SetNodeCondition(bad_conditions, Condition{.type = "Ready"}).message(),
            "status.conditions: expected array, got object");
}

// ---------------------------------------------------------------------------------------------
// Fresh encoders

TEST(CodecEncodeTest, TaintAndTolerationElements) {
  Document doc;
  auto& a = doc.GetAllocator();
  EXPECT_EQ(EncodeJson(TaintToValue(Taint{.key = "k", .effect = "NoSchedule"}, a)),
            R"({"key":"k","effect":"NoSchedule"})");
  EXPECT_EQ(EncodeJson(TaintToValue(Taint{}, a)), R"({"key":"","effect":""})");
  EXPECT_EQ(EncodeJson(TaintToValue(
                Taint{.key = "k", .value = "v", .effect = "NoExecute", .time_added = "T"}, a)),
            R"({"key":"k","value":"v","effect":"NoExecute","timeAdded":"T"})");
  EXPECT_EQ(EncodeJson(TolerationToValue(Toleration{}, a)), "{}");
  EXPECT_EQ(EncodeJson(TolerationToValue(Toleration{.op = "Exists"}, a)),
            R"({"operator":"Exists"})");
  EXPECT_EQ(EncodeJson(TolerationToValue(Toleration{.key = "k",
                                                    .op = "Equal",
                                                    .value = "v",
                                                    .effect = "NoExecute",
                                                    .toleration_seconds = 3600},
                                         a)),
            R"({"key":"k","operator":"Equal","value":"v","effect":"NoExecute",)"
            R"("tolerationSeconds":3600})");
  EXPECT_EQ(EncodeJson(TolerationToValue(Toleration{.toleration_seconds = -5}, a)),
            R"({"tolerationSeconds":-5})");
}

TEST(CodecEncodeTest, NodeAsUpstreamWritesIt) {
  Node node;
  node.meta.name = "sim-1";
  node.meta.labels.Set("kubernetes.io/hostname", "sim-1");
  node.meta.labels.Set("a", "b");
  node.spec.taints = {{.key = "node.kubernetes.io/not-ready", .effect = "NoSchedule"}};
  node.status.capacity.Set("pods", Q("110"));
  node.status.capacity.Set("cpu", Q("4"));
  node.status.capacity.Set("memory", Q("16Gi"));
  node.status.conditions = {{.type = "Ready",
                             .status = "True",
                             .reason = "KubeletReady",
                             .last_transition_time = "2025-11-02T10:00:00Z",
                             .last_heartbeat_time = "2025-11-02T10:00:10Z"}};
  node.status.kubelet_version = "v1.35.0-kubetaint";
  const std::string want =
      R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"sim-1","creationTimestamp":null,)"
      R"("labels":{"a":"b","kubernetes.io/hostname":"sim-1"}},)"
      R"("spec":{"taints":[{"key":"node.kubernetes.io/not-ready","effect":"NoSchedule"}]},)"
      R"("status":{"capacity":{"cpu":"4","memory":"16Gi","pods":"110"},)"
      R"("conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2025-11-02T10:00:10Z",)"
      R"("lastTransitionTime":"2025-11-02T10:00:00Z","reason":"KubeletReady"}],)"
      R"("daemonEndpoints":{"kubeletEndpoint":{"Port":0}},)"
      R"("nodeInfo":{"machineID":"","systemUUID":"","bootID":"","kernelVersion":"",)"
      R"("osImage":"","containerRuntimeVersion":"","kubeletVersion":"v1.35.0-kubetaint",)"
      R"("kubeProxyVersion":"","operatingSystem":"","architecture":""}}})";
  EXPECT_EQ(EncodeNode(node), want);
  EXPECT_EQ(EncodeJson(NodeToDocument(node)), want);

  Result<Node> back = DecodeNode(Parse(want));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->meta.labels, node.meta.labels);
  EXPECT_EQ(back->spec.taints, node.spec.taints);
  EXPECT_EQ(back->status.capacity, node.status.capacity);
  EXPECT_EQ(back->status.kubelet_version, node.status.kubelet_version);
}

TEST(CodecEncodeTest, PodRoundTripsThroughItsView) {
  // Decoding the realistic pod, encoding the view and decoding again gives the same view.
  Result<Pod> pod = DecodePod(Parse(ReadTestFile("pod.json")));
  ASSERT_TRUE(pod.has_value());
  const std::string bytes = EncodePod(*pod);
  EXPECT_EQ(bytes, EncodeJson(PodToDocument(*pod)));
  Result<Pod> again = DecodePod(Parse(bytes));
  ASSERT_TRUE(again.has_value()) << again.error().message();
  EXPECT_EQ(EncodePod(*again), bytes);
  EXPECT_EQ(again->spec.tolerations, pod->spec.tolerations);
  EXPECT_EQ(again->spec.containers[0].requests, pod->spec.containers[0].requests);
  EXPECT_EQ(again->meta.owner_references.size(), 1u);

  Pod minimal;
  minimal.meta.name = "p";
  minimal.meta.namespace_ = "default";
  minimal.spec.containers = {{.name = "c"}};
  minimal.spec.tolerations = {
      {.key = "k", .op = "Exists", .effect = "NoExecute", .toleration_seconds = 3600}};
  EXPECT_EQ(EncodePod(minimal),
            R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default",)"
            R"("creationTimestamp":null},"spec":{"containers":[{"name":"c","resources":{}}],)"
            R"("tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute",)"
            R"("tolerationSeconds":3600}]},"status":{}})");
}

TEST(CodecEncodeTest, EventNamespaceLeasePriorityClass) {
  Event ev;
  ev.meta.name = "p.1873a";
  ev.meta.namespace_ = "default";
  ev.involved_object = {
      .api_version = "v1", .kind = "Pod", .namespace_ = "default", .name = "p", .uid = "u"};
  ev.reason = "TaintManagerEviction";
  ev.message = "Marking for deletion Pod default/p";
  ev.type = "Normal";
  ev.count = 1;
  ev.source_component = "taint-eviction-controller";
  ev.first_timestamp = ev.last_timestamp = "2025-11-02T10:00:00Z";
  EXPECT_EQ(EncodeEvent(ev),
            R"({"kind":"Event","apiVersion":"v1","metadata":{"name":"p.1873a",)"
            R"("namespace":"default","creationTimestamp":null},"involvedObject":{"kind":"Pod",)"
            R"("namespace":"default","name":"p","uid":"u","apiVersion":"v1"},)"
            R"("reason":"TaintManagerEviction","message":"Marking for deletion Pod default/p",)"
            R"("source":{"component":"taint-eviction-controller"},)"
            R"("firstTimestamp":"2025-11-02T10:00:00Z","lastTimestamp":"2025-11-02T10:00:00Z",)"
            R"("count":1,"type":"Normal","eventTime":null,"reportingComponent":"",)"
            R"("reportingInstance":""})");
  Result<Event> ev2 = DecodeEvent(Parse(EncodeEvent(ev)));
  ASSERT_TRUE(ev2.has_value());
  EXPECT_EQ(ev2->involved_object.name, "p");
  EXPECT_EQ(ev2->count, 1);
  EXPECT_EQ(ev2->source_component, "taint-eviction-controller");
  EXPECT_EQ(ev2->event_time, "");

  Namespace ns;
  ns.meta.name = "kube-system";
  ns.meta.creation_timestamp = "2025-11-02T10:00:00Z";
  ns.phase = "Active";
  EXPECT_EQ(EncodeNamespace(ns),
            R"({"kind":"Namespace","apiVersion":"v1","metadata":{"name":"kube-system",)"
            R"("creationTimestamp":"2025-11-02T10:00:00Z"},"spec":{},)"
            R"("status":{"phase":"Active"}})");
  EXPECT_EQ(DecodeNamespace(NamespaceToDocument(ns))->phase, "Active");

  Lease lease;
  lease.meta.name = "kube-scheduler";
  lease.meta.namespace_ = "kube-system";
  lease.holder_identity = "kubetaint-0";
  lease.lease_duration_seconds = 15;
  lease.acquire_time = "2025-11-02T10:00:00.000000Z";
  lease.renew_time = "2025-11-02T10:00:10.000000Z";
  lease.lease_transitions = 0;
  EXPECT_EQ(EncodeLease(lease),
            R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":)"
            R"({"name":"kube-scheduler","namespace":"kube-system","creationTimestamp":null},)"
            R"("spec":{"holderIdentity":"kubetaint-0","leaseDurationSeconds":15,)"
            R"("acquireTime":"2025-11-02T10:00:00.000000Z",)"
            R"("renewTime":"2025-11-02T10:00:10.000000Z","leaseTransitions":0}})");
  Result<Lease> l2 = DecodeLease(LeaseToDocument(lease));
  ASSERT_TRUE(l2.has_value());
  EXPECT_EQ(l2->lease_duration_seconds, 15);
  EXPECT_EQ(l2->lease_transitions, 0);
  EXPECT_EQ(l2->renew_time, lease.renew_time);

  PriorityClass pc;
  pc.meta.name = "system-node-critical";
  pc.value = 2000001000;
  pc.description = "Used for system critical pods that must not be moved from their current node.";
  EXPECT_EQ(EncodePriorityClass(pc),
            R"({"kind":"PriorityClass","apiVersion":"scheduling.k8s.io/v1","metadata":)"
            R"({"name":"system-node-critical","creationTimestamp":null},"value":2000001000,)"
            R"("description":"Used for system critical pods that must not be moved from their )"
            R"(current node."})");
  EXPECT_EQ(DecodePriorityClass(PriorityClassToDocument(pc))->value, 2000001000);
}

TEST(CodecDaemonSetTest, DecodesSelectorTemplateAndStatus) {
  Result<DaemonSet> ds = DecodeDaemonSet(Parse(R"({"apiVersion":"apps/v1","kind":"DaemonSet",
      "metadata":{"name":"agent","namespace":"kube-system","generation":4},
      "spec":{"selector":{"matchLabels":{"app":"agent"},
                          "matchExpressions":[{"key":"tier","operator":"In","values":["node"]}]},
              "template":{"metadata":{"labels":{"app":"agent"}},
                          "spec":{"tolerations":[{"operator":"Exists"}],
                                  "containers":[{"name":"agent","image":"agent:1",
                                     "resources":{"requests":{"cpu":"10m"}}}]}},
              "updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":1}}},
      "status":{"currentNumberScheduled":3,"desiredNumberScheduled":4,"numberMisscheduled":1,
                "numberReady":2,"observedGeneration":4}})"));
  ASSERT_TRUE(ds.has_value()) << ds.error().message();
  ASSERT_TRUE(ds->selector.has_value());
  EXPECT_EQ(*ds->selector->match_labels.Get("app"), "agent");
  EXPECT_EQ(ds->selector->match_expressions[0].values, std::vector<std::string>{"node"});
  EXPECT_EQ(*ds->template_.meta.labels.Get("app"), "agent");
  EXPECT_EQ(ds->template_.spec.tolerations, std::vector<Toleration>{{.op = "Exists"}});
  EXPECT_EQ(ds->template_.spec.containers[0].requests.Get("cpu")->MilliValue(), 10);
  EXPECT_EQ(ds->update_strategy_type, "RollingUpdate");
  EXPECT_EQ(ds->current_number_scheduled, 3);
  EXPECT_EQ(ds->desired_number_scheduled, 4);
  EXPECT_EQ(ds->number_misscheduled, 1);
  EXPECT_EQ(ds->number_ready, 2);
  EXPECT_EQ(ds->observed_generation, 4);
}

// ---------------------------------------------------------------------------------------------
// Bad input

enum class Kind { kPod, kNode, kNamespace, kEvent, kLease, kPriorityClass, kDaemonSet, kMeta };

// Parses and decodes; returns the error message, or "" when both succeed.
std::string DecodeError(Kind kind, std::string_view json) {
  Result<Document> doc = ParseJson(json);
  if (!doc) return doc.error().message();
  auto message = [](const auto& r) { return r ? std::string() : r.error().message(); };
  switch (kind) {
    case Kind::kPod:
      return message(DecodePod(*doc));
    case Kind::kNode:
      return message(DecodeNode(*doc));
    case Kind::kNamespace:
      return message(DecodeNamespace(*doc));
    case Kind::kEvent:
      return message(DecodeEvent(*doc));
    case Kind::kLease:
      return message(DecodeLease(*doc));
    case Kind::kPriorityClass:
      return message(DecodePriorityClass(*doc));
    case Kind::kDaemonSet:
      return message(DecodeDaemonSet(*doc));
    case Kind::kMeta:
      return message(DecodeObjectMeta(*doc));
  }
  return "";
}

const std::string kQuantityFormat =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

TEST(CodecBadInputTest, ErrorsNameTheFieldPath) {
  const struct {
    Kind kind;
    std::string json;
    std::string error;
  } cases[] = {
      // Malformed JSON
      {Kind::kPod, "", "invalid JSON at offset 0: The document is empty"},
      {Kind::kPod, "   ", "invalid JSON at offset 3: The document is empty"},
      {Kind::kPod, R"({"a":1 "b":2})",
       "invalid JSON at offset 7: Missing a comma or '}' after an object member"},
      {Kind::kPod, R"({"a":})", "invalid JSON at offset 5: Invalid value"},
      {Kind::kPod, R"({"a":1}x)",
       "invalid JSON at offset 7: The document root must not be followed by other values"},
      {Kind::kPod, std::string("{\"a\":1}\0{", 9),
       "invalid JSON at offset 7: The document root must not be followed by other values"},
      {Kind::kPod, R"({"a":NaN})", "invalid JSON at offset 5: Invalid value"},
      {Kind::kPod, "{\"a\":\"\xff\"}", "invalid JSON at offset 6: Invalid encoding in string"},
      {Kind::kPod, R"({"a":[1,2)",
       "invalid JSON at offset 9: Missing a comma or ']' after an array element"},
      {Kind::kPod, R"({"a":"\x"})", "invalid JSON at offset 6: Invalid escape character in string"},
      {Kind::kPod, std::string(1001, '[') + std::string(1001, ']'),
       "invalid JSON at offset 1000: exceeded max depth of 1000"},
      // Wrong shapes
      {Kind::kPod, "[]", "expected object, got array"},
      {Kind::kPod, "null", "expected object, got null"},
      {Kind::kNode, R"("node")", "expected object, got string"},
      {Kind::kPod, R"({"metadata":[]})", "metadata: expected object, got array"},
      {Kind::kPod, R"({"spec":"x"})", "spec: expected object, got string"},
      // Wrong types, by path
      {Kind::kPod, R"({"spec":{"tolerations":[{"tolerationSeconds":"3600"}]}})",
       "spec.tolerations[0].tolerationSeconds: expected integer, got string"},
      {Kind::kPod, R"({"metadata":{"labels":{"app":1}}})",
       "metadata.labels.app: expected string, got number"},
      {Kind::kPod, R"({"spec":{"tolerations":{}}})",
       "spec.tolerations: expected array, got object"},
      {Kind::kPod, R"({"spec":{"tolerations":[{"key":"a"},7]}})",
       "spec.tolerations[1]: expected object, got number"},
      {Kind::kPod, R"({"spec":{"tolerations":[{"operator":["Exists"]}]}})",
       "spec.tolerations[0].operator: expected string, got array"},
      {Kind::kPod, R"({"spec":{"tolerations":[{"tolerationSeconds":1.5}]}})",
       "spec.tolerations[0].tolerationSeconds: expected integer, got number"},
      {Kind::kPod, R"({"spec":{"tolerations":[{"tolerationSeconds":18446744073709551615}]}})",
       "spec.tolerations[0].tolerationSeconds: integer out of range for int64"},
      {Kind::kPod, R"({"spec":{"containers":[{"resources":{"requests":{"cpu":"abc"}}}]}})",
       "spec.containers[0].resources.requests.cpu: " + kQuantityFormat},
      {Kind::kPod, R"({"spec":{"containers":[{},{"resources":{"limits":{"memory":"1mi"}}}]}})",
       "spec.containers[1].resources.limits.memory: unable to parse quantity's suffix"},
      {Kind::kPod, R"({"spec":{"initContainers":[{"resources":{"requests":{"cpu":true}}}]}})",
       "spec.initContainers[0].resources.requests.cpu: expected quantity (string or number), "
       "got boolean"},
      {Kind::kPod, R"({"spec":{"containers":[{"resources":{"requests":{"cpu":""}}}]}})",
       "spec.containers[0].resources.requests.cpu: " + kQuantityFormat},
      {Kind::kPod, R"({"spec":{"overhead":{"cpu":"1e40"}}})",
       "spec.overhead.cpu: quantity too large: kubetaint supports magnitudes below 1e29"},
      {Kind::kPod, R"({"spec":{"containers":[{"resources":[]}]}})",
       "spec.containers[0].resources: expected object, got array"},
      {Kind::kPod, R"({"spec":{"priority":3000000000}})",
       "spec.priority: integer out of range for int32"},
      {Kind::kPod, R"({"spec":{"priority":1.5}})", "spec.priority: expected integer, got number"},
      {Kind::kPod, R"({"spec":{"terminationGracePeriodSeconds":1e3}})",
       "spec.terminationGracePeriodSeconds: expected integer, got number"},
      {Kind::kPod, R"({"spec":{"hostNetwork":"true"}})",
       "spec.hostNetwork: expected boolean, got string"},
      {Kind::kPod, R"({"spec":{"nodeName":5}})", "spec.nodeName: expected string, got number"},
      {Kind::kPod, R"({"spec":{"nodeSelector":{"pool":["a"]}}})",
       "spec.nodeSelector.pool: expected string, got array"},
      {Kind::kPod,
       R"({"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
           {"nodeSelectorTerms":[{"matchExpressions":[{"values":"a"}]}]}}}}})",
       "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms[0].matchExpressions[0].values: expected array, got string"},
      {Kind::kPod,
       R"({"spec":{"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":
           [{"weight":"1"}]}}}})",
       "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
       "expected integer, got string"},
      {Kind::kPod, R"({"spec":{"affinity":{"nodeAffinity":[]}}})",
       "spec.affinity.nodeAffinity: expected object, got array"},
      {Kind::kPod, R"({"metadata":{"ownerReferences":[{"controller":"yes"}]}})",
       "metadata.ownerReferences[0].controller: expected boolean, got string"},
      {Kind::kPod, R"({"metadata":{"finalizers":[1]}})",
       "metadata.finalizers[0]: expected string, got number"},
      {Kind::kPod, R"({"metadata":{"generation":"1"}})",
       "metadata.generation: expected integer, got string"},
      {Kind::kPod, R"({"metadata":{"deletionGracePeriodSeconds":true}})",
       "metadata.deletionGracePeriodSeconds: expected integer, got boolean"},
      {Kind::kPod, R"({"metadata":{"deletionTimestamp":{}}})",
       "metadata.deletionTimestamp: expected string, got object"},
      {Kind::kPod, R"({"status":{"conditions":[{"type":7}]}})",
       "status.conditions[0].type: expected string, got number"},
      {Kind::kPod, R"({"status":{"conditions":"Ready"}})",
       "status.conditions: expected array, got string"},
      {Kind::kNode, R"({"spec":{"taints":[{"key":"a","effect":1}]}})",
       "spec.taints[0].effect: expected string, got number"},
      {Kind::kNode, R"({"spec":{"taints":[{"key":"a"},{"timeAdded":5}]}})",
       "spec.taints[1].timeAdded: expected string, got number"},
      {Kind::kNode, R"({"spec":{"unschedulable":"yes"}})",
       "spec.unschedulable: expected boolean, got string"},
      {Kind::kNode, R"({"status":{"capacity":{"cpu":{}}}})",
       "status.capacity.cpu: expected quantity (string or number), got object"},
      {Kind::kNode, R"({"status":{"allocatable":{"memory":"12x"}}})",
       "status.allocatable.memory: " + kQuantityFormat},
      {Kind::kNode, R"({"status":{"nodeInfo":{"kubeletVersion":1.35}}})",
       "status.nodeInfo.kubeletVersion: expected string, got number"},
      {Kind::kNode, R"({"metadata":{"labels":"a=b"}})",
       "metadata.labels: expected object, got string"},
      {Kind::kNamespace, R"({"status":{"phase":["Active"]}})",
       "status.phase: expected string, got array"},
      {Kind::kEvent, R"({"count":"3"})", "count: expected integer, got string"},
      {Kind::kEvent, R"({"involvedObject":"pod"})", "involvedObject: expected object, got string"},
      {Kind::kEvent, R"({"source":{"host":false}})", "source.host: expected string, got boolean"},
      {Kind::kLease, R"({"spec":{"leaseDurationSeconds":-9999999999}})",
       "spec.leaseDurationSeconds: integer out of range for int32"},
      {Kind::kLease, R"({"spec":{"holderIdentity":1}})",
       "spec.holderIdentity: expected string, got number"},
      {Kind::kPriorityClass, R"({"value":"1000"})", "value: expected integer, got string"},
      {Kind::kPriorityClass, R"({"globalDefault":1})",
       "globalDefault: expected boolean, got number"},
      {Kind::kDaemonSet, R"({"spec":{"template":{"spec":{"tolerations":[{"operator":1}]}}}})",
       "spec.template.spec.tolerations[0].operator: expected string, got number"},
      {Kind::kDaemonSet, R"({"spec":{"selector":{"matchLabels":{"a":null,"b":2}}}})",
       "spec.selector.matchLabels.b: expected string, got number"},
      {Kind::kDaemonSet, R"({"status":{"numberReady":"2"}})",
       "status.numberReady: expected integer, got string"},
      {Kind::kMeta, R"({"metadata":{"name":["a"]}})", "metadata.name: expected string, got array"},
      {Kind::kMeta, "7", "expected object, got number"},
  };
  static_assert(sizeof(cases) / sizeof(cases[0]) >= 25);
  for (const auto& c : cases) {
    EXPECT_EQ(DecodeError(c.kind, c.json), c.error) << c.json;
    Result<Document> doc = ParseJson(c.json);
    if (!doc) {
      EXPECT_EQ(doc.error().code(), StatusCode::kBadRequest);
    }
  }
}

// ASCII text skips UTF-8 validation (it cannot fail on ASCII): the same documents, the same
// errors at the same offsets, whether the rest of the text is ASCII or not.
TEST(CodecBadInputTest, AsciiTextParsesAsValidatedTextDoes) {
  const std::string accent = "\xc3\xa9";  // é in UTF-8
  struct Case {
    std::string ascii;  // all bytes below 0x80
    std::string error;  // "" for a document
  };
  const Case cases[] = {
      {R"({"a":"b\u00e9\ud83d\ude00","c":[1,2.5,true,null]})", ""},
      {"{\"a\":\"\x01\"}", "invalid JSON at offset 6: Invalid escape character in string"},
      {"{\"a\":\"\x1f\"}", "invalid JSON at offset 6: Invalid escape character in string"},
      {R"({"a":"\ud83d"})", "invalid JSON at offset 6: The surrogate pair in string is invalid"},
      {R"({"a":"\x"})", "invalid JSON at offset 6: Invalid escape character in string"},
      {std::string("{\"a\":\"b\0\"}", 10),
       "invalid JSON at offset 7: Missing a closing quotation mark in string"},
  };
  for (const Case& c : cases) {
    // The same text, made non-ASCII by a trailing member whose value is é.
    std::string utf8 = c.ascii;
    const size_t close = utf8.rfind('}');
    ASSERT_NE(close, std::string::npos);
    utf8.insert(close, ",\"z\":\"" + accent + "\"");
    Result<Document> a = ParseJson(c.ascii);
    Result<Document> u = ParseJson(utf8);
    if (c.error.empty()) {
      ASSERT_TRUE(a.has_value()) << a.error().message();
      ASSERT_TRUE(u.has_value()) << u.error().message();
      EXPECT_EQ(std::string((*a)["a"].GetString(), (*a)["a"].GetStringLength()),
                "b" + accent + "\xf0\x9f\x98\x80");
      EXPECT_EQ(EncodeJson(*a),
                R"({"a":"b)" + accent + "\xf0\x9f\x98\x80" + R"(","c":[1,2.5,true,null]})");
      (*u).RemoveMember("z");
      EXPECT_EQ(EncodeJson(*u), EncodeJson(*a));
    } else {
      ASSERT_FALSE(a.has_value()) << c.ascii;
      ASSERT_FALSE(u.has_value()) << utf8;
      EXPECT_EQ(a.error().message(), c.error) << c.ascii;
      EXPECT_EQ(u.error().message(), c.error) << utf8;
    }
  }
  // Invalid UTF-8 is still refused where it is.
  EXPECT_EQ(ParseJson("{\"a\":\"ok\",\"b\":\"\xc3(\"}").error().message(),
            "invalid JSON at offset 15: Invalid encoding in string");
}

TEST(CodecBadInputTest, DeepNestingIsRefusedWithoutRecursion) {
  // Far beyond any stack: the parser is iterative and stops at the limit.
  const std::string deep(200000, '[');
  EXPECT_EQ(DecodeError(Kind::kPod, deep),
            "invalid JSON at offset 1000: exceeded max depth of 1000");
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += R"({"a":)";
  EXPECT_EQ(ParseJson(objects).error().message(),
            "invalid JSON at offset 5000: exceeded max depth of 1000");
  // At the limit it parses, and unknown deep members are kept and written back.
  const std::string ok = std::string(999, '[') + std::string(999, ']');
  std::string pod = R"({"extra":)" + ok + "}";
  Result<Document> doc = ParseJson(pod);
  ASSERT_TRUE(doc.has_value()) << doc.error().message();
  EXPECT_TRUE(DecodePod(*doc).has_value());
  EXPECT_EQ(EncodeJson(*doc), pod);
}

TEST(CodecBadInputTest, HugeNumbersNeverCrash) {
  for (const char* json :
       {R"({"spec":{"priority":1e400}})", R"({"spec":{"priority":-1e400}})",
        R"({"spec":{"priority":123456789012345678901234567890}})",
        R"({"spec":{"tolerations":[{"tolerationSeconds":-9223372036854775809}]}})",
        R"({"spec":{"containers":[{"resources":{"requests":{"cpu":1e308}}}]}})",
        R"({"spec":{"containers":[{"resources":{"requests":{"cpu":-1e-320}}}]}})",
        R"({"spec":{"containers":[{"resources":{"requests":{"cpu":18446744073709551615}}}]}})"}) {
    Result<Document> doc = ParseJson(json);
    if (doc) {
      Result<Pod> pod = DecodePod(*doc);
      if (!pod) {
        EXPECT_EQ(pod.error().code(), StatusCode::kBadRequest);
      }
    } else {
      EXPECT_EQ(doc.error().code(), StatusCode::kBadRequest);
    }
  }
  // 2^64-1 cpus is a valid (absurd) quantity; the JSON number text is used exactly.
  Result<Pod> big = DecodePod(Parse(
      R"({"spec":{"containers":[{"resources":{"requests":{"cpu":18446744073709551615}}}]}})"));
  ASSERT_TRUE(big.has_value());
  EXPECT_EQ(big->spec.containers[0].requests.Get("cpu")->ToString(), "18446744073709551615");
  EXPECT_EQ(big->spec.containers[0].requests.Get("cpu")->Value(), INT64_MAX);
}

// Every value of the realistic pod replaced by every JSON type in turn: decoding either
// succeeds or reports a path; it never crashes.
TEST(CodecBadInputTest, EveryFieldWithEveryTypeNeverCrashes) {
  for (const char* file : {"pod.json", "node.json"}) {
    const Document original = Parse(ReadTestFile(file));
    std::vector<std::string> pointers;
    std::function<void(const Value&, const std::string&)> walk = [&](const Value& v,
                                                                     const std::string& at) {
      pointers.push_back(at);
      if (v.IsObject()) {
        for (const auto& m : v.GetObject()) {
          std::string key;
          for (char c : std::string_view(m.name.GetString(), m.name.GetStringLength())) {
            if (c == '~') {
              key += "~0";
            } else if (c == '/') {
              key += "~1";
            } else {
              key += c;
            }
          }
          walk(m.value, at + "/" + key);
        }
      } else if (v.IsArray()) {
        for (rapidjson::SizeType i = 0; i < v.Size(); ++i) walk(v[i], at + "/" + std::to_string(i));
      }
    };
    walk(original, "");
    ASSERT_GT(pointers.size(), 100u);
    const char* alternatives[] = {"null", "true",  "0",  "-1",        "1.5", "1e300",
                                  "\"\"", "\"x\"", "[]", "[null, 1]", "{}",  "{\"a\":[]}"};
    int errors = 0;
    for (const std::string& pointer : pointers) {
      for (const char* alt : alternatives) {
        Document doc;
        doc.CopyFrom(original, doc.GetAllocator());
        Document replacement = Parse(alt);
        Value v(replacement, doc.GetAllocator());
        if (pointer.empty()) {
          static_cast<Value&>(doc) = v;
        } else {
          rapidjson::Pointer(pointer.c_str()).Set(doc, v);
        }
        for (Kind kind : {Kind::kPod, Kind::kNode, Kind::kMeta}) {
          std::string message;
          switch (kind) {
            case Kind::kPod: {
              auto r = DecodePod(doc);
              if (!r) message = r.error().message();
              break;
            }
            case Kind::kNode: {
              auto r = DecodeNode(doc);
              if (!r) message = r.error().message();
              break;
            }
            default: {
              auto r = DecodeObjectMeta(doc);
              if (!r) message = r.error().message();
              break;
            }
          }
          if (!message.empty()) {
            ++errors;
            // A path, then what is wrong ("spec.priority: expected integer, got string",
            // "spec.overhead.cpu: quantities must match ..."), or the root's type.
            EXPECT_TRUE(message.find(": ") != std::string::npos ||
                        message.rfind("expected object", 0) == 0)
                << message;
          }
        }
        // Encoding the mutated document back never fails either.
        EXPECT_FALSE(EncodeJson(doc).empty());
      }
    }
    EXPECT_GT(errors, 100);
  }
}

// Random byte mutations of real objects: the parser and decoders reject or accept, never crash.
TEST(CodecBadInputTest, MutatedBytesNeverCrash) {
  uint64_t state = 0x9e3779b97f4a7c15;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const char kBytes[] = "{}[]\",:0123456789.-+eE \\ntrufalsn\x00\xff\xc3";
  for (const char* file : {"pod.json", "node.json"}) {
    const std::string original = ReadTestFile(file);
    for (int round = 0; round < 3000; ++round) {
      std::string s = original;
      const int edits = 1 + static_cast<int>(next() % 4);
      for (int e = 0; e < edits; ++e) {
        const size_t at = next() % s.size();
        switch (next() % 3) {
          case 0:
            s[at] = kBytes[next() % (sizeof(kBytes) - 1)];
            break;
          case 1:
            s.erase(at, 1 + next() % 8);
            break;
          default:
            s.insert(at, 1, kBytes[next() % (sizeof(kBytes) - 1)]);
            break;
        }
        if (s.empty()) s.push_back('{');
      }
      Result<Document> doc = ParseJson(s);
      if (!doc) continue;
      (void)DecodePod(*doc);
      (void)DecodeNode(*doc);
      (void)DecodeEvent(*doc);
      (void)DecodeDaemonSet(*doc);
      EXPECT_TRUE(ParseJson(EncodeJson(*doc)).has_value());
    }
  }
}

TEST(CodecParseTest, InPlaceParsingOfTrustedBytesGivesTheSameDocument) {
  const std::string original = ReadTestFile("pod.json");
  std::string buffer = original;
  Result<Document> in_place = ParseTrustedJsonInPlace(buffer);
  ASSERT_TRUE(in_place.has_value()) << in_place.error().message();
  Result<Document> copied = ParseTrustedJson(original);
  ASSERT_TRUE(copied.has_value());
  EXPECT_TRUE(*in_place == *copied);
  EXPECT_EQ(EncodeJson(*in_place), EncodeJson(*copied));

  std::string trailing = R"({"a":1} x)";
  EXPECT_EQ(ParseTrustedJsonInPlace(trailing).error().message(),
            "invalid JSON at offset 8: The document root must not be followed by other values");
  std::string nul(R"({"a":1})"
                  "\0"
                  "{}",
                  10);
  EXPECT_FALSE(ParseTrustedJsonInPlace(nul).has_value());
  // Nesting is limited here too (this parse recurses).
  std::string deep = std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  EXPECT_EQ(ParseTrustedJsonInPlace(deep).error().message(),
            "invalid JSON at offset 1001: exceeded max depth of 1000");
  std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(ParseTrustedJsonInPlace(ok).has_value());
}

TEST(CodecParseTest, PrefixParsingForStreams) {
  const std::string stream = R"({"a":1}  {"b":2})";
  size_t used = 0;
  Result<Document> first = ParseJsonPrefix(stream, &used);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(used, 7u);
  Result<Document> second = ParseJsonPrefix(std::string_view(stream).substr(used), &used, 7);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ((*second)["b"].GetInt(), 2);  // (Value == int recurses forever in C++20)
  EXPECT_EQ(ParseJsonPrefix("  {\"a\":", &used, 100).error().message(),
            "invalid JSON at offset 107: Invalid value");
}

}  // namespace
}  // namespace kt::api
