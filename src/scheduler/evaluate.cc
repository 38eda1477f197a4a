#include "scheduler/evaluate.h"

#include <algorithm>

#include "scheduler/algorithm.h"
#include "scheduler/plugins/registry.h"

namespace kt::scheduler {

// A Handle that only reads: no client, no recorder; Post runs at once.
class Evaluator::EvalHandle : public Handle, public Nominator {
 public:
  explicit EvalHandle(Evaluator* e) : e_(e) {}
  void set_framework(Framework* fw) { fw_ = fw; }

  const NodeLister& Nodes() const override { return e_->cache_; }
  const Nominator& Nominated() const override { return *this; }
  client::Client* ClientOrNull() override { return nullptr; }
  client::EventRecorder* RecorderOrNull() override { return nullptr; }
  client::Clock& Clock() override { return clock_; }
  const FeatureGates& Gates() const override { return e_->gates_; }
  ObjectPtr GetPod(std::string_view ns, std::string_view name) const override {
    for (const ObjectPtr& p : e_->pods_) {
      if (p->meta().namespace_ == ns && p->meta().name == name) return p;
    }
    return nullptr;
  }
  uint64_t SchedulingCycle() const override { return e_->cycle_; }
  Framework& Fw() override { return *fw_; }
  void Post(std::function<void()> fn) override { fn(); }
  void Activate(const std::string&) override {}

  std::span<const PodInfoPtr> NominatedPodsForNode(std::string_view node) const override {
    scratch_.clear();
    for (const auto& [n, p] : e_->nominated_) {
      if (n == node) scratch_.push_back(p);
    }
    return scratch_;
  }
  bool Empty() const override { return e_->nominated_.empty(); }

 private:
  Evaluator* e_;
  Framework* fw_ = nullptr;
  client::SimulatedClock clock_{WallNow()};
  mutable std::vector<PodInfoPtr> scratch_;
};

Evaluator::Evaluator(std::vector<Profile> profiles, FeatureGates gates)
    : profiles_(std::move(profiles)), gates_(gates) {}

Evaluator::~Evaluator() = default;

void Evaluator::AddNode(const ObjectPtr& node) { cache_.AddNode(node); }

void Evaluator::AddPod(const ObjectPtr& pod) {
  const api::Pod* p = pod->As<api::Pod>();
  if (p == nullptr) return;
  pods_.push_back(pod);
  if (!p->spec.node_name.empty()) {
    cache_.AddPod(NewPodInfo(pod));
  } else if (!p->status.nominated_node_name.empty()) {
    nominated_.emplace_back(p->status.nominated_node_name, NewPodInfo(pod));
  }
}

kt::Status Evaluator::Init() {
  const PluginRegistry registry = InTreeRegistry();
  for (const Profile& p : profiles_) {
    Profiled entry;
    entry.handle = std::make_unique<EvalHandle>(this);
    Result<std::unique_ptr<Framework>> fw = Framework::New(p, registry, entry.handle.get());
    if (!fw) {
      return fw.error().WithPrefix("creating profile for scheduler name " + p.scheduler_name +
                                   ": ");
    }
    entry.framework = std::move(*fw);
    entry.handle->set_framework(entry.framework.get());
    frameworks_.push_back(std::move(entry));
  }
  return kt::Status::Ok();
}

Result<PodEvaluation> Evaluator::Evaluate(const ObjectPtr& object) {
  PodInfoPtr pod = NewPodInfo(object);
  PodEvaluation out;
  const std::string& name = pod->pod().spec.scheduler_name;
  out.scheduler_name = name.empty() ? "default-scheduler" : name;
  Framework* fw = nullptr;
  for (Profiled& p : frameworks_) {
    if (p.framework->scheduler_name() == out.scheduler_name) fw = p.framework.get();
  }
  if (fw == nullptr) {
    out.handled = false;
    return out;
  }
  // Away from its own place: a bound pod's resources are not counted against itself.
  const std::string own_node = cache_.NodeOfPod(pod->uid());
  PodInfoPtr own;
  if (!own_node.empty()) {
    for (const PodInfoPtr& p : cache_.Get(own_node)->pods()) {
      if (p->uid() == pod->uid()) own = p;
    }
    cache_.RemovePod(pod->uid());
  }

  ++cycle_;
  size_t start = 0;
  ScheduleResult r = SchedulePod(*fw, cache_, *pod, &start, ScheduleOptions{.evaluate_all = true});
  if (!r.status.IsSuccess() && !r.fit_error) {
    if (own) cache_.AddPod(own);
    if (r.num_all_nodes == 0) {  // not an error: the pod just has nowhere to go
      out.message = r.status.Message();
      return out;
    }
    return Err(BadRequest(r.status.Message()));
  }
  out.pre_filter_message = r.diagnosis.pre_filter_msg;
  for (NodeInfo* n : cache_.List()) {
    NodeEvaluation ne;
    ne.node = n;
    for (auto& [plugin, s] : fw->RunAllFilterPlugins(*pod, *n)) {
      ne.filters.emplace_back(std::string(plugin), std::move(s));
    }
    ne.feasible = r.diagnosis.pre_filter_msg.empty() &&
                  std::all_of(ne.filters.begin(), ne.filters.end(), [](const auto& f) {
                    return f.second.IsSuccess() || f.second.IsSkip();
                  });
    for (const NodePluginScores& s : r.scores) {
      if (s.node == n) {
        ne.scores = s.scores;
        ne.total_score = s.total;
      }
    }
    out.nodes.push_back(std::move(ne));
  }
  if (!r.host.empty()) {
    out.selected_node = r.host;
  } else {
    NominatingInfo nominating;
    if (fw->HasPostFilterPlugins()) {
      Status post = fw->RunPostFilterPlugins(*pod, r.diagnosis.node_to_status, &nominating);
      r.diagnosis.post_filter_msg = post.Message();
      if (post.IsSuccess()) {
        out.nominated_node = nominating.nominated_node_name;
        for (const PodInfoPtr& v : nominating.victims) {
          out.victims.push_back(v->namespace_() + "/" + v->name());
        }
      }
    }
    out.message = FitErrorMessage(r.num_all_nodes, r.diagnosis);
  }
  if (own) cache_.AddPod(own);
  return out;
}

}  // namespace kt::scheduler
