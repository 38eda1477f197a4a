#include "controllers/daemonset/util.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <utility>

#include "api/codec.h"
#include "api/table.h"

namespace kt::controllers::daemonset {

namespace {

using rapidjson::Document;
using rapidjson::Value;
using Alloc = Document::AllocatorType;

// v1helper.AddOrUpdateTolerationInPodSpec: every toleration that MatchToleration matches is
// replaced by `t` (nothing changes if one is identical to it); without a match, `t` is appended.
void AddOrUpdateToleration(std::vector<Toleration>* list, const Toleration& t) {
  std::vector<Toleration> out;
  out.reserve(list->size() + 1);
  bool updated = false;
  for (const Toleration& e : *list) {
    if (MatchToleration(t, e)) {
      if (t == e) return;
      out.push_back(t);
      updated = true;
      continue;
    }
    out.push_back(e);
  }
  if (!updated) out.push_back(t);
  *list = std::move(out);
}

Toleration Exists(std::string_view key, std::string_view effect) {
  return Toleration{std::string(key), std::string(kOpExists), "", std::string(effect),
                    std::nullopt};
}

// `in` with every object's members sorted by name (arrays keep their order).
void Canonical(const Value& in, Value& out, Alloc& alloc) {
  if (in.IsObject()) {
    std::vector<const Value::Member*> members;
    for (const auto& m : in.GetObject()) members.push_back(&m);
    std::sort(members.begin(), members.end(), [](const Value::Member* a, const Value::Member* b) {
      return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
             std::string_view(b->name.GetString(), b->name.GetStringLength());
    });
    out.SetObject();
    for (const Value::Member* m : members) {
      Value v;
      Canonical(m->value, v, alloc);
      out.AddMember(Value(m->name, alloc), std::move(v), alloc);
    }
  } else if (in.IsArray()) {
    out.SetArray();
    for (const Value& e : in.GetArray()) {
      Value v;
      Canonical(e, v, alloc);
      out.PushBack(std::move(v), alloc);
    }
  } else {
    out.CopyFrom(in, alloc);
  }
}

const Value* Member(const Value& v, const char* name) {
  if (!v.IsObject()) return nullptr;
  auto m = v.FindMember(name);
  return m == v.MemberEnd() ? nullptr : &m->value;
}

Value String(std::string_view s, Alloc& alloc) {
  return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), alloc);
}

// Sets member `name` of object `obj` to `v`, replacing one that is there.
void Set(Value& obj, const char* name, Value v, Alloc& alloc) {
  if (auto m = obj.FindMember(name); m != obj.MemberEnd()) {
    m->value = std::move(v);
    return;
  }
  obj.AddMember(Value(name, alloc), std::move(v), alloc);
}

// A required node selector of one term: metadata.name In [node].
Value NodeNameSelector(std::string_view node, Alloc& alloc) {
  Value values(rapidjson::kArrayType);
  values.PushBack(String(node, alloc), alloc);
  Value requirement(rapidjson::kObjectType);
  requirement.AddMember("key", "metadata.name", alloc);
  requirement.AddMember("operator", "In", alloc);
  requirement.AddMember("values", std::move(values), alloc);
  Value fields(rapidjson::kArrayType);
  fields.PushBack(std::move(requirement), alloc);
  Value term(rapidjson::kObjectType);
  term.AddMember("matchFields", std::move(fields), alloc);
  Value terms(rapidjson::kArrayType);
  terms.PushBack(std::move(term), alloc);
  Value selector(rapidjson::kObjectType);
  selector.AddMember("nodeSelectorTerms", std::move(terms), alloc);
  return selector;
}

// util.ReplaceDaemonSetPodNodeNameNodeAffinity on a pod spec.
void ReplaceNodeNameNodeAffinity(Value& spec, std::string_view node, Alloc& alloc) {
  constexpr const char* kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
  Value* affinity = nullptr;
  if (auto m = spec.FindMember("affinity"); m != spec.MemberEnd() && m->value.IsObject()) {
    affinity = &m->value;
  } else {
    Set(spec, "affinity", Value(rapidjson::kObjectType), alloc);
    affinity = &spec.FindMember("affinity")->value;
  }
  Value* node_affinity = nullptr;
  if (auto m = affinity->FindMember("nodeAffinity");
      m != affinity->MemberEnd() && m->value.IsObject()) {
    node_affinity = &m->value;
  } else {
    Set(*affinity, "nodeAffinity", Value(rapidjson::kObjectType), alloc);
    node_affinity = &affinity->FindMember("nodeAffinity")->value;
  }
  auto required = node_affinity->FindMember(kRequired);
  if (required == node_affinity->MemberEnd() || !required->value.IsObject()) {
    Set(*node_affinity, kRequired, NodeNameSelector(node, alloc), alloc);
    return;
  }
  Value selector = NodeNameSelector(node, alloc);
  Set(required->value, "nodeSelectorTerms",
      std::move(selector.FindMember("nodeSelectorTerms")->value), alloc);
}

}  // namespace

