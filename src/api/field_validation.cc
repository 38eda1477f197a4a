// Field validation (schema.h): PruneUnknownFields walks a decoded body along the schema the way
// sigs.k8s.io/json's strict decoder walks it into Go structs (internal/golang/encoding/json
// decode.go `object`, `array`; kubernetes_patch.go), so that the same problems come out in the
// same order and the same duplicate wins.
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/schema.h"
#include "core/validation.h"

namespace kt::api {

namespace {

// sigs.k8s.io/json saveStrictError: "prevent excessive numbers of accumulated errors".
constexpr size_t kMaxProblems = 100;

std::string_view Name(const rapidjson::Value& name) {
  return std::string_view(name.GetString(), name.GetStringLength());
}

// Whether values of `kind` can hold members to check.
bool Nested(ValueKind kind) {
  return kind == ValueKind::kObject || kind == ValueKind::kArray || kind == ValueKind::kMap;
}

// Which fields of a struct have been seen in one JSON object (upstream keeps a bitset by field
// index too).
class SeenFields {
 public:
  explicit SeenFields(size_t count) {
    if (count > kInline * 64) more_.resize((count + 63) / 64);
  }
  // Marks field `i` seen; true if it was already.
  bool TestAndSet(size_t i) {
    uint64_t& word = more_.empty() ? inline_[i / 64] : more_[i / 64];
    const uint64_t bit = uint64_t{1} << (i % 64);
    const bool seen = (word & bit) != 0;
    word |= bit;
    return seen;
  }

 private:
  static constexpr size_t kInline = 2;  // 128 fields; PodSpec has 44
  std::array<uint64_t, kInline> inline_{};
  std::vector<uint64_t> more_;
};

class Pruner {
 public:
  Pruner(rapidjson::Document::AllocatorType& alloc, FieldProblems* problems)
      : alloc_(alloc), problems_(problems) {}

  // One step of the path from the root to a value: a name, or a list index. The steps live on
  // the C++ stack, each pointing to its parent, so walking costs no allocation.
  struct Step {
    const Step* parent;
    std::string_view name;
    int64_t index;  // >= 0: a list index, "[i]"
  };

  // Any JSON, as sigs.k8s.io/json decodes it into an interface{}: only duplicates to find.
  void Untyped(const rapidjson::Value& value, const Step* at) {
    if (value.IsArray()) {
      for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
        const Step step{at, {}, i};
        Untyped(value[i], &step);
      }
      return;
    }
    if (!value.IsObject()) return;
    const bool duplicates = HasDuplicateNames(value);
    for (auto m = value.MemberBegin(); m != value.MemberEnd(); ++m) {
      const std::string_view name = Name(m->name);
      if (duplicates && std::any_of(value.MemberBegin(), m, [&](const auto& earlier) {
            return Name(earlier.name) == name;
          })) {
        Record("duplicate field", name, at);
      }
      const Step step{at, name, -1};
      Untyped(m->value, &step);
    }
  }

  void Struct(rapidjson::Value& object, const SchemaType& type, const Step* at) {
    SeenFields seen(type.fields.size());
    for (rapidjson::SizeType i = 0; i < object.MemberCount();) {
      auto m = object.MemberBegin() + i;
      const std::string_view name = Name(m->name);
      const SchemaField* field = type.FindField(name);
      if (field == nullptr) {
        if (type.preserve_unknown_fields) {
          i = KeepUnknown(object, i, at);
        } else {
          Record("unknown field", name, at);
          object.EraseMember(m);  // keeps the order of the rest
        }
        continue;
      }
      const bool duplicate = seen.TestAndSet(static_cast<size_t>(field - type.fields.data()));
      if (duplicate) Record("duplicate field", name, at);
      if (Nested(field->value->kind)) {
        const Step step{at, name, -1};
        Value(m->value, *field->value, &step);
      }
      if (!duplicate) {
        ++i;
        continue;
      }
      auto first = std::find_if(object.MemberBegin(), m,
                                [&](const auto& earlier) { return Name(earlier.name) == name; });
      Overlay(first->value, m->value, *field->value);
      object.EraseMember(m);
    }
  }

