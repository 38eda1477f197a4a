#include "admission/pod_toleration_restriction.h"

#include <cctype>
#include <string>

#include "admission/tolerations.h"
#include "api/codec.h"
#include "api/patch.h"
#include "core/validation.h"

namespace kt::admission {

namespace {

using rapidjson::Value;

// encoding/json's UnmarshalTypeError text.
Status CannotUnmarshal(std::string_view what, std::string_view into) {
  return BadRequest("json: cannot unmarshal " + std::string(what) + " into " + std::string(into));
}

Status FieldTypeError(std::string_view what, std::string_view field, std::string_view go_type) {
  return CannotUnmarshal(what, "Go struct field Toleration." + std::string(field) + " of type " +
                                   std::string(go_type));
}

bool EqualFold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// One v1.Toleration: its JSON fields, their Go types, where they go.
Status DecodeGoToleration(const Value& v, Toleration* t) {
  if (v.IsNull()) return Status::Ok();  // a null element is the zero toleration
  if (!v.IsObject())
    return CannotUnmarshal(api::GoJsonTypeName(v), "Go value of type v1.Toleration");
  struct StringField {
    const char* name;
    const char* go_type;
    std::string Toleration::*member;
  };
  static constexpr StringField kStrings[] = {
      {"key", "string", &Toleration::key},
      {"operator", "v1.TolerationOperator", &Toleration::op},
      {"value", "string", &Toleration::value},
      {"effect", "v1.TaintEffect", &Toleration::effect},
  };
  for (const auto& m : v.GetObject()) {
    const std::string_view name(m.name.GetString(), m.name.GetStringLength());
    const Value& val = m.value;
    if (EqualFold(name, "tolerationSeconds")) {
      if (val.IsNull()) {
        t->toleration_seconds.reset();
      } else if (val.IsInt64()) {
        t->toleration_seconds = val.GetInt64();
      } else if (val.IsNumber()) {
        return FieldTypeError("number " + api::EncodeJson(val), "tolerationSeconds", "int64");
      } else {
        return FieldTypeError(api::GoJsonTypeName(val), "tolerationSeconds", "int64");
      }
      continue;
    }
    for (const StringField& f : kStrings) {
      if (!EqualFold(name, f.name) || val.IsNull()) continue;
      if (!val.IsString()) return FieldTypeError(api::GoJsonTypeName(val), f.name, f.go_type);
      (t->*f.member).assign(val.GetString(), val.GetStringLength());
    }
  }
  return Status::Ok();
}

Result<std::vector<Toleration>> DecodeGoTolerations(const Value& v) {
  std::vector<Toleration> out;
  if (v.IsNull()) return out;
  if (!v.IsArray())
    return Err(CannotUnmarshal(api::GoJsonTypeName(v), "Go value of type []v1.Toleration"));
  out.resize(v.Size());
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    if (Status s = DecodeGoToleration(v[i], &out[i]); !s.ok()) return Err(s);
  }
  return out;
}

// upstream extractNSTolerations: nullopt when the annotation is absent; "" is an empty list.
Result<std::optional<std::vector<Toleration>>> NamespaceTolerations(
    const api::StringMap& annotations, std::string_view key) {
  const std::string* value = annotations.Get(key);
  if (value == nullptr) return std::nullopt;
  if (value->empty()) return std::vector<Toleration>();
  Result<std::vector<Toleration>> list = DecodeTolerationsJson(*value);
  if (!list) return Err(list.error());
  return std::move(*list);
}

// Upstream qos.GetPodQOS(pod) == BestEffort: status.qosClass when the object carries one, else
// whether nothing requests or limits a positive amount of cpu or memory: the pod-level
// spec.resources when given (PodLevelResources, on by default), else every container and init
// container.
bool IsBestEffort(const Value& pod) {
  if (auto status = pod.FindMember("status");
      status != pod.MemberEnd() && status->value.IsObject()) {
    auto qos = status->value.FindMember("qosClass");
    if (qos != status->value.MemberEnd() && qos->value.IsString() &&
        qos->value.GetStringLength() > 0) {
      return std::string_view(qos->value.GetString()) == "BestEffort";
    }
  }
  auto positive = [](const Value& holder) {
    auto resources = holder.FindMember("resources");
    if (resources == holder.MemberEnd() || !resources->value.IsObject()) return false;
    for (const char* list : {"requests", "limits"}) {
      auto l = resources->value.FindMember(list);
      if (l == resources->value.MemberEnd() || !l->value.IsObject()) continue;
      for (const char* name : {"cpu", "memory"}) {
        auto q = l->value.FindMember(name);
        if (q == l->value.MemberEnd()) continue;
        Result<api::Quantity> quantity = api::DecodeQuantity(q->value);
        if (quantity && quantity->Sign() > 0) return true;
      }
    }
    return false;
  };
  auto spec = pod.FindMember("spec");
  if (spec == pod.MemberEnd() || !spec->value.IsObject()) return true;
  if (auto r = spec->value.FindMember("resources");
      r != spec->value.MemberEnd() && r->value.IsObject()) {
    return !positive(spec->value);
  }
  for (const char* list : {"containers", "initContainers"}) {
    auto it = spec->value.FindMember(list);
    if (it == spec->value.MemberEnd() || !it->value.IsArray()) continue;
    for (const Value& c : it->value.GetArray()) {
      if (c.IsObject() && positive(c)) return false;
    }
  }
  return true;
}

bool Ignored(const Attributes& a) {
  return a.operation == Operation::kDelete || !a.IsPods() || !a.subresource.empty() ||
         a.object == nullptr || !a.object->IsObject();
}

std::optional<api::StringMap> Annotations(const Attributes& a, const Listers& listers) {
  return listers.namespaces.annotations(a.namespace_);
}

Rejection NamespaceNotFound(const Attributes& a) {
  return Rejection::NotFound("", "namespaces", std::string(a.namespace_));
}

}  // namespace

