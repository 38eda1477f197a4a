#include "api/patch.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace kt::api {
namespace {

rapidjson::Document Parse(std::string_view text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  EXPECT_FALSE(d.HasParseError()) << text;
  return d;
}

std::string Json(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return buf.GetString();
}

// Re-serializes JSON text compactly, so expectations can be written readably.
std::string Canon(std::string_view text) { return Json(Parse(text)); }

// Applies and returns the result as compact JSON, or "error: <message>".
std::string Apply(PatchType type, std::string_view kind, std::string_view original,
                  std::string_view patch) {
  rapidjson::Document doc = Parse(original);
  std::string before = Json(doc);
  Result<rapidjson::Document> r = ApplyPatch(type, kind, doc, patch);
  EXPECT_EQ(Json(doc), before) << "the original must not change";
  if (!r) return "error: " + r.error().message();
  return Json(*r);
}

std::string Smp(std::string_view kind, std::string_view original, std::string_view patch) {
  return Apply(PatchType::kStrategicMergePatch, kind, original, patch);
}

// ---- kubectl sequences (kubectl-protocol.md §7) ----------------------------------------------

constexpr std::string_view kNode = R"({
  "kind":"Node","apiVersion":"v1",
  "metadata":{"name":"node-1","labels":{"zone":"a"}},
  "spec":{"taints":[{"key":"b","value":"1","effect":"NoExecute"},
                    {"key":"a","value":"1","effect":"NoSchedule"}]},
  "status":{"conditions":[{"type":"Ready","status":"True"},{"type":"MemoryPressure","status":"False"}],
            "addresses":[{"type":"InternalIP","address":"10.0.0.1"},{"type":"Hostname","address":"node-1"}]}})";

TEST(PatchKubectl, TaintReplacesTheWholeList) {  // §7.7
  std::string out = Smp("Node", kNode,
                        R"({"spec":{"taints":[{"effect":"PreferNoSchedule","key":"c","value":"1"},
                           {"effect":"NoExecute","key":"b","value":"1"},
                           {"effect":"NoSchedule","key":"a","value":"1"}]}})");
  rapidjson::Document d = Parse(out);
  EXPECT_EQ(Json(d["spec"]["taints"]),
            Canon(R"([{"effect":"PreferNoSchedule","key":"c","value":"1"},
                      {"effect":"NoExecute","key":"b","value":"1"},
                      {"effect":"NoSchedule","key":"a","value":"1"}])"));
  // Removing one taint sends the remaining list.
  d = Parse(
      Smp("Node", kNode, R"({"spec":{"taints":[{"effect":"NoSchedule","key":"a","value":"1"}]}})"));
  EXPECT_EQ(Json(d["spec"]["taints"]), Canon(R"([{"effect":"NoSchedule","key":"a","value":"1"}])"));
}

TEST(PatchKubectl, TaintsNullRemovesTheField) {  // §7.7, last taint removed
  rapidjson::Document d = Parse(Smp("Node", kNode, R"({"spec":{"taints":null}})"));
  EXPECT_FALSE(d["spec"].HasMember("taints"));
  EXPECT_EQ(Json(d["metadata"]), Canon(R"({"name":"node-1","labels":{"zone":"a"}})"));
}

TEST(PatchKubectl, CordonAndUncordon) {  // §7.8
  std::string cordoned = Smp("Node", kNode, R"({"spec":{"unschedulable":true}})");
  rapidjson::Document d = Parse(cordoned);
  EXPECT_TRUE(d["spec"]["unschedulable"].GetBool());
  EXPECT_EQ(d["spec"]["taints"].Size(), 2u);
  d = Parse(Smp("Node", cordoned, R"({"spec":{"unschedulable":null}})"));
  EXPECT_FALSE(d["spec"].HasMember("unschedulable"));
  // The same through a merge patch.
  d = Parse(Apply(PatchType::kMergePatch, "Node", cordoned, R"({"spec":{"unschedulable":null}})"));
  EXPECT_FALSE(d["spec"].HasMember("unschedulable"));
}

TEST(PatchKubectl, LabelMergeAndRemove) {  // §7.10
  std::string labeled =
      Apply(PatchType::kMergePatch, "Node", kNode, R"({"metadata":{"labels":{"disk":"ssd"}}})");
  EXPECT_EQ(Json(Parse(labeled)["metadata"]["labels"]), Canon(R"({"zone":"a","disk":"ssd"})"));
  std::string unlabeled =
      Apply(PatchType::kMergePatch, "Node", labeled, R"({"metadata":{"labels":{"disk":null}}})");
  EXPECT_EQ(Json(Parse(unlabeled)["metadata"]["labels"]), Canon(R"({"zone":"a"})"));
  // Strategic merge patch merges labels the same way.
  std::string smp = Smp("Node", kNode, R"({"metadata":{"labels":{"disk":"ssd","zone":null}}})");
  EXPECT_EQ(Json(Parse(smp)["metadata"]["labels"]), Canon(R"({"disk":"ssd"})"));
}

