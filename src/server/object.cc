#include "server/object.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
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
  // Found by its `m`, which the members before it seldom hold, rather than by each quote.
  constexpr size_t kWithin = 256;  // where the member must start
  const std::string_view head = bytes.substr(0, kWithin + kMetadataOpen.size());
  for (size_t from = 1; from < head.size();) {
    const void* m = std::memchr(head.data() + from, 'm', head.size() - from);
    if (m == nullptr) break;
    const size_t pos = static_cast<size_t>(static_cast<const char*>(m) - head.data()) - 1;
    if (pos >= kWithin) break;
    if (head.substr(pos).starts_with(kMetadataOpen)) return pos + kMetadataOpen.size();
    from = pos + 2;
  }
  return std::string_view::npos;
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

namespace {

// Scanning compact JSON in the storage format (valid, written by JsonWriter): each function takes
// the index of a value's first byte and returns one past its last, or npos when the bytes end
// first. Most of a stored object's bytes are in strings, which are crossed with memchr from
// quote to quote; a quote ends the string unless an odd run of backslashes escapes it.
size_t SkipString(std::string_view s, size_t i) {
  const size_t first = i + 1;
  for (size_t from = first; from < s.size();) {
    const void* found = std::memchr(s.data() + from, '"', s.size() - from);
    if (found == nullptr) return std::string_view::npos;
    const size_t quote = static_cast<size_t>(static_cast<const char*>(found) - s.data());
    size_t run = quote;
    while (run > first && s[run - 1] == '\\') --run;
    if ((quote - run) % 2 == 0) return quote + 1;
    from = quote + 1;
  }
  return std::string_view::npos;
}

// The bytes a container's scan stops at; every other byte outside strings is passed over.
constexpr std::array<bool, 256> kStructural = [] {
  std::array<bool, 256> t{};
  for (unsigned char c : {'"', '{', '[', '}', ']'}) t[c] = true;
  return t;
}();

size_t SkipValue(std::string_view s, size_t i) {
  if (i >= s.size()) return std::string_view::npos;
  if (s[i] == '"') return SkipString(s, i);
  if (s[i] != '{' && s[i] != '[') {
    while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']') ++i;
    return i;
  }
  int depth = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (!kStructural[static_cast<unsigned char>(c)]) continue;
    if (c == '"') {
      i = SkipString(s, i);
      if (i == std::string_view::npos) return i;
      --i;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (--depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// The same bytes read backward. Outside strings quotes pair up in either direction, and a
// quote is a string's end or start unless an odd run of backslashes escapes it; so from the
// closing quote of a string, its opening quote is the first unescaped quote before it.
size_t StringStart(std::string_view s, size_t closing_quote) {
  for (size_t to = closing_quote; to > 0;) {
    const void* found = memrchr(s.data(), '"', to);
    if (found == nullptr) return std::string_view::npos;
    const size_t quote = static_cast<size_t>(static_cast<const char*>(found) - s.data());
    size_t run = quote;
    while (run > 0 && s[run - 1] == '\\') --run;
    if ((quote - run) % 2 == 0) return quote;
    to = quote;
  }
  return std::string_view::npos;
}

// The index of the `{` or `[` that the `}` or `]` at `close` ends, or npos.
size_t ContainerStart(std::string_view s, size_t close) {
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    const char c = s[i];
    if (!kStructural[static_cast<unsigned char>(c)]) continue;
    if (c == '"') {
      i = StringStart(s, i);
      if (i == std::string_view::npos) return i;
    } else if (c == '}' || c == ']') {
      ++depth;
    } else if (--depth == 0) {
      return i;
    }
  }
  return std::string_view::npos;
}

// Where the value of the object's last member starts when that member is `"<key>":{...}` and
// the object ends the bytes (a stored object's last member, found without crossing the rest of
// it); npos otherwise.
size_t LastMemberObject(std::string_view s, std::string_view key) {
  if (s.size() < key.size() + 6 || s.back() != '}' || s[s.size() - 2] != '}') {
    return std::string_view::npos;
  }
  const size_t open = ContainerStart(s, s.size() - 2);
  if (open == std::string_view::npos || s[open] != '{' || open < key.size() + 4) {
    return std::string_view::npos;
  }
  const std::string_view before = s.substr(open - key.size() - 4, key.size() + 4);
  if ((before[0] != ',' && before[0] != '{') || before[1] != '"' ||
      before.substr(2, key.size()) != key || before.substr(key.size() + 2) != "\":") {
    return std::string_view::npos;
  }
  return open;
}

// Calls f(key, value_begin, value_end) for each member of the object whose `{` is at `open`, the
// key as written between its quotes; returns the index of the object's `}`, or npos.
template <class F>
size_t ForEachMember(std::string_view s, size_t open, F f) {
  if (open >= s.size() || s[open] != '{') return std::string_view::npos;
  size_t i = open + 1;
  if (i < s.size() && s[i] == '}') return i;
  for (;;) {
    const size_t key_end = SkipString(s, i);
    if (key_end == std::string_view::npos || key_end >= s.size() || s[key_end] != ':') {
      return std::string_view::npos;
    }
    const size_t value = key_end + 1;
    const size_t end = SkipValue(s, value);
    if (end == std::string_view::npos || end >= s.size()) return std::string_view::npos;
    f(s.substr(i + 1, key_end - i - 2), value, end);
    if (s[end] == '}') return end;
    if (s[end] != ',') return std::string_view::npos;
    i = end + 1;
  }
}

// Calls f(begin, end) for each element of the array whose `[` is at `open`; returns the index of
// its `]`, or npos.
template <class F>
size_t ForEachElement(std::string_view s, size_t open, F f) {
  if (open >= s.size() || s[open] != '[') return std::string_view::npos;
  size_t i = open + 1;
  if (i < s.size() && s[i] == ']') return i;
  for (;;) {
    const size_t end = SkipValue(s, i);
    if (end == std::string_view::npos || end >= s.size()) return std::string_view::npos;
    f(i, end);
    if (s[end] == ']') return end;
    if (s[end] != ',') return std::string_view::npos;
    i = end + 1;
  }
}

}  // namespace

std::optional<std::pair<size_t, size_t>> MetadataObject(std::string_view bytes) {
  const size_t body = MetadataBody(bytes);
  if (body == std::string_view::npos) return std::nullopt;
  const size_t end = SkipValue(bytes, body - 1);
  if (end == std::string_view::npos) return std::nullopt;
  return std::make_pair(body - 1, end);
}

namespace {

// Where the stamped resourceVersion lies in bytes of the storage format: from the first byte of
// metadata's body to one past the comma after it (other members follow); nullopt otherwise.
std::optional<std::pair<size_t, size_t>> StampedResourceVersion(std::string_view stored) {
  constexpr size_t npos = std::string_view::npos;
  const size_t body = MetadataBody(stored);
  if (body == npos || !stored.substr(body).starts_with(kResourceVersionOpen)) return std::nullopt;
  const size_t rv_close = stored.find('"', body + kResourceVersionOpen.size());
  if (rv_close == npos || rv_close + 1 >= stored.size() || stored[rv_close + 1] != ',') {
    return std::nullopt;
  }
  return std::make_pair(body, rv_close + 2);
}

}  // namespace

std::optional<std::string> WithPodCondition(std::string_view stored, std::string_view type,
                                            std::string_view condition, std::string_view node) {
  constexpr size_t npos = std::string_view::npos;
  // The stamped resourceVersion, first in metadata, is dropped.
  const auto rv = StampedResourceVersion(stored);
  if (!rv) return std::nullopt;
  const auto [body, rv_end] = *rv;
  size_t spec = npos, status = npos;
  bool bad = false;
  // A condition alone needs only status, which pods as stored have last: found from the end.
  if (node.empty()) status = LastMemberObject(stored, "status");
  if (status == npos) {
    const size_t root_end = ForEachMember(stored, 0, [&](std::string_view key, size_t v, size_t) {
      if (key == "spec") spec = v;
      if (key == "status") status = v;
      if ((key == "spec" || key == "status") && stored[v] != '{') bad = true;
    });
    if (root_end == npos || bad || status == npos || (!node.empty() && spec == npos)) {
      return std::nullopt;
    }
  }
  // spec: nodeName goes last (none may be there yet).
  size_t spec_close = npos;
  if (!node.empty()) {
    spec_close = ForEachMember(stored, spec, [&](std::string_view key, size_t, size_t) {
      if (key == "nodeName") bad = true;
    });
    if (spec_close == npos || bad) return std::nullopt;
  }
  // status.conditions: the condition goes last (none of its type may be there yet).
  size_t conditions = npos;
  const size_t status_close =
      ForEachMember(stored, status, [&](std::string_view key, size_t v, size_t) {
        if (key != "conditions") return;
        conditions = v;
        if (stored[v] != '[') bad = true;
      });
  if (status_close == npos || bad) return std::nullopt;
  size_t conditions_close = npos;
  if (conditions != npos) {
    conditions_close = ForEachElement(stored, conditions, [&](size_t begin, size_t) {
      if (stored[begin] != '{') {
        bad = true;
        return;
      }
      ForEachMember(stored, begin, [&](std::string_view key, size_t v, size_t end) {
        // A type as JsonWriter writes it: quoted, with nothing escaped in a qualified name.
        if (key == "type" && end - v == type.size() + 2 &&
            stored.substr(v + 1, type.size()) == type) {
          bad = true;
        }
      });
    });
    if (conditions_close == npos || bad) return std::nullopt;
  }
  // The insertions, in the order they come in the bytes (the nodeName one, when there is none,
  // empty at the end).
  struct Insert {
    size_t at;
    std::string text;
  };
  Insert inserts[2];
  if (conditions_close != npos) {
    inserts[0].at = conditions_close;
    inserts[0].text.append(stored[conditions_close - 1] == '[' ? "" : ",").append(condition);
  } else {
    inserts[0].at = status_close;
    inserts[0]
        .text.append(stored[status_close - 1] == '{' ? "" : ",")
        .append("\"conditions\":[")
        .append(condition)
        .append("]");
  }
  inserts[1].at = stored.size();
  if (!node.empty()) {
    inserts[1].at = spec_close;
    inserts[1]
        .text.append(stored[spec_close - 1] == '{' ? "" : ",")
        .append("\"nodeName\":")
        .append(node);
  }
  if (inserts[1].at < inserts[0].at) std::swap(inserts[0], inserts[1]);
  if (inserts[0].at < rv_end) return std::nullopt;
  std::string out;
  out.reserve(stored.size() + inserts[0].text.size() + inserts[1].text.size() + kStampRoom);
  out.append(stored.substr(0, body));
  out.append(stored.substr(rv_end, inserts[0].at - rv_end)).append(inserts[0].text);
  out.append(stored.substr(inserts[0].at, inserts[1].at - inserts[0].at)).append(inserts[1].text);
  out.append(stored.substr(inserts[1].at));
  return out;
}

std::optional<std::string> WithDeletionMarks(std::string_view stored, std::string_view timestamp,
                                             int64_t grace, bool* generation_raised) {
  constexpr size_t npos = std::string_view::npos;
  *generation_raised = false;
  const auto rv = StampedResourceVersion(stored);
  if (!rv) return std::nullopt;
  const auto [body, rv_end] = *rv;
  size_t generation = npos, generation_end = npos;
  bool bad = false;
  const size_t close =
      ForEachMember(stored, body - 1, [&](std::string_view key, size_t v, size_t e) {
        if (key == "deletionTimestamp" || key == "deletionGracePeriodSeconds") bad = true;
        if (key == "generation") generation = v, generation_end = e;
      });
  if (close == npos || bad) return std::nullopt;
  // The generation as the parse path reads it: raised when it is an int64 above 0, and
  // otherwise copied with the rest.
  std::string raised;
  if (generation != npos) {
    int64_t g = 0;
    const char* first = stored.data() + generation;
    const char* last = stored.data() + generation_end;
    const auto [end, ec] = std::from_chars(first, last, g);
    if (ec != std::errc() || end != last || g == INT64_MAX) return std::nullopt;
    if (g > 0) raised = std::to_string(g + 1);
  }
  *generation_raised = !raised.empty();
  if (raised.empty()) generation = generation_end = close;
  const std::string grace_text = std::to_string(grace);
  std::string out;
  out.reserve(stored.size() + timestamp.size() + grace_text.size() + 64 + kStampRoom);
  out.append(stored.substr(0, body));
  out.append(stored.substr(rv_end, generation - rv_end)).append(raised);
  out.append(stored.substr(generation_end, close - generation_end));
  out.append(",\"deletionTimestamp\":\"").append(timestamp).append("\"");
  out.append(",\"deletionGracePeriodSeconds\":").append(grace_text);
  out.append(stored.substr(close));
  return out;
}

std::string WithMetadata(std::string_view bytes, std::pair<size_t, size_t> span,
                         const rapidjson::Value& metadata) {
  // The metadata is written first, so the result is allocated once at its size.
  return api::WriteThroughScratch(
      [&](api::JsonWriter& w) {
        w.StartObject();
        for (const auto& m : metadata.GetObject()) {
          if (std::strcmp(m.name.GetString(), "resourceVersion") == 0) continue;
          w.Key(m.name.GetString(), m.name.GetStringLength());
          m.value.Accept(w);
        }
        w.EndObject();
      },
      [&](std::string_view meta) {
        std::string out;
        out.reserve(bytes.size() - (span.second - span.first) + meta.size() + kStampRoom);
        out.append(bytes.substr(0, span.first)).append(meta).append(bytes.substr(span.second));
        return out;
      });
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

bool StampInPlace(std::string& stored, store::Revision revision) {
  const size_t body = MetadataBody(stored);
  if (body == std::string_view::npos || body >= stored.size()) return false;
  const std::string_view rest = std::string_view(stored).substr(body);
  if (rest.starts_with(kResourceVersionOpen)) return false;
  // `"resourceVersion":"<rev>",` composed on the stack, then moved in with the bytes after it.
  char member[kStampRoom];
  char* out = std::copy(kResourceVersionOpen.begin(), kResourceVersionOpen.end(), member);
  const auto [end, ec] = std::to_chars(out, member + kStampRoom - 2, revision);
  if (ec != std::errc()) return false;
  out = end;
  *out++ = '"';
  if (rest.front() != '}') *out++ = ',';
  stored.insert(body, member, static_cast<size_t>(out - member));
  return true;
}

store::Bytes StampResourceVersion(store::Revision revision, const store::Bytes& value) {
  return store::MakeBytes(WithResourceVersion(*value, revision));
}

namespace {

void WriteForStorage(api::JsonWriter& w, const rapidjson::Value& object) {
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
}

}  // namespace

void FitForStorage(std::string& stored) {
  const size_t want = stored.size() + kStampRoom;
  // Within an eighth of the size: jemalloc's size classes round up by as much anyway.
  if (stored.capacity() >= want && stored.capacity() - want <= want / 8) return;
  std::string fit;
  fit.reserve(want);
  fit.append(stored);
  stored = std::move(fit);
}

std::string EncodeForStorage(const rapidjson::Value& object) {
  return api::WriteThroughScratch([&](api::JsonWriter& w) { WriteForStorage(w, object); },
                                  [](std::string_view bytes) {
                                    std::string out;
                                    out.reserve(bytes.size() + kStampRoom);
                                    out.append(bytes);
                                    return out;
                                  });
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
