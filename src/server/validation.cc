#include "server/validation.h"

#include <algorithm>
#include <iterator>

#include "api/scheduling.h"
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

// The pod spec with the fields an update may change masked out (upstream ValidatePodUpdate).
Value MaskedPodSpec(const Value& pod, Alloc& alloc) {
  auto it = pod.FindMember("spec");
  if (it == pod.MemberEnd()) return Value(rapidjson::kObjectType);
  Value spec(it->value, alloc);
  if (!spec.IsObject()) return spec;
  for (const char* list : {"containers", "initContainers"}) {
    auto l = spec.FindMember(list);
    if (l == spec.MemberEnd() || !l->value.IsArray()) continue;
    for (Value& c : l->value.GetArray()) {
      if (c.IsObject()) c.RemoveMember("image");
    }
  }
  for (const char* name : {"tolerations", "activeDeadlineSeconds", "terminationGracePeriodSeconds",
                           "schedulingGates"}) {
    spec.RemoveMember(name);
  }
  return spec;
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
        Document scratch;
        if (MaskedPodSpec(doc, scratch.GetAllocator()) !=
            MaskedPodSpec(*old_doc, scratch.GetAllocator())) {
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
      if (!ds.selector) errs.push_back(FieldError::Required("spec.selector"));
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
