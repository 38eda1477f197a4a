#include "scheduler/framework/framework.h"

#include <algorithm>

namespace kt::scheduler {

namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// "[A B]": Go's %v of a []string.
std::string GoList(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += ' ';
    out += v[i];
  }
  return out + "]";
}

bool Skipped(const std::vector<const Plugin*>& skip, const Plugin* p) {
  return std::find(skip.begin(), skip.end(), p) != skip.end();
}

// One extension point: the profile's plugin set for it, its interface name for errors, and how
// to add a plugin of that interface.
struct Point {
  const PluginSet* set;
  std::string_view iface;  // "FilterPlugin"
  std::string_view kind;   // "Filter"
  std::function<bool(Plugin*)> add;
};

// The interface name of the first extension point (in upstream's expansion order) that a
// plugin extends.
std::string_view FirstInterface(Plugin* p) {
  if (dynamic_cast<PreFilterPlugin*>(p)) return "PreFilterPlugin";
  if (dynamic_cast<FilterPlugin*>(p)) return "FilterPlugin";
  if (dynamic_cast<PostFilterPlugin*>(p)) return "PostFilterPlugin";
  if (dynamic_cast<ReservePlugin*>(p)) return "ReservePlugin";
  if (dynamic_cast<PreScorePlugin*>(p)) return "PreScorePlugin";
  if (dynamic_cast<ScorePlugin*>(p)) return "ScorePlugin";
  if (dynamic_cast<PreBindPlugin*>(p)) return "PreBindPlugin";
  if (dynamic_cast<BindPlugin*>(p)) return "BindPlugin";
  if (dynamic_cast<PermitPlugin*>(p)) return "PermitPlugin";
  if (dynamic_cast<PreEnqueuePlugin*>(p)) return "PreEnqueuePlugin";
  return "QueueSortPlugin";
}

}  // namespace

void PreFilterResult::Merge(const PreFilterResult& other) {
  if (other.AllNodes()) return;
  if (AllNodes()) {
    node_names = other.node_names;
    return;
  }
  std::set<std::string> both;
  std::set_intersection(node_names->begin(), node_names->end(), other.node_names->begin(),
                        other.node_names->end(), std::inserter(both, both.begin()));
  node_names = std::move(both);
}

void NodeToStatus::Set(const std::string& node, Status s) {
  for (auto& [name, status] : entries_) {
    if (name == node) {
      status = std::move(s);
      return;
    }
  }
  Add(node, std::move(s));
}

const Status& NodeToStatus::Get(const std::string& node) const {
  if (index_.empty() && !entries_.empty()) {
    index_.reserve(entries_.size());
    for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first, i);
  }
  auto it = index_.find(node);
  return it == index_.end() ? absent_ : entries_[it->second].second;
}

void Diagnosis::AddPluginStatus(const Status& s) {
  if (s.plugin().empty()) return;
  if (s.code() == Code::kPending) pending_plugins.insert(std::string(s.plugin()));
  if (!s.IsRejected()) return;
  // Most rejections of a cycle come from the plugin before: its name is a static string.
  if (s.plugin().data() == last_rejector_.data() && s.plugin() == last_rejector_) return;
  unschedulable_plugins.insert(std::string(s.plugin()));
  last_rejector_ = s.plugin();
}

std::string FitErrorMessage(int num_all_nodes, const Diagnosis& d) {
  std::string msg = "0/" + std::to_string(num_all_nodes) + " nodes are available:";
  if (!d.pre_filter_msg.empty()) {
    msg += " " + d.pre_filter_msg + ".";
  } else {
    // A plugin's fixed statuses share one reasons list: those are counted per list (a few),
    // others reason by reason.
    constexpr size_t kMaxLists = 16;
    std::vector<std::pair<const std::vector<std::string>*, int>> lists;
    std::map<std::string, int> reasons;
    for (const auto& [node, status] : d.node_to_status.entries()) {
      const std::vector<std::string>* list = &status.Reasons();
      auto it = std::find_if(lists.begin(), lists.end(),
                             [list](const auto& l) { return l.first == list; });
      if (it != lists.end()) {
        ++it->second;
      } else if (lists.size() < kMaxLists) {
        lists.emplace_back(list, 1);
      } else {
        for (const std::string& r : *list) ++reasons[r];
      }
    }
    for (const auto& [list, n] : lists) {
      for (const std::string& r : *list) reasons[r] += n;
    }
    const int absent = num_all_nodes - static_cast<int>(d.node_to_status.Len());
    if (absent > 0) {
      for (const std::string& r : d.node_to_status.AbsentNodesStatus().Reasons()) {
        reasons[r] += absent;
      }
    }
    std::vector<std::string> entries;
    entries.reserve(reasons.size());
    for (const auto& [reason, count] : reasons) {
      entries.push_back(std::to_string(count) + " " + reason);
    }
    std::sort(entries.begin(), entries.end());  // as strings: "10 x" before "2 y", as upstream
    if (!entries.empty()) {
      msg += " ";
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i > 0) msg += ", ";
        msg += entries[i];
      }
      msg += ".";
    }
  }
  if (!d.post_filter_msg.empty()) msg += " " + d.post_filter_msg;
  return msg;
}

