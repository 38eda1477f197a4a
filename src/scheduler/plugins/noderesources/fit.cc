#include "scheduler/plugins/noderesources/fit.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace kt::scheduler {

namespace {

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool Ignored(std::string_view name, const std::vector<std::string>& ignored,
             const std::vector<std::string>& groups) {
  if (!IsExtendedResourceName(name)) return false;
  if (Contains(ignored, name)) return true;
  const size_t slash = name.find('/');
  return slash != std::string_view::npos && Contains(groups, name.substr(0, slash));
}

// A scoring resource, resolved once.
struct ScoringResource {
  enum class Kind : uint8_t { kCpu, kMemory, kEphemeralStorage, kScalar } kind;
  ResourceId id = 0;
  int64_t weight = 1;
};

// part * kMaxNodeScore / whole in integers (0 <= part <= whole), as upstream computes it. A
// 64-bit division costs several times a double one; when both fit a double's 53-bit mantissa the
// double quotient, corrected by one where rounding crossed an integer, is the same.
inline int64_t ScaledShare(int64_t part, int64_t whole) {
  const int64_t num = part * kMaxNodeScore;
  constexpr int64_t kExact = int64_t{1} << 53;
  if (num >= kExact || whole >= kExact) return num / whole;
  int64_t q = static_cast<int64_t>(static_cast<double>(num) / static_cast<double>(whole));
  if (q * whole > num) --q;
  if ((q + 1) * whole <= num) ++q;
  return q;
}

// Whether the resources are the default ones, cpu and memory of weight 1: the shape the
// scoring loops below compute without going through ScoringResource.
bool IsCpuMemory(const std::vector<ScoringResource>& r) {
  return r.size() == 2 && r[0].kind == ScoringResource::Kind::kCpu && r[0].weight == 1 &&
         r[1].kind == ScoringResource::Kind::kMemory && r[1].weight == 1;
}

std::vector<ScoringResource> ResolveResources(
    const std::vector<NodeResourcesFitArgs::ResourceSpec>& specs) {
  std::vector<ScoringResource> out;
  for (const auto& r : specs) {
    ScoringResource s{ScoringResource::Kind::kScalar, 0, r.weight == 0 ? 1 : r.weight};
    if (r.name == "cpu") {
      s.kind = ScoringResource::Kind::kCpu;
    } else if (r.name == "memory") {
      s.kind = ScoringResource::Kind::kMemory;
    } else if (r.name == "ephemeral-storage") {
      s.kind = ScoringResource::Kind::kEphemeralStorage;
    } else {
      s.id = ResourceNames::Intern(r.name);
    }
    out.push_back(s);
  }
  return out;
}

// (allocatable, requested after placing the pod) of one resource on a node (upstream
// calculateResourceAllocatableRequest). `non_zero`: count cpu/memory with scoring defaults.
std::pair<int64_t, int64_t> AllocatableAndRequested(const NodeInfo& node, const PodInfo& pod,
                                                    const ScoringResource& r, bool non_zero) {
  switch (r.kind) {
    case ScoringResource::Kind::kCpu:
      return non_zero ? std::pair{node.allocatable().milli_cpu,
                                  node.non_zero_requested().milli_cpu + pod.non_zero.milli_cpu}
                      : std::pair{node.allocatable().milli_cpu,
                                  node.requested().milli_cpu + pod.requests.milli_cpu};
    case ScoringResource::Kind::kMemory:
      return non_zero ? std::pair{node.allocatable().memory,
                                  node.non_zero_requested().memory + pod.non_zero.memory}
                      : std::pair{node.allocatable().memory,
                                  node.requested().memory + pod.requests.memory};
    case ScoringResource::Kind::kEphemeralStorage:
      return {node.allocatable().ephemeral_storage,
              node.requested().ephemeral_storage + pod.requests.ephemeral_storage};
    case ScoringResource::Kind::kScalar: {
      const int64_t want = pod.requests.Scalar(r.id);
      if (want == 0) return {0, 0};
      const int64_t alloc = node.allocatable().Scalar(r.id);
      if (alloc == 0) return {0, 0};
      return {alloc, node.requested().Scalar(r.id) + want};
    }
  }
  return {0, 0};
}

int64_t PodRequestOf(const PodInfo& pod, const ScoringResource& r, bool non_zero) {
  switch (r.kind) {
    case ScoringResource::Kind::kCpu:
      return non_zero ? pod.non_zero.milli_cpu : pod.requests.milli_cpu;
    case ScoringResource::Kind::kMemory:
      return non_zero ? pod.non_zero.memory : pod.requests.memory;
    case ScoringResource::Kind::kEphemeralStorage:
      return pod.requests.ephemeral_storage;
    case ScoringResource::Kind::kScalar:
      return pod.requests.Scalar(r.id);
  }
  return 0;
}

// A score plugin whose cpu-and-memory form scores one node after another: Derived provides
// ScoresCpuAndMemory() and ScoreEach(pod, nodes, sink(i, score)), and gets both of the
// framework's forms over it (others fall back to Score per node).
template <class Derived>
class ScoresEachNode : public ScorePlugin {
 public:
  void ScoreNodes(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                  std::span<NodeScore> out) override {
    Derived& self = static_cast<Derived&>(*this);
    if (!self.ScoresCpuAndMemory()) return ScorePlugin::ScoreNodes(pod, nodes, out);
    self.ScoreEach(pod, nodes, [&](size_t i, int64_t score) {
      out[i] = NodeScore{nodes[i], score};
    });
  }
  bool AddWeightedScores(const PodInfo& pod, std::span<const NodeInfo* const> nodes, int64_t weight,
                         int64_t* totals) override {
    Derived& self = static_cast<Derived&>(*this);
    if (!self.ScoresCpuAndMemory()) return false;
    self.ScoreEach(pod, nodes, [&](size_t i, int64_t score) { totals[i] += score * weight; });
    return true;
  }
};

class NodeResourcesFit final : public PreFilterPlugin,
                               public FilterPlugin,
                               public PreScorePlugin,
                               public ScoresEachNode<NodeResourcesFit>,
                               public EnqueueExtensions {
 public:
  explicit NodeResourcesFit(const NodeResourcesFitArgs& args)
      : args_(args),
        resources_(ResolveResources(args.resources)),
        most_allocated_(args.scoring_strategy == "MostAllocated"),
        cpu_memory_(IsCpuMemory(resources_)) {}

  std::string_view Name() const override { return kNodeResourcesFitName; }

  Status PreFilter(const PodInfo&, PreFilterResult*) override { return Status(); }

  Status Filter(const PodInfo& pod, const NodeInfo& node) override {
    if (FitsSimply(pod, node)) return Status();
    std::vector<InsufficientResource> lacking =
        InsufficientResources(pod, node, args_.ignored_resources, args_.ignored_resource_groups);
    if (lacking.empty()) return Status();
    std::vector<std::string> reasons;
    bool unresolvable = false;
    for (InsufficientResource& r : lacking) {
      unresolvable = unresolvable || r.unresolvable;
      reasons.push_back(std::move(r.reason));
    }
    return Status(unresolvable ? Code::kUnschedulableAndUnresolvable : Code::kUnschedulable,
                  std::move(reasons));
  }

  bool FilterBatch(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   std::span<uint8_t> rejected) override {
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo& node = *nodes[i];
      if (FitsSimply(pod, node)) continue;
      if (!InsufficientResources(pod, node, args_.ignored_resources, args_.ignored_resource_groups)
               .empty()) {
        rejected[i] = 1;
      }
    }
    return true;
  }

