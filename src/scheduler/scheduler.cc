#include "scheduler/scheduler.h"

#include <rapidjson/writer.h>

#include "api/string_output.h"
#include "core/spin.h"
#include "core/thread_name.h"
#include "core/time.h"
#include "scheduler/algorithm.h"
#include "scheduler/plugins/registry.h"

namespace kt::scheduler {

namespace {

// Bindings (and failure reports) the scheduler thread queues for its API thread before waking
// it, and scheduling attempts it lets pass before it wakes it for fewer. A wake-up is a futex
// call on one side and a context switch on the other: on a small virtual machine, more than a
// binding's own work.
constexpr size_t kApiBatch = 16;

// Upstream truncates event notes beyond validation.NoteLengthLimit (1024 bytes).
std::string TruncateMessage(std::string m) {
  constexpr size_t kLimit = 1024;
  if (m.size() <= kLimit) return m;
  m.resize(kLimit - 4);
  m += " ...";
  return m;
}

bool Assigned(const api::Pod& p) { return !p.spec.node_name.empty(); }

const api::Pod& PodOf(const ObjectPtr& o) { return *o->As<api::Pod>(); }

void WriteString(rapidjson::Writer<api::StringOutput>& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

}  // namespace

// What the plugins of one profile reach: the scheduler's cache, queue, client and clock.
class Scheduler::ProfileHandle : public Handle {
 public:
  explicit ProfileHandle(Scheduler* s) : s_(s) {}
  void set_framework(Framework* fw) { fw_ = fw; }
  void set_recorder(client::EventRecorder* r) { recorder_ = r; }

  const NodeLister& Nodes() const override { return s_->cache_; }
  const Nominator& Nominated() const override { return *s_->queue_; }
  client::Client* ClientOrNull() override { return s_->options_.client; }
  client::EventRecorder* RecorderOrNull() override { return recorder_; }
  client::Clock& Clock() override { return *s_->options_.clock; }
  const FeatureGates& Gates() const override { return s_->options_.gates; }
  ObjectPtr GetPod(std::string_view ns, std::string_view name) const override {
    return s_->options_.get_pod ? s_->options_.get_pod(ns, name) : nullptr;
  }
  uint64_t SchedulingCycle() const override { return s_->cycle_; }
  Framework& Fw() override { return *fw_; }
  void Post(std::function<void()> fn) override { s_->Post(std::move(fn)); }
  void Activate(const std::string& uid) override {
    s_->Post([s = s_, uid] { s->queue_->Activate(uid); });
  }

