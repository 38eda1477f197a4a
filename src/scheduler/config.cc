#include "scheduler/config.h"

#include <algorithm>
#include <sstream>

#include "api/codec.h"
#include "api/manifest.h"
#include "api/node_affinity.h"
#include "core/file.h"
#include "core/validation.h"

namespace kt::scheduler {

namespace {

using rapidjson::Value;

constexpr std::string_view kApiVersion = "kubescheduler.config.k8s.io/v1";

// Collects every problem with a file, as upstream aggregates field errors.
struct Errors {
  std::vector<std::string> list;
  void Add(std::string e) { list.push_back(std::move(e)); }
  void Unknown(const std::string& path) {
    Add("strict decoding error: unknown field \"" + path + "\"");
  }
  void Type(const std::string& path, std::string_view want, const Value& got) {
    Add(path + ": expected " + std::string(want) + ", got " + std::string(api::JsonTypeName(got)));
  }
};

std::string Child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}
std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}
std::string_view Str(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

template <class F>
void Members(const Value& v, const std::string& path, Errors& errs, F f) {
  if (v.IsNull()) return;
  if (!v.IsObject()) return errs.Type(path.empty() ? "(root)" : path, "object", v);
  for (const auto& m : v.GetObject()) f(Str(m.name), m.value, Child(path, Str(m.name)));
}

template <class F>
void Items(const Value& v, const std::string& path, Errors& errs, F f) {
  if (v.IsNull()) return;
  if (!v.IsArray()) return errs.Type(path, "array", v);
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) f(v[i], Index(path, i));
}

bool GetString(const Value& v, const std::string& path, Errors& errs, std::string* out) {
  if (v.IsNull()) return false;
  if (!v.IsString()) {
    errs.Type(path, "string", v);
    return false;
  }
  out->assign(Str(v));
  return true;
}

bool GetInt(const Value& v, const std::string& path, Errors& errs, int64_t* out) {
  if (v.IsNull()) return false;
  if (!v.IsInt64()) {
    errs.Type(path, "integer", v);
    return false;
  }
  *out = v.GetInt64();
  return true;
}

void DecodePluginSet(const Value& v, const std::string& path, Errors& errs, PluginSet* set) {
  Members(v, path, errs, [&](std::string_view k, const Value& val, const std::string& p) {
    if (k == "enabled") {
      Items(val, p, errs, [&](const Value& item, const std::string& ip) {
        PluginRef ref;
        Members(item, ip, errs, [&](std::string_view k2, const Value& v2, const std::string& p2) {
          int64_t w = 0;
          if (k2 == "name") {
            GetString(v2, p2, errs, &ref.name);
          } else if (k2 == "weight") {
            if (GetInt(v2, p2, errs, &w)) ref.weight = static_cast<int32_t>(w);
          } else {
            errs.Unknown(p2);
          }
        });
        if (ref.name.empty()) errs.Add(Child(ip, "name") + ": Required value");
        set->enabled.push_back(std::move(ref));
      });
    } else if (k == "disabled") {
      Items(val, p, errs, [&](const Value& item, const std::string& ip) {
        std::string name;
        Members(item, ip, errs, [&](std::string_view k2, const Value& v2, const std::string& p2) {
          if (k2 == "name") {
            GetString(v2, p2, errs, &name);
          } else {
            errs.Unknown(p2);
          }
        });
        if (name.empty()) errs.Add(Child(ip, "name") + ": Required value");
        set->disabled.push_back(std::move(name));
      });
    } else {
      errs.Unknown(p);
    }
  });
}

void DecodePlugins(const Value& v, const std::string& path, Errors& errs, Plugins* plugins) {
  struct Field {
    std::string_view name;
    PluginSet Plugins::*set;
  };
  static constexpr Field kFields[] = {
      {"preEnqueue", &Plugins::pre_enqueue},
      {"queueSort", &Plugins::queue_sort},
      {"preFilter", &Plugins::pre_filter},
      {"filter", &Plugins::filter},
      {"postFilter", &Plugins::post_filter},
      {"preScore", &Plugins::pre_score},
      {"score", &Plugins::score},
      {"reserve", &Plugins::reserve},
      {"permit", &Plugins::permit},
      {"preBind", &Plugins::pre_bind},
      {"bind", &Plugins::bind},
      {"postBind", &Plugins::post_bind},
      {"multiPoint", &Plugins::multi_point},
  };
  Members(v, path, errs, [&](std::string_view k, const Value& val, const std::string& p) {
    for (const Field& f : kFields) {
      if (k == f.name) return DecodePluginSet(val, p, errs, &(plugins->*f.set));
    }
    errs.Unknown(p);
  });
}

