#include "api/manifest.h"

#include <string>

#include <gtest/gtest.h>

#include "api/codec.h"

namespace kt::api {
namespace {

std::string TestFile(const std::string& name) {
  return std::string(KUBETAINT_SOURCE_DIR) + "/src/api/testdata/" + name;
}

// The JSON a YAML document converts to, or "error: <message>".
std::string Convert(std::string_view yaml) {
  Result<rapidjson::Document> doc = YamlToJson(yaml);
  if (!doc) return std::string("error: ") + doc.error().message();
  return EncodeJson(*doc);
}

std::string LoadError(std::string_view text, std::string_view name = "m.yaml") {
  Result<std::vector<Manifest>> m = LoadManifests(text, name);
  if (m) return std::string("loaded ") + std::to_string(m->size());
  return m.error().message();
}

TEST(ManifestTest, SeedPodTolerationSecondsIsAnInteger) {
  Result<std::vector<Manifest>> m = LoadManifestFile(TestFile("seed-pod.yaml"));
  ASSERT_TRUE(m.has_value()) << m.error().message();
  ASSERT_EQ(m->size(), 1u);
  const Manifest& pod = (*m)[0];
  EXPECT_EQ(pod.kind, "Pod");
  EXPECT_EQ(pod.api_version, "v1");
  EXPECT_EQ(pod.name, "nginx");
  EXPECT_EQ(pod.namespace_, "");
  EXPECT_EQ(pod.document, 1);
  EXPECT_EQ(pod.item, 0);
  EXPECT_EQ(pod.Location(), TestFile("seed-pod.yaml") + ": document 1");
  const rapidjson::Value& seconds = pod.object["spec"]["tolerations"][1]["tolerationSeconds"];
  ASSERT_TRUE(seconds.IsInt64());
  EXPECT_EQ(seconds.GetInt64(), 3600);

  Result<Pod> decoded = DecodePod(pod.object);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message();
  ASSERT_EQ(decoded->spec.tolerations.size(), 2u);
  EXPECT_EQ(decoded->spec.tolerations[1].toleration_seconds, 3600);
  EXPECT_EQ(decoded->spec.tolerations[1].effect, "NoExecute");
  EXPECT_EQ(*decoded->meta.labels.Get("env"), "test");
}

TEST(ManifestTest, QuotedNumbersStayStrings) {
  Result<std::vector<Manifest>> m = LoadManifests(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  tolerations:
  - key: key1
    operator: Exists
    effect: NoExecute
    tolerationSeconds: "3600"
)",
                                                  "pod.yaml");
  ASSERT_TRUE(m.has_value()) << m.error().message();
  const rapidjson::Value& seconds = (*m)[0].object["spec"]["tolerations"][0]["tolerationSeconds"];
  ASSERT_TRUE(seconds.IsString());
  EXPECT_STREQ(seconds.GetString(), "3600");
  // As upstream: the API server rejects it.
  EXPECT_EQ(DecodePod((*m)[0].object).error().message(),
            "spec.tolerations[0].tolerationSeconds: expected integer, got string");
}

TEST(ManifestTest, MultiDocumentStreamWithListsAndEmptyDocuments) {
  Result<std::vector<Manifest>> m = LoadManifestFile(TestFile("cluster.yaml"));
  ASSERT_TRUE(m.has_value()) << m.error().message();
  ASSERT_EQ(m->size(), 3u);
  EXPECT_EQ((*m)[0].kind, "Node");
  EXPECT_EQ((*m)[0].name, "node1");
  EXPECT_EQ((*m)[0].document, 1);
  EXPECT_EQ((*m)[0].item, 1);
  EXPECT_EQ((*m)[1].name, "node2");
  EXPECT_EQ((*m)[1].item, 2);
  EXPECT_EQ((*m)[1].Location(), TestFile("cluster.yaml") + ": document 1, item 2");
  EXPECT_EQ((*m)[2].kind, "Pod");
  EXPECT_EQ((*m)[2].namespace_, "shop");
  EXPECT_EQ((*m)[2].document, 2);  // comment-only and empty documents are not counted
  EXPECT_EQ((*m)[2].item, 0);

  Result<Node> node1 = DecodeNode((*m)[0].object);
  ASSERT_TRUE(node1.has_value());
  const std::vector<Taint> want_taints = {Taint{"key1", "value1", "NoSchedule", std::nullopt}};
  EXPECT_EQ(node1->spec.taints, want_taints);
  EXPECT_EQ(*node1->meta.labels.Get("gpu"), "true");
  Result<Pod> pod = DecodePod((*m)[2].object);
  ASSERT_TRUE(pod.has_value());
  EXPECT_EQ(pod->spec.containers[0].limits.Get("memory")->ToString(), "1536Mi");
  EXPECT_EQ(pod->spec.containers[0].limits.Get("cpu")->MilliValue(), 1000);  // YAML int
}

TEST(ManifestTest, KindListAndJsonFiles) {
  Result<std::vector<Manifest>> list = LoadManifests(R"({"apiVersion":"v1","kind":"List",
      "items":[{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}},
               {"apiVersion":"v1","kind":"Namespace","metadata":{"name":"b"}}]}
  {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"a"}})",
                                                     "objs.json");
  ASSERT_TRUE(list.has_value()) << list.error().message();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].name, "a");
  EXPECT_EQ((*list)[1].Location(), "objs.json: document 1, item 2");
  EXPECT_EQ((*list)[2].Location(), "objs.json: document 2");
  EXPECT_EQ((*list)[2].namespace_, "a");

  // An empty List and a List without items load nothing.
  EXPECT_EQ(LoadError("apiVersion: v1\nkind: List\nitems: []\n"), "loaded 0");
  EXPECT_EQ(LoadError("apiVersion: v1\nkind: List\n"), "loaded 0");
  // "*List" kinds expand only when they have items.
  EXPECT_EQ(LoadError("apiVersion: v1\nkind: PodList\nitems:\n- {apiVersion: v1, kind: Pod}\n"),
            "loaded 1");
  EXPECT_EQ(LoadError("apiVersion: example.com/v1\nkind: WatchList\nspec: {}\n"), "loaded 1");
  EXPECT_EQ(LoadError(""), "loaded 0");
  EXPECT_EQ(LoadError("# only a comment\n---\n\n---\n"), "loaded 0");
  EXPECT_EQ(LoadError("---\napiVersion: v1\nkind: Pod\n---\n"), "loaded 1");
  EXPECT_EQ(LoadError("\xEF\xBB\xBF{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}"), "loaded 1");
  EXPECT_EQ(LoadError("null\n---\n~\n"), "loaded 0");  // null documents are empty
}

