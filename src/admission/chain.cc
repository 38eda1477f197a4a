#include "admission/chain.h"

#include <algorithm>
#include <set>

#include "admission/default_toleration_seconds.h"
#include "admission/extended_resource_toleration.h"
#include "admission/namespace_lifecycle.h"
#include "admission/pod_toleration_restriction.h"
#include "admission/priority.h"
#include "admission/taint_nodes_by_condition.h"
#include "core/strings.h"

namespace kt::admission {

namespace {

template <class P>
Result<std::unique_ptr<Plugin>> Make(const Config& /*config*/) {
  return std::make_unique<P>();
}

constexpr PluginInfo kKnownPlugins[] = {
    {NamespaceLifecycle::kName, true, Make<NamespaceLifecycle>},
    {TaintNodesByCondition::kName, true, Make<TaintNodesByCondition>},
    {Priority::kName, true, Make<Priority>},
    {DefaultTolerationSeconds::kName, true,
     [](const Config& c) -> Result<std::unique_ptr<Plugin>> {
       return std::make_unique<DefaultTolerationSeconds>(c.default_not_ready_toleration_seconds,
                                                         c.default_unreachable_toleration_seconds);
     }},
    {PodTolerationRestriction::kName, false,
     [](const Config& c) -> Result<std::unique_ptr<Plugin>> {
       Result<PluginConfig> file = ConfigFor(c.plugin_configs, PodTolerationRestriction::kName);
       if (!file) return Err(file.error());
       Result<PodTolerationRestrictionConfig> config =
           LoadPodTolerationRestrictionConfig(file->document.get(), file->source);
       if (!config) return Err(config.error());
       return std::make_unique<PodTolerationRestriction>(std::move(*config));
     }},
    {ExtendedResourceToleration::kName, false, Make<ExtendedResourceToleration>},
};

bool Contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Go's utilerrors.NewAggregate(errs).Error(): one message as it is, several de-duplicated in
// brackets.
std::string Aggregate(const std::vector<std::string>& errors) {
  std::vector<std::string> seen;
  for (const std::string& e : errors) {
    if (!Contains(seen, e)) seen.push_back(e);
  }
  if (seen.size() == 1) return seen[0];
  std::string out = "[";
  out += Join(seen, ", ");
  out += "]";
  return out;
}

}  // namespace

std::span<const PluginInfo> KnownPlugins() { return kKnownPlugins; }

Result<std::vector<const PluginInfo*>> EnabledPlugins(std::span<const PluginInfo> known,
                                                      const Config& config) {
  auto is_known = [&](std::string_view name) {
    return std::any_of(known.begin(), known.end(),
                       [&](const PluginInfo& p) { return p.name == name; });
  };
  std::vector<std::string> errors;
  for (const std::string& name : config.enable_plugins) {
    if (!is_known(name))
      errors.push_back("enable-admission-plugins plugin \"" + name + "\" is unknown");
  }
  for (const std::string& name : config.disable_plugins) {
    if (!is_known(name)) {
      errors.push_back("disable-admission-plugins plugin \"" + name + "\" is unknown");
    }
  }
  // Go's %v of the sorted intersection: [A B].
  std::set<std::string> both;
  for (const std::string& name : config.enable_plugins) {
    if (Contains(config.disable_plugins, name)) both.insert(name);
  }
  if (!both.empty()) {
    std::string overlap = "[";
    overlap += Join(std::vector<std::string>(both.begin(), both.end()), " ");
    overlap += "] in enable-admission-plugins and disable-admission-plugins overlapped";
    errors.push_back(std::move(overlap));
  }
  if (!errors.empty()) return Err(BadRequest(Aggregate(errors)));
  std::vector<const PluginInfo*> out;
  for (const PluginInfo& p : known) {
    const bool on = (p.default_on || Contains(config.enable_plugins, p.name)) &&
                    !Contains(config.disable_plugins, p.name);
    if (on) out.push_back(&p);
  }
  return out;
}

Verdict Chain::Admit(Attributes& a, const Listers& listers) const {
  for (const std::unique_ptr<Plugin>& p : plugins_) {
    if (Verdict v = p->Admit(a, listers); !v) return v;
  }
  return Allow();
}

Verdict Chain::Validate(const Attributes& a, const Listers& listers) const {
  for (const std::unique_ptr<Plugin>& p : plugins_) {
    if (Verdict v = p->Validate(a, listers); !v) return v;
  }
  return Allow();
}

bool Chain::ReadsObject(std::string_view group, std::string_view resource,
                        std::string_view subresource) const {
  for (const std::unique_ptr<Plugin>& p : plugins_) {
    if (p->ReadsObject(group, resource, subresource)) return true;
  }
  return false;
}

std::vector<std::string_view> Chain::Names() const {
  std::vector<std::string_view> out;
  for (const std::unique_ptr<Plugin>& p : plugins_) out.push_back(p->Name());
  return out;
}

Result<std::shared_ptr<const Chain>> NewChain(const Config& config) {
  Result<std::vector<const PluginInfo*>> enabled = EnabledPlugins(KnownPlugins(), config);
  if (!enabled) return Err(enabled.error());
  std::vector<std::unique_ptr<Plugin>> plugins;
  for (const PluginInfo* p : *enabled) {
    Result<std::unique_ptr<Plugin>> plugin = p->make(config);
    if (!plugin) {
      return Err(plugin.error().WithPrefix("couldn't init admission plugin \"" +
                                           std::string(p->name) + "\": "));
    }
    plugins.push_back(std::move(*plugin));
  }
  return std::make_shared<const Chain>(std::move(plugins));
}

std::shared_ptr<const Chain> DefaultChain() {
  static const std::shared_ptr<const Chain> chain = *NewChain(Config{});
  return chain;
}

}  // namespace kt::admission
