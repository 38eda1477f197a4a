#include "api/schema.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "api/codec.h"

namespace kt::api {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One body, what upstream reports for it, and what is left to store.
struct PruneCase {
  const char* name;
  const char* source;  // upstream's rule
  const char* api_version;
  const char* kind;
  const char* body;
  std::vector<std::string> problems;
  const char* pruned;  // nullptr: `body` unchanged
};

void RunPruneCase(const Schema& schema, const PruneCase& c) {
  SCOPED_TRACE(std::string(c.name) + " (" + c.source + ")");
  TypeRef type = schema.FindApiVersionKind(c.api_version, c.kind);
  ASSERT_NE(type, nullptr) << c.api_version << " " << c.kind;
  Result<rapidjson::Document> doc = ParseJson(c.body);
  ASSERT_TRUE(doc.has_value()) << c.body;
  FieldProblems problems;
  PruneUnknownFields(*doc, type, doc->GetAllocator(), &problems);
  EXPECT_EQ(problems.messages, c.problems);
  Result<rapidjson::Document> expected = ParseJson(c.pruned != nullptr ? c.pruned : c.body);
  ASSERT_TRUE(expected.has_value());
  EXPECT_EQ(EncodeJson(*doc), EncodeJson(*expected));

  // fieldValidation=Ignore: the same object is stored, nothing is reported.
  Result<rapidjson::Document> ignored = ParseJson(c.body);
  PruneUnknownFields(*ignored, type, ignored->GetAllocator(), nullptr);
  EXPECT_EQ(EncodeJson(*ignored), EncodeJson(*expected));
}

// Sources, abbreviated:
//   decode.go  = sigs.k8s.io/json internal/golang/encoding/json/decode.go
//   patch.go   = sigs.k8s.io/json internal/golang/encoding/json/kubernetes_patch.go
//   json.go    = k8s.io/apimachinery/pkg/runtime/serializer/json/json.go
const PruneCase kUnknownFieldCases[] = {
    {"unknown field at the root",
     "decode.go object: unknown key, value skipped",
     "v1",
     "Pod",
     R"({"apiVersion":"v1","kind":"Pod","spec2":{"a":1},"metadata":{"name":"p"}})",
     {R"(unknown field "spec2")"},
     R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}})"},
    {"apiVersion and kind are fields of every kind",
     "TypeMeta inline in every type",
     "v1",
     "Pod",
     R"({"apiVersion":"v1","kind":"Pod"})",
     {},
     nullptr},
    {"unknown field in metadata",
     "ObjectMeta is a typed struct",
     "v1",
     "Pod",
     R"({"metadata":{"name":"p","labelz":{"a":"b"}}})",
     {R"(unknown field "metadata.labelz")"},
     R"({"metadata":{"name":"p"}})"},
    {"names are case-sensitive",
     "json.go unmarshal: UnmarshalStrict sets CaseSensitive",
     "v1",
     "Pod",
     R"({"Metadata":{"name":"p"},"metadata":{"Name":"q"}})",
     {R"(unknown field "Metadata")", R"(unknown field "metadata.Name")"},
     R"({"metadata":{}})"},
    {"unknown field in spec",
     "patch.go newFieldError: path + \".\" + key",
     "v1",
     "Pod",
     R"({"spec":{"nodeName":"n","restartPolicyy":"Always"}})",
     {R"(unknown field "spec.restartPolicyy")"},
     R"({"spec":{"nodeName":"n"}})"},
    {"unknown field in a list item",
     "patch.go appendStrictFieldStackIndex: [i]",
     "v1",
     "Pod",
     R"({"spec":{"tolerations":[{"key":"k","operator":"Exists","tolerationSecond":5}]}})",
     {R"(unknown field "spec.tolerations[0].tolerationSecond")"},
     R"({"spec":{"tolerations":[{"key":"k","operator":"Exists"}]}})"},
    {"unknown field in nested lists",
     "decode.go array: index per level",
     "v1",
     "Pod",
     R"({"spec":{"containers":[{"name":"a","ports":[{"containerPort":80},{"containerPort":81,"foo":1}]}]}})",
     {R"(unknown field "spec.containers[0].ports[1].foo")"},
     R"({"spec":{"containers":[{"name":"a","ports":[{"containerPort":80},{"containerPort":81}]}]}})"},
    {"unknown fields in status",
     "status is decoded like the rest before the strategy resets it",
     "v1",
     "Pod",
     R"({"status":{"phase":"Running","foo":1,"conditions":[{"type":"Ready","bogus":true}]}})",
     {R"(unknown field "status.foo")", R"(unknown field "status.conditions[0].bogus")"},
     R"({"status":{"phase":"Running","conditions":[{"type":"Ready"}]}})"},
    {"several, all of them, in document order",
     "patch.go saveStrictError: decoding goes on",
     "v1",
     "Pod",
     R"({"a":1,"metadata":{"b":2},"spec":{"containers":[{"c":3,"name":"x"}]},"d":4})",
     {R"(unknown field "a")", R"(unknown field "metadata.b")",
      R"(unknown field "spec.containers[0].c")", R"(unknown field "d")"},
     R"({"metadata":{},"spec":{"containers":[{"name":"x"}]}})"},
    {"nothing inside an unknown member is reported",
     "decode.go object: d.value(reflect.Value{})",
     "v1",
     "Pod",
     R"({"spec":{"x":{"y":{"z":1}}}})",
     {R"(unknown field "spec.x")"},
     R"({"spec":{}})"},
    {"an unknown field twice is one message",
     "patch.go saveStrictError: seenStrictErrors",
     "v1",
     "Pod",
     R"({"foo":1,"kind":"Pod","foo":2})",
     {R"(unknown field "foo")"},
     R"({"kind":"Pod"})"},
    {"a map takes any key",
     "decode.go object: map keys are not fields",
     "v1",
     "Pod",
     R"({"metadata":{"labels":{"Any Key/..":"v","x":"y"},"annotations":{"a.b/c":"{}"}},"spec":{"nodeSelector":{"anything":"goes"}}})",
     {},
     nullptr},
    {"a quantity is a string or a number",
     "resource.Quantity UnmarshalJSON",
     "v1",
     "Pod",
     R"({"spec":{"containers":[{"name":"a","resources":{"requests":{"cpu":"100m","memory":1073741824},"limits":{"cpu":2}}}]}})",
     {},
     nullptr},
    {"an int-or-string is a number or a string",
     "intstr.IntOrString UnmarshalJSON",
     "v1",
     "Pod",
     R"({"spec":{"containers":[{"name":"a","livenessProbe":{"httpGet":{"port":8080}},"readinessProbe":{"httpGet":{"port":"http"}}}]}})",
     {},
     nullptr},
    {"a time is a string",
     "metav1.Time UnmarshalJSON",
     "v1",
     "Pod",
     R"({"metadata":{"creationTimestamp":"2025-01-02T03:04:05Z","deletionTimestamp":null}})",
     {},
     nullptr},
    {"fieldsV1 is taken whole, duplicates and all",
     "metav1.FieldsV1 UnmarshalJSON copies bytes",
     "v1",
     "Pod",
     R"({"metadata":{"managedFields":[{"manager":"kubectl","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:x":{},"f:x":{}}}]}})",
     {},
     nullptr},
    {"a value of the wrong JSON type is the typed decoder's to report",
     "decode.go: UnmarshalTypeError wins over strict errors",
     "v1",
     "Pod",
     R"({"spec":"oops","metadata":{"labels":"x","ownerReferences":{"a":1}}})",
     {},
     nullptr},
    // Every served kind and request body, by its GVK.
    {"Node",
     "core/v1 Node",
     "v1",
     "Node",
     R"({"apiVersion":"v1","kind":"Node","spec":{"taints":[{"key":"k","effect":"NoExecute","tolerationSeconds":5}]}})",
     {R"(unknown field "spec.taints[0].tolerationSeconds")"},
     R"({"apiVersion":"v1","kind":"Node","spec":{"taints":[{"key":"k","effect":"NoExecute"}]}})"},
    {"Namespace",
     "core/v1 Namespace",
     "v1",
     "Namespace",
     R"({"spec":{"finalizers":["kubernetes"],"foo":1}})",
     {R"(unknown field "spec.foo")"},
     R"({"spec":{"finalizers":["kubernetes"]}})"},
    {"Event",
     "core/v1 Event",
     "v1",
     "Event",
     R"({"involvedObject":{"kind":"Pod","nme":"p"},"reason":"X"})",
     {R"(unknown field "involvedObject.nme")"},
     R"({"involvedObject":{"kind":"Pod"},"reason":"X"})"},
    {"Lease",
     "coordination.k8s.io/v1 Lease",
     "coordination.k8s.io/v1",
     "Lease",
     R"({"spec":{"holderIdentity":"a","leaseDurationSecond":15}})",
     {R"(unknown field "spec.leaseDurationSecond")"},
     R"({"spec":{"holderIdentity":"a"}})"},
    {"PriorityClass",
     "scheduling.k8s.io/v1 PriorityClass",
     "scheduling.k8s.io/v1",
     "PriorityClass",
     R"({"value":1000,"preemptPolicy":"Never"})",
     {R"(unknown field "preemptPolicy")"},
     R"({"value":1000})"},
    {"DaemonSet",
     "apps/v1 DaemonSet",
     "apps/v1",
     "DaemonSet",
     R"({"spec":{"template":{"spec":{"containers":[{"name":"c","imagePullPolice":"Always"}]}}}})",
     {R"(unknown field "spec.template.spec.containers[0].imagePullPolice")"},
     R"({"spec":{"template":{"spec":{"containers":[{"name":"c"}]}}}})"},
    {"Binding",
     "core/v1 Binding, pods/binding",
     "v1",
     "Binding",
     R"({"target":{"kind":"Node","name":"n","nodeName":"x"}})",
     {R"(unknown field "target.nodeName")"},
     R"({"target":{"kind":"Node","name":"n"}})"},
    {"Eviction",
     "policy/v1 Eviction, pods/eviction",
     "policy/v1",
     "Eviction",
     R"({"deleteOptions":{"gracePeriod":0}})",
     {R"(unknown field "deleteOptions.gracePeriod")"},
     R"({"deleteOptions":{}})"},
    {"DeleteOptions",
     "meta/v1 DeleteOptions",
     "v1",
     "DeleteOptions",
     R"({"propagationPolicy":"Foreground","preconditions":{"uuid":"x"}})",
     {R"(unknown field "preconditions.uuid")"},
     R"({"propagationPolicy":"Foreground","preconditions":{}})"},
    {"PodList",
     "core/v1 PodList",
     "v1",
     "PodList",
     R"({"items":[{"spec":{"foo":1}}]})",
     {R"(unknown field "items[0].spec.foo")"},
     R"({"items":[{"spec":{}}]})"},
};