void PluginRegistry::Register(std::string name, PluginFactory factory) {
  factories_[std::move(name)] = std::move(factory);
}

const PluginFactory* PluginRegistry::Find(const std::string& name) const {
  auto it = factories_.find(name);
  return it == factories_.end() ? nullptr : &it->second;
}

void PluginRegistry::RegisterUnsupported(std::string name) {
  unsupported_.push_back(std::move(name));
}

bool PluginRegistry::IsUnsupported(const std::string& name) const {
  return Contains(unsupported_, name);
}

Result<std::unique_ptr<Framework>> Framework::New(const Profile& profile,
                                                  const PluginRegistry& registry, Handle* handle) {
  std::unique_ptr<Framework> fw(new Framework(profile, handle));
  const Plugins& p = fw->profile_.plugins;

  // Instantiate every plugin named in an enabled list (upstream: only registry names).
  std::map<std::string, Plugin*> instances;
  const PluginSet* all_sets[] = {&p.pre_enqueue, &p.queue_sort, &p.pre_filter, &p.filter,
                                 &p.post_filter, &p.pre_score,  &p.score,      &p.reserve,
                                 &p.permit,      &p.pre_bind,   &p.bind,       &p.post_bind,
                                 &p.multi_point};
  for (const PluginSet* set : all_sets) {
    for (const PluginRef& ref : set->enabled) {
      if (instances.count(ref.name)) continue;
      if (registry.IsUnsupported(ref.name)) {
        return Err(BadRequest("plugin \"" + ref.name + "\" is not supported by kubetaint"));
      }
      const PluginFactory* factory = registry.Find(ref.name);
      if (factory == nullptr) continue;  // reported below with the extension point
      Result<std::unique_ptr<Plugin>> plugin = (*factory)(fw->profile_.args, handle);
      if (!plugin) {
        return Err(plugin.error().WithPrefix("initializing plugin \"" + ref.name + "\": "));
      }
      instances[ref.name] = plugin->get();
      fw->plugins_.push_back(std::move(*plugin));
    }
  }

  Framework& f = *fw;
  auto adder = [](auto& list) {
    return [&list](Plugin* pl) {
      using T = std::remove_pointer_t<typename std::decay_t<decltype(list)>::value_type>;
      T* typed = dynamic_cast<T*>(pl);
      if (typed == nullptr) return false;
      list.push_back(typed);
      return true;
    };
  };
  // Upstream's order of extension points when expanding multiPoint.
  std::vector<Point> points = {
      {&p.pre_filter, "PreFilterPlugin", "PreFilter", adder(f.pre_filter_)},
      {&p.filter, "FilterPlugin", "Filter", adder(f.filter_)},
      {&p.post_filter, "PostFilterPlugin", "PostFilter", adder(f.post_filter_)},
      {&p.reserve, "ReservePlugin", "Reserve", adder(f.reserve_)},
      {&p.pre_score, "PreScorePlugin", "PreScore", adder(f.pre_score_)},
      {&p.score, "ScorePlugin", "Score", adder(f.score_)},
      {&p.pre_bind, "PreBindPlugin", "PreBind", adder(f.pre_bind_)},
      {&p.bind, "BindPlugin", "Bind", adder(f.bind_)},
      {&p.post_bind, "PostBindPlugin", "PostBind", [](Plugin*) { return false; }},
      {&p.permit, "PermitPlugin", "Permit", adder(f.permit_)},
      {&p.pre_enqueue, "PreEnqueuePlugin", "PreEnqueue", adder(f.pre_enqueue_)},
      {&p.queue_sort, "QueueSortPlugin", "QueueSort", adder(f.queue_sort_)},
  };
  std::vector<std::string> multi;
  for (const PluginRef& ref : p.multi_point.enabled) {
    if (!instances.count(ref.name)) {
      return Err(BadRequest(std::string(points[0].iface) + " \"" + ref.name + "\" does not exist"));
    }
    if (Contains(multi, ref.name)) {
      // Upstream notices it at the first extension point the plugin extends.
      return Err(BadRequest("plugin \"" + ref.name + "\" already registered as \"" +
                            std::string(FirstInterface(instances[ref.name])) + "\""));
    }
    multi.push_back(ref.name);
  }
  for (const Point& point : points) {
    std::vector<std::string> specific;
    for (const PluginRef& ref : point.set->enabled) {
      if (!instances.count(ref.name)) {
        return Err(BadRequest(std::string(point.iface) + " \"" + ref.name + "\" does not exist"));
      }
      if (Contains(specific, ref.name)) {
        return Err(BadRequest("plugin \"" + ref.name + "\" already registered as \"" +
                              std::string(point.iface) + "\""));
      }
      specific.push_back(ref.name);
    }
    // Upstream's order: plugins configured here that re-configure multiPoint ones, then the
    // other multiPoint plugins that extend this point (unless it disables them, or "*"), then
    // the rest configured here.
    const bool disable_all = Contains(point.set->disabled, "*");
    std::vector<std::string> order;
    if (!disable_all) {
      for (const std::string& n : specific) {
        if (Contains(multi, n)) order.push_back(n);
      }
      for (const std::string& n : multi) {
        if (!Contains(specific, n) && !Contains(point.set->disabled, n)) order.push_back(n);
      }
    }
    for (const std::string& n : specific) {
      if (disable_all || !Contains(multi, n)) order.push_back(n);
    }
    for (const std::string& n : order) {
      // A multiPoint plugin joins only the points it extends; one named here must extend it.
      if (!point.add(instances.at(n)) && Contains(specific, n)) {
        return Err(BadRequest("plugin \"" + n + "\" does not extend " + std::string(point.iface) +
                              " plugin"));
      }
    }
  }
  if (f.queue_sort_.size() != 1) {
    return Err(BadRequest("only one queue sort plugin required for profile with scheduler name \"" +
                          f.profile_.scheduler_name + "\", but got " +
                          std::to_string(f.queue_sort_.size())));
  }
  if (f.bind_.empty()) {
    return Err(BadRequest("at least one bind plugin is needed for profile with scheduler name \"" +
                          f.profile_.scheduler_name + "\""));
  }

  // Score weights: the score point's own setting first, then multiPoint's; 0 means 1.
  for (ScorePlugin* sp : f.score_) {
    int64_t weight = 0;
    bool seen = false;
    for (const PluginSet* set : {&p.score, &p.multi_point}) {
      for (const PluginRef& ref : set->enabled) {
        if (!seen && ref.name == sp->Name()) {
          weight = ref.weight;
          seen = true;
        }
      }
    }
    f.score_weights_.push_back(weight == 0 ? 1 : weight);
  }

  // Events: plugins that can reject a pod before it is bound register the events that may
  // help; one that registers none is woken by every event.
  std::vector<const Plugin*> done;
  auto register_events = [&](Plugin* pl) {
    if (std::find(done.begin(), done.end(), pl) != done.end()) return;
    done.push_back(pl);
    if (auto* ext = dynamic_cast<EnqueueExtensions*>(pl)) {
      for (ClusterEventWithHint& e : ext->EventsToRegister()) {
        f.events_.push_back({std::string(pl->Name()), std::move(e)});
      }
    } else {
      f.events_.push_back(
          {std::string(pl->Name()), {ClusterEvent{EventResource::kWildcard, kAll}, nullptr}});
    }
  };
  for (auto* pl : f.pre_enqueue_) register_events(pl);
  for (auto* pl : f.pre_filter_) register_events(pl);
  for (auto* pl : f.filter_) {
    register_events(pl);
    if (pl->FilterBatch(PodInfo(), {}, {})) f.batch_filter_.push_back(pl);
  }
  f.SetActiveFilters();
  for (auto* pl : f.reserve_) register_events(pl);
  for (auto* pl : f.permit_) register_events(pl);
  return fw;
}

