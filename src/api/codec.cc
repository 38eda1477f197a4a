#include "api/codec.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <utility>

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/writer.h>

#include "api/json_writer.h"

namespace kt::api {

namespace {

using rapidjson::SizeType;
using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

// ============================================================================================
// Parsing
// ============================================================================================

// Forwards parse events to the document under construction and stops the parse when nesting
// exceeds kMaxJsonDepth (RapidJSON's iterative parser has no limit of its own).
class DepthLimitedHandler {
 public:
  explicit DepthLimitedHandler(rapidjson::Document& doc) : doc_(doc) {}

  bool Null() { return doc_.Null(); }
  bool Bool(bool b) { return doc_.Bool(b); }
  bool Int(int i) { return doc_.Int(i); }
  bool Uint(unsigned u) { return doc_.Uint(u); }
  bool Int64(int64_t i) { return doc_.Int64(i); }
  bool Uint64(uint64_t u) { return doc_.Uint64(u); }
  bool Double(double d) { return doc_.Double(d); }
  bool RawNumber(const char* s, SizeType n, bool copy) { return doc_.RawNumber(s, n, copy); }
  bool String(const char* s, SizeType n, bool copy) { return doc_.String(s, n, copy); }
  bool Key(const char* s, SizeType n, bool copy) { return doc_.Key(s, n, copy); }
  bool StartObject() { return Enter() && doc_.StartObject(); }
  bool EndObject(SizeType n) {
    --depth_;
    return doc_.EndObject(n);
  }
  bool StartArray() { return Enter() && doc_.StartArray(); }
  bool EndArray(SizeType n) {
    --depth_;
    return doc_.EndArray(n);
  }

  bool too_deep() const { return too_deep_; }

 private:
  bool Enter() {
    if (++depth_ > kMaxJsonDepth) too_deep_ = true;
    return !too_deep_;
  }

  rapidjson::Document& doc_;
  int depth_ = 0;
  bool too_deep_ = false;
};

Status JsonError(size_t offset, std::string_view what) {
  std::string m = "invalid JSON at offset ";
  m += std::to_string(offset);
  m += ": ";
  if (!what.empty() && what.back() == '.') what.remove_suffix(1);
  m += what;
  return BadRequest(std::move(m));
}

// Parses one value from `stream` (which holds `size` bytes). With `consumed` the value may be
// followed by more input; without it, it must be all of it.
template <unsigned kFlags, class Stream>
Result<rapidjson::Document> ParseStream(Stream& stream, size_t size, size_t* consumed,
                                        size_t base_offset) {
  rapidjson::Document doc;
  rapidjson::Reader reader;
  DepthLimitedHandler handler(doc);
  rapidjson::ParseResult result;
  auto generate = [&](rapidjson::Document&) {
    result = reader.Parse<kFlags>(stream, handler);
    return !result.IsError();
  };
  doc.Populate(generate);
  if (handler.too_deep()) {
    return Err(JsonError(base_offset + stream.Tell(),
                         "exceeded max depth of " + std::to_string(kMaxJsonDepth)));
  }
  if (result.IsError()) {
    return Err(JsonError(base_offset + result.Offset(), GetParseError_En(result.Code())));
  }
  // The stream reports a NUL byte as the end of input; anything after it is an error.
  if (consumed == nullptr && stream.Tell() != size) {
    return Err(JsonError(base_offset + stream.Tell(),
                         GetParseError_En(rapidjson::kParseErrorDocumentRootNotSingular)));
  }
  if (consumed != nullptr) *consumed = stream.Tell();
  return doc;
}

template <unsigned kFlags>
Result<rapidjson::Document> ParseImpl(std::string_view bytes, size_t* consumed,
                                      size_t base_offset) {
  rapidjson::MemoryStream stream(bytes.data(), bytes.size());
  return ParseStream<kFlags>(stream, bytes.size(), consumed, base_offset);
}

// Whether no byte of `bytes` is above 0x7f.
bool IsAscii(std::string_view bytes) {
  const char* p = bytes.data();
  size_t n = bytes.size();
  uint64_t high = 0;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    high |= word;
  }
  for (; n > 0; ++p, --n) high |= static_cast<unsigned char>(*p);
  return (high & 0x8080808080808080ULL) == 0;
}

// Iterative: no recursion on hostile nesting. Full precision: a double's shortest form is its
// JSON text, which quantities given as numbers ("cpu": 0.1) are parsed from.
constexpr unsigned kParseFlags = rapidjson::kParseIterativeFlag |
                                 rapidjson::kParseValidateEncodingFlag |
                                 rapidjson::kParseFullPrecisionFlag;

// ============================================================================================
// Decoding
// ============================================================================================

// A field path, built on the stack as the decoder descends and rendered only for errors.
struct Path {
  const Path* parent = nullptr;
  std::string_view key;
  int64_t index = -1;

  Path Child(std::string_view k) const { return Path{this, k, -1}; }
  Path Index(size_t i) const { return Path{this, {}, static_cast<int64_t>(i)}; }
};

void AppendPath(const Path& p, std::string* out) {
  if (p.parent != nullptr) AppendPath(*p.parent, out);
  if (p.index >= 0) {
    out->push_back('[');
    out->append(std::to_string(p.index));
    out->push_back(']');
  } else if (p.parent != nullptr) {
    if (!out->empty()) out->push_back('.');
    out->append(p.key);
  }
}

Status PathError(const Path& p, std::string_view message) {
  std::string m;
  AppendPath(p, &m);
  if (!m.empty()) m += ": ";
  m += message;
  return BadRequest(std::move(m));
}

}  // namespace

std::string_view JsonTypeName(const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "boolean";
    case rapidjson::kObjectType:
      return "object";
    case rapidjson::kArrayType:
      return "array";
    case rapidjson::kStringType:
      return "string";
    case rapidjson::kNumberType:
      return "number";
  }
  return "unknown";
}

namespace {

Status TypeError(const Path& p, std::string_view expected, const Value& got) {
  std::string m = "expected ";
  m += expected;
  m += ", got ";
  m += JsonTypeName(got);
  return PathError(p, m);
}

std::string_view View(const Value& s) { return {s.GetString(), s.GetStringLength()}; }

// Calls f(key, value) for each member of an object; null is an empty object.
template <class F>
Status ForEachMember(const Value& v, const Path& p, F&& f) {
  if (v.IsNull()) return Status();
  if (!v.IsObject()) return TypeError(p, "object", v);
  for (const auto& m : v.GetObject()) KT_RETURN_IF_ERROR(f(View(m.name), m.value));
  return Status();
}

// Decodes each element of an array into a fresh element of *out (Go resets slices); null is an
// empty array, a null element a zero element.
template <class T, class F>
Status DecodeArray(const Value& v, const Path& p, std::vector<T>* out, F&& decode_element) {
  out->clear();
  if (v.IsNull()) return Status();
  if (!v.IsArray()) return TypeError(p, "array", v);
  out->reserve(v.Size());
  for (SizeType i = 0; i < v.Size(); ++i) {
    out->emplace_back();
    KT_RETURN_IF_ERROR(decode_element(v[i], p.Index(i), &out->back()));
  }
  return Status();
}

// A list the view shares with equal lists (api/interned.h): decoded, then interned.
template <class T, class F>
Status DecodeArray(const Value& v, const Path& p, SharedList<T>* out, F&& decode_element) {
  std::vector<T> list;
  KT_RETURN_IF_ERROR(DecodeArray(v, p, &list, decode_element));
  *out = std::move(list);
  out->Intern();
  return Status();
}

Status DecodeString(const Value& v, const Path& p, std::string* out) {
  if (v.IsString()) {
    out->assign(v.GetString(), v.GetStringLength());
    return Status();
  }
  if (v.IsNull()) return Status();
  return TypeError(p, "string", v);
}

Status DecodeOptString(const Value& v, const Path& p, std::optional<std::string>* out) {
  if (v.IsNull()) {
    out->reset();
    return Status();
  }
  if (!v.IsString()) return TypeError(p, "string", v);
  out->emplace(v.GetString(), v.GetStringLength());
  return Status();
}

Status DecodeBool(const Value& v, const Path& p, bool* out) {
  if (v.IsBool()) {
    *out = v.GetBool();
    return Status();
  }
  if (v.IsNull()) return Status();
  return TypeError(p, "boolean", v);
}

Status NumberError(const Value& v, const Path& p, std::string_view type) {
  if (v.IsInt64() || v.IsUint64()) {
    return PathError(p, "integer out of range for " + std::string(type));
  }
  return TypeError(p, "integer", v);
}

Status DecodeInt64(const Value& v, const Path& p, int64_t* out) {
  if (v.IsInt64()) {
    *out = v.GetInt64();
    return Status();
  }
  if (v.IsNull()) return Status();
  return NumberError(v, p, "int64");
}

Status DecodeOptInt64(const Value& v, const Path& p, std::optional<int64_t>* out) {
  if (v.IsNull()) {
    out->reset();
    return Status();
  }
  int64_t i = 0;
  KT_RETURN_IF_ERROR(DecodeInt64(v, p, &i));
  *out = i;
  return Status();
}

Status DecodeInt32(const Value& v, const Path& p, int32_t* out) {
  if (v.IsInt()) {
    *out = v.GetInt();
    return Status();
  }
  if (v.IsNull()) return Status();
  return NumberError(v, p, "int32");
}

Status DecodeOptInt32(const Value& v, const Path& p, std::optional<int32_t>* out) {
  if (v.IsNull()) {
    out->reset();
    return Status();
  }
  int32_t i = 0;
  KT_RETURN_IF_ERROR(DecodeInt32(v, p, &i));
  *out = i;
  return Status();
}

// Go decodes into an existing map without clearing it; so do we (it matters only for duplicate
// keys, where the last wins).
// The decoded map is interned (api/interned.h).
Status DecodeStringMap(const Value& v, const Path& p, StringMap* out) {
  KT_RETURN_IF_ERROR(ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    if (val.IsNull()) {
      out->Set(std::string(k), std::string());
      return Status();
    }
    if (!val.IsString()) return TypeError(p.Child(k), "string", val);
    out->Set(std::string(k), std::string(val.GetString(), val.GetStringLength()));
    return Status();
  }));
  out->Intern();
  return Status();
}