TEST(PruneUnknownFieldsTest, UnknownFields) {
  for (const PruneCase& c : kUnknownFieldCases) RunPruneCase(ServedSchema(), c);
}

// A field given twice: reported where the second key is read, decoded again into the same Go
// value (decode.go object: checkDuplicateField, then d.value(subv) into the existing field).
const PruneCase kDuplicateFieldCases[] = {
    {"at the root, the later value wins",
     "decode.go literalStore replaces a string",
     "v1",
     "Pod",
     R"({"kind":"Pod","apiVersion":"v1","kind":"Pod2"})",
     {R"(duplicate field "kind")"},
     R"({"kind":"Pod2","apiVersion":"v1"})"},
    {"in metadata",
     "patch.go newFieldError(duplicateStrictErrType, f.name)",
     "v1",
     "Pod",
     R"({"metadata":{"name":"a","name":"b"}})",
     {R"(duplicate field "metadata.name")"},
     R"({"metadata":{"name":"b"}})"},
    {"three times is one message, the last wins",
     "patch.go saveStrictError dedup",
     "v1",
     "Pod",
     R"({"metadata":{"name":"a","name":"b","name":"c"}})",
     {R"(duplicate field "metadata.name")"},
     R"({"metadata":{"name":"c"}})"},
    {"a map key, the later value wins",
     "decode.go object: map element zeroed, SetMapIndex",
     "v1",
     "Pod",
     R"({"metadata":{"labels":{"app":"a","tier":"t","app":"b"}}})",
     {R"(duplicate field "metadata.labels.app")"},
     R"({"metadata":{"labels":{"app":"b","tier":"t"}}})"},
    {"a map key of quantities",
     "decode.go object: map key in the path",
     "v1",
     "Pod",
     R"({"spec":{"overhead":{"cpu":"1","cpu":"2"}}})",
     {R"(duplicate field "spec.overhead.cpu")"},
     R"({"spec":{"overhead":{"cpu":"2"}}})"},
    {"in a list item",
     "decode.go array: [i] in the path",
     "v1",
     "Pod",
     R"({"spec":{"containers":[{"name":"a","image":"i","name":"b"}]}})",
     {R"(duplicate field "spec.containers[0].name")"},
     R"({"spec":{"containers":[{"name":"b","image":"i"}]}})"},
    {"a struct given twice is merged",
     "decode.go object: decodes into the existing struct",
     "v1",
     "Pod",
     R"({"metadata":{"name":"a","labels":{"x":"1"}},"metadata":{"namespace":"n","labels":{"y":"2"}}})",
     {R"(duplicate field "metadata")"},
     R"({"metadata":{"name":"a","labels":{"x":"1","y":"2"},"namespace":"n"}})"},
    {"a list given twice overwrites item by item and takes the later length",
     "decode.go array: decodes into existing elements, then SetLen",
     "v1",
     "Pod",
     R"({"spec":{"tolerations":[{"key":"a","value":"x"},{"key":"b"}],"tolerations":[{"key":"c"}]}})",
     {R"(duplicate field "spec.tolerations")"},
     R"({"spec":{"tolerations":[{"key":"c","value":"x"}]}})"},
    {"a longer list given twice",
     "decode.go array: grows the slice",
     "v1",
     "Pod",
     R"({"spec":{"tolerations":[{"key":"a"}],"tolerations":[{"value":"b"},{"key":"c"}]}})",
     {R"(duplicate field "spec.tolerations")"},
     R"({"spec":{"tolerations":[{"key":"a","value":"b"},{"key":"c"}]}})"},
    {"a list of strings given twice",
     "decode.go array",
     "v1",
     "Pod",
     R"({"spec":{"containers":[{"name":"a","args":["1","2"],"args":["3"]}]}})",
     {R"(duplicate field "spec.containers[0].args")"},
     R"({"spec":{"containers":[{"name":"a","args":["3"]}]}})"},
    {"a quantity given twice is replaced whole",
     "resource.Quantity UnmarshalJSON",
     "v1",
     "Pod",
     R"({"spec":{"volumes":[{"name":"v","emptyDir":{"sizeLimit":"1Gi","sizeLimit":2}}]}})",
     {R"(duplicate field "spec.volumes[0].emptyDir.sizeLimit")"},
     R"({"spec":{"volumes":[{"name":"v","emptyDir":{"sizeLimit":2}}]}})"},
    {"a map given twice gains keys",
     "decode.go object: decodes into the existing map",
     "v1",
     "Pod",
     R"({"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"1"},"limits":{"memory":"1Gi"}}}]}})",
     {R"(duplicate field "spec.containers[0].resources.limits")"},
     R"({"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"1","memory":"1Gi"}}}]}})"},
    {"unknown inside the first, duplicate at the second key, in that order",
     "decode.go object: the duplicate is recorded before its value is decoded",
     "v1",
     "Pod",
     R"({"spec":{"x":1},"spec":{"x":2,"nodeName":"n"}})",
     {R"(unknown field "spec.x")", R"(duplicate field "spec")"},
     R"({"spec":{"nodeName":"n"}})"},
};

