// A scheduling profile: which plugins run at which extension point, with which weights and
// arguments (kubescheduler.config.k8s.io/v1 KubeSchedulerProfile, after defaulting).
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/types.h"

namespace kt::scheduler {

struct PluginRef {
  std::string name;
  int32_t weight = 0;  // Score only; 0 means 1
};

struct PluginSet {
  std::vector<PluginRef> enabled;
  std::vector<std::string> disabled;  // "*" disables every default (and multiPoint) plugin
};

struct Plugins {
  PluginSet pre_enqueue, queue_sort, pre_filter, filter, post_filter, pre_score, score, reserve,
      permit, pre_bind, bind, post_bind, multi_point;
};

// NodeResourcesFitArgs.
struct NodeResourcesFitArgs {
  struct ResourceSpec {
    std::string name;
    int64_t weight = 1;
  };
  std::string scoring_strategy = "LeastAllocated";  // LeastAllocated | MostAllocated
  std::vector<ResourceSpec> resources = {{"cpu", 1}, {"memory", 1}};
  std::vector<std::string> ignored_resources;
  std::vector<std::string> ignored_resource_groups;
};

// NodeResourcesBalancedAllocationArgs.
struct BalancedAllocationArgs {
  std::vector<NodeResourcesFitArgs::ResourceSpec> resources = {{"cpu", 1}, {"memory", 1}};
};

// NodeAffinityArgs.
struct NodeAffinityArgs {
  std::optional<api::NodeAffinity> added_affinity;
};

// DefaultPreemptionArgs.
struct DefaultPreemptionArgs {
  int32_t min_candidate_nodes_percentage = 10;
  int32_t min_candidate_nodes_absolute = 100;
};

struct PluginArgs {
  NodeResourcesFitArgs node_resources_fit;
  BalancedAllocationArgs balanced_allocation;
  NodeAffinityArgs node_affinity;
  DefaultPreemptionArgs default_preemption;
};

// The default plugins, all under multiPoint (upstream getDefaultPlugins, without the volume,
// topology-spread, inter-pod-affinity, image-locality and DRA plugins, which kubetaint does not
// have).
Plugins DefaultPlugins();

// Upstream mergePlugins: the defaults with a profile's own enabled/disabled lists applied.
Plugins MergePlugins(const Plugins& defaults, const Plugins& custom);

struct Profile {
  std::string scheduler_name = "default-scheduler";
  std::optional<int32_t> percentage_of_nodes_to_score;
  Plugins plugins = DefaultPlugins();  // after merging with the defaults
  PluginArgs args;
};

}  // namespace kt::scheduler
