// The objects of the scheduler benchmarks (scheduler_perf in process, api_load schedule over
// HTTP), after upstream scheduler_perf's templates: node-default.yaml (4 cpu, 32Gi, 110 pods)
// and pod-default.yaml (pause, containerPort 80, requests = limits = 100m / 500Mi).
//
// The "taints" workload adds: 40 % of nodes carry 1–3 taints (NoSchedule, NoExecute or
// PreferNoSchedule, keys from a small set, values v0/v1); every pod has 1–3 tolerations
// (Equal, NoSchedule, one in five a PreferNoSchedule one), and one pod in ten a required node
// affinity to two of the three zones.
#pragma once

#include <random>
#include <string>

namespace kt::bench {

inline constexpr const char* kTaintKeys[] = {"dedicated", "gpu", "spot", "maintenance", "team"};

inline std::string SchedNodeJson(const std::string& name, int i, bool taints, std::mt19937& rng) {
  static const char* kEffects[] = {"NoSchedule", "NoExecute", "PreferNoSchedule"};
  std::string spec = "{}";
  if (taints && rng() % 100 < 40) {
    const int n = 1 + static_cast<int>(rng() % 3);
    spec = R"({"taints":[)";
    for (int t = 0; t < n; ++t) {
      if (t > 0) spec += ",";
      spec += R"({"key":")";
      spec += kTaintKeys[(i + t) % 5];
      spec += R"(","value":"v)";
      spec += std::to_string(rng() % 2);
      spec += R"(","effect":")";
      spec += kEffects[rng() % 3];
      spec += R"("})";
    }
    spec += "]}";
  }
  std::string n = R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")";
  n += name;
  n += R"(","labels":{"kubernetes.io/hostname":")";
  n += name;
  n += R"(","topology.kubernetes.io/zone":"zone-)";
  n += std::to_string(i % 3);
  n += R"("}},"spec":)";
  n += spec;
  n += R"(,"status":{"capacity":{"pods":"110","cpu":"4","memory":"32Gi"},)"
       R"("allocatable":{"pods":"110","cpu":"4","memory":"32Gi"},)"
       R"("conditions":[{"type":"Ready","status":"True"}]}})";
  return n;
}

// A pod of the workload; `node` (optional) binds it already through spec.nodeName.
inline std::string SchedPodJson(const std::string& name, const std::string& namespace_, bool taints,
                                std::mt19937& rng, const std::string& node = "") {
  std::string extra;
  if (!node.empty()) {
    extra += R"(,"nodeName":")";
    extra += node;
    extra += R"(")";
  }
  if (taints) {
    const int n = 1 + static_cast<int>(rng() % 3);
    extra += R"(,"tolerations":[)";
    for (int t = 0; t < n; ++t) {
      if (t > 0) extra += ",";
      const bool prefer = t == 0 && rng() % 5 == 0;
      extra += R"({"key":")";
      extra += kTaintKeys[rng() % 5];
      extra += R"(","operator":"Equal","value":"v)";
      extra += std::to_string(rng() % 2);
      extra += R"(","effect":")";
      extra += prefer ? "PreferNoSchedule" : "NoSchedule";
      extra += R"("})";
    }
    extra += "]";
    if (rng() % 10 == 0) {
      extra += R"(,"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
               R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"topology.kubernetes.io/zone",)"
               R"("operator":"In","values":["zone-0","zone-1"]}]}]}}})";
    }
  }
  std::string p = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")";
  p += name;
  p += R"(","namespace":")";
  p += namespace_;
  p += R"(","labels":{"app":"perf"}},"spec":{)"
       R"("containers":[{"name":"pause","image":"registry.k8s.io/pause:3.10",)"
       R"("ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"100m","memory":"500Mi"},)"
       R"("requests":{"cpu":"100m","memory":"500Mi"}}}])";
  p += extra;
  p += "}}";
  return p;
}

}  // namespace kt::bench
