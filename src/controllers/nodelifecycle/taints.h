// The taints the node lifecycle controller keeps on nodes (semantics.md §7.3), and how a change
// of them applies to a node's taint list.
//
//   TaintChange c = NoScheduleTaintChange(node);   // what doNoScheduleTaintingPass would write
//   std::optional<std::vector<Taint>> next = ApplyTaintChange(live.spec.taints, c);
//   if (next) { /* write *next with live's resourceVersion as precondition */ }
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"
#include "core/taint.h"

namespace kt::controllers::nodelifecycle {

// The NoExecute taints of taint-based eviction (UnreachableTaintTemplate, NotReadyTaintTemplate).
const Taint& UnreachableNoExecute();
const Taint& NotReadyNoExecute();

// Whether `taints` has a taint of the key and effect of `taint` (upstream TaintExists).
bool TaintExists(const std::vector<Taint>& taints, const Taint& taint);

// Taints to add (key, effect, and the value and timeAdded to write) and to remove (by key and
// effect).
struct TaintChange {
  std::vector<Taint> add;
  std::vector<Taint> remove;
  bool empty() const { return add.empty() && remove.empty(); }
};

// The NoSchedule taints the node's conditions and spec.unschedulable call for, in condition
// order, the unschedulable taint last (doNoScheduleTaintingPass): Ready False → not-ready,
// Ready Unknown → unreachable, MemoryPressure / DiskPressure / NetworkUnavailable / PIDPressure
// True → memory-pressure / disk-pressure / network-unavailable / pid-pressure, cordoned →
// unschedulable (keys under node.kubernetes.io/, empty values).
std::vector<Taint> NoScheduleTaints(const api::Node& node);

// What doNoScheduleTaintingPass changes: the taints of NoScheduleTaints the node lacks are added,
// and its NoSchedule taints with one of those seven keys that NoScheduleTaints does not call for
// are removed; other taints are never touched (upstream TaintSetDiff, by key and effect).
TaintChange NoScheduleTaintChange(const api::Node& node);

// The NoExecute taint a node whose Ready is `ready_status` should have, and the one it should
// not (the two mirror Ready, so they are kept mutually exclusive): False → add not-ready (with
// `time_added`), remove unreachable; Unknown → the other way round; nullopt for anything else.
std::optional<TaintChange> NoExecuteChange(std::string_view ready_status, std::string time_added);

// `taints` after `change`: each taint to add replaces the first one of its key and effect (which
// keeps its place, and its timeAdded when the value is the same) or is appended; then every taint
// of the key and effect of one to remove goes. nullopt when nothing changes.
std::optional<std::vector<Taint>> ApplyTaintChange(const std::vector<Taint>& taints,
                                                   const TaintChange& change);

}  // namespace kt::controllers::nodelifecycle