Result<std::vector<Toleration>> DecodeTolerationsJson(std::string_view json) {
  if (std::string syntax = api::GoJsonSyntaxError(json); !syntax.empty()) {
    return Err(BadRequest(std::move(syntax)));
  }
  Result<rapidjson::Document> doc = api::ParseJson(json);
  if (!doc) return Err(doc.error());
  return DecodeGoTolerations(*doc);
}

Result<PodTolerationRestrictionConfig> LoadPodTolerationRestrictionConfig(
    const rapidjson::Value* doc, std::string_view source) {
  PodTolerationRestrictionConfig config;
  if (doc == nullptr) return config;
  const std::string where(source);
  if (!doc->IsObject()) {
    return Err(BadRequest(where + ": expected a Configuration object, got " +
                          std::string(api::GoJsonTypeName(*doc))));
  }
  auto string_member = [&](const char* name) {
    auto it = doc->FindMember(name);
    return it != doc->MemberEnd() && it->value.IsString()
               ? std::string(it->value.GetString(), it->value.GetStringLength())
               : std::string();
  };
  const std::string api_version = string_member("apiVersion");
  const std::string kind = string_member("kind");
  const bool known = api_version == "podtolerationrestriction.admission.k8s.io/v1alpha1" ||
                     api_version == "podtolerationrestriction.admission.k8s.io/v1";
  if (!known || kind != "Configuration") {
    return Err(BadRequest(where + ": apiVersion \"" + api_version + "\", kind \"" + kind +
                          "\": want apiVersion podtolerationrestriction.admission.k8s.io/v1alpha1 "
                          "and kind Configuration"));
  }
  for (auto [field, out] :
       {std::pair{"default", &config.default_}, std::pair{"whitelist", &config.whitelist}}) {
    auto it = doc->FindMember(field);
    if (it == doc->MemberEnd()) continue;
    Result<std::vector<Toleration>> list = DecodeGoTolerations(it->value);
    if (!list) return Err(list.error().WithPrefix(where + ": " + field + ": "));
    *out = std::move(*list);
  }
  // Upstream ValidateConfiguration: `invalid config: ` and the field errors as Go prints a list.
  FieldErrorList errs = ValidateTolerations(config.default_, "podtolerationrestriction.default",
                                            /*allow_comparison_operators=*/false);
  FieldErrorList more = ValidateTolerations(config.whitelist, "podtolerationrestriction.whitelist",
                                            /*allow_comparison_operators=*/false);
  errs.insert(errs.end(), more.begin(), more.end());
  if (!errs.empty()) {
    std::string message = where + ": invalid config: [";
    for (size_t i = 0; i < errs.size(); ++i) {
      if (i > 0) message += ' ';
      message += errs[i].ToString();
    }
    return Err(BadRequest(message + "]"));
  }
  return config;
}

Verdict PodTolerationRestriction::Admit(Attributes& a, const Listers& listers) const {
  if (Ignored(a)) return Allow();
  Result<api::Pod> pod = api::DecodePod(*a.object);
  if (!pod) return Allow();  // decoding refuses the pod after admission
  std::vector<Toleration> extra;
  if (a.operation == Operation::kCreate) {
    std::optional<api::StringMap> annotations = Annotations(a, listers);
    if (!annotations) return Reject(NamespaceNotFound(a));
    auto defaults = NamespaceTolerations(*annotations, kDefaultTolerationsAnnotation);
    if (!defaults) return Reject(Rejection::Error(defaults.error().message()));
    extra = defaults->value_or(config_.default_);
  }
  if (!IsBestEffort(*a.object)) {
    extra.push_back(Toleration{.key = std::string(kTaintNodeMemoryPressure),
                               .op = std::string(kOpExists),
                               .value = "",
                               .effect = std::string(kEffectNoSchedule),
                               .toleration_seconds = std::nullopt});
  }
  if (!extra.empty()) {
    const std::vector<Toleration> own(pod->spec.tolerations.begin(), pod->spec.tolerations.end());
    std::vector<Toleration> merged = MergeTolerations(own, extra);
    // Rewritten only when it changes, so that an update that changes nothing writes nothing.
    if (merged != own) (void)api::SetTolerations(*a.object, merged);
  }
  // Upstream's Admit ends with its Validate: the whitelist refuses before object validation.
  return Validate(a, listers);
}

Verdict PodTolerationRestriction::Validate(const Attributes& a, const Listers& listers) const {
  if (Ignored(a)) return Allow();
  Result<api::Pod> pod = api::DecodePod(*a.object);
  if (!pod || pod->spec.tolerations.empty()) return Allow();
  std::optional<api::StringMap> annotations = Annotations(a, listers);
  if (!annotations) return Reject(NamespaceNotFound(a));
  auto own = NamespaceTolerations(*annotations, kTolerationsWhitelistAnnotation);
  if (!own) return Reject(Rejection::Error(own.error().message()));
  const std::vector<Toleration>& whitelist = own->has_value() ? **own : config_.whitelist;
  const char* scope = own->has_value() ? "namespace" : "cluster";
  const std::vector<Toleration> tolerations(pod->spec.tolerations.begin(),
                                            pod->spec.tolerations.end());
  if (!VerifyAgainstWhitelist(tolerations, whitelist)) {
    return Reject(Rejection::Error(
        std::string("pod tolerations (possibly merged with namespace default tolerations) "
                    "conflict with its ") +
        scope + " whitelist"));
  }
  return Allow();
}

}  // namespace kt::admission