template <class List>
Status DecodeStringList(const Value& v, const Path& p, List* out) {
  return DecodeArray(v, p, out, DecodeString);
}

Status DecodeResourceList(const Value& v, const Path& p, ResourceList* out) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    Result<Quantity> q = DecodeQuantity(val);
    if (!q) return PathError(p.Child(k), q.error().message());
    out->Set(std::string(k), *q);
    return Status();
  });
}

Status DecodeOwnerReference(const Value& v, const Path& p, OwnerReference* o) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    if (k == "apiVersion") return DecodeString(val, p.Child(k), &o->api_version);
    if (k == "kind") return DecodeString(val, p.Child(k), &o->kind);
    if (k == "name") return DecodeString(val, p.Child(k), &o->name);
    if (k == "uid") return DecodeString(val, p.Child(k), &o->uid);
    if (k == "controller") return DecodeBool(val, p.Child(k), &o->controller);
    if (k == "blockOwnerDeletion") return DecodeBool(val, p.Child(k), &o->block_owner_deletion);
    return Status();
  });
}

Status DecodeMeta(const Value& v, const Path& p, ObjectMeta* m) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    const Path c = p.Child(k);
    switch (k.size()) {
      case 3:
        if (k == "uid") return DecodeString(val, c, &m->uid);
        break;
      case 4:
        if (k == "name") return DecodeString(val, c, &m->name);
        break;
      case 6:
        if (k == "labels") return DecodeStringMap(val, c, &m->labels);
        break;
      case 9:
        if (k == "namespace") return DecodeString(val, c, &m->namespace_);
        break;
      case 10:
        if (k == "generation") return DecodeInt64(val, c, &m->generation);
        if (k == "finalizers") return DecodeStringList(val, c, &m->finalizers);
        break;
      case 11:
        if (k == "annotations") return DecodeStringMap(val, c, &m->annotations);
        break;
      case 12:
        if (k == "generateName") return DecodeString(val, c, &m->generate_name);
        break;
      case 15:
        if (k == "resourceVersion") return DecodeString(val, c, &m->resource_version);
        if (k == "ownerReferences") {
          return DecodeArray(val, c, &m->owner_references, DecodeOwnerReference);
        }
        break;
      case 17:
        if (k == "creationTimestamp") return DecodeString(val, c, &m->creation_timestamp);
        if (k == "deletionTimestamp") return DecodeOptString(val, c, &m->deletion_timestamp);
        break;
      case 26:
        if (k == "deletionGracePeriodSeconds") {
          return DecodeOptInt64(val, c, &m->deletion_grace_period_seconds);
        }
        break;
      default:
        break;
    }
    return Status();
  });
}

Status DecodeMetaMember(const Value& object, const Path& root, ObjectMeta* m) {
  // Duplicate "metadata" members decode in order, the later overriding, as Go does.
  return ForEachMember(object, root, [&](std::string_view k, const Value& val) -> Status {
    if (k == "metadata") return DecodeMeta(val, root.Child(k), m);
    return Status();
  });
}

Status DecodeTaint(const Value& v, const Path& p, Taint* t) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    if (k == "key") return DecodeString(val, p.Child(k), &t->key);
    if (k == "value") return DecodeString(val, p.Child(k), &t->value);
    if (k == "effect") return DecodeString(val, p.Child(k), &t->effect);
    if (k == "timeAdded") return DecodeOptString(val, p.Child(k), &t->time_added);
    return Status();
  });
}

Status DecodeToleration(const Value& v, const Path& p, Toleration* t) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    if (k == "key") return DecodeString(val, p.Child(k), &t->key);
    if (k == "operator") return DecodeString(val, p.Child(k), &t->op);
    if (k == "value") return DecodeString(val, p.Child(k), &t->value);
    if (k == "effect") return DecodeString(val, p.Child(k), &t->effect);
    if (k == "tolerationSeconds") {
      return DecodeOptInt64(val, p.Child(k), &t->toleration_seconds);
    }
    return Status();
  });
}

Status DecodeRequirement(const Value& v, const Path& p, SelectorRequirement* r) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    if (k == "key") return DecodeString(val, p.Child(k), &r->key);
    if (k == "operator") return DecodeString(val, p.Child(k), &r->op);
    if (k == "values") return DecodeStringList(val, p.Child(k), &r->values);
    return Status();
  });
}

Status DecodeNodeSelectorTerm(const Value& v, const Path& p, NodeSelectorTerm* t) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    if (k == "matchExpressions") {
      return DecodeArray(val, p.Child(k), &t->match_expressions, DecodeRequirement);
    }
    if (k == "matchFields") {
      return DecodeArray(val, p.Child(k), &t->match_fields, DecodeRequirement);
    }
    return Status();
  });
}

Status DecodePreferredTerm(const Value& v, const Path& p, PreferredSchedulingTerm* t) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    if (k == "weight") return DecodeInt32(val, p.Child(k), &t->weight);
    if (k == "preference") return DecodeNodeSelectorTerm(val, p.Child(k), &t->preference);
    return Status();
  });
}

Status DecodeNodeAffinity(const Value& v, const Path& p, std::optional<NodeAffinity>* out) {
  if (v.IsNull()) {
    out->reset();
    return Status();
  }
  if (!out->has_value()) out->emplace();
  NodeAffinity& a = **out;
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    const Path c = p.Child(k);
    if (k == "requiredDuringSchedulingIgnoredDuringExecution") {
      if (val.IsNull()) {
        a.required.reset();
        return Status();
      }
      if (!a.required) a.required.emplace();
      return ForEachMember(val, c, [&](std::string_view k2, const Value& v2) -> Status {
        if (k2 == "nodeSelectorTerms") {
          return DecodeArray(v2, c.Child(k2), &a.required->terms, DecodeNodeSelectorTerm);
        }
        return Status();
      });
    }
    if (k == "preferredDuringSchedulingIgnoredDuringExecution") {
      return DecodeArray(val, c, &a.preferred, DecodePreferredTerm);
    }
    return Status();
  });
}

Status DecodeContainerPort(const Value& v, const Path& p, ContainerPort* port) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    if (k == "containerPort") return DecodeInt32(val, p.Child(k), &port->container_port);
    if (k == "hostPort") return DecodeInt32(val, p.Child(k), &port->host_port);
    if (k == "protocol") return DecodeString(val, p.Child(k), &port->protocol);
    if (k == "hostIP") return DecodeString(val, p.Child(k), &port->host_ip);
    return Status();
  });
}

// A spec.schedulingGates element: {"name": "..."}.
Status DecodeSchedulingGate(const Value& v, const Path& p, std::string* name) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    if (k == "name") return DecodeString(val, p.Child(k), name);
    return Status();
  });
}

Status DecodeContainer(const Value& v, const Path& p, Container* c) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    if (k == "name") return DecodeString(val, p.Child(k), &c->name);
    if (k == "ports") return DecodeArray(val, p.Child(k), &c->ports, DecodeContainerPort);
    if (k == "restartPolicy") return DecodeString(val, p.Child(k), &c->restart_policy);
    if (k == "resources") {
      const Path rp = p.Child(k);
      return ForEachMember(val, rp, [&](std::string_view k2, const Value& v2) -> Status {
        if (k2 == "requests") return DecodeResourceList(v2, rp.Child(k2), &c->requests);
        if (k2 == "limits") return DecodeResourceList(v2, rp.Child(k2), &c->limits);
        return Status();
      });
    }
    return Status();
  });
}