 private:
  Scheduler* s_;
  Framework* fw_ = nullptr;
  client::EventRecorder* recorder_ = nullptr;
};

kt::Status ValidateProfiles(const std::vector<Profile>& profiles, const FeatureGates& gates) {
  Scheduler::Options o;
  client::SimulatedClock clock;
  o.clock = &clock;
  o.profiles = profiles;
  o.gates = gates;
  Result<std::unique_ptr<Scheduler>> s = Scheduler::New(std::move(o));
  return s ? kt::Status::Ok() : s.error();
}

Scheduler::Scheduler(Options options) : options_(std::move(options)) {
  lifeline_ = std::make_shared<Lifeline>();
  lifeline_->scheduler = this;
}

Result<std::unique_ptr<Scheduler>> Scheduler::New(Options options) {
  if (options.clock == nullptr) return Err(BadRequest("the scheduler needs a clock"));
  if (options.profiles.empty()) return Err(BadRequest("at least one profile is required"));
  std::unique_ptr<Scheduler> s(new Scheduler(std::move(options)));
  const PluginRegistry registry = InTreeRegistry();
  for (const Profile& p : s->options_.profiles) {
    if (p.scheduler_name.empty()) return Err(BadRequest("scheduler name is needed"));
    if (s->profiles_.count(p.scheduler_name)) {
      return Err(BadRequest("duplicate profile with scheduler name \"" + p.scheduler_name + "\""));
    }
    Profiled& entry = s->profiles_[p.scheduler_name];
    entry.handle = std::make_unique<ProfileHandle>(s.get());
    Result<std::unique_ptr<Framework>> fw = Framework::New(p, registry, entry.handle.get());
    if (!fw) {
      return Err(
          fw.error().WithPrefix("initializing profiles: creating profile for scheduler "
                                "name " +
                                p.scheduler_name + ": "));
    }
    entry.framework = std::move(*fw);
    entry.handle->set_framework(entry.framework.get());
    if (s->options_.client != nullptr) {
      entry.recorder =
          client::NewEventsV1Recorder(s->options_.client, s->options_.clock, p.scheduler_name,
                                      p.scheduler_name + "-" + s->options_.hostname);
      entry.handle->set_recorder(entry.recorder.get());
    }
  }
  Scheduler* raw = s.get();
  s->queue_ = std::make_unique<SchedulingQueue>(
      s->options_.clock, s->options_.queue,
      [raw](const PodInfo& pod) { return raw->FrameworkFor(pod.pod()); });
  return s;
}

Scheduler::~Scheduler() {
  Stop();
  for (auto& [name, p] : profiles_) {
    if (p.recorder) p.recorder->Stop();
  }
}

Framework* Scheduler::FrameworkFor(const api::Pod& pod) const {
  // The API server defaults spec.schedulerName; pods stored before it did carry none.
  const std::string& name = pod.spec.scheduler_name;
  auto it =
      profiles_.find(name.empty() ? std::string_view("default-scheduler") : std::string_view(name));
  return it == profiles_.end() ? nullptr : it->second.framework.get();
}

client::EventRecorder* Scheduler::RecorderFor(const Framework* fw) const {
  auto it = profiles_.find(fw->scheduler_name());
  return it == profiles_.end() ? nullptr : it->second.recorder.get();
}

void Scheduler::AddEventHandlers(client::Informer* pods, client::Informer* nodes) {
  for (client::Informer* inf : {pods, nodes}) {
    if (inf->manual_dispatch()) {
      pumped_.push_back(inf);
      inf->SetOnPending([this] { Wake(); });
    }
  }
  const bool pods_here = pods->manual_dispatch();
  const bool nodes_here = nodes->manual_dispatch();
  // On the scheduler's thread the handlers act at once; from another thread they post.
  auto run = [this](bool here, std::function<void()> fn) {
    if (here) {
      fn();
    } else {
      Post(std::move(fn));
    }
  };
  pods->AddEventHandler({
      .on_add = [this, run, pods_here](const ObjectPtr& o,
                                       bool) { run(pods_here, [this, o] { OnPodAdd(o); }); },
      .on_update = [this, run, pods_here](
                       const ObjectPtr& a,
                       const ObjectPtr& b) { run(pods_here, [this, a, b] { OnPodUpdate(a, b); }); },
      .on_delete = [this, run, pods_here](
                       const ObjectPtr& o) { run(pods_here, [this, o] { OnPodDelete(o); }); },
  });
  nodes->AddEventHandler({
      .on_add = [this, run, nodes_here](const ObjectPtr& o,
                                        bool) { run(nodes_here, [this, o] { OnNodeAdd(o); }); },
      .on_update =
          [this, run, nodes_here](const ObjectPtr& a, const ObjectPtr& b) {
            run(nodes_here, [this, a, b] { OnNodeUpdate(a, b); });
          },
      .on_delete = [this, run, nodes_here](
                       const ObjectPtr& o) { run(nodes_here, [this, o] { OnNodeDelete(o); }); },
  });
}

// --- Event handlers (scheduler thread) --------------------------------------------------------

void Scheduler::OnPodAdd(const ObjectPtr& obj) {
  const api::Pod& pod = PodOf(obj);
  if (Assigned(pod)) {
    cache_.AddPod(NewPodInfo(obj));
    queue_->MoveAllToActiveOrBackoffQueue({EventResource::kAssignedPod, kAdd}, nullptr, obj);
    return;
  }
  if (Responsible(pod)) queue_->Add(NewPodInfo(obj));
}

void Scheduler::OnPodUpdate(const ObjectPtr& old_obj, const ObjectPtr& new_obj) {
  const api::Pod& old_pod = PodOf(old_obj);
  const api::Pod& new_pod = PodOf(new_obj);
  if (Assigned(old_pod)) {
    cache_.UpdatePod(nullptr, NewPodInfo(new_obj));
    for (const ClusterEvent& e : PodSchedulingPropertiesChange(new_pod, old_pod)) {
      queue_->MoveAllToActiveOrBackoffQueue(e, old_obj, new_obj);
    }
    return;
  }
  if (Assigned(new_pod)) {
    // The binding arrived: the pod is placed (an assumed pod is confirmed).
    cache_.AddPod(NewPodInfo(new_obj));
    queue_->MoveAllToActiveOrBackoffQueue({EventResource::kAssignedPod, kAdd}, nullptr, new_obj);
    if (Responsible(new_pod)) queue_->Delete(new_pod.meta.uid);
    return;
  }
  if (!Responsible(new_pod)) return;
  if (old_obj->revision == new_obj->revision) return;
  if (cache_.IsAssumedPod(new_pod.meta.uid)) return;  // being bound
  queue_->Update(NewPodInfo(old_obj), NewPodInfo(new_obj));
  // A nomination that went away frees what it held on its node.
  const std::string& was = old_pod.status.nominated_node_name;
  if (!was.empty() && was != new_pod.status.nominated_node_name) {
    const int32_t priority = PodPriority(old_pod);
    queue_->MoveAllToActiveOrBackoffQueue(
        {EventResource::kAssignedPod, kDelete}, old_obj, nullptr,
        [priority](const PodInfo& p) { return p.priority <= priority; });
  }
}

void Scheduler::OnPodDelete(const ObjectPtr& obj) {
  const api::Pod& pod = PodOf(obj);
  if (Assigned(pod)) {
    cache_.RemovePod(pod.meta.uid);
    queue_->MoveAllToActiveOrBackoffQueue({EventResource::kAssignedPod, kDelete}, obj, nullptr);
    return;
  }
  if (!Responsible(pod)) return;
  queue_->Delete(pod.meta.uid);
  if (cache_.ForgetPod(pod.meta.uid)) {
    // Deleted while being bound: what it was assumed to take is free again.
    queue_->MoveAllToActiveOrBackoffQueue({EventResource::kAssignedPod, kDelete}, obj, nullptr);
  } else if (!pod.status.nominated_node_name.empty()) {
    const int32_t priority = PodPriority(pod);
    queue_->MoveAllToActiveOrBackoffQueue(
        {EventResource::kAssignedPod, kDelete}, obj, nullptr,
        [priority](const PodInfo& p) { return p.priority <= priority; });
  }
}

void Scheduler::OnNodeAdd(const ObjectPtr& node) {
  cache_.AddNode(node);
  queue_->MoveAllToActiveOrBackoffQueue({EventResource::kNode, kAdd}, nullptr, node);
}

void Scheduler::OnNodeUpdate(const ObjectPtr& old_node, const ObjectPtr& new_node) {
  cache_.UpdateNode(new_node);
  const api::Node* o = old_node->As<api::Node>();
  const api::Node* n = new_node->As<api::Node>();
  if (o == nullptr || n == nullptr) return;
  for (const ClusterEvent& e : NodeSchedulingPropertiesChange(*n, *o)) {
    queue_->MoveAllToActiveOrBackoffQueue(e, old_node, new_node);
  }
}

void Scheduler::OnNodeDelete(const ObjectPtr& node) {
  queue_->MoveAllToActiveOrBackoffQueue({EventResource::kNode, kDelete}, node, nullptr);
  if (const api::Node* n = node->As<api::Node>()) cache_.RemoveNode(n->meta.name);
}

// --- Scheduling (scheduler thread) ------------------------------------------------------------

bool Scheduler::ScheduleOne() {
  QueuedPodInfoPtr qp = queue_->Pop();
  if (!qp) return false;
  attempts_.fetch_add(1, std::memory_order_relaxed);
  const PodInfoPtr pod = qp->pod;
  Framework* fw = qp->framework;
  client::EventRecorder* recorder = RecorderFor(fw);
  if (pod->pod().meta.deletion_timestamp) {
    if (recorder != nullptr) {
      recorder->Eventf(client::RefOf(*pod->object), nullptr, client::kEventTypeWarning,
                       "FailedScheduling", "Scheduling",
                       "skip schedule deleting pod: " + pod->namespace_() + "/" + pod->name());
    }
    return true;
  }
  if (cache_.IsAssumedPod(pod->uid_key)) return true;
  ++cycle_;

  ScheduleResult result = SchedulePod(*fw, cache_, *pod, &next_start_index_);
  if (result.host.empty()) {
    NominatingInfo nominating;
    Status status = result.status;
    if (result.fit_error) {
      if (fw->HasPostFilterPlugins()) {
        Status post = fw->RunPostFilterPlugins(*pod, result.diagnosis.node_to_status, &nominating);
        result.diagnosis.post_filter_msg = post.Message();
      }
      status =
          Status(Code::kUnschedulable, FitErrorMessage(result.num_all_nodes, result.diagnosis));
    } else {
      nominating = NominatingInfo::Override("");
    }
    HandleFailure(qp, status, result.fit_error ? &result.diagnosis : nullptr, nominating);
    return true;
  }

  const std::string host = result.host;
  if (Status s = cache_.AssumePod(pod, result.node); !s.IsSuccess()) {
    HandleFailure(qp, s, nullptr, NominatingInfo::Override(""));
    return true;
  }
  queue_->DeleteNominatedPodIfExists(pod->uid_key);
  auto undo = [&](const Status& s) {
    fw->RunReservePluginsUnreserve(*pod, host);
    cache_.ForgetPod(pod->uid_key);
    if (s.IsRejected()) {
      // A rejection on the chosen node reads as a one-node FitError, as upstream.
      Diagnosis d;
      d.node_to_status.Set(host, s);
      d.AddPluginStatus(s);
      HandleFailure(qp, Status(s.code(), FitErrorMessage(1, d)), &d, NominatingInfo::Override(""));
    } else {
      HandleFailure(qp, s, nullptr, NominatingInfo::Override(""));
    }
  };
  if (Status s = fw->RunReservePluginsReserve(*pod, host); !s.IsSuccess()) {
    undo(s);
    return true;
  }
  if (Status s = fw->RunPermitPlugins(*pod, host); !s.IsSuccess()) {
    undo(s);
    return true;
  }
  RunBindingCycle(qp, host);
  return true;
}

void Scheduler::RunBindingCycle(const QueuedPodInfoPtr& qp, const std::string& host) {
  OffThread(
      [this, qp, host] {
        Framework* fw = qp->framework;
        if (Status s = fw->RunPreBindPlugins(*qp->pod, host); !s.IsSuccess()) {
          Post([this, qp, host, s] { OnBindFailed(qp, host, s); });
          return;
        }
        fw->RunBindPlugins(qp->pod, host, [this, qp, host](Status s) {
          // The completion may run on a store or HTTP thread: the event is written from ours.
          OffThread([this, qp, host, s] {
            if (s.IsSuccess()) {
              // Counted before the event is written, so that whoever sees the event sees the
              // count.
              scheduled_.fetch_add(1, std::memory_order_relaxed);
              if (client::EventRecorder* r = RecorderFor(qp->framework)) {
                const PodInfo& pod = *qp->pod;
                std::string note = "Successfully assigned ";
                note.append(pod.namespace_()).append("/").append(pod.name()).append(" to ");
                note.append(host);
                r->Eventf(client::RefOf(*pod.object), nullptr, client::kEventTypeNormal,
                          "Scheduled", "Binding", std::move(note));
              }
              // Nothing waits for a success to reach the cache: it rides along with the
              // scheduler thread's next turn instead of waking it (a wake-up per pod).
              PostQuietly([this, qp] { cache_.FinishBinding(qp->pod->uid_key); });
              return;
            }
            Post([this, qp, host, s] { OnBindFailed(qp, host, s); });
          });
        });
      },
      /*defer=*/true);
}

void Scheduler::OnBindFailed(const QueuedPodInfoPtr& qp, const std::string& host, Status status) {
  const PodInfoPtr& pod = qp->pod;
  qp->framework->RunReservePluginsUnreserve(*pod, host);
  if (cache_.ForgetPod(pod->uid_key)) {
    queue_->MoveAllToActiveOrBackoffQueue({EventResource::kAssignedPod, kDelete}, pod->object,
                                          nullptr);
  }
  HandleFailure(qp, status, nullptr, NominatingInfo::Override(""));
}

void Scheduler::HandleFailure(QueuedPodInfoPtr qp, const Status& status, const Diagnosis* diagnosis,
                              const NominatingInfo& nominating) {
  failed_.fetch_add(1, std::memory_order_relaxed);
  const std::string reason = status.IsRejected() ? "Unschedulable" : "SchedulerError";
  const std::string message = status.Message();
  if (diagnosis != nullptr) {
    qp->unschedulable_plugins = diagnosis->unschedulable_plugins;
    qp->pending_plugins = diagnosis->pending_plugins;
  }
  const PodInfoPtr pod = qp->pod;
  ObjectPtr current =
      options_.get_pod ? options_.get_pod(pod->namespace_(), pod->name()) : pod->object;
  const api::Pod* live = current ? current->As<api::Pod>() : nullptr;
  if (live != nullptr && live->meta.uid != pod->uid()) live = nullptr;  // another pod now
  if (live != nullptr && !Assigned(*live)) {
    if (current != pod->object) qp->pod = NewPodInfo(current);
    queue_->AddUnschedulableIfNotPresent(qp);
    queue_->AddNominatedPod(qp->pod, nominating);
  }
  const bool update = live != nullptr && !Assigned(*live);
  OffThread(
      [this, pod, current, update, reason, message, nominating,
       recorder = RecorderFor(qp->framework)] {
        if (recorder != nullptr) {
          recorder->Eventf(client::RefOf(*pod->object), nullptr, client::kEventTypeWarning,
                           "FailedScheduling", "Scheduling", TruncateMessage(message));
        }
        if (update) UpdatePodStatus(current, reason, message, nominating);
      },
      /*defer=*/true);
}

void Scheduler::UpdatePodStatus(const ObjectPtr& obj, const std::string& reason,
                                const std::string& message, const NominatingInfo& nominating) {
  if (options_.client == nullptr) return;
  const api::Pod& pod = PodOf(obj);
  const bool nnn_update = nominating.mode == NominatingInfo::Mode::kOverride &&
                          pod.status.nominated_node_name != nominating.nominated_node_name;
  const api::Condition* old = nullptr;
  for (const api::Condition& c : pod.status.conditions) {
    if (c.type == "PodScheduled") old = &c;
  }
  // Upstream UpdatePodCondition: unchanged status keeps its transition time; an identical
  // condition is no change at all.
  // observedGeneration: the pod's generation (upstream CalculatePodConditionObservedGeneration
  // with PodObservedGenerationTracking, on by default since 1.34).
  const int64_t generation = pod.meta.generation;
  const bool same_status = old != nullptr && old->status == "False";
  const bool condition_update = !same_status || old->reason != reason || old->message != message ||
                                !old->last_probe_time.empty() ||
                                old->observed_generation != generation;
  if (!nnn_update && !condition_update) return;
  std::string patch;
  api::StringOutput os(&patch);
  rapidjson::Writer<api::StringOutput> w(os);
  w.StartObject();
  w.Key("status");
  w.StartObject();
  if (condition_update) {
    w.Key("conditions");
    w.StartArray();
    w.StartObject();
    w.Key("type");
    w.String("PodScheduled");
    if (generation != 0) {
      w.Key("observedGeneration");
      w.Int64(generation);
    }
    w.Key("status");
    w.String("False");
    w.Key("lastProbeTime");
    w.Null();
    w.Key("lastTransitionTime");
    WriteString(w, same_status && !old->last_transition_time.empty()
                       ? old->last_transition_time
                       : FormatRfc3339(options_.clock->Now()));
    w.Key("reason");
    WriteString(w, reason);
    w.Key("message");
    WriteString(w, message);
    w.EndObject();
    w.EndArray();
  }
  if (nnn_update) {
    w.Key("nominatedNodeName");
    if (nominating.nominated_node_name.empty()) {
      w.Null();
    } else {
      WriteString(w, nominating.nominated_node_name);
    }
  }
  w.EndObject();
  w.EndObject();
  options_.client->Patch(server::Resource::kPods, pod.meta.namespace_, pod.meta.name,
                         server::Subresource::kStatus, api::PatchType::kStrategicMergePatch,
                         std::move(patch), [](client::ApiResult<store::Bytes>) {});
}

// --- Threading --------------------------------------------------------------------------------

void Scheduler::OffThread(std::function<void()> fn, bool defer) {
  {
    std::lock_guard<std::mutex> lock(api_mu_);
    if (api_running_) {
      if (api_stopping_) return;
      const bool wake = api_queue_.empty();
      api_queue_.push_back(std::move(fn));
      if (defer) {
        if (api_deferred_++ == 0) attempts_since_deferral_ = 0;
        if (api_deferred_ < kApiBatch) return;
        api_deferred_ = 0;
      }
      api_seq_.fetch_add(1, std::memory_order_release);
      if (wake || defer) api_cv_.notify_one();
      return;
    }
  }
  fn();
}

void Scheduler::FlushOffThread() {
  {
    std::lock_guard<std::mutex> lock(api_mu_);
    if (api_deferred_ == 0) return;
    api_deferred_ = 0;
    api_seq_.fetch_add(1, std::memory_order_release);
  }
  api_cv_.notify_one();
}

void Scheduler::MaybeFlushOffThread() {
  if (++attempts_since_deferral_ < kApiBatch) return;
  attempts_since_deferral_ = 0;
  FlushOffThread();
}

void Scheduler::ApiLoop() {
  std::vector<std::function<void()>> batch;
  for (;;) {
    const uint64_t seen = api_seq_.load(std::memory_order_acquire);
    {
      std::unique_lock<std::mutex> lock(api_mu_);
      if (api_queue_.empty() && !api_stopping_) {
        lock.unlock();
        core::SpinUntil([&] { return api_seq_.load(std::memory_order_acquire) != seen; });
        lock.lock();
      }
      api_cv_.wait(lock, [&] { return api_stopping_ || !api_queue_.empty(); });
      if (api_queue_.empty()) return;  // stopping, and everything queued is done
      batch.swap(api_queue_);
      api_deferred_ = 0;  // taken: nothing left to wake this thread for
    }
    for (auto& fn : batch) fn();
    batch.clear();
  }
}

void Scheduler::Post(std::function<void()> fn) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(inbox_mu_);
    if (stopping_) return;
    wake = inbox_.empty() && !woken_;  // otherwise the thread drains before it waits again
    inbox_.push_back(std::move(fn));
    inbox_seq_.fetch_add(1, std::memory_order_release);
  }
  if (wake) inbox_cv_.notify_one();
}