bool Framework::QueueSortLess(const QueuedPodInfo& a, const QueuedPodInfo& b) const {
  return queue_sort_.front()->Less(a, b);
}

Status Framework::RunPreEnqueuePlugins(const PodInfo& pod) const {
  for (PreEnqueuePlugin* pl : pre_enqueue_) {
    Status s = pl->PreEnqueue(pod);
    if (!s.IsSuccess()) return s.WithPlugin(pl->Name());
  }
  return Status();
}

Status Framework::RunPreFilterPlugins(const PodInfo& pod, PreFilterResult* result,
                                      std::set<std::string>* narrowing_plugins) {
  skip_filter_.clear();
  Status s = PreFilterAll(pod, result, narrowing_plugins);
  SetActiveFilters();
  return s;
}

void Framework::SetActiveFilters() {
  active_filter_.clear();
  active_batch_filter_.clear();
  active_single_filter_.clear();
  for (FilterPlugin* pl : filter_) {
    if (!skip_filter_.empty() && Skipped(skip_filter_, pl)) continue;
    active_filter_.push_back(pl);
    const bool batch =
        std::find(batch_filter_.begin(), batch_filter_.end(), pl) != batch_filter_.end();
    (batch ? active_batch_filter_ : active_single_filter_).push_back(pl);
  }
}

