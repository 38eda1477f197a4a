// scheduling.k8s.io facts shared by validation, admission and the API server's start-up
// (upstream pkg/apis/scheduling types.go and helpers.go, semantics.md §9.1): the priority
// bounds and the two system PriorityClasses kube-apiserver creates.
//
//   for (const PriorityClass& pc : SystemPriorityClasses()) ...  // system-node-critical first
//   IsKnownSystemPriorityClass("system-foo", 1, false)
//   // "system-foo is not a known system priority class"
//
// Thread safety: constants and pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "api/types.h"

namespace kt::api {

// The highest value a user's PriorityClass may have.
inline constexpr int32_t kHighestUserDefinablePriority = 1000000000;
// The value of system-cluster-critical; system-node-critical is 1000 more.
inline constexpr int32_t kSystemCriticalPriority = 2000000000;
// Names with this prefix are reserved for the system classes.
inline constexpr std::string_view kSystemPriorityClassPrefix = "system-";

// system-node-critical (2000001000) and system-cluster-critical (2000000000), with upstream's
// descriptions, globalDefault false and preemptionPolicy PreemptLowerPriority (the default
// upstream's API server gives them when its post-start hook creates them).
std::span<const PriorityClass> SystemPriorityClasses();

// "" when `name` is a system class with exactly its value and globalDefault false; otherwise
// upstream's reason (IsKnownSystemPriorityClass): "value of <name> PriorityClass must be <v>",
// "globalDefault of <name> PriorityClass must be false", "<name> is not a known system
// priority class".
std::string IsKnownSystemPriorityClass(std::string_view name, int32_t value, bool global_default);

}  // namespace kt::api
