#include "server/openapi.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <set>
#include <utility>

#include <openssl/evp.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/writer.h>

#include "api/json_writer.h"
#include "api/schema.h"
#include "core/version.h"
#include "server/internal/openapi_v2_proto.h"

namespace kt::server {

namespace {

using Value = rapidjson::Value;
using JsonWriter = api::JsonWriter;

constexpr std::string_view kDefinitionsPrefix = "#/definitions/";
constexpr std::string_view kParametersPrefix = "#/parameters/";
constexpr std::string_view kSchemasPrefix = "#/components/schemas/";

constexpr std::string_view kJson = "application/json";
constexpr std::string_view kV2ProtobufDeprecated =
    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
constexpr std::string_view kV2Protobuf =
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

std::string_view View(const Value& v) {
  return std::string_view(v.GetString(), v.GetStringLength());
}

const Value* Member(const Value& object, std::string_view key) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(
      rapidjson::StringRef(key.data(), static_cast<rapidjson::SizeType>(key.size())));
  return it == object.MemberEnd() ? nullptr : &it->value;
}

void Put(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// The JSON `w` wrote into `out`.
std::string Done(JsonWriter& w, std::string& out) {
  w.Finish();
  return std::move(out);
}

// Writes the members of `from` named in `keys` that it has, in that order.
void CopyMembers(JsonWriter& w, const Value& from, std::initializer_list<std::string_view> keys) {
  for (std::string_view key : keys) {
    if (const Value* v = Member(from, key)) {
      Put(w, key);
      v->Accept(w);
    }
  }
}

// Writes the boolean member `key` of `from` when it is true (Go's omitempty).
void CopyTrue(JsonWriter& w, const Value& from, std::string_view key) {
  if (const Value* v = Member(from, key); v != nullptr && v->IsTrue()) {
    Put(w, key);
    w.Bool(true);
  }
}

// Writes the `x-` members of `from` (x-kubernetes-action, x-kubernetes-group-version-kind, ...).
void CopyExtensions(JsonWriter& w, const Value& from) {
  for (const auto& m : from.GetObject()) {
    if (View(m.name).starts_with("x-")) {
      Put(w, View(m.name));
      m.value.Accept(w);
    }
  }
}

// Upper-case hex SHA-512, as kube-openapi's computeETag.
std::string Sha512Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha512(), nullptr) != 1) {
    std::fprintf(stderr, "openapi: SHA-512 is not available\n");
    std::abort();  // OpenSSL without SHA-512 is a broken build
  }
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xF]);
  }
  return out;
}

OpenApiDocument Encoded(std::string bytes, std::string etag) {
  return {MakeBody(std::move(bytes)), std::move(etag)};
}

// --- v2 → v3 ----------------------------------------------------------------------------------

// The document a path belongs to: "/api/v1/pods" → "api/v1", "/apis/apps/v1/..." →
// "apis/apps/v1"; "" for a path outside every group version.
std::string GroupVersionOf(std::string_view path) {
  std::vector<std::string_view> segs;
  while (!path.empty()) {
    if (path.front() == '/') {
      path.remove_prefix(1);
      continue;
    }
    const size_t slash = path.find('/');
    segs.push_back(path.substr(0, slash));
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash);
  }
  if (segs.size() >= 2 && segs[0] == "api") return "api/" + std::string(segs[1]);
  if (segs.size() >= 3 && segs[0] == "apis") {
    return "apis/" + std::string(segs[1]) + "/" + std::string(segs[2]);
  }
  return {};
}

class V3Builder {
 public:
  explicit V3Builder(const Value& swagger) : swagger_(swagger) {}

  // The v2 parameter a parameters entry stands for: shared ones (`$ref: #/parameters/x`)
  // resolved, as a real server writes them out in place.
  Result<const Value*> ResolveParameter(const Value& p) const {
    const Value* ref = Member(p, "$ref");
    if (ref == nullptr || !ref->IsString()) return &p;
    const std::string_view name = View(*ref);
    const Value* shared = name.starts_with(kParametersPrefix)
                              ? Member(*parameters(), name.substr(kParametersPrefix.size()))
                              : nullptr;
    if (shared == nullptr) return Err(BadRequest("openapi: dangling $ref " + std::string(name)));
    return shared;
  }