void AddOrUpdateDaemonPodTolerations(std::vector<Toleration>* tolerations, bool host_network) {
  // The pod must survive the node lifecycle controller's taint-based eviction when its node
  // turns not ready or unreachable, and tolerate the condition taints (TaintNodesByCondition).
  AddOrUpdateToleration(tolerations, Exists(kTaintNodeNotReady, kEffectNoExecute));
  AddOrUpdateToleration(tolerations, Exists(kTaintNodeUnreachable, kEffectNoExecute));
  AddOrUpdateToleration(tolerations, Exists(kTaintNodeDiskPressure, kEffectNoSchedule));
  AddOrUpdateToleration(tolerations, Exists(kTaintNodeMemoryPressure, kEffectNoSchedule));
  AddOrUpdateToleration(tolerations, Exists(kTaintNodePIDPressure, kEffectNoSchedule));
  AddOrUpdateToleration(tolerations, Exists(kTaintNodeUnschedulable, kEffectNoSchedule));
  if (host_network) {
    AddOrUpdateToleration(tolerations, Exists(kTaintNodeNetworkUnavailable, kEffectNoSchedule));
  }
}

DaemonPlacement::DaemonPlacement(const api::DaemonSet& ds, const FeatureGates& gates)
    : tolerations_(ds.template_.spec.tolerations.begin(), ds.template_.spec.tolerations.end()),
      template_node_name_(ds.template_.spec.node_name),
      comparison_operators_(gates.taint_toleration_comparison_operators) {
  pod_.spec.node_selector = ds.template_.spec.node_selector;
  pod_.spec.node_affinity = ds.template_.spec.node_affinity;
  AddOrUpdateDaemonPodTolerations(&tolerations_, ds.template_.spec.host_network);
  affinity_.emplace(pod_);
}

ShouldRun DaemonPlacement::ForNode(const api::Node& node) const {
  if (!template_node_name_.empty() && template_node_name_ != node.meta.name) return {};
  if (!affinity_->Match(node)) return {};
  const std::span<const Taint> taints = node.spec.taints;
  if (FindMatchingUntoleratedTaint(taints, tolerations_, TaintFilter::kNoScheduleOrNoExecute,
                                   comparison_operators_) != nullptr) {
    // Pods already there stay unless a NoExecute taint is not tolerated.
    const bool no_execute =
        FindMatchingUntoleratedTaint(taints, tolerations_, TaintFilter::kNoExecute,
                                     comparison_operators_) != nullptr;
    return {false, !no_execute};
  }
  return {true, true};
}

ShouldRun NodeShouldRunDaemonPod(const api::Node& node, const api::DaemonSet& ds,
                                 const FeatureGates& gates) {
  return DaemonPlacement(ds, gates).ForNode(node);
}

std::string ComputeHash(const Value& pod_template, std::optional<int32_t> collision) {
  Document canonical;
  Canonical(pod_template, canonical, canonical.GetAllocator());
  const std::string json = api::EncodeJson(canonical);
  uint32_t h = 2166136261u;
  auto add = [&h](unsigned char c) {
    h ^= c;
    h *= 16777619u;
  };
  for (unsigned char c : json) add(c);
  if (collision) {
    // binary.LittleEndian.PutUint32 into an 8-byte buffer, all 8 written.
    const auto v = static_cast<uint32_t>(*collision);
    for (int i = 0; i < 8; ++i) add(i < 4 ? static_cast<unsigned char>(v >> (8 * i)) : 0);
  }
  static constexpr std::string_view kAlphanums = "bcdfghjklmnpqrstvwxz2456789";
  std::string out = std::to_string(h);
  for (char& c : out) c = kAlphanums[static_cast<unsigned char>(c) % kAlphanums.size()];
  return out;
}

bool IsPodReady(const api::Pod& pod) {
  for (const api::Condition& c : pod.status.conditions) {
    if (c.type == "Ready") return c.status == "True";
  }
  return false;
}

bool IsPodAvailable(const api::Pod& pod, int32_t min_ready_seconds, client::Time now) {
  if (!IsPodReady(pod)) return false;
  if (min_ready_seconds == 0) return true;
  for (const api::Condition& c : pod.status.conditions) {
    if (c.type != "Ready") continue;
    const api::Timestamp t = api::ParseTimestamp(c.last_transition_time);
    if (t.zero) return false;
    const client::Time since = client::Time(std::chrono::seconds(t.seconds)) +
                               std::chrono::nanoseconds(t.nanos) +
                               std::chrono::seconds(min_ready_seconds);
    return since < now;
  }
  return false;
}

bool IsPodTerminal(const api::Pod& pod) {
  return pod.status.phase == "Failed" || pod.status.phase == "Succeeded";
}

std::optional<std::string> GetTargetNodeName(const api::Pod& pod) {
  if (!pod.spec.node_name.empty()) return pod.spec.node_name;
  if (!pod.spec.node_affinity || !pod.spec.node_affinity->required) return std::nullopt;
  for (const api::NodeSelectorTerm& term : pod.spec.node_affinity->required->terms) {
    for (const api::SelectorRequirement& r : term.match_fields) {
      if (r.key == "metadata.name" && r.op == "In") {
        if (r.values.size() != 1) return std::nullopt;
        return r.values.front();
      }
    }
  }
  return std::nullopt;
}

