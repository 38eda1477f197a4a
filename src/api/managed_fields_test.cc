#include "api/managed_fields.h"

#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "api/codec.h"
#include "api/schema.h"

namespace kt::api {
namespace {

rapidjson::Document Parse(std::string_view text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  EXPECT_FALSE(d.HasParseError()) << text;
  return d;
}

std::string Canon(std::string_view text) { return EncodeJson(Parse(text)); }

FieldManagerScope PodScope(std::string_view time = "2025-01-01T00:00:00Z",
                           std::string_view subresource = "") {
  return FieldManagerScope{ServedSchema().FindKind("", "v1", "Pod"), "v1", subresource,
                           &ResetFields("", "Pod", subresource), time};
}
FieldManagerScope NodeScope(std::string_view time = "2025-01-01T00:00:00Z") {
  return FieldManagerScope{ServedSchema().FindKind("", "v1", "Node"), "v1", "",
                           &ResetFields("", "Node", ""), time};
}

const ManagedFieldsEntry* Find(const std::vector<ManagedFieldsEntry>& entries,
                               std::string_view manager) {
  for (const auto& e : entries) {
    if (e.manager == manager) return &e;
  }
  return nullptr;
}

std::string FieldsOfManager(const std::vector<ManagedFieldsEntry>& entries,
                            std::string_view manager) {
  const ManagedFieldsEntry* e = Find(entries, manager);
  return e ? e->fields.ToJson() : "<none>";
}

// A pod as `kubectl run nginx --image=nginx` sends it, after the decoder's defaulting (the
// field manager runs on the defaulted object, before PrepareForCreate sets status).
constexpr const char* kKubectlRunPod = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "nginx", "namespace": "default", "labels": {"run": "nginx"}},
  "spec": {
    "containers": [{"name": "nginx", "image": "nginx", "resources": {},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File", "imagePullPolicy": "Always"}],
    "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
    "securityContext": {}, "schedulerName": "default-scheduler", "enableServiceLinks": true},
  "status": {}})";

TEST(ManagedFieldsTest, CreateRecordsTheCreatorsFieldsAsUpstream) {
  // The kubectl-run entry kube-apiserver writes (same shape as the kruise-manager entry in
  // fieldpath_test.cc): labels map with ".", containers keyed by name with ".", no "." on
  // containers (a required field of the zero PodSpec), name/namespace stripped
  // (stripmeta.go), status reset (pod strategy GetResetFields).
  rapidjson::Document pod = Parse(kKubectlRunPod);
  std::vector<ManagedFieldsEntry> entries;
  UpdateManagedFields(nullptr, pod, "kubectl-run", PodScope(), &entries);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].operation, "Update");
  EXPECT_EQ(entries[0].api_version, "v1");
  EXPECT_EQ(entries[0].time, "2025-01-01T00:00:00Z");
  EXPECT_EQ(
      entries[0].fields.ToJson(),
      R"({"f:metadata":{"f:labels":{".":{},"f:run":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}})");

  // Encoded as metadata.managedFields upstream writes it (metav1 member order).
  rapidjson::Document out;
  rapidjson::Value list;
  EncodeManagedFields(entries, &list, out.GetAllocator());
  const std::string prefix =
      R"([{"manager":"kubectl-run","operation":"Update","apiVersion":"v1","time":"2025-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata")";
  EXPECT_EQ(EncodeJson(list).substr(0, prefix.size()), prefix);
}

constexpr const char* kAppliedPod = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web", "tier": "fe"}},
  "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}})";

