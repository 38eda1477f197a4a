// Framework: one profile's plugins, run at each extension point in the profile's order, with
// upstream's rules for combining them (pkg/scheduler/framework/runtime):
//   - PreFilter: Skip drops the plugin's Filter for this cycle; node subsets are intersected;
//     UnschedulableAndUnresolvable stops at once, Unschedulable lets the others run first.
//   - Filter: the first plugin that rejects a node decides its status.
//   - Score: each plugin's raw scores, normalized, times its weight, summed per node.
//   - PostFilter: the first success wins; rejection reasons are joined.
//
//   PluginRegistry registry = InTreeRegistry();
//   Result<std::unique_ptr<Framework>> fw = Framework::New(profile, registry, &handle);
//   Status s = (*fw)->RunFilterPlugins(pod, node);
//
// Thread safety: see interface.h — one cycle at a time, on one thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "scheduler/framework/interface.h"
#include "scheduler/framework/profile.h"

namespace kt::scheduler {

using PluginFactory =
    std::function<Result<std::unique_ptr<Plugin>>(const PluginArgs& args, Handle* handle)>;

class PluginRegistry {
 public:
  void Register(std::string name, PluginFactory factory);
  const PluginFactory* Find(const std::string& name) const;
  // Names upstream has that kubetaint does not implement: disabling them is fine, enabling one is
  // an error that says so.
  void RegisterUnsupported(std::string name);
  bool IsUnsupported(const std::string& name) const;

 private:
  std::map<std::string, PluginFactory> factories_;
  std::vector<std::string> unsupported_;
};

// A node's scores, per plugin (weighted) and in total.
struct NodePluginScores {
  const NodeInfo* node = nullptr;
  struct PluginScore {
    std::string_view plugin;
    int64_t raw = 0;         // before normalization
    int64_t normalized = 0;  // after normalization, before the weight
    int64_t weight = 1;
    int64_t weighted = 0;
  };
  std::vector<PluginScore> scores;
  int64_t total = 0;
};

class Framework {
 public:
  // Builds the profile's plugins. Errors name the plugin and the point, as upstream:
  //   `FilterPlugin "Foo" does not exist`.
  static Result<std::unique_ptr<Framework>> New(const Profile& profile,
                                                const PluginRegistry& registry, Handle* handle);

  const std::string& scheduler_name() const { return profile_.scheduler_name; }
  const Profile& profile() const { return profile_; }
  Handle* handle() const { return handle_; }

  bool QueueSortLess(const QueuedPodInfo& a, const QueuedPodInfo& b) const;

  // The first PreEnqueue rejection (with its plugin), or Success.
  Status RunPreEnqueuePlugins(const PodInfo& pod) const;

  // Runs PreFilter; `narrowing_plugins` gets the plugins that returned a node subset. Resets the
  // per-cycle skip set.
  Status RunPreFilterPlugins(const PodInfo& pod, PreFilterResult* result,
                             std::set<std::string>* narrowing_plugins);
  // Filter on one node: the first rejection, or Success.
  Status RunFilterPlugins(const PodInfo& pod, const NodeInfo& node) const;
  // Every filter on one node (for kubetaint check): one status per plugin, in order (Skip for
  // plugins skipped by their PreFilter).
  std::vector<std::pair<std::string_view, Status>> RunAllFilterPlugins(const PodInfo& pod,
                                                                       const NodeInfo& node) const;
  // Filter with the pods nominated to the node that matter to this pod (priority at least the
  // pod's) counted as placed, then without them; the node must pass both (upstream
  // RunFilterPluginsWithNominatedPods).
  Status RunFilterPluginsWithNominatedPods(const PodInfo& pod, const NodeInfo& node) const;
  // Filter on a run of nodes at once, with no pods nominated anywhere: rejected[i] becomes 1 for
  // each node some filter does not admit (0 otherwise). The plugins with a batch form
  // (FilterPlugin::FilterBatch) decide the whole run in one call each, the others run node by
  // node on what is still admitted. Why a node was rejected is not kept: RunFilterPlugins on it
  // says. `rejected` has nodes.size() entries.
  void FilterNodes(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   std::span<uint8_t> rejected) const;

  bool HasFilterPlugins() const { return !filter_.empty(); }
  bool HasPostFilterPlugins() const { return !post_filter_.empty(); }
  bool HasScorePlugins() const { return !score_.empty(); }