Status DecodePodSpec(const Value& v, const Path& p, PodSpec* s) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    const Path c = p.Child(k);
    if (k == "containers") return DecodeArray(val, c, &s->containers, DecodeContainer);
    if (k == "tolerations") return DecodeArray(val, c, &s->tolerations, DecodeToleration);
    if (k == "nodeName") return DecodeString(val, c, &s->node_name);
    if (k == "nodeSelector") return DecodeStringMap(val, c, &s->node_selector);
    if (k == "affinity") {
      return ForEachMember(val, c, [&](std::string_view k2, const Value& v2) -> Status {
        if (k2 == "nodeAffinity") return DecodeNodeAffinity(v2, c.Child(k2), &s->node_affinity);
        return Status();
      });
    }
    if (k == "initContainers") return DecodeArray(val, c, &s->init_containers, DecodeContainer);
    if (k == "priority") return DecodeOptInt32(val, c, &s->priority);
    if (k == "priorityClassName") return DecodeString(val, c, &s->priority_class_name);
    if (k == "schedulerName") return DecodeString(val, c, &s->scheduler_name);
    if (k == "preemptionPolicy") return DecodeString(val, c, &s->preemption_policy);
    if (k == "hostNetwork") return DecodeBool(val, c, &s->host_network);
    if (k == "terminationGracePeriodSeconds") {
      return DecodeOptInt64(val, c, &s->termination_grace_period_seconds);
    }
    if (k == "overhead") return DecodeResourceList(val, c, &s->overhead);
    if (k == "resources") {
      return ForEachMember(val, c, [&](std::string_view k2, const Value& v2) -> Status {
        if (k2 == "requests") return DecodeResourceList(v2, c.Child(k2), &s->resource_requests);
        return Status();
      });
    }
    if (k == "schedulingGates") {
      return DecodeArray(val, c, &s->scheduling_gates, DecodeSchedulingGate);
    }
    if (k == "restartPolicy") return DecodeString(val, c, &s->restart_policy);
    if (k == "serviceAccountName") return DecodeString(val, c, &s->service_account_name);
    return Status();
  });
}

// A PodIP element of status.podIPs: {"ip": "..."}; a null element is an empty IP.
Status DecodePodIP(const Value& v, const Path& p, std::string* ip) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    if (k == "ip") return DecodeString(val, p.Child(k), ip);
    return Status();
  });
}

Status DecodeCondition(const Value& v, const Path& p, Condition* c) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    if (k == "type") return DecodeString(val, p.Child(k), &c->type);
    if (k == "status") return DecodeString(val, p.Child(k), &c->status);
    if (k == "reason") return DecodeString(val, p.Child(k), &c->reason);
    if (k == "message") return DecodeString(val, p.Child(k), &c->message);
    if (k == "lastTransitionTime") return DecodeString(val, p.Child(k), &c->last_transition_time);
    if (k == "lastHeartbeatTime") return DecodeString(val, p.Child(k), &c->last_heartbeat_time);
    if (k == "lastProbeTime") return DecodeString(val, p.Child(k), &c->last_probe_time);
    if (k == "observedGeneration") {
      return DecodeInt64(val, p.Child(k), &c->observed_generation);
    }
    return Status();
  });
}

Status DecodePodStatus(const Value& v, const Path& p, PodStatus* s) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    const Path c = p.Child(k);
    if (k == "phase") return DecodeString(val, c, &s->phase);
    if (k == "conditions") return DecodeArray(val, c, &s->conditions, DecodeCondition);
    if (k == "nominatedNodeName") return DecodeString(val, c, &s->nominated_node_name);
    if (k == "hostIP") return DecodeString(val, c, &s->host_ip);
    if (k == "podIP") return DecodeString(val, c, &s->pod_ip);
    if (k == "podIPs") return DecodeArray(val, c, &s->pod_ips, DecodePodIP);
    if (k == "startTime") return DecodeString(val, c, &s->start_time);
    return Status();
  });
}

Status DecodeNodeSpec(const Value& v, const Path& p, NodeSpec* s) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    const Path c = p.Child(k);
    if (k == "taints") return DecodeArray(val, c, &s->taints, DecodeTaint);
    if (k == "unschedulable") return DecodeBool(val, c, &s->unschedulable);
    if (k == "podCIDR") return DecodeString(val, c, &s->pod_cidr);
    if (k == "providerID") return DecodeString(val, c, &s->provider_id);
    return Status();
  });
}

Status DecodeNodeStatus(const Value& v, const Path& p, NodeStatus* s) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    const Path c = p.Child(k);
    if (k == "conditions") return DecodeArray(val, c, &s->conditions, DecodeCondition);
    if (k == "capacity") return DecodeResourceList(val, c, &s->capacity);
    if (k == "allocatable") return DecodeResourceList(val, c, &s->allocatable);
    if (k == "nodeInfo") {
      return ForEachMember(val, c, [&](std::string_view k2, const Value& v2) -> Status {
        if (k2 == "kubeletVersion") return DecodeString(v2, c.Child(k2), &s->kubelet_version);
        return Status();
      });
    }
    return Status();
  });
}

// intstr.IntOrString: a JSON integer or string; null leaves it unset.
Status DecodeIntOrString(const Value& v, const Path& p, std::optional<IntOrString>* out) {
  if (v.IsNull()) {
    out->reset();
    return Status();
  }
  IntOrString x;
  if (v.IsString()) {
    x.is_string = true;
    x.string_value.assign(v.GetString(), v.GetStringLength());
  } else {
    KT_RETURN_IF_ERROR(DecodeInt32(v, p, &x.int_value));
  }
  *out = std::move(x);
  return Status();
}

Status DecodeLabelSelector(const Value& v, const Path& p, std::optional<LabelSelector>* out) {
  if (v.IsNull()) {
    out->reset();
    return Status();
  }
  if (!out->has_value()) out->emplace();
  LabelSelector& s = **out;
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    if (k == "matchLabels") return DecodeStringMap(val, p.Child(k), &s.match_labels);
    if (k == "matchExpressions") {
      return DecodeArray(val, p.Child(k), &s.match_expressions, DecodeRequirement);
    }
    return Status();
  });
}

// Runs `decode` on the root object, which must be an object.
template <class T, class F>
Result<T> DecodeRoot(const Value& object, F&& decode) {
  const Path root;
  if (!object.IsObject()) return Err(TypeError(root, "object", object));
  T out;
  Status s = decode(object, root, &out);
  if (!s.ok()) return Err(std::move(s));
  return out;
}

// ============================================================================================
// Encoding
// ============================================================================================

using StringWriter = JsonWriter;

// A RapidJSON handler that builds a Value with a given allocator: the encoders below write
// through it to produce documents and elements for the setters.
class ValueBuilder {
 public:
  explicit ValueBuilder(Allocator& alloc) : alloc_(alloc) {}

  bool Null() { return Put(Value()) != nullptr; }
  bool Bool(bool b) { return Put(Value(b)) != nullptr; }
  bool Int64(int64_t i) { return Put(Value(i)) != nullptr; }
  bool String(const char* s, SizeType n, bool) { return Put(Value(s, n, alloc_)) != nullptr; }
  bool Key(const char* s, SizeType n, bool) {
    key_.SetString(s, n, alloc_);
    return true;
  }
  bool StartObject() {
    stack_.push_back(Put(Value(rapidjson::kObjectType)));
    return true;
  }
  bool EndObject(SizeType) {
    stack_.pop_back();
    return true;
  }
  bool StartArray() {
    stack_.push_back(Put(Value(rapidjson::kArrayType)));
    return true;
  }
  bool EndArray(SizeType) {
    stack_.pop_back();
    return true;
  }

  Value Take() { return std::move(root_); }

 private:
  // Adds v to the innermost open container and returns where it now lives. Pointers into a
  // container stay valid while it is innermost: only the innermost container grows.
  Value* Put(Value&& v) {
    if (stack_.empty()) {
      root_ = v;
      return &root_;
    }
    Value* top = stack_.back();
    if (top->IsArray()) {
      top->PushBack(v, alloc_);
      return &(*top)[top->Size() - 1];
    }
    top->AddMember(key_, v, alloc_);
    return &(top->MemberEnd() - 1)->value;
  }

  Allocator& alloc_;
  Value root_;
  Value key_;
  std::vector<Value*> stack_;
};

// Wraps a handler (StringWriter or ValueBuilder), counting members and elements as RapidJSON's
// document handler requires, and offering the field helpers the encoders use.
template <class H>
class Emitter {
 public:
  explicit Emitter(H& h) : h_(h) {}

  void StartObject() {
    h_.StartObject();
    Push(false);
  }
  void EndObject() {
    h_.EndObject(Pop());
    Counted();
  }
  void StartArray() {
    h_.StartArray();
    Push(true);
  }
  void EndArray() {
    h_.EndArray(Pop());
    Counted();
  }
  void Key(std::string_view k) {
    h_.Key(k.data(), static_cast<SizeType>(k.size()), true);
    ++count_[depth_];
  }
  void String(std::string_view s) {
    h_.String(s.data(), static_cast<SizeType>(s.size()), true);
    Counted();
  }
  void Int64(int64_t i) {
    h_.Int64(i);
    Counted();
  }
  void Bool(bool b) {
    h_.Bool(b);
    Counted();
  }
  void Null() {
    h_.Null();
    Counted();
  }

