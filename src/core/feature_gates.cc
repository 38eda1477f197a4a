#include "core/feature_gates.h"

#include <optional>
#include <string>
#include <vector>

#include "core/validation.h"

namespace kt {

namespace {

constexpr std::string_view kTaintTolerationComparisonOperators =
    "TaintTolerationComparisonOperators";

// Go's strings.TrimSpace for ASCII input.
std::string_view TrimSpace(std::string_view s) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
  };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// Go strconv.ParseBool.
std::optional<bool> ParseGoBool(std::string_view s) {
  for (std::string_view t : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (s == t) return true;
  }
  for (std::string_view f : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (s == f) return false;
  }
  return std::nullopt;
}

}  // namespace

// Mirrors component-base featuregate Set: every item is parsed first (so a bad bool is
// reported before an unknown name), then the names are applied.
Status ParseFeatureGates(std::string_view spec, FeatureGates& gates) {
  std::vector<std::pair<std::string_view, bool>> items;
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (item.empty()) continue;  // upstream skips only truly empty items, not blank ones
    size_t eq = item.find('=');
    std::string_view name = TrimSpace(item.substr(0, eq));
    if (eq == std::string_view::npos) {
      return BadRequest("missing bool value for " + std::string(name));
    }
    std::string_view value = TrimSpace(item.substr(eq + 1));
    std::optional<bool> enabled = ParseGoBool(value);
    if (!enabled) {
      return BadRequest("invalid value of " + std::string(name) + "=" + std::string(value) +
                        ", err: strconv.ParseBool: parsing " + GoQuote(value) + ": invalid syntax");
    }
    items.emplace_back(name, *enabled);
  }

  FeatureGates next = gates;
  std::optional<bool> all_alpha;
  bool comparison_set = false;
  for (const auto& [name, enabled] : items) {
    if (name == kTaintTolerationComparisonOperators) {
      next.taint_toleration_comparison_operators = enabled;
      comparison_set = true;
    } else if (name == "AllAlpha") {
      all_alpha = enabled;
    } else if (name == "AllBeta") {
      // No beta gates here; accepted as kube-apiserver accepts it.
    } else {
      return BadRequest("unrecognized feature gate: " + std::string(name));
    }
  }
  // AllAlpha sets every alpha gate the same spec does not name explicitly.
  if (all_alpha && !comparison_set) next.taint_toleration_comparison_operators = *all_alpha;
  gates = next;
  return Status::Ok();
}

}  // namespace kt
