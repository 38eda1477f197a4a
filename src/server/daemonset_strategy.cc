#include "server/daemonset_strategy.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>

#include "api/defaults.h"

namespace kt::server {

namespace {

using rapidjson::Value;

const Value* Member(const Value& v, const char* name) {
  if (!v.IsObject()) return nullptr;
  auto m = v.FindMember(name);
  return m == v.MemberEnd() ? nullptr : &m->value;
}

// The template generation an object's annotation holds (upstream's v1 conversion: an
// unparsable value is ignored), or 0.
int64_t TemplateGeneration(const Value& ds) {
  const Value* meta = Member(ds, "metadata");
  const Value* annotations = meta ? Member(*meta, "annotations") : nullptr;
  const Value* v =
      annotations ? Member(*annotations, kTemplateGenerationAnnotation.data()) : nullptr;
  if (v == nullptr || !v->IsString()) return 0;
  std::string_view s(v->GetString(), v->GetStringLength());
  int64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size()) return 0;
  return n;
}

void SetTemplateGeneration(rapidjson::Document& ds, int64_t generation) {
  auto& alloc = ds.GetAllocator();
  auto meta = ds.FindMember("metadata");
  if (meta == ds.MemberEnd() || !meta->value.IsObject()) return;
  auto annotations = meta->value.FindMember("annotations");
  if (annotations == meta->value.MemberEnd() || !annotations->value.IsObject()) {
    if (annotations != meta->value.MemberEnd()) meta->value.RemoveMember(annotations);
    meta->value.AddMember("annotations", Value(rapidjson::kObjectType), alloc);
    annotations = meta->value.FindMember("annotations");
  }
  const std::string value = std::to_string(generation);
  Value& a = annotations->value;
  if (auto m = a.FindMember(kTemplateGenerationAnnotation.data()); m != a.MemberEnd()) {
    m->value.SetString(value.data(), static_cast<rapidjson::SizeType>(value.size()), alloc);
    return;
  }
  a.AddMember(Value(kTemplateGenerationAnnotation.data(), alloc),
              Value(value.data(), static_cast<rapidjson::SizeType>(value.size()), alloc), alloc);
}

const Value* Template(const Value& ds) {
  const Value* spec = Member(ds, "spec");
  return spec ? Member(*spec, "template") : nullptr;
}

}  // namespace

void DefaultDaemonSet(rapidjson::Document& ds) { api::SetDaemonSetDefaults(ds); }

void PrepareDaemonSetForCreate(rapidjson::Document& ds) {
  auto& alloc = ds.GetAllocator();
  Value status(rapidjson::kObjectType);
  for (const char* field :
       {"currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady"}) {
    status.AddMember(rapidjson::StringRef(field), Value(0), alloc);
  }
  if (auto s = ds.FindMember("status"); s != ds.MemberEnd()) ds.RemoveMember(s);
  ds.AddMember("status", std::move(status), alloc);
  SetTemplateGeneration(ds, std::max<int64_t>(TemplateGeneration(ds), 1));
}

void PrepareDaemonSetForUpdate(rapidjson::Document& next, const Value& old) {
  int64_t generation = TemplateGeneration(old);
  const Value* a = Template(next);
  const Value* b = Template(old);
  const bool changed = (a == nullptr) != (b == nullptr) || (a != nullptr && *a != *b);
  if (changed) ++generation;
  SetTemplateGeneration(next, generation);
}

}  // namespace kt::server
