// NodeAffinity (upstream pkg/scheduler/framework/plugins/nodeaffinity): nodeSelector and
// requiredDuringSchedulingIgnoredDuringExecution filter nodes; preferred terms add their weights
// to the score. A pod whose required terms all name nodes by metadata.name narrows the cycle to
// those nodes (PreFilterResult). The profile's addedAffinity applies to every pod.
#pragma once

#include "scheduler/framework/framework.h"

namespace kt::scheduler {

inline constexpr std::string_view kNodeAffinityName = "NodeAffinity";
inline constexpr std::string_view kErrReasonPod =
    "node(s) didn't match Pod's node affinity/selector";
inline constexpr std::string_view kErrReasonEnforced =
    "node(s) didn't match scheduler-enforced node affinity";
inline constexpr std::string_view kErrReasonConflict = "pod affinity terms conflict";

Result<std::unique_ptr<Plugin>> NewNodeAffinity(const PluginArgs& args, Handle* handle);

}  // namespace kt::scheduler
