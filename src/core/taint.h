// Taints and tolerations, and how they match, exactly as upstream Kubernetes 1.35
// (k8s.io/api core/v1 toleration.go, taint.go; component-helpers scheduling/corev1).
//
// Fields are the wire strings, unvalidated: the matcher never validates (an invalid toleration
// can still match, as upstream), and validation lives in core/validation.h.
//
//   Taint t{.key = "key1", .value = "value1", .effect = "NoSchedule"};
//   Toleration tol{.key = "key1", .op = "Equal", .value = "value1", .effect = "NoSchedule"};
//   bool ok = ToleratesTaint(tol, t, /*enable_comparison_operators=*/false);  // true
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kt {

// Effects (core/v1 TaintEffect).
inline constexpr std::string_view kEffectNoSchedule = "NoSchedule";
inline constexpr std::string_view kEffectPreferNoSchedule = "PreferNoSchedule";
inline constexpr std::string_view kEffectNoExecute = "NoExecute";

// Operators (core/v1 TolerationOperator). The empty operator behaves as Equal.
inline constexpr std::string_view kOpEqual = "Equal";
inline constexpr std::string_view kOpExists = "Exists";
inline constexpr std::string_view kOpLt = "Lt";
inline constexpr std::string_view kOpGt = "Gt";

// Well-known taint keys (core/v1 well_known_taints.go).
inline constexpr std::string_view kTaintNodeNotReady = "node.kubernetes.io/not-ready";
inline constexpr std::string_view kTaintNodeUnreachable = "node.kubernetes.io/unreachable";
inline constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";
inline constexpr std::string_view kTaintNodeMemoryPressure = "node.kubernetes.io/memory-pressure";
inline constexpr std::string_view kTaintNodeDiskPressure = "node.kubernetes.io/disk-pressure";
inline constexpr std::string_view kTaintNodePIDPressure = "node.kubernetes.io/pid-pressure";
inline constexpr std::string_view kTaintNodeNetworkUnavailable =
    "node.kubernetes.io/network-unavailable";
inline constexpr std::string_view kTaintNodeOutOfService = "node.kubernetes.io/out-of-service";

// An element of Node.spec.taints.
struct Taint {
  std::string key;
  std::string value;
  std::string effect;
  // RFC 3339 time the taint was added (set by the node lifecycle controller), if any.
  std::optional<std::string> time_added;

  bool operator==(const Taint&) const = default;
};

// An element of Pod.spec.tolerations.
struct Toleration {
  std::string key;
  std::string op;  // "operator" on the wire; "" is Equal
  std::string value;
  std::string effect;  // "" matches every effect
  // nil: tolerate forever; <= 0: evict at once. Meaningful only for NoExecute.
  std::optional<int64_t> toleration_seconds;

  bool operator==(const Toleration&) const = default;
};
// A hash of every field, for sharing equal toleration lists (api/interned.h).
size_t HashValue(const Toleration& t);

// Whether `toleration` tolerates `taint` (core/v1 Toleration.ToleratesTaint). Lt/Gt tolerate only
// when `enable_comparison_operators` (feature gate TaintTolerationComparisonOperators) is set
// and both values are canonical decimal int64s.
bool ToleratesTaint(const Toleration& toleration, const Taint& taint,
                    bool enable_comparison_operators);

// The numeric half of ToleratesTaint for Lt/Gt (upstream compareNumericValues): both values must
// be canonical decimal int64s; Lt tolerates iff taint < toleration, Gt iff taint > toleration.
// False for any other operator and for unparsable values.
bool CompareNumericValues(std::string_view toleration_value, std::string_view taint_value,
                          std::string_view op);

// True iff some toleration tolerates `taint`. An empty list tolerates nothing.
bool TolerationsTolerateTaint(std::span<const Toleration> tolerations, const Taint& taint,
                              bool enable_comparison_operators);

// Which taints FindMatchingUntoleratedTaint considers.
enum class TaintFilter : unsigned char {
  kAll,                    // every taint (upstream: nil filter)
  kNone,                   // no taint
  kNoScheduleOrNoExecute,  // the scheduler's DoNotScheduleTaintsFilterFunc
  kNoExecute,              // the eviction controller's filter
  kPreferNoSchedule,
};
bool TaintFilterKeeps(TaintFilter filter, const Taint& taint);

// The first taint, in node order, that `filter` keeps and no toleration tolerates; nullptr if
// there is none. The pointer points into `taints`.
const Taint* FindMatchingUntoleratedTaint(std::span<const Taint> taints,
                                          std::span<const Toleration> tolerations,
                                          TaintFilter filter, bool enable_comparison_operators);

// For every taint in order, the first toleration in pod order that tolerates it (pointers into
// `tolerations`, parallel to `taints`). nullopt when some taint is tolerated by none (and when
// there are taints but no tolerations). No taints: an empty list. This first-match rule decides
// eviction times (upstream GetMatchingTolerations).
std::optional<std::vector<const Toleration*>> GetMatchingTolerations(
    std::span<const Taint> taints, std::span<const Toleration> tolerations,
    bool enable_comparison_operators);

// The eviction delay implied by the tolerations GetMatchingTolerations used: 0 if any has
// tolerationSeconds <= 0 (scanning in order) or the list is empty, otherwise the smallest
// positive tolerationSeconds, or -1 if all tolerate forever (upstream getMinTolerationTime).
int64_t MinTolerationSeconds(std::span<const Toleration* const> used);

// Same key and effect (value and timeAdded ignored): "the same taint".
bool MatchTaint(const Taint& a, const Taint& b);
// Same key, operator, value and effect (exact strings; tolerationSeconds ignored).
bool MatchToleration(const Toleration& a, const Toleration& b);

// The upstream string form: `key=value:Effect`, `key:Effect`, `key=value:`, `key`.
std::string TaintToString(const Taint& taint);

// Whether `s` is a canonical decimal integer ("0", or an optional '-' then 1-9 then digits)
// that fits in int64 (apimachinery IsDecimalInteger + ParseInt). Returns the value.
std::optional<int64_t> ParseCanonicalInt64(std::string_view s);

}  // namespace kt