TEST(PatchKubectl, ConditionsMergeByType) {
  rapidjson::Document d = Parse(Smp(
      "Node", kNode,
      R"({"status":{"conditions":[{"type":"Ready","status":"False","reason":"KubeletNotReady"}]}})"));
  EXPECT_EQ(Json(d["status"]["conditions"]),
            Canon(R"([{"type":"Ready","status":"False","reason":"KubeletNotReady"},
                      {"type":"MemoryPressure","status":"False"}])"));
  // A new condition type is added; the live ones keep their order after it.
  d = Parse(Smp("Node", kNode,
                R"({"status":{"conditions":[{"type":"DiskPressure","status":"False"}]}})"));
  EXPECT_EQ(Json(d["status"]["conditions"]),
            Canon(R"([{"type":"DiskPressure","status":"False"},{"type":"Ready","status":"True"},
                      {"type":"MemoryPressure","status":"False"}])"));
  d = Parse(Smp("Node", kNode,
                R"({"status":{"addresses":[{"type":"Hostname","address":"n1.example"}]}})"));
  EXPECT_EQ(Json(d["status"]["addresses"]), Canon(R"([{"type":"InternalIP","address":"10.0.0.1"},
                      {"type":"Hostname","address":"n1.example"}])"));
  // Pod conditions merge by type too.
  std::string pod = Smp(
      "Pod",
      R"({"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"True"}]}})",
      R"({"status":{"conditions":[{"type":"Ready","status":"True"}],"phase":"Running"}})");
  EXPECT_EQ(pod, Canon(R"({"status":{"phase":"Running","conditions":[
      {"type":"Ready","status":"True"},{"type":"PodScheduled","status":"True"}]}})"));
}

constexpr std::string_view kPod = R"({
  "apiVersion":"v1","kind":"Pod",
  "metadata":{"name":"demo","namespace":"default","labels":{"app":"demo"},
              "annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}\n"},
              "finalizers":["a","b"]},
  "spec":{"containers":[{"name":"app","image":"nginx:1.27",
                         "env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],
                         "ports":[{"containerPort":80,"protocol":"TCP"}],
                         "volumeMounts":[{"name":"data","mountPath":"/data"}]},
                        {"name":"side","image":"busybox"}],
          "volumes":[{"name":"data","emptyDir":{}}],
          "tolerations":[{"key":"dedicated","operator":"Equal","value":"gpu","effect":"NoSchedule"},
                         {"key":"node.kubernetes.io/not-ready","operator":"Exists",
                          "effect":"NoExecute","tolerationSeconds":300}],
          "nodeName":"node-2"}})";

TEST(PatchKubectl, ClientSideApplyMergesContainersByName) {  // §7.12
  std::string out = Smp("Pod", kPod, R"({
      "metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"new\":1}\n"}},
      "spec":{"$setElementOrder/containers":[{"name":"app"},{"name":"side"}],
              "containers":[{"image":"nginx:1.28","name":"app"}]}})");
  EXPECT_EQ(out.find("$setElementOrder"), std::string::npos) << out;
  rapidjson::Document d = Parse(out);
  const rapidjson::Value& containers = d["spec"]["containers"];
  ASSERT_EQ(containers.Size(), 2u);
  EXPECT_STREQ(containers[0]["name"].GetString(), "app");
  EXPECT_STREQ(containers[0]["image"].GetString(), "nginx:1.28");
  EXPECT_EQ(containers[0]["env"].Size(), 2u);  // untouched fields stay
  EXPECT_STREQ(containers[1]["name"].GetString(), "side");
  EXPECT_STREQ(
      d["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"].GetString(),
      "{\"new\":1}\n");
}

TEST(PatchKubectl, SetElementOrderReordersAndIsNeverStored) {
  rapidjson::Document d = Parse(Smp("Pod", kPod, R"({"spec":{
      "$setElementOrder/containers":[{"name":"side"},{"name":"app"}],
      "containers":[{"name":"side","image":"busybox:2"}]}})"));
  ASSERT_EQ(d["spec"]["containers"].Size(), 2u);
  EXPECT_STREQ(d["spec"]["containers"][0]["name"].GetString(), "side");
  EXPECT_STREQ(d["spec"]["containers"][0]["image"].GetString(), "busybox:2");
  EXPECT_STREQ(d["spec"]["containers"][1]["name"].GetString(), "app");
  // Only the directive: the live list is reordered.
  d = Parse(Smp("Pod", kPod,
                R"({"spec":{"$setElementOrder/containers":[{"name":"side"},{"name":"app"}]}})"));
  EXPECT_STREQ(d["spec"]["containers"][0]["name"].GetString(), "side");
  // On a new list (no live one).
  d = Parse(Smp("Pod", R"({"spec":{}})", R"({"spec":{
      "$setElementOrder/initContainers":[{"name":"b"},{"name":"a"}],
      "initContainers":[{"name":"b","image":"y"},{"name":"a","image":"x"}]}})"));
  EXPECT_EQ(Json(d["spec"]), Canon(R"({"initContainers":[{"name":"b","image":"y"},
                                                          {"name":"a","image":"x"}]})"));
  // A primitive list.
  d = Parse(Smp("Pod", kPod, R"({"metadata":{"$setElementOrder/finalizers":["b","a"]}})"));
  EXPECT_EQ(Json(d["metadata"]["finalizers"]), Canon(R"(["b","a"])"));
}