TEST(PruneUnknownFieldsTest, DuplicateFields) {
  for (const PruneCase& c : kDuplicateFieldCases) RunPruneCase(ServedSchema(), c);
}

TEST(PruneUnknownFieldsTest, KeepsAtMostOneHundredProblems) {
  // patch.go saveStrictError: "prevent excessive numbers of accumulated errors" (>= 100).
  std::string body = R"({"kind":"Pod")";
  for (int i = 0; i < 150; ++i) body += ",\"f" + std::to_string(i) + "\":1";
  body += "}";
  Result<rapidjson::Document> doc = ParseJson(body);
  ASSERT_TRUE(doc.has_value());
  FieldProblems problems;
  PruneUnknownFields(*doc, ServedSchema().FindKind("", "v1", "Pod"), doc->GetAllocator(),
                     &problems);
  ASSERT_EQ(problems.messages.size(), 100u);
  EXPECT_EQ(problems.messages.front(), R"(unknown field "f0")");
  EXPECT_EQ(problems.messages.back(), R"(unknown field "f99")");
  EXPECT_EQ(EncodeJson(*doc), R"({"kind":"Pod"})");  // every one is dropped all the same
}

TEST(PruneUnknownFieldsTest, PathsAreGoQuoted) {
  // patch.go strictError.Error: strconv.Quote(path).
  Result<rapidjson::Document> doc = ParseJson(R"({"metadata":{"a\"b\\c\n":1}})");
  ASSERT_TRUE(doc.has_value());
  FieldProblems problems;
  PruneUnknownFields(*doc, ServedSchema().FindKind("", "v1", "Pod"), doc->GetAllocator(),
                     &problems);
  EXPECT_EQ(problems.messages, std::vector<std::string>{R"(unknown field "metadata.a\"b\\c\n")"});
}

