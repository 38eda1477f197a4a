#include "server/api_server.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstring>
#include <optional>
#include <span>

#include <rapidjson/document.h>

#include "api/codec.h"
#include "api/manifest.h"
#include "api/patch.h"
#include "api/protobuf.h"
#include "api/schema.h"
#include "api/selector.h"
#include "api/table.h"
#include "server/status_json.h"

namespace kt::server {

namespace {

using rapidjson::Document;

// --- Query strings and paths ------------------------------------------------------------------

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decoding; `plus_is_space` for query components.
std::string Unescape(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      int hi = HexValue(s[i + 1]);
      int lo = HexValue(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_is_space && s[i] == '+' ? ' ' : s[i]);
  }
  return out;
}

struct Query {
  std::vector<std::pair<std::string, std::string>> params;

  explicit Query(std::string_view q) {
    while (!q.empty()) {
      size_t amp = q.find('&');
      std::string_view item = q.substr(0, amp);
      q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
      if (item.empty()) continue;
      size_t eq = item.find('=');
      params.emplace_back(Unescape(item.substr(0, eq), true),
                          eq == std::string_view::npos ? "" : Unescape(item.substr(eq + 1), true));
    }
  }
  const std::string* Find(std::string_view name) const {
    for (const auto& [k, v] : params) {
      if (k == name) return &v;
    }
    return nullptr;
  }
  std::string_view Get(std::string_view name) const {
    const std::string* v = Find(name);
    return v ? std::string_view(*v) : std::string_view();
  }
  // A boolean parameter as kube-apiserver reads one (Convert_Slice_string_To_bool): false when
  // absent, "0" or "false" in any case; true otherwise, an empty value included (`?watch`).
  bool Flag(std::string_view name) const {
    const std::string* v = Find(name);
    if (v == nullptr || *v == "0") return false;
    return !(v->size() == 5 && std::equal(v->begin(), v->end(), "false", [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) == b;
             }));
  }
};

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> segs;
  while (!path.empty()) {
    if (path.front() == '/') {
      path.remove_prefix(1);
      continue;
    }
    size_t slash = path.find('/');
    segs.push_back(Unescape(path.substr(0, slash), false));
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash);
  }
  return segs;
}

bool ParseInt64(std::string_view s, int64_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// --- Base64 for continue tokens -----------------------------------------------------------------

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Base64Url(std::string_view in) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : in) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kB64[(acc >> bits) & 63]);
    }
  }
  if (bits > 0) out.push_back(kB64[(acc << (6 - bits)) & 63]);
  return out;
}

bool UnBase64Url(std::string_view in, std::string& out) {
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const char* p = std::strchr(kB64, c);
    if (c == '=') break;
    if (p == nullptr || c == '\0') return false;
    acc = (acc << 6) | static_cast<uint32_t>(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return true;
}

// --- Responses -----------------------------------------------------------------------------------

constexpr std::string_view kJson = "application/json";

void RespondError(HttpResponder& responder, const ApiError& e) {
  responder.Respond(e.code, kJson, MakeBody(e.Json()));
}

void RespondBytes(HttpResponder& responder, int code, const store::Bytes& json) {
  responder.Respond(code, kJson, json);
}

api::TableKind TableKindOf(Resource r) {
  switch (r) {
    case Resource::kNamespaces:
      return api::TableKind::kNamespace;
    case Resource::kNodes:
      return api::TableKind::kNode;
    case Resource::kPods:
      return api::TableKind::kPod;
    case Resource::kEvents:
      return api::TableKind::kEvent;
    case Resource::kLeases:
      return api::TableKind::kLease;
    case Resource::kPriorityClasses:
      return api::TableKind::kPriorityClass;
    case Resource::kDaemonSets:
      return api::TableKind::kDaemonSet;
  }
  return api::TableKind::kPod;
}

// The Table a request asks for with its Accept header (kubectl-protocol.md §4), or nullopt for
// plain objects. Only a client that asked for meta.k8s.io/v1beta1 alone gets v1beta1. A bad
// includeObject is upstream's 400.
ApiResult<std::optional<api::TableOptions>> NegotiateTable(std::string_view accept,
                                                           std::string_view include_object) {
  if (accept.find("as=Table") == std::string_view::npos) return std::nullopt;
  Result<api::IncludeObject> include = api::ParseIncludeObject(include_object);
  if (!include) return ApiErr(include.error());
  api::TableOptions options;
  options.include_object = *include;
  const bool v1 = accept.find("as=Table;v=v1;") != std::string_view::npos ||
                  accept.find("as=Table;v=v1,") != std::string_view::npos;
  if (!v1 && accept.find("v=v1beta1") != std::string_view::npos) {
    options.api_version = "meta.k8s.io/v1beta1";
  }
  return options;
}

// A Table of `objects`, listed at `rv` (and `token` to continue from).
std::string EncodeTableOf(Resource r, const api::TableOptions& options,
                          std::span<const ObjectPtr> objects, std::string_view rv,
                          std::string_view token = {}) {
  std::string out;
  api::TableWriter writer(TableKindOf(r), options, std::chrono::system_clock::now(), &out);
  writer.Begin({rv, token, std::nullopt});
  for (const ObjectPtr& obj : objects) (void)writer.AddRowJson(*obj->json);
  writer.End();
  return out;
}

ApiError NotFoundResource() {
  return FromStatus(NotFound("the server could not find the requested resource"));
}

ApiError MethodNotAllowed() {
  return FromStatus(Status(StatusCode::kMethodNotAllowed,
                           "the server does not allow this method on the requested resource"));
}

// The media type of a Content-Type header, lower-cased, without parameters.
std::string MediaType(std::string_view content_type) {
  std::string_view t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  std::string out(t);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The start of a request body for error messages (upstream summarizeData).
std::string SummarizeBody(std::string_view body) {
  constexpr size_t kMax = 30;
  if (body.empty()) return "<empty>";
  const bool binary = std::any_of(body.begin(), body.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\r' && c != '\t';
  });
  if (binary) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < std::min(body.size(), kMax); ++i) {
      const auto b = static_cast<unsigned char>(body[i]);
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 15]);
    }
    return body.size() > kMax ? out + " ..." : out;
  }
  if (body.size() > kMax) return std::string(body.substr(0, kMax)) + " ...";
  return std::string(body);
}

