// kube-apiserver's --admission-control-config-file (upstream k8s.io/apiserver pkg/admission
// config.go): an AdmissionConfiguration, YAML or JSON, that gives plugins their configuration,
// inline or in a file of its own:
//
//   apiVersion: apiserver.config.k8s.io/v1
//   kind: AdmissionConfiguration
//   plugins:
//   - name: PodTolerationRestriction
//     configuration:                 # inline; wins over path
//       apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1
//       kind: Configuration
//       whitelist: [{operator: Exists, effect: NoSchedule}]
//   - name: SomePlugin
//     path: some-plugin.yaml         # relative to this file's directory
//
// As upstream, the file is read once at start-up and entries naming plugins kubetaint does not
// know are ignored; a plugin's own configuration is read (and its file opened) only when that
// plugin is enabled. The first entry naming a plugin is the one that counts.
//
// Errors name the file and the field:
//   unable to read admission control configuration from "a.yaml" [open a.yaml: no such file ...]
//   a.yaml: plugins[1].path: expected a string, got number
//
// Thread safety: values and reentrant functions.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "core/status.h"

namespace kt::admission {

// One plugins[] entry (upstream apiserver.AdmissionPluginConfiguration).
struct PluginConfiguration {
  std::string name;
  // Where the entry is, for errors: "admission.yaml: plugins[0]".
  std::string where;
  // `path`, made absolute against the configuration file's directory; "" when not given.
  std::string path;
  // `configuration` (the JSON of the inline object); null when not given.
  std::shared_ptr<const rapidjson::Document> configuration;
};

// The plugins[] entries of the AdmissionConfiguration in file `path` (upstream
// ReadAdmissionConfiguration): apiVersion apiserver.config.k8s.io/v1 (or the older
// apiserver.config.k8s.io/v1alpha1, apiserver.k8s.io/v1alpha1), kind AdmissionConfiguration.
Result<std::vector<PluginConfiguration>> ReadAdmissionConfiguration(const std::string& path);

// A plugin's configuration as the plugin reads it (upstream ConfigFor and
// GetAdmissionPluginConfigurationFor).
struct PluginConfig {
  // The document: the inline configuration, else the file at `path` as YAML or JSON; null when
  // the configuration names no such plugin or gives it neither.
  std::shared_ptr<const rapidjson::Document> document;
  // Where it came from, to prefix errors about it: "a.yaml: plugins[0].configuration" or the
  // plugin's own file.
  std::string source;
};
Result<PluginConfig> ConfigFor(std::span<const PluginConfiguration> plugins, std::string_view name);

}  // namespace kt::admission
