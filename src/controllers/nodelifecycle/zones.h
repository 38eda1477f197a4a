// Zones and their disruption states, as the node lifecycle controller sees them (upstream
// nodelifecycle ComputeZoneState, ReducedQPSFunc and HealthyQPSFunc; component-helpers
// node/topology GetZoneKey).
//
//   std::string zone = ZoneKey(node.meta);           // "region\0zone", "" without labels
//   ZoneState s = ComputeZoneState(2, 3, 0.55f);      // kPartialDisruption
//   std::optional<float> qps = ZoneEvictionRate(s, 5, rates);  // 0: size 5 is not large
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "api/types.h"

namespace kt::controllers::nodelifecycle {

// A zone's state. A zone seen for the first time is Initial until its first health pass ends.
enum class ZoneState : unsigned char { kInitial, kNormal, kPartialDisruption, kFullDisruption };

// Upstream's names: "Initial", "Normal", "PartialDisruption", "FullDisruption".
std::string_view ZoneStateName(ZoneState state);

// Nodes with this label are left out of their zone's health (isNodeExcludedFromDisruptionChecks).
inline constexpr std::string_view kLabelExcludeDisruption = "node.kubernetes.io/exclude-disruption";

// The zone of a node: region and zone from failure-domain.beta.kubernetes.io/{region,zone}, else
// topology.kubernetes.io/{region,zone}, joined by ":\0:"; "" when the node has neither.
std::string ZoneKey(const api::ObjectMeta& node);

// A zone with `ready` Ready nodes and `not_ready` others (Ready False, Unknown or missing):
// FullDisruption when none is Ready (and the zone is not empty); PartialDisruption when more than
// two are not Ready and they are at least `unhealthy_zone_threshold` of the zone (compared in
// float32, as upstream); Normal otherwise.
ZoneState ComputeZoneState(int ready, int not_ready, float unhealthy_zone_threshold);

// --node-eviction-rate, --secondary-node-eviction-rate and --large-cluster-size-threshold.
struct EvictionRates {
  float healthy = 0.1f;
  float secondary = 0.01f;
  int32_t large_cluster_size_threshold = 50;
};

// The NoExecute tainting rate (nodes per second) of a zone of `zone_size` nodes in `state`
// (setLimiterInZone): Normal and FullDisruption the healthy rate, PartialDisruption the secondary
// rate when the zone has more than large_cluster_size_threshold nodes and 0 otherwise; nullopt for
// Initial (the rate is left as it is).
std::optional<float> ZoneEvictionRate(ZoneState state, int zone_size, const EvictionRates& rates);

}  // namespace kt::controllers::nodelifecycle
