// NodeResourcesFit and NodeResourcesBalancedAllocation (upstream
// pkg/scheduler/framework/plugins/noderesources).
//
// Fit: the pod's requests (containers summed, init containers and sidecars as upstream, pod-level
// requests, overhead) must fit what the node has left of its allocatable cpu, memory,
// ephemeral-storage, pod count and extended resources (nvidia.com/gpu, ...); "Insufficient cpu"
// and friends otherwise, unresolvable when the request exceeds the node's whole allocatable.
// It scores nodes by LeastAllocated (default) or MostAllocated over its scoring resources,
// counting 100m cpu / 200Mi memory for containers that request none.
//
// BalancedAllocation: favours nodes whose resource fractions stay balanced after placing the pod.
#pragma once

#include <string>
#include <vector>

#include "scheduler/framework/framework.h"

namespace kt::scheduler {

inline constexpr std::string_view kNodeResourcesFitName = "NodeResourcesFit";
inline constexpr std::string_view kBalancedAllocationName = "NodeResourcesBalancedAllocation";

// One resource the pod does not fit (upstream InsufficientResource).
struct InsufficientResource {
  std::string reason;  // "Insufficient cpu", "Too many pods"
  int64_t requested = 0;
  int64_t used = 0;
  int64_t capacity = 0;
  bool unresolvable = false;  // the request exceeds the node's allocatable outright
};

// What the pod lacks on the node, in upstream's order (pods, cpu, memory, ephemeral-storage,
// then extended resources by name). Extended resources named in `ignored` or in a group of
// `ignored_groups` are not checked.
std::vector<InsufficientResource> InsufficientResources(
    const PodInfo& pod, const NodeInfo& node, const std::vector<std::string>& ignored = {},
    const std::vector<std::string>& ignored_groups = {});

Result<std::unique_ptr<Plugin>> NewNodeResourcesFit(const PluginArgs& args, Handle* handle);
Result<std::unique_ptr<Plugin>> NewBalancedAllocation(const PluginArgs& args, Handle* handle);

}  // namespace kt::scheduler