void Scheduler::PostQuietly(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(inbox_mu_);
  if (stopping_) return;
  quiet_inbox_.push_back(std::move(fn));
}

void Scheduler::Wake() {
  {
    std::lock_guard<std::mutex> lock(inbox_mu_);
    if (woken_) return;
    woken_ = true;
    inbox_seq_.fetch_add(1, std::memory_order_release);
  }
  inbox_cv_.notify_one();
}

size_t Scheduler::DrainInbox() {
  size_t handled = 0;
  for (;;) {
    std::vector<std::function<void()>> quiet;
    std::vector<std::function<void()>> batch;
    {
      std::lock_guard<std::mutex> lock(inbox_mu_);
      quiet.swap(quiet_inbox_);
      batch.swap(inbox_);
      woken_ = false;
    }
    size_t n = quiet.size() + batch.size();
    for (auto& fn : quiet) fn();
    for (auto& fn : batch) fn();
    for (client::Informer* inf : pumped_) n += inf->DispatchPending();
    if (n == 0) return handled;
    handled += n;
  }
}

size_t Scheduler::RunUntilIdle() {
  size_t attempts = 0;
  for (;;) {
    DrainInbox();
    if (!ScheduleOne()) {
      FlushOffThread();
      if (DrainInbox() == 0) return attempts;  // a binding may have completed meanwhile
      continue;
    }
    ++attempts;
  }
}

