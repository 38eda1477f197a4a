// The admission chain, as in kube-apiserver's request path (DESIGN.md "The path of a request"):
// every write runs the enabled plugins' Admit (the mutating phase), then the registry validates
// the object, then every plugin's Validate (the validating phase). Plugins run in upstream's
// order; the first refusal ends the request.
//
// Which plugins run is kube-apiserver's choice too: the default-on plugins, plus
// --enable-admission-plugins, minus --disable-admission-plugins.
//
//   Config config;
//   config.disable_plugins = {"DefaultTolerationSeconds"};
//   Result<std::shared_ptr<const Chain>> chain = NewChain(config);
//   if (!chain) return Fail(chain.error().message());  // unknown plugin names, both lists
//   Attributes a{.operation = Operation::kCreate, .resource = "pods", .namespace_ = "default",
//                .name = "web", .object = &pod};
//   Verdict v = (*chain)->Admit(a, listers);
//
// Thread safety: a Chain is immutable once made and may be shared by any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "admission/config_file.h"
#include "admission/plugin.h"
#include "core/status.h"

namespace kt::admission {

// kube-apiserver's admission flags.
struct Config {
  std::vector<std::string> enable_plugins;               // --enable-admission-plugins
  std::vector<std::string> disable_plugins;              // --disable-admission-plugins
  int64_t default_not_ready_toleration_seconds = 300;    // --default-not-ready-toleration-seconds
  int64_t default_unreachable_toleration_seconds = 300;  // --default-unreachable-toleration-seconds
  // The plugins' configurations from --admission-control-config-file (config_file.h); a
  // plugin's own is read when the plugin is made.
  std::vector<PluginConfiguration> plugin_configs;
};

// A plugin kubetaint implements.
struct PluginInfo {
  std::string_view name;
  bool default_on;  // upstream DefaultOffAdmissionPlugins does not list it
  // The plugin with its configuration; errors read as kube-apiserver's
  // `couldn't init admission plugin "X": ...`.
  Result<std::unique_ptr<Plugin>> (*make)(const Config& config);
};

// Every plugin kubetaint implements, in upstream's order (kube-apiserver AllOrderedPlugins):
// NamespaceLifecycle, TaintNodesByCondition, Priority, DefaultTolerationSeconds,
// PodTolerationRestriction, ExtendedResourceToleration. On by default as upstream:
// NamespaceLifecycle, TaintNodesByCondition, Priority and DefaultTolerationSeconds.
std::span<const PluginInfo> KnownPlugins();

// The plugins that run, in `known`'s order: those on by default or enabled, less those disabled
// (upstream AdmissionOptions.enabledPluginNames). The flags are checked first as upstream's
// AdmissionOptions.Validate does, and its errors reported as kube-apiserver prints them:
// `enable-admission-plugins plugin "X" is unknown`, `disable-admission-plugins plugin "X" is
// unknown`, `[A B] in enable-admission-plugins and disable-admission-plugins overlapped`; more
// than one error reads `[first, second]`.
Result<std::vector<const PluginInfo*>> EnabledPlugins(std::span<const PluginInfo> known,
                                                      const Config& config);

class Chain {
 public:
  explicit Chain(std::vector<std::unique_ptr<Plugin>> plugins) : plugins_(std::move(plugins)) {}

  // Every plugin's Admit in order, until one refuses.
  Verdict Admit(Attributes& a, const Listers& listers) const;
  // Every plugin's Validate in order, until one refuses.
  Verdict Validate(const Attributes& a, const Listers& listers) const;
  // Whether any plugin may read or change the object of a request for `resource` (or its
  // `subresource`; Plugin::ReadsObject).
  bool ReadsObject(std::string_view group, std::string_view resource,
                   std::string_view subresource = {}) const;
  // The plugins' names, in the order they run.
  std::vector<std::string_view> Names() const;

 private:
  std::vector<std::unique_ptr<Plugin>> plugins_;
};

// The chain `config` asks for, from KnownPlugins(); errors as EnabledPlugins, then those of
// the enabled plugins' configurations.
Result<std::shared_ptr<const Chain>> NewChain(const Config& config);
// The chain of kube-apiserver's defaults (Config{}), made once and shared.
std::shared_ptr<const Chain> DefaultChain();

}  // namespace kt::admission
