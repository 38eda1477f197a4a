#include "api/schema.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

namespace kt::api {

namespace internal {
// The bytes of third_party/kubernetes-openapi/served-schema.json, written at build time by
// cmake/embed_file.cmake (CMakeLists.txt).
extern const unsigned char kServedSchemaJson[];
extern const std::size_t kServedSchemaJsonSize;
}  // namespace internal

namespace {

// resource.Quantity is `type: string` in the OpenAPI v2 document; only its name says it also
// takes numbers.
constexpr std::string_view kQuantityDefinition = "io.k8s.apimachinery.pkg.api.resource.Quantity";
constexpr std::string_view kRefPrefix = "#/definitions/";

std::string_view View(const rapidjson::Value& v) {
  return std::string_view(v.GetString(), v.GetStringLength());
}

// The string member `key` of `object`; empty when absent or not a string.
std::string_view StringMember(const rapidjson::Value& object, const char* key) {
  auto it = object.FindMember(key);
  return it != object.MemberEnd() && it->value.IsString() ? View(it->value) : std::string_view();
}

bool TrueMember(const rapidjson::Value& object, const char* key) {
  auto it = object.FindMember(key);
  return it != object.MemberEnd() && it->value.IsBool() && it->value.GetBool();
}

const rapidjson::Value* ObjectMember(const rapidjson::Value& object, const char* key) {
  auto it = object.FindMember(key);
  return it != object.MemberEnd() && it->value.IsObject() ? &it->value : nullptr;
}

bool GvkLess(const GroupVersionKind& a, const GroupVersionKind& b) {
  return std::tie(a.group, a.version, a.kind) < std::tie(b.group, b.version, b.kind);
}

// Strings of a schema, each stored once (descriptions repeat across kinds: apiVersion, kind,
// metadata), in chunks that never move, so views into them stay valid.
class StringArena {
 public:
  std::string_view Add(std::string_view s) {
    if (s.empty()) return {};
    if (auto it = interned_.find(s); it != interned_.end()) return *it;
    char* at = Allocate(s.size());
    std::copy(s.begin(), s.end(), at);
    const std::string_view stored(at, s.size());
    interned_.insert(stored);
    return stored;
  }

  // Drops the index of what is stored; the strings stay.
  void FinishLoading() { interned_ = {}; }
  size_t bytes() const { return bytes_ + blocks_.capacity() * sizeof(blocks_[0]); }

 private:
  static constexpr size_t kChunkSize = 16 * 1024;

  char* Allocate(size_t n) {
    if (n > kChunkSize / 4) {  // a long string gets a block of its own
      blocks_.push_back(std::make_unique<char[]>(n));
      bytes_ += n;
      return blocks_.back().get();
    }
    if (n > left_) {
      blocks_.push_back(std::make_unique<char[]>(kChunkSize));
      bytes_ += kChunkSize;
      next_ = blocks_.back().get();
      left_ = kChunkSize;
    }
    char* at = next_;
    next_ += n;
    left_ -= n;
    return at;
  }

  std::vector<std::unique_ptr<char[]>> blocks_;
  char* next_ = nullptr;  // free space in the current chunk
  size_t left_ = 0;
  size_t bytes_ = 0;
  std::unordered_set<std::string_view> interned_;
};

}  // namespace

struct Schema::Storage {
  struct KindIndex {
    GroupVersionKind gvk;
    uint16_t type;
  };

  StringArena strings;
  std::deque<ValueSchema> values;   // a deque: elements never move, pointers to them stay valid
  std::vector<SchemaField> fields;  // every type's, each type's a contiguous run
  std::vector<GroupVersionKind> gvks;
  std::vector<std::string_view> list_map_keys;
  std::vector<KindIndex> by_kind;  // sorted by GvkLess
};

// Builds a Schema from a parsed document in two passes: first every type's own facts (so that
// a `$ref` can be resolved to the referenced type's kind), then every type's fields.
class SchemaLoader {
 public:
  explicit SchemaLoader(Schema& schema) : schema_(schema), storage_(*schema.storage_) {}