// Upstream transformDecodeError, for a body whose kind could not even be read.
ApiError Unrecognized(std::string_view kind, std::string_view err, std::string_view body) {
  std::string m = "the object provided is unrecognized (must be of type ";
  m.append(kind).append("): ").append(err).append(" (").append(SummarizeBody(body)).append(")");
  return BadRequestError(m);
}

// Go's error for decoding a non-object into the struct the JSON serializer finds the kind with.
std::string NotAnObjectError(const rapidjson::Value& v) {
  std::string_view type = v.IsArray()    ? "array"
                          : v.IsString() ? "string"
                          : v.IsBool()   ? "bool"
                                         : "number";
  std::string m = "couldn't get version/kind; json parse error: json: cannot unmarshal ";
  m.append(type).append(
      " into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; "
      "Kind string \"json:\\\"kind,omitempty\\\"\" }");
  return m;
}

// Decodes a request body by its Content-Type into a JSON object; `kind` names the expected type
// in errors.
ApiResult<Document> DecodeBody(std::string_view kind, std::string_view content_type,
                               std::string_view body) {
  const std::string media = MediaType(content_type);
  Result<Document> doc;
  if (media == "application/vnd.kubernetes.protobuf") {
    doc = api::DecodeProtobufBody(body);
    if (!doc) {
      if (doc.error().code() == StatusCode::kUnsupportedMediaType) return ApiErr(doc.error());
      return ApiErr(Unrecognized(kind, doc.error().message(), body));
    }
  } else if (media == "application/yaml") {
    doc = api::YamlToJson(body);
    if (!doc) return ApiErr(Unrecognized(kind, doc.error().message(), body));
  } else if (media == "application/json" || media.empty()) {
    doc = api::ParseJson(body);
    if (!doc) {
      std::string err = api::GoJsonSyntaxError(body);
      if (err.empty()) err = doc.error().message();  // valid JSON rejected for depth or encoding
      return ApiErr(
          Unrecognized(kind, "couldn't get version/kind; json parse error: " + err, body));
    }
  } else {
    return ApiErr(NewUnsupportedMediaType(kBodyMediaTypes));
  }
  if (!doc->IsObject()) {
    if (doc->IsNull())
      return ApiErr(Unrecognized(kind, "Object 'Kind' is missing in 'null'", body));
    return ApiErr(Unrecognized(kind, NotAnObjectError(*doc), body));
  }
  return std::move(*doc);
}

std::string StringOf(const rapidjson::Value& v) {
  if (v.IsString()) return std::string(v.GetString(), v.GetStringLength());
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  return {};
}

// DeleteOptions from the body (JSON or protobuf) and the query.
ApiResult<DeleteOptions> ParseDeleteOptions(std::string_view content_type, std::string_view body,
                                            const Query& query) {
  DeleteOptions o;
  std::optional<std::string> policy;
  std::optional<bool> orphan_dependents;
  if (!body.empty()) {
    ApiResult<Document> doc = DecodeBody("DeleteOptions", content_type, body);
    if (!doc) return ApiErr(doc.error());
    if (doc->IsObject()) {
      auto g = doc->FindMember("gracePeriodSeconds");
      if (g != doc->MemberEnd() && g->value.IsInt64()) o.grace_period_seconds = g->value.GetInt64();
      auto p = doc->FindMember("preconditions");
      if (p != doc->MemberEnd() && p->value.IsObject()) {
        auto uid = p->value.FindMember("uid");
        if (uid != p->value.MemberEnd() && uid->value.IsString())
          o.precondition_uid = StringOf(uid->value);
        auto rv = p->value.FindMember("resourceVersion");
        if (rv != p->value.MemberEnd() && rv->value.IsString()) {
          o.precondition_resource_version = StringOf(rv->value);
        }
      }
      auto d = doc->FindMember("dryRun");
      if (d != doc->MemberEnd() && d->value.IsArray()) {
        for (const auto& v : d->value.GetArray()) {
          if (v.IsString() && std::string_view(v.GetString()) == "All") o.dry_run = true;
        }
      }
      if (auto pp = doc->FindMember("propagationPolicy");
          pp != doc->MemberEnd() && pp->value.IsString()) {
        policy = StringOf(pp->value);
      }
      if (auto od = doc->FindMember("orphanDependents");
          od != doc->MemberEnd() && od->value.IsBool()) {
        orphan_dependents = od->value.GetBool();
      }
    }
  }
  if (const std::string* pp = query.Find("propagationPolicy")) policy = *pp;
  if (query.Find("orphanDependents") != nullptr) orphan_dependents = query.Flag("orphanDependents");
  // Upstream ValidateDeleteOptions.
  FieldErrorList errors;
  if (policy && orphan_dependents) {
    errors.push_back(
        FieldError::Invalid("propagationPolicy", GoQuote(*policy),
                            "orphanDependents and deletionPropagation cannot be both set"));
  }
  if (policy) {
    if (*policy == "Background") {
      o.propagation = Propagation::kBackground;
    } else if (*policy == "Orphan") {
      o.propagation = Propagation::kOrphan;
    } else if (*policy == "Foreground") {
      o.propagation = Propagation::kForeground;
    } else {
      static constexpr std::string_view kPolicies[] = {"Foreground", "Background", "Orphan", "nil"};
      errors.push_back(FieldError::NotSupported("propagationPolicy", GoQuote(*policy), kPolicies));
    }
  } else if (orphan_dependents) {
    o.propagation = *orphan_dependents ? Propagation::kOrphan : Propagation::kBackground;
  }
  if (!errors.empty()) return ApiErr(NewInvalid("meta.k8s.io", "DeleteOptions", "", errors));
  if (const std::string* g = query.Find("gracePeriodSeconds")) {
    int64_t v = 0;
    if (!ParseInt64(*g, v)) {
      return ApiErr(BadRequestError("invalid gracePeriodSeconds: " + *g));
    }
    o.grace_period_seconds = v;
  }
  if (query.Get("dryRun") == "All") o.dry_run = true;
  return o;
}

// --- Watch streaming -------------------------------------------------------------------------

