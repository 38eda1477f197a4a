#include "api/schema.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kt::api {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
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
