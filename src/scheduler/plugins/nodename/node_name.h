// NodeName (upstream pkg/scheduler/framework/plugins/nodename): a pod that names a node in
// spec.nodeName fits only that node.
#pragma once

#include "scheduler/framework/framework.h"

namespace kt::scheduler {

inline constexpr std::string_view kNodeNameName = "NodeName";
inline constexpr std::string_view kErrReasonNodeName =
    "node(s) didn't match the requested node name";

Result<std::unique_ptr<Plugin>> NewNodeName(const PluginArgs& args, Handle* handle);

}  // namespace kt::scheduler