TEST(PatchKubectl, ToleraitonsReplaceBecauseTheyHaveNoMergeKey) {  // §7.12
  rapidjson::Document d = Parse(Smp("Pod", kPod, R"({"spec":{"tolerations":[
      {"key":"dedicated","operator":"Equal","value":"gpu","effect":"NoSchedule"}]}})"));
  EXPECT_EQ(
      Json(d["spec"]["tolerations"]),
      Canon(R"([{"key":"dedicated","operator":"Equal","value":"gpu","effect":"NoSchedule"}])"));
}

// ---- Strategic merge patch semantics ---------------------------------------------------------

TEST(PatchStrategic, NestedListsMergeByTheirKeys) {
  rapidjson::Document d = Parse(Smp("Pod", kPod, R"({"spec":{"containers":[{"name":"app",
      "env":[{"name":"B","value":"20"},{"name":"C","value":"3"}],
      "ports":[{"containerPort":443}],
      "volumeMounts":[{"mountPath":"/data","readOnly":true}]}]}})"));
  const rapidjson::Value& app = d["spec"]["containers"][0];
  EXPECT_EQ(
      Json(app["env"]),
      Canon(R"([{"name":"A","value":"1"},{"name":"B","value":"20"},{"name":"C","value":"3"}])"));
  EXPECT_EQ(Json(app["ports"]),
            Canon(R"([{"containerPort":443},{"containerPort":80,"protocol":"TCP"}])"));
  EXPECT_EQ(Json(app["volumeMounts"]),
            Canon(R"([{"name":"data","mountPath":"/data","readOnly":true}])"));
  EXPECT_EQ(d["spec"]["containers"].Size(), 2u);
}

TEST(PatchStrategic, PatchDirectiveInListElements) {
  // delete by key
  rapidjson::Document d =
      Parse(Smp("Pod", kPod, R"({"spec":{"containers":[{"name":"side","$patch":"delete"}]}})"));
  ASSERT_EQ(d["spec"]["containers"].Size(), 1u);
  EXPECT_STREQ(d["spec"]["containers"][0]["name"].GetString(), "app");
  // replace the whole list
  d = Parse(Smp("Pod", kPod,
                R"({"spec":{"containers":[{"$patch":"replace"},{"name":"c","image":"z"}]}})"));
  EXPECT_EQ(Json(d["spec"]["containers"]), Canon(R"([{"name":"c","image":"z"}])"));
  // merge is what merging does
  d = Parse(Smp("Pod", kPod,
                R"({"spec":{"containers":[{"name":"side","image":"b2","$patch":"merge"}]}})"));
  EXPECT_EQ(Json(d["spec"]["containers"][1]), Canon(R"({"name":"side","image":"b2"})"));
}

TEST(PatchStrategic, PatchDirectiveInMaps) {
  rapidjson::Document d =
      Parse(Smp("Pod", kPod, R"({"metadata":{"labels":{"$patch":"replace","x":"y"}}})"));
  EXPECT_EQ(Json(d["metadata"]["labels"]), Canon(R"({"x":"y"})"));
  d = Parse(Smp("Pod", kPod, R"({"metadata":{"labels":{"$patch":"delete"}}})"));
  EXPECT_EQ(Json(d["metadata"]["labels"]), "{}");
  d = Parse(Smp("Pod", kPod, R"({"metadata":{"labels":{"$patch":"merge","x":"y"}}})"));
  EXPECT_EQ(Json(d["metadata"]["labels"]), Canon(R"({"app":"demo","x":"y"})"));
  // Directives inside a value that is new to the object are applied, never stored.
  d = Parse(Smp("Pod", kPod, R"({"spec":{"affinity":{"$patch":"replace","nodeAffinity":{}}}})"));
  EXPECT_EQ(Json(d["spec"]["affinity"]), Canon(R"({"nodeAffinity":{}})"));
}

TEST(PatchStrategic, RetainKeys) {
  rapidjson::Document d = Parse(Smp("Pod", kPod, R"({"spec":{"volumes":[
      {"name":"data","$retainKeys":["name","hostPath"],"hostPath":{"path":"/x"}}]}})"));
  EXPECT_EQ(Json(d["spec"]["volumes"]), Canon(R"([{"name":"data","hostPath":{"path":"/x"}}])"));
}

TEST(PatchStrategic, PrimitiveListsMergeAsSets) {
  rapidjson::Document d =
      Parse(Smp("Pod", kPod, R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["b"]}})"));
  EXPECT_EQ(Json(d["metadata"]["finalizers"]), Canon(R"(["a"])"));
  // New items come first, then the live ones (upstream's normalizeElementOrder).
  d = Parse(Smp("Pod", kPod, R"({"metadata":{"finalizers":["c","a"]}})"));
  EXPECT_EQ(Json(d["metadata"]["finalizers"]), Canon(R"(["c","a","b"])"));
  d = Parse(Smp("Node", R"({"spec":{"podCIDRs":["10.0.0.0/24"]}})",
                R"({"spec":{"podCIDRs":["10.0.0.0/24","fd00::/64"]}})"));
  EXPECT_EQ(Json(d["spec"]["podCIDRs"]), Canon(R"(["10.0.0.0/24","fd00::/64"])"));
  // Namespace spec.finalizers has no strategy: replaced.
  d = Parse(Smp("Namespace", R"({"spec":{"finalizers":["kubernetes"]}})",
                R"({"spec":{"finalizers":["other"]}})"));
  EXPECT_EQ(Json(d["spec"]["finalizers"]), Canon(R"(["other"])"));
}