void Scheduler::ScheduleFlushes() {
  // Upstream: backoffQ every second (aligned to the second), unschedulable pods every 30 s.
  auto post = [lifeline = lifeline_](void (SchedulingQueue::*flush)(), bool backoff) {
    std::lock_guard<std::mutex> line(lifeline->mu);
    Scheduler* s = lifeline->scheduler;
    if (s == nullptr) return;
    s->Post([s, flush, backoff] {
      (s->queue_.get()->*flush)();
      if (backoff) {
        s->backoff_timer_ = 0;
      } else {
        s->leftover_timer_ = 0;
      }
      s->ScheduleFlushes();
    });
  };
  client::Clock* clock = options_.clock;
  if (backoff_timer_ == 0) {
    const client::Time now = clock->Now();
    const client::Time next =
        std::chrono::floor<std::chrono::seconds>(now) + std::chrono::seconds(1);
    backoff_timer_ =
        clock->At(next, [post] { post(&SchedulingQueue::FlushBackoffQCompleted, true); });
  }
  if (leftover_timer_ == 0) {
    leftover_timer_ = clock->AfterFunc(std::chrono::seconds(30), [post] {
      post(&SchedulingQueue::FlushUnschedulablePodsLeftover, false);
    });
  }
}

void Scheduler::Start() {
  {
    std::lock_guard<std::mutex> lock(api_mu_);
    api_running_ = true;
  }
  api_thread_ = std::thread([this] {
    core::NameBackgroundThread("kt-sched-api");
    ApiLoop();
  });
  Post([this] { ScheduleFlushes(); });
  thread_ = std::thread([this] {
    core::NameBackgroundThread("kt-scheduler");
    Loop();
  });
}