  Status Load(const rapidjson::Document& doc) {
    if (!doc.IsObject()) return Fail("the document is not an object");
    if (const rapidjson::Value* info = ObjectMember(doc, "info")) {
      schema_.info_title_ = storage_.strings.Add(StringMember(*info, "title"));
      schema_.info_version_ = storage_.strings.Add(StringMember(*info, "version"));
    }
    const rapidjson::Value* definitions = ObjectMember(doc, "definitions");
    if (definitions == nullptr) return Fail("no \"definitions\" object");
    if (definitions->MemberCount() > UINT16_MAX) return Fail("too many definitions");

    for (const auto& m : definitions->GetObject()) {
      if (!m.value.IsObject()) {
        return Fail("definition " + std::string(View(m.name)) + " is not an object");
      }
      defs_.push_back({View(m.name), &m.value});
    }
    std::sort(defs_.begin(), defs_.end(),
              [](const Def& a, const Def& b) { return a.name < b.name; });
    for (size_t i = 1; i < defs_.size(); ++i) {
      if (defs_[i].name == defs_[i - 1].name) {
        return Fail("definition " + std::string(defs_[i].name) + " appears twice");
      }
    }
    Reserve();
    schema_.types_.resize(defs_.size());
    for (size_t i = 0; i < defs_.size(); ++i) KT_RETURN_IF_ERROR(LoadType(i));
    for (size_t i = 0; i < defs_.size(); ++i) KT_RETURN_IF_ERROR(LoadFields(i));
    std::sort(storage_.by_kind.begin(), storage_.by_kind.end(),
              [](const Schema::Storage::KindIndex& a, const Schema::Storage::KindIndex& b) {
                return GvkLess(a.gvk, b.gvk);
              });
    storage_.strings.FinishLoading();
    return Status::Ok();
  }

 private:
  struct Def {
    std::string_view name;
    const rapidjson::Value* schema;
  };

  static Status Fail(std::string message) { return BadRequest("schema: " + message); }

  // Sizes the vectors that spans point into, so that they never reallocate.
  void Reserve() {
    size_t fields = 0, gvks = 0, keys = 0;
    for (const Def& d : defs_) {
      if (const rapidjson::Value* props = ObjectMember(*d.schema, "properties")) {
        fields += props->MemberCount();
        for (const auto& p : props->GetObject()) {
          auto k = p.value.FindMember("x-kubernetes-list-map-keys");
          if (k != p.value.MemberEnd() && k->value.IsArray()) keys += k->value.Size();
        }
      }
      auto g = d.schema->FindMember("x-kubernetes-group-version-kind");
      if (g != d.schema->MemberEnd() && g->value.IsArray()) gvks += g->value.Size();
    }
    storage_.fields.reserve(fields);
    storage_.gvks.reserve(gvks);
    storage_.by_kind.reserve(gvks);
    storage_.list_map_keys.reserve(keys);
  }

  // The kind of a value described by `schema` itself (no `$ref`).
  static Result<ValueKind> KindOf(const rapidjson::Value& schema, std::string_view where) {
    const std::string_view type = StringMember(schema, "type");
    const std::string_view format = StringMember(schema, "format");
    if (TrueMember(schema, "x-kubernetes-int-or-string") || format == "int-or-string") {
      return ValueKind::kIntOrString;
    }
    const bool has_properties = ObjectMember(schema, "properties") != nullptr;
    if (type == "object" || (type.empty() && has_properties)) {
      if (has_properties) return ValueKind::kObject;
      if (ObjectMember(schema, "additionalProperties") != nullptr) return ValueKind::kMap;
      return ValueKind::kPreserveUnknown;  // FieldsV1, RawExtension: their own JSON decoders
    }
    if (type.empty()) return ValueKind::kPreserveUnknown;
    if (type == "array") return ValueKind::kArray;
    if (type == "string") return format == "date-time" ? ValueKind::kTime : ValueKind::kString;
    if (type == "integer") return ValueKind::kInteger;
    if (type == "number") return ValueKind::kNumber;
    if (type == "boolean") return ValueKind::kBoolean;
    return Err(Fail(std::string(where) + ": unknown type \"" + std::string(type) + "\""));
  }