  void Field(std::string_view k, std::string_view v) {
    Key(k);
    String(v);
  }
  // omitempty
  void OptField(std::string_view k, std::string_view v) {
    if (!v.empty()) Field(k, v);
  }
  // A metav1.Time struct field: Go writes the zero time as null even with omitempty.
  void TimeField(std::string_view k, std::string_view v) {
    Key(k);
    if (v.empty()) {
      Null();
    } else {
      String(v);
    }
  }

 private:
  static constexpr int kMaxDepth = 32;

  void Push(bool is_array) {
    ++depth_;
    count_[depth_] = 0;
    is_array_[depth_] = is_array;
  }
  SizeType Pop() { return count_[depth_--]; }
  void Counted() {
    if (is_array_[depth_]) ++count_[depth_];
  }

  H& h_;
  int depth_ = 0;
  SizeType count_[kMaxDepth] = {};
  bool is_array_[kMaxDepth] = {};
};

template <class E>
void WriteStringMap(E& e, const StringMap& m) {
  e.StartObject();
  for (const auto& [k, v] : m) e.Field(k, v);
  e.EndObject();
}

template <class E>
void WriteStringList(E& e, const std::vector<std::string>& list) {
  e.StartArray();
  for (const auto& s : list) e.String(s);
  e.EndArray();
}

template <class E>
void WriteResourceList(E& e, const ResourceList& list) {
  e.StartObject();
  std::string buf;
  for (const auto& [name, q] : list) {
    buf.clear();
    q.AppendTo(&buf);
    e.Field(name, buf);
  }
  e.EndObject();
}

template <class E>
void WriteMeta(E& e, const ObjectMeta& m) {
  e.Key("metadata");
  e.StartObject();
  e.OptField("name", m.name);
  e.OptField("generateName", m.generate_name);
  e.OptField("namespace", m.namespace_);
  e.OptField("uid", m.uid);
  e.OptField("resourceVersion", m.resource_version);
  if (m.generation != 0) {
    e.Key("generation");
    e.Int64(m.generation);
  }
  e.TimeField("creationTimestamp", m.creation_timestamp);
  if (m.deletion_timestamp) e.Field("deletionTimestamp", *m.deletion_timestamp);
  if (m.deletion_grace_period_seconds) {
    e.Key("deletionGracePeriodSeconds");
    e.Int64(*m.deletion_grace_period_seconds);
  }
  if (!m.labels.empty()) {
    e.Key("labels");
    WriteStringMap(e, m.labels);
  }
  if (!m.annotations.empty()) {
    e.Key("annotations");
    WriteStringMap(e, m.annotations);
  }
  if (!m.owner_references.empty()) {
    e.Key("ownerReferences");
    e.StartArray();
    for (const auto& o : m.owner_references) {
      e.StartObject();
      e.Field("apiVersion", o.api_version);
      e.Field("kind", o.kind);
      e.Field("name", o.name);
      e.Field("uid", o.uid);
      if (o.controller) {
        e.Key("controller");
        e.Bool(true);
      }
      if (o.block_owner_deletion) {
        e.Key("blockOwnerDeletion");
        e.Bool(true);
      }
      e.EndObject();
    }
    e.EndArray();
  }
  if (!m.finalizers.empty()) {
    e.Key("finalizers");
    WriteStringList(e, m.finalizers);
  }
  e.EndObject();
}

template <class E>
void WriteTypeMeta(E& e, std::string_view kind, std::string_view api_version) {
  e.Field("kind", kind);
  e.Field("apiVersion", api_version);
}

template <class E>
void WriteTaint(E& e, const Taint& t) {
  e.StartObject();
  e.Field("key", t.key);
  e.OptField("value", t.value);
  e.Field("effect", t.effect);
  if (t.time_added) e.TimeField("timeAdded", *t.time_added);
  e.EndObject();
}

template <class E>
void WriteToleration(E& e, const Toleration& t) {
  e.StartObject();
  e.OptField("key", t.key);
  e.OptField("operator", t.op);
  e.OptField("value", t.value);
  e.OptField("effect", t.effect);
  if (t.toleration_seconds) {
    e.Key("tolerationSeconds");
    e.Int64(*t.toleration_seconds);
  }
  e.EndObject();
}

template <class E>
void WriteRequirements(E& e, std::string_view key, const std::vector<SelectorRequirement>& rs) {
  if (rs.empty()) return;
  e.Key(key);
  e.StartArray();
  for (const auto& r : rs) {
    e.StartObject();
    e.Field("key", r.key);
    e.Field("operator", r.op);
    if (!r.values.empty()) {
      e.Key("values");
      WriteStringList(e, r.values);
    }
    e.EndObject();
  }
  e.EndArray();
}

template <class E>
void WriteNodeSelectorTerm(E& e, const NodeSelectorTerm& t) {
  e.StartObject();
  WriteRequirements(e, "matchExpressions", t.match_expressions);
  WriteRequirements(e, "matchFields", t.match_fields);
  e.EndObject();
}

template <class E>
void WriteNodeAffinity(E& e, const NodeAffinity& a) {
  e.StartObject();
  if (a.required) {
    e.Key("requiredDuringSchedulingIgnoredDuringExecution");
    e.StartObject();
    e.Key("nodeSelectorTerms");
    e.StartArray();
    for (const auto& t : a.required->terms) WriteNodeSelectorTerm(e, t);
    e.EndArray();
    e.EndObject();
  }
  if (!a.preferred.empty()) {
    e.Key("preferredDuringSchedulingIgnoredDuringExecution");
    e.StartArray();
    for (const auto& p : a.preferred) {
      e.StartObject();
      e.Key("weight");
      e.Int64(p.weight);
      e.Key("preference");
      WriteNodeSelectorTerm(e, p.preference);
      e.EndObject();
    }
    e.EndArray();
  }
  e.EndObject();
}

template <class E>
void WriteContainers(E& e, std::string_view key, const std::vector<Container>& cs) {
  e.Key(key);
  e.StartArray();
  for (const auto& c : cs) {
    e.StartObject();
    e.Field("name", c.name);
    if (!c.ports.empty()) {
      e.Key("ports");
      e.StartArray();
      for (const ContainerPort& port : c.ports) {
        e.StartObject();
        if (port.host_port != 0) {
          e.Key("hostPort");
          e.Int64(port.host_port);
        }
        e.Key("containerPort");
        e.Int64(port.container_port);
        e.OptField("protocol", port.protocol);
        e.OptField("hostIP", port.host_ip);
        e.EndObject();
      }
      e.EndArray();
    }
    e.Key("resources");
    e.StartObject();
    if (!c.limits.empty()) {
      e.Key("limits");
      WriteResourceList(e, c.limits);
    }
    if (!c.requests.empty()) {
      e.Key("requests");
      WriteResourceList(e, c.requests);
    }
    e.EndObject();
    e.EndObject();
  }
  e.EndArray();
}

enum class ConditionKind { kPod, kNode };

template <class E>
void WriteCondition(E& e, const Condition& c, ConditionKind kind) {
  e.StartObject();
  e.Field("type", c.type);
  if (c.observed_generation != 0) {
    e.Key("observedGeneration");
    e.Int64(c.observed_generation);
  }
  e.Field("status", c.status);
  if (kind == ConditionKind::kPod) {
    e.TimeField("lastProbeTime", c.last_probe_time);
  } else {
    e.TimeField("lastHeartbeatTime", c.last_heartbeat_time);
  }
  e.TimeField("lastTransitionTime", c.last_transition_time);
  e.OptField("reason", c.reason);
  e.OptField("message", c.message);
  e.EndObject();
}

template <class E>
void WriteConditions(E& e, const std::vector<Condition>& cs, ConditionKind kind) {
  if (cs.empty()) return;
  e.Key("conditions");
  e.StartArray();
  for (const auto& c : cs) WriteCondition(e, c, kind);
  e.EndArray();
}

// Field order follows k8s.io/api core/v1 PodSpec.
template <class E>
void WritePodSpec(E& e, const PodSpec& s) {
  e.StartObject();
  if (!s.init_containers.empty()) WriteContainers(e, "initContainers", s.init_containers);
  WriteContainers(e, "containers", s.containers);
  e.OptField("restartPolicy", s.restart_policy);
  if (s.termination_grace_period_seconds) {
    e.Key("terminationGracePeriodSeconds");
    e.Int64(*s.termination_grace_period_seconds);
  }
  if (!s.node_selector.empty()) {
    e.Key("nodeSelector");
    WriteStringMap(e, s.node_selector);
  }
  e.OptField("serviceAccountName", s.service_account_name);
  e.OptField("nodeName", s.node_name);
  if (s.host_network) {
    e.Key("hostNetwork");
    e.Bool(true);
  }
  if (s.node_affinity) {
    e.Key("affinity");
    e.StartObject();
    e.Key("nodeAffinity");
    WriteNodeAffinity(e, *s.node_affinity);
    e.EndObject();
  }
  e.OptField("schedulerName", s.scheduler_name);
  if (!s.tolerations.empty()) {
    e.Key("tolerations");
    e.StartArray();
    for (const auto& t : s.tolerations) WriteToleration(e, t);
    e.EndArray();
  }
  e.OptField("priorityClassName", s.priority_class_name);
  if (s.priority) {
    e.Key("priority");
    e.Int64(*s.priority);
  }
  e.OptField("preemptionPolicy", s.preemption_policy);
  if (!s.overhead.empty()) {
    e.Key("overhead");
    WriteResourceList(e, s.overhead);
  }
  e.EndObject();
}

