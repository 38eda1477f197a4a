#include "server/internal/openapi_v2_proto.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include <rapidjson/writer.h>

#include "api/json_writer.h"

namespace kt::server::internal {

namespace {

using Value = rapidjson::Value;

std::string_view View(const Value& v) {
  return std::string_view(v.GetString(), v.GetStringLength());
}

// One protobuf message being written. Scalars at their proto3 default are left out, as Go's
// proto.Marshal leaves them out; a sub-message is written whenever it is set, empty or not.
class Message {
 public:
  void String(int field, std::string_view s) {
    if (s.empty()) return;
    Tag(field, 2);
    Varint(s.size());
    out_.append(s);
  }
  void Bool(int field, bool b) {
    if (!b) return;
    Tag(field, 0);
    Varint(1);
  }
  // A bool of a oneof: written even when false.
  void OneofBool(int field, bool b) {
    Tag(field, 0);
    Varint(b ? 1 : 0);
  }
  void Int64(int field, int64_t v) {
    if (v == 0) return;
    Tag(field, 0);
    Varint(static_cast<uint64_t>(v));
  }
  void Double(int field, double d) {
    if (d == 0) return;
    Tag(field, 1);
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
  }
  void Sub(int field, const Message& m) {
    Tag(field, 2);
    Varint(m.out_.size());
    out_.append(m.out_);
  }
  std::string Take() { return std::move(out_); }