Status Framework::PreFilterAll(const PodInfo& pod, PreFilterResult* result,
                               std::set<std::string>* narrowing_plugins) {
  *result = PreFilterResult();
  std::vector<std::string> with_nodes;
  Status returned;
  for (PreFilterPlugin* pl : pre_filter_) {
    PreFilterResult r;
    Status s = pl->PreFilter(pod, &r);
    if (s.IsSkip()) {
      skip_filter_.push_back(pl);
      continue;
    }
    if (!s.IsSuccess()) {
      s = s.WithPlugin(pl->Name());
      if (s.code() == Code::kUnschedulableAndUnresolvable) return s;
      if (s.code() == Code::kUnschedulable) {
        returned = s;  // preemption may still help: let the others run
        continue;
      }
      return Status::Error("running PreFilter plugin \"" + std::string(pl->Name()) +
                           "\": " + s.Message())
          .WithPlugin(pl->Name());
    }
    if (!r.AllNodes()) {
      with_nodes.emplace_back(pl->Name());
      narrowing_plugins->insert(std::string(pl->Name()));
    }
    result->Merge(r);
    if (!result->AllNodes() && result->node_names->empty()) {
      if (with_nodes.size() == 1) {
        return Status::Unresolvable("node(s) didn't satisfy plugin " + with_nodes[0]);
      }
      std::vector<std::string> sorted = with_nodes;  // upstream sets.List: sorted
      std::sort(sorted.begin(), sorted.end());
      return Status::Unresolvable("node(s) didn't satisfy plugin(s) " + GoList(sorted) +
                                  " simultaneously");
    }
  }
  return returned;
}

Status Framework::FilterFailure(const FilterPlugin* pl, Status s) {
  if (!s.IsRejected()) {
    return Status::Error("running \"" + std::string(pl->Name()) +
                         "\" filter plugin: " + s.Message())
        .WithPlugin(pl->Name());
  }
  return s.WithPlugin(pl->Name());
}

Status Framework::RunFilterPlugins(const PodInfo& pod, const NodeInfo& node) const {
  for (FilterPlugin* pl : active_filter_) {
    Status s = pl->Filter(pod, node);
    if (!s.IsSuccess()) [[unlikely]]
      return FilterFailure(pl, std::move(s));
  }
  return Status();
}

std::vector<std::pair<std::string_view, Status>> Framework::RunAllFilterPlugins(
    const PodInfo& pod, const NodeInfo& node) const {
  std::vector<std::pair<std::string_view, Status>> out;
  for (FilterPlugin* pl : filter_) {
    if (Skipped(skip_filter_, pl)) {
      out.emplace_back(pl->Name(), Status::Skip());
      continue;
    }
    out.emplace_back(pl->Name(), pl->Filter(pod, node).WithPlugin(pl->Name()));
  }
  return out;
}