  Status LoadType(size_t i) {
    const Def& d = defs_[i];
    const rapidjson::Value& s = *d.schema;
    SchemaType& t = schema_.types_[i];
    t.index = static_cast<uint16_t>(i);
    t.name = storage_.strings.Add(d.name);
    t.description = storage_.strings.Add(StringMember(s, "description"));
    t.preserve_unknown_fields = TrueMember(s, "x-kubernetes-preserve-unknown-fields");
    Result<MapType> map_type = ParseMapType(s, d.name);
    if (!map_type) return map_type.error();
    t.map_type = *map_type;

    Result<ValueKind> kind = KindOf(s, d.name);
    if (!kind) return kind.error();
    if (d.name == kQuantityDefinition) kind = ValueKind::kQuantity;
    if (*kind == ValueKind::kArray) return Fail(std::string(d.name) + ": a list type");
    storage_.values.push_back(
        ValueSchema{*kind, storage_.strings.Add(StringMember(s, "format")), &t, nullptr});
    t.value = &storage_.values.back();

    auto g = s.FindMember("x-kubernetes-group-version-kind");
    if (g != s.MemberEnd()) {
      if (!g->value.IsArray()) return Fail(std::string(d.name) + ": bad group-version-kind");
      const size_t first = storage_.gvks.size();
      for (const auto& e : g->value.GetArray()) {
        if (!e.IsObject()) return Fail(std::string(d.name) + ": bad group-version-kind");
        GroupVersionKind gvk{storage_.strings.Add(StringMember(e, "group")),
                             storage_.strings.Add(StringMember(e, "version")),
                             storage_.strings.Add(StringMember(e, "kind"))};
        storage_.gvks.push_back(gvk);
        storage_.by_kind.push_back({gvk, t.index});
      }
      t.group_version_kinds = std::span(storage_.gvks).subspan(first, g->value.Size());
    }
    return Status::Ok();
  }

  Status LoadFields(size_t i) {
    const Def& d = defs_[i];
    SchemaType& t = schema_.types_[i];
    if (t.value->kind == ValueKind::kMap) {
      // A definition that is itself a map (none upstream has one today).
      Result<const ValueSchema*> element =
          ValueOf(*ObjectMember(*d.schema, "additionalProperties"), d.name);
      if (!element) return element.error();
      // LoadType pushed one value per type, in type order, before anything else.
      ValueSchema& own = storage_.values[t.index];
      if (&own != t.value) return Fail(std::string(d.name) + ": internal: value order");
      own.element = *element;
    }
    const rapidjson::Value* props = ObjectMember(*d.schema, "properties");
    if (props == nullptr) return Status::Ok();
    const size_t first = storage_.fields.size();
    for (const auto& p : props->GetObject()) {
      const std::string where = std::string(d.name) + "." + std::string(View(p.name));
      if (!p.value.IsObject()) return Fail(where + ": not an object");
      SchemaField f;
      f.name = storage_.strings.Add(View(p.name));
      f.description = storage_.strings.Add(StringMember(p.value, "description"));
      Result<const ValueSchema*> value = ValueOf(p.value, where);
      if (!value) return value.error();
      f.value = *value;
      KT_RETURN_IF_ERROR(ParseFieldExtensions(p.value, where, &f));
      storage_.fields.push_back(f);
    }
    std::span<SchemaField> fields = std::span(storage_.fields).subspan(first, props->MemberCount());
    std::sort(fields.begin(), fields.end(),
              [](const SchemaField& a, const SchemaField& b) { return a.name < b.name; });
    auto required = d.schema->FindMember("required");
    if (required != d.schema->MemberEnd() && required->value.IsArray()) {
      for (const auto& r : required->value.GetArray()) {
        if (!r.IsString()) continue;
        auto it = std::lower_bound(
            fields.begin(), fields.end(), View(r),
            [](const SchemaField& f, std::string_view name) { return f.name < name; });
        if (it != fields.end() && it->name == View(r)) it->required = true;
      }
    }
    t.fields = fields;
    return Status::Ok();
  }