  // Adds every definition named from `node` at any depth (and from those, and so on) to *out,
  // shared parameters resolved. kBadRequest for a dangling reference.
  Status CollectRefs(const Value& node, std::set<std::string_view>* out) const {
    if (node.IsArray()) {
      for (const auto& v : node.GetArray()) KT_RETURN_IF_ERROR(CollectRefs(v, out));
      return Status::Ok();
    }
    if (!node.IsObject()) return Status::Ok();
    if (const Value* ref = Member(node, "$ref"); ref != nullptr && ref->IsString()) {
      const std::string_view name = View(*ref);
      if (name.starts_with(kParametersPrefix)) {
        Result<const Value*> p = ResolveParameter(node);
        if (!p) return p.error();
        return CollectRefs(**p, out);
      }
      if (!name.starts_with(kDefinitionsPrefix) ||
          Member(*definitions(), name.substr(kDefinitionsPrefix.size())) == nullptr) {
        return BadRequest("openapi: dangling $ref " + std::string(name));
      }
      const std::string_view def = name.substr(kDefinitionsPrefix.size());
      if (out->insert(def).second) {
        KT_RETURN_IF_ERROR(CollectRefs(*Member(*definitions(), def), out));
      }
    }
    for (const auto& m : node.GetObject()) {
      if (View(m.name) != "$ref") KT_RETURN_IF_ERROR(CollectRefs(m.value, out));
    }
    return Status::Ok();
  }

  // The document of one group version: `path_names` are the names of the v2 paths that belong
  // to it.
  Status Document(std::span<const Value* const> path_names, std::string* out) const {
    std::set<std::string_view> reachable;
    for (const Value* name : path_names) {
      KT_RETURN_IF_ERROR(CollectRefs(*Member(*paths(), View(*name)), &reachable));
    }
    std::string buf;
    JsonWriter w(&buf);
    // spec3.OpenAPI member order.
    w.StartObject();
    Put(w, "openapi");
    Put(w, "3.0.0");
    if (const Value* info = Member(swagger_, "info")) {
      Put(w, "info");
      info->Accept(w);
    }
    Put(w, "paths");
    w.StartObject();
    for (const Value* name : path_names) {
      Put(w, View(*name));
      KT_RETURN_IF_ERROR(WritePathItem(w, *Member(*paths(), View(*name))));
    }
    w.EndObject();
    Put(w, "components");
    w.StartObject();
    Put(w, "schemas");
    w.StartObject();
    for (std::string_view def : reachable) {  // sorted, as Go writes a map
      Put(w, def);
      WriteSchema(w, *Member(*definitions(), def));
    }
    w.EndObject();
    if (const Value* security = Member(swagger_, "securityDefinitions")) {
      // openapiconv ConvertSecurityScheme: description, type, name, in.
      Put(w, "securitySchemes");
      w.StartObject();
      for (const auto& s : security->GetObject()) {
        Put(w, View(s.name));
        w.StartObject();
        CopyMembers(w, s.value, {"description", "in", "name", "type"});
        w.EndObject();
      }
      w.EndObject();
    }
    w.EndObject();
    w.EndObject();
    *out = Done(w, buf);
    return Status::Ok();
  }

 private:
  const Value* definitions() const { return Member(swagger_, "definitions"); }
  const Value* parameters() const {
    static const Value kEmpty(rapidjson::kObjectType);
    const Value* p = Member(swagger_, "parameters");
    return p != nullptr ? p : &kEmpty;
  }
  const Value* paths() const { return Member(swagger_, "paths"); }

