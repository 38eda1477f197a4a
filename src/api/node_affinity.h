// Node selection as upstream: nodeSelector and node affinity matching
// (k8s.io/component-helpers scheduling/corev1/nodeaffinity, with the label and field selector
// semantics of k8s.io/apimachinery).
//
//   - nodeSelector: every label must be present with that exact value.
//   - requiredDuringSchedulingIgnoredDuringExecution: terms are ORed; within a term, the
//     matchExpressions and matchFields are ANDed. A term with neither matches nothing; a required
//     selector with zero terms matches nothing.
//   - Operators In, NotIn (true when the label is absent), Exists, DoesNotExist, Gt and Lt (the
//     label and the single value both parse as base-10 int64; otherwise no match).
//   - matchFields supports metadata.name with In/NotIn and exactly one value. Fields are not
//     checked against a node without a name, as upstream.
//   - An invalid requirement (bad key or value, wrong value count, unknown operator) makes its
//     term match nothing; the errors are kept for callers that report them.
//
//   RequiredNodeAffinity required(pod);        // parse once per pod
//   for (const Node& n : nodes) if (required.Match(n)) ...
//
// Matchers keep pointers into the selectors they were built from: the Pod (or NodeSelector,
// terms) must outlive them. Thread safety: const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"
#include "core/status.h"

namespace kt::api {

// The well-known label a node's hostname goes in (upstream v1.LabelHostname).
inline constexpr std::string_view kLabelHostname = "kubernetes.io/hostname";

namespace internal {

// One parsed NodeSelectorTerm (upstream nodeSelectorTerm).
class ParsedNodeSelectorTerm {
 public:
  // Error messages name the term "<prefix>[<index>]" ("nodeSelectorTerms[0]").
  ParsedNodeSelectorTerm(const NodeSelectorTerm& term, std::string_view prefix, size_t index);

  bool Match(const Node& node) const;
  bool ok() const { return errors_.empty(); }
  const std::vector<std::string>& errors() const { return errors_; }
  // Whether Match may read the node's name, or its label `label`. When not, two nodes whose
  // labels differ only in `label` get the same answer.
  bool ReadsNameOrLabel(std::string_view label) const;

 private:
  enum class Op : unsigned char { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };
  struct LabelRequirement {
    const SelectorRequirement* requirement;
    Op op;
    int64_t bound;  // Gt, Lt
  };
  struct FieldRequirement {
    const std::string* key;
    const std::string* value;
    bool equal;  // In: ==, NotIn: !=
  };

  std::vector<LabelRequirement> labels_;
  std::vector<FieldRequirement> fields_;
  bool has_expressions_ = false;
  bool has_fields_ = false;
  std::vector<std::string> errors_;
};

}  // namespace internal

// A required node selector (upstream LazyErrorNodeSelector).
class NodeSelectorMatcher {
 public:
  explicit NodeSelectorMatcher(const NodeSelector& selector);

  // True when some term matches the node.
  bool Match(const Node& node) const;
  // Whether Match may read the node's name, or its label `label` (see ParsedNodeSelectorTerm).
  bool ReadsNameOrLabel(std::string_view label) const;
  // Parse errors of every term, "nodeSelectorTerms[2].matchExpressions[0].key: Invalid value:
  // ...". Empty when all terms are valid.
  std::vector<std::string> Errors() const;

 private:
  std::vector<internal::ParsedNodeSelectorTerm> terms_;
};

// A pod's nodeSelector and required node affinity (upstream GetRequiredNodeAffinity).
class RequiredNodeAffinity {
 public:
  explicit RequiredNodeAffinity(const Pod& pod);

  bool Match(const Node& node) const;
  // Whether Match may read the node's name, or its label `label`: when not, nodes whose labels
  // differ only in `label` get the same answer.
  bool ReadsNameOrLabel(std::string_view label) const;

 private:
  const StringMap* node_selector_ = nullptr;  // null when the pod has none
  std::optional<NodeSelectorMatcher> affinity_;
};

// Whether the pod's nodeSelector and required node affinity both allow the node.
bool PodMatchesNodeSelectorAndAffinityTerms(const Pod& pod, const Node& node);

// Preferred node affinity terms (upstream PreferredSchedulingTerms). Terms with weight 0 or no
// requirements are skipped without being parsed.
class PreferredSchedulingTerms {
 public:
  // Fails (kBadRequest, every parse error joined by ", ") when a considered term is invalid, as
  // upstream's NewPreferredSchedulingTerms does.
  static Result<PreferredSchedulingTerms> Create(std::span<const PreferredSchedulingTerm> terms);

  // The sum of the weights of the terms that match the node.
  int64_t Score(const Node& node) const;

 private:
  struct Term {
    internal::ParsedNodeSelectorTerm term;
    int64_t weight;
  };
  std::vector<Term> terms_;
};

// The NodeAffinity plugin's raw score for one node: the summed weights of the pod's matching
// preferred terms (0 without any).
Result<int64_t> PreferredNodeAffinityScore(const Pod& pod, const Node& node);

}  // namespace kt::api