  static Result<MapType> ParseMapType(const rapidjson::Value& s, std::string_view where) {
    auto it = s.FindMember("x-kubernetes-map-type");
    if (it == s.MemberEnd()) return MapType::kUnspecified;
    const std::string_view v = it->value.IsString() ? View(it->value) : std::string_view("?");
    if (v == "atomic") return MapType::kAtomic;
    if (v == "granular") return MapType::kGranular;
    return Err(
        Fail(std::string(where) + ": unknown x-kubernetes-map-type \"" + std::string(v) + "\""));
  }

  Status ParseFieldExtensions(const rapidjson::Value& p, const std::string& where, SchemaField* f) {
    Result<MapType> map_type = ParseMapType(p, where);
    if (!map_type) return map_type.error();
    f->map_type = *map_type;
    if (auto it = p.FindMember("x-kubernetes-list-type"); it != p.MemberEnd()) {
      const std::string_view v = it->value.IsString() ? View(it->value) : std::string_view("?");
      if (v == "atomic") {
        f->list_type = ListType::kAtomic;
      } else if (v == "set") {
        f->list_type = ListType::kSet;
      } else if (v == "map") {
        f->list_type = ListType::kMap;
      } else {
        return Fail(where + ": unknown x-kubernetes-list-type \"" + std::string(v) + "\"");
      }
    }
    if (auto it = p.FindMember("x-kubernetes-list-map-keys");
        it != p.MemberEnd() && it->value.IsArray()) {
      const size_t first = storage_.list_map_keys.size();
      for (const auto& k : it->value.GetArray()) {
        if (!k.IsString()) return Fail(where + ": bad x-kubernetes-list-map-keys");
        storage_.list_map_keys.push_back(storage_.strings.Add(View(k)));
      }
      f->list_map_keys = std::span(storage_.list_map_keys).subspan(first, it->value.Size());
    }
    f->patch_merge_key = storage_.strings.Add(StringMember(p, "x-kubernetes-patch-merge-key"));
    std::string_view strategy = StringMember(p, "x-kubernetes-patch-strategy");
    while (!strategy.empty()) {
      const size_t comma = std::min(strategy.find(','), strategy.size());
      const std::string_view token = strategy.substr(0, comma);
      strategy.remove_prefix(std::min(comma + 1, strategy.size()));
      if (token == "merge") {
        f->patch_merge = true;
      } else if (token == "retainKeys") {
        f->patch_retain_keys = true;
      } else if (token == "replace") {
        f->patch_replace = true;
      } else {
        return Fail(where + ": unknown x-kubernetes-patch-strategy \"" + std::string(token) + "\"");
      }
    }
    return Status::Ok();
  }

  // The value `schema` describes (a property, items, additionalProperties), shared with every
  // equal one.
  Result<const ValueSchema*> ValueOf(const rapidjson::Value& schema, std::string_view where) {
    if (!schema.IsObject()) return Err(Fail(std::string(where) + ": not a schema object"));
    const std::string_view ref = StringMember(schema, "$ref");
    if (!ref.empty()) {
      TypeRef target =
          ref.starts_with(kRefPrefix) ? schema_.FindType(ref.substr(kRefPrefix.size())) : nullptr;
      if (target == nullptr) {
        return Err(Fail(std::string(where) + ": dangling $ref " + std::string(ref)));
      }
      return target->value;
    }
    Result<ValueKind> kind = KindOf(schema, where);
    if (!kind) return Err(kind.error());
    if (*kind == ValueKind::kObject) {
      return Err(Fail(std::string(where) + ": a struct defined inline (not by $ref)"));
    }
    ValueSchema v{*kind, storage_.strings.Add(StringMember(schema, "format")), nullptr, nullptr};
    if (*kind == ValueKind::kArray || *kind == ValueKind::kMap) {
      const char* key = *kind == ValueKind::kArray ? "items" : "additionalProperties";
      const rapidjson::Value* element = ObjectMember(schema, key);
      if (element == nullptr) {
        return Err(Fail(std::string(where) + ": no \"" + key + "\" object"));
      }
      Result<const ValueSchema*> e = ValueOf(*element, where);
      if (!e) return e;
      v.element = *e;
    }
    auto key = std::make_tuple(v.kind, v.format, v.element);
    auto [it, inserted] = interned_.try_emplace(key, nullptr);
    if (inserted) {
      storage_.values.push_back(v);
      it->second = &storage_.values.back();
    }
    return it->second;
  }