TEST(PatchStrategic, OwnerReferencesMergeByUid) {
  rapidjson::Document d = Parse(Smp(
      "Pod",
      R"({"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":"a","uid":"u1"}]}})",
      R"({"metadata":{"ownerReferences":[{"uid":"u1","controller":true},{"uid":"u2","kind":"X","name":"b","apiVersion":"v1"}]}})"));
  EXPECT_EQ(
      Json(d["metadata"]["ownerReferences"]),
      Canon(R"([{"apiVersion":"apps/v1","kind":"DaemonSet","name":"a","uid":"u1","controller":true},
                      {"uid":"u2","kind":"X","name":"b","apiVersion":"v1"}])"));
}

TEST(PatchStrategic, DaemonSetTemplateUsesThePodSchema) {
  rapidjson::Document d =
      Parse(Smp("DaemonSet",
                R"({"spec":{"template":{"metadata":{"labels":{"app":"agent"}},
          "spec":{"containers":[{"name":"agent","image":"a:1"},{"name":"log","image":"l:1"}]}}},
         "status":{"conditions":[{"type":"A","status":"True"}]}})",
                R"({"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"a:2"}],
          "tolerations":[{"operator":"Exists"}]}}}})"));
  const rapidjson::Value& spec = d["spec"]["template"]["spec"];
  EXPECT_EQ(Json(spec["containers"]),
            Canon(R"([{"name":"agent","image":"a:2"},{"name":"log","image":"l:1"}])"));
  EXPECT_EQ(Json(spec["tolerations"]), Canon(R"([{"operator":"Exists"}])"));
  EXPECT_EQ(Json(d["spec"]["template"]["metadata"]), Canon(R"({"labels":{"app":"agent"}})"));
}

TEST(PatchStrategic, KindsWithoutMergeKeysStillMergeMaps) {
  for (const char* kind : {"Event", "Lease", "PriorityClass", "Namespace"}) {
    EXPECT_EQ(Smp(kind, R"({"metadata":{"name":"x"},"spec":{"a":[1,2],"b":{"c":1}}})",
                  R"({"spec":{"a":[3],"b":{"d":2}}})"),
              Canon(R"({"metadata":{"name":"x"},"spec":{"a":[3],"b":{"c":1,"d":2}}})"))
        << kind;
  }
  EXPECT_TRUE(SupportsStrategicMergePatch("Pod"));
  EXPECT_FALSE(SupportsStrategicMergePatch("Widget"));
  Result<rapidjson::Document> r = ApplyStrategicMergePatch("Widget", Parse(R"({})"), R"({"a":1})");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kUnsupportedMediaType);
}

TEST(PatchStrategic, TypeChangesReplaceAndNullsNeverLand) {
  EXPECT_EQ(Smp("Pod", R"({"spec":{"x":{"a":1}}})", R"({"spec":{"x":[1]}})"),
            Canon(R"({"spec":{"x":[1]}})"));
  EXPECT_EQ(Smp("Pod", R"({"spec":{}})", R"({"spec":{"x":{"a":null,"b":1}}})"),
            Canon(R"({"spec":{"x":{"b":1}}})"));
  EXPECT_EQ(Smp("Pod", R"({"spec":{}})", R"(null)"), Canon(R"({"spec":{}})"));
  // The last of duplicate keys wins, as in Go's decoder.
  EXPECT_EQ(Smp("Pod", R"({"spec":{}})", R"({"spec":{"a":1,"a":2}})"),
            Canon(R"({"spec":{"a":2}})"));
}

TEST(PatchStrategic, LargeListsAndMapsMergeInOrder) {
  // Big enough to take the indexed paths.
  std::string live = R"({"metadata":{"labels":{)";
  std::string patch = R"({"metadata":{"labels":{)";
  for (int i = 0; i < 300; ++i) {
    if (i > 0) live += ',', patch += ',';
    live.append("\"k").append(std::to_string(i)).append("\":\"v\"");
    patch.append("\"k").append(std::to_string(i * 2)).append(i % 2 ? "\":null" : "\":\"w\"");
  }
  live += R"(}},"spec":{"containers":[)";
  patch += R"(}},"spec":{"containers":[)";
  for (int i = 0; i < 300; ++i) {
    if (i > 0) live += ',', patch += ',';
    live.append(R"({"name":"c)").append(std::to_string(i)).append(R"(","image":"x"})");
    patch.append(R"({"name":"c)").append(std::to_string(299 - i)).append(R"(","image":"y"})");
  }
  live += "]}}";
  patch += "]}}";
  rapidjson::Document d = Parse(Smp("Pod", live, patch));
  const rapidjson::Value& labels = d["metadata"]["labels"];
  EXPECT_TRUE(labels.HasMember("k0"));
  EXPECT_FALSE(labels.HasMember("k2"));  // i=1 → k2: null
  EXPECT_STREQ(labels["k4"].GetString(), "w");
  EXPECT_TRUE(labels.HasMember("k596"));   // new
  EXPECT_FALSE(labels.HasMember("k598"));  // deleting what is absent adds nothing
  const rapidjson::Value& containers = d["spec"]["containers"];
  ASSERT_EQ(containers.Size(), 300u);
  EXPECT_STREQ(containers[0]["name"].GetString(), "c299");  // patch order wins
  EXPECT_STREQ(containers[0]["image"].GetString(), "y");
}

