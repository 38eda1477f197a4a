#include "controllers/nodelifecycle/zones.h"

namespace kt::controllers::nodelifecycle {

std::string_view ZoneStateName(ZoneState state) {
  switch (state) {
    case ZoneState::kInitial:
      return "Initial";
    case ZoneState::kNormal:
      return "Normal";
    case ZoneState::kPartialDisruption:
      return "PartialDisruption";
    case ZoneState::kFullDisruption:
      return "FullDisruption";
  }
  return "";
}

std::string ZoneKey(const api::ObjectMeta& node) {
  // The deprecated beta labels win where both are set, as upstream.
  const std::string* zone = node.labels.Get("failure-domain.beta.kubernetes.io/zone");
  if (zone == nullptr) zone = node.labels.Get("topology.kubernetes.io/zone");
  const std::string* region = node.labels.Get("failure-domain.beta.kubernetes.io/region");
  if (region == nullptr) region = node.labels.Get("topology.kubernetes.io/region");
  const std::string_view z = zone != nullptr ? std::string_view(*zone) : std::string_view();
  const std::string_view r = region != nullptr ? std::string_view(*region) : std::string_view();
  if (z.empty() && r.empty()) return "";
  std::string key(r);
  key.append(":\0:", 3);
  key.append(z);
  return key;
}

ZoneState ComputeZoneState(int ready, int not_ready, float unhealthy_zone_threshold) {
  if (ready == 0 && not_ready > 0) return ZoneState::kFullDisruption;
  if (not_ready > 2 && static_cast<float>(not_ready) / static_cast<float>(not_ready + ready) >=
                           unhealthy_zone_threshold) {
    return ZoneState::kPartialDisruption;
  }
  return ZoneState::kNormal;
}

std::optional<float> ZoneEvictionRate(ZoneState state, int zone_size, const EvictionRates& rates) {
  switch (state) {
    case ZoneState::kNormal:
    case ZoneState::kFullDisruption:
      return rates.healthy;
    case ZoneState::kPartialDisruption:
      return zone_size > rates.large_cluster_size_threshold ? rates.secondary : 0.0f;
    case ZoneState::kInitial:
      break;
  }
  return std::nullopt;
}

}  // namespace kt::controllers::nodelifecycle
