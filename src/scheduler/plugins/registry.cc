#include "scheduler/plugins/registry.h"

#include "scheduler/plugins/defaultbinder/default_binder.h"
#include "scheduler/plugins/defaultpreemption/default_preemption.h"
#include "scheduler/plugins/nodeaffinity/node_affinity.h"
#include "scheduler/plugins/nodename/node_name.h"
#include "scheduler/plugins/nodeports/node_ports.h"
#include "scheduler/plugins/noderesources/fit.h"
#include "scheduler/plugins/nodeunschedulable/node_unschedulable.h"
#include "scheduler/plugins/queuesort/priority_sort.h"
#include "scheduler/plugins/schedulinggates/scheduling_gates.h"
#include "scheduler/plugins/tainttoleration/taint_toleration.h"

namespace kt::scheduler {

PluginRegistry InTreeRegistry() {
  PluginRegistry r;
  r.Register(std::string(kPrioritySortName), NewPrioritySort);
  r.Register(std::string(kSchedulingGatesName), NewSchedulingGates);
  r.Register(std::string(kNodeUnschedulableName), NewNodeUnschedulable);
  r.Register(std::string(kNodeNameName), NewNodeName);
  r.Register(std::string(kTaintTolerationName), NewTaintToleration);
  r.Register(std::string(kNodeAffinityName), NewNodeAffinity);
  r.Register(std::string(kNodePortsName), NewNodePorts);
  r.Register(std::string(kNodeResourcesFitName), NewNodeResourcesFit);
  r.Register(std::string(kBalancedAllocationName), NewBalancedAllocation);
  r.Register(std::string(kDefaultPreemptionName), NewDefaultPreemption);
  r.Register(std::string(kDefaultBinderName), NewDefaultBinder);
  for (const char* name :
       {"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
        "PodTopologySpread", "InterPodAffinity", "ImageLocality", "DynamicResources"}) {
    r.RegisterUnsupported(name);
  }
  return r;
}

}  // namespace kt::scheduler