// NodeResourcesFit's scoring resources: weights in (0, 100] (upstream validateResources);
// NodeResourcesBalancedAllocation's: each once, weight 1 (upstream
// ValidateNodeResourcesBalancedAllocationArgs). An unset (0) weight defaults to 1 for both.
enum class ResourceRules { kFit, kBalancedAllocation };

void DecodeResources(const Value& v, const std::string& path, Errors& errs,
                     std::vector<NodeResourcesFitArgs::ResourceSpec>* out, ResourceRules rules) {
  out->clear();
  Items(v, path, errs, [&](const Value& item, const std::string& ip) {
    NodeResourcesFitArgs::ResourceSpec r{"", 1};
    Members(item, ip, errs, [&](std::string_view k, const Value& val, const std::string& p) {
      if (k == "name") {
        GetString(val, p, errs, &r.name);
      } else if (k == "weight") {
        int64_t w = 0;
        if (GetInt(val, p, errs, &w)) {
          if (w == 0) w = 1;  // upstream defaults an unset weight to 1
          if (rules == ResourceRules::kFit && (w < 1 || w > 100)) {
            errs.Add(p + ": Invalid value: " + std::to_string(w) + ": resource weight of " +
                     r.name + " not in valid range (0, 100]");
          }
          r.weight = w;
        }
      } else {
        errs.Unknown(p);
      }
    });
    if (rules == ResourceRules::kBalancedAllocation) {
      for (const auto& seen : *out) {
        if (seen.name == r.name) {
          errs.Add(Child(ip, "name") + ": Duplicate value: " + JsonString(r.name));
          break;
        }
      }
      if (r.weight != 1) {
        errs.Add(Child(ip, "weight") + ": Invalid value: " + std::to_string(r.weight) +
                 ": must be 1");
      }
    }
    out->push_back(std::move(r));
  });
}

void DecodeArgs(const std::string& plugin, const Value& v, const std::string& path, Errors& errs,
                PluginArgs* args) {
  auto common = [&](std::string_view k, const Value& val, const std::string& p) {
    if (k == "apiVersion") {
      std::string av;
      if (GetString(val, p, errs, &av) && av != kApiVersion) {
        errs.Add(p + ": Unsupported value: \"" + av + "\": supported values: \"" +
                 std::string(kApiVersion) + "\"");
      }
      return true;
    }
    if (k == "kind") {
      std::string kind;
      if (GetString(val, p, errs, &kind) && kind != plugin + "Args") {
        errs.Add(Child(path, "kind") + ": Invalid value: \"" + kind +
                 "\": has to match plugin args");
      }
      return true;
    }
    return false;
  };
  if (plugin == "NodeResourcesFit") {
    NodeResourcesFitArgs& a = args->node_resources_fit;
    Members(v, path, errs, [&](std::string_view k, const Value& val, const std::string& p) {
      if (common(k, val, p)) return;
      if (k == "scoringStrategy") {
        Members(val, p, errs, [&](std::string_view k2, const Value& v2, const std::string& p2) {
          if (k2 == "type") {
            if (GetString(v2, p2, errs, &a.scoring_strategy) &&
                a.scoring_strategy != "LeastAllocated" && a.scoring_strategy != "MostAllocated") {
              errs.Add(p2 + ": Unsupported value: \"" + a.scoring_strategy +
                       "\": supported values: \"LeastAllocated\", \"MostAllocated\"");
            }
          } else if (k2 == "resources") {
            DecodeResources(v2, p2, errs, &a.resources, ResourceRules::kFit);
          } else {
            errs.Unknown(p2);
          }
        });
      } else if (k == "ignoredResources" || k == "ignoredResourceGroups") {
        auto& list = k == "ignoredResources" ? a.ignored_resources : a.ignored_resource_groups;
        const bool groups = k == "ignoredResourceGroups";
        Items(val, p, errs, [&](const Value& item, const std::string& ip) {
          std::string s;
          if (!GetString(item, ip, errs, &s)) return;
          // Upstream ValidateNodeResourcesFitArgs: label names; groups without a '/'.
          for (const std::string& msg : IsQualifiedName(s)) {
            errs.Add(ip + ": Invalid value: " + GoQuote(s) + ": " + msg);
          }
          if (groups && s.find('/') != std::string::npos) {
            errs.Add(ip + ": Invalid value: " + GoQuote(s) +
                     ": resource group name can't contain '/'");
          }
          list.push_back(std::move(s));
        });
      } else {
        errs.Unknown(p);
      }
    });
  } else if (plugin == "NodeResourcesBalancedAllocation") {
    Members(v, path, errs, [&](std::string_view k, const Value& val, const std::string& p) {
      if (common(k, val, p)) return;
      if (k == "resources") {
        return DecodeResources(val, p, errs, &args->balanced_allocation.resources,
                               ResourceRules::kBalancedAllocation);
      }
      errs.Unknown(p);
    });
  } else if (plugin == "NodeAffinity") {
    Members(v, path, errs, [&](std::string_view k, const Value& val, const std::string& p) {
      if (common(k, val, p)) return;
      if (k == "addedAffinity") {
        Result<api::NodeAffinity> a = api::DecodeNodeAffinity(val);
        if (!a) return errs.Add(p + "." + a.error().message());
        // Upstream ValidateNodeAffinityArgs: the selectors must parse, as the plugin parses them.
        if (a->required) {
          for (const std::string& e : api::NodeSelectorMatcher(*a->required).Errors()) {
            errs.Add(p + ".requiredDuringSchedulingIgnoredDuringExecution." + e);
          }
        }
        if (auto preferred = api::PreferredSchedulingTerms::Create(a->preferred); !preferred) {
          errs.Add(p + ".preferredDuringSchedulingIgnoredDuringExecution: " +
                   preferred.error().message());
        }
        args->node_affinity.added_affinity = std::move(*a);
        return;
      }
      errs.Unknown(p);
    });
  } else if (plugin == "DefaultPreemption") {
    DefaultPreemptionArgs& a = args->default_preemption;
    Members(v, path, errs, [&](std::string_view k, const Value& val, const std::string& p) {
      if (common(k, val, p)) return;
      int64_t n = 0;
      if (k == "minCandidateNodesPercentage") {
        if (GetInt(val, p, errs, &n)) {
          if (n < 0 || n > 100) {
            errs.Add(p + ": Invalid value: " + std::to_string(n) + ": not in valid range [0, 100]");
          }
          a.min_candidate_nodes_percentage = static_cast<int32_t>(n);
        }
      } else if (k == "minCandidateNodesAbsolute") {
        if (GetInt(val, p, errs, &n)) {
          if (n < 0)
            errs.Add(p + ": Invalid value: " + std::to_string(n) + ": not in valid range [0, inf)");
          a.min_candidate_nodes_absolute = static_cast<int32_t>(n);
        }
      } else {
        errs.Unknown(p);
      }
    });
    if (a.min_candidate_nodes_percentage == 0 && a.min_candidate_nodes_absolute == 0) {
      errs.Add(path +
               ": Invalid value: \"0\": both minCandidateNodesPercentage and "
               "minCandidateNodesAbsolute cannot be zero");
    }
  } else {
    // Plugins without arguments accept an empty object.
    Members(v, path, errs, [&](std::string_view k, const Value& val, const std::string& p) {
      if (!common(k, val, p)) errs.Unknown(p);
    });
  }
}

