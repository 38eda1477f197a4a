#include "server/object.h"

#include <cstring>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "api/codec.h"
#include "api/json_writer.h"

namespace kt::server {

namespace {

constexpr std::string_view kMetadataOpen = "\"metadata\":{";

}  // namespace

const api::ObjectMeta* TypedObject::meta() const {
  return std::visit(
      [](const auto& v) -> const api::ObjectMeta* {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
          return nullptr;
        } else {
          return &v->meta;
        }
      },
      view_);
}

bool TypedObject::SetResourceVersion(store::Revision revision) {
  return std::visit(
      [revision](auto& v) -> bool {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
          return false;
        } else {
          if (v.use_count() != 1) return false;
          // Unshared: this is the only reference, so the view may still change.
          using T = typename std::decay_t<decltype(v)>::element_type;
          const_cast<std::remove_const_t<T>&>(*v).meta.resource_version = std::to_string(revision);
          return true;
        }
      },
      view_);
}

const api::ObjectMeta& StoredObject::meta() const {
  static const api::ObjectMeta* empty = new api::ObjectMeta();
  const api::ObjectMeta* m = typed.meta();
  return m ? *m : *empty;
}

namespace {

std::string_view BoolText(bool b) { return b ? "true" : "false"; }

// Upstream's pod field set (pkg/registry/core/pod/strategy.go PodToSelectableFields).
std::string_view PodField(const api::Pod& pod, api::fields::Field f) {
  using api::fields::Field;
  switch (f) {
    case Field::kSpecNodeName:
      return pod.spec.node_name;
    case Field::kSpecRestartPolicy:
      return pod.spec.restart_policy;
    case Field::kSpecSchedulerName:
      return pod.spec.scheduler_name;
    case Field::kSpecServiceAccountName:
      return pod.spec.service_account_name;
    case Field::kSpecHostNetwork:
      return BoolText(pod.spec.host_network);
    case Field::kStatusPhase:
      return pod.status.phase;
    case Field::kStatusPodIP:
      // status.podIPs[0] when there is one, as upstream; else the legacy status.podIP.
      return pod.status.pod_ips.empty() ? std::string_view(pod.status.pod_ip)
                                        : std::string_view(pod.status.pod_ips.front());
    case Field::kStatusNominatedNodeName:
      return pod.status.nominated_node_name;
    default:
      return {};
  }
}

std::string_view EventField(const api::Event& ev, api::fields::Field f) {
  using api::fields::Field;
  const api::ObjectReference& o = ev.involved_object;
  switch (f) {
    case Field::kInvolvedObjectKind:
      return o.kind;
    case Field::kInvolvedObjectNamespace:
      return o.namespace_;
    case Field::kInvolvedObjectName:
      return o.name;
    case Field::kInvolvedObjectUid:
      return o.uid;
    case Field::kInvolvedObjectApiVersion:
      return o.api_version;
    case Field::kInvolvedObjectResourceVersion:
      return o.resource_version;
    case Field::kInvolvedObjectFieldPath:
      return o.field_path;
    case Field::kReason:
      return ev.reason;
    case Field::kReportingComponent:
      return ev.reporting_component;
    case Field::kSource:
      return ev.source_component.empty() ? ev.reporting_component : ev.source_component;
    case Field::kType:
      return ev.type;
    default:
      return {};
  }
}

}  // namespace

// Computed at match time rather than kept per object: every value is a member of the typed
// view (or a constant), so this costs a switch, and the cache holds no second copy of them.
// It must agree with api::fields::FieldValue on the object's JSON for every field in the
// kind's ResourceInfo::fields (object_test.cc checks it).
std::string_view StoredObject::Field(api::fields::Field f) const {
  using api::fields::Field;
  if (f == Field::kMetadataName) return meta().name;
  if (f == Field::kMetadataNamespace) return meta().namespace_;
  if (const api::Pod* pod = typed.Get<api::Pod>()) return PodField(*pod, f);
  if (const api::Node* node = typed.Get<api::Node>()) {
    return f == Field::kSpecUnschedulable ? BoolText(node->spec.unschedulable) : "";
  }
  if (const api::Namespace* ns = typed.Get<api::Namespace>()) {
    return f == Field::kStatusPhase ? std::string_view(ns->phase) : "";
  }
  if (const api::Event* ev = typed.Get<api::Event>()) return EventField(*ev, f);
  return {};
}

namespace {

constexpr std::string_view kResourceVersionOpen = "\"resourceVersion\":\"";

// Where the members of the storage format's metadata object begin (just after
// `"metadata":{`), or npos when the bytes are not in the storage format. "metadata" comes right
// after two short string members, so its first occurrence is the member itself (a string value
// cannot hold an unescaped quote).
size_t MetadataBody(std::string_view bytes) {
  const size_t pos = bytes.find(kMetadataOpen);
  if (pos == std::string_view::npos || pos >= 256) return std::string_view::npos;
  return pos + kMetadataOpen.size();
}

}  // namespace

bool HasResourceVersion(std::string_view bytes, store::Revision revision) {
  const size_t body = MetadataBody(bytes);
  if (body == std::string_view::npos) return false;
  std::string_view rest = bytes.substr(body);
  if (!rest.starts_with(kResourceVersionOpen)) return false;
  rest.remove_prefix(kResourceVersionOpen.size());
  const std::string rv = std::to_string(revision);
  return rest.starts_with(rv) && rest.substr(rv.size()).starts_with('"');
}