  Status RunPostFilterPlugins(const PodInfo& pod, const NodeToStatus& statuses,
                              NominatingInfo* nominating);

  // PreScore then Score, normalization and weights, for `nodes` (the feasible ones). Each
  // node's per-plugin scores are filled in only with `details` (reports); the totals always.
  Status RunScorePlugins(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                         std::vector<NodePluginScores>* out, bool details = true);
  // The totals alone, in the order of `nodes` (the scheduling cycle's form): they may differ
  // from the reports' by an amount that is the same for every node (plugins whose scores are
  // uniform are skipped), so they order the nodes exactly as the reports' totals do.
  Status RunScorePlugins(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                         std::vector<int64_t>* totals);

  Status RunReservePluginsReserve(const PodInfo& pod, const std::string& node);
  void RunReservePluginsUnreserve(const PodInfo& pod, const std::string& node);
  Status RunPermitPlugins(const PodInfo& pod, const std::string& node);
  Status RunPreBindPlugins(const PodInfo& pod, const std::string& node);
  // The binders in order until one does not Skip; `done` runs once, on any thread.
  void RunBindPlugins(const PodInfoPtr& pod, const std::string& node,
                      std::function<void(Status)> done);

  // The events each plugin registered, for the scheduling queue.
  struct RegisteredEvent {
    std::string plugin;
    ClusterEventWithHint event;
  };
  const std::vector<RegisteredEvent>& RegisteredEvents() const { return events_; }

  // The events registered by `plugin` (the gating events of a PreEnqueue plugin).
  std::vector<ClusterEvent> EventsOf(std::string_view plugin) const;

 private:
  Framework(Profile profile, Handle* handle) : profile_(std::move(profile)), handle_(handle) {}
  void RunBindAt(size_t index, PodInfoPtr pod, std::string node, std::function<void(Status)> done);

  Status PreFilterAll(const PodInfo& pod, PreFilterResult* result,
                      std::set<std::string>* narrowing_plugins);
  // A filter plugin's rejection or error as RunFilterPlugins returns it.
  static Status FilterFailure(const FilterPlugin* pl, Status s);
  // Splits the filters not skipped this cycle into active_filter_ and its two halves.
  void SetActiveFilters();

  Profile profile_;
  Handle* handle_;
  std::vector<std::unique_ptr<Plugin>> plugins_;  // owned, one per name

  std::vector<QueueSortPlugin*> queue_sort_;
  std::vector<PreEnqueuePlugin*> pre_enqueue_;
  std::vector<PreFilterPlugin*> pre_filter_;
  std::vector<FilterPlugin*> filter_;
  std::vector<PostFilterPlugin*> post_filter_;
  std::vector<PreScorePlugin*> pre_score_;
  std::vector<ScorePlugin*> score_;
  std::vector<int64_t> score_weights_;  // parallel to score_
  std::vector<ReservePlugin*> reserve_;
  std::vector<PermitPlugin*> permit_;
  std::vector<PreBindPlugin*> pre_bind_;
  std::vector<BindPlugin*> bind_;
  std::vector<RegisteredEvent> events_;

  // Per cycle: the plugins whose PreFilter (or PreScore) returned Skip.
  std::vector<const Plugin*> skip_filter_;
  std::vector<const Plugin*> skip_score_;
  // filter_ without skip_filter_: what RunFilterPlugins runs on every node.
  std::vector<FilterPlugin*> active_filter_;
  // active_filter_ split for FilterNodes: the plugins with a batch form, and the others.
  std::vector<FilterPlugin*> active_batch_filter_;
  std::vector<FilterPlugin*> active_single_filter_;
  // The plugins of filter_ with a batch form.
  std::vector<const FilterPlugin*> batch_filter_;
  // Both RunScorePlugins: the totals into `totals`, and each node's per-plugin scores into
  // `details` when not null.
  Status ScoreInto(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   std::vector<int64_t>* totals, std::vector<NodePluginScores>* details);

  // Scratch space of RunScorePlugins, kept between cycles.
  std::vector<NodeScore> scratch_scores_;
  std::vector<int64_t> scratch_totals_;
  std::vector<int64_t> scratch_raw_;
};

}  // namespace kt::scheduler
