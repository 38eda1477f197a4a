#include "admission/config_file.h"

#include <filesystem>

#include "api/codec.h"
#include "api/manifest.h"
#include "core/file.h"

namespace kt::admission {

namespace {

using rapidjson::Value;

Status Expected(std::string_view where, std::string_view want, const Value& got) {
  return BadRequest(std::string(where) + ": expected " + std::string(want) + ", got " +
                    std::string(api::JsonTypeName(got)));
}

// A string member; absent or null reads as "".
Status StringMember(const Value& obj, const char* name, std::string_view where, std::string* out) {
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || it->value.IsNull()) return Status::Ok();
  if (!it->value.IsString())
    return Expected(std::string(where) + "." + name, "a string", it->value);
  out->assign(it->value.GetString(), it->value.GetStringLength());
  return Status::Ok();
}

// The file's bytes, or the error as Go's os.ReadFile words it (a bad flag: kBadRequest).
Result<std::string> ReadConfigFile(const std::string& path) {
  Result<std::string> bytes = kt::ReadFile(path);
  if (!bytes) return Err(BadRequest(bytes.error().message()));
  return bytes;
}

}  // namespace

Result<std::vector<PluginConfiguration>> ReadAdmissionConfiguration(const std::string& path) {
  Result<std::string> text = ReadConfigFile(path);
  if (!text) {
    return Err(BadRequest("unable to read admission control configuration from \"" + path + "\" [" +
                          text.error().message() + "]"));
  }
  Result<rapidjson::Document> doc = api::YamlToJson(*text);
  if (!doc) return Err(doc.error().WithPrefix(path + ": "));
  if (!doc->IsObject()) return Err(Expected(path, "an AdmissionConfiguration object", *doc));
  std::string api_version, kind;
  if (Status s = StringMember(*doc, "apiVersion", path, &api_version); !s.ok()) return Err(s);
  if (Status s = StringMember(*doc, "kind", path, &kind); !s.ok()) return Err(s);
  const bool known_version = api_version == "apiserver.config.k8s.io/v1" ||
                             api_version == "apiserver.config.k8s.io/v1alpha1" ||
                             api_version == "apiserver.k8s.io/v1alpha1";
  if (!known_version || kind != "AdmissionConfiguration") {
    return Err(BadRequest(path + ": apiVersion \"" + api_version + "\", kind \"" + kind +
                          "\": want apiVersion apiserver.config.k8s.io/v1 and kind "
                          "AdmissionConfiguration"));
  }
  std::vector<PluginConfiguration> out;
  auto plugins = doc->FindMember("plugins");
  if (plugins == doc->MemberEnd() || plugins->value.IsNull()) return out;
  if (!plugins->value.IsArray()) return Err(Expected(path + ": plugins", "a list", plugins->value));
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  for (rapidjson::SizeType i = 0; i < plugins->value.Size(); ++i) {
    const Value& entry = plugins->value[i];
    PluginConfiguration p;
    p.where = path + ": plugins[" + std::to_string(i) + "]";
    if (!entry.IsObject()) return Err(Expected(p.where, "an object", entry));
    if (Status s = StringMember(entry, "name", p.where, &p.name); !s.ok()) return Err(s);
    if (p.name.empty()) return Err(BadRequest(p.where + ".name: Required value"));
    if (Status s = StringMember(entry, "path", p.where, &p.path); !s.ok()) return Err(s);
    // Upstream makes a relative path absolute against the configuration file's directory.
    if (!p.path.empty() && std::filesystem::path(p.path).is_relative()) {
      p.path = std::filesystem::absolute(dir / p.path).lexically_normal().string();
    }
    if (auto c = entry.FindMember("configuration"); c != entry.MemberEnd() && !c->value.IsNull()) {
      if (!c->value.IsObject())
        return Err(Expected(p.where + ".configuration", "an object", c->value));
      auto copy = std::make_shared<rapidjson::Document>();
      copy->CopyFrom(c->value, copy->GetAllocator());
      p.configuration = std::move(copy);
    }
    out.push_back(std::move(p));
  }
  return out;
}

Result<PluginConfig> ConfigFor(std::span<const PluginConfiguration> plugins,
                               std::string_view name) {
  for (const PluginConfiguration& p : plugins) {
    if (p.name != name) continue;
    if (p.configuration) return PluginConfig{p.configuration, p.where + ".configuration"};
    if (p.path.empty()) return PluginConfig{};
    Result<std::string> text = ReadConfigFile(p.path);
    if (!text) return Err(text.error().WithPrefix(p.where + ".path: "));
    Result<rapidjson::Document> doc = api::YamlToJson(*text);
    if (!doc) return Err(doc.error().WithPrefix(p.path + ": "));
    return PluginConfig{std::make_shared<const rapidjson::Document>(std::move(*doc)), p.path};
  }
  return PluginConfig{};
}

}  // namespace kt::admission