 private:
  void Tag(int field, int wire) { Varint((static_cast<uint64_t>(field) << 3) | wire); }
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7F) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  std::string out_;
};

// A scalar member of a JSON object and the protobuf field it is written to.
enum class Scalar : uint8_t { kString, kBool, kInt64, kDouble, kStrings /* repeated string */ };
struct ScalarField {
  std::string_view key;
  Scalar type;
  int number;
};
using enum Scalar;

// The scalar fields of OpenAPIv2.proto's messages.
constexpr ScalarField kDocumentFields[] = {{"swagger", kString, 1},   {"host", kString, 3},
                                           {"basePath", kString, 4},  {"schemes", kStrings, 5},
                                           {"consumes", kStrings, 6}, {"produces", kStrings, 7}};
constexpr ScalarField kPathItemFields[] = {{"$ref", kString, 1}};
constexpr ScalarField kOperationFields[] = {
    {"tags", kStrings, 1},       {"summary", kString, 2},   {"description", kString, 3},
    {"operationId", kString, 5}, {"produces", kStrings, 6}, {"consumes", kStrings, 7},
    {"schemes", kStrings, 10},   {"deprecated", kBool, 11}};
constexpr ScalarField kResponseFields[] = {{"description", kString, 1}};
constexpr ScalarField kInfoFields[] = {
    {"title", kString, 1}, {"version", kString, 2}, {"description", kString, 3}};
constexpr ScalarField kJsonReferenceFields[] = {{"$ref", kString, 1}, {"description", kString, 2}};
constexpr ScalarField kBodyParameterFields[] = {
    {"description", kString, 1}, {"name", kString, 2}, {"in", kString, 3}, {"required", kBool, 4}};
// QueryParameterSubSchema and FormDataParameterSubSchema.
constexpr ScalarField kQueryParameterFields[] = {
    {"required", kBool, 1},        {"in", kString, 2},
    {"description", kString, 3},   {"name", kString, 4},
    {"allowEmptyValue", kBool, 5}, {"type", kString, 6},
    {"format", kString, 7},        {"collectionFormat", kString, 9},
    {"maximum", kDouble, 11},      {"exclusiveMaximum", kBool, 12},
    {"minimum", kDouble, 13},      {"exclusiveMinimum", kBool, 14},
    {"maxLength", kInt64, 15},     {"minLength", kInt64, 16},
    {"pattern", kString, 17},      {"maxItems", kInt64, 18},
    {"minItems", kInt64, 19},      {"uniqueItems", kBool, 20},
    {"multipleOf", kDouble, 22}};
// PathParameterSubSchema and HeaderParameterSubSchema: no allowEmptyValue.
constexpr ScalarField kPathParameterFields[] = {{"required", kBool, 1},
                                                {"in", kString, 2},
                                                {"description", kString, 3},
                                                {"name", kString, 4},
                                                {"type", kString, 5},
                                                {"format", kString, 6},
                                                {"collectionFormat", kString, 8},
                                                {"maximum", kDouble, 10},
                                                {"exclusiveMaximum", kBool, 11},
                                                {"minimum", kDouble, 12},
                                                {"exclusiveMinimum", kBool, 13},
                                                {"maxLength", kInt64, 14},
                                                {"minLength", kInt64, 15},
                                                {"pattern", kString, 16},
                                                {"maxItems", kInt64, 17},
                                                {"minItems", kInt64, 18},
                                                {"uniqueItems", kBool, 19},
                                                {"multipleOf", kDouble, 21}};
constexpr ScalarField kSchemaFields[] = {
    {"$ref", kString, 1},           {"format", kString, 2},        {"title", kString, 3},
    {"description", kString, 4},    {"multipleOf", kDouble, 6},    {"maximum", kDouble, 7},
    {"exclusiveMaximum", kBool, 8}, {"minimum", kDouble, 9},       {"exclusiveMinimum", kBool, 10},
    {"maxLength", kInt64, 11},      {"minLength", kInt64, 12},     {"pattern", kString, 13},
    {"maxItems", kInt64, 14},       {"minItems", kInt64, 15},      {"uniqueItems", kBool, 16},
    {"maxProperties", kInt64, 17},  {"minProperties", kInt64, 18}, {"required", kStrings, 19},
    {"discriminator", kString, 26}, {"readOnly", kBool, 27}};
constexpr ScalarField kApiKeySecurityFields[] = {
    {"type", kString, 1}, {"name", kString, 2}, {"in", kString, 3}, {"description", kString, 4}};
constexpr ScalarField kBasicAuthenticationSecurityFields[] = {{"type", kString, 1},
                                                              {"description", kString, 2}};

// A NonBodyParameter sub-schema: the `in` it is for, its field in the oneof, its scalar fields
// and the number of its vendor_extension.
struct ParameterKind {
  std::string_view in;
  int oneof;
  std::span<const ScalarField> fields;
  int vendor_extension;
};
constexpr ParameterKind kParameterKinds[] = {
    {"header", 1, kPathParameterFields, 22},
    {"formData", 2, kQueryParameterFields, 23},
    {"query", 3, kQueryParameterFields, 23},
    {"path", 4, kPathParameterFields, 22},
};

class Encoder {
 public:
  Status Document(const Value& doc, Message& out) {
    KT_RETURN_IF_ERROR(
        Scalars(doc, kDocumentFields,
                {"info", "paths", "definitions", "parameters", "security", "securityDefinitions"},
                "document", out));
    if (const Value* info = Member(doc, "info")) {
      Message m;
      KT_RETURN_IF_ERROR(Info(*info, m));
      out.Sub(2, m);
    }
    if (const Value* paths = Member(doc, "paths")) {
      Message m;
      KT_RETURN_IF_ERROR(Paths(*paths, m));
      out.Sub(8, m);
    }
    if (const Value* definitions = Member(doc, "definitions")) {
      Message m;
      KT_RETURN_IF_ERROR(NamedSchemas(*definitions, "definitions", 1, m));
      out.Sub(9, m);
    }
    if (const Value* parameters = Member(doc, "parameters")) {
      // ParameterDefinitions: NamedParameter additional_properties = 1.
      Message defs;
      for (const auto& p : parameters->GetObject()) {
        Message parameter, named;
        KT_RETURN_IF_ERROR(Parameter(p.value, "parameters." + Name(p.name), parameter));
        named.String(1, View(p.name));
        named.Sub(2, parameter);
        defs.Sub(1, named);
      }
      out.Sub(10, defs);
    }
    if (const Value* security = Member(doc, "security"); security && security->IsArray()) {
      for (const auto& requirement : security->GetArray()) {
        Message m;
        KT_RETURN_IF_ERROR(SecurityRequirement(requirement, m));
        out.Sub(12, m);
      }
    }
    if (const Value* definitions = Member(doc, "securityDefinitions")) {
      Message m;
      KT_RETURN_IF_ERROR(SecurityDefinitions(*definitions, m));
      out.Sub(13, m);
    }
    return VendorExtensions(doc, 16, out);
  }

 private:
  static Status Fail(const std::string& where, const std::string& what) {
    return BadRequest("openapi v2 protobuf: " + where + " " + what);
  }
  static std::string Name(const Value& name) { return std::string(View(name)); }

  static const Value* Member(const Value& object, std::string_view key) {
    auto it = object.FindMember(
        rapidjson::StringRef(key.data(), static_cast<rapidjson::SizeType>(key.size())));
    return it == object.MemberEnd() ? nullptr : &it->value;
  }
  static std::string_view StringMember(const Value& object, std::string_view key) {
    const Value* v = Member(object, key);
    return v != nullptr && v->IsString() ? View(*v) : std::string_view();
  }

