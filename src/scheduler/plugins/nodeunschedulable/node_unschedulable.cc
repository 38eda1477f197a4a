#include "scheduler/plugins/nodeunschedulable/node_unschedulable.h"

#include "core/taint.h"

namespace kt::scheduler {

namespace {

const Taint& UnschedulableTaint() {
  static const Taint* t =
      new Taint{std::string(kTaintNodeUnschedulable), "", std::string(kEffectNoSchedule), {}};
  return *t;
}

class NodeUnschedulable : public FilterPlugin, public EnqueueExtensions {
 public:
  explicit NodeUnschedulable(bool gate) : gate_(gate) {}
  std::string_view Name() const override { return kNodeUnschedulableName; }

  Status Filter(const PodInfo& pod, const NodeInfo& node) override {
    if (!node.unschedulable()) return Status();
    if (TolerationsTolerateTaint(pod.pod().spec.tolerations, UnschedulableTaint(), gate_)) {
      return Status();
    }
    static const Status* s = new Status(Status::Unresolvable(std::string(kErrReasonUnschedulable)));
    return *s;
  }

  bool FilterBatch(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   std::span<uint8_t> rejected) override {
    int tolerates = -1;  // decided at the first cordoned node
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (!nodes[i]->unschedulable()) continue;
      if (tolerates < 0) {
        tolerates =
            TolerationsTolerateTaint(pod.pod().spec.tolerations, UnschedulableTaint(), gate_);
      }
      if (tolerates == 0) rejected[i] = 1;
    }
    return true;
  }

  std::vector<ClusterEventWithHint> EventsToRegister() override {
    const bool gate = gate_;
    return {
        {{EventResource::kNode, kAdd | kUpdateNodeTaint},
         [](const PodInfo&, const ObjectPtr& old_obj, const ObjectPtr& new_obj) {
           const api::Node* now = new_obj ? new_obj->As<api::Node>() : nullptr;
           if (now == nullptr) return QueueingHint::kQueue;
           const api::Node* before = old_obj ? old_obj->As<api::Node>() : nullptr;
           if (old_obj && before == nullptr) return QueueingHint::kQueue;  // not a node
           if (before == nullptr) {
             return now->spec.unschedulable ? QueueingHint::kQueueSkip : QueueingHint::kQueue;
           }
           return before->spec.unschedulable && !now->spec.unschedulable ? QueueingHint::kQueue
                                                                         : QueueingHint::kQueueSkip;
         }},
        {{EventResource::kPod, kUpdatePodToleration},
         [gate](const PodInfo& pod, const ObjectPtr&, const ObjectPtr& new_obj) {
           const api::Pod* p = new_obj ? new_obj->As<api::Pod>() : nullptr;
           if (p == nullptr) return QueueingHint::kQueue;
           if (p->meta.uid != pod.uid()) return QueueingHint::kQueueSkip;
           return TolerationsTolerateTaint(p->spec.tolerations, UnschedulableTaint(), gate)
                      ? QueueingHint::kQueue
                      : QueueingHint::kQueueSkip;
         }},
    };
  }

 private:
  const bool gate_;
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewNodeUnschedulable(const PluginArgs&, Handle* handle) {
  return std::unique_ptr<Plugin>(
      new NodeUnschedulable(handle->Gates().taint_toleration_comparison_operators));
}

}  // namespace kt::scheduler