// ---- RFC 7386 appendix A -----------------------------------------------------------------------

TEST(PatchMerge, Rfc7386AppendixA) {
  struct Row {
    const char* target;
    const char* patch;
    const char* result;
  };
  const Row rows[] = {
      {R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
      {R"({"a":"b"})", R"({"a":null})", R"({})"},
      {R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})"},
      {R"({"a":["b"]})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"c"})", R"({"a":["b"]})", R"({"a":["b"]})"},
      {R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})", R"({"a":{"b":"d"}})"},
      {R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
      {R"(["a","b"])", R"(["c","d"])", R"(["c","d"])"},
      {R"({"a":"b"})", R"(["c"])", R"(["c"])"},
      {R"({"a":"foo"})", R"(null)", R"(null)"},
      {R"({"a":"foo"})", R"("bar")", R"("bar")"},
      {R"({"e":null})", R"({"a":1})", R"({"e":null,"a":1})"},
      {R"([1,2])", R"({"a":"b","c":null})", R"({"a":"b"})"},
      {R"({})", R"({"a":{"bb":{"ccc":null}}})", R"({"a":{"bb":{}}})"},
      // Section 3's example.
      {R"({"title":"Goodbye!","author":{"givenName":"John","familyName":"Doe"},
          "tags":["example","sample"],"content":"This will be unchanged"})",
       R"({"title":"Hello!","phoneNumber":"+01-123-456-7890","author":{"familyName":null},
          "tags":["example"]})",
       R"({"title":"Hello!","author":{"givenName":"John"},"tags":["example"],
          "content":"This will be unchanged","phoneNumber":"+01-123-456-7890"})"},
  };
  for (const Row& row : rows) {
    rapidjson::Document target = Parse(row.target);
    rapidjson::Document patch(&target.GetAllocator());
    patch.Parse(row.patch);
    MergePatchValue(target, patch, target.GetAllocator());
    EXPECT_EQ(Json(target), Canon(row.result)) << row.target << " + " << row.patch;
  }
}

// ---- RFC 6902 appendix A -----------------------------------------------------------------------

TEST(PatchJson, Rfc6902AppendixA) {
  struct Row {
    const char* name;
    const char* doc;
    const char* patch;
    const char* result;  // nullptr: must fail
  };
  const Row rows[] = {
      {"A.1", R"({"foo":"bar"})", R"([{"op":"add","path":"/baz","value":"qux"}])",
       R"({"foo":"bar","baz":"qux"})"},
      {"A.2", R"({"foo":["bar","baz"]})", R"([{"op":"add","path":"/foo/1","value":"qux"}])",
       R"({"foo":["bar","qux","baz"]})"},
      {"A.3", R"({"baz":"qux","foo":"bar"})", R"([{"op":"remove","path":"/baz"}])",
       R"({"foo":"bar"})"},
      {"A.4", R"({"foo":["bar","qux","baz"]})", R"([{"op":"remove","path":"/foo/1"}])",
       R"({"foo":["bar","baz"]})"},
      {"A.5", R"({"baz":"qux","foo":"bar"})", R"([{"op":"replace","path":"/baz","value":"boo"}])",
       R"({"baz":"boo","foo":"bar"})"},
      {"A.6", R"({"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}})",
       R"([{"op":"move","from":"/foo/waldo","path":"/qux/thud"}])",
       R"({"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}})"},
      {"A.7", R"({"foo":["all","grass","cows","eat"]})",
       R"([{"op":"move","from":"/foo/1","path":"/foo/3"}])",
       R"({"foo":["all","cows","eat","grass"]})"},
      {"A.8", R"({"baz":"qux","foo":["a",2,"c"]})",
       R"([{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}])",
       R"({"baz":"qux","foo":["a",2,"c"]})"},
      {"A.9", R"({"baz":"qux"})", R"([{"op":"test","path":"/baz","value":"bar"}])", nullptr},
      {"A.10", R"({"foo":"bar"})", R"([{"op":"add","path":"/child","value":{"grandchild":{}}}])",
       R"({"foo":"bar","child":{"grandchild":{}}})"},
      {"A.11", R"({"foo":"bar"})", R"([{"op":"add","path":"/baz","value":"qux","xyz":123}])",
       R"({"foo":"bar","baz":"qux"})"},
      {"A.12", R"({"foo":"bar"})", R"([{"op":"add","path":"/baz/bat","value":"qux"}])", nullptr},
      {"A.13", R"({"foo":"bar"})", R"([{"op":"add","path":"/baz","value":"qux","op":"remove"}])",
       nullptr},
      {"A.14", R"({"/":9,"~1":10})", R"([{"op":"test","path":"/~01","value":10}])",
       R"({"/":9,"~1":10})"},
      {"A.15", R"({"/":9,"~1":10})", R"([{"op":"test","path":"/~01","value":"10"}])", nullptr},
      {"A.16", R"({"foo":["bar"]})", R"([{"op":"add","path":"/foo/-","value":["abc","def"]}])",
       R"({"foo":["bar",["abc","def"]]})"},
      // Beyond the appendix: copy, ~1 in keys, negative indexes (json-patch v4).
      {"copy", R"({"a":{"b":[1]}})", R"([{"op":"copy","from":"/a/b","path":"/c"}])",
       R"({"a":{"b":[1]},"c":[1]})"},
      {"label key with /", R"({"metadata":{"labels":{}}})",
       R"([{"op":"add","path":"/metadata/labels/example.com~1tier","value":"web"}])",
       R"({"metadata":{"labels":{"example.com/tier":"web"}}})"},
      {"negative index", R"({"a":[1,2,3]})", R"([{"op":"remove","path":"/a/-1"}])",
       R"({"a":[1,2]})"},
      {"replace adds a missing member (v4)", R"({"a":1})",
       R"([{"op":"replace","path":"/b","value":2}])", R"({"a":1,"b":2})"},
  };
  for (const Row& row : rows) {
    std::string out = Apply(PatchType::kJsonPatch, "", row.doc, row.patch);
    if (row.result == nullptr) {
      EXPECT_TRUE(out.starts_with("error: ")) << row.name << ": " << out;
    } else {
      EXPECT_EQ(out, Canon(row.result)) << row.name;
    }
  }
}