  // Any{yaml = 2}: the value's text (JSON, which YAML parsers read as the same value).
  static Message Any(const Value& value) {
    std::string json;
    {
      api::JsonWriter w(&json);
      value.Accept(w);
    }
    Message m;
    m.String(2, json);
    return m;
  }

  // Every `x-` member of `object` as NamedAny{name = 1, value = 2} in field `field`.
  static Status VendorExtensions(const Value& object, int field, Message& out) {
    for (const auto& m : object.GetObject()) {
      if (!View(m.name).starts_with("x-")) continue;
      Message named;
      named.String(1, View(m.name));
      named.Sub(2, Any(m.value));
      out.Sub(field, named);
    }
    return Status::Ok();
  }

  Status Info(const Value& info, Message& out) {
    KT_RETURN_IF_ERROR(Scalars(info, kInfoFields, {}, "info", out));
    return VendorExtensions(info, 7, out);
  }

  Status Paths(const Value& paths, Message& out) {
    if (!paths.IsObject()) return Fail("paths", "is not an object");
    KT_RETURN_IF_ERROR(VendorExtensions(paths, 1, out));
    for (const auto& p : paths.GetObject()) {
      if (View(p.name).starts_with("x-")) continue;
      Message item, named;
      KT_RETURN_IF_ERROR(PathItem(p.value, Name(p.name), item));
      named.String(1, View(p.name));
      named.Sub(2, item);
      out.Sub(2, named);
    }
    return Status::Ok();
  }

  Status PathItem(const Value& item, const std::string& where, Message& out) {
    static constexpr std::string_view kMethods[] = {"get",     "put",  "post", "delete",
                                                    "options", "head", "patch"};
    KT_RETURN_IF_ERROR(Scalars(
        item, kPathItemFields,
        {"get", "put", "post", "delete", "options", "head", "patch", "parameters"}, where, out));
    for (int i = 0; i < 7; ++i) {
      if (const Value* op = Member(item, kMethods[i])) {
        Message m;
        KT_RETURN_IF_ERROR(Operation(*op, where + " " + std::string(kMethods[i]), m));
        out.Sub(2 + i, m);
      }
    }
    KT_RETURN_IF_ERROR(ParametersItems(item, where, 9, out));
    return VendorExtensions(item, 10, out);
  }

  Status Operation(const Value& op, const std::string& where, Message& out) {
    KT_RETURN_IF_ERROR(Scalars(op, kOperationFields, {"parameters", "responses"}, where, out));
    KT_RETURN_IF_ERROR(ParametersItems(op, where, 8, out));
    if (const Value* responses = Member(op, "responses")) {
      Message m;
      KT_RETURN_IF_ERROR(Responses(*responses, where + " responses", m));
      out.Sub(9, m);
    }
    return VendorExtensions(op, 13, out);
  }

  // ParametersItem: Parameter parameter = 1 | JsonReference json_reference = 2.
  Status ParametersItems(const Value& owner, const std::string& where, int field, Message& out) {
    const Value* parameters = Member(owner, "parameters");
    if (parameters == nullptr) return Status::Ok();
    if (!parameters->IsArray()) return Fail(where, "parameters is not an array");
    for (const auto& p : parameters->GetArray()) {
      Message item;
      if (p.IsObject() && Member(p, "$ref") != nullptr) {
        Message ref;
        KT_RETURN_IF_ERROR(JsonReference(p, where, ref));
        item.Sub(2, ref);
      } else {
        Message parameter;
        KT_RETURN_IF_ERROR(Parameter(p, where + " parameter", parameter));
        item.Sub(1, parameter);
      }
      out.Sub(field, item);
    }
    return Status::Ok();
  }

  static Status JsonReference(const Value& ref, const std::string& where, Message& out) {
    return Scalars(ref, kJsonReferenceFields, {}, where, out);
  }

  // Parameter: BodyParameter body_parameter = 1 | NonBodyParameter non_body_parameter = 2, the
  // latter the sub-schema of its `in`: header = 1, formData = 2, query = 3, path = 4.
  Status Parameter(const Value& p, const std::string& where, Message& out) {
    if (!p.IsObject()) return Fail(where, "is not an object");
    const std::string_view in = StringMember(p, "in");
    if (in == "body") {
      Message body;
      KT_RETURN_IF_ERROR(Scalars(p, kBodyParameterFields, {"schema"}, where, body));
      if (const Value* schema = Member(p, "schema")) {
        Message m;
        KT_RETURN_IF_ERROR(Schema(*schema, where + " schema", m));
        body.Sub(5, m);
      }
      KT_RETURN_IF_ERROR(VendorExtensions(p, 6, body));
      out.Sub(1, body);
      return Status::Ok();
    }
    for (const ParameterKind& kind : kParameterKinds) {
      if (kind.in != in) continue;
      Message sub, non_body;
      KT_RETURN_IF_ERROR(Scalars(p, kind.fields, {}, where, sub));
      KT_RETURN_IF_ERROR(VendorExtensions(p, kind.vendor_extension, sub));
      non_body.Sub(kind.oneof, sub);
      out.Sub(2, non_body);
      return Status::Ok();
    }
    return Fail(where, "has `in` " + std::string(in) + ", no parameter kind");
  }