const Body& EventPrefix(WatchEventType type) {
  static const Body added = MakeBody(R"({"type":"ADDED","object":)");
  static const Body modified = MakeBody(R"({"type":"MODIFIED","object":)");
  static const Body deleted = MakeBody(R"({"type":"DELETED","object":)");
  switch (type) {
    case WatchEventType::kAdded:
      return added;
    case WatchEventType::kModified:
      return modified;
    case WatchEventType::kDeleted:
      return deleted;
  }
  return added;
}

const Body& EventSuffix() {
  static const Body suffix = MakeBody("}\n");
  return suffix;
}

class WatchStream : public WatchSink, public std::enable_shared_from_this<WatchStream> {
 public:
  WatchStream(const ResourceInfo& info, std::shared_ptr<HttpStream> stream,
              std::optional<api::TableOptions> table, bool bookmarks)
      : info_(info), stream_(std::move(stream)), table_(table), bookmarks_(bookmarks) {}

  bool OnEvent(WatchEventType type, const ObjectPtr& object) override {
    if (!table_) {
      return stream_->Write({EventPrefix(type), object->json, EventSuffix()});
    }
    std::string out = R"({"type":")";
    out.append(WatchEventTypeName(type)).append(R"(","object":)");
    out.append(EncodeTableOf(info_.resource, *table_, std::span<const ObjectPtr>(&object, 1),
                             std::to_string(object->revision)));
    table_->column_definitions = false;  // the first event carries them
    out.append("}\n");
    return stream_->Write({MakeBody(std::move(out))});
  }

  void OnProgress(store::Revision revision) override {
    if (!bookmarks_ || revision == last_bookmark_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_bookmark_at_ < std::chrono::seconds(5)) return;
    last_bookmark_at_ = now;
    last_bookmark_ = revision;
    std::string out = R"({"type":"BOOKMARK","object":{"kind":")";
    out.append(info_.kind).append(R"(","apiVersion":")").append(info_.api_version);
    out.append(R"(","metadata":{"resourceVersion":")").append(std::to_string(revision));
    out.append("\"}}}\n");
    stream_->Write({MakeBody(std::move(out))});
  }

  void OnEnd(Status status) override {
    if (status.code() == StatusCode::kGone) WriteError(FromStatus(status));
    stream_->Close();
  }

  void WriteError(const ApiError& e) {
    std::string out = R"({"type":"ERROR","object":)";
    out.append(e.Json()).append("}\n");
    stream_->Write({MakeBody(std::move(out))});
  }

  HttpStream& stream() { return *stream_; }

 private:
  const ResourceInfo& info_;
  std::shared_ptr<HttpStream> stream_;
  std::optional<api::TableOptions> table_;
  bool bookmarks_;
  store::Revision last_bookmark_ = 0;
  std::chrono::steady_clock::time_point last_bookmark_at_ = std::chrono::steady_clock::now();
};

}  // namespace

// One API request, parsed.
struct ApiServer::Request {
  HttpRequest http;
  std::shared_ptr<HttpResponder> responder;
  Query query{""};
  const ResourceInfo* info = nullptr;
  std::string namespace_;
  std::string name;
  std::string subresource;
  bool watch = false;

  void Fail(const ApiError& e) { RespondError(*responder, e); }
  // Adds Warning headers (upstream's warning.AddWarning) to the answer.
  void Warn(const std::vector<std::string>& warnings);
  // The type a request body must be, for decode errors.
  std::string_view BodyKind() const {
    if (subresource == "binding") return "Binding";
    if (subresource == "eviction") return "Eviction";
    return info->kind;
  }
};

ApiServer::ApiServer(Registry* registry, const DiscoveryOptions& discovery,
                     Authentication authentication)
    : registry_(registry),
      discovery_(discovery),
      // Built here, once, so that no request pays for it.
      openapi_(ServedOpenApi()),
      authentication_(std::move(authentication)) {}

ApiServer::~ApiServer() = default;

namespace {

// A Warning header's value as kube-apiserver writes it (warning.go): code 299, agent "-", the
// text quoted as Go's strconv.Quote quotes it.
std::string WarningHeaderValue(std::string_view text) {
  std::string out = "299 - \"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out.append("\\x").push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
  return out;
}

// A responder that adds Warning headers to the answer of the one it wraps.
class WarningResponder final : public HttpResponder {
 public:
  WarningResponder(std::shared_ptr<HttpResponder> inner, const std::vector<std::string>& warnings)
      : inner_(std::move(inner)) {
    for (const std::string& w : warnings) warnings_.push_back({"Warning", WarningHeaderValue(w)});
  }
  void Respond(int status, std::string_view content_type, Body body,
               std::vector<HttpHeader> extra_headers) override {
    extra_headers.insert(extra_headers.begin(), warnings_.begin(), warnings_.end());
    inner_->Respond(status, content_type, std::move(body), std::move(extra_headers));
  }
  std::shared_ptr<HttpStream> StartStream(int status, std::string_view content_type) override {
    return inner_->StartStream(status, content_type);
  }