TEST(ManagedFieldsTest, ApplyCreates) {
  // SMD merge/update.go Apply; typed/tofieldset.go: the applied struct field `labels` has no
  // "." (only the apply configuration's leaves, map entries and list items are owned).
  std::vector<ApplyConflict> conflicts;
  Result<ApplyResult> r =
      Apply(nullptr, Parse(kAppliedPod), "kubectl", false, PodScope(), {}, &conflicts);
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_EQ(r->entries.size(), 1u);
  EXPECT_EQ(r->entries[0].operation, "Apply");
  EXPECT_EQ(
      r->entries[0].fields.ToJson(),
      R"({"f:metadata":{"f:labels":{"f:app":{},"f:tier":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{}}}}})");
  const rapidjson::Value& mf = r->object["metadata"]["managedFields"];
  ASSERT_TRUE(mf.IsArray());
  EXPECT_EQ(EncodeJson(mf[0]["fieldsV1"]), r->entries[0].fields.ToJson());
  EXPECT_FALSE(mf[0].HasMember("subresource"));
  EXPECT_EQ(std::string(r->object["spec"]["containers"][0]["image"].GetString()), "nginx:1.27");
}

// Applies `applied` by `manager` onto the result of the previous step.
struct Step {
  const char* manager;
  const char* applied;  // apply configuration (or, with update, the whole new object)
  bool force = false;
  bool update = false;  // a non-apply write (UpdateObjectManagedFields)
};

struct Outcome {
  rapidjson::Document object;
  std::vector<ManagedFieldsEntry> entries;
  std::string error;
  std::vector<ApplyConflict> conflicts;
};

Outcome RunSteps(
    const std::vector<Step>& steps,
    FieldManagerScope (*scope)(std::string_view) = [](std::string_view t) { return PodScope(t); }) {
  Outcome o;
  bool have = false;
  int second = 0;
  for (const auto& s : steps) {
    char time[32];
    std::snprintf(time, sizeof time, "2025-01-01T00:00:%02dZ", second);
    ++second;
    if (s.update) {
      rapidjson::Document next = Parse(s.applied);
      UpdateObjectManagedFields(have ? &o.object : nullptr, &next, s.manager, scope(time));
      o.object.Swap(next);
      Result<std::vector<ManagedFieldsEntry>> e =
          o.object["metadata"].HasMember("managedFields")
              ? DecodeManagedFields(o.object["metadata"]["managedFields"])
              : Result<std::vector<ManagedFieldsEntry>>();
      o.entries = *e;
      have = true;
      continue;
    }
    Result<ApplyResult> r = Apply(have ? &o.object : nullptr, Parse(s.applied), s.manager, s.force,
                                  scope(time), o.entries, &o.conflicts);
    if (!r) {
      o.error = r.error().message();
      EXPECT_EQ(r.error().code(), StatusCode::kConflict) << o.error;
      return o;
    }
    o.object.Swap(r->object);
    o.entries = std::move(r->entries);
    have = true;
  }
  return o;
}

std::string Labels(const Outcome& o) {
  if (!o.object.IsObject() || !o.object["metadata"].HasMember("labels")) return "<none>";
  return EncodeJson(o.object["metadata"]["labels"]);
}

constexpr const char* kPodAB = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
  "labels":{"a":"1","b":"1"}},"spec":{"containers":[{"name":"c","image":"i"}]}})";
constexpr const char* kPodA = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
  "labels":{"a":"1"}},"spec":{"containers":[{"name":"c","image":"i"}]}})";
constexpr const char* kPodB2 = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
  "labels":{"b":"2"}}})";
constexpr const char* kPodB1 = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
  "labels":{"b":"1"}}})";
constexpr const char* kPodA2 = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
  "labels":{"a":"2"}}})";