  // Writes the members of `object` that `fields` names to their fields, in the table's order
  // (their JSON types as gnostic takes them). Every other member must be in `messages` (the
  // caller writes those) or an `x-` extension.
  static Status Scalars(const Value& object, std::span<const ScalarField> fields,
                        std::initializer_list<std::string_view> messages, const std::string& where,
                        Message& out) {
    if (!object.IsObject()) return Fail(where, "is not an object");
    for (const auto& m : object.GetObject()) {
      const std::string_view key = View(m.name);
      const bool known = key.starts_with("x-") ||
                         std::find(messages.begin(), messages.end(), key) != messages.end() ||
                         std::any_of(fields.begin(), fields.end(),
                                     [&](const ScalarField& f) { return f.key == key; });
      if (!known) return Fail(where, "has unsupported member " + std::string(key));
    }
    for (const ScalarField& field : fields) {
      const Value* v = Member(object, field.key);
      if (v == nullptr) continue;
      bool ok = true;
      switch (field.type) {
        case kString:
          ok = v->IsString();
          if (ok) out.String(field.number, View(*v));
          break;
        case kBool:
          ok = v->IsBool();
          if (ok) out.Bool(field.number, v->GetBool());
          break;
        case kInt64:
          ok = v->IsInt64();
          if (ok) out.Int64(field.number, v->GetInt64());
          break;
        case kDouble:
          ok = v->IsNumber();
          if (ok) out.Double(field.number, v->GetDouble());
          break;
        case kStrings:
          ok = v->IsArray();
          if (!ok) break;
          for (const auto& item : v->GetArray()) {
            ok = ok && item.IsString();
            if (ok) out.String(field.number, View(item));
          }
          break;
      }
      if (!ok) return Fail(where + "." + std::string(field.key), "has the wrong JSON type");
    }
    return Status::Ok();
  }

  // Responses: NamedResponseValue response_code = 1, each ResponseValue{Response response = 1 |
  // JsonReference json_reference = 2}; vendor_extension = 2.
  Status Responses(const Value& responses, const std::string& where, Message& out) {
    if (!responses.IsObject()) return Fail(where, "is not an object");
    for (const auto& r : responses.GetObject()) {
      if (View(r.name).starts_with("x-")) continue;
      const std::string at = where + " " + Name(r.name);
      Message value;
      if (r.value.IsObject() && Member(r.value, "$ref") != nullptr) {
        Message ref;
        KT_RETURN_IF_ERROR(JsonReference(r.value, at, ref));
        value.Sub(2, ref);
      } else {
        Message response;
        KT_RETURN_IF_ERROR(Scalars(r.value, kResponseFields, {"schema"}, at, response));
        if (const Value* schema = Member(r.value, "schema")) {
          // SchemaItem: Schema schema = 1 (FileSchema, for `type: file`, is never served).
          Message m, item;
          KT_RETURN_IF_ERROR(Schema(*schema, at + " schema", m));
          item.Sub(1, m);
          response.Sub(2, item);
        }
        KT_RETURN_IF_ERROR(VendorExtensions(r.value, 5, response));
        value.Sub(1, response);
      }
      Message named;
      named.String(1, View(r.name));
      named.Sub(2, value);
      out.Sub(1, named);
    }
    return VendorExtensions(responses, 2, out);
  }

  // NamedSchema{name = 1, value = 2} per member, in field `field`.
  Status NamedSchemas(const Value& schemas, const std::string& where, int field, Message& out) {
    if (!schemas.IsObject()) return Fail(where, "is not an object");
    for (const auto& s : schemas.GetObject()) {
      Message schema, named;
      KT_RETURN_IF_ERROR(Schema(s.value, where + "." + Name(s.name), schema));
      named.String(1, View(s.name));
      named.Sub(2, schema);
      out.Sub(field, named);
    }
    return Status::Ok();
  }