 private:
  const std::shared_ptr<HttpResponder> inner_;
  std::vector<HttpHeader> warnings_;
};

// upstream's RequestInfoFactory (k8s.io/apiserver pkg/endpoints/request/requestinfo.go), as far
// as a 403's message needs it: /api/v1/... and /apis/GROUP/VERSION/... are resource requests;
// everything else (/api, /apis/apps/v1, /healthz, /openapi/v3) is a path.
AuthorizationAttributes AttributesOf(const HttpRequest& request, const std::string_view path,
                                     const Query& query) {
  AuthorizationAttributes a;
  a.path = std::string(path);
  a.verb = request.method;
  std::transform(a.verb.begin(), a.verb.end(), a.verb.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::vector<std::string> segs = SplitPath(path);
  size_t rest = 0;
  if (segs.size() >= 3 && segs[0] == "api") {
    rest = 2;
  } else if (segs.size() >= 4 && segs[0] == "apis") {
    a.api_group = segs[1];
    rest = 3;
  } else {
    return a;
  }
  a.resource_request = true;
  std::vector<std::string> parts(segs.begin() + static_cast<long>(rest), segs.end());
  bool watch = false;
  if (!parts.empty() && parts[0] == "watch") {
    watch = true;
    parts.erase(parts.begin());
  }
  if (parts.size() >= 2 && parts[0] == "namespaces") {
    a.namespace_ = parts[1];
    if (parts.size() >= 3) {
      parts.erase(parts.begin(), parts.begin() + 2);
    } else {
      a.resource = "namespaces";
      a.name = a.namespace_;
      parts.clear();
    }
  }
  if (!parts.empty()) a.resource = parts[0];
  if (parts.size() >= 2) a.name = parts[1];
  if (parts.size() >= 3) a.subresource = parts[2];
  const std::string method = request.method;
  if (watch || (a.name.empty() && query.Flag("watch") && (method == "GET" || method == "HEAD"))) {
    a.verb = "watch";
  } else if (method == "GET" || method == "HEAD") {
    a.verb = a.name.empty() ? "list" : "get";
  } else if (method == "POST") {
    a.verb = "create";
  } else if (method == "PUT") {
    a.verb = "update";
  } else if (method == "PATCH") {
    a.verb = "patch";
  } else if (method == "DELETE") {
    a.verb = a.name.empty() ? "deletecollection" : "delete";
  }
  return a;
}

}  // namespace

void ApiServer::Request::Warn(const std::vector<std::string>& warnings) {
  if (!warnings.empty()) responder = std::make_shared<WarningResponder>(responder, warnings);
}

bool ApiServer::Admit(const HttpRequest& request, HttpResponder& responder,
                      std::vector<std::string>* warnings) {
  AuthenticationResult who =
      AuthenticateRequest(request.Header("Authorization"), request.client_certificate.get(),
                          authentication_.tokens.get(), authentication_.anonymous);
  *warnings = std::move(who.warnings);
  std::vector<HttpHeader> headers;
  for (const std::string& w : *warnings) headers.push_back({"Warning", WarningHeaderValue(w)});
  if (!who.user) {
    responder.Respond(401, kJson, MakeBody(UnauthorizedError().Json()), std::move(headers));
    return false;
  }
  if (who.user->name != kAnonymousUser) return true;
  const std::string_view target = request.target;
  const size_t qpos = target.find('?');
  const std::string_view path = target.substr(0, qpos);
  if (AnonymousAllowedPath(path, request.method)) return true;
  const Query query(qpos == std::string_view::npos ? std::string_view() : target.substr(qpos + 1));
  AuthorizationAttributes attributes = AttributesOf(request, path, query);
  attributes.user = who.user->name;
  responder.Respond(403, kJson, MakeBody(NewRequestForbidden(attributes).Json()),
                    std::move(headers));
  return false;
}

void ApiServer::Handle(HttpRequest request, std::shared_ptr<HttpResponder> responder) {
  if (request.tls) {
    std::vector<std::string> warnings;
    if (!Admit(request, *responder, &warnings)) return;
    if (!warnings.empty()) responder = std::make_shared<WarningResponder>(responder, warnings);
  }
  if (ServeStatic(request, *responder)) return;
  auto r = std::make_shared<Request>();
  const std::string_view target = request.target;
  const size_t qpos = target.find('?');
  r->query = Query(qpos == std::string_view::npos ? std::string_view() : target.substr(qpos + 1));
  std::vector<std::string> segs = SplitPath(target.substr(0, qpos));
  r->http = std::move(request);
  r->responder = std::move(responder);

  std::string_view group;
  std::string_view version;
  size_t rest = 0;
  if (segs.size() >= 2 && segs[0] == "api") {
    version = segs[1];
    rest = 2;
  } else if (segs.size() >= 3 && segs[0] == "apis") {
    group = segs[1];
    version = segs[2];
    rest = 3;
  } else {
    return r->Fail(NotFoundResource());
  }
  std::vector<std::string> parts(segs.begin() + static_cast<long>(rest), segs.end());
  if (!parts.empty() && parts[0] == "watch") {
    r->watch = true;
    parts.erase(parts.begin());
  }
  if (parts.empty()) return r->Fail(NotFoundResource());
  std::string resource;
  if (parts[0] == "namespaces" && parts.size() >= 3 && parts[2] != "status" &&
      parts[2] != "finalize") {
    r->namespace_ = parts[1];
    resource = parts[2];
    if (parts.size() >= 4) r->name = parts[3];
    if (parts.size() >= 5) r->subresource = parts[4];
    if (parts.size() > 5) return r->Fail(NotFoundResource());
  } else {
    resource = parts[0];
    if (parts.size() >= 2) r->name = parts[1];
    if (parts.size() >= 3) r->subresource = parts[2];
    if (parts.size() > 3) return r->Fail(NotFoundResource());
  }
  r->info = FindResource(group, version, resource);
  if (r->info == nullptr) return r->Fail(NotFoundResource());
  if (!r->info->namespaced && !r->namespace_.empty()) return r->Fail(NotFoundResource());
  if (r->info->namespaced && r->namespace_.empty() && !r->name.empty()) {
    return r->Fail(NotFoundResource());
  }
  if (r->query.Flag("watch")) r->watch = true;
  HandleResource(r);
}

void ApiServer::HandleResource(const std::shared_ptr<Request>& r) {
  const std::string& method = r->http.method;
  if (!r->subresource.empty() && r->subresource != "status") return Subresource(r);
  if (r->subresource == "status" && !r->info->has_status) return r->Fail(NotFoundResource());
  if (method == "GET" || method == "HEAD") {
    if (r->name.empty()) return r->watch ? Watch(r) : List(r);
    if (r->watch) return r->Fail(MethodNotAllowed());
    return Get(r);
  }
  if (method == "POST") {
    if (!r->name.empty()) return r->Fail(MethodNotAllowed());
    if (r->info->namespaced && r->namespace_.empty()) return r->Fail(MethodNotAllowed());
    return Create(r);
  }
  if (method == "PUT") {
    if (r->name.empty()) return r->Fail(MethodNotAllowed());
    return Update(r);
  }
  if (method == "PATCH") {
    if (r->name.empty()) return r->Fail(MethodNotAllowed());
    return Patch(r);
  }
  if (method == "DELETE") {
    if (r->name.empty()) return DeleteCollection(r);
    return Delete(r);
  }
  r->Fail(MethodNotAllowed());
}

namespace {

ApiResult<ObjectFilter> ParseFilter(const ResourceInfo& info, std::string_view namespace_,
                                    const Query& query) {
  ObjectFilter filter;
  filter.namespace_ = std::string(namespace_);
  if (const std::string* ls = query.Find("labelSelector")) {
    Result<api::labels::Selector> s = api::labels::Parse(*ls);
    if (!s) return ApiErr(FromStatus(s.error()));
    filter.labels = std::move(*s);
  }
  if (const std::string* fs = query.Find("fieldSelector")) {
    Result<api::fields::Selector> s = api::fields::ParseSelector(*fs, info.kind);
    if (!s) return ApiErr(FromStatus(s.error()));
    filter.fields = std::move(*s);
  }
  return filter;
}

}  // namespace

void ApiServer::List(const std::shared_ptr<Request>& r) {
  ApiResult<ObjectFilter> filter = ParseFilter(*r->info, r->namespace_, r->query);
  if (!filter) return r->Fail(filter.error());
  int64_t limit = 0;
  if (const std::string* l = r->query.Find("limit"); l && !l->empty()) {
    if (!ParseInt64(*l, limit) || limit < 0) limit = 0;
  }
  std::string after;
  int64_t token_rv = 0;
  if (const std::string* c = r->query.Find("continue"); c && !c->empty()) {
    std::string raw;
    Result<Document> token = api::ParseJson(UnBase64Url(*c, raw) ? raw : std::string());
    if (!token || !token->IsObject() || !token->HasMember("start") ||
        !(*token)["start"].IsString() || !token->HasMember("rv") || !(*token)["rv"].IsInt64() ||
        (*token)["rv"].GetInt64() <= 0) {
      return r->Fail(
          BadRequestError("continue key is not valid: incorrect encoded start "
                          "resourceVersion (version meta.k8s.io/v1)"));
    }
    after = StringOf((*token)["start"]);
    token_rv = (*token)["rv"].GetInt64();
  }
  ApiResult<std::optional<api::TableOptions>> table =
      NegotiateTable(r->http.Header("Accept"), r->query.Get("includeObject"));
  if (!table) return r->Fail(table.error());
  auto shared_filter = std::make_shared<ObjectFilter>(std::move(*filter));
  registry_->Sync(r->info->resource, [this, r, shared_filter, limit, after = std::move(after),
                                      token_rv, table = *table] {
    WatchCache& cache = registry_->cache(r->info->resource);
    WatchCache::ListResult list;
    if (token_rv > 0) {
      Result<WatchCache::ListResult> at = cache.ListAt(token_rv, *shared_filter, after, limit);
      if (!at) {
        if (at.error().code() == StatusCode::kGone) {
          return r->Fail(NewResourceExpired(
              "The provided continue parameter is too old to display a consistent list result. "
              "You can start a new list without the continue parameter."));
        }
        return r->Fail(FromStatus(at.error()));
      }
      list = std::move(*at);
    } else {
      list = cache.List(*shared_filter, after, limit);
    }
    const std::string rv = std::to_string(list.revision);
    std::string token;
    if (!list.last_key.empty()) {
      std::string raw = R"({"v":"meta.k8s.io/v1","rv":)" + rv + R"(,"start":)";
      rapidjson::Value key(list.last_key.c_str(),
                           static_cast<rapidjson::SizeType>(list.last_key.size()));
      raw.append(api::EncodeJson(key)).append("}");
      token = Base64Url(raw);
    }
    std::string out;
    if (table) {
      out = EncodeTableOf(r->info->resource, *table, list.items, rv, token);
    } else {
      size_t total = 128 + token.size();
      for (const ObjectPtr& obj : list.items) total += obj->json->size() + 1;
      out.reserve(total);
      out.append(R"({"kind":")").append(r->info->list_kind);
      out.append(R"(","apiVersion":")").append(r->info->api_version);
      out.append(R"(","metadata":{"resourceVersion":")").append(rv).append("\"");
      if (!token.empty()) out.append(R"(,"continue":")").append(token).append("\"");
      out.append(R"(},"items":[)");
      for (size_t i = 0; i < list.items.size(); ++i) {
        if (i) out.push_back(',');
        out.append(*list.items[i]->json);
      }
      out.append("]}");
    }
    r->responder->Respond(200, kJson, MakeBody(std::move(out)));
  });
}

void ApiServer::Get(const std::shared_ptr<Request>& r) {
  registry_->Sync(r->info->resource, [this, r] {
    ObjectPtr obj = registry_->cache(r->info->resource).Get(r->namespace_, r->name);
    if (!obj) return r->Fail(NotFoundError(*r->info, r->name));
    ApiResult<std::optional<api::TableOptions>> table =
        NegotiateTable(r->http.Header("Accept"), r->query.Get("includeObject"));
    if (!table) return r->Fail(table.error());
    if (!*table) return RespondBytes(*r->responder, 200, obj->json);
    r->responder->Respond(
        200, kJson,
        MakeBody(EncodeTableOf(r->info->resource, **table, std::span<const ObjectPtr>(&obj, 1),
                               std::to_string(obj->revision))));
  });
}

void ApiServer::Watch(const std::shared_ptr<Request>& r) {
  ApiResult<ObjectFilter> filter = ParseFilter(*r->info, r->namespace_, r->query);
  if (!filter) return r->Fail(filter.error());
  int64_t rv = 0;
  std::string_view rv_text = r->query.Get("resourceVersion");
  if (!rv_text.empty() && !ParseInt64(rv_text, rv)) {
    return r->Fail(BadRequestError("invalid resourceVersion: " + std::string(rv_text)));
  }
  int64_t timeout = 0;
  if (const std::string* t = r->query.Find("timeoutSeconds"); t && !t->empty()) {
    if (!ParseInt64(*t, timeout) || timeout < 0) timeout = 0;
  }
  ApiResult<std::optional<api::TableOptions>> table =
      NegotiateTable(r->http.Header("Accept"), r->query.Get("includeObject"));
  if (!table) return r->Fail(table.error());
  const bool bookmarks = r->query.Flag("allowWatchBookmarks");
  auto shared_filter = std::make_shared<ObjectFilter>(std::move(*filter));
  registry_->Sync(
      r->info->resource, [this, r, shared_filter, rv, timeout, table = *table, bookmarks] {
        std::shared_ptr<HttpStream> stream = r->responder->StartStream(
            200, table ? "application/json;as=Table;v=v1;g=meta.k8s.io" : kJson);
        auto sink = std::make_shared<WatchStream>(*r->info, stream, table, bookmarks);
        auto watch = registry_->cache(r->info->resource).StartWatch(rv, *shared_filter, sink);
        if (!watch) {
          sink->WriteError(FromStatus(watch.error()));
          stream->Close();
          return;
        }
        auto handle = std::make_shared<std::unique_ptr<WatchCache::WatchHandle>>(std::move(*watch));
        uint64_t timer = 0;
        if (timeout > 0) {
          std::weak_ptr<HttpStream> weak = stream;
          timer = timers_.After(std::chrono::seconds(timeout), [weak] {
            if (auto s = weak.lock()) s->Close();
          });
        }
        stream->OnClose([this, handle, timer] {
          handle->reset();
          if (timer) timers_.Cancel(timer);
        });
      });
}

namespace {

// The fieldValidation query parameter (upstream handlers/rest.go), or the 422 of a bad value.
ApiResult<api::FieldValidation> FieldValidationOf(const Query& query,
                                                  std::string_view options_kind) {
  const std::string* value = query.Find("fieldValidation");
  Result<api::FieldValidation> mode =
      api::ParseFieldValidation(value != nullptr ? *value : "", options_kind);
  if (!mode) return ApiErr(FromStatus(mode.error()));
  return *mode;
}

// The unknown and duplicate fields of a create or update body, as upstream's strict decoder
// finds them: dropped whatever the mode (nothing unknown is stored). Strict: 400 `Pod in
// version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.x"`,
// unless the body also has a type error, which wins (the registry reports it). Warn: one
// warning each. Protobuf bodies have no unknown fields to find.
ApiResult<void> CheckBodyFields(const ResourceInfo& info, std::string_view content_type,
                                Document& body, api::FieldValidation mode,
                                std::vector<std::string>* warnings) {
  if (MediaType(content_type) == "application/vnd.kubernetes.protobuf") return {};
  api::FieldProblems problems;
  api::PruneUnknownFields(body, api::ServedSchema().FindKind(info.group, info.version, info.kind),
                          body.GetAllocator(),
                          mode == api::FieldValidation::kIgnore ? nullptr : &problems);
  if (problems.messages.empty()) return {};
  if (mode == api::FieldValidation::kWarn) {
    warnings->insert(warnings->end(), problems.messages.begin(), problems.messages.end());
    return {};
  }
  if (!DecodeTyped(info.resource, body)) return {};
  return ApiErr(BadRequestError(api::CannotBeHandledAs(info.kind, info.version, info.kind,
                                                       api::StrictDecodingError(problems))));
}

// The manager a write records in metadata.managedFields (handlers/rest.go managerOrUserAgent):
// the fieldManager query parameter, else the User-Agent up to its first `/` (prefixFromUserAgent:
// printable characters only, at most 128 bytes), else `unknown` as buildmanagerinfo.go names an
// empty manager. Never empty: every HTTP write is tracked.
std::string FieldManagerOf(const Query& query, std::string_view user_agent) {
  if (const std::string* m = query.Find("fieldManager"); m != nullptr && !m->empty()) return *m;
  std::string out;
  for (const char c : user_agent.substr(0, user_agent.find('/'))) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) continue;
    if (out.size() >= 128) break;
    out.push_back(c);
  }
  return out.empty() ? "unknown" : out;
}