template <class E>
void WritePod(E& e, const Pod& pod) {
  e.StartObject();
  WriteTypeMeta(e, "Pod", "v1");
  WriteMeta(e, pod.meta);
  e.Key("spec");
  WritePodSpec(e, pod.spec);
  e.Key("status");
  e.StartObject();
  const PodStatus& s = pod.status;
  e.OptField("phase", s.phase);
  WriteConditions(e, s.conditions, ConditionKind::kPod);
  e.OptField("nominatedNodeName", s.nominated_node_name);
  e.OptField("hostIP", s.host_ip);
  e.OptField("podIP", s.pod_ip);
  if (!s.pod_ips.empty()) {
    e.Key("podIPs");
    e.StartArray();
    for (const std::string& ip : s.pod_ips) {
      e.StartObject();
      e.Key("ip");
      e.String(ip);
      e.EndObject();
    }
    e.EndArray();
  }
  e.OptField("startTime", s.start_time);
  e.EndObject();
  e.EndObject();
}

template <class E>
void WriteNode(E& e, const Node& node) {
  e.StartObject();
  WriteTypeMeta(e, "Node", "v1");
  WriteMeta(e, node.meta);
  e.Key("spec");
  e.StartObject();
  e.OptField("podCIDR", node.spec.pod_cidr);
  e.OptField("providerID", node.spec.provider_id);
  if (node.spec.unschedulable) {
    e.Key("unschedulable");
    e.Bool(true);
  }
  if (!node.spec.taints.empty()) {
    e.Key("taints");
    e.StartArray();
    for (const auto& t : node.spec.taints) WriteTaint(e, t);
    e.EndArray();
  }
  e.EndObject();
  e.Key("status");
  e.StartObject();
  const NodeStatus& s = node.status;
  if (!s.capacity.empty()) {
    e.Key("capacity");
    WriteResourceList(e, s.capacity);
  }
  if (!s.allocatable.empty()) {
    e.Key("allocatable");
    WriteResourceList(e, s.allocatable);
  }
  WriteConditions(e, s.conditions, ConditionKind::kNode);
  // Struct fields without omitempty effect in Go: always written.
  e.Key("daemonEndpoints");
  e.StartObject();
  e.Key("kubeletEndpoint");
  e.StartObject();
  e.Key("Port");
  e.Int64(0);
  e.EndObject();
  e.EndObject();
  e.Key("nodeInfo");
  e.StartObject();
  for (std::string_view k : {"machineID", "systemUUID", "bootID", "kernelVersion", "osImage",
                             "containerRuntimeVersion"}) {
    e.Field(k, "");
  }
  e.Field("kubeletVersion", s.kubelet_version);
  for (std::string_view k : {"kubeProxyVersion", "operatingSystem", "architecture"}) {
    e.Field(k, "");
  }
  e.EndObject();
  e.EndObject();
  e.EndObject();
}

template <class E>
void WriteNamespace(E& e, const Namespace& ns) {
  e.StartObject();
  WriteTypeMeta(e, "Namespace", "v1");
  WriteMeta(e, ns.meta);
  e.Key("spec");
  e.StartObject();
  e.EndObject();
  e.Key("status");
  e.StartObject();
  e.OptField("phase", ns.phase);
  e.EndObject();
  e.EndObject();
}

template <class E>
void WriteObjectReference(E& e, const ObjectReference& o) {
  e.StartObject();
  e.OptField("kind", o.kind);
  e.OptField("namespace", o.namespace_);
  e.OptField("name", o.name);
  e.OptField("uid", o.uid);
  e.OptField("apiVersion", o.api_version);
  e.OptField("resourceVersion", o.resource_version);
  e.OptField("fieldPath", o.field_path);
  e.EndObject();
}

template <class E>
void WriteEvent(E& e, const Event& ev) {
  e.StartObject();
  WriteTypeMeta(e, "Event", "v1");
  WriteMeta(e, ev.meta);
  e.Key("involvedObject");
  WriteObjectReference(e, ev.involved_object);
  e.OptField("reason", ev.reason);
  e.OptField("message", ev.message);
  e.Key("source");
  e.StartObject();
  e.OptField("component", ev.source_component);
  e.OptField("host", ev.source_host);
  e.EndObject();
  e.TimeField("firstTimestamp", ev.first_timestamp);
  e.TimeField("lastTimestamp", ev.last_timestamp);
  if (ev.count != 0) {
    e.Key("count");
    e.Int64(ev.count);
  }
  e.OptField("type", ev.type);
  e.TimeField("eventTime", ev.event_time);
  if (ev.series_count != 0) {
    e.Key("series");
    e.StartObject();
    e.Key("count");
    e.Int64(ev.series_count);
    e.TimeField("lastObservedTime", ev.series_last_observed_time);
    e.EndObject();
  }
  e.OptField("action", ev.action);
  if (ev.related) {
    e.Key("related");
    WriteObjectReference(e, *ev.related);
  }
  e.Field("reportingComponent", ev.reporting_component);
  e.Field("reportingInstance", ev.reporting_instance);
  e.EndObject();
}

template <class E>
void WriteLease(E& e, const Lease& l) {
  e.StartObject();
  WriteTypeMeta(e, "Lease", "coordination.k8s.io/v1");
  WriteMeta(e, l.meta);
  e.Key("spec");
  e.StartObject();
  e.OptField("holderIdentity", l.holder_identity);
  if (l.lease_duration_seconds) {
    e.Key("leaseDurationSeconds");
    e.Int64(*l.lease_duration_seconds);
  }
  e.OptField("acquireTime", l.acquire_time);
  e.OptField("renewTime", l.renew_time);
  if (l.lease_transitions) {
    e.Key("leaseTransitions");
    e.Int64(*l.lease_transitions);
  }
  e.EndObject();
  e.EndObject();
}

template <class E>
void WritePriorityClass(E& e, const PriorityClass& pc) {
  e.StartObject();
  WriteTypeMeta(e, "PriorityClass", "scheduling.k8s.io/v1");
  WriteMeta(e, pc.meta);
  e.Key("value");
  e.Int64(pc.value);
  if (pc.global_default) {
    e.Key("globalDefault");
    e.Bool(true);
  }
  e.OptField("description", pc.description);
  e.OptField("preemptionPolicy", pc.preemption_policy);
  e.EndObject();
}

template <class F>
std::string EncodeWith(F&& write) {
  return WriteThroughScratch(
      [&](StringWriter& writer) {
        Emitter<StringWriter> e(writer);
        write(e);
      },
      [](std::string_view bytes) { return std::string(bytes); });
}

template <class F>
Value BuildValue(Allocator& alloc, F&& write) {
  ValueBuilder builder(alloc);
  Emitter<ValueBuilder> e(builder);
  write(e);
  return builder.Take();
}

template <class F>
rapidjson::Document DocumentWith(F&& write) {
  rapidjson::Document doc;
  Value v = BuildValue(doc.GetAllocator(), write);
  static_cast<Value&>(doc).Swap(v);
  return doc;
}

// ============================================================================================
// Setters
// ============================================================================================

Status NotObject(std::string_view path, const Value& v) {
  std::string m(path);
  if (!m.empty()) m += ": ";
  m += "expected object, got ";
  m += JsonTypeName(v);
  return BadRequest(std::move(m));
}

bool NameIs(const Value& name, std::string_view key) {
  return name.GetStringLength() == key.size() &&
         std::memcmp(name.GetString(), key.data(), key.size()) == 0;
}

Value* FindMember(Value& obj, std::string_view key) {
  // The last of duplicate members is the one decoders read.
  Value* found = nullptr;
  for (auto& m : obj.GetObject()) {
    if (NameIs(m.name, key)) found = &m.value;
  }
  return found;
}

void RemoveMembers(Value& obj, std::string_view key) {
  for (auto it = obj.MemberBegin(); it != obj.MemberEnd();) {
    // EraseMember keeps the order of the remaining members (RemoveMember would not).
    it = NameIs(it->name, key) ? obj.EraseMember(it) : it + 1;
  }
}

