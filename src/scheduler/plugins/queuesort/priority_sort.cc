#include "scheduler/plugins/queuesort/priority_sort.h"

namespace kt::scheduler {

namespace {

class PrioritySort : public QueueSortPlugin {
 public:
  std::string_view Name() const override { return kPrioritySortName; }

  bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override {
    const int32_t p1 = a.pod->priority;
    const int32_t p2 = b.pod->priority;
    return p1 > p2 || (p1 == p2 && a.timestamp < b.timestamp);
  }
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewPrioritySort(const PluginArgs&, Handle*) {
  return std::unique_ptr<Plugin>(new PrioritySort());
}

}  // namespace kt::scheduler