TEST(ManagedFieldsTest, ApplySemantics) {
  struct Case {
    const char* name;
    const char* source;
    std::vector<Step> steps;
    const char* labels;
    const char* manager;  // whose fields to check
    const char* fields;
  };
  const Case cases[] = {
      {"a field the manager applied before and omits now is removed",
       "SMD merge/update.go prune; test/integration/apiserver/apply TestApplyRemovesEmptyManagers",
       {{"m", kPodAB}, {"m", kPodA}},
       R"({"a":"1"})",
       "m",
       R"({"f:metadata":{"f:labels":{"f:a":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}}}})"},
      {"a field another applier shares is kept when one omits it",
       "SMD merge/update.go addBackOwnedItems; merge/multiple_appliers_test.go",
       {{"m", kPodAB}, {"other", kPodB1}, {"m", kPodA}},
       R"({"a":"1","b":"1"})",
       "other",
       R"({"f:metadata":{"f:labels":{"f:b":{}}}})"},
      {"granular map: two appliers own one key each",
       "schemaconv: maps are granular by default; SMD typed/merge.go visitMapItems",
       {{"m", kPodA}, {"other", R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
          "labels":{"z":"9"}}})"}},
       R"({"a":"1","z":"9"})",
       "other",
       R"({"f:metadata":{"f:labels":{"f:z":{}}}})"},
      {"force takes the field from its owner",
       "SMD merge/update.go update (force): the conflict set leaves the other manager",
       {{"m", kPodAB}, {"other", kPodB2, true}},
       R"({"a":"1","b":"2"})",
       "m",
       R"({"f:metadata":{"f:labels":{"f:a":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}}}})"},
      {"an update that changes a field moves it to the updater",
       "SMD merge/update.go Update; managedfieldsupdater.go",
       {{"m", kPodAB},
        {"kubectl-edit",
         R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"1","b":"7"}},
             "spec":{"containers":[{"name":"c","image":"i"}]}})",
         false, true}},
       R"({"a":"1","b":"7"})",
       "kubectl-edit",
       R"({"f:metadata":{"f:labels":{"f:b":{}}}})"},
      {"an update that removes the only field of an entry drops the entry",
       "SMD merge/update.go update: removed fields leave every manager; empty ones are deleted",
       {{"other", kPodB1},
        {"m", kPodA},
        {"kubectl-edit",
         R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"1"}},
             "spec":{"containers":[{"name":"c","image":"i"}]}})",
         false, true}},
       R"({"a":"1"})",
       "other",
       "<none>"},
  };
  for (const auto& c : cases) {
    Outcome o = RunSteps(c.steps);
    ASSERT_EQ(o.error, "") << c.name;
    EXPECT_EQ(Labels(o), c.labels) << c.name << " (" << c.source << ")";
    EXPECT_EQ(FieldsOfManager(o.entries, c.manager), c.fields) << c.name << " (" << c.source << ")";
  }
}

