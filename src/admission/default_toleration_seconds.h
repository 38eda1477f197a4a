// DefaultTolerationSeconds admission (upstream plugin/pkg/admission/defaulttolerationseconds),
// enabled by default (semantics.md §8.1): a pod that does not already tolerate the
// node.kubernetes.io/not-ready:NoExecute taint gets
//   {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: N}
// appended to spec.tolerations, and likewise for node.kubernetes.io/unreachable, so that a pod
// stays on a node that stops answering for N seconds (kube-apiserver's
// --default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds, 300 by
// default) before the taint eviction controller evicts it.
//
// A toleration covers the taint when its key is the taint's or empty and its effect is NoExecute
// or empty; operator, value and tolerationSeconds do not matter. Pods only, on create and
// update, never their subresources.
//
// Thread safety: immutable after construction.
#pragma once

#include <cstdint>

#include "admission/plugin.h"

namespace kt::admission {

class DefaultTolerationSeconds : public Plugin {
 public:
  static constexpr std::string_view kName = "DefaultTolerationSeconds";
  static constexpr int64_t kDefaultSeconds = 300;

  DefaultTolerationSeconds(int64_t not_ready_seconds, int64_t unreachable_seconds)
      : not_ready_seconds_(not_ready_seconds), unreachable_seconds_(unreachable_seconds) {}

  std::string_view Name() const override { return kName; }
  Verdict Admit(Attributes& a, const Listers& listers) const override;
  bool ReadsObject(std::string_view group, std::string_view resource,
                   std::string_view subresource) const override {
    return group.empty() && resource == "pods" && subresource.empty();
  }

 private:
  int64_t not_ready_seconds_;
  int64_t unreachable_seconds_;
};

}  // namespace kt::admission