  // A schema in v3 form (openapiconv ConvertSchema): `$ref`s into #/components/schemas/, and a
  // `$ref` with anything beside it wrapped as allOf: [{$ref}] (builder3/util WrapRefs).
  static void WriteSchema(JsonWriter& w, const Value& schema) {
    if (schema.IsArray()) {  // `items` as a list of schemas
      w.StartArray();
      for (const auto& v : schema.GetArray()) WriteSchema(w, v);
      w.EndArray();
      return;
    }
    if (!schema.IsObject()) {  // `additionalProperties: true`
      schema.Accept(w);
      return;
    }
    const Value* ref = Member(schema, "$ref");
    const bool wrap = ref != nullptr && schema.MemberCount() > 1;
    w.StartObject();
    if (wrap) {
      Put(w, "allOf");
      w.StartArray();
      w.StartObject();
      WriteRef(w, *ref);
      w.EndObject();
      w.EndArray();
    }
    for (const auto& m : schema.GetObject()) {
      const std::string_view key = View(m.name);
      if (key == "$ref") {
        if (!wrap) WriteRef(w, m.value);
        continue;
      }
      Put(w, key);
      if (key == "properties") {
        w.StartObject();
        for (const auto& p : m.value.GetObject()) {
          Put(w, View(p.name));
          WriteSchema(w, p.value);
        }
        w.EndObject();
      } else if (key == "items" || key == "additionalProperties" || key == "additionalItems" ||
                 key == "not" || key == "allOf" || key == "anyOf" || key == "oneOf") {
        WriteSchema(w, m.value);
      } else {
        m.value.Accept(w);
      }
    }
    w.EndObject();
  }

  static void WriteRef(JsonWriter& w, const Value& ref) {
    Put(w, "$ref");
    std::string_view name = ref.IsString() ? View(ref) : std::string_view();
    if (name.starts_with(kDefinitionsPrefix)) {
      Put(w, std::string(kSchemasPrefix) + std::string(name.substr(kDefinitionsPrefix.size())));
    } else {
      Put(w, name);
    }
  }

  // A non-body parameter (openapiconv ConvertParameter): its simple type becomes `schema`.
  static void WriteParameter(JsonWriter& w, const Value& p) {
    w.StartObject();
    CopyMembers(w, p, {"description", "in", "name"});
    CopyTrue(w, p, "required");
    CopyTrue(w, p, "allowEmptyValue");
    Put(w, "schema");
    if (const Value* schema = Member(p, "schema")) {
      WriteSchema(w, *schema);
    } else {
      w.StartObject();
      CopyMembers(w, p, {"format", "type"});
      CopyTrue(w, p, "uniqueItems");
      w.EndObject();
    }
    CopyExtensions(w, p);
    w.EndObject();
  }

  // The non-body parameters of `owner`, resolved; the body parameter in *body.
  Status WriteParameters(JsonWriter& w, const Value& owner, const Value** body) const {
    const Value* list = Member(owner, "parameters");
    if (list == nullptr || !list->IsArray()) return Status::Ok();
    std::vector<const Value*> params;
    for (const auto& entry : list->GetArray()) {
      Result<const Value*> p = ResolveParameter(entry);
      if (!p) return p.error();
      const Value* in = Member(**p, "in");
      if (in != nullptr && in->IsString() && View(*in) == "body") {
        if (body != nullptr) *body = *p;
        continue;
      }
      params.push_back(*p);
    }
    if (params.empty()) return Status::Ok();
    Put(w, "parameters");
    w.StartArray();
    for (const Value* p : params) WriteParameter(w, *p);
    w.EndArray();
    return Status::Ok();
  }

  // `content` of a request body or a response: the schema once per media type.
  static void WriteContent(JsonWriter& w, const Value* types, const Value& schema) {
    Put(w, "content");
    w.StartObject();
    if (types != nullptr && types->IsArray()) {
      for (const auto& t : types->GetArray()) {
        Put(w, View(t));
        w.StartObject();
        Put(w, "schema");
        WriteSchema(w, schema);
        w.EndObject();
      }
    }
    w.EndObject();
  }