void DecodeProfile(const Value& v, const std::string& path, Errors& errs, Profile* profile,
                   bool* named) {
  Plugins custom;
  std::vector<std::string> configured;
  Members(v, path, errs, [&](std::string_view k, const Value& val, const std::string& p) {
    if (k == "schedulerName") {
      *named = GetString(val, p, errs, &profile->scheduler_name);
    } else if (k == "percentageOfNodesToScore") {
      int64_t n = 0;
      if (GetInt(val, p, errs, &n)) {
        if (n < 0 || n > 100) {
          errs.Add(p + ": Invalid value: " + std::to_string(n) + ": not in valid range [0-100]");
        }
        profile->percentage_of_nodes_to_score = static_cast<int32_t>(n);
      }
    } else if (k == "plugins") {
      DecodePlugins(val, p, errs, &custom);
    } else if (k == "pluginConfig") {
      Items(val, p, errs, [&](const Value& item, const std::string& ip) {
        std::string name;
        const Value* args = nullptr;
        Members(item, ip, errs, [&](std::string_view k2, const Value& v2, const std::string& p2) {
          if (k2 == "name") {
            GetString(v2, p2, errs, &name);
          } else if (k2 == "args") {
            args = &v2;
          } else {
            errs.Unknown(p2);
          }
        });
        if (name.empty()) return errs.Add(Child(ip, "name") + ": Required value");
        if (std::find(configured.begin(), configured.end(), name) != configured.end()) {
          return errs.Add(ip + ": Duplicate value: \"" + name + "\"");
        }
        configured.push_back(name);
        if (args != nullptr) DecodeArgs(name, *args, Child(ip, "args"), errs, &profile->args);
      });
    } else {
      errs.Unknown(p);
    }
  });
  profile->plugins = MergePlugins(DefaultPlugins(), custom);
}

}  // namespace

SchedulerConfig DefaultSchedulerConfig() {
  SchedulerConfig c;
  c.profiles.emplace_back();
  return c;
}