TEST(ManagedFieldsTest, ConflictsAndTheirMessages) {
  struct Case {
    const char* name;
    const char* source;
    std::vector<Step> steps;
    FieldManagerScope (*scope)(std::string_view);
    const char* message;
    size_t conflicts;
  };
  auto pod = [](std::string_view t) { return PodScope(t); };
  auto node = [](std::string_view t) { return NodeScope(t); };
  constexpr const char* kTaintedNode = R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},
      "spec":{"taints":[{"key":"k","value":"v","effect":"NoSchedule"}]}})";
  const Case cases[] = {
      {"another applier owns the field",
       "conflict.go getConflictMessage (1 conflict); Apply identifiers print no apiVersion",
       {{"m", kPodAB}, {"other", kPodB2}},
       pod,
       R"(Apply failed with 1 conflict: conflict with "m": .metadata.labels.b)",
       1},
      {"an Update manager owns the field",
       "conflict.go printManager: `using v1` for Update entries",
       {{"kubectl-client-side-apply", kPodAB, false, true}, {"kubectl", kPodA2}},
       pod,
       R"(Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .metadata.labels.a)",
       1},
      {"kubectl taint owns the atomic taints list",
       "taints are x-kubernetes-list-type atomic: the list is one field",
       {{"kubectl-taint", kTaintedNode, false, true},
        {"kubectl", R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},
            "spec":{"taints":[{"key":"other","effect":"NoExecute"}]}})"}},
       node,
       R"(Apply failed with 1 conflict: conflict with "kubectl-taint" using v1: .spec.taints)",
       1},
      {"several conflicts, several managers: plural, managers sorted, one path a line",
       "conflict.go getConflictMessage (n conflicts)",
       {{"zz", kPodAB},
        {"aa", R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"c":"1"}},
             "spec":{"containers":[{"name":"c","image":"i"}]}})"},
        {"kubectl",
         R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"2","b":"2",
             "c":"2"}},"spec":{"containers":[{"name":"c","image":"j"}]}})"}},
       pod,
       "Apply failed with 5 conflicts: conflicts with \"aa\":\n- .metadata.labels.c\n"
       "- .spec.containers[name=\"c\"].image\nconflicts with \"zz\":\n- .metadata.labels.a\n"
       "- .metadata.labels.b\n- .spec.containers[name=\"c\"].image",
       5},
  };
  for (const auto& c : cases) {
    Outcome o = RunSteps(c.steps, c.scope);
    EXPECT_EQ(o.error, c.message) << c.name << " (" << c.source << ")";
    EXPECT_EQ(o.conflicts.size(), c.conflicts) << c.name;
  }
  Outcome o = RunSteps({{"kubectl-client-side-apply", kPodAB, false, true}, {"kubectl", kPodA2}});
  ASSERT_EQ(o.conflicts.size(), 1u);
  EXPECT_EQ(o.conflicts[0].manager, "kubectl-client-side-apply");
  EXPECT_EQ(o.conflicts[0].operation, "Update");
  EXPECT_EQ(o.conflicts[0].path, ".metadata.labels.a");
  EXPECT_EQ(ConflictCauseMessage(o.conflicts[0]),
            R"(conflict with "kubectl-client-side-apply" using v1)");
}

TEST(ManagedFieldsTest, SameValueIsNoConflictAndIsShared) {
  // SMD merge/update.go update: only Modified ∪ Added fields conflict.
  Outcome o = RunSteps({{"m", kPodAB}, {"other", kPodB1}});
  ASSERT_EQ(o.error, "");
  EXPECT_EQ(
      FieldsOfManager(o.entries, "m"),
      R"({"f:metadata":{"f:labels":{"f:a":{},"f:b":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}}}})");
  EXPECT_EQ(FieldsOfManager(o.entries, "other"), R"({"f:metadata":{"f:labels":{"f:b":{}}}})");
}

TEST(ManagedFieldsTest, TolerationsAreAtomic) {
  // Toleration lists are x-kubernetes-list-type atomic upstream: applying one toleration
  // replaces the list, and the applier owns `f:tolerations` whole.
  constexpr const char* kTwo = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"containers":[{"name":"c","image":"i"}],"tolerations":[
        {"key":"a","operator":"Exists"},{"key":"b","operator":"Exists"}]}})";
  constexpr const char* kOne = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"containers":[{"name":"c","image":"i"}],"tolerations":[
        {"key":"z","operator":"Exists"}]}})";
  Outcome o = RunSteps({{"m", kTwo}, {"m", kOne}});
  ASSERT_EQ(o.error, "");
  EXPECT_EQ(EncodeJson(o.object["spec"]["tolerations"]),
            Canon(R"([{"key":"z","operator":"Exists"}])"));
  EXPECT_EQ(
      FieldsOfManager(o.entries, "m"),
      R"({"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}},"f:tolerations":{}}})");
}