 private:
  void Value(rapidjson::Value& value, const ValueSchema& schema, const Step* at) {
    switch (schema.kind) {
      case ValueKind::kObject:
        if (value.IsObject()) Struct(value, *schema.type, at);
        break;
      case ValueKind::kArray:
        if (value.IsArray() && Nested(schema.element->kind)) {
          for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
            const Step step{at, {}, i};
            Value(value[i], *schema.element, &step);
          }
        }
        break;
      case ValueKind::kMap:
        if (value.IsObject()) Map(value, *schema.element, at);
        break;
      default:
        break;
    }
  }

  // A map: any key is fine; a key given twice is a duplicate, and the later value wins whole
  // (upstream zeroes the map element before decoding into it).
  void Map(rapidjson::Value& object, const ValueSchema& element, const Step* at) {
    const bool nested = Nested(element.kind);
    if (!HasDuplicateNames(object)) {
      if (!nested) return;
      for (auto& m : object.GetObject()) {
        const Step step{at, Name(m.name), -1};
        Value(m.value, element, &step);
      }
      return;
    }
    for (rapidjson::SizeType i = 0; i < object.MemberCount();) {
      auto m = object.MemberBegin() + i;
      const std::string_view name = Name(m->name);
      auto first = std::find_if(object.MemberBegin(), m,
                                [&](const auto& earlier) { return Name(earlier.name) == name; });
      if (first != m) Record("duplicate field", name, at);
      if (nested) {
        const Step step{at, name, -1};
        Value(m->value, element, &step);
      }
      if (first == m) {
        ++i;
        continue;
      }
      first->value = m->value;  // moves
      object.EraseMember(m);
    }
  }

  // An unknown member of a struct with x-kubernetes-preserve-unknown-fields: kept as it is, a
  // later one of the same name replacing it. Returns the index of the next member.
  rapidjson::SizeType KeepUnknown(rapidjson::Value& object, rapidjson::SizeType i, const Step* at) {
    auto m = object.MemberBegin() + i;
    const std::string_view name = Name(m->name);
    auto first = std::find_if(object.MemberBegin(), m,
                              [&](const auto& earlier) { return Name(earlier.name) == name; });
    if (first == m) return i + 1;
    Record("duplicate field", name, at);
    first->value = m->value;
    object.EraseMember(m);
    return i;
  }

  static bool HasDuplicateNames(const rapidjson::Value& object) {
    const rapidjson::SizeType n = object.MemberCount();
    if (n < 2) return false;
    if (n <= 16) {
      for (auto a = object.MemberBegin(); a != object.MemberEnd(); ++a) {
        for (auto b = a + 1; b != object.MemberEnd(); ++b) {
          if (Name(a->name) == Name(b->name)) return true;
        }
      }
      return false;
    }
    std::vector<std::string_view> names;
    names.reserve(n);
    for (const auto& m : object.GetObject()) names.push_back(Name(m.name));
    std::sort(names.begin(), names.end());
    return std::adjacent_find(names.begin(), names.end()) != names.end();
  }

