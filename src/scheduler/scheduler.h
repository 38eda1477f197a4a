// Scheduler: kube-scheduler's loop (upstream pkg/scheduler: scheduler.go, schedule_one.go,
// eventhandlers.go) on kubetaint's client layer.
//
//   Informer events ──Post──▶ inbox ──▶ scheduler thread: cache + queue updates, then ScheduleOne
//   ScheduleOne: pop → SchedulePod (algorithm.h) → assume in the cache → Reserve, Permit
//                → binding cycle on the API thread: PreBind, Bind (pods/binding), Scheduled event
//                → back on the scheduler thread: binding finished, or forget and retry
//   failures: PostFilter (preemption) → back to the queue; on the API thread: FailedScheduling
//             event, PodScheduled=False condition (only when it changed) and nominatedNodeName
//             through pods/status
//
// The API thread ("kt-sched-api") makes the scheduler's writes in order, so the scheduler thread
// never waits on one (upstream binds in a goroutine per pod). Without Start (RunUntilIdle) they
// run inline, so a test sees them at once.
//
// Everything the scheduler owns (cache, queue, plugins' per-cycle state) is touched by one thread
// only: informer handlers and binding completions post to an inbox that the scheduler thread
// drains between cycles. So a cycle sees a consistent cluster, and no cluster event can slip in
// while a pod is being decided.
//
//   Scheduler::Options o{.clock = clock, .client = client, .profiles = {Profile()}, ...};
//   auto s = Scheduler::New(std::move(o));
//   (*s)->AddEventHandlers(&pod_informer, &node_informer);
//   (*s)->Start();           // or, with manual informers and a simulated clock: RunUntilIdle()
//
// Thread safety: Post, Start, Stop and the statistics are thread-safe; RunUntilIdle must not be
// mixed with Start.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "client/clock.h"
#include "client/event_recorder.h"
#include "client/informer.h"
#include "core/feature_gates.h"
#include "scheduler/cache.h"
#include "scheduler/framework/framework.h"
#include "scheduler/queue.h"

namespace kt::scheduler {

class Scheduler {
 public:
  struct Options {
    client::Clock* clock = nullptr;
    client::Client* client = nullptr;
    std::vector<Profile> profiles = {Profile()};
    FeatureGates gates;
    SchedulingQueue::Options queue;
    // Events name "<schedulerName>-<hostname>" as their reporting instance.
    std::string hostname = "kubetaint";
    // The pod lister: the current version of a pod, or null (usually the pod informer's Get).
    std::function<ObjectPtr(std::string_view namespace_, std::string_view name)> get_pod;
  };

  static Result<std::unique_ptr<Scheduler>> New(Options options);
  ~Scheduler();  // stops

  // Feeds the scheduler from informers. Before Start. Informers with manual dispatch are pumped
  // by the scheduler's own thread (their handlers run there, with no hand-off); others post to
  // the inbox from their dispatch threads.
  void AddEventHandlers(client::Informer* pods, client::Informer* nodes);

  // The informer events, for callers that feed the scheduler themselves.
  void OnPodAdd(const ObjectPtr& pod);
  void OnPodUpdate(const ObjectPtr& old_pod, const ObjectPtr& new_pod);
  void OnPodDelete(const ObjectPtr& pod);
  void OnNodeAdd(const ObjectPtr& node);
  void OnNodeUpdate(const ObjectPtr& old_node, const ObjectPtr& new_node);
  void OnNodeDelete(const ObjectPtr& node);

  // Runs `fn` on the scheduler's thread between cycles.
  void Post(std::function<void()> fn);

  // Starts the scheduler thread and the queue's periodic flushes.
  void Start();
  // Only the queue's periodic flushes (backoff every second, parked pods every 30 s), for callers
  // that drive the scheduler with RunUntilIdle.
  void StartFlushTimers() {
    Post([this] { ScheduleFlushes(); });
  }
  void Stop();

  // Without a thread: handles everything posted and schedules until nothing is left to do now;
  // returns the number of scheduling attempts. Timers (backoff) fire through the clock.
  size_t RunUntilIdle();

  // Statistics (any thread).
  uint64_t ScheduledCount() const { return scheduled_.load(std::memory_order_relaxed); }
  uint64_t AttemptCount() const { return attempts_.load(std::memory_order_relaxed); }
  uint64_t FailedCount() const { return failed_.load(std::memory_order_relaxed); }

  // For tests, on the scheduler's thread (or with RunUntilIdle).
  const Cache& cache() const { return cache_; }
  const SchedulingQueue& queue() const { return *queue_; }

