#include "client/rest/kubeconfig.h"

#include <cstdlib>
#include <filesystem>

#include "api/manifest.h"
#include "core/file.h"

namespace kt::client {

namespace {

using rapidjson::Value;

std::string Str(const Value& obj, const char* name) {
  if (!obj.IsObject()) return "";
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || !it->value.IsString()) return "";
  return {it->value.GetString(), it->value.GetStringLength()};
}

// The entry of a named list (clusters, users, contexts) with this name, or null.
const Value* Named(const Value& root, const char* list, const char* field,
                   const std::string& name) {
  auto it = root.FindMember(list);
  if (it == root.MemberEnd() || !it->value.IsArray()) return nullptr;
  for (const Value& entry : it->value.GetArray()) {
    if (Str(entry, "name") != name) continue;
    auto f = entry.FindMember(field);
    return f == entry.MemberEnd() ? nullptr : &f->value;
  }
  return nullptr;
}

// A PEM from "<field>-data" (base64) or "<field>" (a file, relative to the kubeconfig).
Result<std::string> Pem(const Value& obj, const std::string& field, const std::string& dir,
                        const std::string& where) {
  const std::string data = Str(obj, (field + "-data").c_str());
  if (!data.empty()) {
    Result<std::string> d = DecodeBase64(data);
    if (!d) return Err(d.error().WithPrefix(where + "." + field + "-data: "));
    return d;
  }
  std::string file = Str(obj, field.c_str());
  if (file.empty()) return std::string();
  if (!std::filesystem::path(file).is_absolute())
    file = (std::filesystem::path(dir) / file).string();
  Result<std::string> f = ReadFile(file);
  if (!f) return Err(f.error().WithPrefix(where + "." + field + ": "));
  return f;
}

}  // namespace

Result<std::string> DecodeBase64(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=' || c == '\n' || c == '\r' || c == ' ' || c == '\t') continue;
    const int v = value(c);
    if (v < 0) return Err(BadRequest("illegal base64 data"));
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

std::string DefaultKubeconfigPath() {
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    std::string paths(env);
    return paths.substr(0, paths.find(':'));
  }
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.kube/config";
}

Result<RestConfig> ParseKubeconfig(std::string_view text, const std::string& dir,
                                   std::string_view context) {
  Result<rapidjson::Document> doc = api::YamlToJson(text);
  if (!doc) return Err(doc.error());
  if (!doc->IsObject()) return Err(BadRequest("not a kubeconfig (expected a mapping)"));
  const Value& root = *doc;
  std::string ctx_name = context.empty() ? Str(root, "current-context") : std::string(context);
  if (ctx_name.empty()) return Err(BadRequest("no current-context and no --context given"));
  const Value* ctx = Named(root, "contexts", "context", ctx_name);
  if (ctx == nullptr) return Err(NotFound("context \"" + ctx_name + "\" not found"));
  const std::string cluster_name = Str(*ctx, "cluster");
  const std::string user_name = Str(*ctx, "user");
  const Value* cluster = Named(root, "clusters", "cluster", cluster_name);
  if (cluster == nullptr) {
    return Err(
        NotFound("cluster \"" + cluster_name + "\" of context \"" + ctx_name + "\" not found"));
  }
  RestConfig c;
  c.server = Str(*cluster, "server");
  if (c.server.empty()) return Err(BadRequest("cluster \"" + cluster_name + "\" has no server"));
  if (std::string ns = Str(*ctx, "namespace"); !ns.empty()) c.namespace_ = ns;
  const std::string cwhere = "clusters[" + cluster_name + "]";
  Result<std::string> ca = Pem(*cluster, "certificate-authority", dir, cwhere);
  if (!ca) return Err(ca.error());
  c.ca_pem = std::move(*ca);
  if (auto it = cluster->FindMember("insecure-skip-tls-verify");
      it != cluster->MemberEnd() && it->value.IsBool()) {
    c.insecure_skip_tls_verify = it->value.GetBool();
  }
  c.tls_server_name = Str(*cluster, "tls-server-name");

  const Value* user = user_name.empty() ? nullptr : Named(root, "users", "user", user_name);
  if (user != nullptr && user->IsObject()) {
    const std::string uwhere = "users[" + user_name + "]";
    for (const char* unsupported : {"exec", "auth-provider", "username", "password"}) {
      if (user->HasMember(unsupported)) {
        return Err(BadRequest(uwhere + "." + unsupported + ": not supported by kubetaint"));
      }
    }
    c.bearer_token = Str(*user, "token");
    if (c.bearer_token.empty()) {
      std::string file = Str(*user, "tokenFile");
      if (!file.empty()) {
        if (!std::filesystem::path(file).is_absolute()) {
          file = (std::filesystem::path(dir) / file).string();
        }
        Result<std::string> t = ReadFile(file);
        if (!t) return Err(t.error().WithPrefix(uwhere + ".tokenFile: "));
        c.bearer_token = *t;
        while (!c.bearer_token.empty() &&
               (c.bearer_token.back() == '\n' || c.bearer_token.back() == '\r')) {
          c.bearer_token.pop_back();
        }
      }
    }
    Result<std::string> cert = Pem(*user, "client-certificate", dir, uwhere);
    if (!cert) return Err(cert.error());
    Result<std::string> key = Pem(*user, "client-key", dir, uwhere);
    if (!key) return Err(key.error());
    c.client_cert_pem = std::move(*cert);
    c.client_key_pem = std::move(*key);
  }
  return c;
}

Result<RestConfig> LoadKubeconfig(const std::string& path, std::string_view context) {
  Result<std::string> text = ReadFile(path);
  if (!text) return Err(text.error());
  Result<RestConfig> c =
      ParseKubeconfig(*text, std::filesystem::path(path).parent_path().string(), context);
  if (!c) return Err(c.error().WithPrefix(path + ": "));
  return c;
}

}  // namespace kt::client