  Status PreScore(const PodInfo&, std::span<const NodeInfo* const>) override { return Status(); }

  int64_t Score(const PodInfo& pod, const NodeInfo& node) override {
    int64_t node_score = 0;
    int64_t weight_sum = 0;
    for (const ScoringResource& r : resources_) {
      auto [alloc, requested] = AllocatableAndRequested(node, pod, r, /*non_zero=*/true);
      if (alloc == 0) continue;
      int64_t score;
      if (most_allocated_) {
        score = std::min(requested, alloc) * kMaxNodeScore / alloc;
      } else {
        score = requested > alloc ? 0 : (alloc - requested) * kMaxNodeScore / alloc;
      }
      node_score += score * r.weight;
      weight_sum += r.weight;
    }
    return weight_sum == 0 ? 0 : node_score / weight_sum;
  }

  bool ScoresCpuAndMemory() const { return cpu_memory_; }

  // Score above for cpu and memory of weight 1, one node after another: sink(i, score), each
  // score in [0, 100].
  template <class Sink>
  void ScoreEach(const PodInfo& pod, std::span<const NodeInfo* const> nodes, Sink sink) {
    const int64_t pod_cpu = pod.non_zero.milli_cpu;
    const int64_t pod_memory = pod.non_zero.memory;
    const bool most = most_allocated_;
    auto one = [most](int64_t alloc, int64_t requested) {
      if (most) return ScaledShare(std::min(requested, alloc), alloc);
      return requested > alloc ? 0 : ScaledShare(alloc - requested, alloc);
    };
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo& n = *nodes[i];
      constexpr auto kSlot = NodeInfo::kResourcesFitSlot;
      if (const int64_t* s = n.RememberedScore(kSlot, memo_owner_, pod_cpu, pod_memory)) {
        sink(i, *s);
        continue;
      }
      const int64_t alloc_cpu = n.allocatable().milli_cpu;
      const int64_t alloc_memory = n.allocatable().memory;
      int64_t sum = 0;
      int64_t count = 0;
      if (alloc_cpu != 0) {
        sum += one(alloc_cpu, n.non_zero_requested().milli_cpu + pod_cpu);
        ++count;
      }
      if (alloc_memory != 0) {
        sum += one(alloc_memory, n.non_zero_requested().memory + pod_memory);
        ++count;
      }
      const int64_t score = count == 0 ? 0 : sum / count;
      n.RememberScore(kSlot, memo_owner_, pod_cpu, pod_memory, score);
      sink(i, score);
    }
  }

  // The common case, decided without building anything: no extended resources asked for, and
  // everything fits.
  static bool FitsSimply(const PodInfo& pod, const NodeInfo& node) {
    const Resource& alloc = node.allocatable();
    const Resource& used = node.requested();
    const Resource& req = pod.requests;
    return static_cast<int64_t>(node.pods().size()) + 1 <= alloc.allowed_pods &&
           req.milli_cpu <= alloc.milli_cpu - used.milli_cpu &&
           req.memory <= alloc.memory - used.memory &&
           req.ephemeral_storage <= alloc.ephemeral_storage - used.ephemeral_storage &&
           req.scalars.empty();
  }

  std::vector<ClusterEventWithHint> EventsToRegister() override {
    return {
        {{EventResource::kPod, kDelete | kUpdatePodScaleDown},
         [](const PodInfo& pod, const ObjectPtr& old_obj, const ObjectPtr& new_obj) {
           if (new_obj == nullptr) {
             // A deletion frees resources only where the pod was placed or nominated.
             const api::Pod* gone = old_obj ? old_obj->As<api::Pod>() : nullptr;
             if (gone == nullptr) return QueueingHint::kQueue;
             return gone->spec.node_name.empty() && gone->status.nominated_node_name.empty()
                        ? QueueingHint::kQueueSkip
                        : QueueingHint::kQueue;
           }
           const api::Pod* p = new_obj->As<api::Pod>();
           if (p == nullptr || p->meta.uid == pod.uid()) return QueueingHint::kQueue;
           if (p->spec.node_name.empty()) return QueueingHint::kQueueSkip;
           return QueueingHint::kQueue;
         }},
        {{EventResource::kNode, kAdd | kUpdateNodeAllocatable},
         [this](const PodInfo& pod, const ObjectPtr& old_obj, const ObjectPtr& new_obj) {
           if (new_obj == nullptr || new_obj->As<api::Node>() == nullptr) {
             return QueueingHint::kQueue;
           }
           NodeInfo empty(new_obj);
           if (!InsufficientResources(pod, empty, args_.ignored_resources,
                                      args_.ignored_resource_groups)
                    .empty()) {
             return QueueingHint::kQueueSkip;  // would not fit even an empty node like it
           }
           if (old_obj == nullptr || old_obj->As<api::Node>() == nullptr) {
             return QueueingHint::kQueue;
           }
           const Resource before = ResourceOf(old_obj->As<api::Node>()->status.allocatable);
           const Resource& after = empty.allocatable();
           const Resource& req = pod.requests;
           bool grew =
               after.allowed_pods > before.allowed_pods ||
               (req.milli_cpu > 0 && after.milli_cpu > before.milli_cpu) ||
               (req.memory > 0 && after.memory > before.memory) ||
               (req.ephemeral_storage > 0 && after.ephemeral_storage > before.ephemeral_storage);
           for (const auto& [id, v] : req.scalars) {
             if (v > 0 && after.Scalar(id) > before.Scalar(id)) grew = true;
           }
           return grew ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
         }},
    };
  }

 private:
  const NodeResourcesFitArgs args_;
  const std::vector<ScoringResource> resources_;
  const bool most_allocated_;
  const bool cpu_memory_;
  const uint64_t memo_owner_ = NodeInfo::NewScoreMemoOwner();
};