TEST(PatchJson, FailuresAre422WithTheCause) {
  rapidjson::Document doc = Parse(kNode);
  std::string cause;
  Result<rapidjson::Document> r =
      ApplyJsonPatch(doc, R"([{"op":"test","path":"/metadata/name","value":"other"}])", &cause);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kInvalid);
  EXPECT_EQ(r.error().message(), kPatchRejectedMessage);
  EXPECT_EQ(cause, "testing value /metadata/name failed: test failed");
}

// ---- Malformed input ---------------------------------------------------------------------------

TEST(PatchMalformed, ErrorsWithoutCrashing) {
  struct Row {
    PatchType type;
    std::string patch;
    StatusCode code;
    std::string message;  // exact message, or with a trailing '*' a prefix
    std::string cause = {};
  };
  using T = PatchType;
  using C = StatusCode;
  const std::string too_deep = std::string(5000, '[') + std::string(5000, ']');
  std::string too_many = "[";
  for (size_t i = 0; i <= kMaxJsonPatchOperations; ++i) {
    too_many += std::string(i ? "," : "") + R"({"op":"test","path":"/kind","value":"Node"})";
  }
  too_many += "]";
  std::string copy_bomb = R"([{"op":"add","path":"/x","value":[0,0,0,0,0,0,0,0]})";
  for (int i = 0; i < 40; ++i) copy_bomb += R"(,{"op":"copy","from":"/x","path":"/x/-"})";
  copy_bomb += "]";
  std::string nest_bomb =
      R"([{"op":"add","path":"/a","value":)" + std::string(600, '[') + std::string(600, ']') + "}";
  for (int i = 0; i < 500; ++i) {  // each round wraps /a in one more array
    nest_bomb += R"(,{"op":"add","path":"/t","value":[]},{"op":"move","from":"/a","path":"/t/-"},)"
                 R"({"op":"move","from":"/t","path":"/a"})";
  }
  nest_bomb += "]";
  const Row rows[] = {
      // JSON patch
      {T::kJsonPatch, "", C::kBadRequest, "error decoding patch: unexpected end of JSON input"},
      {T::kJsonPatch, "[", C::kBadRequest, "error decoding patch: unexpected end of JSON input"},
      {T::kJsonPatch, "[}", C::kBadRequest,
       "error decoding patch: invalid character '}' looking for beginning of value"},
      {T::kJsonPatch, "{}", C::kBadRequest,
       "error decoding patch: json: cannot unmarshal object into Go value of type "
       "[]handlers.jsonPatchOp"},
      {T::kJsonPatch, "[1]", C::kBadRequest,
       "error decoding patch: json: cannot unmarshal number into Go value of type "
       "handlers.jsonPatchOp"},
      {T::kJsonPatch, R"([{"op":1}])", C::kBadRequest,
       "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op "
       "of type string"},
      {T::kJsonPatch, R"([{"op":"add"}])", C::kInvalid, std::string(kPatchRejectedMessage),
       "add operation failed to decode path: missing value"},
      {T::kJsonPatch, R"([{"op":"frobnicate","path":"/a"}])", C::kInvalid,
       std::string(kPatchRejectedMessage), "Unexpected kind: frobnicate"},
      {T::kJsonPatch, R"([{}])", C::kInvalid, std::string(kPatchRejectedMessage),
       "Unexpected kind: unknown"},
      {T::kJsonPatch, R"([{"op":"remove","path":"/nope"}])", C::kInvalid,
       std::string(kPatchRejectedMessage),
       "error in remove for path: '/nope': Unable to remove nonexistent key: nope: missing value"},
      {T::kJsonPatch, R"([{"op":"add","path":"/a/b/c","value":1}])", C::kInvalid,
       std::string(kPatchRejectedMessage),
       "add operation does not apply: doc is missing path: \"/a/b/c\": missing value"},
      {T::kJsonPatch, R"([{"op":"add","path":"/spec/taints/9","value":1}])", C::kInvalid,
       std::string(kPatchRejectedMessage),
       "error in add for path: '/spec/taints/9': Unable to access invalid index: 9: invalid "
       "index referenced"},
      {T::kJsonPatch, R"([{"op":"move","from":"/nope","path":"/a"}])", C::kInvalid,
       std::string(kPatchRejectedMessage),
       "error in move for path: 'nope': Unable to remove nonexistent key: nope: missing value"},
      {T::kJsonPatch, R"([{"op":"copy","from":"/metadata","path":"/x/y"}])", C::kInvalid,
       std::string(kPatchRejectedMessage),
       "copy operation does not apply: doc is missing destination path: /x/y: missing value"},
      {T::kJsonPatch, R"([{"op":"remove","path":"/spec/taints/x"}])", C::kInvalid,
       std::string(kPatchRejectedMessage), "*"},
      {T::kJsonPatch, R"([{"op":"replace","path":"","value":1}])", C::kInvalid,
       std::string(kPatchRejectedMessage), "replace operation value must be object or array"},
      {T::kJsonPatch, too_many, C::kRequestEntityTooLarge,
       "The allowed maximum operations in a JSON patch is 10000, got 10001"},
      {T::kJsonPatch, too_deep, C::kBadRequest, "error decoding patch: exceeded max depth"},
      {T::kJsonPatch, copy_bomb, C::kInvalid, std::string(kPatchRejectedMessage),
       "Unable to complete the copy*"},
      {T::kJsonPatch, nest_bomb, C::kInvalid, std::string(kPatchRejectedMessage),
       "*exceeded max depth"},
      // Merge patch
      {T::kMergePatch, "[1]", C::kBadRequest,
       "error decoding patch: json: cannot unmarshal array into Go value of type "
       "map[string]interface {}"},
      {T::kMergePatch, "nope", C::kBadRequest,
       "error decoding patch: invalid character 'o' in literal null (expecting 'u')*"},
      {T::kMergePatch, R"({"a":1} x)", C::kBadRequest,
       "error decoding patch: invalid character 'x' after top-level value"},
      {T::kMergePatch, "{\"a\":\"\xff\"}", C::kBadRequest, "error decoding patch: *"},
      {T::kMergePatch, too_deep, C::kBadRequest, "error decoding patch: exceeded max depth"},
      // Strategic merge patch
      {T::kStrategicMergePatch, "[]", C::kBadRequest,
       "json: cannot unmarshal array into Go value of type map[string]interface {}"},
      {T::kStrategicMergePatch, R"({"spec":{"taints":[}})", C::kBadRequest,
       "invalid character '}' looking for beginning of value"},
      {T::kStrategicMergePatch, R"({"spec":{"containers":[{"image":"x"}]}})", C::kBadRequest,
       "map: map[image:x] does not contain declared merge key: name"},
      {T::kStrategicMergePatch, R"({"spec":{"initContainers":[[1]]}})", C::kInvalid,
       std::string(kPatchRejectedMessage), "lists of lists are not supported"},
      {T::kStrategicMergePatch, R"({"metadata":{"labels":{"$patch":"bogus"}}})", C::kBadRequest,
       "unknown patch type: bogus in map: map[$patch:bogus]"},
      {T::kStrategicMergePatch, R"({"spec":{"containers":[{"name":"x","$patch":7}]}})",
       C::kBadRequest, "unknown patch type: 7 in map: map[$patch:7 name:x]"},
      {T::kStrategicMergePatch, R"({"spec":{"$setElementOrder/containers":"x"}})", C::kBadRequest,
       "expected a slice, but received a string"},
      {T::kStrategicMergePatch, R"({"spec":{"$retainKeys":"x"}})", C::kBadRequest,
       "invalid patch format of retainKeys"},
      {T::kStrategicMergePatch, R"({"spec":{"$retainKeys":["a"],"b":1}})", C::kBadRequest,
       "invalid patch format of retainKeys"},
      {T::kStrategicMergePatch, R"({"metadata":{"$deleteFromPrimitiveList/finalizers":"x"}})",
       C::kBadRequest, "invalid patch format of primitive list"},
      {T::kStrategicMergePatch, R"({"spec":{"containers":[{"name":"a"},1]}})", C::kBadRequest,
       "list element types are not identical: *"},
      {T::kStrategicMergePatch, R"({"spec":{"containers":[{"$patch":"delete"}]}})", C::kBadRequest,
       "map: map[$patch:delete] does not contain declared merge key: name"},
      {T::kStrategicMergePatch,
       R"({"spec":{"$setElementOrder/containers":[{"name":"a"}],"containers":[{"name":"b","image":"x"}]}})",
       C::kBadRequest,
       "The order in patch list:\n[map[image:x name:b]]\n doesn't match "
       "$setElementOrder list:\n[map[name:a]]\n"},
      {T::kStrategicMergePatch, R"({"metadata":{"finalizers":[{"a":1}]}})", C::kBadRequest,
       "list element types are not identical: *"},
      {T::kStrategicMergePatch, R"({"spec":{"containers":[null]}})", C::kBadRequest,
       "list element types are not identical: *"},
      {T::kStrategicMergePatch, too_deep, C::kBadRequest, "exceeded max depth"},
  };
  std::string live = std::string(kNode);
  live.insert(live.rfind('}'), R"(,"spec2":1)");
  for (const Row& row : rows) {
    std::string kind = row.type == T::kStrategicMergePatch ? "Pod" : "Node";
    std::string original = row.type == T::kStrategicMergePatch ? std::string(kPod) : live;
    rapidjson::Document doc = Parse(original);
    std::string cause;
    Result<rapidjson::Document> r = ApplyPatch(row.type, kind, doc, row.patch, &cause);
    std::string label = row.patch.substr(0, 80);
    ASSERT_FALSE(r) << label << " → " << Json(*r);
    EXPECT_EQ(r.error().code(), row.code) << label << ": " << r.error().message();
    auto matches = [](const std::string& got, const std::string& want) {
      // "x*": a prefix; "*x": a suffix.
      if (!want.empty() && want.back() == '*') {
        return got.starts_with(want.substr(0, want.size() - 1));
      }
      if (!want.empty() && want.front() == '*') return got.ends_with(want.substr(1));
      return got == want;
    };
    EXPECT_TRUE(matches(r.error().message(), row.message))
        << label << "\n got: " << r.error().message() << "\nwant: " << row.message;
    if (!row.cause.empty()) {
      EXPECT_TRUE(matches(cause, row.cause))
          << label << "\n got: " << cause << "\nwant: " << row.cause;
    }
  }
}