void Scheduler::Loop() {
  for (;;) {
    DrainInbox();
    {
      std::lock_guard<std::mutex> lock(inbox_mu_);
      if (stopping_) return;
    }
    const uint64_t seen = inbox_seq_.load(std::memory_order_acquire);
    if (ScheduleOne()) {
      MaybeFlushOffThread();
      continue;
    }
    FlushOffThread();
    // Idle: more work usually comes within microseconds under load (core/spin.h).
    if (core::SpinUntil([&] { return inbox_seq_.load(std::memory_order_acquire) != seen; })) {
      continue;
    }
    std::unique_lock<std::mutex> lock(inbox_mu_);
    inbox_cv_.wait(lock, [&] { return stopping_ || woken_ || !inbox_.empty(); });
    if (stopping_) return;
  }
}

void Scheduler::Stop() {
  {
    std::lock_guard<std::mutex> line(lifeline_->mu);
    lifeline_->scheduler = nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(inbox_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  inbox_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  // The writes already queued are made (each is bounded by its client); new ones are dropped.
  {
    std::lock_guard<std::mutex> lock(api_mu_);
    api_stopping_ = true;
  }
  api_cv_.notify_all();
  if (api_thread_.joinable()) api_thread_.join();
  options_.clock->Cancel(backoff_timer_);
  options_.clock->Cancel(leftover_timer_);
}

}  // namespace kt::scheduler
