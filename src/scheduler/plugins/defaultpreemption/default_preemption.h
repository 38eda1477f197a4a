// DefaultPreemption (upstream pkg/scheduler/framework/plugins/defaultpreemption and
// framework/preemption): when a pod fits no node, find a node where evicting lower-priority pods
// makes it fit, nominate the pod to that node, and evict them (semantics.md §9.3).
//
//   - Only nodes that rejected the pod with plain Unschedulable are candidates: a taint, a
//     cordon or a node selector (UnschedulableAndUnresolvable) cannot be fixed by preemption.
//   - On a node, every pod of strictly lower priority is a potential victim; then as many as
//     possible are reprieved, most important first (priority, then the earliest start).
//   - Among candidate nodes: the lowest highest-victim priority, then the smallest sum of
//     priorities (each offset by 2^31), the fewest victims, the latest start of the
//     highest-priority victims; remaining ties go to the first node in scan order.
//   - Victims get the DisruptionTarget condition (reason PreemptionByScheduler), are deleted,
//     and a Preempted event names the preemptor. Lower-priority pods nominated to the node lose
//     their nomination. While this runs the preemptor waits (PreEnqueue), as upstream's
//     asynchronous preemption.
//   - `preemptionPolicy: Never` never preempts. PodDisruptionBudgets are not served by kubetaint,
//     so no victim violates one.
#pragma once

#include "scheduler/framework/framework.h"

namespace kt::scheduler {

inline constexpr std::string_view kDefaultPreemptionName = "DefaultPreemption";

Result<std::unique_ptr<Plugin>> NewDefaultPreemption(const PluginArgs& args, Handle* handle);

}  // namespace kt::scheduler
