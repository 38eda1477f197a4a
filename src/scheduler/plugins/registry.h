// The in-tree plugins kubetaint implements, by upstream name.
#pragma once

#include "scheduler/framework/framework.h"

namespace kt::scheduler {

// PrioritySort, SchedulingGates, NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
// NodePorts, NodeResourcesFit, NodeResourcesBalancedAllocation, DefaultPreemption,
// DefaultBinder; upstream's other default plugins (volumes, topology spread, inter-pod affinity,
// image locality, DRA) are known as unsupported.
PluginRegistry InTreeRegistry();

}  // namespace kt::scheduler
