#include "server/validation.h"

#include <algorithm>
#include <iterator>

#include "api/scheduling.h"
#include "api/selector.h"
#include "core/validation.h"

namespace kt::server {

namespace {

using rapidjson::Document;
using rapidjson::Value;
using Alloc = Document::AllocatorType;

std::string_view StringMember(const Value& obj, const char* name) {
  if (!obj.IsObject()) return {};
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

void AddNameErrors(FieldErrorList& errs, std::string_view field, std::string_view value,
                   const std::vector<std::string>& messages) {
  for (const std::string& m : messages) {
    errs.push_back(FieldError::Invalid(std::string(field), GoQuote(value), m));
  }
}

// A list of owner references as upstream (>= 1.34) prints a bad one: JSON in Go field order.
std::string OwnerReferencesJson(std::span<const api::OwnerReference> refs) {
  std::string out = "[";
  for (size_t i = 0; i < refs.size(); ++i) {
    const api::OwnerReference& r = refs[i];
    if (i > 0) out += ",";
    out += "{\"apiVersion\":" + JsonString(r.api_version) + ",\"kind\":" + JsonString(r.kind) +
           ",\"name\":" + JsonString(r.name) + ",\"uid\":" + JsonString(r.uid);
    if (r.controller) out += ",\"controller\":true";
    if (r.block_owner_deletion) out += ",\"blockOwnerDeletion\":true";
    out += "}";
  }
  return out + "]";
}

// Upstream ValidateOwnerReferences (apimachinery pkg/api/validation/objectmeta.go): every
// reference names a version, kind, name and uid, and at most one is the controller.
void ValidateOwnerReferences(std::span<const api::OwnerReference> refs, FieldErrorList& errs) {
  const std::string path = "metadata.ownerReferences";
  std::string first_controller;
  for (const api::OwnerReference& r : refs) {
    const size_t slash = r.api_version.rfind('/');
    const std::string_view version = slash == std::string::npos
                                         ? std::string_view(r.api_version)
                                         : std::string_view(r.api_version).substr(slash + 1);
    if (version.empty()) {
      errs.push_back(FieldError::Invalid(path + ".apiVersion", GoQuote(r.api_version),
                                         "version must not be empty"));
    }
    if (r.kind.empty()) {
      errs.push_back(FieldError::Invalid(path + ".kind", GoQuote(r.kind), "must not be empty"));
    }
    if (r.name.empty()) {
      errs.push_back(FieldError::Invalid(path + ".name", GoQuote(r.name), "must not be empty"));
    }
    if (r.uid.empty()) {
      errs.push_back(FieldError::Invalid(path + ".uid", GoQuote(r.uid), "must not be empty"));
    }
    if (!r.controller) continue;
    const std::string name = r.kind + "/" + r.name;
    if (first_controller.empty()) {
      first_controller = name;
      continue;
    }
    errs.push_back(FieldError::Invalid(
        path, OwnerReferencesJson(refs),
        "Only one reference can have Controller set to true. Found \"true\" in references for " +
            first_controller + " and " + name));
  }
}

void ValidateMeta(const ResourceInfo& info, const api::ObjectMeta& meta, FieldErrorList& errs) {
  if (meta.name.empty()) {
    errs.push_back(FieldError::Required("metadata.name", "name or generateName is required"));
  } else if (info.resource == Resource::kNamespaces) {
    AddNameErrors(errs, "metadata.name", meta.name, IsDNS1123Label(meta.name));
  } else {
    AddNameErrors(errs, "metadata.name", meta.name, IsDNS1123Subdomain(meta.name));
  }
  for (const auto& [key, value] : meta.labels) {
    AddNameErrors(errs, "metadata.labels", key, IsQualifiedName(key));
    AddNameErrors(errs, "metadata.labels", value, IsValidLabelValue(value));
  }
  for (const auto& [key, value] : meta.annotations) {
    std::vector<std::string> messages = IsQualifiedName(key);
    for (std::string& m : messages) {
      errs.push_back(FieldError::Invalid("metadata.annotations", GoQuote(key), std::move(m)));
    }
  }
  ValidateOwnerReferences(meta.owner_references, errs);
}

// Upstream ValidateNodeSelectorRequirement (pkg/apis/core/validation), for a required term
// (label values checked) or a preferred one (not checked).
void ValidateNodeSelectorRequirement(const api::SelectorRequirement& rq, bool check_values,
                                     const std::string& path, FieldErrorList& errs) {
  const std::string values = path + ".values";
  if (rq.op == "In" || rq.op == "NotIn") {
    if (rq.values.empty()) {
      errs.push_back(
          FieldError::Required(values, "must be specified when `operator` is 'In' or 'NotIn'"));
    }
  } else if (rq.op == "Exists" || rq.op == "DoesNotExist") {
    if (!rq.values.empty()) {
      errs.push_back(FieldError::Forbidden(
          values, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    }
  } else if (rq.op == "Gt" || rq.op == "Lt") {
    if (rq.values.size() != 1) {
      errs.push_back(FieldError::Required(
          values, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
    }
  } else {
    errs.push_back(FieldError::Invalid(path + ".operator", JsonString(rq.op),
                                       "not a valid selector operator"));
  }
  AddNameErrors(errs, path + ".key", rq.key, IsQualifiedName(rq.key));
  if (!check_values) return;
  for (size_t i = 0; i < rq.values.size(); ++i) {
    AddNameErrors(errs, values + "[" + std::to_string(i) + "]", rq.values[i],
                  IsValidLabelValue(rq.values[i]));
  }
}

// Upstream ValidateNodeFieldSelectorRequirement: metadata.name only, In/NotIn with one value.
void ValidateNodeFieldSelectorRequirement(const api::SelectorRequirement& rq,
                                          const std::string& path, FieldErrorList& errs) {
  if (rq.op == "In" || rq.op == "NotIn") {
    if (rq.values.size() != 1) {
      errs.push_back(FieldError::Required(
          path + ".values",
          "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
    }
  } else {
    errs.push_back(FieldError::Invalid(path + ".operator", JsonString(rq.op),
                                       "not a valid selector operator"));
  }
  if (rq.key != "metadata.name") {
    errs.push_back(
        FieldError::Invalid(path + ".key", GoQuote(rq.key), "not a valid field selector key"));
    return;
  }
  for (size_t i = 0; i < rq.values.size(); ++i) {
    AddNameErrors(errs, path + ".values[" + std::to_string(i) + "]", rq.values[i],
                  IsDNS1123Subdomain(rq.values[i]));
  }
}

void ValidateNodeSelectorTerm(const api::NodeSelectorTerm& term, bool check_values,
                              const std::string& path, FieldErrorList& errs) {
  for (size_t j = 0; j < term.match_expressions.size(); ++j) {
    ValidateNodeSelectorRequirement(term.match_expressions[j], check_values,
                                    path + ".matchExpressions[" + std::to_string(j) + "]", errs);
  }
  for (size_t j = 0; j < term.match_fields.size(); ++j) {
    ValidateNodeFieldSelectorRequirement(term.match_fields[j],
                                         path + ".matchFields[" + std::to_string(j) + "]", errs);
  }
}

// A new pod's spec.nodeSelector (upstream ValidateLabels) and spec.affinity.nodeAffinity
// (upstream validateNodeAffinity).
void ValidateNodeSelection(const api::PodSpec& spec, FieldErrorList& errs) {
  for (const auto& [key, value] : spec.node_selector) {
    AddNameErrors(errs, "spec.nodeSelector", key, IsQualifiedName(key));
    AddNameErrors(errs, "spec.nodeSelector", value, IsValidLabelValue(value));
  }
  if (!spec.node_affinity) return;
  const std::string path = "spec.affinity.nodeAffinity";
  if (const auto& required = spec.node_affinity->required) {
    const std::string terms =
        path + ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
    if (required->terms.empty()) {
      errs.push_back(FieldError::Required(terms, "must have at least one node selector term"));
    }
    for (size_t i = 0; i < required->terms.size(); ++i) {
      ValidateNodeSelectorTerm(required->terms[i], /*check_values=*/true,
                               terms + "[" + std::to_string(i) + "]", errs);
    }
  }
  const auto& preferred = spec.node_affinity->preferred;
  for (size_t i = 0; i < preferred.size(); ++i) {
    const std::string term =
        path + ".preferredDuringSchedulingIgnoredDuringExecution[" + std::to_string(i) + "]";
    if (preferred[i].weight <= 0 || preferred[i].weight > 100) {
      errs.push_back(FieldError::Invalid(term + ".weight", std::to_string(preferred[i].weight),
                                         "must be in the range 1-100"));
    }
    ValidateNodeSelectorTerm(preferred[i].preference, /*check_values=*/false, term + ".preference",
                             errs);
  }
}

void ValidateContainers(const Value& spec, FieldErrorList& errs) {
  auto it = spec.FindMember("containers");
  if (it == spec.MemberEnd() || !it->value.IsArray() || it->value.Empty()) {
    errs.push_back(FieldError::Required("spec.containers"));
  }
  for (const char* list : {"initContainers", "containers"}) {
    auto l = spec.FindMember(list);
    if (l == spec.MemberEnd() || !l->value.IsArray()) continue;
    std::vector<std::string_view> seen;
    for (rapidjson::SizeType i = 0; i < l->value.Size(); ++i) {
      const Value& c = l->value[i];
      const std::string path = std::string("spec.") + list + "[" + std::to_string(i) + "]";
      std::string_view name = StringMember(c, "name");
      if (name.empty()) {
        errs.push_back(FieldError::Required(path + ".name"));
      } else {
        AddNameErrors(errs, path + ".name", name, IsDNS1123Label(name));
        for (std::string_view s : seen) {
          if (s == name) errs.push_back(FieldError::Duplicate(path + ".name", GoQuote(name)));
        }
        seen.push_back(name);
      }
      if (StringMember(c, "image").empty()) errs.push_back(FieldError::Required(path + ".image"));
    }
  }
}

// Whether a spec member is one a pod update may change (upstream ValidatePodUpdate's mask).
bool MaskedPodSpecMember(std::string_view name) {
  return name == "tolerations" || name == "activeDeadlineSeconds" ||
         name == "terminationGracePeriodSeconds" || name == "schedulingGates";
}

std::string_view NameOf(const Value& name) {
  return std::string_view(name.GetString(), name.GetStringLength());
}

// Two objects with the same members but those `skip` names, each pair of which `equal(name, a,
// b)` finds equal, compared in place. Values that are not both objects: equal if identical.
template <class Skip, class Equal>
bool ObjectsEqualExcept(const Value& a, const Value& b, Skip skip, Equal equal) {
  if (!a.IsObject() || !b.IsObject()) return a == b;
  size_t members = 0;
  for (const auto& m : a.GetObject()) {
    const std::string_view name = NameOf(m.name);
    if (skip(name)) continue;
    ++members;
    auto o = b.FindMember(m.name);
    if (o == b.MemberEnd() || !equal(name, m.value, o->value)) return false;
  }
  for (const auto& m : b.GetObject()) {
    if (!skip(NameOf(m.name))) --members;
  }
  return members == 0;
}

// Two pod specs equal but for the fields an update may change (upstream ValidatePodUpdate:
// container images, tolerations, activeDeadlineSeconds, terminationGracePeriodSeconds,
// schedulingGates), compared in place.
bool PodSpecsEqualMasked(const Value& a, const Value& b) {
  auto same = [](std::string_view, const Value& x, const Value& y) { return x == y; };
  auto image = [](std::string_view name) { return name == "image"; };
  return ObjectsEqualExcept(
      a, b, MaskedPodSpecMember, [&](std::string_view name, const Value& x, const Value& y) {
        if ((name != "containers" && name != "initContainers") || !x.IsArray() || !y.IsArray()) {
          return x == y;
        }
        if (x.Size() != y.Size()) return false;
        for (rapidjson::SizeType i = 0; i < x.Size(); ++i) {
          if (!ObjectsEqualExcept(x[i], y[i], image, same)) return false;
        }
        return true;
      });
}

// Go's %#v of a map[string]string, as upstream prints template labels.
std::string GoStringMap(const api::StringMap& m) {
  if (m.empty()) return "map[string]string(nil)";
  std::string out = "map[string]string{";
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first) out += ", ";
    first = false;
    out += GoQuote(k) + ":" + GoQuote(v);
  }
  return out + "}";
}

std::string IntOrStringValue(const api::IntOrString& v) {
  return v.is_string ? GoQuote(v.string_value) : std::to_string(v.int_value);
}

// upstream getIntOrPercentValue: the percentage or the integer (0 for a bad percentage).
int IntOrPercentValue(const api::IntOrString& v) {
  if (!v.is_string) return v.int_value;
  const std::string& s = v.string_value;
  if (s.size() < 2 || s.back() != '%') return 0;
  int n = 0;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return 0;
    n = std::min(n * 10 + (s[i] - '0'), 1'000'000);
  }
  return n;
}

// Upstream ValidatePositiveIntOrPercent and IsNotMoreThan100Percent.
void ValidateIntOrPercent(const api::IntOrString& v, const std::string& path,
                          FieldErrorList& errs) {
  if (!v.is_string) {
    if (v.int_value < 0) {
      errs.push_back(FieldError::Invalid(path, std::to_string(v.int_value),
                                         "must be greater than or equal to 0"));
    }
    return;
  }
  const std::string& s = v.string_value;
  bool ok = s.size() >= 2 && s.back() == '%';
  for (size_t i = 0; ok && i + 1 < s.size(); ++i) ok = s[i] >= '0' && s[i] <= '9';
  if (!ok) {
    errs.push_back(FieldError::Invalid(
        path, GoQuote(s),
        "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  "
        "or '93%', regex used for validation is '[0-9]+%')"));
  } else if (IntOrPercentValue(v) > 100) {
    errs.push_back(FieldError::Invalid(path, GoQuote(s), "must not be greater than 100%"));
  }
}

// Upstream ValidateDaemonSetSpec and ValidateDaemonSetUpdate (pkg/apis/apps/validation): the
// selector (set, not empty, matching the template's labels, immutable), the template's
// restartPolicy, minReadySeconds and the update strategy.
void ValidateDaemonSetSpec(const api::DaemonSet& ds, const Value* old_doc, const Value& doc,
                           FieldErrorList& errs) {
  if (!ds.selector) {
    errs.push_back(FieldError::Required("spec.selector"));
  } else if (ds.selector->match_labels.empty() && ds.selector->match_expressions.empty()) {
    errs.push_back(
        FieldError::Invalid("spec.selector", "{}", "empty selector is invalid for daemonset"));
  } else if (Result<api::labels::Selector> sel = api::labels::FromLabelSelector(*ds.selector);
             !sel) {
    errs.push_back(FieldError::Invalid("spec.selector", "{}", sel.error().message()));
  } else if (!sel->Matches(ds.template_.meta.labels)) {
    errs.push_back(FieldError::Invalid("spec.template.metadata.labels",
                                       GoStringMap(ds.template_.meta.labels),
                                       "`selector` does not match template `labels`"));
  }
  if (old_doc != nullptr) {
    auto selector_of = [](const Value& d) -> const Value* {
      auto spec = d.FindMember("spec");
      if (spec == d.MemberEnd() || !spec->value.IsObject()) return nullptr;
      auto sel = spec->value.FindMember("selector");
      return sel == spec->value.MemberEnd() ? nullptr : &sel->value;
    };
    const Value* a = selector_of(doc);
    const Value* b = selector_of(*old_doc);
    if ((a == nullptr) != (b == nullptr) || (a != nullptr && *a != *b)) {
      errs.push_back(FieldError::Invalid("spec.selector", "{}", "field is immutable"));
    }
  }
  const std::string& restart = ds.template_.spec.restart_policy;
  if (!restart.empty() && restart != "Always") {
    static constexpr std::string_view kAlways[] = {"Always"};
    errs.push_back(
        FieldError::NotSupported("spec.template.spec.restartPolicy", GoQuote(restart), kAlways));
  }
  if (ds.min_ready_seconds < 0) {
    errs.push_back(FieldError::Invalid("spec.minReadySeconds", std::to_string(ds.min_ready_seconds),
                                       "must be greater than or equal to 0"));
  }
  const std::string path = "spec.updateStrategy";
  if (ds.update_strategy_type == "RollingUpdate") {
    const std::string ru = path + ".rollingUpdate";
    const api::IntOrString zero;
    const api::IntOrString& unavailable = ds.max_unavailable.value_or(zero);
    const api::IntOrString& surge = ds.max_surge.value_or(zero);
    ValidateIntOrPercent(unavailable, ru + ".maxUnavailable", errs);
    ValidateIntOrPercent(surge, ru + ".maxSurge", errs);
    const bool has_unavailable = IntOrPercentValue(unavailable) != 0;
    const bool has_surge = IntOrPercentValue(surge) != 0;
    if (has_unavailable && has_surge) {
      errs.push_back(FieldError::Invalid(ru + ".maxSurge", IntOrStringValue(surge),
                                         "may not be set when maxUnavailable is non-zero"));
    } else if (!has_unavailable && !has_surge) {
      errs.push_back(
          FieldError::Required(ru + ".maxUnavailable", "cannot be 0 when maxSurge is 0"));
    }
  } else if (ds.update_strategy_type != "OnDelete") {
    static constexpr std::string_view kTypes[] = {"RollingUpdate", "OnDelete"};
    errs.push_back(FieldError::NotSupported(path, GoQuote(ds.update_strategy_type), kTypes));
  }
}

constexpr std::string_view kPodUpdateForbidden =
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
    "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set "
    "to 1 if it was previously negative)";

// Upstream ValidatePriorityClass on create, ValidatePriorityClassUpdate on update
// (pkg/apis/scheduling/validation); `old` is null on create.
void ValidatePriorityClass(const api::PriorityClass& pc, const api::PriorityClass* old,
                           FieldErrorList& errs) {
  if (old != nullptr) {
    if (pc.value != old->value) {
      errs.push_back(FieldError::Forbidden("value", "may not be changed in an update."));
    }
    if (pc.preemption_policy != old->preemption_policy) {
      errs.push_back(FieldError::Invalid("preemptionPolicy", JsonString(pc.preemption_policy),
                                         "field is immutable"));
    }
    return;
  }
  if (pc.meta.name.starts_with(api::kSystemPriorityClassPrefix)) {
    std::string why = api::IsKnownSystemPriorityClass(pc.meta.name, pc.value, pc.global_default);
    if (!why.empty()) {
      errs.push_back(FieldError::Forbidden(
          "metadata.name", "priority class names with '" +
                               std::string(api::kSystemPriorityClassPrefix) +
                               "' prefix are reserved for system use only. error: " + why));
    }
  } else if (pc.value > api::kHighestUserDefinablePriority) {
    errs.push_back(FieldError::Forbidden("value",
                                         "maximum allowed value of a user defined "
                                         "priority is " +
                                             std::to_string(api::kHighestUserDefinablePriority)));
  }
  // The API server has defaulted an absent preemptionPolicy; one given as "" stays.
  static constexpr std::string_view kPolicies[] = {"PreemptLowerPriority", "Never"};
  if (pc.preemption_policy.empty()) {
    errs.push_back(FieldError::Required("preemptionPolicy"));
  } else if (pc.preemption_policy != kPolicies[0] && pc.preemption_policy != kPolicies[1]) {
    errs.push_back(
        FieldError::NotSupported("preemptionPolicy", JsonString(pc.preemption_policy), kPolicies));
  }
}

}  // namespace

FieldErrorList ValidateObject(const ResourceInfo& info, const Value& doc, const TypedObject& typed,
                              const Value* old_doc, const TypedObject* old_typed,
                              const FeatureGates& gates) {
  FieldErrorList errs;
  if (const api::ObjectMeta* meta = MetaOf(typed)) ValidateMeta(info, *meta, errs);
  switch (info.resource) {
    case Resource::kNodes: {
      const api::Node& node = *typed.Get<api::Node>();
      FieldErrorList e = ValidateNodeTaints(node.spec.taints, "metadata.taints");
      errs.insert(errs.end(), std::make_move_iterator(e.begin()), std::make_move_iterator(e.end()));
      break;
    }
    case Resource::kPods: {
      const api::Pod& pod = *typed.Get<api::Pod>();
      auto spec = doc.FindMember("spec");
      if (spec == doc.MemberEnd() || !spec->value.IsObject()) {
        errs.push_back(FieldError::Required("spec.containers"));
        break;
      }
      if (old_typed != nullptr) {
        const api::Pod& old = *old_typed->Get<api::Pod>();
        static const Value kNoSpec(rapidjson::kObjectType);
        auto old_spec = old_doc->FindMember("spec");
        if (!PodSpecsEqualMasked(spec->value,
                                 old_spec != old_doc->MemberEnd() ? old_spec->value : kNoSpec)) {
          errs.push_back(FieldError::Forbidden("spec", std::string(kPodUpdateForbidden)));
          break;
        }
        FieldErrorList e =
            ValidatePodTolerationsUpdate(old.spec.tolerations, pod.spec.tolerations, gates);
        errs.insert(errs.end(), std::make_move_iterator(e.begin()),
                    std::make_move_iterator(e.end()));
        // Scheduling gates can only be removed (upstream validateSchedulingGates on update).
        for (const std::string& gate : pod.spec.scheduling_gates) {
          if (std::find(old.spec.scheduling_gates.begin(), old.spec.scheduling_gates.end(), gate) ==
              old.spec.scheduling_gates.end()) {
            errs.push_back(FieldError::Forbidden(
                "spec.schedulingGates",
                "only deletion is allowed, but found new scheduling gate '" + gate + "'"));
          }
        }
        break;
      }
      ValidateContainers(spec->value, errs);
      ValidateNodeSelection(pod.spec, errs);
      FieldErrorList e = ValidateTolerations(pod.spec.tolerations, "spec.tolerations",
                                             AllowComparisonOperators(gates, {}));
      errs.insert(errs.end(), std::make_move_iterator(e.begin()), std::make_move_iterator(e.end()));
      break;
    }
    case Resource::kNamespaces: {
      // The phase follows the deletion (upstream ValidateNamespaceStatusUpdate); only an
      // update can bring the two apart, a create always starts Active.
      if (old_typed == nullptr) break;
      const api::Namespace& ns = *typed.Get<api::Namespace>();
      if (!ns.meta.deletion_timestamp && ns.phase != "Active") {
        errs.push_back(FieldError::Invalid("status.Phase", JsonString(ns.phase),
                                           "may only be 'Active' if `deletionTimestamp` is empty"));
      } else if (ns.meta.deletion_timestamp && ns.phase != "Terminating") {
        errs.push_back(
            FieldError::Invalid("status.Phase", JsonString(ns.phase),
                                "may only be 'Terminating' if `deletionTimestamp` is not empty"));
      }
      break;
    }
    case Resource::kDaemonSets: {
      const api::DaemonSet& ds = *typed.Get<api::DaemonSet>();
      ValidateDaemonSetSpec(ds, old_doc, doc, errs);
      FieldErrorList e =
          ValidateTolerations(ds.template_.spec.tolerations, "spec.template.spec.tolerations",
                              AllowComparisonOperators(gates, {}));
      errs.insert(errs.end(), std::make_move_iterator(e.begin()), std::make_move_iterator(e.end()));
      break;
    }
    case Resource::kPriorityClasses:
      ValidatePriorityClass(*typed.Get<api::PriorityClass>(),
                            old_typed ? old_typed->Get<api::PriorityClass>() : nullptr, errs);
      break;
    default:
      break;
  }
  return errs;
}

}  // namespace kt::server
