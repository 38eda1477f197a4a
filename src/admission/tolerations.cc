#include "admission/tolerations.h"

namespace kt::admission {

bool IsSuperset(const Toleration& ss, const Toleration& t) {
  if (ss == t) return true;
  // An empty key with Exists tolerates every key.
  if (t.key != ss.key && (!ss.key.empty() || ss.op != kOpExists)) return false;
  // An empty effect tolerates every effect.
  if (t.effect != ss.effect && !ss.effect.empty()) return false;
  if (ss.effect == kEffectNoExecute && ss.toleration_seconds) {
    if (!t.toleration_seconds || *t.toleration_seconds > *ss.toleration_seconds) return false;
  }
  if (ss.op == kOpEqual || ss.op.empty()) return t.op == kOpEqual && t.value == ss.value;
  return ss.op == kOpExists;
}

std::vector<Toleration> MergeTolerations(std::span<const Toleration> first,
                                         std::span<const Toleration> second) {
  std::vector<Toleration> all(first.begin(), first.end());
  all.insert(all.end(), second.begin(), second.end());
  std::vector<Toleration> merged;
  for (size_t i = 0; i < all.size(); ++i) {
    const Toleration& t = all[i];
    bool redundant = false;
    for (const Toleration& kept : merged) redundant = redundant || IsSuperset(kept, t);
    // Of two equal tolerations the first stays; a later, broader one replaces this one.
    for (size_t j = i + 1; j < all.size() && !redundant; ++j) {
      redundant = all[j] != t && IsSuperset(all[j], t);
    }
    if (!redundant) merged.push_back(t);
  }
  return merged;
}

bool VerifyAgainstWhitelist(std::span<const Toleration> tolerations,
                            std::span<const Toleration> whitelist) {
  if (whitelist.empty()) return true;
  for (const Toleration& t : tolerations) {
    bool covered = false;
    for (const Toleration& w : whitelist) covered = covered || IsSuperset(w, t);
    if (!covered) return false;
  }
  return true;
}

}  // namespace kt::admission