class BalancedAllocation final : public PreScorePlugin, public ScoresEachNode<BalancedAllocation> {
 public:
  explicit BalancedAllocation(const BalancedAllocationArgs& args)
      : resources_(ResolveResources(args.resources)), cpu_memory_(IsCpuMemory(resources_)) {}

  std::string_view Name() const override { return kBalancedAllocationName; }

  Status PreScore(const PodInfo& pod, std::span<const NodeInfo* const>) override {
    for (const ScoringResource& r : resources_) {
      if (PodRequestOf(pod, r, /*non_zero=*/false) != 0) return Status();
    }
    return Status::Skip();  // a pod that requests none of the resources (upstream #129138)
  }

  int64_t Score(const PodInfo& pod, const NodeInfo& node) override {
    std::array<double, 16> small;
    std::vector<double> big;
    double* fractions = small.data();
    if (resources_.size() > small.size()) {
      big.resize(resources_.size());
      fractions = big.data();
    }
    size_t n = 0;
    for (const ScoringResource& r : resources_) {
      auto [alloc, requested] = AllocatableAndRequested(node, pod, r, /*non_zero=*/false);
      if (alloc == 0) continue;
      double f = static_cast<double>(requested) / static_cast<double>(alloc);
      fractions[n++] = f > 1 ? 1 : f;
    }
    double std_dev = 0;
    if (n == 2) {
      std_dev = std::fabs((fractions[0] - fractions[1]) / 2);
    } else if (n > 2) {
      double mean = 0;
      for (size_t i = 0; i < n; ++i) mean += fractions[i];
      mean /= static_cast<double>(n);
      double sum = 0;
      for (size_t i = 0; i < n; ++i) sum += (fractions[i] - mean) * (fractions[i] - mean);
      std_dev = std::sqrt(sum / static_cast<double>(n));
    }
    return static_cast<int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
  }