// No served kind has a map of structs or x-kubernetes-preserve-unknown-fields; a small schema
// of its own has both.
constexpr char kWidgetSchema[] = R"({"definitions":{
  "test.Widget":{"type":"object",
    "x-kubernetes-group-version-kind":[{"group":"example.com","version":"v1","kind":"Widget"}],
    "properties":{
      "parts":{"type":"object","additionalProperties":{"$ref":"#/definitions/test.Part"}},
      "extra":{"$ref":"#/definitions/test.Free"}}},
  "test.Part":{"type":"object","properties":{"size":{"type":"integer"}}},
  "test.Free":{"type":"object","x-kubernetes-preserve-unknown-fields":true,
    "properties":{"known":{"type":"string"}}}}})";

const PruneCase kWidgetCases[] = {
    {"unknown field in a map value",
     "patch.go appendStrictFieldStackKey(map key)",
     "example.com/v1",
     "Widget",
     R"({"parts":{"a":{"size":1,"color":"red"}}})",
     {R"(unknown field "parts.a.color")"},
     R"({"parts":{"a":{"size":1}}})"},
    {"a map key given twice is replaced whole",
     "decode.go object: mapElem.SetZero()",
     "example.com/v1",
     "Widget",
     R"({"parts":{"a":{"size":1},"b":{},"a":{"color":2}}})",
     {R"(duplicate field "parts.a")", R"(unknown field "parts.a.color")"},
     R"({"parts":{"a":{},"b":{}}})"},
    {"x-kubernetes-preserve-unknown-fields keeps what it does not know",
     "apiextensions structural schema",
     "example.com/v1",
     "Widget",
     R"({"extra":{"known":"k","anything":{"x":[1]}}})",
     {},
     nullptr},
    {"x-kubernetes-preserve-unknown-fields: duplicates still count, the later wins",
     "decode.go objectInterface",
     "example.com/v1",
     "Widget",
     R"({"extra":{"known":"k","other":1,"known":"j","other":2}})",
     {R"(duplicate field "extra.known")", R"(duplicate field "extra.other")"},
     R"({"extra":{"known":"j","other":2}})"},
};