Result<int> ScaledValueFromIntOrPercent(const api::IntOrString& value, int total) {
  if (!value.is_string) return value.int_value;
  const std::string& s = value.string_value;
  if (s.empty() || s.back() != '%') {
    return Err(
        BadRequest("invalid value for IntOrString: invalid type: string is not a "
                   "percentage"));
  }
  int n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size() - 1, n);
  if (ec != std::errc() || end != s.data() + s.size() - 1) {
    return Err(BadRequest("invalid value for IntOrString: invalid value \"" + s + "\""));
  }
  // Validation keeps percentages at 100 % or less; clamp anyway rather than overflow.
  const double scaled = std::ceil(static_cast<double>(n) * total / 100.0);
  return static_cast<int>(std::min(scaled, static_cast<double>(INT32_MAX)));
}

Result<int> UnavailableCount(const api::DaemonSet& ds, int number_to_schedule) {
  if (ds.update_strategy_type != "RollingUpdate" || !ds.max_unavailable) return 0;
  return ScaledValueFromIntOrPercent(*ds.max_unavailable, number_to_schedule);
}

Result<int> SurgeCount(const api::DaemonSet& ds, int number_to_schedule) {
  if (ds.update_strategy_type != "RollingUpdate" || !ds.max_surge) return 0;
  return ScaledValueFromIntOrPercent(*ds.max_surge, number_to_schedule);
}

Document NewDaemonPod(const Value& ds_json, const api::DaemonSet& ds, std::string_view node,
                      std::string_view hash) {
  Document pod(rapidjson::kObjectType);
  Alloc& alloc = pod.GetAllocator();
  const Value* spec = Member(ds_json, "spec");
  const Value* tmpl = spec ? Member(*spec, "template") : nullptr;
  const Value* tmeta = tmpl ? Member(*tmpl, "metadata") : nullptr;

  api::StringMap labels = ds.template_.meta.labels;
  if (const std::string* g = ds.meta.annotations.Get(kTemplateGenerationAnnotation)) {
    labels.Set(std::string(kTemplateGenerationLabel), *g);
  }
  if (!hash.empty()) labels.Set(std::string(kControllerRevisionHashLabel), std::string(hash));

  Value meta(rapidjson::kObjectType);
  meta.AddMember("generateName", String(ds.meta.name + "-", alloc), alloc);
  Value label_map(rapidjson::kObjectType);
  for (const auto& [k, v] : labels) label_map.AddMember(String(k, alloc), String(v, alloc), alloc);
  meta.AddMember("labels", std::move(label_map), alloc);
  if (const Value* a = tmeta ? Member(*tmeta, "annotations") : nullptr;
      a != nullptr && a->IsObject() && a->MemberCount() > 0) {
    meta.AddMember("annotations", Value(*a, alloc), alloc);
  }
  Value owner(rapidjson::kObjectType);
  owner.AddMember("apiVersion", "apps/v1", alloc);
  owner.AddMember("kind", "DaemonSet", alloc);
  owner.AddMember("name", String(ds.meta.name, alloc), alloc);
  owner.AddMember("uid", String(ds.meta.uid, alloc), alloc);
  owner.AddMember("controller", true, alloc);
  owner.AddMember("blockOwnerDeletion", true, alloc);
  Value owners(rapidjson::kArrayType);
  owners.PushBack(std::move(owner), alloc);
  meta.AddMember("ownerReferences", std::move(owners), alloc);
  if (const Value* f = tmeta ? Member(*tmeta, "finalizers") : nullptr;
      f != nullptr && f->IsArray() && !f->Empty()) {
    meta.AddMember("finalizers", Value(*f, alloc), alloc);
  }

  Value pod_spec(rapidjson::kObjectType);
  if (const Value* s = tmpl ? Member(*tmpl, "spec") : nullptr; s != nullptr && s->IsObject()) {
    pod_spec.CopyFrom(*s, alloc);
  }
  std::vector<Toleration> tolerations(ds.template_.spec.tolerations.begin(),
                                      ds.template_.spec.tolerations.end());
  AddOrUpdateDaemonPodTolerations(&tolerations, ds.template_.spec.host_network);
  Value tol_list(rapidjson::kArrayType);
  for (const Toleration& t : tolerations)
    tol_list.PushBack(api::TolerationToValue(t, alloc), alloc);
  Set(pod_spec, "tolerations", std::move(tol_list), alloc);
  ReplaceNodeNameNodeAffinity(pod_spec, node, alloc);

  pod.AddMember("kind", "Pod", alloc);
  pod.AddMember("apiVersion", "v1", alloc);
  pod.AddMember("metadata", std::move(meta), alloc);
  pod.AddMember("spec", std::move(pod_spec), alloc);
  return pod;
}

}  // namespace kt::controllers::daemonset