std::optional<std::pair<size_t, size_t>> MetadataObject(std::string_view bytes) {
  const size_t body = MetadataBody(bytes);
  if (body == std::string_view::npos) return std::nullopt;
  int depth = 1;
  for (size_t i = body; i < bytes.size(); ++i) {
    switch (bytes[i]) {
      case '"':
        // To the closing quote: past escaped characters, which may be quotes.
        for (++i; i < bytes.size() && bytes[i] != '"'; ++i) {
          if (bytes[i] == '\\') ++i;
        }
        if (i >= bytes.size()) return std::nullopt;
        break;
      case '{':
      case '[':
        ++depth;
        break;
      case '}':
      case ']':
        if (--depth == 0) return std::make_pair(body - 1, i + 1);
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

std::string WithMetadata(std::string_view bytes, std::pair<size_t, size_t> span,
                         const rapidjson::Value& metadata) {
  std::string out;
  out.reserve(bytes.size() + 64);
  out.append(bytes.substr(0, span.first));
  {
    api::JsonWriter w(&out);  // done with `out` once it goes
    w.StartObject();
    for (const auto& m : metadata.GetObject()) {
      if (std::strcmp(m.name.GetString(), "resourceVersion") == 0) continue;
      w.Key(m.name.GetString(), m.name.GetStringLength());
      m.value.Accept(w);
    }
    w.EndObject();
    w.Finish();
  }
  out.append(bytes.substr(span.second));
  return out;
}

std::string WithResourceVersion(std::string_view stored, store::Revision revision) {
  const std::string rv = std::to_string(revision);
  const size_t body = MetadataBody(stored);
  if (body != std::string_view::npos) {
    std::string_view rest = stored.substr(body);
    // Stamped bytes: replace the value (a DELETED event's last state, a dry run).
    if (rest.starts_with(kResourceVersionOpen)) {
      const size_t value = body + kResourceVersionOpen.size();
      const size_t close = stored.find('"', value);
      if (close != std::string_view::npos) {
        std::string out;
        out.reserve(stored.size() + rv.size());
        out.append(stored.substr(0, value)).append(rv).append(stored.substr(close));
        return out;
      }
    }
    const bool empty = !rest.empty() && rest.front() == '}';
    std::string out;
    out.reserve(stored.size() + rv.size() + 24);
    out.append(stored.substr(0, body));
    out.append(kResourceVersionOpen).append(rv).append(empty ? "\"" : "\",");
    out.append(rest);
    return out;
  }
  Result<rapidjson::Document> doc = api::ParseJson(stored);
  if (!doc || !doc->IsObject()) return std::string(stored);
  (void)api::SetResourceVersion(*doc, rv);
  return api::EncodeJson(*doc);
}

store::Bytes StampResourceVersion(store::Revision revision, const store::Bytes& value) {
  return store::MakeBytes(WithResourceVersion(*value, revision));
}

std::string EncodeForStorage(const rapidjson::Value& object) {
  std::string out;
  out.reserve(1024);
  api::JsonWriter w(&out);
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
  w.Finish();
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

Result<ObjectPtr> MakeStoredObject(const ResourceInfo& info, std::string key,
                                   const store::Bytes& stored, store::Revision revision,
                                   store::Revision create_revision) {
  auto obj = std::make_shared<StoredObject>();
  obj->resource = info.resource;
  const std::string_view bytes = stored ? std::string_view(*stored) : std::string_view();
  // Stamped by the registry's write: serve the store's buffer itself.
  obj->json = stored && HasResourceVersion(bytes, revision)
                  ? stored
                  : store::MakeBytes(WithResourceVersion(bytes, revision));
  obj->revision = revision;
  obj->create_revision = create_revision;
  obj->key = std::move(key);
  // Parsed in place in a per-thread scratch copy: the served bytes stay untouched, and the
  // document's strings need no copies of their own (most of the cost of a start-up).
  thread_local std::string scratch;
  scratch.assign(*obj->json);
  Result<TypedObject> typed = [&]() -> Result<TypedObject> {
    Result<rapidjson::Document> doc = api::ParseTrustedJsonInPlace(scratch);
    if (!doc) return Err(doc.error());
    if (!doc->IsObject()) return Err(BadRequest("stored object is not a JSON object"));
    return DecodeTyped(info.resource, *doc);
  }();
  // A rare huge object must not stay pinned in every thread that once decoded one.
  if (scratch.capacity() > (64 << 10)) std::string().swap(scratch);
  if (!typed) return Err(typed.error());
  obj->typed = std::move(*typed);
  return ObjectPtr(std::move(obj));
}

Result<ObjectPtr> MakeStoredObjectWithView(const ResourceInfo& info, std::string key,
                                           const store::Bytes& stored, store::Revision revision,
                                           store::Revision create_revision, TypedObject typed) {
  if (typed.empty() || !stored || !HasResourceVersion(*stored, revision)) {
    return MakeStoredObject(info, std::move(key), stored, revision, create_revision);
  }
  auto obj = std::make_shared<StoredObject>();
  obj->resource = info.resource;
  obj->json = stored;
  obj->revision = revision;
  obj->create_revision = create_revision;
  obj->key = std::move(key);
  obj->typed = std::move(typed);
  return ObjectPtr(std::move(obj));
}

}  // namespace kt::server