  Status WriteOperation(JsonWriter& w, const Value& op) const {
    w.StartObject();
    CopyMembers(w, op, {"description", "operationId", "summary", "deprecated"});
    const Value* body = nullptr;
    KT_RETURN_IF_ERROR(WriteParameters(w, op, &body));
    if (body != nullptr) {
      Put(w, "requestBody");
      w.StartObject();
      if (const Value* schema = Member(*body, "schema")) {
        WriteContent(w, Member(op, "consumes"), *schema);
      }
      CopyMembers(w, *body, {"description"});
      CopyTrue(w, *body, "required");
      w.EndObject();
    }
    if (const Value* responses = Member(op, "responses")) {
      Put(w, "responses");
      w.StartObject();
      for (const auto& r : responses->GetObject()) {
        Put(w, View(r.name));
        w.StartObject();
        if (const Value* schema = Member(r.value, "schema")) {
          WriteContent(w, Member(op, "produces"), *schema);
        }
        CopyMembers(w, r.value, {"description"});
        w.EndObject();
      }
      w.EndObject();
    }
    CopyMembers(w, op, {"tags"});
    CopyExtensions(w, op);
    w.EndObject();
    return Status::Ok();
  }

  Status WritePathItem(JsonWriter& w, const Value& item) const {
    w.StartObject();
    for (std::string_view method : {"delete", "get", "head", "options"}) {
      if (const Value* op = Member(item, method)) {
        Put(w, method);
        KT_RETURN_IF_ERROR(WriteOperation(w, *op));
      }
    }
    KT_RETURN_IF_ERROR(WriteParameters(w, item, nullptr));
    for (std::string_view method : {"patch", "post", "put"}) {
      if (const Value* op = Member(item, method)) {
        Put(w, method);
        KT_RETURN_IF_ERROR(WriteOperation(w, *op));
      }
    }
    w.EndObject();
    return Status::Ok();
  }

  const Value& swagger_;
};

// The v2 document in kube-openapi's spec.Swagger member order.
std::string WriteV2Json(const Value& swagger) {
  std::string buf;
  JsonWriter w(&buf);
  w.StartObject();
  static constexpr std::array<std::string_view, 8> kOrder = {
      "swagger", "info", "paths", "definitions", "parameters", "responses", "securityDefinitions",
      "security"};
  for (std::string_view key : kOrder) {
    const Value* v = Member(swagger, key);
    if (v == nullptr) continue;
    Put(w, key);
    v->Accept(w);
  }
  for (const auto& m : swagger.GetObject()) {
    if (std::find(kOrder.begin(), kOrder.end(), View(m.name)) != kOrder.end()) continue;
    Put(w, View(m.name));
    m.value.Accept(w);
  }
  w.EndObject();
  return Done(w, buf);
}

// --- HTTP ---------------------------------------------------------------------------------------

struct Clause {
  std::string_view type, subtype;
  double q = 1;
};

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// github.com/munnerz/goautoneg ParseAccept.
std::vector<Clause> ParseAcceptClauses(std::string_view header) {
  std::vector<Clause> out;
  while (true) {
    const size_t comma = header.find(',');
    std::string_view part = TrimSpaces(header.substr(0, comma));
    const size_t semi = part.find(';');
    const std::string_view range = part.substr(0, semi);
    Clause c;
    const size_t slash = range.find('/');
    c.type = TrimSpaces(range.substr(0, slash));
    bool ok = true;
    if (slash == std::string_view::npos) {
      ok = c.type == "*";
      c.subtype = "*";
    } else if (range.find('/', slash + 1) != std::string_view::npos) {
      ok = false;
    } else {
      c.subtype = TrimSpaces(range.substr(slash + 1));
    }
    if (ok && semi != std::string_view::npos) {
      std::string_view params = part.substr(semi + 1);
      while (true) {
        const size_t next = params.find(';');
        const std::string_view param = params.substr(0, next);
        const size_t eq = param.find('=');
        if (eq != std::string_view::npos && TrimSpaces(param.substr(0, eq)) == "q") {
          // strconv.ParseFloat; a value that does not parse is 0.
          const std::string value(param.substr(eq + 1));
          char* end = nullptr;
          const double q = std::strtod(value.c_str(), &end);
          c.q = end != nullptr && *end == '\0' && !value.empty() ? q : 0;
        }
        if (next == std::string_view::npos) break;
        params = params.substr(next + 1);
      }
    }
    if (ok) out.push_back(c);
    if (comma == std::string_view::npos) break;
    header = header.substr(comma + 1);
  }
  // goautoneg sorts with this Less; Go's sort of a short slice is an insertion sort, which this
  // is (Less is not a strict weak order, so the algorithm matters).
  auto less = [](const Clause& a, const Clause& b) {
    if (a.q > b.q) return true;
    if (a.type != "*" && b.type == "*") return true;
    if (a.subtype != "*" && b.subtype == "*") return true;
    return false;
  };
  for (size_t i = 1; i < out.size(); ++i) {
    for (size_t j = i; j > 0 && less(out[j], out[j - 1]); --j) std::swap(out[j], out[j - 1]);
  }
  return out;
}

