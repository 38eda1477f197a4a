// Toleration set algebra of PodTolerationRestriction (upstream pkg/util/tolerations, semantics.md
// §8.3): when one toleration tolerates everything another does, how two lists merge, and whether
// a list keeps within a whitelist.
//
//   Toleration all{.op = "Exists"};
//   Toleration a{.key = "a", .op = "Exists"};
//   IsSuperset(all, a);                  // true
//   MergeTolerations({a}, {all});        // [all]: a is redundant
//   VerifyAgainstWhitelist({a}, {all});  // true
//
// Thread safety: pure functions.
#pragma once

#include <span>
#include <vector>

#include "core/taint.h"

namespace kt::admission {

// Whether `ss` tolerates at least every taint `t` tolerates, for as long (upstream isSuperset):
// equal tolerations; else the same key (or `ss` the empty key with Exists), the same effect (or
// `ss` any effect), a NoExecute `ss` with tolerationSeconds outlasted by no `t`, and then by
// `ss`'s operator: Exists covers every value, Equal or "" only `t` with operator exactly
// "Equal" and the same value. Any other operator (Lt, Gt, unknown) covers nothing but itself.
bool IsSuperset(const Toleration& ss, const Toleration& t);

// `first` then `second`, less every toleration that another kept one, or a later different one,
// is a superset of (upstream MergeTolerations): identical duplicates keep their first place.
std::vector<Toleration> MergeTolerations(std::span<const Toleration> first,
                                         std::span<const Toleration> second);

// Whether every toleration has a whitelist entry that is a superset of it; an empty whitelist
// (or an empty list) is no restriction (upstream VerifyAgainstWhitelist).
bool VerifyAgainstWhitelist(std::span<const Toleration> tolerations,
                            std::span<const Toleration> whitelist);

}  // namespace kt::admission
