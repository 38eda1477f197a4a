// PodTolerationRestriction admission (upstream plugin/pkg/admission/podtolerationrestriction,
// semantics.md §8.3), off by default as upstream. Namespaces restrict and default the
// tolerations of their pods with two annotations, JSON lists of v1 tolerations:
//   scheduler.alpha.kubernetes.io/defaultTolerations    merged into every pod created there
//   scheduler.alpha.kubernetes.io/tolerationsWhitelist  every toleration of a pod there must be
//                                                       within one of these
// A namespace without the annotation falls back to the cluster's `default` / `whitelist` from
// the admission configuration file (config_file.h); an annotation that is present but empty
// ("", "[]" or "null") means "none" and does not fall back.
//
// Admit (create and update of pods): the defaults (on create only) and, for a pod that is not
// BestEffort, {key: node.kubernetes.io/memory-pressure, operator: Exists, effect: NoSchedule}
// are merged into spec.tolerations (MergeTolerations, tolerations.h); then it checks as
// Validate does. Validate: a pod with tolerations outside the whitelist is refused with
//   pod tolerations (possibly merged with namespace default tolerations) conflict with its
//   namespace whitelist
// ("cluster whitelist" when the cluster's applied). Upstream returns that as a plain error, so
// kube-apiserver answers 500 with an empty reason and kubectl prints `Error from server: ...`;
// a malformed annotation fails the request the same way with Go's JSON error. A namespace that
// does not exist is 404.
//
// Thread safety: immutable after construction; reads namespaces through the Listers.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "admission/plugin.h"
#include "core/status.h"

namespace kt::admission {

// The plugin's configuration (podtolerationrestriction.admission.k8s.io/v1alpha1 or v1,
// kind Configuration): the cluster's default tolerations and whitelist.
struct PodTolerationRestrictionConfig {
  std::vector<Toleration> default_;
  std::vector<Toleration> whitelist;
};

// The configuration in `doc` (null: none, the empty one), checked as upstream
// loadConfiguration does: apiVersion, kind, then every toleration validated
// (`invalid config: podtolerationrestriction.whitelist[0].operator: ...`). `source` prefixes
// the errors.
Result<PodTolerationRestrictionConfig> LoadPodTolerationRestrictionConfig(
    const rapidjson::Value* doc, std::string_view source);

// A JSON list of v1 tolerations as Go's encoding/json reads it into []v1.Toleration, with its
// error messages ("json: cannot unmarshal string into Go struct field Toleration.key of type
// string", "invalid character 'x' looking for beginning of value"): keys match case-insensitively,
// unknown keys are ignored, null leaves a field unset, and `null` is an empty list.
Result<std::vector<Toleration>> DecodeTolerationsJson(std::string_view json);

class PodTolerationRestriction : public Plugin {
 public:
  static constexpr std::string_view kName = "PodTolerationRestriction";
  // The namespace annotations (upstream NSDefaultTolerations, NSWLTolerations).
  static constexpr std::string_view kDefaultTolerationsAnnotation =
      "scheduler.alpha.kubernetes.io/defaultTolerations";
  static constexpr std::string_view kTolerationsWhitelistAnnotation =
      "scheduler.alpha.kubernetes.io/tolerationsWhitelist";

  explicit PodTolerationRestriction(PodTolerationRestrictionConfig config)
      : config_(std::move(config)) {}

  std::string_view Name() const override { return kName; }
  Verdict Admit(Attributes& a, const Listers& listers) const override;
  bool ReadsObject(std::string_view group, std::string_view resource,
                   std::string_view subresource) const override {
    return group.empty() && resource == "pods" && subresource.empty();
  }
  Verdict Validate(const Attributes& a, const Listers& listers) const override;

 private:
  PodTolerationRestrictionConfig config_;
};

}  // namespace kt::admission
