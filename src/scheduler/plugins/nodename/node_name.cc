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

  bool FilterBatch(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   std::span<uint8_t> rejected) override {
    if (nodes.empty()) return true;
    const std::string& wanted = pod.pod().spec.node_name;
    if (wanted.empty()) return true;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (wanted != nodes[i]->name()) rejected[i] = 1;
    }
    return true;
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