constexpr std::array<std::string_view, 7> kWeekdays = {"Sun", "Mon", "Tue", "Wed",
                                                       "Thu", "Fri", "Sat"};
constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// "Mon, 02 Jan 2006 15:04:05 <zone>" in UTC: http.TimeFormat with "GMT", time.RFC1123 of a UTC
// time with "UTC".
std::string HttpDate(std::time_t t, std::string_view zone) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d %s",
                kWeekdays[static_cast<size_t>(tm.tm_wday)].data(), tm.tm_mday,
                kMonths[static_cast<size_t>(tm.tm_mon)].data(), tm.tm_year + 1900, tm.tm_hour,
                tm.tm_min, tm.tm_sec, std::string(zone).c_str());
  return buf;
}

// time.Now().AddDate(1, 0, 0): the same date and time a year on (29 February becomes 1 March).
std::time_t OneYearOn(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  tm.tm_year += 1;
  return timegm(&tm);
}

// net/http checkIfNoneMatch: "*" or a listed entity tag, compared weakly.
bool NoneMatchHits(std::string_view if_none_match, std::string_view etag) {
  while (!if_none_match.empty()) {
    const size_t comma = if_none_match.find(',');
    std::string_view tag = TrimSpaces(if_none_match.substr(0, comma));
    if (tag == "*") return true;
    if (tag.starts_with("W/")) tag.remove_prefix(2);
    if (tag == etag) return true;
    if (comma == std::string_view::npos) break;
    if_none_match.remove_prefix(comma + 1);
  }
  return false;
}

std::string Quote(std::string_view etag) {
  std::string out;
  out.reserve(etag.size() + 2);
  out.append(1, '"').append(etag).append(1, '"');
  return out;
}

Body EmptyBody() {
  static const Body kEmpty = MakeBody("");
  return kEmpty;
}

// http.ServeContent of a document whose ETag is set: 304 when If-None-Match holds it, else the
// bytes with Last-Modified.
void ServeContent(const OpenApi& openapi, const OpenApiRequest& request, const Body& body,
                  const std::string& etag, OpenApiResponse* r) {
  if (!request.if_none_match.empty() && NoneMatchHits(request.if_none_match, etag)) {
    r->status = 304;
    r->content_type = {};
    r->body = EmptyBody();
    return;
  }
  r->status = 200;
  r->body = body;
  r->headers.push_back(
      {"Last-Modified", HttpDate(std::chrono::system_clock::to_time_t(openapi.built_at()), "GMT")});
}

}  // namespace

