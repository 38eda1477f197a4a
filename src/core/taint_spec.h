// The `kubectl taint` grammar and the taint-list computation behind it, exactly as kubectl 1.35
// (kubernetes/kubectl pkg/cmd/taint/taint.go, utils.go). Shared by the kubetaint CLI and by any
// server-side path that accepts taint specs, so both print what kubectl users know.
//
//   std::vector<std::string> args = {"node", "n1", "dedicated=gpu:NoSchedule", "old-"};
//   Result<TaintArgs> a = ClassifyTaintArgs(args);            // resources vs taint specs
//   Result<TaintChanges> c = ParseTaints(a->specs);           // additions, removals
//   Status s = ValidateTaintCommand("Node", a->resources, *c, /*all=*/false, /*selector=*/"");
//   TaintUpdate u = UpdateNodeTaints("n1", node_taints, *c, /*overwrite=*/false);
//   if (u.ok()) Patch(u.taints);  // prints "node/n1 <u.operation>"
//
// Errors are Status(kBadRequest, <kubectl's message>). The steps mirror kubectl's so a caller
// can tell them apart: ClassifyTaintArgs errors are plain errors; ParseTaints errors are usage
// errors (kubectl appends "\nSee 'kubectl taint -h' for help and examples"); validation and
// update errors are plain again.
//
// Thread safety: pure functions and plain values.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/taint.h"

namespace kt {

// The word kubectl prints after `node/<name>`.
inline constexpr std::string_view kTaintOpTainted = "tainted";
inline constexpr std::string_view kTaintOpUntainted = "untainted";
inline constexpr std::string_view kTaintOpModified = "modified";

// Whether a positional argument is a taint change rather than a resource: it contains '=' or
// ':' or ends with '-' (so a node named "a-" is taken as a removal, as in kubectl).
bool IsTaintArg(std::string_view arg);

struct TaintArgs {
  std::vector<std::string> resources;  // [type, name, name, ...]
  std::vector<std::string> specs;      // taint specs in command order
};

// Splits positional args (kubectl Complete). Errors, in this order:
// `all resources must be specified before taint changes: <arg>`,
// `one or more resources must be specified as <resource> <name>`,
// `at least one taint update is required`.
Result<TaintArgs> ClassifyTaintArgs(std::span<const std::string> args);

// One spec without the removal suffix (kubectl parseTaint): `key`, `key:Effect`,
// `key=value:Effect`, `key=:Effect`. Errors: `invalid taint effect: <e>, unsupported taint
// effect`, `invalid taint spec: <spec>[, <reasons joined by "; ">]`.
Result<Taint> ParseTaint(std::string_view spec);

struct TaintChanges {
  std::vector<Taint> add;     // key, value, effect (effect always set)
  std::vector<Taint> remove;  // key and effect only; an empty effect removes every effect
};

// Parses specs in order (kubectl parseTaints); a spec ending in '-' is a removal (one '-' is
// stripped and any value is dropped). Additions must have an effect and be unique by
// (key, effect): `duplicated taints with the same key and effect: {foo bar NoSchedule <nil>}`.
Result<TaintChanges> ParseTaints(std::span<const std::string> specs);

// A taint as Go's `%v` prints a corev1.Taint: `{key value Effect <nil>}`.
std::string GoTaintStruct(const Taint& taint);

// kubectl Validate, in its order:
// 1. `resource_kind` (the Kind the first resource arg resolves to) must be "Node", else
//    `invalid resource type <type lower-cased>, only node types are supported`. Resolving the
//    type is the caller's job (it needs discovery); an unresolvable type is reported by the
//    caller before this is called.
// 2. ValidateTaintConflicts. 3. ValidateTaintFlags.
Status ValidateTaintCommand(std::string_view resource_kind, std::span<const std::string> resources,
                            const TaintChanges& changes, bool all, std::string_view selector);

// `can not both modify and remove the following taint(s) in the same command: foo=NoSchedule,
// bar=` for every (addition, removal) pair with the same key where the removal has no effect or
// the addition's effect.
Status ValidateTaintConflicts(const TaintChanges& changes);

// kubectl validateFlags: `--all` excludes a selector; without either, a node name is needed.
Status ValidateTaintFlags(bool all, std::string_view selector,
                          std::span<const std::string> resources);

// Keys of `to_add` that `existing` already has with the same effect, joined by ","
// (kubectl checkIfTaintsAlreadyExists); empty when none.
std::string CheckIfTaintsAlreadyExist(std::span<const Taint> existing,
                                      std::span<const Taint> to_add);

// Drops every taint with the key and effect of `to_delete`; returns whether any was dropped.
bool DeleteTaint(std::vector<Taint>& taints, const Taint& to_delete);
// Drops every taint with `key`; returns whether any was dropped.
bool DeleteTaintsByKey(std::vector<Taint>& taints, std::string_view key);

struct TaintUpdate {
  std::vector<Taint> taints;   // the node's new list
  std::string_view operation;  // kTaintOpTainted, kTaintOpUntainted or kTaintOpModified
  // Error messages in order; when not empty the node must not be changed.
  std::vector<std::string> errors;

  bool ok() const { return errors.empty(); }
  // OK, or BadRequest carrying GoAggregateError(errors).
  Status ToStatus() const;
};

// kubectl reorganizeTaints: additions first (command order), then the existing taints that no
// addition replaces (same key and effect), then removals applied in command order. Every removal
// that drops nothing records `taint "<key[:effect]>" not found`. The operation is "modified" if
// (added and deleted) or `overwrite`, else "tainted" if added, else "untainted", where `added`
// means the list before removals differs in length from `existing` (replacing a taint in place
// does not count) and `deleted` means the *last* removal dropped something (upstream quirk).
TaintUpdate ReorganizeTaints(std::span<const Taint> existing, bool overwrite,
                             std::span<const Taint> add, std::span<const Taint> remove);

// kubectl updateTaints for one node: without `overwrite`, an addition that matches an existing
// taint's key and effect fails with `node <name> already has <keys> taint(s) with same
// effect(s) and --overwrite is false`; otherwise ReorganizeTaints.
TaintUpdate UpdateNodeTaints(std::string_view node_name, std::span<const Taint> existing,
                             const TaintChanges& changes, bool overwrite);

// Go's utilerrors aggregate text: each distinct message once; one alone, several "[a, b]".
std::string GoAggregateError(std::span<const std::string> messages);

// What kubectl prints to stderr for these errors (cmdutil.CheckErr): one error as
// "error: <e>\n"; several one per line with no prefix. Exit code 1 either way.
std::string KubectlErrorOutput(std::span<const std::string> messages);

}  // namespace kt