TEST(PatchMalformed, OverDeepOriginalIsRefused) {
  rapidjson::Document doc;
  doc.SetObject();
  rapidjson::Value* at = &doc;
  for (int i = 0; i < 2000; ++i) {
    at->SetArray();
    at->PushBack(rapidjson::Value(rapidjson::kArrayType), doc.GetAllocator());
    at = &(*at)[0];
  }
  for (PatchType type :
       {PatchType::kJsonPatch, PatchType::kMergePatch, PatchType::kStrategicMergePatch}) {
    Result<rapidjson::Document> r = ApplyPatch(type, "Pod", doc, "{}");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message(), "the object exceeds the maximum nesting depth");
  }
}

TEST(PatchMalformed, ContentTypes) {
  EXPECT_EQ(*ParsePatchType("application/strategic-merge-patch+json"),
            PatchType::kStrategicMergePatch);
  EXPECT_EQ(*ParsePatchType("application/merge-patch+json; charset=utf-8"), PatchType::kMergePatch);
  EXPECT_EQ(*ParsePatchType("application/json-patch+json"), PatchType::kJsonPatch);
  EXPECT_EQ(*ParsePatchType("application/apply-patch+yaml"), PatchType::kApplyPatch);
  Result<PatchType> bad = ParsePatchType("application/json");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), StatusCode::kUnsupportedMediaType);
  EXPECT_TRUE(bad.error().message().starts_with(
      "the body of the request was in an unknown format - accepted media types include: "));
}