  Schema& schema_;
  Schema::Storage& storage_;
  std::vector<Def> defs_;
  std::map<std::tuple<ValueKind, std::string_view, const ValueSchema*>, const ValueSchema*>
      interned_;
};

const SchemaField* SchemaType::FindField(std::string_view name) const {
  auto it = std::lower_bound(fields.begin(), fields.end(), name,
                             [](const SchemaField& f, std::string_view n) { return f.name < n; });
  return it != fields.end() && it->name == name ? &*it : nullptr;
}

Schema::Schema() : storage_(std::make_unique<Storage>()) {}
Schema::~Schema() = default;

Result<std::unique_ptr<const Schema>> Schema::Parse(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(json.data(), json.size());
  if (doc.HasParseError()) {
    return Err(BadRequest("schema: invalid JSON at offset " + std::to_string(doc.GetErrorOffset()) +
                          ": " + rapidjson::GetParseError_En(doc.GetParseError())));
  }
  std::unique_ptr<Schema> schema(new Schema());
  SchemaLoader loader(*schema);
  if (Status loaded = loader.Load(doc); !loaded.ok()) return Err(loaded);
  return std::unique_ptr<const Schema>(std::move(schema));
}

TypeRef Schema::FindType(std::string_view name) const {
  auto it = std::lower_bound(types_.begin(), types_.end(), name,
                             [](const SchemaType& t, std::string_view n) { return t.name < n; });
  return it != types_.end() && it->name == name ? &*it : nullptr;
}

TypeRef Schema::FindKind(std::string_view group, std::string_view version,
                         std::string_view kind) const {
  const GroupVersionKind key{group, version, kind};
  const auto& index = storage_->by_kind;
  auto it = std::lower_bound(
      index.begin(), index.end(), key,
      [](const Storage::KindIndex& e, const GroupVersionKind& k) { return GvkLess(e.gvk, k); });
  if (it == index.end() || GvkLess(key, it->gvk)) return nullptr;
  return &types_[it->type];
}

TypeRef Schema::FindApiVersionKind(std::string_view api_version, std::string_view kind) const {
  const size_t slash = api_version.find('/');
  if (slash == std::string_view::npos) return FindKind("", api_version, kind);
  return FindKind(api_version.substr(0, slash), api_version.substr(slash + 1), kind);
}

size_t Schema::MemoryBytes() const {
  const Storage& s = *storage_;
  // libstdc++ deques hold their elements in 512-byte blocks.
  constexpr size_t kPerBlock = 512 / sizeof(ValueSchema);
  const size_t value_bytes = (s.values.size() / kPerBlock + 1) * 512;
  return sizeof(Schema) + sizeof(Storage) + types_.capacity() * sizeof(SchemaType) +
         s.fields.capacity() * sizeof(SchemaField) + value_bytes +
         s.gvks.capacity() * sizeof(GroupVersionKind) +
         s.list_map_keys.capacity() * sizeof(std::string_view) +
         s.by_kind.capacity() * sizeof(Storage::KindIndex) + s.strings.bytes();
}

std::string_view ServedSchemaDocument() {
  return std::string_view(reinterpret_cast<const char*>(internal::kServedSchemaJson),
                          internal::kServedSchemaJsonSize);
}

const Schema& ServedSchema() {
  // Never destroyed: threads may still use it while the process exits.
  static const Schema* const schema = [] {
    Result<std::unique_ptr<const Schema>> parsed = Schema::Parse(ServedSchemaDocument());
    if (!parsed) {
      // The embedded file is checked by the tests; a broken one is a build error.
      std::fprintf(stderr, "embedded served-schema.json: %s\n", parsed.error().message().c_str());
      std::abort();
    }
    return parsed->release();
  }();
  return *schema;
}

}  // namespace kt::api