TEST(PruneUnknownFieldsTest, MapsOfStructsAndPreservedUnknownFields) {
  Result<std::unique_ptr<const Schema>> schema = Schema::Parse(kWidgetSchema);
  ASSERT_TRUE(schema.has_value()) << schema.error().message();
  for (const PruneCase& c : kWidgetCases) RunPruneCase(**schema, c);
}

TEST(FieldValidationTest, StrictDecodingErrorJoinsInOrder) {
  // apimachinery runtime/error.go strictDecodingError.Error.
  FieldProblems problems{{R"(unknown field "spec.tolerations[0].tolerationSecond")",
                          R"(duplicate field "metadata.name")"}};
  EXPECT_EQ(StrictDecodingError(problems),
            R"(strict decoding error: unknown field "spec.tolerations[0].tolerationSecond", )"
            R"(duplicate field "metadata.name")");
  // apiserver handlers/rest.go transformDecodeError, for create and update.
  EXPECT_EQ(CannotBeHandledAs("Pod", "v1", "Pod", StrictDecodingError(problems)),
            R"(Pod in version "v1" cannot be handled as a Pod: strict decoding error: )"
            R"(unknown field "spec.tolerations[0].tolerationSecond", )"
            R"(duplicate field "metadata.name")");
}

TEST(FieldValidationTest, ParseFieldValidation) {
  // apiserver handlers/rest.go fieldValidation ("" is Warn); apimachinery
  // apis/meta/v1/validation ValidateFieldValidation (allowedFieldValidationValues).
  struct Case {
    const char* value;
    FieldValidation want;
  };
  for (const Case& c :
       {Case{"", FieldValidation::kWarn}, Case{"Warn", FieldValidation::kWarn},
        Case{"Strict", FieldValidation::kStrict}, Case{"Ignore", FieldValidation::kIgnore}}) {
    Result<FieldValidation> got = ParseFieldValidation(c.value);
    ASSERT_TRUE(got.has_value()) << c.value;
    EXPECT_EQ(*got, c.want) << c.value;
  }
  // Case-sensitive (sets.String.Has); the 422 of errors.NewInvalid(CreateOptions, "", ...).
  Result<FieldValidation> bad = ParseFieldValidation("strict");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), StatusCode::kInvalid);
  EXPECT_EQ(bad.error().message(),
            R"(CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: )"
            R"("strict": supported values: "", "Ignore", "Strict", "Warn")");
  bad = ParseFieldValidation("bogus", "PatchOptions");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(),
            R"(PatchOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: )"
            R"("bogus": supported values: "", "Ignore", "Strict", "Warn")");
}