// Mutations of valid patches: every outcome is allowed except a crash (run under ASan in CI).
TEST(PatchMalformed, FuzzedPatchesNeverCrash) {
  const std::pair<PatchType, std::string_view> seeds[] = {
      {PatchType::kStrategicMergePatch, R"({"metadata":{"labels":{"a":null,"$patch":"replace"},
          "$deleteFromPrimitiveList/finalizers":["a"],"$setElementOrder/finalizers":["b"]},
          "spec":{"$setElementOrder/containers":[{"name":"side"},{"name":"app"}],
          "containers":[{"name":"app","env":[{"name":"A","$patch":"delete"}],
          "$retainKeys":["name","env"]},{"$patch":"replace"},{"name":"z"}],
          "volumes":[{"name":"data","$patch":"delete"}],"tolerations":null}})"},
      {PatchType::kMergePatch, R"({"metadata":{"labels":{"x":null,"y":{"z":[1,{"q":null}]}}}})"},
      {PatchType::kJsonPatch, R"([{"op":"add","path":"/spec/containers/0/env/-","value":{"a":1}},
          {"op":"move","from":"/spec/nodeName","path":"/metadata/x"},
          {"op":"copy","from":"/spec/volumes","path":"/spec/v2"},
          {"op":"test","path":"/spec/v2/0/name","value":"data"},
          {"op":"replace","path":"/spec/containers/-1/image","value":"b"},
          {"op":"remove","path":"/metadata/labels/app"}])"},
  };
  std::mt19937 rng(42);
  const std::string alphabet = "{}[]\",:0123456789-$/~null true false name patch op path";
  rapidjson::Document doc = Parse(kPod);
  int ok = 0, failed = 0;
  for (const auto& [type, seed] : seeds) {
    for (int i = 0; i < 3000; ++i) {
      std::string patch(seed);
      int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits && !patch.empty(); ++e) {
        size_t at = rng() % patch.size();
        switch (rng() % 3) {
          case 0:
            patch[at] = alphabet[rng() % alphabet.size()];
            break;
          case 1:
            patch.erase(at, 1 + rng() % 8);
            break;
          default:
            patch.insert(at, 1, alphabet[rng() % alphabet.size()]);
            break;
        }
      }
      Result<rapidjson::Document> r = ApplyPatch(type, "Pod", doc, patch);
      (r ? ok : failed)++;
      if (r) Json(*r);  // the result must be a well-formed tree
    }
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(failed, 0);
}

}  // namespace
}  // namespace kt::api