  bool ScoresCpuAndMemory() const { return cpu_memory_; }

  // Score above for cpu and memory, one node after another: sink(i, score), each score in
  // [50, 100] (the two fractions are capped at 1).
  template <class Sink>
  void ScoreEach(const PodInfo& pod, std::span<const NodeInfo* const> nodes, Sink sink) {
    const int64_t pod_cpu = pod.requests.milli_cpu;
    const int64_t pod_memory = pod.requests.memory;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo& n = *nodes[i];
      constexpr auto kSlot = NodeInfo::kBalancedAllocationSlot;
      if (const int64_t* s = n.RememberedScore(kSlot, memo_owner_, pod_cpu, pod_memory)) {
        sink(i, *s);
        continue;
      }
      const int64_t alloc_cpu = n.allocatable().milli_cpu;
      const int64_t alloc_memory = n.allocatable().memory;
      double std_dev = 0;
      if (alloc_cpu != 0 && alloc_memory != 0) {
        double c =
            static_cast<double>(n.requested().milli_cpu + pod_cpu) / static_cast<double>(alloc_cpu);
        double m = static_cast<double>(n.requested().memory + pod_memory) /
                   static_cast<double>(alloc_memory);
        std_dev = std::fabs(((c > 1 ? 1 : c) - (m > 1 ? 1 : m)) / 2);
      }
      const auto score = static_cast<int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
      n.RememberScore(kSlot, memo_owner_, pod_cpu, pod_memory, score);
      sink(i, score);
    }
  }

 private:
  const std::vector<ScoringResource> resources_;
  const bool cpu_memory_;
  const uint64_t memo_owner_ = NodeInfo::NewScoreMemoOwner();
};

}  // namespace

