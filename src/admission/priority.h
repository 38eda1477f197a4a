// Priority admission (upstream plugin/pkg/admission/priority), enabled by default as in
// kube-apiserver (semantics.md §9.2):
//   - a pod being created gets spec.priority and spec.preemptionPolicy from its PriorityClass,
//     or from the globalDefault class (the lowest value if several), or priority 0 and
//     PreemptLowerPriority when there is none; a named class that does not exist, or a priority
//     or preemptionPolicy in the pod that differs from the class's, is Forbidden;
//   - an update keeps the priority and preemptionPolicy the pod was created with;
//   - only one PriorityClass may be the globalDefault.
//
// Errors are kForbidden with upstream's text; the chain's caller renders them as
// `pods "x" is forbidden: <text>`. The plugin acts on pods and priorityclasses, never on
// subresources.
//
// Thread safety: the plugin is immutable; the functions are pure over their arguments.
#pragma once

#include <rapidjson/document.h>

#include "admission/plugin.h"
#include "api/types.h"
#include "core/status.h"

namespace kt::admission {

class Priority : public Plugin {
 public:
  static constexpr std::string_view kName = "Priority";

  std::string_view Name() const override { return kName; }
  // Pods: AdmitPodPriorityOnCreate / AdmitPodPriorityOnUpdate.
  Verdict Admit(Attributes& a, const Listers& listers) const override;
  // PriorityClasses: ValidatePriorityClassDefault.
  Verdict Validate(const Attributes& a, const Listers& listers) const override;
  bool ReadsObject(std::string_view group, std::string_view resource,
                   std::string_view subresource) const override {
    return subresource.empty() && ((group.empty() && resource == "pods") ||
                                   (group == "scheduling.k8s.io" && resource == "priorityclasses"));
  }
};

// Sets spec.priority, spec.priorityClassName (the default class's) and spec.preemptionPolicy of
// a pod being created, in its document.
Status AdmitPodPriorityOnCreate(rapidjson::Document& pod, const PriorityClasses& classes);

// Carries spec.priority and spec.preemptionPolicy over from the stored pod when an update
// omits them.
void AdmitPodPriorityOnUpdate(rapidjson::Document& pod, const rapidjson::Value& old_pod);

// Refuses a second globalDefault class (on create, or an update of another class).
Status ValidatePriorityClassDefault(const api::PriorityClass& pc, bool create,
                                    const PriorityClasses& classes);

}  // namespace kt::admission
