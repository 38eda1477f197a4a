#include "admission/priority.h"

#include "api/codec.h"

namespace kt::admission {

namespace {

using rapidjson::Value;

Status Forbidden(std::string m) { return Status(StatusCode::kForbidden, std::move(m)); }

// The globalDefault class with the lowest value, if any.
std::optional<api::PriorityClass> DefaultClass(const PriorityClasses& classes) {
  const api::PriorityClass* best = nullptr;
  classes.for_each([&](const api::PriorityClass& pc) {
    if (pc.global_default && (best == nullptr || pc.value < best->value)) best = &pc;
  });
  if (best == nullptr) return std::nullopt;
  return *best;
}

Value& Spec(rapidjson::Document& pod) {
  auto it = pod.FindMember("spec");
  if (it == pod.MemberEnd()) {
    pod.AddMember("spec", Value(rapidjson::kObjectType), pod.GetAllocator());
    return pod["spec"];
  }
  if (!it->value.IsObject()) it->value.SetObject();
  return it->value;
}

void SetMember(Value& obj, const char* name, Value v, rapidjson::Document::AllocatorType& alloc) {
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd()) {
    obj.AddMember(Value(name, alloc), v, alloc);
  } else {
    it->value = v;
  }
}

}  // namespace

Status AdmitPodPriorityOnCreate(rapidjson::Document& pod, const PriorityClasses& classes) {
  if (!pod.IsObject()) return Status::Ok();
  auto& alloc = pod.GetAllocator();
  Value& spec = Spec(pod);
  std::string class_name;
  if (auto it = spec.FindMember("priorityClassName");
      it != spec.MemberEnd() && it->value.IsString()) {
    class_name.assign(it->value.GetString(), it->value.GetStringLength());
  }
  int32_t priority = 0;
  std::string policy = "PreemptLowerPriority";
  if (class_name.empty()) {
    if (std::optional<api::PriorityClass> pc = DefaultClass(classes)) {
      priority = pc->value;
      if (!pc->preemption_policy.empty()) policy = pc->preemption_policy;
      SetMember(spec, "priorityClassName", Value(pc->meta.name.c_str(), alloc), alloc);
    }
  } else {
    std::optional<api::PriorityClass> pc = classes.get(class_name);
    if (!pc) return Forbidden("no PriorityClass with name " + class_name + " was found");
    priority = pc->value;
    if (!pc->preemption_policy.empty()) policy = pc->preemption_policy;
  }
  if (auto it = spec.FindMember("priority"); it != spec.MemberEnd() && !it->value.IsNull()) {
    if (!it->value.IsInt() || it->value.GetInt() != priority) {
      const std::string given = it->value.IsInt() ? std::to_string(it->value.GetInt()) : "?";
      return Forbidden("the integer value of priority (" + given +
                       ") must not be provided in pod spec; priority admission controller "
                       "computed " +
                       std::to_string(priority) + " from the given PriorityClass name");
    }
  }
  SetMember(spec, "priority", Value(priority), alloc);
  if (auto it = spec.FindMember("preemptionPolicy");
      it != spec.MemberEnd() && it->value.IsString() &&
      std::string_view(it->value.GetString(), it->value.GetStringLength()) != policy) {
    return Forbidden("the string value of PreemptionPolicy (" +
                     std::string(it->value.GetString(), it->value.GetStringLength()) +
                     ") must not be provided in pod spec; priority admission controller "
                     "computed " +
                     policy + " from the given PriorityClass name");
  }
  SetMember(spec, "preemptionPolicy", Value(policy.c_str(), alloc), alloc);
  return Status::Ok();
}

void AdmitPodPriorityOnUpdate(rapidjson::Document& pod, const rapidjson::Value& old_pod) {
  if (!pod.IsObject() || !old_pod.IsObject()) return;
  auto old_spec = old_pod.FindMember("spec");
  if (old_spec == old_pod.MemberEnd() || !old_spec->value.IsObject()) return;
  auto& alloc = pod.GetAllocator();
  Value& spec = Spec(pod);
  for (const char* field : {"priority", "preemptionPolicy"}) {
    auto now = spec.FindMember(field);
    if (now != spec.MemberEnd() && !now->value.IsNull()) continue;
    auto was = old_spec->value.FindMember(field);
    if (was == old_spec->value.MemberEnd()) continue;
    SetMember(spec, field, Value(was->value, alloc), alloc);
  }
}

Status ValidatePriorityClassDefault(const api::PriorityClass& pc, bool create,
                                    const PriorityClasses& classes) {
  if (!pc.global_default) return Status::Ok();
  std::optional<api::PriorityClass> existing = DefaultClass(classes);
  if (!existing) return Status::Ok();
  if (create || existing->meta.name != pc.meta.name) {
    return Forbidden("PriorityClass " + existing->meta.name +
                     " is already marked as default. Only one default can exist");
  }
  return Status::Ok();
}

Verdict Priority::Admit(Attributes& a, const Listers& listers) const {
  if (!a.IsPods() || !a.subresource.empty() || a.object == nullptr) return Allow();
  if (a.operation == Operation::kCreate) {
    if (Status s = AdmitPodPriorityOnCreate(*a.object, listers.priority_classes); !s.ok()) {
      return Reject(Rejection::Forbidden(s.message()));
    }
  } else if (a.operation == Operation::kUpdate && a.old_object != nullptr) {
    AdmitPodPriorityOnUpdate(*a.object, *a.old_object);
  }
  return Allow();
}

Verdict Priority::Validate(const Attributes& a, const Listers& listers) const {
  const bool priority_classes =
      a.group == "scheduling.k8s.io" && a.resource == "priorityclasses" && a.subresource.empty();
  if (!priority_classes || a.object == nullptr || a.operation == Operation::kDelete) {
    return Allow();
  }
  Result<api::PriorityClass> pc = api::DecodePriorityClass(*a.object);
  if (!pc) return Allow();  // validation has refused it already
  if (Status s = ValidatePriorityClassDefault(*pc, a.operation == Operation::kCreate,
                                              listers.priority_classes);
      !s.ok()) {
    return Reject(Rejection::Forbidden(s.message()));
  }
  return Allow();
}

}  // namespace kt::admission
