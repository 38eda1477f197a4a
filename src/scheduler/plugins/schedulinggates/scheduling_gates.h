// SchedulingGates (upstream pkg/scheduler/framework/plugins/schedulinggates): a pod with
// spec.schedulingGates stays out of the active queue until its gates are removed.
#pragma once

#include "scheduler/framework/framework.h"

namespace kt::scheduler {

inline constexpr std::string_view kSchedulingGatesName = "SchedulingGates";

Result<std::unique_ptr<Plugin>> NewSchedulingGates(const PluginArgs& args, Handle* handle);

}  // namespace kt::scheduler
