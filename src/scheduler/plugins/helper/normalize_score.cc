#include "scheduler/plugins/helper/normalize_score.h"

#include <algorithm>

namespace kt::scheduler {

void DefaultNormalizeScore(int64_t max_priority, bool reverse, std::span<NodeScore> scores) {
  int64_t max_count = 0;
  for (const NodeScore& s : scores) max_count = std::max(max_count, s.score);
  if (max_count == 0) {
    if (reverse) {
      for (NodeScore& s : scores) s.score = max_priority;
    }
    return;
  }
  for (NodeScore& s : scores) {
    int64_t v = max_priority * s.score / max_count;
    if (reverse) v = max_priority - v;
    s.score = v;
  }
}

}  // namespace kt::scheduler
