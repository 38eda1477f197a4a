#include "server/object.h"

#include <cstring>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "api/codec.h"
#include "api/string_output.h"

namespace kt::server {

namespace {

constexpr std::string_view kMetadataOpen = "\"metadata\":{";

}  // namespace

const api::ObjectMeta& StoredObject::meta() const {
  static const api::ObjectMeta* empty = new api::ObjectMeta();
  const api::ObjectMeta* m = MetaOf(typed);
  return m ? *m : *empty;
}

std::string_view StoredObject::Field(api::fields::Field f) const {
  using api::fields::Field;
  if (f == Field::kMetadataName) return meta().name;
  if (f == Field::kMetadataNamespace) return meta().namespace_;
  for (const auto& [field, value] : fields) {
    if (field == f) return value;
  }
  return {};
}

std::string WithResourceVersion(std::string_view stored, store::Revision revision) {
  const std::string rv = std::to_string(revision);
  // In the storage format "metadata" comes right after two short string members, so its first
  // occurrence is the member itself (a string value cannot hold an unescaped quote).
  size_t pos = stored.find(kMetadataOpen);
  if (pos != std::string_view::npos && pos < 256) {
    pos += kMetadataOpen.size();
    const bool empty = pos < stored.size() && stored[pos] == '}';
    std::string out;
    out.reserve(stored.size() + rv.size() + 24);
    out.append(stored.substr(0, pos));
    out.append("\"resourceVersion\":\"").append(rv).append(empty ? "\"" : "\",");
    out.append(stored.substr(pos));
    return out;
  }
  Result<rapidjson::Document> doc = api::ParseJson(stored);
  if (!doc || !doc->IsObject()) return std::string(stored);
  (void)api::SetResourceVersion(*doc, rv);
  return api::EncodeJson(*doc);
}

std::string EncodeForStorage(const rapidjson::Value& object) {
  std::string out;
  out.reserve(1024);
  api::StringOutput os(&out);
  rapidjson::Writer<api::StringOutput> w(os);
  w.StartObject();
  for (const char* name : {"kind", "apiVersion"}) {
    auto it = object.FindMember(name);
    if (it != object.MemberEnd()) {
      w.Key(name);
      it->value.Accept(w);
    }
  }
  w.Key("metadata");
  w.StartObject();
  auto meta = object.FindMember("metadata");
  if (meta != object.MemberEnd() && meta->value.IsObject()) {
    for (const auto& m : meta->value.GetObject()) {
      if (std::strcmp(m.name.GetString(), "resourceVersion") == 0) continue;
      w.Key(m.name.GetString(), m.name.GetStringLength());
      m.value.Accept(w);
    }
  }
  w.EndObject();
  for (const auto& m : object.GetObject()) {
    std::string_view name(m.name.GetString(), m.name.GetStringLength());
    if (name == "kind" || name == "apiVersion" || name == "metadata") continue;
    w.Key(m.name.GetString(), m.name.GetStringLength());
    m.value.Accept(w);
  }
  w.EndObject();
  return out;
}

Result<TypedObject> DecodeTyped(Resource resource, const rapidjson::Value& object) {
  auto wrap = [](auto r) -> Result<TypedObject> {
    if (!r) return Err(r.error());
    return TypedObject(std::move(*r));
  };
  switch (resource) {
    case Resource::kNamespaces:
      return wrap(api::DecodeNamespace(object));
    case Resource::kNodes:
      return wrap(api::DecodeNode(object));
    case Resource::kPods:
      return wrap(api::DecodePod(object));
    case Resource::kEvents:
      return wrap(api::DecodeEvent(object));
    case Resource::kLeases:
      return wrap(api::DecodeLease(object));
    case Resource::kPriorityClasses:
      return wrap(api::DecodePriorityClass(object));
    case Resource::kDaemonSets:
      return wrap(api::DecodeDaemonSet(object));
  }
  return Err(Internal("unknown resource"));
}

const api::ObjectMeta* MetaOf(const TypedObject& typed) {
  return std::visit(
      [](const auto& v) -> const api::ObjectMeta* {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
          return nullptr;
        } else {
          return &v.meta;
        }
      },
      typed);
}

Result<ObjectPtr> MakeStoredObject(const ResourceInfo& info, std::string key,
                                   std::string_view stored, store::Revision revision,
                                   store::Revision create_revision) {
  auto obj = std::make_shared<StoredObject>();
  obj->resource = info.resource;
  obj->json = store::MakeBytes(WithResourceVersion(stored, revision));
  obj->revision = revision;
  obj->create_revision = create_revision;
  obj->key = std::move(key);
  Result<rapidjson::Document> doc = api::ParseTrustedJson(*obj->json);
  if (!doc) return Err(doc.error());
  if (!doc->IsObject()) return Err(BadRequest("stored object is not a JSON object"));
  Result<TypedObject> typed = DecodeTyped(info.resource, *doc);
  if (!typed) return Err(typed.error());
  obj->typed = std::move(*typed);
  obj->fields.reserve(info.fields.size());
  for (api::fields::Field f : info.fields) {
    obj->fields.emplace_back(f, std::string(api::fields::FieldValue(*doc, f)));
  }
  return ObjectPtr(std::move(obj));
}

}  // namespace kt::server