 private:
  class ProfileHandle;
  struct Profiled {
    std::unique_ptr<ProfileHandle> handle;
    std::unique_ptr<Framework> framework;
    std::unique_ptr<client::EventRecorder> recorder;
  };

  explicit Scheduler(Options options);
  Framework* FrameworkFor(const api::Pod& pod) const;
  bool Responsible(const api::Pod& pod) const { return FrameworkFor(pod) != nullptr; }
  client::EventRecorder* RecorderFor(const Framework* fw) const;

  // One pop-and-decide; false when there was nothing to schedule.
  bool ScheduleOne();
  // PreBind and Bind on the API thread; a success is noted there (and in the cache at this
  // thread's next turn), a failure comes back to this thread through OnBindFailed.
  void RunBindingCycle(const QueuedPodInfoPtr& qp, const std::string& host);
  void OnBindFailed(const QueuedPodInfoPtr& qp, const std::string& host, Status status);
  // Runs `fn` on the API thread (inline when the scheduler was not started). From the scheduler
  // thread, `defer` leaves the API thread asleep until FlushOffThread, so that it wakes once for
  // a run of bindings rather than once for each.
  void OffThread(std::function<void()> fn, bool defer = false);
  // Wakes the API thread for the deferred work: when kApiBatch items wait, when kApiBatch
  // scheduling attempts have passed since the first, and whenever the scheduler thread is idle.
  void FlushOffThread();
  void MaybeFlushOffThread();
  void ApiLoop();
  void HandleFailure(QueuedPodInfoPtr qp, const Status& status, const Diagnosis* diagnosis,
                     const NominatingInfo& nominating);
  void UpdatePodStatus(const ObjectPtr& pod, const std::string& reason, const std::string& message,
                       const NominatingInfo& nominating);
  // Drains the inbox and the pumped informers; returns how many changes were handled.
  size_t DrainInbox();
  // Wakes the scheduler thread to look at its inbox and informers.
  void Wake();
  // Runs `fn` on the scheduler's thread at its next turn, without waking it: for bookkeeping
  // that nothing waits for (a binding's success).
  void PostQuietly(std::function<void()> fn);
  void Loop();
  void ScheduleFlushes();

  Options options_;
  Cache cache_;
  std::unique_ptr<SchedulingQueue> queue_;
  std::map<std::string, Profiled, std::less<>> profiles_;  // by scheduler name
  size_t next_start_index_ = 0;
  uint64_t cycle_ = 0;

  std::mutex inbox_mu_;
  std::condition_variable inbox_cv_;
  std::vector<std::function<void()>> inbox_;  // guarded by inbox_mu_
  // Work that waits for the thread's next turn without waking it (PostQuietly).
  std::vector<std::function<void()>> quiet_inbox_;  // guarded by inbox_mu_
  bool stopping_ = false;                           // guarded by inbox_mu_
  bool woken_ = false;                              // guarded by inbox_mu_
  // Bumped by Post and Wake: what the idle scheduler thread watches before it sleeps.
  std::atomic<uint64_t> inbox_seq_{0};
  std::vector<client::Informer*> pumped_;  // informers dispatched on the scheduler's thread

  // Keeps timer callbacks from reaching a destroyed scheduler.
  struct Lifeline {
    std::mutex mu;
    Scheduler* scheduler = nullptr;
  };
  std::shared_ptr<Lifeline> lifeline_;
  client::TimerId backoff_timer_ = 0;
  client::TimerId leftover_timer_ = 0;

  std::thread thread_;

  // The API thread's queue.
  std::mutex api_mu_;
  std::condition_variable api_cv_;
  std::vector<std::function<void()>> api_queue_;  // guarded by api_mu_
  bool api_running_ = false;                      // guarded by api_mu_
  bool api_stopping_ = false;                     // guarded by api_mu_
  std::atomic<uint64_t> api_seq_{0};              // bumped by OffThread
  size_t api_deferred_ = 0;                       // guarded by api_mu_: queued, not yet woken for
  size_t attempts_since_deferral_ = 0;            // scheduler thread only
  std::thread api_thread_;

  std::atomic<uint64_t> scheduled_{0};
  std::atomic<uint64_t> attempts_{0};
  std::atomic<uint64_t> failed_{0};
};

// Builds the scheduler's profiles' frameworks only, to validate a configuration (errors as
// upstream: `FilterPlugin "Foo" does not exist`).
kt::Status ValidateProfiles(const std::vector<Profile>& profiles, const FeatureGates& gates);

}  // namespace kt::scheduler
