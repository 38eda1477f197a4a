#include "api/fieldpath.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kt::api {
namespace {

// FieldsV1 as kube-apiserver wrote it. Each row decodes and re-encodes byte for byte
// (SMD fieldpath/serialize.go emitContentsV1 / readIterV1).
struct RoundTripCase {
  const char* name;
  const char* source;
  const char* json;
};

const RoundTripCase kRoundTrips[] = {
    {"kubelet status of a running pod",
     "kube-apiserver 1.30 output, quoted in deckhouse's ingress-nginx integration notes",
     R"({"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"PodReadyToStartContainers\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.111.2.247\"}":{".":{},"f:ip":{}}},"f:startTime":{}}})"},
    {"controller-created pod (subtrees as upstream wrote them)",
     "same source, kruise-manager entry: metadata, ports keyed by containerPort+protocol",
     R"({"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:controller-revision-hash":{},"f:name":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"ba9f69e0-a104-442a-9362-8aee8d3da964\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"controller\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}},"k:{\"containerPort\":443,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}},"k:{\"containerPort\":443,\"protocol\":\"UDP\"}":{".":{},"f:containerPort":{},"f:protocol":{}},"k:{\"containerPort\":8443,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:resources":{".":{},"f:requests":{".":{},"f:ephemeral-storage":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:imagePullSecrets":{".":{},"k:{\"name\":\"deckhouse-registry\"}":{}},"f:nodeSelector":{},"f:priorityClassName":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:serviceAccount":{},"f:serviceAccountName":{},"f:terminationGracePeriodSeconds":{},"f:tolerations":{}}})"},
    {"a set of strings (finalizers)", "SMD fieldpath/serialize_test.go (v: elements)",
     R"({"f:metadata":{"f:finalizers":{".":{},"v:\"example.com/a\"":{},"v:\"example.com/b\"":{}}}})"},
    {"index and value elements", "SMD fieldpath/serialize_test.go",
     R"({"f:a":{"i:0":{},"i:3":{}},"f:b":{"v:1":{},"v:2.5":{},"v:\"x\"":{},"v:true":{}}})"},
    {"HTML characters escaped as Go does", "encoding/json HTMLEscape via jsoniter",
     R"({"f:metadata":{"f:annotations":{".":{},"f:a\u003cb\u0026c\u003e":{}}}})"},
    {"empty set", "managedfields.go EmptyFields", "{}"},
};

TEST(FieldSetTest, RoundTripsUpstreamFieldsV1ByteForByte) {
  for (const auto& c : kRoundTrips) {
    Result<FieldSet> set = FieldSet::FromJson(c.json);
    ASSERT_TRUE(set) << c.name << ": " << set.error().ToString();
    EXPECT_EQ(set->ToJson(), c.json) << c.name << " (" << c.source << ")";
  }
}

TEST(FieldSetTest, PathsPrintAsUpstream) {
  // SMD fieldpath/element.go String, path.go String: what 409 conflict messages show.
  Result<FieldSet> set = FieldSet::FromJson(
      R"({"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{}}}},"f:replicas":{}},"f:x":{"v:\"a\"":{},"i:2":{}}})");
  ASSERT_TRUE(set);
  EXPECT_EQ(set->PathStrings(),
            (std::vector<std::string>{
                ".spec.replicas", R"(.spec.containers[name="nginx"])",
                R"(.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"])",
                R"(.x[="a"])", ".x[2]"}));
}

TEST(FieldSetTest, SortsAsUpstreamWhateverTheInsertionOrder) {
  // element.go Compare: names < keys < values < indices; value.Compare: numbers < strings.
  FieldSet set;
  set.Insert(Path{PathElement::Field("z")});
  set.Insert(Path{PathElement::Index(1)});
  PathValue s;
  s.kind = PathValue::Kind::kString;
  s.text = "10";
  set.Insert(Path{PathElement::Value(s)});
  PathValue n;
  n.kind = PathValue::Kind::kNumber;
  n.is_int = true;
  n.int_value = 10;
  set.Insert(Path{PathElement::Value(n)});
  set.Insert(Path{PathElement::Key({{"name", s}})});
  set.Insert(Path{PathElement::Field("a"), PathElement::Field("b")});
  set.Insert(Path{PathElement::Field("a")});
  EXPECT_EQ(
      set.ToJson(),
      R"({"f:a":{".":{},"f:b":{}},"f:z":{},"k:{\"name\":\"10\"}":{},"v:10":{},"v:\"10\"":{},"i:1":{}})");
}

TEST(FieldSetTest, MalformedFieldsV1) {
  // serialize-pe.go DeserializePathElement; unknown element types are skipped by readIterV1.
  struct Case {
    const char* json;
    const char* error;  // "" when it decodes
    const char* reencoded;
  };
  const Case cases[] = {
      {R"({"f":{}})", "parsing key as path element: key must be 2 characters long:", ""},
      {R"({"fx":{}})", "parsing key as path element: missing colon: fx", ""},
      {R"({"k:{\"a\":1}x":{}})",
       "parsing key as path element: managedFields parsing: unexpected trailing data after JSON "
       "object",
       ""},
      {R"({"i:x":{}})", R"(parsing key as path element: strconv.Atoi: parsing "x": invalid syntax)",
       ""},
      {R"({"k:[1]":{}})", "parsing key as path element: ReadObjectCB: expect { or n, but found [1]",
       ""},
      {R"({"x:whatever":{},"f:a":{}})", "", R"({"f:a":{}})"},
      {R"({"f:a":null})", "", R"({"f:a":{}})"},
      {R"({"f:a":{".":{}}})", "", R"({"f:a":{}})"},
  };
  for (const auto& c : cases) {
    Result<FieldSet> set = FieldSet::FromJson(c.json);
    if (*c.error) {
      ASSERT_FALSE(set) << c.json;
      EXPECT_EQ(set.error().message(), c.error) << c.json;
    } else {
      ASSERT_TRUE(set) << c.json;
      EXPECT_EQ(set->ToJson(), c.reencoded);
    }
  }
}

TEST(FieldSetTest, SetOperations) {
  // set.go Union, Intersection, Difference, RecursiveDifference.
  auto set = [](const char* json) { return *FieldSet::FromJson(json); };
  FieldSet a = set(R"({"f:spec":{"f:a":{},"f:b":{}},"f:status":{"f:phase":{}}})");
  FieldSet b = set(R"({"f:spec":{"f:b":{},"f:c":{}}})");
  EXPECT_EQ(a.Union(b).ToJson(),
            R"({"f:spec":{"f:a":{},"f:b":{},"f:c":{}},"f:status":{"f:phase":{}}})");
  EXPECT_EQ(a.Intersection(b).ToJson(), R"({"f:spec":{"f:b":{}}})");
  EXPECT_EQ(a.Difference(b).ToJson(), R"({"f:spec":{"f:a":{}},"f:status":{"f:phase":{}}})");
  // Difference removes exact paths only; RecursiveDifference drops what is below a member.
  FieldSet status = set(R"({"f:status":{}})");
  EXPECT_EQ(a.Difference(status).ToJson(), a.ToJson());
  EXPECT_EQ(a.RecursiveDifference(status).ToJson(), R"({"f:spec":{"f:a":{},"f:b":{}}})");
  EXPECT_TRUE(a.Has(Path{PathElement::Field("spec"), PathElement::Field("a")}));
  EXPECT_FALSE(a.Has(Path{PathElement::Field("spec")}));
  EXPECT_EQ(a.Size(), 3u);
  EXPECT_TRUE(FieldSet().Empty());
}

}  // namespace
}  // namespace kt::api
