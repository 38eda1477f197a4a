// PrioritySort (upstream pkg/scheduler/framework/plugins/queuesort): higher spec.priority first,
// then the pod that entered the queue first.
#pragma once

#include "scheduler/framework/framework.h"

namespace kt::scheduler {

inline constexpr std::string_view kPrioritySortName = "PrioritySort";

Result<std::unique_ptr<Plugin>> NewPrioritySort(const PluginArgs& args, Handle* handle);

}  // namespace kt::scheduler