TEST(ManagedFieldsTest, ContainersMergeByName) {
  // containers: x-kubernetes-list-type map keyed by name; SMD typed/merge.go visitListItems
  // keeps the live-only item where it was and appends the applied one.
  constexpr const char* kLive = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"containers":[{"name":"app","image":"app:1"}]}})";
  constexpr const char* kSidecar = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"containers":[{"name":"sidecar","image":"envoy"}]}})";
  Outcome o = RunSteps({{"kubectl-create", kLive, false, true}, {"mesh", kSidecar}});
  ASSERT_EQ(o.error, "");
  EXPECT_EQ(EncodeJson(o.object["spec"]["containers"]),
            Canon(R"([{"name":"app","image":"app:1"},{"name":"sidecar","image":"envoy"}])"));
  EXPECT_EQ(
      FieldsOfManager(o.entries, "mesh"),
      R"({"f:spec":{"f:containers":{"k:{\"name\":\"sidecar\"}":{".":{},"f:image":{},"f:name":{}}}}})");
  // The creator still owns its container.
  EXPECT_NE(FieldsOfManager(o.entries, "kubectl-create").find(R"(k:{\"name\":\"app\"})"),
            std::string::npos);
}

TEST(ManagedFieldsTest, ApplyErrors) {
  struct Case {
    const char* name;
    const char* source;
    const char* applied;
    const char* message;
  };
  const Case cases[] = {
      {"a list item without its key", "SMD typed/helpers.go keyedAssociativeListItemToPathElement",
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},
           "spec":{"containers":[{"image":"i"}]}})",
       "failed to create typed patch object (ns/p; /v1, Kind=Pod): .spec.containers: element 0: "
       "associative list with keys has an element that omits all key fields [\"name\"] (and "
       "doesn't have default values for any key fields)"},
      {"duplicate keys in the configuration", "SMD typed/validate.go (no AllowDuplicates)",
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},
           "spec":{"containers":[{"name":"a"},{"name":"a"}]}})",
       "failed to create typed patch object (ns/p; /v1, Kind=Pod): .spec.containers: duplicate "
       "entries for key [name=\"a\"]"},
      {"managedFields in the configuration", "structuredmerge.go Apply",
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","managedFields":[]}})",
       "metadata.managedFields must be nil"},
      {"another kind", "versioncheck.go",
       R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"p"}})",
       "invalid object type: /v1, Kind=Node"},
  };
  for (const auto& c : cases) {
    std::vector<ApplyConflict> conflicts;
    Result<ApplyResult> r =
        Apply(nullptr, Parse(c.applied), "m", false, PodScope(), {}, &conflicts);
    ASSERT_FALSE(r) << c.name;
    EXPECT_EQ(r.error().code(), StatusCode::kBadRequest) << c.name;
    EXPECT_EQ(r.error().message(), c.message) << c.name << " (" << c.source << ")";
  }
}

TEST(ManagedFieldsTest, StatusIsResetOnTheMainResourceAndOwnedOnStatus) {
  // pod strategy GetResetFields: "status" on pods, "spec" (and two metadata fields) on
  // pods/status; the status subresource's entries carry `subresource: status`.
  std::vector<ApplyConflict> conflicts;
  Result<ApplyResult> r = Apply(nullptr, Parse(R"({"apiVersion":"v1","kind":"Pod",
      "metadata":{"name":"p"},"spec":{"nodeName":"n"},"status":{"phase":"Running"}})"),
                                "m", false, PodScope(), {}, &conflicts);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->entries[0].fields.ToJson(), R"({"f:spec":{"f:nodeName":{}}})");

  rapidjson::Document live = Parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"nodeName":"n"},"status":{"phase":"Pending"}})");
  rapidjson::Document next = Parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"nodeName":"other"},"status":{"phase":"Running","podIP":"10.0.0.1"}})");
  std::vector<ManagedFieldsEntry> entries = r->entries;
  UpdateManagedFields(&live, next, "kubelet", PodScope("2025-01-01T00:01:00Z", "status"), &entries);
  const ManagedFieldsEntry* kubelet = Find(entries, "kubelet");
  ASSERT_NE(kubelet, nullptr);
  EXPECT_EQ(kubelet->subresource, "status");
  EXPECT_EQ(kubelet->fields.ToJson(), R"({"f:status":{"f:phase":{},"f:podIP":{}}})");
  EXPECT_EQ(FieldsOfManager(entries, "m"), R"({"f:spec":{"f:nodeName":{}}})");
}