Result<std::unique_ptr<const OpenApi>> OpenApi::Build(std::string_view swagger_json,
                                                      std::string_view version) {
  rapidjson::Document doc;
  doc.Parse(swagger_json.data(), swagger_json.size());
  if (doc.HasParseError()) {
    return Err(BadRequest("openapi: invalid JSON at offset " +
                          std::to_string(doc.GetErrorOffset()) + ": " +
                          rapidjson::GetParseError_En(doc.GetParseError())));
  }
  const Value* paths = Member(doc, "paths");
  if (!doc.IsObject() || paths == nullptr || !paths->IsObject() ||
      Member(doc, "definitions") == nullptr || !Member(doc, "definitions")->IsObject()) {
    return Err(BadRequest("openapi: no \"paths\" and \"definitions\" objects"));
  }
  // apiserver completeOpenAPI: the version up to its first "-".
  version = version.substr(0, version.find('-'));
  auto info = doc.FindMember("info");
  if (info == doc.MemberEnd() || !info->value.IsObject()) {
    doc.RemoveMember("info");
    doc.AddMember("info", Value(rapidjson::kObjectType), doc.GetAllocator());
    info = doc.FindMember("info");
  }
  info->value.RemoveMember("version");
  info->value.AddMember("version", Value(version.data(), version.size(), doc.GetAllocator()),
                        doc.GetAllocator());
  std::unique_ptr<OpenApi> openapi(new OpenApi());
  openapi->built_at_ = std::chrono::system_clock::now();

  std::string v2 = WriteV2Json(doc);
  std::string etag = Sha512Hex(v2);
  Result<std::string> proto = internal::EncodeOpenApiV2Protobuf(doc);
  if (!proto) return Err(proto.error());
  openapi->v2_protobuf_ = Encoded(std::move(*proto), etag);  // the JSON's ETag, as upstream
  openapi->v2_json_ = Encoded(std::move(v2), std::move(etag));

  std::map<std::string, std::vector<const Value*>> by_group_version;
  for (const auto& p : paths->GetObject()) {
    std::string gv = GroupVersionOf(View(p.name));
    if (gv.empty())
      return Err(
          BadRequest("openapi: path " + std::string(View(p.name)) + " is in no group version"));
    by_group_version[gv].push_back(&p.name);
  }
  const V3Builder builder(doc);
  for (auto& [gv, names] : by_group_version) {
    std::sort(names.begin(), names.end(),
              [](const Value* a, const Value* b) { return View(*a) < View(*b); });
    std::string json;
    if (Status s = builder.Document(names, &json); !s.ok()) return Err(s);
    std::string etag = Sha512Hex(json);
    openapi->v3_.push_back({gv, Encoded(std::move(json), std::move(etag))});
  }

  std::string index;
  JsonWriter w(&index);
  w.StartObject();
  Put(w, "paths");
  w.StartObject();
  for (const GroupVersion& gv : openapi->v3_) {
    Put(w, gv.path);
    w.StartObject();
    Put(w, "serverRelativeURL");
    Put(w, "/openapi/v3/" + gv.path + "?hash=" + gv.document.etag);
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  openapi->v3_index_ = MakeBody(Done(w, index));
  return std::unique_ptr<const OpenApi>(std::move(openapi));
}

const OpenApiDocument* OpenApi::V3(std::string_view path) const {
  auto it = std::lower_bound(v3_.begin(), v3_.end(), path,
                             [](const GroupVersion& g, std::string_view p) { return g.path < p; });
  return it != v3_.end() && it->path == path ? &it->document : nullptr;
}

std::vector<std::string_view> OpenApi::V3Paths() const {
  std::vector<std::string_view> out;
  for (const GroupVersion& gv : v3_) out.push_back(gv.path);
  return out;
}

size_t OpenApi::MemoryBytes() const {
  auto document = [](const OpenApiDocument& d) {
    return sizeof(std::string) + d.body->capacity() + d.etag.capacity();
  };
  size_t bytes = sizeof(OpenApi) + document(v2_json_) + document(v2_protobuf_) +
                 sizeof(std::string) + v3_index_->capacity() +
                 v3_.capacity() * sizeof(GroupVersion);
  for (const GroupVersion& gv : v3_) bytes += gv.path.capacity() + document(gv.document);
  return bytes;
}

const OpenApi& ServedOpenApi() {
  // Never destroyed: threads may still use it while the process exits.
  static const OpenApi* const openapi = [] {
    Result<std::unique_ptr<const OpenApi>> built =
        OpenApi::Build(api::ServedSchemaDocument(), GitVersion());
    if (!built) {
      // The embedded file is checked by the tests; a broken one is a build error.
      std::fprintf(stderr, "OpenAPI of served-schema.json: %s\n", built.error().message().c_str());
      std::abort();
    }
    return built->release();
  }();
  return *openapi;
}

size_t NegotiateOpenApi(std::string_view accept, std::span<const std::string_view> offered) {
  if (accept.empty()) accept = "*/*";
  for (const Clause& c : ParseAcceptClauses(accept)) {
    for (size_t i = 0; i < offered.size(); ++i) {
      const size_t slash = offered[i].find('/');
      const std::string_view type = offered[i].substr(0, slash);
      const std::string_view subtype = offered[i].substr(slash + 1);
      if ((c.type == type || c.type == "*") && (c.subtype == subtype || c.subtype == "*")) {
        return i;
      }
    }
  }
  return offered.size();
}

OpenApiResponse ServeOpenApi(const OpenApi& openapi, const OpenApiRequest& request) {
  OpenApiResponse r;
  const std::string_view path = request.path;
  if (path == "/openapi/v2") {
    // kube-openapi pkg/handler: JSON, or protobuf under either name.
    static constexpr std::array<std::string_view, 3> kOffered = {kJson, kV2ProtobufDeprecated,
                                                                 kV2Protobuf};
    r.headers.push_back({"Vary", "Accept"});
    const size_t pick = NegotiateOpenApi(request.accept, kOffered);
    if (pick == kOffered.size()) {
      r.status = 406;
      r.body = EmptyBody();
      return r;
    }
    const OpenApiDocument& doc = pick == 0 ? openapi.V2Json() : openapi.V2Protobuf();
    r.content_type = pick == 0 ? kJson : kV2Protobuf;
    r.headers.push_back({"Etag", Quote(doc.etag)});
    ServeContent(openapi, request, doc.body, Quote(doc.etag), &r);
    return r;
  }
  if (path == "/openapi/v3") {
    // kube-aggregator handleDiscovery: http.ServeContent with no Content-Type and no ETag, the
    // time of the request as Last-Modified.
    r.status = 200;
    r.content_type = "text/plain; charset=utf-8";
    r.body = openapi.V3Index();
    r.headers.push_back(
        {"Last-Modified", HttpDate(std::chrono::system_clock::to_time_t(request.now), "GMT")});
    return r;
  }
  constexpr std::string_view kV3Prefix = "/openapi/v3/";
  if (!path.starts_with(kV3Prefix)) return r;
  const std::string_view group_version = path.substr(kV3Prefix.size());
  const OpenApiDocument* doc = openapi.V3(group_version);
  if (doc == nullptr) {
    // kube-aggregator handleGroupVersion: "No group-versions match the desired request".
    r.status = 404;
    r.body = EmptyBody();
    return r;
  }
  // kube-openapi pkg/handler3 HandleGroupVersion.
  static constexpr std::array<std::string_view, 1> kOffered = {kJson};
  r.headers.push_back({"Vary", "Accept"});
  if (NegotiateOpenApi(request.accept, kOffered) == kOffered.size()) {
    r.status = 406;
    r.body = EmptyBody();
    return r;
  }
  r.content_type = kJson;
  r.headers.push_back({"Etag", Quote(doc->etag)});
  if (!request.hash.empty()) {
    if (request.hash != doc->etag) {
      // http.Redirect; the Content-Type already set keeps it from writing a body.
      r.status = 301;
      r.body = EmptyBody();
      r.headers.push_back(
          {"Location", "/openapi/v3/" + std::string(group_version) + "?hash=" + doc->etag});
      return r;
    }
    r.headers.push_back({"Cache-Control", "public, immutable"});
    r.headers.push_back(
        {"Expires", HttpDate(OneYearOn(std::chrono::system_clock::to_time_t(request.now)), "UTC")});
  }
  ServeContent(openapi, request, doc->body, Quote(doc->etag), &r);
  return r;
}

}  // namespace kt::server