// validation.ValidatePatchOptions: apply needs a fieldManager, and only apply may say `force`.
// 422 `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for
// apply patch`.
ApiResult<void> ValidatePatchOptions(const Query& query, api::PatchType type) {
  FieldErrorList errors;
  if (type != api::PatchType::kApplyPatch) {
    if (query.Find("force") != nullptr) {
      errors.push_back(FieldError::Forbidden("force", "may not be specified for non-apply patch"));
    }
  } else if (query.Get("fieldManager").empty()) {
    errors.push_back(FieldError::Required("fieldManager", "is required for apply patch"));
  }
  if (errors.empty()) return {};
  return ApiErr(NewInvalid("meta.k8s.io", "PatchOptions", "", errors));
}

// An apply configuration (YAML, or JSON, which is YAML) as JSON text; 400 `error decoding YAML:
// ...` when it does not parse. Its unknown fields are refused whatever fieldValidation says, as
// SMD's typed conversion does (structuredmerge.go): 400 `failed to create typed patch object
// (default/p1; /v1, Kind=Pod): .spec.x: field not declared in schema`. fieldValidation Strict or
// Warn (the default) then look for duplicate keys, as upstream's yaml.UnmarshalStrict into a map:
// 400 `error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:` with
// one `line N: key "k" already set in map` per repeat, or those lines as warnings. A repeated key
// otherwise takes its last value, as goyaml's non-strict decoding does.
ApiResult<std::string> DecodeApplyConfiguration(const ResourceInfo& info, std::string_view body,
                                                api::FieldValidation mode,
                                                std::vector<std::string>* warnings) {
  std::vector<std::string> duplicates;
  Result<Document> doc =
      api::YamlToJson(body, mode != api::FieldValidation::kIgnore ? &duplicates : nullptr);
  if (!doc) return ApiErr(BadRequestError("error decoding YAML: " + doc.error().message()));
  if (doc->IsNull()) doc->SetObject();  // an empty document is an empty map upstream
  api::FieldProblems unknown;
  Document pruned;
  pruned.CopyFrom(*doc, pruned.GetAllocator());
  api::PruneUnknownFields(pruned, api::ServedSchema().FindKind(info.group, info.version, info.kind),
                          pruned.GetAllocator(), &unknown);
  std::vector<std::string> errors;
  for (const std::string& m : unknown.messages) {
    // `unknown field "spec.x"` -> `.spec.x: field not declared in schema`
    const size_t open = m.find('"');
    if (!m.starts_with("unknown field") || open == std::string::npos) continue;
    errors.push_back("." + m.substr(open + 1, m.size() - open - 2) +
                     ": field not declared in schema");
  }
  if (!errors.empty()) {
    const rapidjson::Value* meta =
        doc->IsObject() && doc->HasMember("metadata") ? &(*doc)["metadata"] : nullptr;
    auto str = [&](const char* name) {
      if (meta == nullptr || !meta->IsObject() || !meta->HasMember(name)) return std::string();
      const rapidjson::Value& v = (*meta)[name];
      return v.IsString() ? std::string(v.GetString(), v.GetStringLength()) : std::string();
    };
    std::string message = "failed to create typed patch object (" + str("namespace") + "/" +
                          str("name") + "; " + std::string(info.group) + "/" +
                          std::string(info.version) + ", Kind=" + std::string(info.kind) + "): ";
    if (errors.size() == 1) {
      message += errors[0];
    } else {  // SMD ValidationErrors.Error()
      message += "errors:";
      for (const std::string& e : errors) message += "\n  " + e;
    }
    return ApiErr(BadRequestError(message));
  }
  // Upstream checks the apply configuration with yaml.UnmarshalStrict once the apply itself has
  // succeeded, whether the body is YAML or JSON: duplicate keys, as goyaml reports them.
  if (!duplicates.empty() && mode == api::FieldValidation::kStrict) {
    std::string message =
        "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:";
    for (const std::string& d : duplicates) message.append("\n  ").append(d);
    return ApiErr(BadRequestError(std::move(message)));
  }
  warnings->insert(warnings->end(), duplicates.begin(), duplicates.end());
  return api::EncodeJson(*doc);
}

}  // namespace

