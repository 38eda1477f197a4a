// NodeUnschedulable (upstream pkg/scheduler/framework/plugins/nodeunschedulable): a cordoned node
// (spec.unschedulable) admits only pods that tolerate node.kubernetes.io/unschedulable:NoSchedule
// (semantics.md §5.2).
#pragma once

#include "scheduler/framework/framework.h"

namespace kt::scheduler {

inline constexpr std::string_view kNodeUnschedulableName = "NodeUnschedulable";
inline constexpr std::string_view kErrReasonUnschedulable = "node(s) were unschedulable";

Result<std::unique_ptr<Plugin>> NewNodeUnschedulable(const PluginArgs& args, Handle* handle);

}  // namespace kt::scheduler
