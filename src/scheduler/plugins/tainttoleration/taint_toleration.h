// TaintToleration (upstream pkg/scheduler/framework/plugins/tainttoleration): a node's
// NoSchedule and NoExecute taints keep out pods that do not tolerate them; its PreferNoSchedule
// taints that a pod does not tolerate lower the node's score (semantics.md §5.1).
//
// Nodes with equal taints (NodeInfo::taint_set) share one Filter verdict per cycle, so a pod
// against 5,000 nodes matches tolerations once per distinct taint list, not once per node.
#pragma once

#include <memory>

#include "scheduler/framework/framework.h"

namespace kt::scheduler {

inline constexpr std::string_view kTaintTolerationName = "TaintToleration";
// The Filter failure reason (1.35, PR #134740).
inline constexpr std::string_view kErrReasonUntoleratedTaint = "node(s) had untolerated taint(s)";

Result<std::unique_ptr<Plugin>> NewTaintToleration(const PluginArgs& args, Handle* handle);

}  // namespace kt::scheduler