TEST(ManifestTest, ErrorsNameFileAndDocument) {
  const struct {
    const char* text;
    const char* error;
  } cases[] = {
      {"apiVersion: v1\nkind: Pod\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: [a\n",
       "m.yaml: document 2: yaml: line 8, column 1: end of sequence flow not found"},
      {"apiVersion: v1\nkind: Pod\nmetadata:\n name: a\n  labels: x\n",
       "m.yaml: document 1: yaml: line 5, column 9: illegal map value"},
      {"apiVersion: v1\nkind: Pod\n---\n# a comment\na: b: c\n",
       "m.yaml: document 2: yaml: line 5, column 5: illegal map value"},
      {"kind: Pod\n", "m.yaml: document 1: Object 'apiVersion' is missing"},
      {"apiVersion: v1\n", "m.yaml: document 1: Object 'Kind' is missing"},
      {"apiVersion: v1\nkind: 7\n", "m.yaml: document 1: kind: expected string, got number"},
      {"apiVersion: v1\nkind: Pod\nmetadata: {name: true}\n",
       "m.yaml: document 1: metadata.name: expected string, got boolean"},
      {"just a string\n", "m.yaml: document 1: expected object, got string"},
      {"- a\n- b\n", "m.yaml: document 1: expected object, got array"},
      {"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod}\n- {apiVersion: v1}\n",
       "m.yaml: document 1, item 2: Object 'Kind' is missing"},
      {"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod}\n- 3\n",
       "m.yaml: document 1, item 2: expected object, got number"},
      {"apiVersion: v1\nkind: List\nitems: {a: b}\n",
       "m.yaml: document 1: items: expected array, got object"},
      {"apiVersion: v1\nkind: Pod\n--- extra\nkind: Pod\n",
       "m.yaml: line 3: invalid Yaml document separator: extra"},
      {"apiVersion: v1\nkind: Pod\nspec: {priority: .inf}\n",
       "m.yaml: document 1: yaml: line 3, column 18: json: unsupported value: +Inf"},
      {"apiVersion: v1\nkind: Pod\nmetadata:\n  ~: x\n",
       "m.yaml: document 1: yaml: line 4, column 3: unsupported map key: null"},
      {"{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}\n{\"a\" 1}",
       "m.yaml: document 2: invalid JSON at offset 38: Missing a colon after a name of object "
       "member"},
      {"{\"apiVersion\":\"v1\",\"kind\":\"Pod\"} [1]",
       "m.yaml: document 2: expected object, got array"},
  };
  for (const auto& c : cases) EXPECT_EQ(LoadError(c.text), c.error) << c.text;

  Result<std::vector<Manifest>> missing = LoadManifestFile(TestFile("no-such-file.yaml"));
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.error().message(),
            TestFile("no-such-file.yaml") + ": No such file or directory");
  EXPECT_EQ(LoadManifestFile(TestFile("")).error().code(), StatusCode::kBadRequest);  // a dir
}

