#include "server/discovery.h"

#include <algorithm>
#include <array>

#include <rapidjson/writer.h>

#include "api/json_writer.h"
#include "core/version.h"

namespace kt::server {

namespace {

using JsonWriter = api::JsonWriter;

void Put(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void PutArray(JsonWriter& w, std::span<const std::string_view> items) {
  w.StartArray();
  for (std::string_view s : items) Put(w, s);
  w.EndArray();
}

// The JSON `w` wrote into `out`.
std::string Done(JsonWriter& w, std::string& out) {
  w.Finish();
  return std::move(out);
}

// --- What is served (upstream 1.35 discovery for these resources) -----------------------------

constexpr std::array<std::string_view, 8> kAllVerbs = {
    "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"};
// Upstream namespaces have no deletecollection.
constexpr std::array<std::string_view, 7> kNamespaceVerbs = {"create", "delete", "get",  "list",
                                                             "patch",  "update", "watch"};
constexpr std::array<std::string_view, 3> kStatusVerbs = {"get", "patch", "update"};
constexpr std::array<std::string_view, 1> kCreateVerb = {"create"};

struct Subresource {
  std::string_view name;  // "status"
  // The kind the subresource takes and returns; empty group/version/kind = the parent's.
  std::string_view group;
  std::string_view version;
  std::string_view kind;
  std::span<const std::string_view> verbs;
};

struct ResourceDef {
  std::string_view group;
  std::string_view version;
  std::string_view plural;
  std::string_view singular;
  std::string_view kind;
  bool namespaced;
  std::span<const std::string_view> verbs;
  std::span<const std::string_view> short_names;
  std::span<const std::string_view> categories;
  // base64(sha256("<group>/<version>/<Kind>")[:8]), as upstream's storageversionhash.
  std::string_view storage_version_hash;
  std::span<const Subresource> subresources;
};

constexpr std::array<std::string_view, 1> kAll = {"all"};
constexpr std::array<std::string_view, 1> kEv = {"ev"};
constexpr std::array<std::string_view, 1> kNs = {"ns"};
constexpr std::array<std::string_view, 1> kNo = {"no"};
constexpr std::array<std::string_view, 1> kPo = {"po"};
constexpr std::array<std::string_view, 1> kPc = {"pc"};
constexpr std::array<std::string_view, 1> kDs = {"ds"};

constexpr std::array<Subresource, 1> kStatusOnly = {
    Subresource{"status", "", "", "", kStatusVerbs}};
constexpr std::array<Subresource, 3> kPodSubresources = {
    Subresource{"binding", "", "v1", "Binding", kCreateVerb},
    // drain looks for exactly this row: name pods/eviction, group policy, version v1, kind
    // Eviction (kubectl drain CheckEvictionSupport).
    Subresource{"eviction", "policy", "v1", "Eviction", kCreateVerb},
    Subresource{"status", "", "", "", kStatusVerbs},
};

// Sorted by name within each group version, as upstream lists them.
constexpr std::array<ResourceDef, 7> kResources = {{
    {"", "v1", "events", "event", "Event", true, kAllVerbs, kEv, {}, "r2yiGXH7wu8=", {}},
    {"",
     "v1",
     "namespaces",
     "namespace",
     "Namespace",
     false,
     kNamespaceVerbs,
     kNs,
     {},
     "Q3oi5N2YM8M=",
     kStatusOnly},
    {"", "v1", "nodes", "node", "Node", false, kAllVerbs, kNo, {}, "XwShjMxG9Fs=", kStatusOnly},
    {"", "v1", "pods", "pod", "Pod", true, kAllVerbs, kPo, kAll, "xPOwRZ+Yhw8=", kPodSubresources},
    {"apps", "v1", "daemonsets", "daemonset", "DaemonSet", true, kAllVerbs, kDs, kAll,
     "dd7pWHUlMKQ=", kStatusOnly},
    {"scheduling.k8s.io",
     "v1",
     "priorityclasses",
     "priorityclass",
     "PriorityClass",
     false,
     kAllVerbs,
     kPc,
     {},
     "1QwjyaZjj3Y=",
     {}},
    {"coordination.k8s.io",
     "v1",
     "leases",
     "lease",
     "Lease",
     true,
     kAllVerbs,
     {},
     {},
     "gqkMMb/YqFM=",
     {}},
}};

struct GroupVersion {
  std::string_view group;
  std::string_view version;
};
// Named groups in upstream's discovery order (kube-apiserver group priorities: apps 17800,
// scheduling.k8s.io 16600, coordination.k8s.io 16500).
constexpr std::array<GroupVersion, 3> kNamedGroups = {
    {{"apps", "v1"}, {"scheduling.k8s.io", "v1"}, {"coordination.k8s.io", "v1"}}};
constexpr GroupVersion kCore = {"", "v1"};

bool Serves(GroupVersion gv) {
  return std::any_of(kResources.begin(), kResources.end(), [&](const ResourceDef& r) {
    return r.group == gv.group && r.version == gv.version;
  });
}

std::string GroupVersionString(std::string_view group, std::string_view version) {
  if (group.empty()) return std::string(version);
  return std::string(group) + "/" + std::string(version);
}

// --- Legacy discovery --------------------------------------------------------------------------

void WriteApiResource(JsonWriter& w, std::string_view name, std::string_view singular,
                      bool namespaced, std::string_view group, std::string_view version,
                      std::string_view kind, std::span<const std::string_view> verbs,
                      std::span<const std::string_view> short_names,
                      std::span<const std::string_view> categories, std::string_view hash) {
  // metav1.APIResource member order; group/version only for a kind of another group version.
  w.StartObject();
  Put(w, "name");
  Put(w, name);
  Put(w, "singularName");
  Put(w, singular);
  Put(w, "namespaced");
  w.Bool(namespaced);
  if (!group.empty()) {
    Put(w, "group");
    Put(w, group);
  }
  if (!version.empty()) {
    Put(w, "version");
    Put(w, version);
  }
  Put(w, "kind");
  Put(w, kind);
  Put(w, "verbs");
  PutArray(w, verbs);
  if (!short_names.empty()) {
    Put(w, "shortNames");
    PutArray(w, short_names);
  }
  if (!categories.empty()) {
    Put(w, "categories");
    PutArray(w, categories);
  }
  if (!hash.empty()) {
    Put(w, "storageVersionHash");
    Put(w, hash);
  }
  w.EndObject();
}

// --- Aggregated discovery ----------------------------------------------------------------------

void WriteGvk(JsonWriter& w, std::string_view group, std::string_view version,
              std::string_view kind) {
  w.StartObject();
  Put(w, "group");
  Put(w, group);
  Put(w, "version");
  Put(w, version);
  Put(w, "kind");
  Put(w, kind);
  w.EndObject();
}

void WriteAggregatedGroup(JsonWriter& w, GroupVersion gv) {
  // apidiscovery.k8s.io APIGroupDiscovery.
  w.StartObject();
  Put(w, "metadata");
  w.StartObject();
  if (!gv.group.empty()) {
    Put(w, "name");
    Put(w, gv.group);
  }
  Put(w, "creationTimestamp");
  w.Null();
  w.EndObject();
  Put(w, "versions");
  w.StartArray();
  w.StartObject();
  Put(w, "version");
  Put(w, gv.version);
  Put(w, "resources");
  w.StartArray();
  for (const ResourceDef& r : kResources) {
    if (r.group != gv.group || r.version != gv.version) continue;
    w.StartObject();
    Put(w, "resource");
    Put(w, r.plural);
    Put(w, "responseKind");
    WriteGvk(w, r.group, r.version, r.kind);
    Put(w, "scope");
    Put(w, r.namespaced ? "Namespaced" : "Cluster");
    Put(w, "singularResource");
    Put(w, r.singular);
    Put(w, "verbs");
    PutArray(w, r.verbs);
    if (!r.short_names.empty()) {
      Put(w, "shortNames");
      PutArray(w, r.short_names);
    }
    if (!r.categories.empty()) {
      Put(w, "categories");
      PutArray(w, r.categories);
    }
    if (!r.subresources.empty()) {
      Put(w, "subresources");
      w.StartArray();
      for (const Subresource& s : r.subresources) {
        w.StartObject();
        Put(w, "subresource");
        Put(w, s.name);
        Put(w, "responseKind");
        if (s.kind.empty()) {
          WriteGvk(w, r.group, r.version, r.kind);
        } else {
          WriteGvk(w, s.group, s.version, s.kind);
        }
        Put(w, "verbs");
        PutArray(w, s.verbs);
        w.EndObject();
      }
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
  Put(w, "freshness");
  Put(w, "Current");
  w.EndObject();
  w.EndArray();
  w.EndObject();
}

// --- Accept negotiation ------------------------------------------------------------------------

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
    if (x != y) return false;
  }
  return true;
}

struct MediaRange {
  std::string_view type;  // "application/json"
  std::string_view g, v, as;
  double q = 1;
  size_t position = 0;
};

std::vector<MediaRange> ParseAccept(std::string_view accept) {
  std::vector<MediaRange> out;
  size_t position = 0;
  while (!accept.empty()) {
    size_t comma = accept.find(',');
    std::string_view item = accept.substr(0, comma);
    accept = comma == std::string_view::npos ? std::string_view() : accept.substr(comma + 1);
    MediaRange m;
    m.position = position++;
    size_t semi = item.find(';');
    m.type = Trim(item.substr(0, semi));
    while (semi != std::string_view::npos) {
      item = item.substr(semi + 1);
      semi = item.find(';');
      std::string_view param = item.substr(0, semi);
      size_t eq = param.find('=');
      if (eq == std::string_view::npos) continue;
      std::string_view key = Trim(param.substr(0, eq));
      std::string_view value = Trim(param.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      if (EqualsIgnoreCase(key, "g")) m.g = value;
      if (EqualsIgnoreCase(key, "v")) m.v = value;
      if (EqualsIgnoreCase(key, "as")) m.as = value;
      if (EqualsIgnoreCase(key, "q")) {
        // Only the forms a q-value takes: 0, 1, 0.x (up to three decimals).
        double q = 0;
        bool ok = !value.empty();
        double scale = 0;
        for (char c : value) {
          if (c == '.' && scale == 0) {
            scale = 0.1;
          } else if (c >= '0' && c <= '9') {
            if (scale == 0) {
              q = q * 10 + (c - '0');
            } else {
              q += (c - '0') * scale;
              scale /= 10;
            }
          } else {
            ok = false;
          }
        }
        m.q = ok ? std::min(q, 1.0) : 1;
      }
    }
    if (!m.type.empty()) out.push_back(m);
  }
  // Most preferred first; ties keep their order.
  std::stable_sort(out.begin(), out.end(),
                   [](const MediaRange& a, const MediaRange& b) { return a.q > b.q; });
  return out;
}

// --- Version -----------------------------------------------------------------------------------

std::string_view CompilerName() {
#if defined(__clang__)
  return "clang";
#elif defined(__GNUC__)
  return "gcc";
#else
  return "unknown";
#endif
}

std::string CompilerVersion() {
#if defined(__clang__)
  return std::string("clang++ ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("g++ ") + __VERSION__;
#else
  return "unknown";
#endif
}

std::string_view Platform() {
#if defined(__linux__) && defined(__x86_64__)
  return "linux/amd64";
#elif defined(__linux__) && defined(__aarch64__)
  return "linux/arm64";
#elif defined(__APPLE__) && defined(__aarch64__)
  return "darwin/arm64";
#elif defined(__APPLE__) && defined(__x86_64__)
  return "darwin/amd64";
#else
  return "unknown";
#endif
}

std::string PreviousMinor() {
  int minor = 0;
  for (char c : kKubernetesMinor) minor = minor * 10 + (c - '0');
  return std::to_string(minor > 0 ? minor - 1 : 0);
}

SharedJson Share(std::string s) { return std::make_shared<const std::string>(std::move(s)); }

}  // namespace

// --- Public ------------------------------------------------------------------------------------

std::string VersionJson(const BuildInfo& build) {
  std::string buf;
  JsonWriter w(&buf);
  auto field = [&](std::string_view key, std::string_view value) {
    Put(w, key);
    Put(w, value);
  };
  w.StartObject();
  field("major", kKubernetesMajor);
  field("minor", kKubernetesMinor);
  field("emulationMajor", kKubernetesMajor);
  field("emulationMinor", kKubernetesMinor);
  field("minCompatibilityMajor", kKubernetesMajor);
  field("minCompatibilityMinor", PreviousMinor());
  field("gitVersion", GitVersion());
  field("gitCommit", build.git_commit.empty() ? "unknown" : build.git_commit);
  field("gitTreeState", build.git_tree_state.empty() ? "clean" : build.git_tree_state);
  field("buildDate", build.build_date.empty() ? "1970-01-01T00:00:00Z" : build.build_date);
  field("goVersion", CompilerVersion());
  field("compiler", CompilerName());
  field("platform", Platform());
  w.EndObject();
  return Done(w, buf);
}

DiscoveryFormat NegotiateDiscovery(std::string_view accept) {
  for (const MediaRange& m : ParseAccept(accept)) {
    if (m.q <= 0) continue;
    bool json = EqualsIgnoreCase(m.type, "application/json");
    if (json && EqualsIgnoreCase(m.as, "APIGroupDiscoveryList") && m.g == "apidiscovery.k8s.io") {
      if (m.v == "v2") return DiscoveryFormat::kAggregatedV2;
      if (m.v == "v2beta1") return DiscoveryFormat::kAggregatedV2Beta1;
      continue;  // a version we do not serve
    }
    if (!m.as.empty()) continue;  // some other conversion (Table, PartialObjectMetadata)
    if (json || m.type == "*/*" || EqualsIgnoreCase(m.type, "application/*")) {
      return DiscoveryFormat::kLegacy;
    }
  }
  return DiscoveryFormat::kLegacy;
}

std::string_view DiscoveryContentType(DiscoveryFormat format) {
  switch (format) {
    case DiscoveryFormat::kLegacy:
      return "application/json";
    case DiscoveryFormat::kAggregatedV2:
      return "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    case DiscoveryFormat::kAggregatedV2Beta1:
      return "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
  }
  return "application/json";
}

std::string ApiVersionsJson(std::string_view server_address) {
  std::string buf;
  JsonWriter w(&buf);
  w.StartObject();
  Put(w, "kind");
  Put(w, "APIVersions");
  Put(w, "versions");
  w.StartArray();
  Put(w, kCore.version);
  w.EndArray();
  Put(w, "serverAddressByClientCIDRs");
  w.StartArray();
  w.StartObject();
  Put(w, "clientCIDR");
  Put(w, "0.0.0.0/0");
  Put(w, "serverAddress");
  Put(w, server_address);
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return Done(w, buf);
}

std::string ApiGroupListJson() {
  std::string buf;
  JsonWriter w(&buf);
  auto group_version = [&](GroupVersion gv) {
    w.StartObject();
    Put(w, "groupVersion");
    Put(w, GroupVersionString(gv.group, gv.version));
    Put(w, "version");
    Put(w, gv.version);
    w.EndObject();
  };
  w.StartObject();
  Put(w, "kind");
  Put(w, "APIGroupList");
  Put(w, "apiVersion");
  Put(w, "v1");
  Put(w, "groups");
  w.StartArray();
  for (GroupVersion gv : kNamedGroups) {
    w.StartObject();
    Put(w, "name");
    Put(w, gv.group);
    Put(w, "versions");
    w.StartArray();
    group_version(gv);
    w.EndArray();
    Put(w, "preferredVersion");
    group_version(gv);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Done(w, buf);
}

std::string ApiResourceListJson(std::string_view group, std::string_view version) {
  if (!Serves({group, version})) return {};
  std::string buf;
  JsonWriter w(&buf);
  w.StartObject();
  Put(w, "kind");
  Put(w, "APIResourceList");
  // Upstream's legacy /api/v1 omits apiVersion; named groups carry "v1".
  if (!group.empty()) {
    Put(w, "apiVersion");
    Put(w, "v1");
  }
  Put(w, "groupVersion");
  Put(w, GroupVersionString(group, version));
  Put(w, "resources");
  w.StartArray();
  for (const ResourceDef& r : kResources) {
    if (r.group != group || r.version != version) continue;
    WriteApiResource(w, r.plural, r.singular, r.namespaced, "", "", r.kind, r.verbs, r.short_names,
                     r.categories, r.storage_version_hash);
    for (const Subresource& s : r.subresources) {
      std::string name = std::string(r.plural) + "/" + std::string(s.name);
      bool other_gv = !s.kind.empty() && (s.group != group || s.version != version);
      WriteApiResource(w, name, "", r.namespaced, other_gv ? s.group : "",
                       other_gv ? s.version : "", s.kind.empty() ? r.kind : s.kind, s.verbs, {}, {},
                       "");
    }
  }
  w.EndArray();
  w.EndObject();
  return Done(w, buf);
}

std::string AggregatedDiscoveryJson(bool core, DiscoveryFormat format) {
  std::string buf;
  JsonWriter w(&buf);
  w.StartObject();
  Put(w, "kind");
  Put(w, "APIGroupDiscoveryList");
  Put(w, "apiVersion");
  Put(w, format == DiscoveryFormat::kAggregatedV2Beta1 ? "apidiscovery.k8s.io/v2beta1"
                                                       : "apidiscovery.k8s.io/v2");
  Put(w, "metadata");
  w.StartObject();
  w.EndObject();
  Put(w, "items");
  w.StartArray();
  if (core) {
    WriteAggregatedGroup(w, kCore);
  } else {
    for (GroupVersion gv : kNamedGroups) WriteAggregatedGroup(w, gv);
  }
  w.EndArray();
  w.EndObject();
  return Done(w, buf);
}

Discovery::Discovery(const DiscoveryOptions& options, const BuildInfo& build) {
  version_ = Share(VersionJson(build));
  api_legacy_ = Share(ApiVersionsJson(options.server_address));
  api_v2_ = Share(AggregatedDiscoveryJson(true, DiscoveryFormat::kAggregatedV2));
  api_v2beta1_ = Share(AggregatedDiscoveryJson(true, DiscoveryFormat::kAggregatedV2Beta1));
  apis_legacy_ = Share(ApiGroupListJson());
  apis_v2_ = Share(AggregatedDiscoveryJson(false, DiscoveryFormat::kAggregatedV2));
  apis_v2beta1_ = Share(AggregatedDiscoveryJson(false, DiscoveryFormat::kAggregatedV2Beta1));

  std::vector<GroupVersion> all = {kCore};
  all.insert(all.end(), kNamedGroups.begin(), kNamedGroups.end());
  for (GroupVersion gv : all) {
    group_versions_.push_back({std::string(gv.group), std::string(gv.version),
                               Share(ApiResourceListJson(gv.group, gv.version))});
  }
}

const SharedJson& Discovery::Api(DiscoveryFormat format) const {
  switch (format) {
    case DiscoveryFormat::kAggregatedV2:
      return api_v2_;
    case DiscoveryFormat::kAggregatedV2Beta1:
      return api_v2beta1_;
    case DiscoveryFormat::kLegacy:
      break;
  }
  return api_legacy_;
}

const SharedJson& Discovery::Apis(DiscoveryFormat format) const {
  switch (format) {
    case DiscoveryFormat::kAggregatedV2:
      return apis_v2_;
    case DiscoveryFormat::kAggregatedV2Beta1:
      return apis_v2beta1_;
    case DiscoveryFormat::kLegacy:
      break;
  }
  return apis_legacy_;
}

const SharedJson* Discovery::ApiResourceList(std::string_view group,
                                             std::string_view version) const {
  for (const GroupVersionDocs& d : group_versions_) {
    if (d.group == group && d.version == version) return &d.resource_list;
  }
  return nullptr;
}

// --- Health --------------------------------------------------------------------------------------

std::string_view HealthEndpointName(HealthEndpoint endpoint) {
  switch (endpoint) {
    case HealthEndpoint::kHealthz:
      return "healthz";
    case HealthEndpoint::kLivez:
      return "livez";
    case HealthEndpoint::kReadyz:
      return "readyz";
  }
  return "healthz";
}

std::span<const std::string_view> HealthCheckNames(HealthEndpoint endpoint) {
  // In kube-apiserver's order: the base checks, readyz's extra checks after etcd, the post-start
  // hooks in registration order, and readyz's shutdown check last.
  static constexpr std::array<std::string_view, 8> kLivez = {
      "ping",
      "log",
      "etcd",
      "poststarthook/start-apiserver-admission-initializer",
      "poststarthook/generic-apiserver-start-informers",
      "poststarthook/scheduling/bootstrap-system-priority-classes",
      "poststarthook/start-system-namespaces-controller",
      "poststarthook/bootstrap-controller",
  };
  static constexpr std::array<std::string_view, 11> kReadyz = {
      "ping",
      "log",
      "etcd",
      "etcd-readiness",
      "informer-sync",
      "poststarthook/start-apiserver-admission-initializer",
      "poststarthook/generic-apiserver-start-informers",
      "poststarthook/scheduling/bootstrap-system-priority-classes",
      "poststarthook/start-system-namespaces-controller",
      "poststarthook/bootstrap-controller",
      "shutdown",
  };
  if (endpoint == HealthEndpoint::kReadyz) return kReadyz;
  return kLivez;
}

HealthResponse HealthBody(HealthEndpoint endpoint, std::span<const HealthCheck> checks,
                          bool verbose, std::span<const std::string_view> exclude) {
  // k8s.io/apiserver pkg/server/healthz/healthz.go handleRootHealth.
  std::vector<std::string_view> unmatched(exclude.begin(), exclude.end());
  std::sort(unmatched.begin(), unmatched.end());
  unmatched.erase(std::unique(unmatched.begin(), unmatched.end()), unmatched.end());
  std::string lines;
  bool failed = false;
  for (const HealthCheck& c : checks) {
    auto it = std::find(unmatched.begin(), unmatched.end(), c.name);
    if (it != unmatched.end()) {
      unmatched.erase(it);
      lines.append("[+]").append(c.name).append(" excluded: ok\n");
      continue;
    }
    if (c.ok) {
      lines.append("[+]").append(c.name).append(" ok\n");
    } else {
      // The reason stays in the log: the endpoint is public.
      lines.append("[-]").append(c.name).append(" failed: reason withheld\n");
      failed = true;
    }
  }
  if (!unmatched.empty()) {
    // formatQuoted: each name %q-quoted, joined by ",", in sorted (sets.List) order.
    lines.append("warn: some health checks cannot be excluded: no matches for ");
    for (size_t i = 0; i < unmatched.size(); ++i) {
      if (i > 0) lines += ',';
      lines += '"';
      lines.append(unmatched[i]);
      lines += '"';
    }
    lines += '\n';
  }
  std::string_view name = HealthEndpointName(endpoint);
  if (failed) {
    // Always verbose on failure; http.Error appends the newline.
    return {500, lines.append(name).append(" check failed\n")};
  }
  if (!verbose) return {200, "ok"};
  return {200, lines.append(name).append(" check passed\n")};
}

HealthResponse SingleHealthCheckBody(bool ok, std::string_view error) {
  // healthz.go adaptCheckToHandler.
  if (ok) return {200, "ok"};
  return {500, "internal server error: " + std::string(error) + "\n"};
}

}  // namespace kt::server
