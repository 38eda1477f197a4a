#include "api/defaults.h"

#include <string_view>
#include <utility>

namespace kt::api {

namespace {

using rapidjson::Value;

void RequestsFromLimits(Value& container, rapidjson::Document::AllocatorType& alloc) {
  if (!container.IsObject()) return;
  auto res = container.FindMember("resources");
  if (res == container.MemberEnd() || !res->value.IsObject()) return;
  auto limits = res->value.FindMember("limits");
  if (limits == res->value.MemberEnd() || !limits->value.IsObject() ||
      limits->value.MemberCount() == 0) {
    return;
  }
  auto requests = res->value.FindMember("requests");
  if (requests == res->value.MemberEnd() || !requests->value.IsObject()) {
    if (requests != res->value.MemberEnd()) res->value.RemoveMember(requests);
    res->value.AddMember("requests", Value(rapidjson::kObjectType), alloc);
    requests = res->value.FindMember("requests");
  }
  limits = res->value.FindMember("limits");  // the add may have moved the members
  for (auto& l : limits->value.GetObject()) {
    if (!requests->value.HasMember(l.name)) {
      requests->value.AddMember(Value(l.name, alloc), Value(l.value, alloc), alloc);
    }
  }
}

// The object member `name` of `parent`, added empty when absent or null (another type is
// returned as it is, for validation to report).
Value& ObjectMember(Value& parent, const char* name, rapidjson::Document::AllocatorType& alloc) {
  auto m = parent.FindMember(name);
  if (m != parent.MemberEnd() && !m->value.IsNull()) return m->value;
  if (m != parent.MemberEnd()) parent.RemoveMember(m);
  parent.AddMember(rapidjson::StringRef(name), Value(rapidjson::kObjectType), alloc);
  return parent.FindMember(name)->value;
}

}  // namespace

void SetPodDefaults(rapidjson::Document& pod) {
  if (!pod.IsObject()) return;
  auto spec = pod.FindMember("spec");
  if (spec == pod.MemberEnd() || !spec->value.IsObject()) return;
  SetPodSpecDefaults(spec->value, pod.GetAllocator());
}

void SetPodSpecDefaults(Value& s, rapidjson::Document::AllocatorType& alloc) {
  if (!s.IsObject()) return;
  auto name = s.FindMember("schedulerName");
  if (name == s.MemberEnd() || !name->value.IsString() || name->value.GetStringLength() == 0) {
    if (name != s.MemberEnd()) s.RemoveMember(name);
    s.AddMember("schedulerName", "default-scheduler", alloc);
  }
  // Upstream's DefaultTerminationGracePeriodSeconds: what a graceful delete waits for.
  if (auto g = s.FindMember("terminationGracePeriodSeconds");
      g == s.MemberEnd() || g->value.IsNull()) {
    if (g != s.MemberEnd()) s.RemoveMember(g);
    s.AddMember("terminationGracePeriodSeconds", int64_t{30}, alloc);
  }
  for (const char* list : {"initContainers", "containers"}) {
    auto l = s.FindMember(list);
    if (l == s.MemberEnd() || !l->value.IsArray()) continue;
    for (Value& c : l->value.GetArray()) RequestsFromLimits(c, alloc);
  }
}

void SetDaemonSetDefaults(rapidjson::Document& ds) {
  if (!ds.IsObject()) return;
  auto& alloc = ds.GetAllocator();
  auto spec = ds.FindMember("spec");
  if (spec == ds.MemberEnd() || !spec->value.IsObject()) return;
  Value& s = spec->value;
  Value& strategy = ObjectMember(s, "updateStrategy", alloc);
  if (!strategy.IsObject()) return;  // validation reports it
  auto type = strategy.FindMember("type");
  if (type == strategy.MemberEnd() || !type->value.IsString() ||
      type->value.GetStringLength() == 0) {
    if (type != strategy.MemberEnd()) strategy.RemoveMember(type);
    strategy.AddMember("type", "RollingUpdate", alloc);
    type = strategy.FindMember("type");
  }
  if (std::string_view(type->value.GetString(), type->value.GetStringLength()) == "RollingUpdate") {
    Value& rolling = ObjectMember(strategy, "rollingUpdate", alloc);
    if (rolling.IsObject()) {
      for (auto [field, value] : {std::pair{"maxUnavailable", 1}, std::pair{"maxSurge", 0}}) {
        auto m = rolling.FindMember(field);
        if (m != rolling.MemberEnd() && !m->value.IsNull()) continue;
        if (m != rolling.MemberEnd()) rolling.RemoveMember(m);
        rolling.AddMember(rapidjson::StringRef(field), Value(value), alloc);
      }
    }
  }
  auto limit = s.FindMember("revisionHistoryLimit");
  if (limit == s.MemberEnd() || limit->value.IsNull()) {
    if (limit != s.MemberEnd()) s.RemoveMember(limit);
    s.AddMember("revisionHistoryLimit", 10, alloc);
  }
  auto tmpl = s.FindMember("template");
  if (tmpl == s.MemberEnd() || !tmpl->value.IsObject()) return;
  auto pod_spec = tmpl->value.FindMember("spec");
  if (pod_spec != tmpl->value.MemberEnd()) SetPodSpecDefaults(pod_spec->value, alloc);
}

}  // namespace kt::api