std::vector<InsufficientResource> InsufficientResources(
    const PodInfo& pod, const NodeInfo& node, const std::vector<std::string>& ignored,
    const std::vector<std::string>& ignored_groups) {
  std::vector<InsufficientResource> out;
  const Resource& alloc = node.allocatable();
  const Resource& used = node.requested();
  const Resource& req = pod.requests;
  const int64_t pods = static_cast<int64_t>(node.pods().size());
  if (pods + 1 > alloc.allowed_pods) {
    out.push_back({"Too many pods", 1, pods, alloc.allowed_pods, false});
  }
  if (req.milli_cpu == 0 && req.memory == 0 && req.ephemeral_storage == 0 && req.scalars.empty()) {
    return out;
  }
  auto check = [&](const char* reason, int64_t want, int64_t have_used, int64_t capacity) {
    if (want > 0 && want > capacity - have_used) {
      out.push_back({reason, want, have_used, capacity, want > capacity});
    }
  };
  check("Insufficient cpu", req.milli_cpu, used.milli_cpu, alloc.milli_cpu);
  check("Insufficient memory", req.memory, used.memory, alloc.memory);
  check("Insufficient ephemeral-storage", req.ephemeral_storage, used.ephemeral_storage,
        alloc.ephemeral_storage);
  // Extended resources by name, so that the message does not depend on interning order.
  for (const auto& [id, want] : req.scalars) {
    if (want == 0) continue;
    const std::string& name = ResourceNames::Name(id);
    if (Ignored(name, ignored, ignored_groups)) continue;
    const int64_t capacity = alloc.Scalar(id);
    const int64_t in_use = used.Scalar(id);
    if (want > capacity - in_use) {
      out.push_back(
          {ResourceNames::InsufficientReason(id), want, in_use, capacity, want > capacity});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    auto rank = [](const InsufficientResource& r) {
      if (r.reason == "Too many pods") return 0;
      if (r.reason == "Insufficient cpu") return 1;
      if (r.reason == "Insufficient memory") return 2;
      if (r.reason == "Insufficient ephemeral-storage") return 3;
      return 4;
    };
    const int ra = rank(a);
    const int rb = rank(b);
    return ra != rb ? ra < rb : (ra == 4 && a.reason < b.reason);
  });
  return out;
}

Result<std::unique_ptr<Plugin>> NewNodeResourcesFit(const PluginArgs& args, Handle*) {
  return std::unique_ptr<Plugin>(new NodeResourcesFit(args.node_resources_fit));
}

Result<std::unique_ptr<Plugin>> NewBalancedAllocation(const PluginArgs& args, Handle*) {
  return std::unique_ptr<Plugin>(new BalancedAllocation(args.balanced_allocation));
}

}  // namespace kt::scheduler