void Framework::FilterNodes(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                            std::span<uint8_t> rejected) const {
  std::fill(rejected.begin(), rejected.end(), uint8_t{0});
  for (FilterPlugin* pl : active_batch_filter_) pl->FilterBatch(pod, nodes, rejected);
  if (active_single_filter_.empty()) return;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (rejected[i]) continue;
    for (FilterPlugin* pl : active_single_filter_) {
      if (!pl->Filter(pod, *nodes[i]).IsSuccess()) {
        rejected[i] = 1;
        break;
      }
    }
  }
}

Status Framework::RunFilterPluginsWithNominatedPods(const PodInfo& pod,
                                                    const NodeInfo& node) const {
  const Nominator& nominator = handle_->Nominated();
  if (nominator.Empty()) return RunFilterPlugins(pod, node);
  std::span<const PodInfoPtr> nominated = nominator.NominatedPodsForNode(node.name());
  if (!nominated.empty()) {
    NodeInfo with = node;
    bool added = false;
    for (const PodInfoPtr& p : nominated) {
      if (p->priority >= pod.priority && p->uid() != pod.uid()) {
        with.AddPod(p);
        added = true;
      }
    }
    if (added) {
      Status s = RunFilterPlugins(pod, with);
      if (!s.IsSuccess()) return s;
    }
  }
  return RunFilterPlugins(pod, node);
}

Status Framework::RunPostFilterPlugins(const PodInfo& pod, const NodeToStatus& statuses,
                                       NominatingInfo* nominating) {
  std::vector<std::string> reasons;
  std::string_view rejector;
  for (PostFilterPlugin* pl : post_filter_) {
    NominatingInfo r;
    Status s = pl->PostFilter(pod, statuses, &r);
    if (s.IsSuccess()) {
      *nominating = r;
      return s;
    }
    if (s.code() == Code::kUnschedulableAndUnresolvable) {
      if (r.mode != NominatingInfo::Mode::kNoop) *nominating = r;
      return s.WithPlugin(pl->Name());
    }
    if (!s.IsRejected()) return Status::Error(s.Message()).WithPlugin(pl->Name());
    for (const std::string& reason : s.Reasons()) reasons.push_back(reason);
    if (rejector.empty()) rejector = pl->Name();
    if (r.mode != NominatingInfo::Mode::kNoop) *nominating = r;
  }
  return Status(Code::kUnschedulable, std::move(reasons)).WithPlugin(rejector);
}

Status Framework::RunScorePlugins(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                                  std::vector<NodePluginScores>* out, bool details) {
  out->resize(nodes.size());
  for (size_t j = 0; j < nodes.size(); ++j) {
    (*out)[j].node = nodes[j];
    (*out)[j].scores.clear();
    (*out)[j].total = 0;
  }
  Status s = ScoreInto(pod, nodes, &scratch_totals_, details ? out : nullptr);
  if (!s.IsSuccess()) return s;
  for (size_t j = 0; j < nodes.size(); ++j) (*out)[j].total = scratch_totals_[j];
  return s;
}

Status Framework::RunScorePlugins(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                                  std::vector<int64_t>* totals) {
  return ScoreInto(pod, nodes, totals, nullptr);
}