void ApiServer::Create(const std::shared_ptr<Request>& r) {
  ApiResult<api::FieldValidation> mode = FieldValidationOf(r->query, "CreateOptions");
  if (!mode) return r->Fail(mode.error());
  const std::string_view content_type = r->http.Header("Content-Type");
  ApiResult<Document> body = DecodeBody(r->BodyKind(), content_type, r->http.body);
  if (!body) return r->Fail(body.error());
  std::vector<std::string> warnings;
  if (auto c = CheckBodyFields(*r->info, content_type, *body, *mode, &warnings); !c) {
    return r->Fail(c.error());
  }
  r->Warn(warnings);
  WriteOptions options;
  options.dry_run = r->query.Get("dryRun") == "All";
  options.field_manager = FieldManagerOf(r->query, r->http.Header("User-Agent"));
  registry_->Create(*r->info, r->namespace_, std::move(*body), options,
                    [r](ApiResult<store::Bytes> result) {
                      if (!result) return r->Fail(result.error());
                      RespondBytes(*r->responder, 201, *result);
                    });
}

void ApiServer::Update(const std::shared_ptr<Request>& r) {
  ApiResult<api::FieldValidation> mode = FieldValidationOf(r->query, "UpdateOptions");
  if (!mode) return r->Fail(mode.error());
  const std::string_view content_type = r->http.Header("Content-Type");
  ApiResult<Document> body = DecodeBody(r->BodyKind(), content_type, r->http.body);
  if (!body) return r->Fail(body.error());
  std::vector<std::string> warnings;
  if (auto c = CheckBodyFields(*r->info, content_type, *body, *mode, &warnings); !c) {
    return r->Fail(c.error());
  }
  r->Warn(warnings);
  WriteOptions options;
  options.dry_run = r->query.Get("dryRun") == "All";
  options.field_manager = FieldManagerOf(r->query, r->http.Header("User-Agent"));
  const server::Subresource sub =
      r->subresource == "status" ? server::Subresource::kStatus : server::Subresource::kNone;
  if (sub == server::Subresource::kStatus && !r->info->has_status) {
    return r->Fail(NotFoundResource());
  }
  registry_->Update(*r->info, r->namespace_, r->name, sub, std::move(*body), options,
                    [r](ApiResult<store::Bytes> result) {
                      if (!result) return r->Fail(result.error());
                      RespondBytes(*r->responder, 200, *result);
                    });
}