// Plain scalars resolve as go-yaml v2 does for sigs.k8s.io/yaml; quoted ones stay strings.
TEST(ManifestTest, ScalarResolution) {
  const struct {
    const char* yaml;
    const char* json;
  } cases[] = {
      {"a: 3600", R"({"a":3600})"},
      {"a: \"3600\"", R"({"a":"3600"})"},
      {"a: '3600'", R"({"a":"3600"})"},
      {"a: -42", R"({"a":-42})"},
      {"a: +7", R"({"a":7})"},
      {"a: 0x1F", R"({"a":31})"},
      {"a: 017", R"({"a":15})"},
      {"a: 0o17", R"({"a":15})"},
      {"a: 0b101", R"({"a":5})"},
      {"a: 08", R"({"a":8})"},  // not octal: a float, written as Go writes it
      {"a: 1_000", R"({"a":1000})"},
      {"a: 9223372036854775807", R"({"a":9223372036854775807})"},
      {"a: 9223372036854775808", R"({"a":9223372036854775808})"},
      {"a: 18446744073709551615", R"({"a":18446744073709551615})"},
      {"a: 1.5", R"({"a":1.5})"},
      {"a: 1e3", R"({"a":1000})"},
      {"a: 1.0", R"({"a":1})"},
      {"a: .5", R"({"a":0.5})"},
      {"a: -.5e1", R"({"a":-5})"},
      {"a: 1e400", R"({"a":"1e400"})"},  // out of range: a string, as upstream
      {"a: 1e-400", R"({"a":0})"},
      {"a: true", R"({"a":true})"},
      {"a: False", R"({"a":false})"},
      {"a: yes", R"({"a":true})"},
      {"a: Off", R"({"a":false})"},
      {"a: y", R"({"a":true})"},
      {"a: \"yes\"", R"({"a":"yes"})"},
      {"a: yesterday", R"({"a":"yesterday"})"},
      {"a: null", R"({"a":null})"},
      {"a: ~", R"({"a":null})"},
      {"a:", R"({"a":null})"},
      {"a: NULL", R"({"a":null})"},
      {"a: \"null\"", R"({"a":"null"})"},
      {"a: 2025-11-02", R"({"a":"2025-11-02"})"},
      {"a: 2025-11-02T10:00:00Z", R"({"a":"2025-11-02T10:00:00Z"})"},
      {"a: 1:20", R"({"a":"1:20"})"},
      {"a: 250m", R"({"a":"250m"})"},
      {"a: 1.5Gi", R"({"a":"1.5Gi"})"},
      {"a: -1-", R"({"a":"-1-"})"},
      {"a: .", R"({"a":"."})"},
      {"a: 0x", R"({"a":"0x"})"},
      {"a: !!str 123", R"({"a":"123"})"},
      {"a: !!int \"12\"", R"({"a":12})"},
      {"a: !!float 2", R"({"a":2})"},
      {"a: !!bool yes", R"({"a":true})"},
      {"a: !custom 5", R"({"a":"5"})"},
      {"a: |\n  line1\n  line2\n", R"({"a":"line1\nline2\n"})"},
      {"a: >-\n  folded\n  text\n", R"({"a":"folded text"})"},
      {"a: [1, \"2\", three, null]", R"({"a":[1,"2","three",null]})"},
      // Keys: sorted, the last duplicate wins, non-strings become strings.
      {"b: 1\na: 2\nb: 3", R"({"a":2,"b":3})"},
      {"1: x\ntrue: v\n1.5: z\n0x10: w", R"({"1":"x","1.5":"z","16":"w","true":"v"})"},
      {"1e6: x\n.000001: w", R"({"1e+06":"x","1e-06":"w"})"},
      {"y: 1\nn: 2\non: 3", R"({"false":2,"true":3})"},  // YAML 1.1 booleans, as go-yaml v2
      {"\"1\": quoted", R"({"1":"quoted"})"},
      // Anchors, aliases and merge keys.
      {"base: &b {x: 1, z: 2}\nuse: *b", R"({"base":{"x":1,"z":2},"use":{"x":1,"z":2}})"},
      {"base: &b {x: 1, z: 2}\nuse:\n  <<: *b\n  z: 3",
       R"({"base":{"x":1,"z":2},"use":{"x":1,"z":3}})"},
      {"a: &a {x: 1}\nb: &b {x: 2, z: 2}\nc:\n  <<: [*a, *b]",
       R"({"a":{"x":1},"b":{"x":2,"z":2},"c":{"x":1,"z":2}})"},
      {"", "null"},
      {"# just a comment", "null"},
  };
  for (const auto& c : cases) EXPECT_EQ(Convert(c.yaml), c.json) << c.yaml;
}