TEST(ServedSchemaTest, FindsEveryServedKind) {
  struct Case {
    const char* group;
    const char* version;
    const char* kind;
    const char* definition;
  };
  const Case cases[] = {
      {"", "v1", "Namespace", "io.k8s.api.core.v1.Namespace"},
      {"", "v1", "NamespaceList", "io.k8s.api.core.v1.NamespaceList"},
      {"", "v1", "Node", "io.k8s.api.core.v1.Node"},
      {"", "v1", "NodeList", "io.k8s.api.core.v1.NodeList"},
      {"", "v1", "Pod", "io.k8s.api.core.v1.Pod"},
      {"", "v1", "PodList", "io.k8s.api.core.v1.PodList"},
      {"", "v1", "Event", "io.k8s.api.core.v1.Event"},
      {"", "v1", "EventList", "io.k8s.api.core.v1.EventList"},
      {"coordination.k8s.io", "v1", "Lease", "io.k8s.api.coordination.v1.Lease"},
      {"coordination.k8s.io", "v1", "LeaseList", "io.k8s.api.coordination.v1.LeaseList"},
      {"scheduling.k8s.io", "v1", "PriorityClass", "io.k8s.api.scheduling.v1.PriorityClass"},
      {"scheduling.k8s.io", "v1", "PriorityClassList",
       "io.k8s.api.scheduling.v1.PriorityClassList"},
      {"apps", "v1", "DaemonSet", "io.k8s.api.apps.v1.DaemonSet"},
      {"apps", "v1", "DaemonSetList", "io.k8s.api.apps.v1.DaemonSetList"},
      {"", "v1", "Binding", "io.k8s.api.core.v1.Binding"},
      {"policy", "v1", "Eviction", "io.k8s.api.policy.v1.Eviction"},
      {"", "v1", "DeleteOptions", "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"},
      {"apps", "v1", "DeleteOptions", "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"},
  };
  const Schema& schema = ServedSchema();
  for (const Case& c : cases) {
    TypeRef t = schema.FindKind(c.group, c.version, c.kind);
    ASSERT_NE(t, nullptr) << c.group << "/" << c.version << " " << c.kind;
    EXPECT_EQ(t->name, c.definition);
    EXPECT_EQ(schema.FindType(c.definition), t);
    EXPECT_EQ(&schema.types()[t->index], t);
  }
  EXPECT_EQ(schema.FindApiVersionKind("apps/v1", "DaemonSet"),
            schema.FindKind("apps", "v1", "DaemonSet"));
  EXPECT_EQ(schema.FindApiVersionKind("v1", "Pod"), schema.FindKind("", "v1", "Pod"));
  EXPECT_EQ(schema.FindKind("apps", "v1", "Deployment"), nullptr);  // not served
  EXPECT_EQ(schema.FindKind("", "v1", "pod"), nullptr);
  EXPECT_EQ(schema.FindType("io.k8s.api.core.v1.Service"), nullptr);
  EXPECT_EQ(schema.info_title(), "Kubernetes");
}

