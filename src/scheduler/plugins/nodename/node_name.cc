#include "scheduler/plugins/nodename/node_name.h"

namespace kt::scheduler {

namespace {

class NodeName : public FilterPlugin, public EnqueueExtensions {
 public:
  std::string_view Name() const override { return kNodeNameName; }

  Status Filter(const PodInfo& pod, const NodeInfo& node) override {
    const std::string& wanted = pod.pod().spec.node_name;
    if (wanted.empty() || wanted == node.name()) return Status();
    static const Status* s = new Status(Status::Unresolvable(std::string(kErrReasonNodeName)));
    return *s;
  }

  std::vector<ClusterEventWithHint> EventsToRegister() override {
    return {{{EventResource::kNode, kAdd}, nullptr}};
  }
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewNodeName(const PluginArgs&, Handle*) {
  return std::unique_ptr<Plugin>(new NodeName());
}

}  // namespace kt::scheduler
