#include "scheduler/plugins/nodeports/node_ports.h"

namespace kt::scheduler {

namespace {

bool FitsPorts(const std::vector<HostPort>& wanted, const HostPortInfo& used) {
  for (const HostPort& p : wanted) {
    if (used.CheckConflict(p)) return false;
  }
  return true;
}

class NodePorts : public PreFilterPlugin, public FilterPlugin, public EnqueueExtensions {
 public:
  std::string_view Name() const override { return kNodePortsName; }

  Status PreFilter(const PodInfo& pod, PreFilterResult*) override {
    return pod.host_ports.empty() ? Status::Skip() : Status();
  }

  Status Filter(const PodInfo& pod, const NodeInfo& node) override {
    if (FitsPorts(pod.host_ports, node.used_ports())) return Status();
    static const Status* s = new Status(Status::Unschedulable(std::string(kErrReasonNodePorts)));
    return *s;
  }

  std::vector<ClusterEventWithHint> EventsToRegister() override {
    return {
        {{EventResource::kPod, kDelete},
         [](const PodInfo& pod, const ObjectPtr& old_obj, const ObjectPtr&) {
           const api::Pod* deleted = old_obj ? old_obj->As<api::Pod>() : nullptr;
           if (deleted == nullptr) return QueueingHint::kQueue;
           // A pod that held no node frees no ports.
           if (deleted->spec.node_name.empty() && deleted->status.nominated_node_name.empty()) {
             return QueueingHint::kQueueSkip;
           }
           std::vector<HostPort> freed = PodHostPorts(*deleted);
           if (freed.empty()) return QueueingHint::kQueueSkip;
           HostPortInfo only_freed;
           for (const HostPort& p : freed) only_freed.Add(p);
           // The target would have fit beside the deleted pod anyway: nothing changed for it.
           return FitsPorts(pod.host_ports, only_freed) ? QueueingHint::kQueueSkip
                                                        : QueueingHint::kQueue;
         }},
        {{EventResource::kNode, kAdd}, nullptr},
    };
  }
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewNodePorts(const PluginArgs&, Handle*) {
  return std::unique_ptr<Plugin>(new NodePorts());
}

}  // namespace kt::scheduler