// Sets obj[key] = v: assigns the existing member in place (dropping duplicates after it, so the
// document has one value), or appends one.
void SetMember(Value& obj, std::string_view key, Value&& v, Allocator& alloc) {
  auto it = obj.MemberBegin();
  for (; it != obj.MemberEnd(); ++it) {
    if (NameIs(it->name, key)) break;
  }
  if (it == obj.MemberEnd()) {
    Value name(key.data(), static_cast<SizeType>(key.size()), alloc);
    obj.AddMember(name, v, alloc);
    return;
  }
  it->value = v;
  const auto index = it - obj.MemberBegin();
  for (auto dup = obj.MemberBegin() + index + 1; dup != obj.MemberEnd();) {
    dup = NameIs(dup->name, key) ? obj.EraseMember(dup) : dup + 1;
  }
}

Value StringValue(std::string_view s, Allocator& alloc) {
  return Value(s.data(), static_cast<SizeType>(s.size()), alloc);
}

// The object at parent[key], created when missing or null. `path` names it for errors.
Status EnsureObject(Value& parent, std::string_view key, std::string_view path, Allocator& alloc,
                    Value** out) {
  Value* v = FindMember(parent, key);
  if (v == nullptr || v->IsNull()) {
    SetMember(parent, key, Value(rapidjson::kObjectType), alloc);
    v = FindMember(parent, key);
  } else if (!v->IsObject()) {
    return NotObject(path, *v);
  }
  *out = v;
  return Status();
}

// The object at parent[key] if there is one; nullptr when missing or null.
Status FindObject(Value& parent, std::string_view key, std::string_view path, Value** out) {
  Value* v = FindMember(parent, key);
  if (v != nullptr && !v->IsNull() && !v->IsObject()) return NotObject(path, *v);
  *out = (v != nullptr && v->IsObject()) ? v : nullptr;
  return Status();
}

Status CheckRoot(const rapidjson::Document& doc) {
  if (!doc.IsObject()) return NotObject("", doc);
  return Status();
}

// Sets (or, when `value` is null, removes) top.key1.key2.
Status SetNested(rapidjson::Document& doc, std::string_view key1, std::string_view key2,
                 std::optional<Value> value) {
  KT_RETURN_IF_ERROR(CheckRoot(doc));
  Allocator& alloc = doc.GetAllocator();
  Value* parent = nullptr;
  if (!value) {
    KT_RETURN_IF_ERROR(FindObject(doc, key1, key1, &parent));
    if (parent != nullptr) RemoveMembers(*parent, key2);
    return Status();
  }
  KT_RETURN_IF_ERROR(EnsureObject(doc, key1, key1, alloc, &parent));
  SetMember(*parent, key2, std::move(*value), alloc);
  return Status();
}

Status SetMetaString(rapidjson::Document& doc, std::string_view key, std::string_view value) {
  if (value.empty()) return SetNested(doc, "metadata", key, std::nullopt);
  return SetNested(doc, "metadata", key, StringValue(value, doc.GetAllocator()));
}

Status SetMapEntry(rapidjson::Document& doc, std::string_view map_key, std::string_view key,
                   std::string_view value) {
  KT_RETURN_IF_ERROR(CheckRoot(doc));
  Allocator& alloc = doc.GetAllocator();
  Value* meta = nullptr;
  KT_RETURN_IF_ERROR(EnsureObject(doc, "metadata", "metadata", alloc, &meta));
  Value* map = nullptr;
  const std::string path = "metadata." + std::string(map_key);
  KT_RETURN_IF_ERROR(EnsureObject(*meta, map_key, path, alloc, &map));
  SetMember(*map, key, StringValue(value, alloc), alloc);
  return Status();
}

Status RemoveMapEntry(rapidjson::Document& doc, std::string_view map_key, std::string_view key) {
  KT_RETURN_IF_ERROR(CheckRoot(doc));
  Value* meta = nullptr;
  KT_RETURN_IF_ERROR(FindObject(doc, "metadata", "metadata", &meta));
  if (meta == nullptr) return Status();
  Value* map = nullptr;
  const std::string path = "metadata." + std::string(map_key);
  KT_RETURN_IF_ERROR(FindObject(*meta, map_key, path, &map));
  if (map == nullptr) return Status();
  RemoveMembers(*map, key);
  if (map->MemberCount() == 0) RemoveMembers(*meta, map_key);
  return Status();
}

Status SetCondition(rapidjson::Document& doc, const Condition& c, ConditionKind kind) {
  KT_RETURN_IF_ERROR(CheckRoot(doc));
  Allocator& alloc = doc.GetAllocator();
  Value* status = nullptr;
  KT_RETURN_IF_ERROR(EnsureObject(doc, "status", "status", alloc, &status));
  Value* conditions = FindMember(*status, "conditions");
  if (conditions == nullptr || conditions->IsNull()) {
    SetMember(*status, "conditions", Value(rapidjson::kArrayType), alloc);
    conditions = FindMember(*status, "conditions");
  } else if (!conditions->IsArray()) {
    std::string m = "status.conditions: expected array, got ";
    m += JsonTypeName(*conditions);
    return BadRequest(std::move(m));
  }
  for (auto& element : conditions->GetArray()) {
    if (!element.IsObject()) continue;
    const Value* type = FindMember(element, "type");
    if (type == nullptr || !type->IsString() || View(*type) != c.type) continue;
    // Update in place: members kubetaint does not know (observedGeneration, ...) survive.
    auto set_time = [&](std::string_view key, const std::string& t) {
      SetMember(element, key, t.empty() ? Value() : StringValue(t, alloc), alloc);
    };
    auto set_opt = [&](std::string_view key, const std::string& s) {
      if (s.empty()) {
        RemoveMembers(element, key);
      } else {
        SetMember(element, key, StringValue(s, alloc), alloc);
      }
    };
    SetMember(element, "status", StringValue(c.status, alloc), alloc);
    if (c.observed_generation != 0) {
      SetMember(element, "observedGeneration", Value(c.observed_generation), alloc);
    }
    if (kind == ConditionKind::kPod) {
      set_time("lastProbeTime", c.last_probe_time);
    } else {
      set_time("lastHeartbeatTime", c.last_heartbeat_time);
    }
    set_time("lastTransitionTime", c.last_transition_time);
    set_opt("reason", c.reason);
    set_opt("message", c.message);
    return Status();
  }
  Value v = BuildValue(alloc, [&](auto& e) { WriteCondition(e, c, kind); });
  conditions->PushBack(v, alloc);
  return Status();
}

}  // namespace

// ============================================================================================
// Public API
// ============================================================================================

Result<rapidjson::Document> ParseJson(std::string_view bytes) {
  // UTF-8 validation accepts every ASCII byte and leaves it as it is, so text without a byte
  // above 0x7f (nearly every request) parses the same without it, and validation is most of the
  // cost of parsing strings. The check reads 8 bytes at a time.
  if (IsAscii(bytes)) {
    return ParseImpl<kParseFlags & ~unsigned{rapidjson::kParseValidateEncodingFlag}>(bytes, nullptr,
                                                                                     0);
  }
  return ParseImpl<kParseFlags>(bytes, nullptr, 0);
}

Result<rapidjson::Document> ParseTrustedJson(const std::string& bytes) {
  // No UTF-8 validation: it was done when the bytes were first accepted, and it is most of the
  // cost of parsing strings. Recursive rather than iterative, as ParseTrustedJsonInPlace. From
  // the NUL-terminated string, where RapidJSON scans strings and whitespace 16 bytes at a time
  // (RAPIDJSON_SSE2).
  constexpr unsigned kFlags = kParseFlags & ~unsigned{rapidjson::kParseValidateEncodingFlag} &
                              ~unsigned{rapidjson::kParseIterativeFlag};
  rapidjson::StringStream stream(bytes.c_str());
  return ParseStream<kFlags>(stream, bytes.size(), nullptr, 0);
}

Result<rapidjson::Document> ParseTrustedJsonInPlace(std::string& buffer) {
  // Recursive rather than iterative (twice as fast): the handler stops the parse at
  // kMaxJsonDepth before the parser descends further, so recursion stays bounded. In place:
  // strings are not copied into the document. Together they halve the cost of decoding a stored
  // object, which is most of the start-up time.
  constexpr unsigned kFlags = (kParseFlags & ~unsigned{rapidjson::kParseIterativeFlag} &
                               ~unsigned{rapidjson::kParseValidateEncodingFlag}) |
                              rapidjson::kParseInsituFlag;
  rapidjson::InsituStringStream stream(buffer.data());
  return ParseStream<kFlags>(stream, buffer.size(), nullptr, 0);
}

Result<rapidjson::Document> ParseJsonPrefix(std::string_view bytes, size_t* consumed,
                                            size_t base_offset) {
  size_t used = 0;
  auto doc = ParseImpl<kParseFlags | rapidjson::kParseStopWhenDoneFlag>(bytes, &used, base_offset);
  if (consumed != nullptr) *consumed = used;
  return doc;
}

