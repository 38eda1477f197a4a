#include "scheduler/plugins/schedulinggates/scheduling_gates.h"

namespace kt::scheduler {

namespace {

class SchedulingGates : public PreEnqueuePlugin, public EnqueueExtensions {
 public:
  std::string_view Name() const override { return kSchedulingGatesName; }

  Status PreEnqueue(const PodInfo& pod) override {
    const auto& gates = pod.pod().spec.scheduling_gates;
    if (gates.empty()) return Status();
    std::string names = "[";
    for (size_t i = 0; i < gates.size(); ++i) {
      if (i > 0) names += ' ';
      names += gates[i];
    }
    return Status::Unresolvable("waiting for scheduling gates: " + names + "]");
  }

  std::vector<ClusterEventWithHint> EventsToRegister() override {
    return {{{EventResource::kPod, kUpdatePodSchedulingGatesEliminated},
             [](const PodInfo& pod, const ObjectPtr&, const ObjectPtr& new_obj) {
               const api::Pod* p = new_obj ? new_obj->As<api::Pod>() : nullptr;
               if (p == nullptr) return QueueingHint::kQueue;
               return p->meta.uid == pod.uid() ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
             }}};
  }
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewSchedulingGates(const PluginArgs&, Handle*) {
  return std::unique_ptr<Plugin>(new SchedulingGates());
}

}  // namespace kt::scheduler
