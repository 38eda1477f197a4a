#include "controllers/nodelifecycle/taints.h"

#include <algorithm>
#include <string>

namespace kt::controllers::nodelifecycle {

namespace {

Taint Make(std::string_view key, std::string_view effect) {
  return Taint{std::string(key), "", std::string(effect), std::nullopt};
}

bool Matches(const Taint& a, const Taint& b) { return a.key == b.key && a.effect == b.effect; }

// The taint key for a node condition in a status (nodeConditionToTaintKeyStatusMap), or "".
std::string_view ConditionTaintKey(std::string_view type, std::string_view status) {
  if (type == "Ready") {
    if (status == "False") return kTaintNodeNotReady;
    if (status == "Unknown") return kTaintNodeUnreachable;
    return {};
  }
  if (status != "True") return {};
  if (type == "MemoryPressure") return kTaintNodeMemoryPressure;
  if (type == "DiskPressure") return kTaintNodeDiskPressure;
  if (type == "NetworkUnavailable") return kTaintNodeNetworkUnavailable;
  if (type == "PIDPressure") return kTaintNodePIDPressure;
  return {};
}

// A NoSchedule taint the pass manages: a condition taint's key (taintKeyToNodeConditionMap) or
// the unschedulable one.
bool Managed(const Taint& t) {
  if (t.effect != kEffectNoSchedule) return false;
  for (std::string_view k :
       {kTaintNodeNotReady, kTaintNodeUnreachable, kTaintNodeNetworkUnavailable,
        kTaintNodeMemoryPressure, kTaintNodeDiskPressure, kTaintNodePIDPressure,
        kTaintNodeUnschedulable}) {
    if (t.key == k) return true;
  }
  return false;
}

}  // namespace

const Taint& UnreachableNoExecute() {
  static const Taint taint = Make(kTaintNodeUnreachable, kEffectNoExecute);
  return taint;
}

const Taint& NotReadyNoExecute() {
  static const Taint taint = Make(kTaintNodeNotReady, kEffectNoExecute);
  return taint;
}

bool TaintExists(const std::vector<Taint>& taints, const Taint& taint) {
  return std::any_of(taints.begin(), taints.end(),
                     [&](const Taint& t) { return Matches(t, taint); });
}

std::vector<Taint> NoScheduleTaints(const api::Node& node) {
  std::vector<Taint> out;
  for (const api::Condition& c : node.status.conditions) {
    const std::string_view key = ConditionTaintKey(c.type, c.status);
    if (!key.empty()) out.push_back(Make(key, kEffectNoSchedule));
  }
  if (node.spec.unschedulable) out.push_back(Make(kTaintNodeUnschedulable, kEffectNoSchedule));
  return out;
}

TaintChange NoScheduleTaintChange(const api::Node& node) {
  const std::vector<Taint> want = NoScheduleTaints(node);
  std::vector<Taint> have;
  for (const Taint& t : node.spec.taints) {
    if (Managed(t)) have.push_back(t);
  }
  TaintChange change;
  for (const Taint& t : want) {
    if (!TaintExists(have, t)) change.add.push_back(t);
  }
  for (const Taint& t : have) {
    if (!TaintExists(want, t)) change.remove.push_back(t);
  }
  return change;
}

std::optional<TaintChange> NoExecuteChange(std::string_view ready_status, std::string time_added) {
  const bool not_ready = ready_status == "False";
  if (!not_ready && ready_status != "Unknown") return std::nullopt;
  TaintChange change;
  change.add.push_back(not_ready ? NotReadyNoExecute() : UnreachableNoExecute());
  change.add.back().time_added = std::move(time_added);
  change.remove.push_back(not_ready ? UnreachableNoExecute() : NotReadyNoExecute());
  return change;
}

std::optional<std::vector<Taint>> ApplyTaintChange(const std::vector<Taint>& taints,
                                                   const TaintChange& change) {
  std::vector<Taint> out = taints;
  bool changed = false;
  for (const Taint& add : change.add) {
    auto it = std::find_if(out.begin(), out.end(), [&](const Taint& t) { return Matches(t, add); });
    if (it == out.end()) {
      out.push_back(add);
      changed = true;
    } else if (it->value != add.value) {
      *it = add;
      changed = true;
    }
  }
  for (const Taint& remove : change.remove) {
    const auto end =
        std::remove_if(out.begin(), out.end(), [&](const Taint& t) { return Matches(t, remove); });
    if (end != out.end()) {
      out.erase(end, out.end());
      changed = true;
    }
  }
  if (!changed) return std::nullopt;
  return out;
}

}  // namespace kt::controllers::nodelifecycle
