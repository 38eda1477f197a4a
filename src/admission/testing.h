// Admission for test fixtures whose nodes are created as a user would with kubectl, with no
// kubelet reporting them Ready and no node lifecycle controller: the default chain without
// TaintNodesByCondition, whose node.kubernetes.io/not-ready:NoSchedule nothing there would lift.
#pragma once

#include <cstdlib>
#include <memory>

#include "admission/chain.h"

namespace kt::admission::testing {

inline std::shared_ptr<const Chain> ChainForNodesWithoutKubelets() {
  Config config;
  config.disable_plugins = {"TaintNodesByCondition"};
  Result<std::shared_ptr<const Chain>> chain = NewChain(config);
  if (!chain) std::abort();
  return *chain;
}

}  // namespace kt::admission::testing