Result<Quantity> DecodeQuantity(const Value& v) {
  if (v.IsString()) {
    std::string_view s = View(v);
    constexpr std::string_view kSpace = " \t\n\v\f\r";
    const size_t b = s.find_first_not_of(kSpace);
    if (b == std::string_view::npos) return Quantity::Parse("");
    const size_t e = s.find_last_not_of(kSpace);
    return Quantity::Parse(s.substr(b, e - b + 1));
  }
  if (v.IsNumber()) {
    char buf[64];
    std::to_chars_result r;
    if (v.IsInt64()) {
      r = std::to_chars(buf, buf + sizeof(buf), v.GetInt64());
    } else if (v.IsUint64()) {
      r = std::to_chars(buf, buf + sizeof(buf), v.GetUint64());
    } else {
      // Upstream parses the number's JSON text; the shortest round-trip form of the double is
      // that text up to notation ("1e3" reads as "1000").
      r = std::to_chars(buf, buf + sizeof(buf), v.GetDouble());
    }
    return Quantity::Parse(std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
  }
  if (v.IsNull()) return Quantity();
  std::string m = "expected quantity (string or number), got ";
  m += JsonTypeName(v);
  return Err(BadRequest(std::move(m)));
}

Result<ObjectMeta> DecodeObjectMeta(const Value& object) {
  return DecodeRoot<ObjectMeta>(object, DecodeMetaMember);
}

Result<Node> DecodeNode(const Value& object) {
  return DecodeRoot<Node>(object, [](const Value& v, const Path& p, Node* n) {
    return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
      if (k == "metadata") return DecodeMeta(val, p.Child(k), &n->meta);
      if (k == "spec") return DecodeNodeSpec(val, p.Child(k), &n->spec);
      if (k == "status") return DecodeNodeStatus(val, p.Child(k), &n->status);
      return Status();
    });
  });
}

Result<Pod> DecodePod(const Value& object) {
  return DecodeRoot<Pod>(object, [](const Value& v, const Path& p, Pod* pod) {
    return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
      if (k == "metadata") return DecodeMeta(val, p.Child(k), &pod->meta);
      if (k == "spec") return DecodePodSpec(val, p.Child(k), &pod->spec);
      if (k == "status") return DecodePodStatus(val, p.Child(k), &pod->status);
      return Status();
    });
  });
}

Result<Pod> DecodePodKeepingSpec(const Pod& base, const Value& object) {
  return DecodeRoot<Pod>(object, [&](const Value& v, const Path& p, Pod* pod) {
    pod->spec = base.spec;
    return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
      if (k == "metadata") return DecodeMeta(val, p.Child(k), &pod->meta);
      if (k == "status") return DecodePodStatus(val, p.Child(k), &pod->status);
      return Status();
    });
  });
}

Result<Namespace> DecodeNamespace(const Value& object) {
  return DecodeRoot<Namespace>(object, [](const Value& v, const Path& p, Namespace* ns) {
    return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
      if (k == "metadata") return DecodeMeta(val, p.Child(k), &ns->meta);
      if (k == "status") {
        const Path c = p.Child(k);
        return ForEachMember(val, c, [&](std::string_view k2, const Value& v2) -> Status {
          if (k2 == "phase") return DecodeString(v2, c.Child(k2), &ns->phase);
          return Status();
        });
      }
      return Status();
    });
  });
}

static Status DecodeObjectReference(const Value& v, const Path& p, ObjectReference* o) {
  return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
    const Path c = p.Child(k);
    if (k == "kind") return DecodeString(val, c, &o->kind);
    if (k == "namespace") return DecodeString(val, c, &o->namespace_);
    if (k == "name") return DecodeString(val, c, &o->name);
    if (k == "uid") return DecodeString(val, c, &o->uid);
    if (k == "apiVersion") return DecodeString(val, c, &o->api_version);
    if (k == "resourceVersion") return DecodeString(val, c, &o->resource_version);
    if (k == "fieldPath") return DecodeString(val, c, &o->field_path);
    return Status();
  });
}

Result<Event> DecodeEvent(const Value& object) {
  return DecodeRoot<Event>(object, [](const Value& v, const Path& p, Event* ev) {
    return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
      const Path c = p.Child(k);
      if (k == "metadata") return DecodeMeta(val, c, &ev->meta);
      if (k == "involvedObject") return DecodeObjectReference(val, c, &ev->involved_object);
      if (k == "related") {
        if (val.IsNull()) {
          ev->related.reset();
          return Status();
        }
        ev->related.emplace();
        return DecodeObjectReference(val, c, &*ev->related);
      }
      if (k == "series") {
        return ForEachMember(val, c, [&](std::string_view k2, const Value& v2) -> Status {
          if (k2 == "count") return DecodeInt32(v2, c.Child(k2), &ev->series_count);
          if (k2 == "lastObservedTime") {
            return DecodeString(v2, c.Child(k2), &ev->series_last_observed_time);
          }
          return Status();
        });
      }
      if (k == "source") {
        return ForEachMember(val, c, [&](std::string_view k2, const Value& v2) -> Status {
          if (k2 == "component") return DecodeString(v2, c.Child(k2), &ev->source_component);
          if (k2 == "host") return DecodeString(v2, c.Child(k2), &ev->source_host);
          return Status();
        });
      }
      if (k == "reason") return DecodeString(val, c, &ev->reason);
      if (k == "message") return DecodeString(val, c, &ev->message);
      if (k == "type") return DecodeString(val, c, &ev->type);
      if (k == "count") return DecodeInt32(val, c, &ev->count);
      if (k == "firstTimestamp") return DecodeString(val, c, &ev->first_timestamp);
      if (k == "lastTimestamp") return DecodeString(val, c, &ev->last_timestamp);
      if (k == "eventTime") return DecodeString(val, c, &ev->event_time);
      if (k == "reportingComponent") return DecodeString(val, c, &ev->reporting_component);
      if (k == "reportingInstance") return DecodeString(val, c, &ev->reporting_instance);
      if (k == "action") return DecodeString(val, c, &ev->action);
      return Status();
    });
  });
}

Result<Lease> DecodeLease(const Value& object) {
  return DecodeRoot<Lease>(object, [](const Value& v, const Path& p, Lease* l) {
    return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
      if (k == "metadata") return DecodeMeta(val, p.Child(k), &l->meta);
      if (k != "spec") return Status();
      const Path c = p.Child(k);
      return ForEachMember(val, c, [&](std::string_view k2, const Value& v2) -> Status {
        const Path c2 = c.Child(k2);
        if (k2 == "holderIdentity") return DecodeString(v2, c2, &l->holder_identity);
        if (k2 == "leaseDurationSeconds") {
          return DecodeOptInt32(v2, c2, &l->lease_duration_seconds);
        }
        if (k2 == "acquireTime") return DecodeString(v2, c2, &l->acquire_time);
        if (k2 == "renewTime") return DecodeString(v2, c2, &l->renew_time);
        if (k2 == "leaseTransitions") return DecodeOptInt32(v2, c2, &l->lease_transitions);
        return Status();
      });
    });
  });
}

Result<NodeAffinity> DecodeNodeAffinity(const Value& value) {
  std::optional<NodeAffinity> out;
  Status s = DecodeNodeAffinity(value, Path(), &out);
  if (!s.ok()) return Err(std::move(s));
  return out.value_or(NodeAffinity{});
}

Result<PriorityClass> DecodePriorityClass(const Value& object) {
  return DecodeRoot<PriorityClass>(object, [](const Value& v, const Path& p, PriorityClass* pc) {
    return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
      const Path c = p.Child(k);
      if (k == "metadata") return DecodeMeta(val, c, &pc->meta);
      if (k == "value") return DecodeInt32(val, c, &pc->value);
      if (k == "globalDefault") return DecodeBool(val, c, &pc->global_default);
      if (k == "preemptionPolicy") return DecodeString(val, c, &pc->preemption_policy);
      if (k == "description") return DecodeString(val, c, &pc->description);
      return Status();
    });
  });
}

