#include "api/node_affinity.h"

#include <algorithm>

#include "core/strings.h"
#include "core/validation.h"

namespace kt::api {

namespace {

constexpr std::string_view kFieldMetadataName = "metadata.name";

std::string Quote(std::string_view s) { return kt::GoQuote(s); }

std::string QuoteList(const std::vector<std::string>& values) {
  if (values.empty()) return "null";
  std::string out = "[]string{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += Quote(values[i]);
  }
  out += "}";
  return out;
}

// field.Invalid(path, value, detail).Error()
std::string InvalidError(const std::string& path, const std::string& value_repr,
                         std::string_view detail) {
  return path + ": Invalid value: " + value_repr + ": " + std::string(detail);
}

// prefix + "[i]" (built by appending: GCC 12 warns falsely on `"[" + std::string`).
std::string Indexed(std::string_view prefix, size_t i) {
  std::string s(prefix);
  s += '[';
  s += std::to_string(i);
  s += ']';
  return s;
}

bool Contains(const std::vector<std::string>& values, const std::string& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

}  // namespace

namespace internal {

ParsedNodeSelectorTerm::ParsedNodeSelectorTerm(const NodeSelectorTerm& term,
                                               std::string_view prefix, size_t index) {
  // "<prefix>[index].<list>[i].<field>", built only when there is an error to report.
  auto at = [&](std::string_view list, size_t i, std::string_view field) {
    std::string p = Indexed(prefix, index);
    p += '.';
    p += list;
    p = Indexed(p, i);
    p += '.';
    p += field;
    return p;
  };
  has_expressions_ = !term.match_expressions.empty();
  has_fields_ = !term.match_fields.empty();

  // upstream nodeSelectorRequirementsAsSelector + labels.NewRequirement
  labels_.reserve(term.match_expressions.size());
  for (size_t i = 0; i < term.match_expressions.size(); ++i) {
    const SelectorRequirement& r = term.match_expressions[i];
    Op op;
    if (r.op == "In") {
      op = Op::kIn;
    } else if (r.op == "NotIn") {
      op = Op::kNotIn;
    } else if (r.op == "Exists") {
      op = Op::kExists;
    } else if (r.op == "DoesNotExist") {
      op = Op::kDoesNotExist;
    } else if (r.op == "Gt") {
      op = Op::kGt;
    } else if (r.op == "Lt") {
      op = Op::kLt;
    } else {
      errors_.push_back(at("matchExpressions", i, "operator") +
                        ": Unsupported value: " + Quote(r.op) +
                        ": supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", "
                        "\"Gt\", \"Lt\"");
      continue;
    }
    const size_t errors_before = errors_.size();
    if (auto errs = kt::IsQualifiedName(r.key); !errs.empty()) {
      errors_.push_back(
          InvalidError(at("matchExpressions", i, "key"), Quote(r.key), Join(errs, "; ")));
    }
    auto values_path = [&] { return at("matchExpressions", i, "values"); };
    int64_t bound = 0;
    switch (op) {
      case Op::kIn:
      case Op::kNotIn:
        if (r.values.empty()) {
          errors_.push_back(InvalidError(values_path(), "null",
                                         "for 'in', 'notin' operators, values set can't be empty"));
        }
        break;
      case Op::kExists:
      case Op::kDoesNotExist:
        if (!r.values.empty()) {
          errors_.push_back(InvalidError(values_path(), QuoteList(r.values),
                                         "values set must be empty for exists and does not exist"));
        }
        break;
      case Op::kGt:
      case Op::kLt:
        if (r.values.size() != 1) {
          errors_.push_back(
              InvalidError(values_path(), QuoteList(r.values),
                           "for 'Gt', 'Lt' operators, exactly one value is required"));
        }
        for (const auto& v : r.values) {
          if (!ParseDecimalInt64(v, &bound)) {
            errors_.push_back(
                InvalidError(values_path(), QuoteList(r.values),
                             "for 'Gt', 'Lt' operators, the value must be an integer"));
          }
        }
        break;
    }
    for (size_t j = 0; j < r.values.size(); ++j) {
      if (auto errs = kt::IsValidLabelValue(r.values[j]); !errs.empty()) {
        errors_.push_back(
            InvalidError(Indexed(values_path(), j), Quote(r.values[j]), Join(errs, "; ")));
      }
    }
    if (errors_.size() == errors_before) labels_.push_back({&r, op, bound});
  }

  // upstream nodeSelectorRequirementsAsFieldSelector
  fields_.reserve(term.match_fields.size());
  for (size_t i = 0; i < term.match_fields.size(); ++i) {
    const SelectorRequirement& r = term.match_fields[i];
    if (r.op != "In" && r.op != "NotIn") {
      errors_.push_back(at("matchFields", i, "operator") + ": Unsupported value: " + Quote(r.op) +
                        ": supported values: \"In\", \"NotIn\"");
      continue;
    }
    if (r.values.size() != 1) {
      errors_.push_back(InvalidError(at("matchFields", i, "values"), QuoteList(r.values),
                                     "must have one element"));
      continue;
    }
    fields_.push_back({&r.key, &r.values[0], r.op == "In"});
  }
}

bool ParsedNodeSelectorTerm::Match(const Node& node) const {
  if (!errors_.empty()) return false;
  if (!has_expressions_ && !has_fields_) return false;
  const StringMap& labels = node.meta.labels;
  for (const LabelRequirement& lr : labels_) {
    const std::string* value = labels.Get(lr.requirement->key);
    bool ok = false;
    switch (lr.op) {
      case Op::kIn:
        ok = value != nullptr && Contains(lr.requirement->values, *value);
        break;
      case Op::kNotIn:
        ok = value == nullptr || !Contains(lr.requirement->values, *value);
        break;
      case Op::kExists:
        ok = value != nullptr;
        break;
      case Op::kDoesNotExist:
        ok = value == nullptr;
        break;
      case Op::kGt:
      case Op::kLt: {
        int64_t v = 0;
        ok = value != nullptr && ParseDecimalInt64(*value, &v) &&
             (lr.op == Op::kGt ? v > lr.bound : v < lr.bound);
        break;
      }
    }
    if (!ok) return false;
  }
  // Node fields are {metadata.name: name}, empty for a node without a name, and an empty field
  // set is not checked (upstream nodeSelectorTerm.match).
  if (has_fields_ && !node.meta.name.empty()) {
    for (const FieldRequirement& fr : fields_) {
      const std::string_view field =
          *fr.key == kFieldMetadataName ? std::string_view(node.meta.name) : std::string_view();
      if ((field == *fr.value) != fr.equal) return false;
    }
  }
  return true;
}

bool ParsedNodeSelectorTerm::ReadsNameOrLabel(std::string_view label) const {
  if (has_fields_) return true;
  return std::any_of(labels_.begin(), labels_.end(),
                     [&](const LabelRequirement& lr) { return lr.requirement->key == label; });
}

}  // namespace internal

NodeSelectorMatcher::NodeSelectorMatcher(const NodeSelector& selector) {
  terms_.reserve(selector.terms.size());
  for (size_t i = 0; i < selector.terms.size(); ++i) {
    const NodeSelectorTerm& t = selector.terms[i];
    // A term without requirements selects nothing and is dropped unparsed, as upstream.
    if (t.match_expressions.empty() && t.match_fields.empty()) continue;
    terms_.emplace_back(t, "nodeSelectorTerms", i);
  }
}

bool NodeSelectorMatcher::Match(const Node& node) const {
  return std::any_of(terms_.begin(), terms_.end(),
                     [&](const internal::ParsedNodeSelectorTerm& t) { return t.Match(node); });
}

bool NodeSelectorMatcher::ReadsNameOrLabel(std::string_view label) const {
  return std::any_of(terms_.begin(), terms_.end(), [&](const internal::ParsedNodeSelectorTerm& t) {
    return t.ReadsNameOrLabel(label);
  });
}

std::vector<std::string> NodeSelectorMatcher::Errors() const {
  std::vector<std::string> out;
  for (const auto& t : terms_) out.insert(out.end(), t.errors().begin(), t.errors().end());
  return out;
}

RequiredNodeAffinity::RequiredNodeAffinity(const Pod& pod) {
  if (!pod.spec.node_selector.empty()) node_selector_ = &pod.spec.node_selector;
  if (pod.spec.node_affinity && pod.spec.node_affinity->required) {
    affinity_.emplace(*pod.spec.node_affinity->required);
  }
}

bool RequiredNodeAffinity::Match(const Node& node) const {
  if (node_selector_ != nullptr) {
    for (const auto& [key, value] : *node_selector_) {
      const std::string* got = node.meta.labels.Get(key);
      if (got == nullptr || *got != value) return false;
    }
  }
  return !affinity_ || affinity_->Match(node);
}

bool RequiredNodeAffinity::ReadsNameOrLabel(std::string_view label) const {
  if (node_selector_ != nullptr && node_selector_->Has(label)) return true;
  return affinity_ && affinity_->ReadsNameOrLabel(label);
}

bool PodMatchesNodeSelectorAndAffinityTerms(const Pod& pod, const Node& node) {
  return RequiredNodeAffinity(pod).Match(node);
}

Result<PreferredSchedulingTerms> PreferredSchedulingTerms::Create(
    std::span<const PreferredSchedulingTerm> terms) {
  PreferredSchedulingTerms out;
  std::vector<std::string> errors;
  for (size_t i = 0; i < terms.size(); ++i) {
    const PreferredSchedulingTerm& t = terms[i];
    if (t.weight == 0 ||
        (t.preference.match_expressions.empty() && t.preference.match_fields.empty())) {
      continue;
    }
    internal::ParsedNodeSelectorTerm parsed(t.preference, "", i);
    if (!parsed.ok()) {
      errors.insert(errors.end(), parsed.errors().begin(), parsed.errors().end());
      continue;
    }
    out.terms_.push_back(Term{std::move(parsed), t.weight});
  }
  if (!errors.empty()) {
    std::string m;
    if (errors.size() == 1) {
      m = errors[0];
    } else {
      m += '[';
      m += Join(errors, ", ");
      m += ']';
    }
    return Err(BadRequest(std::move(m)));
  }
  return out;
}

int64_t PreferredSchedulingTerms::Score(const Node& node) const {
  int64_t score = 0;
  for (const Term& t : terms_) {
    if (t.term.Match(node)) score += t.weight;
  }
  return score;
}

Result<int64_t> PreferredNodeAffinityScore(const Pod& pod, const Node& node) {
  if (!pod.spec.node_affinity || pod.spec.node_affinity->preferred.empty()) return 0;
  Result<PreferredSchedulingTerms> terms =
      PreferredSchedulingTerms::Create(pod.spec.node_affinity->preferred);
  if (!terms) return Err(terms.error());
  return terms->Score(node);
}

}  // namespace kt::api