// Walks "spec.containers" from `type`.
const SchemaField* FieldAt(TypeRef type, std::string_view path) {
  const SchemaField* field = nullptr;
  while (!path.empty()) {
    const size_t dot = std::min(path.find('.'), path.size());
    if (type == nullptr) return nullptr;
    field = type->FindField(path.substr(0, dot));
    if (field == nullptr) return nullptr;
    path.remove_prefix(std::min(dot + 1, path.size()));
    const ValueSchema* v = field->value;
    while (v->kind == ValueKind::kArray || v->kind == ValueKind::kMap) v = v->element;
    type = v->type;
  }
  return field;
}

TEST(ServedSchemaTest, FieldFacts) {
  const Schema& schema = ServedSchema();
  TypeRef pod = schema.FindKind("", "v1", "Pod");
  ASSERT_NE(pod, nullptr);
  EXPECT_TRUE(pod->description.starts_with("Pod is a collection of containers"));

  const SchemaField* containers = FieldAt(pod, "spec.containers");
  ASSERT_NE(containers, nullptr);
  EXPECT_EQ(containers->value->kind, ValueKind::kArray);
  EXPECT_EQ(containers->value->element->type->name, "io.k8s.api.core.v1.Container");
  EXPECT_EQ(containers->list_type, ListType::kMap);
  ASSERT_EQ(containers->list_map_keys.size(), 1u);
  EXPECT_EQ(containers->list_map_keys[0], "name");
  EXPECT_EQ(containers->patch_merge_key, "name");
  EXPECT_TRUE(containers->patch_merge);
  EXPECT_FALSE(containers->patch_retain_keys);
  EXPECT_TRUE(containers->required);
  EXPECT_FALSE(containers->description.empty());

  const SchemaField* volumes = FieldAt(pod, "spec.volumes");
  ASSERT_NE(volumes, nullptr);
  EXPECT_TRUE(volumes->patch_merge);  // "merge,retainKeys"
  EXPECT_TRUE(volumes->patch_retain_keys);

  const SchemaField* tolerations = FieldAt(pod, "spec.tolerations");
  ASSERT_NE(tolerations, nullptr);
  EXPECT_EQ(tolerations->list_type, ListType::kAtomic);
  EXPECT_EQ(tolerations->value->element->type->name, "io.k8s.api.core.v1.Toleration");
  const SchemaField* seconds = FieldAt(pod, "spec.tolerations.tolerationSeconds");
  ASSERT_NE(seconds, nullptr);
  EXPECT_EQ(seconds->value->kind, ValueKind::kInteger);
  EXPECT_EQ(seconds->value->format, "int64");

  struct KindCase {
    const char* path;
    ValueKind kind;
    ValueKind element;  // for maps and lists
  };
  for (const KindCase& c : {
           KindCase{"metadata", ValueKind::kObject, ValueKind::kObject},
           KindCase{"metadata.labels", ValueKind::kMap, ValueKind::kString},
           KindCase{"metadata.creationTimestamp", ValueKind::kTime, ValueKind::kTime},
           KindCase{"metadata.managedFields.fieldsV1", ValueKind::kPreserveUnknown,
                    ValueKind::kPreserveUnknown},
           KindCase{"spec.containers.resources.requests", ValueKind::kMap, ValueKind::kQuantity},
           KindCase{"spec.containers.livenessProbe.httpGet.port", ValueKind::kIntOrString,
                    ValueKind::kIntOrString},
           KindCase{"spec.containers.args", ValueKind::kArray, ValueKind::kString},
           KindCase{"spec.hostNetwork", ValueKind::kBoolean, ValueKind::kBoolean},
       }) {
    const SchemaField* f = FieldAt(pod, c.path);
    ASSERT_NE(f, nullptr) << c.path;
    EXPECT_EQ(f->value->kind, c.kind) << c.path;
    if (f->value->element != nullptr) {
      EXPECT_EQ(f->value->element->kind, c.element) << c.path;
    }
  }
  const SchemaField* image = FieldAt(pod, "spec.containers.image");
  ASSERT_NE(image, nullptr);
  EXPECT_FALSE(image->required);
  EXPECT_TRUE(FieldAt(pod, "spec.containers.name")->required);
  EXPECT_EQ(FieldAt(pod, "spec.nodeSelector")->map_type, MapType::kAtomic);
  EXPECT_EQ(schema.FindType("io.k8s.api.core.v1.ObjectReference")->map_type, MapType::kAtomic);

  // Fields are sorted, so FindField can search.
  for (const SchemaType& t : schema.types()) {
    for (size_t i = 1; i < t.fields.size(); ++i) {
      EXPECT_LT(t.fields[i - 1].name, t.fields[i].name) << t.name;
    }
  }
}

