// KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), the file kube-scheduler reads
// with --config, after upstream's defaulting and validation:
//
//   apiVersion: kubescheduler.config.k8s.io/v1
//   kind: KubeSchedulerConfiguration
//   percentageOfNodesToScore: 50
//   podInitialBackoffSeconds: 1
//   podMaxBackoffSeconds: 10
//   profiles:
//   - schedulerName: default-scheduler
//     plugins:
//       score:
//         disabled: [{name: NodeResourcesBalancedAllocation}]
//         enabled: [{name: TaintToleration, weight: 5}]
//     pluginConfig:
//     - name: NodeResourcesFit
//       args: {scoringStrategy: {type: MostAllocated}}
//
// Each profile's plugins are the defaults with its own enabled/disabled lists merged in
// (upstream mergePlugins); without profiles there is one, "default-scheduler". Unknown fields
// are errors (upstream decodes strictly). Fields kubetaint has no use for (leaderElection,
// clientConnection, parallelism, extenders, ...) are accepted and ignored, except extenders,
// which it cannot honour.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "scheduler/framework/profile.h"

namespace kt::scheduler {

struct SchedulerConfig {
  std::vector<Profile> profiles;
  int64_t pod_initial_backoff_seconds = 1;
  int64_t pod_max_backoff_seconds = 10;
};

// The configuration without a file: one default profile.
SchedulerConfig DefaultSchedulerConfig();

// Reads and validates a configuration file; errors name the file and the field.
Result<SchedulerConfig> LoadSchedulerConfig(const std::string& path);
// The same from YAML or JSON text (`source` names it in errors).
Result<SchedulerConfig> ParseSchedulerConfig(std::string_view text, std::string_view source);

}  // namespace kt::scheduler