TEST(ManifestTest, ConversionErrors) {
  const struct {
    const char* yaml;
    const char* error;
  } cases[] = {
      {"a: .nan", "error: yaml: line 1, column 4: json: unsupported value: NaN"},
      {"a: -.inf", "error: yaml: line 1, column 4: json: unsupported value: -Inf"},
      {"a: !!int abc", "error: yaml: line 1, column 4: cannot decode !!str `abc` as a !!int"},
      {"a: !!bool 1", "error: yaml: line 1, column 4: cannot decode !!int `1` as a !!bool"},
      {"[1]: x", "error: yaml: line 1, column 1: unsupported map key: a collection"},
      {"a:\n  <<: 5",
       "error: yaml: line 2, column 7: map merge requires map or sequence of maps "
       "as the value"},
      {"a: [", "error: yaml: line 1, column 1: end of sequence flow not found"},
      {"a: *nothing", "error: yaml: line 1, column 4: the referenced anchor is not defined"},
  };
  for (const auto& c : cases) EXPECT_EQ(Convert(c.yaml), c.error) << c.yaml;
}

// Duplicate keys as goyaml v2's strict decoding reports them (upstream's apply with
// fieldValidation Strict or Warn): the line of the repeat's value, depth first, each repeat.
TEST(ManifestTest, DuplicateYamlKeysAsGoyamlReportsThem) {
  const std::string yaml =
      "apiVersion: v1\n"  // 1
      "kind: Pod\n"       // 2
      "metadata:\n"       // 3
      "  name: p\n"       // 4
      "  name: q\n"       // 5
      "spec:\n"           // 6
      "  containers:\n"   // 7
      "  - name: c\n"     // 8
      "    image: a\n"    // 9
      "    image: b\n"    // 10
      "    image: c\n"    // 11
      "a:\n"              // 12
      "  x: 1\n"          // 13
      "  x: 2\n"          // 14
      "a:\n"              // 15
      "  y: 1\n"          // 16
      "  y: 2\n"          // 17
      "\"quoted\": 1\n"   // 18
      "quoted: 2\n"       // 19
      "\"1\": x\n"        // 20: the string "1"
      "1: y\n";           // 21: the integer 1, another key
  auto duplicates = [](std::string_view text) {
    std::vector<std::string> out;
    EXPECT_TRUE(YamlToJson(text, &out)) << text;
    return out;
  };
  EXPECT_EQ(duplicates(yaml),
            (std::vector<std::string>{
                R"(line 5: key "name" already set in map)",
                R"(line 10: key "image" already set in map)",
                R"(line 11: key "image" already set in map)",
                R"(line 14: key "x" already set in map)",
                R"(line 17: key "y" already set in map)",
                R"(line 16: key "a" already set in map)",  // the repeat's value starts there
                R"(line 19: key "quoted" already set in map)",
            }));
  // JSON is YAML: one line.
  EXPECT_EQ(duplicates(R"({"kind":"Pod","m":{"a":1,"a":2},"kind":"Pod"})"),
            (std::vector<std::string>{R"(line 1: key "a" already set in map)",
                                      R"(line 1: key "kind" already set in map)"}));
  EXPECT_TRUE(duplicates("a: 1\nb: {a: 2}\n").empty());
  std::vector<std::string> none;
  EXPECT_FALSE(YamlToJson("a: [", &none)) << "a parse error is reported as such";
  EXPECT_TRUE(none.empty());
  // Converted, a repeated key takes its last value.
  Result<rapidjson::Document> doc = YamlToJson("a: 1\na: 2\n");
  ASSERT_TRUE(doc);
  EXPECT_EQ((*doc)["a"].GetInt(), 2);
}

