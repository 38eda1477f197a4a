// TaintNodesByCondition admission (upstream plugin/pkg/admission/nodetaint, semantics.md §8.4):
// a Node being created gets the taint
//   {key: node.kubernetes.io/not-ready, effect: NoSchedule}
// appended to spec.taints unless it already has a taint with that key and effect, so that no pod
// lands on a new node before the node lifecycle controller has seen it Ready and removed the
// taint. Creates of nodes only, never updates or subresources.
//
// On by default, as upstream. The node lifecycle controller's NoSchedule pass removes the taint
// once the node reports Ready (or reports no Ready condition at all); with that controller
// turned off, nodes created while this plugin runs keep the taint.
//
// Thread safety: immutable.
#pragma once

#include "admission/plugin.h"

namespace kt::admission {

class TaintNodesByCondition : public Plugin {
 public:
  static constexpr std::string_view kName = "TaintNodesByCondition";

  std::string_view Name() const override { return kName; }
  Verdict Admit(Attributes& a, const Listers& listers) const override;
  bool ReadsObject(std::string_view group, std::string_view resource,
                   std::string_view subresource) const override {
    return group.empty() && resource == "nodes" && subresource.empty();
  }
};

}  // namespace kt::admission