void ApiServer::Patch(const std::shared_ptr<Request>& r) {
  Result<api::PatchType> type = api::ParsePatchType(r->http.Header("Content-Type"));
  if (!type) return r->Fail(FromStatus(type.error()));
  if (auto v = ValidatePatchOptions(r->query, *type); !v) return r->Fail(v.error());
  ApiResult<api::FieldValidation> mode = FieldValidationOf(r->query, "PatchOptions");
  if (!mode) return r->Fail(mode.error());
  WriteOptions options;
  options.dry_run = r->query.Get("dryRun") == "All";
  options.field_validation = *mode;
  options.warnings = std::make_shared<std::vector<std::string>>();
  options.field_manager = FieldManagerOf(r->query, r->http.Header("User-Agent"));
  const server::Subresource sub =
      r->subresource == "status" ? server::Subresource::kStatus : server::Subresource::kNone;
  if (sub == server::Subresource::kStatus && !r->info->has_status) {
    return r->Fail(NotFoundResource());
  }
  std::string patch = std::move(r->http.body);
  if (*type == api::PatchType::kApplyPatch) {
    ApiResult<std::string> applied =
        DecodeApplyConfiguration(*r->info, patch, *mode, options.warnings.get());
    if (!applied) return r->Fail(applied.error());
    patch = std::move(*applied);
    options.field_validation.reset();  // the apply configuration was checked above
    options.force = r->query.Flag("force");
    options.created = std::make_shared<bool>(false);
  }
  registry_->Patch(
      *r->info, r->namespace_, r->name, sub, *type, std::move(patch), options,
      [r, warnings = options.warnings, created = options.created](ApiResult<store::Bytes> result) {
        if (!result) return r->Fail(result.error());
        r->Warn(*warnings);
        RespondBytes(*r->responder, created && *created ? 201 : 200, *result);
      });
}

void ApiServer::Delete(const std::shared_ptr<Request>& r) {
  if (!r->subresource.empty()) return r->Fail(MethodNotAllowed());
  ApiResult<DeleteOptions> options =
      ParseDeleteOptions(r->http.Header("Content-Type"), r->http.body, r->query);
  if (!options) return r->Fail(options.error());
  registry_->Delete(*r->info, r->namespace_, r->name, std::move(*options),
                    [r](ApiResult<store::Bytes> result) {
                      if (!result) return r->Fail(result.error());
                      RespondBytes(*r->responder, 200, *result);
                    });
}

