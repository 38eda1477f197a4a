#include "api/defaults.h"

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

}  // namespace

void SetPodDefaults(rapidjson::Document& pod) {
  if (!pod.IsObject()) return;
  auto& alloc = pod.GetAllocator();
  auto spec = pod.FindMember("spec");
  if (spec == pod.MemberEnd() || !spec->value.IsObject()) return;
  Value& s = spec->value;
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

}  // namespace kt::api
