#include "api/scheduling.h"

#include <vector>

namespace kt::api {

namespace {

PriorityClass SystemClass(std::string name, int32_t value, std::string description) {
  PriorityClass pc;
  pc.meta.name = std::move(name);
  pc.value = value;
  pc.description = std::move(description);
  pc.preemption_policy = "PreemptLowerPriority";
  return pc;
}

}  // namespace

std::span<const PriorityClass> SystemPriorityClasses() {
  static const auto* classes = new std::vector<PriorityClass>{
      SystemClass("system-node-critical", kSystemCriticalPriority + 1000,
                  "Used for system critical pods that must not be moved from their current node."),
      SystemClass("system-cluster-critical", kSystemCriticalPriority,
                  "Used for system critical pods that must run in the cluster, but can be moved "
                  "to another node if necessary."),
  };
  return *classes;
}

std::string IsKnownSystemPriorityClass(std::string_view name, int32_t value, bool global_default) {
  for (const PriorityClass& pc : SystemPriorityClasses()) {
    if (pc.meta.name != name) continue;
    if (pc.value != value) {
      return "value of " + pc.meta.name + " PriorityClass must be " + std::to_string(pc.value);
    }
    if (global_default) return "globalDefault of " + pc.meta.name + " PriorityClass must be false";
    return "";
  }
  return std::string(name) + " is not a known system priority class";
}

}  // namespace kt::api
