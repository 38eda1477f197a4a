// The admission chain: which plugins kube-apiserver's flags turn on (upstream
// staging/src/k8s.io/apiserver/pkg/server/options/admission.go Validate and
// enabledPluginNames), with its error messages, and the order plugins run in.
#include "admission/chain.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "admission/default_toleration_seconds.h"

namespace kt::admission {
namespace {

std::vector<std::string_view> Names(std::span<const PluginInfo* const> plugins) {
  std::vector<std::string_view> out;
  for (const PluginInfo* p : plugins) out.push_back(p->name);
  return out;
}

// The names EnabledPlugins picks from `known` for the two flags, or "error: <message>".
std::string Picked(std::span<const PluginInfo> known, std::vector<std::string> enable,
                   std::vector<std::string> disable) {
  Config c;
  c.enable_plugins = std::move(enable);
  c.disable_plugins = std::move(disable);
  Result<std::vector<const PluginInfo*>> r = EnabledPlugins(known, c);
  if (!r) return "error: " + r.error().message();
  std::string out;
  for (std::string_view n : Names(*r)) {
    if (!out.empty()) out += ",";
    out += n;
  }
  return out;
}

TEST(ChainTest, KubetaintsPluginsAreUpstreamsDefaultOnesInUpstreamsOrder) {
  const std::string all =
      "NamespaceLifecycle,TaintNodesByCondition,Priority,DefaultTolerationSeconds";
  EXPECT_EQ(Picked(KnownPlugins(), {}, {}), all);
  EXPECT_EQ(Picked(KnownPlugins(), {"DefaultTolerationSeconds", "NamespaceLifecycle"}, {}), all)
      << "enabling a default plugin changes nothing, nor does the flag's order";
  EXPECT_EQ(Picked(KnownPlugins(), {}, {"DefaultTolerationSeconds"}),
            "NamespaceLifecycle,TaintNodesByCondition,Priority");
  EXPECT_EQ(Picked(KnownPlugins(), {}, {"Priority", "NamespaceLifecycle", "TaintNodesByCondition"}),
            "DefaultTolerationSeconds");
  EXPECT_EQ(DefaultChain()->Names(),
            (std::vector<std::string_view>{"NamespaceLifecycle", "TaintNodesByCondition",
                                           "Priority", "DefaultTolerationSeconds"}));
}

TEST(ChainTest, TheDefaultOffPluginsRunInUpstreamsOrderWhenEnabled) {
  EXPECT_EQ(Picked(KnownPlugins(), {"ExtendedResourceToleration", "PodTolerationRestriction"}, {}),
            "NamespaceLifecycle,TaintNodesByCondition,Priority,DefaultTolerationSeconds,"
            "PodTolerationRestriction,ExtendedResourceToleration");
}

TEST(ChainTest, APluginConfigurationErrorNamesThePlugin) {
  Config c;
  c.enable_plugins = {"PodTolerationRestriction"};
  auto doc = std::make_shared<rapidjson::Document>();
  doc->Parse(R"({"apiVersion":"podtolerationrestriction.admission.k8s.io/v1alpha1",)"
             R"("kind":"Configuration","whitelist":[{"key":"a","operator":"Sometimes"}]})");
  c.plugin_configs.push_back({.name = "PodTolerationRestriction",
                              .where = "a.yaml: plugins[0]",
                              .path = "",
                              .configuration = doc});
  Result<std::shared_ptr<const Chain>> chain = NewChain(c);
  ASSERT_FALSE(chain);
  EXPECT_EQ(chain.error().message(),
            "couldn't init admission plugin \"PodTolerationRestriction\": a.yaml: "
            "plugins[0].configuration: invalid config: [podtolerationrestriction.whitelist[0]."
            "operator: Unsupported value: \"Sometimes\": supported values: \"Equal\", "
            "\"Exists\"]");
  // A disabled plugin's configuration is never read (upstream reads it as the plugin is made).
  c.enable_plugins.clear();
  EXPECT_TRUE(NewChain(c));
}

TEST(ChainTest, BadFlagsGetKubeApiserversMessages) {
  EXPECT_EQ(Picked(KnownPlugins(), {"PodNodeSelector"}, {}),
            "error: enable-admission-plugins plugin \"PodNodeSelector\" is unknown");
  EXPECT_EQ(Picked(KnownPlugins(), {}, {"Bogus"}),
            "error: disable-admission-plugins plugin \"Bogus\" is unknown");
  EXPECT_EQ(Picked(KnownPlugins(), {"Priority", "DefaultTolerationSeconds"},
                   {"Priority", "DefaultTolerationSeconds"}),
            "error: [DefaultTolerationSeconds Priority] in enable-admission-plugins and "
            "disable-admission-plugins overlapped");
  // Several errors read as Go's aggregate: bracketed, comma-separated, each once.
  EXPECT_EQ(Picked(KnownPlugins(), {"A", "A", "Priority"}, {"B", "Priority"}),
            "error: [enable-admission-plugins plugin \"A\" is unknown, "
            "disable-admission-plugins plugin \"B\" is unknown, [Priority] in "
            "enable-admission-plugins and disable-admission-plugins overlapped]");
  Config bad;
  bad.enable_plugins = {"NamespaceExists"};
  ASSERT_FALSE(NewChain(bad));
  EXPECT_EQ(NewChain(bad).error().message(),
            "enable-admission-plugins plugin \"NamespaceExists\" is unknown");
}

// Upstream's AlwaysDeny, as a plugin that is off unless enabled.
class AlwaysDeny : public Plugin {
 public:
  std::string_view Name() const override { return "AlwaysDeny"; }
  Verdict Admit(Attributes&, const Listers&) const override {
    return Reject(Rejection::Forbidden("admission control is denying all modifications"));
  }
};

TEST(ChainTest, EnablingADefaultOffPluginTurnsItOn) {
  const PluginInfo known[] = {
      KnownPlugins()[0],
      {"AlwaysDeny", false,
       [](const Config&) -> Result<std::unique_ptr<Plugin>> {
         return std::make_unique<AlwaysDeny>();
       }},
  };
  EXPECT_EQ(Picked(known, {}, {}), "NamespaceLifecycle");
  EXPECT_EQ(Picked(known, {"AlwaysDeny"}, {}), "NamespaceLifecycle,AlwaysDeny");
  EXPECT_EQ(Picked(known, {}, {"AlwaysDeny"}), "NamespaceLifecycle");
}

Listers OneNamespace() {
  Listers l;
  l.namespaces.phase = [](std::string_view name) -> std::optional<std::string> {
    if (name == "default") return "Active";
    return std::nullopt;
  };
  l.priority_classes.get = [](std::string_view) { return std::optional<api::PriorityClass>(); };
  l.priority_classes.for_each = [](const auto&) {};
  return l;
}

rapidjson::Document Pod(const char* spec) {
  rapidjson::Document d;
  d.Parse((std::string(R"({"metadata":{"name":"p"},"spec":)") + spec + "}").c_str());
  return d;
}

TEST(ChainTest, PluginsRunInOrderAndTheFirstRefusalEndsTheRequest) {
  const Listers listers = OneNamespace();
  // NamespaceLifecycle runs first: a missing namespace is reported, not the missing class, and
  // nothing after it touched the pod.
  rapidjson::Document pod = Pod(R"({"priorityClassName":"nope"})");
  Attributes a{.operation = Operation::kCreate,
               .resource = "pods",
               .namespace_ = "elsewhere",
               .name = "p",
               .object = &pod};
  Verdict v = DefaultChain()->Admit(a, listers);
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().code, StatusCode::kNotFound);
  EXPECT_FALSE(pod["spec"].HasMember("tolerations"));
  // Then Priority refuses the class before DefaultTolerationSeconds runs.
  a.namespace_ = "default";
  v = DefaultChain()->Admit(a, listers);
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().message, "no PriorityClass with name nope was found");
  EXPECT_FALSE(pod["spec"].HasMember("tolerations"));
  // A good pod goes through every mutating plugin.
  rapidjson::Document good = Pod("{}");
  a.object = &good;
  ASSERT_TRUE(DefaultChain()->Admit(a, listers));
  EXPECT_EQ(good["spec"]["priority"].GetInt(), 0);
  EXPECT_EQ(good["spec"]["tolerations"].Size(), 2u);
  EXPECT_TRUE(DefaultChain()->Validate(a, listers));
}