Status Framework::ScoreInto(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                            std::vector<int64_t>* totals, std::vector<NodePluginScores>* details) {
  skip_score_.clear();
  for (PreScorePlugin* pl : pre_score_) {
    Status s = pl->PreScore(pod, nodes);
    if (s.IsSkip()) {
      skip_score_.push_back(pl);
      continue;
    }
    if (!s.IsSuccess()) {
      return Status::Error("running PreScore plugin \"" + std::string(pl->Name()) +
                           "\": " + s.Message());
    }
  }
  const size_t n = nodes.size();
  totals->assign(n, 0);
  int64_t* total = totals->data();
  std::vector<NodeScore>& scores = scratch_scores_;
  std::vector<int64_t>& raw = scratch_raw_;
  scores.resize(n);
  raw.resize(n);
  for (size_t i = 0; i < score_.size(); ++i) {
    ScorePlugin* pl = score_[i];
    if (!skip_score_.empty() && Skipped(skip_score_, pl)) continue;
    // Only the pick matters here, and a score shared by every node does not change it.
    if (details == nullptr && pl->UniformScores(pod, nodes)) continue;
    if (details == nullptr && !pl->HasNormalizeScore() &&
        pl->AddWeightedScores(pod, nodes, score_weights_[i], total)) {
      continue;
    }
    pl->ScoreNodes(pod, nodes, scores);
    if (details != nullptr) {
      for (size_t j = 0; j < n; ++j) raw[j] = scores[j].score;
    }
    if (pl->HasNormalizeScore()) pl->NormalizeScore(pod, scores);
    const int64_t weight = score_weights_[i];
    // One pass adds the weighted scores and notes whether any lies outside [0, 100] (as an
    // unsigned value, a negative one is above 100 too); the error names the first such.
    uint64_t out_of_range = 0;
    const NodeScore* sc = scores.data();
    for (size_t j = 0; j < n; ++j) {
      const int64_t v = sc[j].score;
      out_of_range |= static_cast<uint64_t>(v > kMaxNodeScore || v < 0);
      total[j] += v * weight;
    }
    if (out_of_range != 0) {
      for (size_t j = 0; j < n; ++j) {
        const int64_t v = sc[j].score;
        if (v < 0 || v > kMaxNodeScore) {
          return Status::Error("plugin \"" + std::string(pl->Name()) +
                               "\" returns an invalid score " + std::to_string(v) +
                               ", it should in the range of [0, 100] after " + "normalizing");
        }
      }
    }
    if (details != nullptr) {
      for (size_t j = 0; j < n; ++j) {
        const int64_t v = sc[j].score;
        (*details)[j].scores.push_back({pl->Name(), raw[j], v, weight, v * weight});
      }
    }
  }
  return Status();
}

Status Framework::RunReservePluginsReserve(const PodInfo& pod, const std::string& node) {
  for (ReservePlugin* pl : reserve_) {
    Status s = pl->Reserve(pod, node);
    if (s.IsSuccess()) continue;
    if (s.IsRejected()) return s.WithPlugin(pl->Name());
    return Status::Error("running Reserve plugin \"" + std::string(pl->Name()) +
                         "\": " + s.Message())
        .WithPlugin(pl->Name());
  }
  return Status();
}

void Framework::RunReservePluginsUnreserve(const PodInfo& pod, const std::string& node) {
  for (auto it = reserve_.rbegin(); it != reserve_.rend(); ++it) (*it)->Unreserve(pod, node);
}

Status Framework::RunPermitPlugins(const PodInfo& pod, const std::string& node) {
  for (PermitPlugin* pl : permit_) {
    Status s = pl->Permit(pod, node);
    if (s.IsSuccess()) continue;
    if (s.IsRejected()) return s.WithPlugin(pl->Name());
    return Status::Error("running Permit plugin \"" + std::string(pl->Name()) +
                         "\": " + s.Message())
        .WithPlugin(pl->Name());
  }
  return Status();
}

Status Framework::RunPreBindPlugins(const PodInfo& pod, const std::string& node) {
  for (PreBindPlugin* pl : pre_bind_) {
    Status s = pl->PreBind(pod, node);
    if (s.IsSuccess() || s.IsSkip()) continue;
    return Status::Error("running PreBind plugin \"" + std::string(pl->Name()) +
                         "\": " + s.Message())
        .WithPlugin(pl->Name());
  }
  return Status();
}

void Framework::RunBindPlugins(const PodInfoPtr& pod, const std::string& node,
                               std::function<void(Status)> done) {
  RunBindAt(0, pod, node, std::move(done));
}

void Framework::RunBindAt(size_t index, PodInfoPtr pod, std::string node,
                          std::function<void(Status)> done) {
  if (index >= bind_.size()) return done(Status::Skip());
  BindPlugin* pl = bind_[index];
  pl->Bind(pod, node, [this, index, pod, node, pl, done = std::move(done)](Status s) mutable {
    if (s.IsSkip()) return RunBindAt(index + 1, std::move(pod), std::move(node), std::move(done));
    if (!s.IsSuccess()) {
      return done(
          Status::Error("running Bind plugin \"" + std::string(pl->Name()) + "\": " + s.Message()));
    }
    done(s);
  });
}

std::vector<ClusterEvent> Framework::EventsOf(std::string_view plugin) const {
  std::vector<ClusterEvent> out;
  for (const RegisteredEvent& e : events_) {
    if (e.plugin == plugin) out.push_back(e.event.event);
  }
  return out;
}

}  // namespace kt::scheduler
