#include "scheduler/algorithm.h"

#include <algorithm>
#include <functional>

namespace kt::scheduler {

namespace {

constexpr int kMinFeasibleNodesToFind = 100;
constexpr int kMinFeasibleNodesPercentageToFind = 5;

// The tie-break between nodes of equal score: FNV-1a of the pod's namespace/name, combined with
// the node's name hash (NodeInfo::name_hash) through a 64-bit finalizer, lowest wins. Stable for
// a pod and a node, and spread evenly over the nodes.
uint64_t Fnv(uint64_t h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

uint64_t PodTieBreakSeed(const PodInfo& pod) {
  uint64_t h = Fnv(1469598103934665603ULL, pod.namespace_());
  h = Fnv(h, "/");
  h = Fnv(h, pod.name());
  return h;
}

uint64_t TieBreak(uint64_t seed, const NodeInfo& node) {
  uint64_t z = seed ^ node.name_hash();  // splitmix64's finalizer
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

int NumFeasibleNodesToFind(std::optional<int32_t> percentage, int num_all_nodes) {
  if (num_all_nodes < kMinFeasibleNodesToFind) return num_all_nodes;
  int32_t pct = percentage.value_or(0);
  if (pct == 0) {
    pct = 50 - num_all_nodes / 125;
    if (pct < kMinFeasibleNodesPercentageToFind) pct = kMinFeasibleNodesPercentageToFind;
  }
  const int num = static_cast<int>(static_cast<int64_t>(num_all_nodes) * pct / 100);
  return num < kMinFeasibleNodesToFind ? kMinFeasibleNodesToFind : num;
}

namespace {

// The best of `count` nodes, `node(i)` and `total(i)` giving each: the highest total, ties
// broken by TieBreak. Two passes: the highest total first, then the tie-break among the nodes
// that have it, so that no other node's tie-break is computed.
template <typename NodeAt, typename TotalAt>
const NodeInfo* Best(const PodInfo& pod, size_t count, NodeAt node, TotalAt total) {
  if (count == 0) return nullptr;
  int64_t top = total(0);
  for (size_t i = 1; i < count; ++i) top = std::max(top, total(i));
  const uint64_t seed = PodTieBreakSeed(pod);
  const NodeInfo* best = nullptr;
  uint64_t best_tie = 0;
  for (size_t i = 0; i < count; ++i) {
    if (total(i) != top) continue;
    const NodeInfo* n = node(i);
    const uint64_t tie = TieBreak(seed, *n);
    if (best == nullptr || tie < best_tie) {
      best = n;
      best_tie = tie;
    }
  }
  return best;
}

}  // namespace

const NodeInfo* SelectHost(const PodInfo& pod, const std::vector<NodePluginScores>& scores) {
  return Best(
      pod, scores.size(), [&](size_t i) { return scores[i].node; },
      [&](size_t i) { return scores[i].total; });
}

const NodeInfo* SelectHost(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                           std::span<const int64_t> totals) {
  return Best(
      pod, nodes.size(), [&](size_t i) { return nodes[i]; }, [&](size_t i) { return totals[i]; });
}

ScheduleResult SchedulePod(Framework& fw, const NodeLister& lister, const PodInfo& pod,
                           size_t* next_start_index, const ScheduleOptions& options) {
  ScheduleResult r;
  std::span<NodeInfo* const> all = lister.List();
  r.num_all_nodes = static_cast<int>(all.size());
  if (all.empty()) {
    r.status = Status::Unresolvable(std::string(kNoNodesAvailableMsg));
    return r;
  }
  Diagnosis& d = r.diagnosis;

  // 1. PreFilter.
  PreFilterResult pre;
  std::set<std::string> narrowing;
  Status s = fw.RunPreFilterPlugins(pod, &pre, &narrowing);
  if (!s.IsSuccess()) {
    if (!s.IsRejected()) {
      r.status = s;
      return r;
    }
    d.node_to_status.SetAbsentNodesStatus(s);
    d.pre_filter_msg = s.Message();
    d.AddPluginStatus(s);
    r.fit_error = true;
    r.status = Status(Code::kUnschedulable);
    return r;
  }

  // The feasible nodes and the rejected ones not yet explained: kept per thread, so that a cycle
  // reuses the last one's room (no plugin runs a cycle of its own).
  thread_local std::vector<const NodeInfo*> feasible_room;
  thread_local std::vector<const NodeInfo*> unexplained_room;
  std::vector<const NodeInfo*>& feasible = feasible_room;
  feasible.clear();
  // 2. A nominated node is tried alone first.
  const std::string& nominated = pod.pod().status.nominated_node_name;
  if (!nominated.empty() && !options.evaluate_all) {
    if (const NodeInfo* n = lister.Get(nominated)) {
      Status ns = fw.RunFilterPluginsWithNominatedPods(pod, *n);
      if (ns.IsSuccess()) {
        r.host = n->name();
        r.node = n;
        r.evaluated_nodes = 1;
        r.feasible_nodes = 1;
        return r;
      }
      if (!ns.IsRejected()) {
        r.status = ns;
        return r;
      }
      d.node_to_status.Set(n->name(), ns);
    }
  }

  // 3. Filter.
  std::vector<NodeInfo*> candidates;
  std::span<NodeInfo* const> nodes = all;
  if (!pre.AllNodes()) {
    for (NodeInfo* n : all) {
      if (pre.node_names->count(n->name())) candidates.push_back(n);
    }
    nodes = candidates;
    std::vector<std::string> names(narrowing.begin(), narrowing.end());
    std::string list = "[";
    for (size_t i = 0; i < names.size(); ++i) list += (i ? " " : "") + names[i];
    d.node_to_status.SetAbsentNodesStatus(
        Status::Unresolvable("node(s) didn't satisfy plugin(s) " + list + "]"));
    for (const std::string& n : narrowing) d.unschedulable_plugins.insert(n);
  }
  const int n = static_cast<int>(nodes.size());
  int to_find = options.evaluate_all
                    ? n
                    : NumFeasibleNodesToFind(fw.profile().percentage_of_nodes_to_score, n);
  if (!fw.HasScorePlugins() && !options.evaluate_all) to_find = std::min(to_find, 1);
  const size_t start = n == 0 || options.evaluate_all ? 0 : *next_start_index % n;
  int processed = 0;
  feasible.reserve(static_cast<size_t>(std::min(to_find, n)));
  // A node Filter rejected: its status, as RunFilterPlugins gives it. False on an error, which
  // ends the cycle with r.status.
  const auto record_rejection = [&](const NodeInfo* node, Status fs) {
    if (!fs.IsRejected()) {
      r.status = std::move(fs);
      return false;
    }
    d.AddPluginStatus(fs);
    if (node->name() == nominated) {
      d.node_to_status.Set(node->name(), std::move(fs));  // replaces its first evaluation
    } else {
      d.node_to_status.Add(node->name(), std::move(fs));
    }
    return true;
  };
  const auto next = [&nodes](size_t i) { return i + 1 == nodes.size() ? 0 : i + 1; };
  size_t at = start;  // index of the next node to scan
  if (fw.handle()->Nominated().Empty()) {
    // Runs of nodes, in scan order, are filtered at once (Framework::FilterNodes), then taken
    // in order until enough are feasible: the same nodes as one at a time, at a fraction of the
    // calls. The last run may be filtered beyond the node the scan stops at; those nodes are
    // not counted as processed.
    //
    // Why a node was rejected (its status, for the FitError and PostFilter) matters only when
    // no node is feasible, or when every node is to be reported: otherwise the rejected nodes
    // are only remembered, and their statuses are never built.
    constexpr int kRun = 64;
    const NodeInfo* run[kRun];
    uint8_t rejected[kRun];
    std::vector<const NodeInfo*>& unexplained = unexplained_room;
    unexplained.clear();
    const auto explain = [&](const NodeInfo* node) {
      Status fs = fw.RunFilterPlugins(pod, *node);
      if (fs.IsSuccess()) {
        feasible.push_back(node);
        return true;
      }
      return record_rejection(node, std::move(fs));
    };
    while (processed < n && static_cast<int>(feasible.size()) < to_find) {
      const int len = std::min(kRun, n - processed);
      // A run that does not wrap around is the nodes' own span; one that does is gathered.
      const NodeInfo* const* batch;
      if (at + static_cast<size_t>(len) <= nodes.size()) {
        batch = nodes.data() + at;
        for (int j = 0; j < len; ++j) batch[j]->Prefetch();
        at = next(at + static_cast<size_t>(len) - 1);
      } else {
        for (int j = 0; j < len; ++j, at = next(at)) {
          run[j] = nodes[at];
          run[j]->Prefetch();
        }
        batch = run;
      }
      fw.FilterNodes(pod, std::span<const NodeInfo* const>(batch, static_cast<size_t>(len)),
                     std::span<uint8_t>(rejected, static_cast<size_t>(len)));
      const int room = to_find - static_cast<int>(feasible.size());
      if (len <= room && !options.evaluate_all) {
        // The whole run is taken: no count to watch node by node.
        processed += len;
        for (int j = 0; j < len; ++j) {
          (rejected[j] ? unexplained : feasible).push_back(batch[j]);
        }
        continue;
      }
      for (int j = 0; j < len && static_cast<int>(feasible.size()) < to_find; ++j) {
        ++processed;
        if (!rejected[j]) {
          feasible.push_back(batch[j]);
        } else if (!options.evaluate_all) {
          unexplained.push_back(batch[j]);
        } else if (!explain(batch[j])) {
          return r;
        }
      }
    }
    if (feasible.empty()) {
      for (const NodeInfo* node : unexplained) {
        if (!explain(node)) return r;
      }
    }
  } else {
    // The scan asks for the NodeInfos a few nodes ahead, so their loads overlap.
    constexpr int kPrefetchAhead = 8;
    size_t ahead = start;  // index of the node prefetched
    for (int i = 0; i < std::min(n, kPrefetchAhead); ++i, ahead = next(ahead)) {
      nodes[ahead]->Prefetch();
    }
    for (int i = 0; i < n && static_cast<int>(feasible.size()) < to_find; ++i, at = next(at)) {
      if (i + kPrefetchAhead < n) {
        nodes[ahead]->Prefetch();
        ahead = next(ahead);
      }
      const NodeInfo* node = nodes[at];
      ++processed;
      Status fs = fw.RunFilterPluginsWithNominatedPods(pod, *node);
      if (fs.IsSuccess()) {
        feasible.push_back(node);
      } else if (!record_rejection(node, std::move(fs))) {
        return r;
      }
    }
  }
  if (!all.empty()) *next_start_index = (*next_start_index + processed) % all.size();
  r.evaluated_nodes = processed;
  r.feasible_nodes = static_cast<int>(feasible.size());

  if (feasible.empty()) {
    r.fit_error = true;
    r.status = Status(Code::kUnschedulable);
    return r;
  }
  // 4. One feasible node needs no scoring (unless every node is to be reported).
  if (feasible.size() == 1 && !options.evaluate_all) {
    r.node = feasible[0];
    r.host = r.node->name();
    return r;
  }
  if (!fw.HasScorePlugins()) {
    r.node = feasible[0];
    r.host = r.node->name();
    return r;
  }
  if (options.evaluate_all) {
    Status ss = fw.RunScorePlugins(pod, feasible, &r.scores, /*details=*/true);
    if (!ss.IsSuccess()) {
      r.status = ss;
      return r;
    }
    r.node = SelectHost(pod, r.scores);
    r.host = r.node->name();
    return r;
  }
  thread_local std::vector<int64_t> totals;
  Status ss = fw.RunScorePlugins(pod, feasible, &totals);
  if (!ss.IsSuccess()) {
    r.status = ss;
    return r;
  }
  r.node = SelectHost(pod, feasible, totals);
  r.host = r.node->name();
  return r;
}

}  // namespace kt::scheduler