  // Decodes `later` over `earlier` as Go decodes a field given twice into the same value:
  // structs merge member by member, maps gain or replace keys (each value whole), lists
  // overwrite item by item and take the later length, anything else is replaced. Both were
  // already pruned.
  void Overlay(rapidjson::Value& earlier, rapidjson::Value& later, const ValueSchema& schema) {
    switch (schema.kind) {
      case ValueKind::kObject:
      case ValueKind::kMap:
        if (earlier.IsObject() && later.IsObject()) {
          const SchemaType* type = schema.kind == ValueKind::kObject ? schema.type : nullptr;
          for (auto& m : later.GetObject()) {
            auto target = earlier.FindMember(m.name);
            const SchemaField* field = type != nullptr ? type->FindField(Name(m.name)) : nullptr;
            if (target == earlier.MemberEnd()) {
              earlier.AddMember(m.name, m.value, alloc_);
            } else if (field != nullptr) {
              Overlay(target->value, m.value, *field->value);  // a struct's field: merged
            } else {
              target->value = m.value;  // a map's value: replaced whole
            }
          }
          return;
        }
        break;
      case ValueKind::kArray:
        if (earlier.IsArray() && later.IsArray()) {
          const rapidjson::SizeType n = later.Size();
          for (rapidjson::SizeType i = 0; i < n; ++i) {
            if (i < earlier.Size()) {
              Overlay(earlier[i], later[i], *schema.element);
            } else {
              earlier.PushBack(later[i], alloc_);
            }
          }
          while (earlier.Size() > n) earlier.PopBack();
          return;
        }
        break;
      default:
        break;
    }
    earlier = later;  // moves
  }

  // Upstream newFieldError: the path so far, ".", the key; then dedup and the cap.
  void Record(std::string_view what, std::string_view key, const Step* at) {
    if (problems_ == nullptr || problems_->messages.size() >= kMaxProblems) return;
    std::vector<const Step*> steps;
    for (const Step* s = at; s != nullptr; s = s->parent) steps.push_back(s);
    std::string path;
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      const Step& s = **it;
      if (s.index >= 0) {
        path += '[';
        path += std::to_string(s.index);
        path += ']';
      } else {
        if (!path.empty()) path += '.';
        path += s.name;
      }
    }
    if (!path.empty()) path += '.';
    path += key;
    std::string message(what);
    message += ' ';
    message += GoQuote(path);
    auto& messages = problems_->messages;
    if (std::find(messages.begin(), messages.end(), message) == messages.end()) {
      messages.push_back(std::move(message));
    }
  }

  rapidjson::Document::AllocatorType& alloc_;
  FieldProblems* problems_;
};

}  // namespace

Result<FieldValidation> ParseFieldValidation(std::string_view query_value,
                                             std::string_view options_kind) {
  // metav1.FieldValidation* and upstream's allowedFieldValidationValues (sorted, as
  // sets.List() returns them).
  if (query_value.empty() || query_value == "Warn") return FieldValidation::kWarn;
  if (query_value == "Strict") return FieldValidation::kStrict;
  if (query_value == "Ignore") return FieldValidation::kIgnore;
  static constexpr std::string_view kAllowed[] = {"", "Ignore", "Strict", "Warn"};
  const FieldError error =
      FieldError::NotSupported("fieldValidation", GoQuote(query_value), kAllowed);
  return Err(InvalidObjectStatus(std::string(options_kind) + ".meta.k8s.io", "",
                                 std::span<const FieldError>(&error, 1)));
}

void PruneUnknownFields(rapidjson::Value& object, TypeRef type,
                        rapidjson::Document::AllocatorType& alloc, FieldProblems* problems) {
  if (type == nullptr || !object.IsObject()) return;
  Pruner(alloc, problems).Struct(object, *type, nullptr);
}

void FindDuplicateFields(const rapidjson::Value& value, FieldProblems* problems) {
  rapidjson::Document::AllocatorType unused;  // nothing is merged
  Pruner(unused, problems).Untyped(value, nullptr);
}

std::string StrictDecodingError(const FieldProblems& problems) {
  std::string out = "strict decoding error: ";
  for (size_t i = 0; i < problems.messages.size(); ++i) {
    if (i != 0) out += ", ";
    out += problems.messages[i];
  }
  return out;
}

std::string CannotBeHandledAs(std::string_view kind, std::string_view version,
                              std::string_view into_kind, std::string_view error) {
  std::string out(kind);
  out += " in version ";
  out += GoQuote(version);
  out += " cannot be handled as a ";
  out += into_kind;
  out += ": ";
  out += error;
  return out;
}

}  // namespace kt::api