TEST(ChainTest, TheFlagsReachThePlugins) {
  Config c;
  c.default_not_ready_toleration_seconds = 60;
  c.default_unreachable_toleration_seconds = 7;
  Result<std::shared_ptr<const Chain>> chain = NewChain(c);
  ASSERT_TRUE(chain);
  rapidjson::Document pod = Pod("{}");
  Attributes a{.operation = Operation::kCreate,
               .resource = "pods",
               .namespace_ = "default",
               .name = "p",
               .object = &pod};
  ASSERT_TRUE((*chain)->Admit(a, OneNamespace()));
  EXPECT_EQ(pod["spec"]["tolerations"][0]["tolerationSeconds"].GetInt64(), 60);
  EXPECT_EQ(pod["spec"]["tolerations"][1]["tolerationSeconds"].GetInt64(), 7);

  c.disable_plugins = {std::string(DefaultTolerationSeconds::kName)};
  chain = NewChain(c);
  ASSERT_TRUE(chain);
  rapidjson::Document plain = Pod("{}");
  a.object = &plain;
  ASSERT_TRUE((*chain)->Admit(a, OneNamespace()));
  EXPECT_FALSE(plain["spec"].HasMember("tolerations"));
}

// A plugin that says it does not read a resource's objects decides alike with the object and
// without it (a typed writer hands none), and leaves the object as it was.
TEST(ChainTest, PluginsThatDoNotReadAResourcesObjectsDecideAlikeWithoutThem) {
  struct Kind {
    std::string_view group, resource, json;
  };
  const Kind kinds[] = {
      {"", "events", R"({"kind":"Event","apiVersion":"v1","metadata":{"name":"e"},"reason":"X"})"},
      {"", "pods",
       R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"},)"
       R"("spec":{"containers":[{"name":"c","image":"i"}]}})"},
      {"", "nodes", R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n"}})"},
      {"", "namespaces", R"({"kind":"Namespace","apiVersion":"v1","metadata":{"name":"ns"}})"},
      {"coordination.k8s.io", "leases",
       R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"l"}})"},
      {"scheduling.k8s.io", "priorityclasses",
       R"({"kind":"PriorityClass","apiVersion":"scheduling.k8s.io/v1","metadata":{"name":"pc"},)"
       R"("value":7,"globalDefault":true})"},
      {"apps", "daemonsets",
       R"({"kind":"DaemonSet","apiVersion":"apps/v1","metadata":{"name":"d"}})"},
  };
  Listers listers;
  listers.namespaces.phase = [](std::string_view) { return std::optional<std::string>("Active"); };
  listers.namespaces.annotations = [](std::string_view) {
    return std::optional<api::StringMap>(api::StringMap{});
  };
  listers.priority_classes.get = [](std::string_view) {
    return std::optional<api::PriorityClass>();
  };
  listers.priority_classes.for_each = [](const std::function<void(const api::PriorityClass&)>&) {};
  Config config;
  int checked = 0;
  for (const PluginInfo& info : KnownPlugins()) {
    Result<std::unique_ptr<Plugin>> plugin = info.make(config);
    ASSERT_TRUE(plugin) << info.name;
    for (const Kind& k : kinds) {
      for (std::string_view sub : {"", "status"}) {
        if ((*plugin)->ReadsObject(k.group, k.resource, sub)) continue;
        SCOPED_TRACE(std::string(info.name) + " " + std::string(k.resource) + "/" +
                     std::string(sub));
        ++checked;
        rapidjson::Document doc;
        doc.Parse(k.json.data(), k.json.size());
        ASSERT_FALSE(doc.HasParseError());
        rapidjson::Document before;
        before.CopyFrom(doc, before.GetAllocator());
        for (const Operation op : {Operation::kCreate, Operation::kUpdate}) {
          Attributes with{.operation = op,
                          .group = k.group,
                          .resource = k.resource,
                          .subresource = sub,
                          .namespace_ = "default",
                          .name = "x",
                          .object = &doc,
                          .old_object = op == Operation::kUpdate ? &before : nullptr};
          Attributes without = with;
          without.object = nullptr;
          without.old_object = nullptr;
          const Verdict a = (*plugin)->Admit(with, listers);
          const Verdict b = (*plugin)->Admit(without, listers);
          EXPECT_EQ(a.has_value(), b.has_value());
          const Verdict c = (*plugin)->Validate(with, listers);
          const Verdict d = (*plugin)->Validate(without, listers);
          EXPECT_EQ(c.has_value(), d.has_value());
          EXPECT_TRUE(doc == before);
        }
      }
    }
  }
  EXPECT_GT(checked, 60);
  EXPECT_FALSE(DefaultChain()->ReadsObject("", "events"));
  EXPECT_TRUE(DefaultChain()->ReadsObject("", "pods"));
  EXPECT_TRUE(DefaultChain()->ReadsObject("", "nodes"));
  EXPECT_FALSE(DefaultChain()->ReadsObject("", "pods", "status"));
}

}  // namespace
}  // namespace kt::admission
