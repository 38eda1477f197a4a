// Score helpers shared by plugins (upstream pkg/scheduler/framework/plugins/helper).
#pragma once

#include <cstdint>
#include <span>

#include "scheduler/framework/interface.h"

namespace kt::scheduler {

// Upstream DefaultNormalizeScore: each score becomes max_priority · score / largest score
// (integer division); with `reverse`, max_priority minus that. When every score is 0 they stay 0,
// or all become max_priority when reversed.
void DefaultNormalizeScore(int64_t max_priority, bool reverse, std::span<NodeScore> scores);

}  // namespace kt::scheduler
