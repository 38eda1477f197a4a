#include "admission/taint_nodes_by_condition.h"

#include "core/taint.h"

namespace kt::admission {

namespace {

using rapidjson::Value;

bool IsString(const Value& obj, const char* name, std::string_view want) {
  auto it = obj.FindMember(name);
  return it != obj.MemberEnd() && it->value.IsString() &&
         std::string_view(it->value.GetString(), it->value.GetStringLength()) == want;
}

}  // namespace

Verdict TaintNodesByCondition::Admit(Attributes& a, const Listers& /*listers*/) const {
  const bool node_create = a.operation == Operation::kCreate && a.group.empty() &&
                           a.resource == "nodes" && a.subresource.empty();
  if (!node_create || a.object == nullptr || !a.object->IsObject()) return Allow();
  rapidjson::Document& node = *a.object;
  auto& alloc = node.GetAllocator();
  auto spec = node.FindMember("spec");
  if (spec == node.MemberEnd()) {
    node.AddMember("spec", Value(rapidjson::kObjectType), alloc);
    spec = node.FindMember("spec");
  } else if (spec->value.IsNull()) {
    spec->value.SetObject();
  } else if (!spec->value.IsObject()) {
    return Allow();  // decoding refuses the node
  }
  auto taints = spec->value.FindMember("taints");
  if (taints == spec->value.MemberEnd()) {
    spec->value.AddMember("taints", Value(rapidjson::kArrayType), alloc);
    taints = spec->value.FindMember("taints");
  } else if (taints->value.IsNull()) {
    taints->value.SetArray();
  } else if (!taints->value.IsArray()) {
    return Allow();
  }
  // The same taint is the same key and effect (upstream MatchTaint); its value does not matter.
  for (const Value& t : taints->value.GetArray()) {
    if (t.IsObject() && IsString(t, "key", kTaintNodeNotReady) &&
        IsString(t, "effect", kEffectNoSchedule)) {
      return Allow();
    }
  }
  Value taint(rapidjson::kObjectType);
  taint.AddMember("key",
                  Value(rapidjson::StringRef(kTaintNodeNotReady.data(), kTaintNodeNotReady.size())),
                  alloc);
  taint.AddMember("effect", "NoSchedule", alloc);
  taints->value.PushBack(std::move(taint), alloc);
  return Allow();
}

}  // namespace kt::admission