TEST(ManifestTest, HostileYamlIsRefused) {
  // Billion laughs: nine levels of ten aliases would expand to 10^9 values.
  std::string laughs = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= 9; ++i) {
    const std::string prev = std::string("*a") + std::to_string(i - 1);
    laughs += std::string("a") + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) laughs += (j ? ", " : "") + prev;
    laughs += "]\n";
  }
  const std::string out = Convert(laughs);
  EXPECT_NE(out.find("document contains excessive aliasing"), std::string::npos) << out;

  // Deep nesting stops at a bound instead of overflowing the stack.
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  const std::string deep_out = Convert(deep);
  EXPECT_EQ(deep_out.rfind("error: yaml: ", 0), 0u) << deep_out;

  // A self-referencing alias cannot loop forever.
  const std::string cyclic = Convert("a: &x [*x]\n");
  EXPECT_EQ(cyclic.rfind("error: ", 0), 0u) << cyclic;

  // Garbage never crashes.
  for (const char* s :
       {"\t- a", "{a: 1", "a: 'x", "? [a]\n: b", "&a *a", "!<x> a: b", "%YAML 9.9\n",
        "a: !!binary ==", "\xff\xfe", "a: \"\\u00\"", "-\n-\n  -\n   - ["}) {
    (void)Convert(s);
    (void)LoadManifests(s, "x.yaml");
  }
}

}  // namespace
}  // namespace kt::api