Result<SchedulerConfig> ParseSchedulerConfig(std::string_view text, std::string_view source) {
  Result<std::vector<api::Manifest>> docs = api::LoadManifests(text, source);
  if (!docs) return Err(docs.error());
  if (docs->size() != 1) {
    return Err(BadRequest(std::string(source) +
                          ": expected one KubeSchedulerConfiguration, found " +
                          std::to_string(docs->size()) + " documents"));
  }
  const api::Manifest& m = docs->front();
  if (m.api_version != kApiVersion || m.kind != "KubeSchedulerConfiguration") {
    return Err(BadRequest(std::string(source) + ": no kind \"" + m.kind +
                          "\" is registered for version \"" + m.api_version +
                          "\" (expected kind KubeSchedulerConfiguration, apiVersion " +
                          std::string(kApiVersion) + ")"));
  }
  SchedulerConfig c;
  Errors errs;
  std::optional<int32_t> percentage;
  bool have_profiles = false;
  std::vector<bool> named;
  Members(m.object, "", errs, [&](std::string_view k, const Value& val, const std::string& p) {
    int64_t n = 0;
    if (k == "apiVersion" || k == "kind" || k == "parallelism" || k == "leaderElection" ||
        k == "clientConnection" || k == "enableProfiling" || k == "enableContentionProfiling" ||
        k == "delayCacheUntilActive" || k == "healthzBindAddress" || k == "metricsBindAddress") {
      return;  // accepted; nothing for kubetaint to do with them
    }
    if (k == "percentageOfNodesToScore") {
      if (GetInt(val, p, errs, &n)) {
        if (n < 0 || n > 100) {
          errs.Add(p + ": Invalid value: " + std::to_string(n) + ": not in valid range [0-100]");
        }
        percentage = static_cast<int32_t>(n);
      }
    } else if (k == "podInitialBackoffSeconds") {
      if (GetInt(val, p, errs, &n)) c.pod_initial_backoff_seconds = n;
    } else if (k == "podMaxBackoffSeconds") {
      if (GetInt(val, p, errs, &n)) c.pod_max_backoff_seconds = n;
    } else if (k == "profiles") {
      have_profiles = true;
      Items(val, p, errs, [&](const Value& item, const std::string& ip) {
        Profile profile;
        bool was_named = false;
        DecodeProfile(item, ip, errs, &profile, &was_named);
        named.push_back(was_named);
        c.profiles.push_back(std::move(profile));
      });
    } else if (k == "extenders") {
      if (val.IsArray() && !val.Empty()) errs.Add(p + ": extenders are not supported by kubetaint");
    } else {
      errs.Unknown(p);
    }
  });
  if (!have_profiles || c.profiles.empty()) c.profiles.emplace_back();
  // One profile defaults its name; with several, each needs one.
  if (c.profiles.size() > 1) {
    for (size_t i = 0; i < c.profiles.size(); ++i) {
      if (!named[i] || c.profiles[i].scheduler_name.empty()) {
        errs.Add("profiles[" + std::to_string(i) + "].schedulerName: Required value");
      }
      for (size_t j = 0; j < i; ++j) {
        if (named[i] && c.profiles[i].scheduler_name == c.profiles[j].scheduler_name) {
          errs.Add("profiles[" + std::to_string(i) + "].schedulerName: Duplicate value: \"" +
                   c.profiles[i].scheduler_name + "\"");
        }
      }
    }
  } else if (c.profiles[0].scheduler_name.empty()) {
    errs.Add("profiles[0].schedulerName: Required value");
  }
  if (c.pod_initial_backoff_seconds <= 0) {
    errs.Add("podInitialBackoffSeconds: Invalid value: " +
             std::to_string(c.pod_initial_backoff_seconds) + ": must be greater than 0");
  }
  if (c.pod_max_backoff_seconds < c.pod_initial_backoff_seconds) {
    errs.Add("podMaxBackoffSeconds: Invalid value: " + std::to_string(c.pod_max_backoff_seconds) +
             ": must be greater than or equal to PodInitialBackoffSeconds");
  }
  for (Profile& p : c.profiles) {
    if (!p.percentage_of_nodes_to_score && percentage && *percentage != 0) {
      p.percentage_of_nodes_to_score = percentage;
    }
  }
  if (!errs.list.empty()) {
    std::string m2 = std::string(source) + ": ";
    if (errs.list.size() == 1) {
      m2 += errs.list[0];
    } else {
      m2 += "[";
      for (size_t i = 0; i < errs.list.size(); ++i) m2 += (i ? ", " : "") + errs.list[i];
      m2 += "]";
    }
    return Err(BadRequest(std::move(m2)));
  }
  return c;
}

Result<SchedulerConfig> LoadSchedulerConfig(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text) return Err(text.error());
  return ParseSchedulerConfig(*text, path);
}

}  // namespace kt::scheduler
