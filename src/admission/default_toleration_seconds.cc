#include "admission/default_toleration_seconds.h"

#include "core/taint.h"

namespace kt::admission {

namespace {

using rapidjson::Value;

std::string_view StringMember(const Value& obj, const char* name) {
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

// Whether `toleration` covers `key`:NoExecute the way upstream decides it: key equal or empty,
// effect NoExecute or empty, whatever the operator and value.
bool Covers(const Value& toleration, std::string_view key) {
  if (!toleration.IsObject()) return false;
  std::string_view k = StringMember(toleration, "key");
  std::string_view effect = StringMember(toleration, "effect");
  return (k.empty() || k == key) && (effect.empty() || effect == kEffectNoExecute);
}

Value NoExecuteToleration(std::string_view key, int64_t seconds,
                          rapidjson::Document::AllocatorType& alloc) {
  Value t(rapidjson::kObjectType);
  t.AddMember("key", Value(key.data(), static_cast<rapidjson::SizeType>(key.size()), alloc), alloc);
  t.AddMember("operator", "Exists", alloc);
  t.AddMember("effect", "NoExecute", alloc);
  t.AddMember("tolerationSeconds", Value(seconds), alloc);
  return t;
}

}  // namespace

Verdict DefaultTolerationSeconds::Admit(Attributes& a, const Listers& /*listers*/) const {
  if (a.operation == Operation::kDelete || !a.IsPods() || !a.subresource.empty()) return Allow();
  if (a.object == nullptr || !a.object->IsObject()) return Allow();
  rapidjson::Document& pod = *a.object;
  auto spec = pod.FindMember("spec");
  if (spec == pod.MemberEnd() || !spec->value.IsObject()) return Allow();
  auto& alloc = pod.GetAllocator();
  auto list = spec->value.FindMember("tolerations");
  if (list == spec->value.MemberEnd()) {
    spec->value.AddMember("tolerations", Value(rapidjson::kArrayType), alloc);
    list = spec->value.FindMember("tolerations");
  } else if (list->value.IsNull()) {
    list->value.SetArray();
  } else if (!list->value.IsArray()) {
    return Allow();  // not a list: decoding refuses the pod
  }
  bool not_ready = false;
  bool unreachable = false;
  for (const Value& t : list->value.GetArray()) {
    not_ready = not_ready || Covers(t, kTaintNodeNotReady);
    unreachable = unreachable || Covers(t, kTaintNodeUnreachable);
  }
  if (!not_ready) {
    list->value.PushBack(NoExecuteToleration(kTaintNodeNotReady, not_ready_seconds_, alloc), alloc);
  }
  if (!unreachable) {
    list->value.PushBack(NoExecuteToleration(kTaintNodeUnreachable, unreachable_seconds_, alloc),
                         alloc);
  }
  return Allow();
}

}  // namespace kt::admission