void ApiServer::DeleteCollection(const std::shared_ptr<Request>& r) {
  // Namespaced collections are deleted one namespace at a time, as upstream routes them.
  if (r->info->resource == Resource::kNamespaces ||
      (r->info->namespaced && r->namespace_.empty()) || !r->subresource.empty()) {
    return r->Fail(MethodNotAllowed());
  }
  ApiResult<ObjectFilter> filter = ParseFilter(*r->info, r->namespace_, r->query);
  if (!filter) return r->Fail(filter.error());
  ApiResult<DeleteOptions> options =
      ParseDeleteOptions(r->http.Header("Content-Type"), r->http.body, r->query);
  if (!options) return r->Fail(options.error());
  auto shared_filter = std::make_shared<ObjectFilter>(std::move(*filter));
  auto shared_options = std::make_shared<DeleteOptions>(std::move(*options));
  registry_->Sync(r->info->resource, [this, r, shared_filter, shared_options] {
    WatchCache::ListResult list = registry_->cache(r->info->resource).List(*shared_filter);
    struct State {
      std::mutex mu;
      std::vector<store::Bytes> deleted;
      size_t remaining;
    };
    auto state = std::make_shared<State>();
    state->remaining = list.items.size();
    auto finish = [r, state] {
      std::string out = R"({"kind":")";
      out.append(r->info->list_kind).append(R"(","apiVersion":")").append(r->info->api_version);
      out.append(R"(","metadata":{},"items":[)");
      for (size_t i = 0; i < state->deleted.size(); ++i) {
        if (i) out.push_back(',');
        out.append(*state->deleted[i]);
      }
      out.append("]}");
      r->responder->Respond(200, kJson, MakeBody(std::move(out)));
    };
    if (list.items.empty()) return finish();
    for (const ObjectPtr& obj : list.items) {
      DeleteOptions each;
      each.dry_run = shared_options->dry_run;
      registry_->Delete(*r->info, obj->meta().namespace_, obj->meta().name, each,
                        [state, finish](ApiResult<store::Bytes> result) {
                          bool last;
                          {
                            std::lock_guard<std::mutex> lock(state->mu);
                            if (result) state->deleted.push_back(*result);
                            last = --state->remaining == 0;
                          }
                          if (last) finish();
                        });
    }
  });
}

bool ApiServer::ServeStatic(const HttpRequest& request, HttpResponder& responder) {
  const std::string_view target = request.target;
  const size_t qpos = target.find('?');
  const std::string_view path = target.substr(0, qpos);
  if (request.method != "GET" && request.method != "HEAD") return false;
  const Query query(qpos == std::string_view::npos ? std::string_view() : target.substr(qpos + 1));
  const std::string_view accept = request.Header("Accept");
  auto respond = [&](const SharedJson& doc, std::string_view type = kJson) {
    responder.Respond(200, type, doc);
    return true;
  };
  if (path == "/version" || path == "/version/") return respond(discovery_.Version());
  if (path == "/api" || path == "/api/" || path == "/apis" || path == "/apis/") {
    const DiscoveryFormat format = NegotiateDiscovery(accept);
    const bool core = path.starts_with("/api") && !path.starts_with("/apis");
    return respond(core ? discovery_.Api(format) : discovery_.Apis(format),
                   DiscoveryContentType(format));
  }
  std::vector<std::string> segs = SplitPath(path);
  if ((segs.size() == 2 && segs[0] == "api") || (segs.size() == 3 && segs[0] == "apis")) {
    const SharedJson* doc = segs.size() == 2 ? discovery_.ApiResourceList("", segs[1])
                                             : discovery_.ApiResourceList(segs[1], segs[2]);
    if (doc == nullptr) {
      RespondError(responder, NotFoundResource());
      return true;
    }
    return respond(*doc);
  }
  if (!segs.empty() && segs[0] == "openapi") {
    const std::string hash(query.Get("hash"));
    OpenApiResponse answer =
        ServeOpenApi(openapi_, {.path = path,
                                .hash = hash,
                                .accept = accept,
                                .if_none_match = request.Header("If-None-Match")});
    if (answer.status == 0) {
      RespondError(responder, NotFoundResource());
      return true;
    }
    responder.Respond(answer.status, answer.content_type, std::move(answer.body),
                      std::move(answer.headers));
    return true;
  }
  for (HealthEndpoint endpoint :
       {HealthEndpoint::kHealthz, HealthEndpoint::kLivez, HealthEndpoint::kReadyz}) {
    const std::string_view name = HealthEndpointName(endpoint);
    if (segs.empty() || segs[0] != name) continue;
    std::vector<HealthCheck> checks;
    for (std::string_view check : HealthCheckNames(endpoint)) checks.push_back({check, true});
    HealthResponse health;
    if (segs.size() == 1) {
      std::vector<std::string_view> exclude;
      for (const auto& [k, v] : query.params) {
        if (k == "exclude") exclude.push_back(v);
      }
      health = HealthBody(endpoint, checks, query.Find("verbose") != nullptr, exclude);
    } else {
      std::string check = segs[1];
      for (size_t i = 2; i < segs.size(); ++i) check.append("/").append(segs[i]);
      bool known = false;
      for (std::string_view c : HealthCheckNames(endpoint)) known = known || c == check;
      if (!known) {
        RespondError(responder, NotFoundResource());
        return true;
      }
      health = SingleHealthCheckBody(true);
    }
    responder.Respond(health.code, kHealthContentType, MakeBody(std::move(health.body)));
    return true;
  }
  return false;
}

void ApiServer::Subresource(const std::shared_ptr<Request>& r) {
  const bool pods = r->info->resource == Resource::kPods;
  if (!pods || (r->subresource != "binding" && r->subresource != "eviction")) {
    return r->Fail(NotFoundResource());
  }
  if (r->http.method != "POST") return r->Fail(MethodNotAllowed());
  ApiResult<Document> body =
      DecodeBody(r->BodyKind(), r->http.Header("Content-Type"), r->http.body);
  if (!body) return r->Fail(body.error());
  WriteOptions options;
  options.dry_run = r->query.Get("dryRun") == "All";
  auto done = [r](ApiResult<void> result) {
    if (!result) return r->Fail(result.error());
    r->responder->Respond(201, kJson, MakeBody(SuccessStatusJson(201)));
  };
  if (r->subresource == "binding") {
    registry_->Bind(r->namespace_, r->name, std::move(*body), options, std::move(done));
  } else {
    registry_->Evict(r->namespace_, r->name, std::move(*body), options, std::move(done));
  }
}

}  // namespace kt::server
