// Feature gates, parsed from the upstream `--feature-gates` flag syntax:
// "TaintTolerationComparisonOperators=true,OtherGate=false".
//
// Thread safety: a plain value; components take a copy at start-up.
#pragma once

#include <string_view>

#include "core/status.h"

namespace kt {

struct FeatureGates {
  // KEP-5471 (1.35, alpha, default off): the Lt and Gt toleration operators.
  bool taint_toleration_comparison_operators = false;
};

// Applies "Name=bool,..." to `gates` (all or nothing). Errors use the upstream wording, e.g.
// `unrecognized feature gate: Foo`; malformed values are reported before unknown names, as
// upstream. `AllAlpha=<bool>` sets every alpha gate the spec does not name; `AllBeta` is
// accepted (there are no beta gates here).
Status ParseFeatureGates(std::string_view spec, FeatureGates& gates);

}  // namespace kt
