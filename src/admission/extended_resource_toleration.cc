#include "admission/extended_resource_toleration.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/codec.h"
#include "core/validation.h"

namespace kt::admission {

namespace {

// Upstream AddOrUpdateTolerationInPod: nothing changes if the list holds `t` itself; otherwise
// every toleration that MatchToleration pairs with `t` is replaced by it, or `t` is appended.
// Returns whether the list changed.
bool AddOrUpdateToleration(std::vector<Toleration>& list, const Toleration& t) {
  if (std::find(list.begin(), list.end(), t) != list.end()) return false;
  bool matched = false;
  for (Toleration& have : list) {
    if (MatchToleration(t, have)) {
      have = t;
      matched = true;
    }
  }
  if (!matched) list.push_back(t);
  return true;
}

}  // namespace

bool IsExtendedResourceName(std::string_view name) {
  const bool native = name.find('/') == std::string_view::npos ||
                      name.find("kubernetes.io/") != std::string_view::npos;
  if (native || name.starts_with("requests.")) return false;
  return IsQualifiedName("requests." + std::string(name)).empty();
}

Verdict ExtendedResourceToleration::Admit(Attributes& a, const Listers& /*listers*/) const {
  if (a.operation == Operation::kDelete || !a.IsPods() || !a.subresource.empty()) return Allow();
  if (a.object == nullptr) return Allow();
  Result<api::Pod> pod = api::DecodePod(*a.object);
  if (!pod) return Allow();     // decoding refuses the pod after admission
  std::set<std::string> names;  // sorted, as upstream's sets.List()
  for (const auto* containers : {&pod->spec.containers, &pod->spec.init_containers}) {
    for (const api::Container& c : *containers) {
      for (const auto& [name, quantity] : c.requests) {
        // A request of zero needs no such node: it gets no toleration (upstream's does).
        if (IsExtendedResourceName(name) && !quantity.IsZero()) names.insert(name);
      }
    }
  }
  if (names.empty()) return Allow();
  std::vector<Toleration> tolerations(pod->spec.tolerations.begin(), pod->spec.tolerations.end());
  bool changed = false;
  for (const std::string& name : names) {
    changed |=
        AddOrUpdateToleration(tolerations, Toleration{.key = name,
                                                      .op = std::string(kOpExists),
                                                      .value = "",
                                                      .effect = std::string(kEffectNoSchedule),
                                                      .toleration_seconds = std::nullopt});
  }
  if (changed) (void)api::SetTolerations(*a.object, tolerations);
  return Allow();
}

}  // namespace kt::admission
