#include "scheduler/plugins/defaultpreemption/default_preemption.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <map>

#include "api/table.h"
#include "client/client.h"
#include "client/event_recorder.h"
#include "core/time.h"

namespace kt::scheduler {

namespace {

constexpr std::string_view kNotHelpful = "Preemption is not helpful for scheduling";
constexpr std::string_view kNoVictims = "No preemption victims found for incoming pod";

// pod.status.startTime, or now when unset (upstream GetPodStartTime).
client::Time StartTime(const PodInfo& p, client::Time now) {
  const std::string& s = p.pod().status.start_time;
  if (s.empty()) return now;
  api::Timestamp t = api::ParseTimestamp(s);
  if (t.zero) return now;
  return client::Time(std::chrono::seconds(t.seconds)) + std::chrono::nanoseconds(t.nanos);
}

bool MoreImportant(const PodInfo& a, const PodInfo& b, client::Time now) {
  if (a.priority != b.priority) return a.priority > b.priority;
  return StartTime(a, now) < StartTime(b, now);
}

// Terminating because of an earlier preemption: deleted, with the scheduler's DisruptionTarget.
bool TerminatingByPreemption(const api::Pod& p) {
  if (!p.meta.deletion_timestamp) return false;
  for (const api::Condition& c : p.status.conditions) {
    if (c.type == "DisruptionTarget") {
      return c.status == "True" && c.reason == "PreemptionByScheduler";
    }
  }
  return false;
}

struct Candidate {
  const NodeInfo* node;
  std::vector<PodInfoPtr> victims;  // most important first
  int64_t pdb_violations = 0;
};

std::string StatusPatch(const std::string& status_fields) {
  return "{\"status\":{" + status_fields + "}}";
}

class DefaultPreemption : public PostFilterPlugin,
                          public PreEnqueuePlugin,
                          public EnqueueExtensions {
 public:
  DefaultPreemption(const DefaultPreemptionArgs& args, Handle* handle)
      : args_(args), handle_(handle) {}

  std::string_view Name() const override { return kDefaultPreemptionName; }

  // While the victims of its preemption are being evicted, the preemptor waits.
  Status PreEnqueue(const PodInfo& pod) override {
    auto it = preempting_.find(pod.uid());
    if (it == preempting_.end()) return Status();
    // The last victim gone (or going) is as good as done (upstream IsPodRunningPreemption).
    ObjectPtr last = handle_->GetPod(it->second.first, it->second.second);
    if (last == nullptr || last->As<api::Pod>()->meta.deletion_timestamp) return Status();
    return Status::Unresolvable("waiting for the preemption for this pod to be finished");
  }

  std::vector<ClusterEventWithHint> EventsToRegister() override {
    // Only to wake a preemptor waiting above; the rejecting plugins decide about requeueing.
    return {
        {{EventResource::kPod, kDelete}, [](const PodInfo&, const ObjectPtr&, const ObjectPtr&) {
           return QueueingHint::kQueueSkip;
         }}};
  }

  Status PostFilter(const PodInfo& pod, const NodeToStatus& statuses,
                    NominatingInfo* nominating) override {
    Status s = Preempt(pod, statuses, nominating);
    if (s.IsSuccess() || s.Message().empty()) return s;
    return Status(s.code(), "preemption: " + s.Message());
  }

 private:
  Status Preempt(const PodInfo& pod, const NodeToStatus& statuses, NominatingInfo* nominating) {
    // The preemptor as the scheduler knows it now (its nomination may have changed).
    ObjectPtr current = handle_->GetPod(pod.namespace_(), pod.name());
    const api::Pod& p = current ? *current->As<api::Pod>() : pod.pod();
    if (p.spec.preemption_policy == "Never") {
      return Status::Unschedulable("not eligible due to preemptionPolicy=Never.");
    }
    const std::string& nominated = p.status.nominated_node_name;
    if (!nominated.empty() &&
        statuses.Get(nominated).code() != Code::kUnschedulableAndUnresolvable) {
      if (const NodeInfo* node = handle_->Nodes().Get(nominated)) {
        for (const PodInfoPtr& other : node->pods()) {
          if (other->priority < pod.priority && TerminatingByPreemption(other->pod())) {
            return Status::Unschedulable(
                "not eligible due to a terminating pod on the nominated node.");
          }
        }
      }
    }

    std::span<NodeInfo* const> all = handle_->Nodes().List();
    std::vector<const NodeInfo*> potential;
    for (const NodeInfo* n : all) {
      if (statuses.Get(n->name()).code() == Code::kUnschedulable) potential.push_back(n);
    }
    Diagnosis diagnosis;
    diagnosis.node_to_status.SetAbsentNodesStatus(Status::Unresolvable(std::string(kNotHelpful)));
    std::vector<Candidate> candidates;
    std::vector<std::string> errors;
    if (!potential.empty()) {
      const int64_t num = static_cast<int64_t>(potential.size());
      int64_t wanted = num * args_.min_candidate_nodes_percentage / 100;
      wanted = std::clamp<int64_t>(wanted, args_.min_candidate_nodes_absolute, num);
      int64_t non_violating = 0;
      for (const NodeInfo* n : potential) {
        std::vector<PodInfoPtr> victims;
        Status vs = SelectVictimsOnNode(pod, *n, &victims);
        if (vs.IsSuccess() && !victims.empty()) {
          candidates.push_back(Candidate{n, std::move(victims), 0});
          ++non_violating;
          if (non_violating > 0 && static_cast<int64_t>(candidates.size()) >= wanted) break;
          continue;
        }
        if (vs.IsSuccess()) {
          vs = Status::Error("expected at least one victim pod on node \"" + n->name() + "\"");
        }
        if (vs.code() == Code::kError) errors.push_back(vs.Message());
        diagnosis.node_to_status.Set(n->name(), vs);
      }
    }
    if (candidates.empty()) {
      if (!errors.empty()) return Status::Error(errors.front());
      nominating->mode = NominatingInfo::Mode::kOverride;  // clears an old nomination
      nominating->nominated_node_name.clear();
      return Status::Unschedulable(FitErrorMessage(static_cast<int>(all.size()), diagnosis));
    }
    const Candidate& best = PickOneNode(candidates);
    Actuate(pod, best);
    nominating->mode = NominatingInfo::Mode::kOverride;
    nominating->nominated_node_name = best.node->name();
    nominating->victims = best.victims;
    return Status();
  }

  // Upstream SelectVictimsOnNode: remove every lower-priority pod, check the preemptor fits,
  // then put back (reprieve) as many as possible, most important first.
  Status SelectVictimsOnNode(const PodInfo& pod, const NodeInfo& node,
                             std::vector<PodInfoPtr>* victims) {
    NodeInfo copy = node;
    std::vector<PodInfoPtr> potential;
    for (const PodInfoPtr& p : node.pods()) {
      if (p->priority < pod.priority) potential.push_back(p);
    }
    if (potential.empty()) return Status::Unresolvable(std::string(kNoVictims));
    for (const PodInfoPtr& p : potential) copy.RemovePod(p->uid());
    Framework& fw = handle_->Fw();
    Status s = fw.RunFilterPluginsWithNominatedPods(pod, copy);
    if (!s.IsSuccess()) return s;
    const client::Time now = handle_->Clock().Now();
    std::stable_sort(
        potential.begin(), potential.end(),
        [now](const PodInfoPtr& a, const PodInfoPtr& b) { return MoreImportant(*a, *b, now); });
    for (const PodInfoPtr& p : potential) {
      copy.AddPod(p);
      if (!fw.RunFilterPluginsWithNominatedPods(pod, copy).IsSuccess()) {
        copy.RemovePod(p->uid());
        victims->push_back(p);
      }
    }
    return Status();
  }

  // Upstream pickOneNodeForPreemption; the final tie goes to the first candidate.
  const Candidate& PickOneNode(const std::vector<Candidate>& candidates) {
    const client::Time now = handle_->Clock().Now();
    std::vector<const Candidate*> left;
    for (const Candidate& c : candidates) left.push_back(&c);
    auto keep_max = [&](auto score) {
      if (left.size() <= 1) return;
      int64_t best = INT64_MIN;
      for (const Candidate* c : left) best = std::max(best, score(*c));
      std::vector<const Candidate*> next;
      for (const Candidate* c : left) {
        if (score(*c) == best) next.push_back(c);
      }
      left = std::move(next);
    };
    keep_max([](const Candidate& c) { return -c.pdb_violations; });
    keep_max([](const Candidate& c) { return -static_cast<int64_t>(c.victims[0]->priority); });
    keep_max([](const Candidate& c) {
      int64_t sum = 0;
      for (const PodInfoPtr& v : c.victims) sum += int64_t{v->priority} + (int64_t{1} << 31);
      return -sum;
    });
    keep_max([](const Candidate& c) { return -static_cast<int64_t>(c.victims.size()); });
    keep_max([now](const Candidate& c) {
      // The earliest start among the highest-priority victims; later is better.
      int32_t max_priority = c.victims[0]->priority;
      client::Time earliest = StartTime(*c.victims[0], now);
      for (const PodInfoPtr& v : c.victims) {
        if (v->priority == max_priority) {
          earliest = std::min(earliest, StartTime(*v, now));
        } else if (v->priority > max_priority) {
          max_priority = v->priority;
          earliest = StartTime(*v, now);
        }
      }
      return static_cast<int64_t>(earliest.time_since_epoch().count());
    });
    return *left.front();
  }

  // Evicts the victims (asynchronously): DisruptionTarget condition, delete, Preempted event;
  // clears the nominations of lower-priority pods nominated to the node.
  void Actuate(const PodInfo& preemptor, const Candidate& best) {
    client::Client* client = handle_->ClientOrNull();
    if (client == nullptr) return;  // evaluation only
    std::vector<PodInfoPtr> victims;
    for (const PodInfoPtr& v : best.victims) {
      ObjectPtr now = handle_->GetPod(v->namespace_(), v->name());
      const api::Pod* live = now ? now->As<api::Pod>() : nullptr;
      if (live != nullptr && live->meta.uid == v->uid() && !live->meta.deletion_timestamp) {
        victims.push_back(v);
      }
    }
    for (const PodInfoPtr& n : handle_->Nominated().NominatedPodsForNode(best.node->name())) {
      if (n->priority >= preemptor.priority || n->pod().status.nominated_node_name.empty()) {
        continue;
      }
      client->Patch(server::Resource::kPods, n->namespace_(), n->name(),
                    server::Subresource::kStatus, api::PatchType::kStrategicMergePatch,
                    StatusPatch("\"nominatedNodeName\":null"),
                    [](client::ApiResult<store::Bytes>) {});
    }
    if (victims.empty()) return;
    const std::string uid = preemptor.uid();
    preempting_[uid] = {victims.back()->namespace_(), victims.back()->name()};
    const std::string node = best.node->name();
    // observedGeneration: the victim's generation (upstream
    // CalculatePodConditionObservedGeneration with PodObservedGenerationTracking on).
    auto condition = [this](const PodInfo& victim) {
      std::string c = "\"conditions\":[{\"type\":\"DisruptionTarget\",";
      if (const int64_t g = victim.pod().meta.generation; g != 0) {
        c.append("\"observedGeneration\":").append(std::to_string(g)).append(",");
      }
      c.append("\"status\":\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":\"");
      c.append(FormatRfc3339(handle_->Clock().Now()));
      c.append("\",\"reason\":\"PreemptionByScheduler\",\"message\":\"");
      c.append(handle_->Fw().scheduler_name());
      c.append(": preempting to accommodate a higher priority pod\"}]");
      return c;
    };
    const client::ObjectRef preemptor_ref = client::RefOf(*preemptor.object);
    const std::string note = "Preempted by pod " + uid + " on node " + node;
    struct Progress {
      std::atomic<size_t> left;
      std::atomic<bool> failed{false};
    };
    auto progress = std::make_shared<Progress>();
    progress->left = victims.size();
    Handle* handle = handle_;
    auto finish_one = [this, handle, progress, uid](bool ok) {
      if (!ok) progress->failed = true;
      if (progress->left.fetch_sub(1) != 1) return;
      const bool failed = progress->failed;
      handle->Post([this, handle, uid, failed] {
        preempting_.erase(uid);
        if (failed) handle->Activate(uid);  // let it try again rather than wait for an event
      });
    };
    for (const PodInfoPtr& v : victims) {
      client::EventRecorder* recorder = handle_->RecorderOrNull();
      const client::ObjectRef victim_ref = client::RefOf(*v->object);
      const std::string ns = v->namespace_();
      const std::string name = v->name();
      client->Patch(server::Resource::kPods, ns, name, server::Subresource::kStatus,
                    api::PatchType::kStrategicMergePatch, StatusPatch(condition(*v)),
                    [client, recorder, victim_ref, preemptor_ref, note, ns, name, uid = v->uid(),
                     finish_one](client::ApiResult<store::Bytes> r) {
                      if (!r) {
                        // Gone already: nothing to evict.
                        return finish_one(r.error().code == 404);
                      }
                      server::DeleteOptions opts;
                      opts.precondition_uid = uid;
                      client->Delete(server::Resource::kPods, ns, name, opts,
                                     [recorder, victim_ref, preemptor_ref, note,
                                      finish_one](client::ApiResult<store::Bytes> d) {
                                       if (d && recorder != nullptr) {
                                         recorder->Eventf(victim_ref, &preemptor_ref,
                                                          client::kEventTypeNormal, "Preempted",
                                                          "Preempting", note);
                                       }
                                       finish_one(d || d.error().code == 404);
                                     });
                    });
    }
  }

  const DefaultPreemptionArgs args_;
  Handle* handle_;
  // Preemptor UID → (namespace, name) of its last victim, while its victims are evicted.
  std::map<std::string, std::pair<std::string, std::string>> preempting_;
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewDefaultPreemption(const PluginArgs& args, Handle* handle) {
  return std::unique_ptr<Plugin>(new DefaultPreemption(args.default_preemption, handle));
}

}  // namespace kt::scheduler
