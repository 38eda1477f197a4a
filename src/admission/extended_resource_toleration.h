// ExtendedResourceToleration admission (upstream plugin/pkg/admission/extendedresourcetoleration,
// semantics.md §8.2), off by default as upstream: a pod whose containers or init containers
// request an extended resource (a name outside the kubernetes.io domain such as nvidia.com/gpu
// or example.com/foo) tolerates the taint `<resource name>:NoSchedule`, so that operators can
// keep other pods off special hardware by tainting those nodes with the resource's name. For
// each such name, in sorted order, the toleration
//   {key: <resource name>, operator: Exists, effect: NoSchedule}
// replaces every toleration with the same key, operator, value and effect, or is appended.
//
// One deliberate difference: upstream looks only at the names under resources.requests, so a
// request of 0 — a pod that needs none of the resource — gets the toleration too and may land
// on the special hardware; kubetaint skips zero requests. A resource with only a limit counts:
// its request has been defaulted to the limit before admission. Pods only, on create and update,
// never their subresources.
//
// Thread safety: immutable.
#pragma once

#include <string_view>

#include "admission/plugin.h"

namespace kt::admission {

class ExtendedResourceToleration : public Plugin {
 public:
  static constexpr std::string_view kName = "ExtendedResourceToleration";

  std::string_view Name() const override { return kName; }
  Verdict Admit(Attributes& a, const Listers& listers) const override;
  bool ReadsObject(std::string_view group, std::string_view resource,
                   std::string_view subresource) const override {
    return group.empty() && resource == "pods" && subresource.empty();
  }
};

// Whether `name` is an extended resource (upstream helper.IsExtendedResourceName): not native
// (it has a '/' and no "kubernetes.io/"), not prefixed "requests.", and "requests.<name>" is a
// qualified name.
bool IsExtendedResourceName(std::string_view name);

}  // namespace kt::admission
