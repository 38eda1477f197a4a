// NodePorts (upstream pkg/scheduler/framework/plugins/nodeports): a pod's host ports must be
// free on the node (same protocol and port on the same IP, 0.0.0.0 meaning every IP).
#pragma once

#include "scheduler/framework/framework.h"

namespace kt::scheduler {

inline constexpr std::string_view kNodePortsName = "NodePorts";
inline constexpr std::string_view kErrReasonNodePorts =
    "node(s) didn't have free ports for the requested pod ports";

Result<std::unique_ptr<Plugin>> NewNodePorts(const PluginArgs& args, Handle* handle);

}  // namespace kt::scheduler