TEST(ServedSchemaTest, MemoryIsSmall) {
  const size_t bytes = ServedSchema().MemoryBytes();
  std::printf("served schema: %zu types, %zu bytes in memory\n", ServedSchema().types().size(),
              bytes);
  EXPECT_GT(bytes, 100u * 1024);  // the descriptions alone are ~150 KB
  EXPECT_LT(bytes, 1024u * 1024);
}

TEST(SchemaTest, ParseRejectsWhatItCannotRepresent) {
  struct Case {
    const char* json;
    const char* error;
  };
  const Case cases[] = {
      {"{", "schema: invalid JSON at offset 1: Missing a name for object member."},
      {"[]", "schema: the document is not an object"},
      {R"({"definitions":[]})", R"(schema: no "definitions" object)"},
      {R"({"definitions":{"a":{"type":"object","properties":{"b":{"$ref":"#/definitions/c"}}}}})",
       "schema: a.b: dangling $ref #/definitions/c"},
      {R"({"definitions":{"a":{"type":"object","properties":{"b":{"type":"array",
          "items":{"type":"string"},"x-kubernetes-list-type":"bag"}}}}})",
       R"(schema: a.b: unknown x-kubernetes-list-type "bag")"},
      {R"({"definitions":{"a":{"type":"object","properties":{"b":{"type":"array",
          "items":{"type":"string"},"x-kubernetes-patch-strategy":"merge,squash"}}}}})",
       R"(schema: a.b: unknown x-kubernetes-patch-strategy "squash")"},
      {R"({"definitions":{"a":{"type":"object","properties":{"b":{"type":"tuple"}}}}})",
       R"(schema: a.b: unknown type "tuple")"},
  };
  for (const Case& c : cases) {
    Result<std::unique_ptr<const Schema>> s = Schema::Parse(c.json);
    ASSERT_FALSE(s.has_value()) << c.json;
    EXPECT_EQ(s.error().code(), StatusCode::kBadRequest);
    EXPECT_EQ(s.error().message(), c.error);
  }
}

// Moving to a newer Kubernetes is one command (third_party/kubernetes-openapi/README.md); this
// checks that the committed file is what that command makes from the upstream document, when
// ../shared is beside the checkout.
TEST(ServedSchemaTest, RegeneratesFromUpstream) {
  const std::string source = KUBETAINT_SOURCE_DIR;
  const std::string upstream = source + "/../shared/upstream/kubernetes-v1.35.0-swagger.json";
  if (!std::ifstream(upstream).good()) GTEST_SKIP() << "no " << upstream;
  if (std::system("python3 -c pass") != 0) GTEST_SKIP() << "no python3";
  const std::string out = testing::TempDir() + "served-schema.regenerated.json";
  const std::string command = "python3 '" + source +
                              "/third_party/kubernetes-openapi/generate.py' '" + upstream + "' '" +
                              out + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const std::string regenerated = ReadFile(out);
  std::remove(out.c_str());
  EXPECT_TRUE(regenerated ==
              ReadFile(source + "/third_party/kubernetes-openapi/served-schema.json"))
      << "third_party/kubernetes-openapi/served-schema.json is stale: run " << command;
}

}  // namespace
}  // namespace kt::api