Result<DaemonSet> DecodeDaemonSet(const Value& object) {
  return DecodeRoot<DaemonSet>(object, [](const Value& v, const Path& p, DaemonSet* ds) {
    return ForEachMember(v, p, [&](std::string_view k, const Value& val) -> Status {
      const Path c = p.Child(k);
      if (k == "metadata") return DecodeMeta(val, c, &ds->meta);
      if (k == "spec") {
        return ForEachMember(val, c, [&](std::string_view k2, const Value& v2) -> Status {
          const Path c2 = c.Child(k2);
          if (k2 == "selector") return DecodeLabelSelector(v2, c2, &ds->selector);
          if (k2 == "template") {
            return ForEachMember(v2, c2, [&](std::string_view k3, const Value& v3) -> Status {
              if (k3 == "metadata") return DecodeMeta(v3, c2.Child(k3), &ds->template_.meta);
              if (k3 == "spec") return DecodePodSpec(v3, c2.Child(k3), &ds->template_.spec);
              return Status();
            });
          }
          if (k2 == "minReadySeconds") return DecodeInt32(v2, c2, &ds->min_ready_seconds);
          if (k2 == "updateStrategy") {
            return ForEachMember(v2, c2, [&](std::string_view k3, const Value& v3) -> Status {
              const Path c3 = c2.Child(k3);
              if (k3 == "type") return DecodeString(v3, c3, &ds->update_strategy_type);
              if (k3 != "rollingUpdate") return Status();
              return ForEachMember(v3, c3, [&](std::string_view k4, const Value& v4) -> Status {
                if (k4 == "maxUnavailable") {
                  return DecodeIntOrString(v4, c3.Child(k4), &ds->max_unavailable);
                }
                if (k4 == "maxSurge") return DecodeIntOrString(v4, c3.Child(k4), &ds->max_surge);
                return Status();
              });
            });
          }
          return Status();
        });
      }
      if (k == "status") {
        return ForEachMember(val, c, [&](std::string_view k2, const Value& v2) -> Status {
          const Path c2 = c.Child(k2);
          if (k2 == "currentNumberScheduled") {
            return DecodeInt32(v2, c2, &ds->current_number_scheduled);
          }
          if (k2 == "desiredNumberScheduled") {
            return DecodeInt32(v2, c2, &ds->desired_number_scheduled);
          }
          if (k2 == "numberMisscheduled") return DecodeInt32(v2, c2, &ds->number_misscheduled);
          if (k2 == "numberReady") return DecodeInt32(v2, c2, &ds->number_ready);
          if (k2 == "observedGeneration") return DecodeInt64(v2, c2, &ds->observed_generation);
          if (k2 == "updatedNumberScheduled") {
            return DecodeInt32(v2, c2, &ds->updated_number_scheduled);
          }
          if (k2 == "numberAvailable") return DecodeInt32(v2, c2, &ds->number_available);
          if (k2 == "numberUnavailable") return DecodeInt32(v2, c2, &ds->number_unavailable);
          if (k2 == "collisionCount") return DecodeOptInt32(v2, c2, &ds->collision_count);
          return Status();
        });
      }
      return Status();
    });
  });
}

std::string EncodeJson(const Value& value) {
  std::string out;
  AppendJson(value, &out);
  return out;
}

void AppendJson(const Value& value, std::string* out) {
  StringWriter writer(out);
  value.Accept(writer);
}  // the writer trims the string to what was written

std::string EncodeNode(const Node& node) {
  return EncodeWith([&](auto& e) { WriteNode(e, node); });
}
std::string EncodePod(const Pod& pod) {
  return EncodeWith([&](auto& e) { WritePod(e, pod); });
}
std::string EncodeNamespace(const Namespace& ns) {
  return EncodeWith([&](auto& e) { WriteNamespace(e, ns); });
}
std::string EncodeEvent(const Event& event) {
  return EncodeWith([&](auto& e) { WriteEvent(e, event); });
}
std::string EncodeLease(const Lease& lease) {
  return EncodeWith([&](auto& e) { WriteLease(e, lease); });
}
std::string EncodePriorityClass(const PriorityClass& pc) {
  return EncodeWith([&](auto& e) { WritePriorityClass(e, pc); });
}
std::string EncodePodCondition(const Condition& condition) {
  return EncodeWith([&](auto& e) { WriteCondition(e, condition, ConditionKind::kPod); });
}

rapidjson::Document NodeToDocument(const Node& node) {
  return DocumentWith([&](auto& e) { WriteNode(e, node); });
}
rapidjson::Document PodToDocument(const Pod& pod) {
  return DocumentWith([&](auto& e) { WritePod(e, pod); });
}
rapidjson::Document NamespaceToDocument(const Namespace& ns) {
  return DocumentWith([&](auto& e) { WriteNamespace(e, ns); });
}
rapidjson::Document EventToDocument(const Event& event) {
  return DocumentWith([&](auto& e) { WriteEvent(e, event); });
}
rapidjson::Document LeaseToDocument(const Lease& lease) {
  return DocumentWith([&](auto& e) { WriteLease(e, lease); });
}
rapidjson::Document PriorityClassToDocument(const PriorityClass& pc) {
  return DocumentWith([&](auto& e) { WritePriorityClass(e, pc); });
}

Value TaintToValue(const Taint& taint, Allocator& alloc) {
  return BuildValue(alloc, [&](auto& e) { WriteTaint(e, taint); });
}

Value TolerationToValue(const Toleration& toleration, Allocator& alloc) {
  return BuildValue(alloc, [&](auto& e) { WriteToleration(e, toleration); });
}

Status SetTaints(rapidjson::Document& node, std::span<const Taint> taints) {
  if (taints.empty()) return SetNested(node, "spec", "taints", std::nullopt);
  return SetNested(node, "spec", "taints", BuildValue(node.GetAllocator(), [&](auto& e) {
                     e.StartArray();
                     for (const auto& t : taints) WriteTaint(e, t);
                     e.EndArray();
                   }));
}

Status SetUnschedulable(rapidjson::Document& node, bool unschedulable) {
  if (!unschedulable) return SetNested(node, "spec", "unschedulable", std::nullopt);
  return SetNested(node, "spec", "unschedulable", Value(true));
}

Status SetNodeName(rapidjson::Document& pod, std::string_view node_name) {
  if (node_name.empty()) return SetNested(pod, "spec", "nodeName", std::nullopt);
  return SetNested(pod, "spec", "nodeName", StringValue(node_name, pod.GetAllocator()));
}

Status SetTolerations(rapidjson::Document& pod, std::span<const Toleration> tolerations) {
  if (tolerations.empty()) return SetNested(pod, "spec", "tolerations", std::nullopt);
  return SetNested(pod, "spec", "tolerations", BuildValue(pod.GetAllocator(), [&](auto& e) {
                     e.StartArray();
                     for (const auto& t : tolerations) WriteToleration(e, t);
                     e.EndArray();
                   }));
}

Status SetPodPhase(rapidjson::Document& pod, std::string_view phase) {
  if (phase.empty()) return SetNested(pod, "status", "phase", std::nullopt);
  return SetNested(pod, "status", "phase", StringValue(phase, pod.GetAllocator()));
}

Status SetPodCondition(rapidjson::Document& pod, const Condition& condition) {
  return SetCondition(pod, condition, ConditionKind::kPod);
}

void SetPodCondition(Pod& pod, const Condition& c) {
  for (Condition& existing : pod.status.conditions) {
    if (existing.type != c.type) continue;
    existing.status = c.status;
    if (c.observed_generation != 0) existing.observed_generation = c.observed_generation;
    existing.last_probe_time = c.last_probe_time;
    existing.last_transition_time = c.last_transition_time;
    existing.reason = c.reason;
    existing.message = c.message;
    return;
  }
  Condition added = c;
  added.last_heartbeat_time.clear();  // nodes only: not written for a pod
  pod.status.conditions.push_back(std::move(added));
}

Status SetNodeCondition(rapidjson::Document& node, const Condition& condition) {
  return SetCondition(node, condition, ConditionKind::kNode);
}

Status SetLabel(rapidjson::Document& object, std::string_view key, std::string_view value) {
  return SetMapEntry(object, "labels", key, value);
}

Status RemoveLabel(rapidjson::Document& object, std::string_view key) {
  return RemoveMapEntry(object, "labels", key);
}

Status SetAnnotation(rapidjson::Document& object, std::string_view key, std::string_view value) {
  return SetMapEntry(object, "annotations", key, value);
}

Status RemoveAnnotation(rapidjson::Document& object, std::string_view key) {
  return RemoveMapEntry(object, "annotations", key);
}

Status SetName(rapidjson::Document& object, std::string_view name) {
  return SetMetaString(object, "name", name);
}

Status SetNamespace(rapidjson::Document& object, std::string_view namespace_) {
  return SetMetaString(object, "namespace", namespace_);
}

Status SetResourceVersion(rapidjson::Document& object, std::string_view resource_version) {
  return SetMetaString(object, "resourceVersion", resource_version);
}

Status SetUID(rapidjson::Document& object, std::string_view uid) {
  return SetMetaString(object, "uid", uid);
}

Status SetCreationTimestamp(rapidjson::Document& object, std::string_view timestamp) {
  // A zero metav1.Time is written as null, never omitted.
  return SetNested(object, "metadata", "creationTimestamp",
                   timestamp.empty() ? Value() : StringValue(timestamp, object.GetAllocator()));
}

Status SetGeneration(rapidjson::Document& object, int64_t generation) {
  if (generation == 0) return SetNested(object, "metadata", "generation", std::nullopt);
  return SetNested(object, "metadata", "generation", Value(generation));
}

Status SetDeletionTimestamp(rapidjson::Document& object, std::string_view timestamp) {
  return SetMetaString(object, "deletionTimestamp", timestamp);
}

Status SetDeletionGracePeriodSeconds(rapidjson::Document& object, int64_t seconds) {
  return SetNested(object, "metadata", "deletionGracePeriodSeconds", Value(seconds));
}

}  // namespace kt::api