TEST(ManagedFieldsTest, NoOpApplyKeepsTheTimeAndAnUntrackedObjectGetsBeforeFirstApply) {
  // managedfieldsupdater.go Apply: time only when the object changed.
  Outcome o = RunSteps({{"m", kPodA}, {"m", kPodA}});
  ASSERT_EQ(o.error, "");
  EXPECT_EQ(Find(o.entries, "m")->time, "2025-01-01T00:00:00Z");
  // skipnonapplied.go: the fields of an object without managedFields go to
  // before-first-apply (all of them: an Update from the zero object), so what the applier does
  // not apply (label b) stays.
  rapidjson::Document live = Parse(kPodAB);
  std::vector<ApplyConflict> conflicts;
  Result<ApplyResult> r = Apply(&live, Parse(kPodA), "m", false, PodScope(), {}, &conflicts);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(
      FieldsOfManager(r->entries, "before-first-apply"),
      R"({"f:metadata":{"f:labels":{".":{},"f:a":{},"f:b":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}}}})");
  EXPECT_EQ(EncodeJson(r->object["metadata"]["labels"]), Canon(R"({"a":"1","b":"1"})"));
}

TEST(ManagedFieldsTest, UpdateManagersAreCappedAtTen) {
  // capmanagers.go: 11 Update managers → the two oldest merge into "ancient-changes".
  std::vector<Step> steps;
  std::vector<std::string> bodies;
  for (int i = 0; i < 11; ++i) {
    std::string labels;
    for (int j = 0; j <= i; ++j) {
      if (j) labels += ",";
      labels += "\"l";
      labels += std::to_string(j);
      labels += "\":\"v\"";
    }
    std::string body = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{)";
    body.append(labels).append("}}}");
    bodies.push_back(body);
  }
  std::vector<std::string> names;
  for (int i = 0; i < 11; ++i) names.push_back(std::string(1, 'm').append(std::to_string(i)));
  for (int i = 0; i < 11; ++i) steps.push_back({names[i].c_str(), bodies[i].c_str(), false, true});
  Outcome o = RunSteps(steps);
  ASSERT_EQ(o.entries.size(), 10u);
  EXPECT_EQ(Find(o.entries, "m0"), nullptr);
  EXPECT_EQ(Find(o.entries, "m1"), nullptr);
  const ManagedFieldsEntry* ancient = Find(o.entries, "ancient-changes");
  ASSERT_NE(ancient, nullptr);
  EXPECT_EQ(ancient->time, "2025-01-01T00:00:01Z");
  EXPECT_EQ(ancient->fields.ToJson(),
            R"({"f:metadata":{"f:labels":{".":{},"f:l0":{},"f:l1":{}}}})");
  EXPECT_NE(Find(o.entries, "m10"), nullptr);
}

