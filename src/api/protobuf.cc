#include "api/protobuf.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace kt::api {

namespace {

using rapidjson::Document;
using rapidjson::SizeType;
using rapidjson::Value;
using Allocator = Document::AllocatorType;

// ---- Wire format -------------------------------------------------------------------------------

enum WireType : uint8_t {
  kVarint = 0,
  kFixed64 = 1,
  kBytes = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

Status UnexpectedEof() { return BadRequest("unexpected EOF"); }

// A bounds-checked reader over one message's bytes.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}

  bool Done() const { return pos_ >= data_.size(); }

  Status Varint(uint64_t* out) {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      if (shift >= 64) return BadRequest("proto: integer overflow");
      if (pos_ >= data_.size()) return UnexpectedEof();
      uint8_t b = static_cast<uint8_t>(data_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (b < 0x80) break;
    }
    *out = v;
    return Status::Ok();
  }

  Status Bytes(std::string_view* out) {
    uint64_t len = 0;
    KT_RETURN_IF_ERROR(Varint(&len));
    if (static_cast<int64_t>(len) < 0) {
      return BadRequest("proto: negative length found during unmarshaling");
    }
    if (len > data_.size() - pos_) return UnexpectedEof();
    *out = data_.substr(pos_, static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return Status::Ok();
  }

  // Reads a field key; `message` names the message in errors.
  Status Key(std::string_view message, uint32_t* field, uint8_t* wire) {
    uint64_t key = 0;
    KT_RETURN_IF_ERROR(Varint(&key));
    *wire = static_cast<uint8_t>(key & 7);
    uint64_t number = key >> 3;
    if (*wire == kEndGroup) {
      return BadRequest("proto: " + std::string(message) + ": wiretype end group for non-group");
    }
    if (number == 0 || number > 0x1FFFFFFF) {
      return BadRequest("proto: " + std::string(message) + ": illegal tag " +
                        std::to_string(static_cast<int64_t>(number)) + " (wire type " +
                        std::to_string(*wire) + ")");
    }
    *field = static_cast<uint32_t>(number);
    return Status::Ok();
  }

  // Skips a field's value (skipGenerated). Groups are refused: no Kubernetes type uses them.
  Status Skip(uint8_t wire) {
    switch (wire) {
      case kVarint: {
        uint64_t ignored = 0;
        return Varint(&ignored);
      }
      case kFixed64:
        return Advance(8);
      case kFixed32:
        return Advance(4);
      case kBytes: {
        std::string_view ignored;
        return Bytes(&ignored);
      }
      default:
        return BadRequest("proto: illegal wireType " + std::to_string(wire));
    }
  }

 private:
  Status Advance(size_t n) {
    if (n > data_.size() - pos_) return UnexpectedEof();
    pos_ += n;
    return Status::Ok();
  }

  std::string_view data_;
  size_t pos_ = 0;
};

// ---- Schema ------------------------------------------------------------------------------------

enum class Kind : uint8_t {
  kString,
  kInt64,
  kBool,
  kMessage,  // an embedded struct
  kRepeatedString,
  kRepeatedMessage,  // a list of structs
  kStringMap,        // map<string, string>: entries {1 key, 2 value}
  kTime,             // metav1.Time: {1 seconds, 2 nanos}
};

// How Go's encoding/json writes the field of the upstream Go type.
enum class Presence : uint8_t {
  kOmitEmpty,  // `omitempty` value: written unless zero / empty
  kAlways,     // no omitempty, or a struct (omitempty does not drop structs)
  kPointer,    // a pointer: written exactly when it was on the wire
  kNullList,   // a list without omitempty: null when empty (a nil slice)
};

struct MessageDesc;

struct FieldDesc {
  uint32_t number;
  std::string_view json;
  Kind kind;
  Presence presence;
  const MessageDesc* message = nullptr;
};

struct MessageDesc {
  std::string_view name;              // for error messages, as gogo's
  std::span<const FieldDesc> fields;  // in Go struct (JSON) order
};

using K = Kind;
using P = Presence;

constexpr FieldDesc kOwnerReferenceFields[] = {
    {5, "apiVersion", K::kString, P::kAlways}, {1, "kind", K::kString, P::kAlways},
    {3, "name", K::kString, P::kAlways},       {4, "uid", K::kString, P::kAlways},
    {6, "controller", K::kBool, P::kPointer},  {7, "blockOwnerDeletion", K::kBool, P::kPointer},
};
constexpr MessageDesc kOwnerReference{"OwnerReference", kOwnerReferenceFields};

constexpr FieldDesc kObjectMetaFields[] = {
    {1, "name", K::kString, P::kOmitEmpty},
    {2, "generateName", K::kString, P::kOmitEmpty},
    {3, "namespace", K::kString, P::kOmitEmpty},
    {4, "selfLink", K::kString, P::kOmitEmpty},
    {5, "uid", K::kString, P::kOmitEmpty},
    {6, "resourceVersion", K::kString, P::kOmitEmpty},
    {7, "generation", K::kInt64, P::kOmitEmpty},
    {8, "creationTimestamp", K::kTime, P::kAlways},
    {9, "deletionTimestamp", K::kTime, P::kPointer},
    {10, "deletionGracePeriodSeconds", K::kInt64, P::kPointer},
    {11, "labels", K::kStringMap, P::kOmitEmpty},
    {12, "annotations", K::kStringMap, P::kOmitEmpty},
    {13, "ownerReferences", K::kRepeatedMessage, P::kOmitEmpty, &kOwnerReference},
    {14, "finalizers", K::kRepeatedString, P::kOmitEmpty},
};
constexpr MessageDesc kObjectMeta{"ObjectMeta", kObjectMetaFields};

constexpr FieldDesc kNamespaceSpecFields[] = {
    {1, "finalizers", K::kRepeatedString, P::kOmitEmpty},
};
constexpr MessageDesc kNamespaceSpec{"NamespaceSpec", kNamespaceSpecFields};

constexpr FieldDesc kNamespaceStatusFields[] = {
    {1, "phase", K::kString, P::kOmitEmpty},
};
constexpr MessageDesc kNamespaceStatus{"NamespaceStatus", kNamespaceStatusFields};

constexpr FieldDesc kNamespaceFields[] = {
    {1, "metadata", K::kMessage, P::kAlways, &kObjectMeta},
    {2, "spec", K::kMessage, P::kAlways, &kNamespaceSpec},
    {3, "status", K::kMessage, P::kAlways, &kNamespaceStatus},
};
constexpr MessageDesc kNamespace{"Namespace", kNamespaceFields};

// scheduling.k8s.io/v1 PriorityClass (`kubectl create priorityclass`).
constexpr FieldDesc kPriorityClassFields[] = {
    {1, "metadata", K::kMessage, P::kAlways, &kObjectMeta},
    {2, "value", K::kInt64, P::kAlways},  // int32 on the wire: negatives are sign-extended
    {3, "globalDefault", K::kBool, P::kOmitEmpty},
    {4, "description", K::kString, P::kOmitEmpty},
    {5, "preemptionPolicy", K::kString, P::kPointer},
};
constexpr MessageDesc kPriorityClass{"PriorityClass", kPriorityClassFields};

constexpr FieldDesc kPreconditionsFields[] = {
    {1, "uid", K::kString, P::kPointer},
    {2, "resourceVersion", K::kString, P::kPointer},
};
constexpr MessageDesc kPreconditions{"Preconditions", kPreconditionsFields};

constexpr FieldDesc kDeleteOptionsFields[] = {
    {1, "gracePeriodSeconds", K::kInt64, P::kPointer},
    {2, "preconditions", K::kMessage, P::kPointer, &kPreconditions},
    {3, "orphanDependents", K::kBool, P::kPointer},
    {4, "propagationPolicy", K::kString, P::kPointer},
    {5, "dryRun", K::kRepeatedString, P::kOmitEmpty},
    {6, "ignoreStoreReadErrorWithClusterBreakingPotential", K::kBool, P::kPointer},
};
constexpr MessageDesc kDeleteOptions{"DeleteOptions", kDeleteOptionsFields};

constexpr FieldDesc kSelectorAttributesFields[] = {
    {1, "rawSelector", K::kString, P::kOmitEmpty},
};
constexpr MessageDesc kSelectorAttributes{"SelectorAttributes", kSelectorAttributesFields};

constexpr FieldDesc kResourceAttributesFields[] = {
    {1, "namespace", K::kString, P::kOmitEmpty},
    {2, "verb", K::kString, P::kOmitEmpty},
    {3, "group", K::kString, P::kOmitEmpty},
    {4, "version", K::kString, P::kOmitEmpty},
    {5, "resource", K::kString, P::kOmitEmpty},
    {6, "subresource", K::kString, P::kOmitEmpty},
    {7, "name", K::kString, P::kOmitEmpty},
    {8, "fieldSelector", K::kMessage, P::kPointer, &kSelectorAttributes},
    {9, "labelSelector", K::kMessage, P::kPointer, &kSelectorAttributes},
};
constexpr MessageDesc kResourceAttributes{"ResourceAttributes", kResourceAttributesFields};

constexpr FieldDesc kNonResourceAttributesFields[] = {
    {1, "path", K::kString, P::kOmitEmpty},
    {2, "verb", K::kString, P::kOmitEmpty},
};
constexpr MessageDesc kNonResourceAttributes{"NonResourceAttributes", kNonResourceAttributesFields};

constexpr FieldDesc kSelfSubjectAccessReviewSpecFields[] = {
    {1, "resourceAttributes", K::kMessage, P::kPointer, &kResourceAttributes},
    {2, "nonResourceAttributes", K::kMessage, P::kPointer, &kNonResourceAttributes},
};
constexpr MessageDesc kSelfSubjectAccessReviewSpec{"SelfSubjectAccessReviewSpec",
                                                   kSelfSubjectAccessReviewSpecFields};

constexpr FieldDesc kSubjectAccessReviewStatusFields[] = {
    {1, "allowed", K::kBool, P::kAlways},
    {4, "denied", K::kBool, P::kOmitEmpty},
    {2, "reason", K::kString, P::kOmitEmpty},
    {3, "evaluationError", K::kString, P::kOmitEmpty},
};
constexpr MessageDesc kSubjectAccessReviewStatus{"SubjectAccessReviewStatus",
                                                 kSubjectAccessReviewStatusFields};

constexpr FieldDesc kSelfSubjectAccessReviewFields[] = {
    {1, "metadata", K::kMessage, P::kAlways, &kObjectMeta},
    {2, "spec", K::kMessage, P::kAlways, &kSelfSubjectAccessReviewSpec},
    {3, "status", K::kMessage, P::kAlways, &kSubjectAccessReviewStatus},
};
constexpr MessageDesc kSelfSubjectAccessReview{"SelfSubjectAccessReview",
                                               kSelfSubjectAccessReviewFields};

constexpr FieldDesc kSelfSubjectRulesReviewSpecFields[] = {
    {1, "namespace", K::kString, P::kOmitEmpty},
};
constexpr MessageDesc kSelfSubjectRulesReviewSpec{"SelfSubjectRulesReviewSpec",
                                                  kSelfSubjectRulesReviewSpecFields};

// resourceRules (1) and nonResourceRules (2) only come back from the server: skipped here and
// written as the nil slices a request decodes to.
constexpr FieldDesc kSubjectRulesReviewStatusFields[] = {
    {1, "resourceRules", K::kRepeatedString, P::kNullList},
    {2, "nonResourceRules", K::kRepeatedString, P::kNullList},
    {3, "incomplete", K::kBool, P::kAlways},
    {4, "evaluationError", K::kString, P::kOmitEmpty},
};
constexpr MessageDesc kSubjectRulesReviewStatus{"SubjectRulesReviewStatus",
                                                kSubjectRulesReviewStatusFields};

constexpr FieldDesc kSelfSubjectRulesReviewFields[] = {
    {1, "metadata", K::kMessage, P::kAlways, &kObjectMeta},
    {2, "spec", K::kMessage, P::kAlways, &kSelfSubjectRulesReviewSpec},
    {3, "status", K::kMessage, P::kAlways, &kSubjectRulesReviewStatus},
};
constexpr MessageDesc kSelfSubjectRulesReview{"SelfSubjectRulesReview",
                                              kSelfSubjectRulesReviewFields};

constexpr FieldDesc kUserInfoFields[] = {
    {1, "username", K::kString, P::kOmitEmpty},
    {2, "uid", K::kString, P::kOmitEmpty},
    {3, "groups", K::kRepeatedString, P::kOmitEmpty},
};
constexpr MessageDesc kUserInfo{"UserInfo", kUserInfoFields};

constexpr FieldDesc kSelfSubjectReviewStatusFields[] = {
    {1, "userInfo", K::kMessage, P::kAlways, &kUserInfo},
};
constexpr MessageDesc kSelfSubjectReviewStatus{"SelfSubjectReviewStatus",
                                               kSelfSubjectReviewStatusFields};

constexpr FieldDesc kSelfSubjectReviewFields[] = {
    {1, "metadata", K::kMessage, P::kAlways, &kObjectMeta},
    {2, "status", K::kMessage, P::kAlways, &kSelfSubjectReviewStatus},
};
constexpr MessageDesc kSelfSubjectReview{"SelfSubjectReview", kSelfSubjectReviewFields};

struct KindDesc {
  std::string_view kind;
  const MessageDesc* message;
};

constexpr KindDesc kKinds[] = {
    {"DeleteOptions", &kDeleteOptions},
    {"Namespace", &kNamespace},
    {"PriorityClass", &kPriorityClass},
    {"SelfSubjectAccessReview", &kSelfSubjectAccessReview},
    {"SelfSubjectReview", &kSelfSubjectReview},
    {"SelfSubjectRulesReview", &kSelfSubjectRulesReview},
};

const KindDesc* FindKind(std::string_view kind) {
  for (const KindDesc& k : kKinds) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

// ---- Values ------------------------------------------------------------------------------------

// Go's json.Marshal writes invalid UTF-8 as U+FFFD.
std::string SanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    if (c < 0x80) {
      len = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
    }
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    }
    if (ok && len >= 3) {
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      if (c == 0xE0 && c1 < 0xA0) ok = false;  // overlong
      if (c == 0xED && c1 > 0x9F) ok = false;  // surrogate
      if (c == 0xF0 && c1 < 0x90) ok = false;  // overlong
      if (c == 0xF4 && c1 > 0x8F) ok = false;  // > U+10FFFF
    }
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

Value StringValue(std::string_view s, Allocator& alloc) {
  std::string clean = SanitizeUtf8(s);
  return Value(clean.data(), static_cast<SizeType>(clean.size()), alloc);
}

// Days since 1970-01-01 → civil date (Howard Hinnant's algorithm).
void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  auto doe = static_cast<unsigned>(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t year = static_cast<int64_t>(yoe) + era * 400;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = year + (*m <= 2 ? 1 : 0);
}

// metav1.Time's JSON: RFC 3339 in UTC, whole seconds (upstream drops nanos on decode).
std::string Rfc3339(int64_t seconds) {
  // Keep the arithmetic in range; such times are nonsense anyway.
  constexpr int64_t kLimit = int64_t{1} << 50;
  seconds = std::clamp(seconds, -kLimit, kLimit);
  int64_t days = seconds / 86400;
  int64_t rem = seconds % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ",
                static_cast<long long>(y), m, d, static_cast<long long>(rem / 3600),
                static_cast<long long>(rem / 60 % 60), static_cast<long long>(rem % 60));
  return buf;
}

// ---- Decoding ----------------------------------------------------------------------------------

// What was read for one field of a message.
struct Slot {
  bool present = false;
  uint64_t number = 0;                  // varint fields
  std::string_view bytes;               // string / time fields (last wins)
  std::vector<std::string_view> parts;  // message occurrences (merged) or list elements
  std::vector<std::pair<std::string_view, std::string_view>> entries;  // map entries
};

Status CheckWire(const FieldDesc& field, uint8_t wire) {
  uint8_t want = (field.kind == K::kInt64 || field.kind == K::kBool) ? kVarint : kBytes;
  if (wire == want) return Status::Ok();
  // gogo names the Go field: "proto: wrong wireType = 0 for field Name".
  std::string go_name(field.json);
  if (!go_name.empty()) go_name[0] = static_cast<char>(std::toupper(go_name[0]));
  return BadRequest("proto: wrong wireType = " + std::to_string(wire) + " for field " + go_name);
}

Status DecodeMapEntry(std::string_view bytes, std::string_view* key, std::string_view* value) {
  Reader r(bytes);
  while (!r.Done()) {
    uint32_t field;
    uint8_t wire;
    KT_RETURN_IF_ERROR(r.Key("ObjectMeta", &field, &wire));
    if ((field == 1 || field == 2) && wire == kBytes) {
      KT_RETURN_IF_ERROR(r.Bytes(field == 1 ? key : value));
    } else if (field == 1 || field == 2) {
      return BadRequest("proto: wrong wireType = " + std::to_string(wire) + " for field " +
                        (field == 1 ? "key" : "value"));
    } else {
      KT_RETURN_IF_ERROR(r.Skip(wire));
    }
  }
  return Status::Ok();
}

Status DecodeTime(std::string_view bytes, std::optional<int64_t>* seconds) {
  if (bytes.empty()) {  // metav1.Time: no bytes is the zero time
    seconds->reset();
    return Status::Ok();
  }
  int64_t s = 0;
  Reader r(bytes);
  while (!r.Done()) {
    uint32_t field;
    uint8_t wire;
    KT_RETURN_IF_ERROR(r.Key("Timestamp", &field, &wire));
    if (field == 1 || field == 2) {
      if (wire != kVarint) {
        return BadRequest("proto: wrong wireType = " + std::to_string(wire) + " for field " +
                          (field == 1 ? "Seconds" : "Nanos"));
      }
      uint64_t v = 0;
      KT_RETURN_IF_ERROR(r.Varint(&v));
      if (field == 1) s = static_cast<int64_t>(v);
    } else {
      KT_RETURN_IF_ERROR(r.Skip(wire));
    }
  }
  *seconds = s;
  return Status::Ok();
}

Status DecodeMessage(const MessageDesc& desc, std::span<const std::string_view> parts, Value& out,
                     Allocator& alloc, int depth);

Status DecodeMessageBytes(const MessageDesc& desc, std::string_view bytes, Value& out,
                          Allocator& alloc, int depth) {
  std::string_view one[] = {bytes};
  return DecodeMessage(desc, one, out, alloc, depth);
}

// Decodes the concatenation of `parts` (protobuf merges repeated occurrences of a message).
Status DecodeMessage(const MessageDesc& desc, std::span<const std::string_view> parts, Value& out,
                     Allocator& alloc, int depth) {
  if (depth > 16) return BadRequest("proto: message nested too deeply");
  std::vector<Slot> slots(desc.fields.size());
  for (std::string_view bytes : parts) {
    Reader r(bytes);
    while (!r.Done()) {
      uint32_t number;
      uint8_t wire;
      KT_RETURN_IF_ERROR(r.Key(desc.name, &number, &wire));
      size_t i = 0;
      while (i < desc.fields.size() && desc.fields[i].number != number) ++i;
      if (i == desc.fields.size()) {
        KT_RETURN_IF_ERROR(r.Skip(wire));
        continue;
      }
      const FieldDesc& field = desc.fields[i];
      Slot& slot = slots[i];
      if (field.presence == P::kNullList) {  // response-only lists: skipped
        KT_RETURN_IF_ERROR(r.Skip(wire));
        continue;
      }
      KT_RETURN_IF_ERROR(CheckWire(field, wire));
      slot.present = true;
      switch (field.kind) {
        case K::kInt64:
        case K::kBool:
          KT_RETURN_IF_ERROR(r.Varint(&slot.number));
          break;
        case K::kString:
        case K::kTime:
          KT_RETURN_IF_ERROR(r.Bytes(&slot.bytes));
          break;
        case K::kMessage:
        case K::kRepeatedString:
        case K::kRepeatedMessage: {
          std::string_view b;
          KT_RETURN_IF_ERROR(r.Bytes(&b));
          slot.parts.push_back(b);
          break;
        }
        case K::kStringMap: {
          std::string_view b, key, value;
          KT_RETURN_IF_ERROR(r.Bytes(&b));
          KT_RETURN_IF_ERROR(DecodeMapEntry(b, &key, &value));
          slot.entries.emplace_back(key, value);
          break;
        }
      }
    }
  }

  out.SetObject();
  for (size_t i = 0; i < desc.fields.size(); ++i) {
    const FieldDesc& field = desc.fields[i];
    Slot& slot = slots[i];
    Value value;
    bool emit = false;
    switch (field.kind) {
      case K::kString:
        emit = field.presence == P::kPointer ? slot.present
                                             : field.presence == P::kAlways || !slot.bytes.empty();
        if (emit) value = StringValue(slot.bytes, alloc);
        break;
      case K::kInt64:
        emit = field.presence == P::kPointer ? slot.present
                                             : field.presence == P::kAlways || slot.number != 0;
        if (emit) value.SetInt64(static_cast<int64_t>(slot.number));
        break;
      case K::kBool:
        emit = field.presence == P::kPointer ? slot.present
                                             : field.presence == P::kAlways || slot.number != 0;
        if (emit) value.SetBool(slot.number != 0);
        break;
      case K::kTime: {
        std::optional<int64_t> seconds;
        if (slot.present) KT_RETURN_IF_ERROR(DecodeTime(slot.bytes, &seconds));
        emit = field.presence == P::kPointer ? slot.present : true;
        if (emit && seconds) value = StringValue(Rfc3339(*seconds), alloc);
        break;
      }
      case K::kMessage:
        emit = field.presence == P::kPointer ? slot.present : true;
        if (emit)
          KT_RETURN_IF_ERROR(DecodeMessage(*field.message, slot.parts, value, alloc, depth + 1));
        break;
      case K::kRepeatedString:
        if (field.presence == P::kNullList) {
          emit = true;  // a nil slice
          break;
        }
        emit = !slot.parts.empty();
        if (emit) {
          value.SetArray();
          for (std::string_view s : slot.parts) value.PushBack(StringValue(s, alloc), alloc);
        }
        break;
      case K::kRepeatedMessage:
        emit = !slot.parts.empty();
        if (emit) {
          value.SetArray();
          for (std::string_view b : slot.parts) {
            Value element;
            KT_RETURN_IF_ERROR(DecodeMessageBytes(*field.message, b, element, alloc, depth + 1));
            value.PushBack(element, alloc);
          }
        }
        break;
      case K::kStringMap: {
        emit = !slot.entries.empty();
        if (!emit) break;
        // Go maps: the last entry for a key wins; JSON keys come out sorted.
        std::stable_sort(slot.entries.begin(), slot.entries.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        value.SetObject();
        for (size_t e = 0; e < slot.entries.size(); ++e) {
          if (e + 1 < slot.entries.size() && slot.entries[e + 1].first == slot.entries[e].first) {
            continue;
          }
          value.AddMember(StringValue(slot.entries[e].first, alloc),
                          StringValue(slot.entries[e].second, alloc), alloc);
        }
        break;
      }
    }
    if (emit)
      out.AddMember(Value(rapidjson::StringRef(field.json.data(), field.json.size())), value,
                    alloc);
  }
  return Status::Ok();
}

}  // namespace

bool SupportsProtobufKind(std::string_view kind) { return FindKind(kind) != nullptr; }

Result<rapidjson::Document> DecodeProtobufBody(std::string_view body) {
  if (!body.starts_with(kProtobufMagic)) {
    return Err(BadRequest(
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"));
  }
  // runtime.Unknown: 1 TypeMeta {1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding, 4 contentType.
  Reader r(body.substr(kProtobufMagic.size()));
  std::string_view type_meta, raw, api_version, kind;
  while (!r.Done()) {
    uint32_t field;
    uint8_t wire;
    if (Status s = r.Key("Unknown", &field, &wire); !s.ok()) return Err(std::move(s));
    if (field >= 1 && field <= 4) {
      if (wire != kBytes) {
        static constexpr std::string_view kNames[] = {"", "TypeMeta", "Raw", "ContentEncoding",
                                                      "ContentType"};
        return Err(BadRequest("proto: wrong wireType = " + std::to_string(wire) + " for field " +
                              std::string(kNames[field])));
      }
      std::string_view b;
      if (Status s = r.Bytes(&b); !s.ok()) return Err(std::move(s));
      if (field == 1) type_meta = b;
      if (field == 2) raw = b;
    } else if (Status s = r.Skip(wire); !s.ok()) {
      return Err(std::move(s));
    }
  }
  Reader tm(type_meta);
  while (!tm.Done()) {
    uint32_t field;
    uint8_t wire;
    if (Status s = tm.Key("TypeMeta", &field, &wire); !s.ok()) return Err(std::move(s));
    if ((field == 1 || field == 2) && wire == kBytes) {
      if (Status s = tm.Bytes(field == 1 ? &api_version : &kind); !s.ok()) return Err(std::move(s));
    } else if (field == 1 || field == 2) {
      return Err(BadRequest("proto: wrong wireType = " + std::to_string(wire) + " for field " +
                            (field == 1 ? "APIVersion" : "Kind")));
    } else if (Status s = tm.Skip(wire); !s.ok()) {
      return Err(std::move(s));
    }
  }
  if (kind.empty()) return Err(BadRequest("Object 'Kind' is missing in protobuf body"));
  const KindDesc* desc = FindKind(kind);
  if (desc == nullptr) {
    return Err(Status(StatusCode::kUnsupportedMediaType,
                      "the body of the request was in an unknown format - accepted media types "
                      "include: application/json, application/yaml"));
  }

  Document doc;
  Allocator& alloc = doc.GetAllocator();
  Value object;
  if (Status s = DecodeMessageBytes(*desc->message, raw, object, alloc, 0); !s.ok()) {
    return Err(std::move(s));
  }
  doc.SetObject();
  doc.AddMember("kind", StringValue(kind, alloc), alloc);
  if (!api_version.empty()) doc.AddMember("apiVersion", StringValue(api_version, alloc), alloc);
  for (auto& m : object.GetObject()) doc.AddMember(m.name, m.value, alloc);
  return doc;
}

}  // namespace kt::api