  Status Schema(const Value& s, const std::string& where, Message& out) {
    KT_RETURN_IF_ERROR(Scalars(s, kSchemaFields,
                               {"default", "required", "enum", "additionalProperties", "type",
                                "items", "allOf", "properties", "example"},
                               where, out));
    if (const Value* d = Member(s, "default")) out.Sub(5, Any(*d));
    if (const Value* e = Member(s, "enum"); e && e->IsArray()) {
      for (const auto& v : e->GetArray()) out.Sub(20, Any(v));
    }
    if (const Value* a = Member(s, "additionalProperties")) {
      // AdditionalPropertiesItem: Schema schema = 1 | bool boolean = 2.
      Message item;
      if (a->IsBool()) {
        item.OneofBool(2, a->GetBool());
      } else {
        Message m;
        KT_RETURN_IF_ERROR(Schema(*a, where + ".additionalProperties", m));
        item.Sub(1, m);
      }
      out.Sub(21, item);
    }
    if (const Value* t = Member(s, "type")) {
      // TypeItem: repeated string value = 1, from a string or a list of them.
      Message item;
      if (t->IsArray()) {
        for (const auto& v : t->GetArray()) {
          if (v.IsString()) item.String(1, View(v));
        }
      } else if (t->IsString()) {
        item.String(1, View(*t));
      }
      out.Sub(22, item);
    }
    if (const Value* items = Member(s, "items")) {
      // ItemsItem: repeated Schema schema = 1, from a schema or a list of them.
      Message item;
      if (items->IsArray()) {
        for (const auto& v : items->GetArray()) {
          Message m;
          KT_RETURN_IF_ERROR(Schema(v, where + ".items", m));
          item.Sub(1, m);
        }
      } else {
        Message m;
        KT_RETURN_IF_ERROR(Schema(*items, where + ".items", m));
        item.Sub(1, m);
      }
      out.Sub(23, item);
    }
    if (const Value* all_of = Member(s, "allOf"); all_of && all_of->IsArray()) {
      for (const auto& v : all_of->GetArray()) {
        Message m;
        KT_RETURN_IF_ERROR(Schema(v, where + ".allOf", m));
        out.Sub(24, m);
      }
    }
    if (const Value* properties = Member(s, "properties")) {
      Message m;
      KT_RETURN_IF_ERROR(NamedSchemas(*properties, where, 1, m));
      out.Sub(25, m);
    }
    if (const Value* e = Member(s, "example")) out.Sub(30, Any(*e));
    return VendorExtensions(s, 31, out);
  }

  // SecurityRequirement: NamedStringArray additional_properties = 1, each {name = 1,
  // StringArray{repeated string value = 1} value = 2}.
  static Status SecurityRequirement(const Value& requirement, Message& out) {
    if (!requirement.IsObject()) return Fail("security", "item is not an object");
    for (const auto& m : requirement.GetObject()) {
      if (!m.value.IsArray()) return Fail("security." + Name(m.name), "is not an array");
      Message array, named;
      for (const auto& s : m.value.GetArray()) {
        if (s.IsString()) array.String(1, View(s));
      }
      named.String(1, View(m.name));
      named.Sub(2, array);
      out.Sub(1, named);
    }
    return Status::Ok();
  }

  // SecurityDefinitions: NamedSecurityDefinitionsItem additional_properties = 1, each value a
  // SecurityDefinitionsItem by `type`: basic_authentication_security = 1, api_key_security = 2.
  static Status SecurityDefinitions(const Value& definitions, Message& out) {
    if (!definitions.IsObject()) return Fail("securityDefinitions", "is not an object");
    for (const auto& d : definitions.GetObject()) {
      const std::string where = "securityDefinitions." + Name(d.name);
      const std::string_view type = d.value.IsObject() ? StringMember(d.value, "type") : "";
      Message scheme, item, named;
      if (type == "apiKey") {
        KT_RETURN_IF_ERROR(Scalars(d.value, kApiKeySecurityFields, {}, where, scheme));
        KT_RETURN_IF_ERROR(VendorExtensions(d.value, 5, scheme));
        item.Sub(2, scheme);
      } else if (type == "basic") {
        KT_RETURN_IF_ERROR(Scalars(d.value, kBasicAuthenticationSecurityFields, {}, where, scheme));
        KT_RETURN_IF_ERROR(VendorExtensions(d.value, 3, scheme));
        item.Sub(1, scheme);
      } else {
        return Fail(where, "has type \"" + std::string(type) + "\", which is not encoded");
      }
      named.String(1, View(d.name));
      named.Sub(2, item);
      out.Sub(1, named);
    }
    return Status::Ok();
  }
};

}  // namespace

Result<std::string> EncodeOpenApiV2Protobuf(const rapidjson::Value& swagger) {
  Message doc;
  if (Status s = Encoder().Document(swagger, doc); !s.ok()) return Err(s);
  return doc.Take();
}

}  // namespace kt::server::internal