TEST(ManagedFieldsTest, MalformedManagedFields) {
  struct Case {
    const char* name;
    const char* json;
    const char* error;
  };
  // managedfields.go DecodeManagedFields.
  const Case cases[] = {
      {"bad operation",
       R"([{"manager":"m","operation":"Patch","apiVersion":"v1","fieldsType":"FieldsV1"}])",
       "operation must be `Apply` or `Update`"},
      {"no apiVersion", R"([{"manager":"m","operation":"Update","fieldsType":"FieldsV1"}])",
       "apiVersion must not be empty"},
      {"no fieldsType", R"([{"manager":"m","operation":"Update","apiVersion":"v1"}])",
       "missing fieldsType in managed fields entry 0"},
      {"other fieldsType",
       R"([{"manager":"m","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1"},
           {"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV2"}])",
       "invalid fieldsType \"FieldsV2\" in managed fields entry 1"},
      {"bad fieldsV1",
       R"([{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1",
            "fieldsV1":{"f:a":{"zz":{}}}}])",
       "error decoding versioned set from {\"manager\":\"m\",\"operation\":\"Update\","
       "\"apiVersion\":\"v1\"}: error decoding set: parsing key as path element: missing colon: "
       "zz"},
      {"not a list", R"({"manager":"m"})", "metadata.managedFields: expected array"},
  };
  for (const auto& c : cases) {
    Result<std::vector<ManagedFieldsEntry>> r = DecodeManagedFields(Parse(c.json));
    ASSERT_FALSE(r) << c.name;
    EXPECT_EQ(r.error().message(), c.error) << c.name;
  }
  // meta/v1/validation ValidateManagedFields.
  EXPECT_EQ(ValidateManagedFields(Parse(R"([{"operation":"Patch","fieldsType":"FieldsV2"}])")),
            (std::vector<std::string>{
                "metadata.managedFields.operation: Invalid value: \"Patch\": must be `Apply` or "
                "`Update`",
                "metadata.managedFields.fieldsType: Invalid value: \"FieldsV2\": must be "
                "`FieldsV1`"}));
  // The later of two entries with one identifier wins (a Go map upstream).
  Result<std::vector<ManagedFieldsEntry>> dup = DecodeManagedFields(Parse(R"([
      {"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:a":{}}},
      {"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:b":{}}}])"));
  ASSERT_TRUE(dup);
  ASSERT_EQ(dup->size(), 1u);
  EXPECT_EQ((*dup)[0].fields.ToJson(), R"({"f:b":{}})");
}

TEST(ManagedFieldsTest, EntriesAreWrittenInUpstreamOrder) {
  // managedfields.go sortEncodedManagedFields: operation, time (seconds), manager, apiVersion,
  // subresource.
  std::vector<ManagedFieldsEntry> entries(4);
  entries[0] = {"b", "Update", "v1", "2025-01-01T00:00:05Z", "", {}};
  entries[1] = {"a", "Update", "v1", "2025-01-01T00:00:05Z", "status", {}};
  entries[2] = {"z", "Apply", "v1", "2025-01-01T00:00:09Z", "", {}};
  entries[3] = {"c", "Update", "v1", "2025-01-01T00:00:01Z", "", {}};
  rapidjson::Document d;
  rapidjson::Value list;
  EncodeManagedFields(entries, &list, d.GetAllocator());
  std::string order;
  for (const auto& e : list.GetArray()) order += e["manager"].GetString();
  EXPECT_EQ(order, "zcab");
  EXPECT_EQ(std::string(list[2]["subresource"].GetString()), "status");
  EXPECT_EQ(entries[1].Identifier(),
            R"({"manager":"a","operation":"Update","apiVersion":"v1","subresource":"status"})");
  EXPECT_EQ(entries[2].Identifier(), R"({"manager":"z","operation":"Apply"})");
}

TEST(ManagedFieldsTest, FieldsOfUsesTheSchema) {
  // typed/tofieldset.go on a node: taints atomic (one path), labels granular (entries, and no
  // "." on a struct field with content), finalizers a set (patch strategy merge without a
  // key), podCIDRs a set; a set's items are members, the list itself is not (only Compare adds
  // "." for a list that appears, which is why Update entries have it).
  rapidjson::Document node = Parse(R"({"metadata":{"labels":{"a":"1"},"finalizers":["x"]},
      "spec":{"taints":[{"key":"k","effect":"NoSchedule"}],"podCIDRs":["10.0.0.0/24"]}})");
  EXPECT_EQ(
      FieldsOf(node, ServedSchema().FindKind("", "v1", "Node")).ToJson(),
      R"({"f:metadata":{"f:finalizers":{"v:\"x\"":{}},"f:labels":{"f:a":{}}},"f:spec":{"f:podCIDRs":{"v:\"10.0.0.0/24\"":{}},"f:taints":{}}})");
}

}  // namespace
}  // namespace kt::api
