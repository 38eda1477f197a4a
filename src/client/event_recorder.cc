#include "client/event_recorder.h"

#include <cstdio>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <set>

#include "api/codec.h"
#include "client/rate_limiter.h"
#include "core/lru.h"
#include "core/strings.h"
#include "core/time.h"
#include "core/validation.h"

namespace kt::client {

namespace {

constexpr int kMaxTriesPerEvent = 12;
constexpr auto kRetryDelay = std::chrono::seconds(10);
constexpr size_t kMaxCacheEntries = 4096;  // client-go's LRU caches

bool ValidType(std::string_view type) {
  return type == kEventTypeNormal || type == kEventTypeWarning;
}

std::string NamespaceOf(const ObjectRef& regarding) {
  return regarding.namespace_.empty() ? "default" : regarding.namespace_;
}

std::string RefKey(const ObjectRef& r) {
  std::string k;
  for (const std::string* f : {&r.kind, &r.namespace_, &r.name, &r.uid, &r.api_version,
                               &r.resource_version, &r.field_path}) {
    k += *f;
    k += '\x1f';
  }
  return k;
}

// Shared by the two recorders: unique names, and writes retried on the clock.
class RecorderBase : public std::enable_shared_from_this<RecorderBase> {
 public:
  RecorderBase(Client* client, Clock* clock) : client_(client), clock_(clock) {}
  virtual ~RecorderBase() = default;
  virtual void Eventf(const ObjectRef& regarding, const ObjectRef* related, std::string_view type,
                      std::string_view reason, std::string_view action, std::string note) = 0;
  virtual void Stop() = 0;

 protected:
  // A time for event names: the clock's, made strictly increasing so that two events about one
  // object in the same nanosecond (a simulated clock stands still) get different names.
  Time UniqueNow() {
    Time t = clock_->Now();
    if (t <= last_name_time_) t = last_name_time_ + std::chrono::nanoseconds(1);
    last_name_time_ = t;
    return t;
  }

  // Sends `attempt` until it succeeds, fails for good (a status from the server) or has been
  // tried kMaxTriesPerEvent times; transport errors are retried after 10 s.
  // Completions keep the recorder alive (shared_ptr); retry timers do not (weak_ptr), and a
  // stopped recorder schedules none.
  void WithRetries(std::function<void(WriteDone)> attempt, int tries = 0) {
    attempt([self = shared_from_this(), attempt, tries](ApiResult<store::Bytes> r) mutable {
      if (r) return;
      // Statuses the server decided (4xx) are final, as client-go's StatusError.
      const int code = r.error().code;
      const bool retriable = code == 0 || code >= 500;
      if (!retriable || tries + 1 >= kMaxTriesPerEvent || self->stopped_.load()) return;
      std::weak_ptr<RecorderBase> weak = self;
      self->clock_->AfterFunc(kRetryDelay, [weak, attempt, tries]() mutable {
        if (auto s = weak.lock(); s && !s->stopped_.load()) {
          s->WithRetries(std::move(attempt), tries + 1);
        }
      });
    });
  }

  Client* client_;
  Clock* clock_;
  std::mutex mu_;
  Time last_name_time_{};  // guarded by mu_
  std::atomic<bool> stopped_{false};
};

// --- events.k8s.io/v1 -------------------------------------------------------------------------

class EventsV1Recorder : public RecorderBase {
 public:
  EventsV1Recorder(Client* client, Clock* clock, std::string controller, std::string instance)
      : RecorderBase(client, clock),
        controller_(std::move(controller)),
        instance_(std::move(instance)) {}

  // Starts the periodic jobs (after construction: they hold a weak_ptr to the recorder).
  void Start() {
    std::lock_guard<std::mutex> lock(mu_);
    ScheduleLocked(&finish_timer_, kFinishPeriod, &EventsV1Recorder::FinishSeries);
    ScheduleLocked(&refresh_timer_, kRefreshPeriod, &EventsV1Recorder::RefreshSeries);
  }

  void Stop() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_.exchange(true)) return;
    clock_->Cancel(finish_timer_);
    clock_->Cancel(refresh_timer_);
  }

  void Eventf(const ObjectRef& regarding, const ObjectRef* related, std::string_view type,
              std::string_view reason, std::string_view action, std::string note) override {
    if (!ValidType(type)) return;
    const Time now = clock_->Now();
    const std::string now_text = FormatRfc3339Micro(now);
    std::string key;
    key.append(type).append("\x1f").append(action).append("\x1f").append(reason);
    key.append("\x1f").append(controller_).append("\x1f").append(instance_).append("\x1f");
    key += RefKey(regarding);
    if (related) key += RefKey(*related);

    std::shared_ptr<const api::Event> event;
    Series series;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
      const uint64_t h = Lru<Cached>::Hash(key);
      if (Cached* cached = cache_.Get(key, h)) {
        cached->last = now;
        cached->series.last_observed_time = now_text;
        if (cached->series.count != 0) {
          // Later repeats are only counted; the periodic jobs send the count.
          ++cached->series.count;
          return;
        }
        cached->series.count = 2;
        event = cached->event;
        series = cached->series;
      } else {
        auto ev = std::make_shared<api::Event>();
        ev->meta.name = EventName(regarding.name, UniqueNow());
        ev->meta.namespace_ = NamespaceOf(regarding);
        ev->involved_object = regarding;
        if (related) ev->related = *related;
        ev->reason = std::string(reason);
        ev->message = std::move(note);
        ev->type = std::string(type);
        ev->event_time = now_text;
        ev->action = std::string(action);
        ev->reporting_component = controller_;
        ev->reporting_instance = instance_;
        event = ev;
        cache_.Add(key, h, Cached{std::move(ev), Series{}, now});
      }
    }
    Send(std::move(event), std::move(series));
  }

 private:
  static constexpr auto kFinishPeriod = std::chrono::minutes(6);
  static constexpr auto kRefreshPeriod = std::chrono::minutes(30);

  // An event's series: its count (0: none yet) and the time of its last occurrence.
  struct Series {
    int32_t count = 0;
    std::string last_observed_time;
  };

  // The first occurrence is created; a series is sent as a PATCH of that event, and a 404 falls
  // back to creating the event with its series. The event is shared with the cache and never
  // changed: a write that is retried sends it again as it was.
  void Send(std::shared_ptr<const api::Event> ev, Series series) {
    if (series.count == 0) {
      WithRetries([this, ev](WriteDone done) { client_->CreateEvent(*ev, std::move(done)); }, 0);
      return;
    }
    std::string body = "{\"series\":{\"count\":" + std::to_string(series.count) +
                       ",\"lastObservedTime\":\"" + series.last_observed_time + "\"}}";
    auto s = std::make_shared<const Series>(std::move(series));
    WithRetries([this, ev, s, body](WriteDone done) {
      client_->Patch(Resource::kEvents, ev->meta.namespace_, ev->meta.name, Subresource::kNone,
                     api::PatchType::kStrategicMergePatch, body,
                     [this, ev, s, done = std::move(done)](ApiResult<store::Bytes> r) {
                       if (!r && r.error().code == 404) {
                         api::Event with_series = *ev;
                         with_series.series_count = s->count;
                         with_series.series_last_observed_time = s->last_observed_time;
                         return client_->CreateEvent(std::move(with_series), std::move(done));
                       }
                       done(std::move(r));
                     });
    });
  }

  using Job = void (EventsV1Recorder::*)();
  void ScheduleLocked(TimerId* timer, Duration period, Job job) {
    if (stopped_) return;
    std::weak_ptr<RecorderBase> weak = shared_from_this();
    *timer = clock_->AfterFunc(period, [weak, job] {
      if (auto self = weak.lock()) (static_cast<EventsV1Recorder*>(self.get())->*job)();
    });
  }

  // Every 6 minutes: series quiet for 6 minutes get their final count and are forgotten, as are
  // single events older than that, so that a later repeat starts a new Event.
  void FinishSeries() {
    std::vector<std::pair<std::shared_ptr<const api::Event>, Series>> finals;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
      const Time cutoff = clock_->Now() - kFinishPeriod;
      std::vector<std::string> drop;
      cache_.ForEach([&](const std::string& key, Cached& c) {
        if (c.last >= cutoff) return;
        if (c.series.count != 0) finals.emplace_back(c.event, c.series);
        drop.push_back(key);
      });
      for (const std::string& k : drop) cache_.Erase(k);
      ScheduleLocked(&finish_timer_, kFinishPeriod, &EventsV1Recorder::FinishSeries);
    }
    for (auto& [ev, series] : finals) Send(std::move(ev), std::move(series));
  }

  // Every 30 minutes: live series are sent again (their heartbeat).
  void RefreshSeries() {
    std::vector<std::pair<std::shared_ptr<const api::Event>, Series>> live;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
      cache_.ForEach([&](const std::string&, Cached& c) {
        if (c.series.count != 0) live.emplace_back(c.event, c.series);
      });
      ScheduleLocked(&refresh_timer_, kRefreshPeriod, &EventsV1Recorder::RefreshSeries);
    }
    for (auto& [ev, series] : live) Send(std::move(ev), std::move(series));
  }

  struct Cached {
    std::shared_ptr<const api::Event> event;  // as first created
    Series series;
    Time last{};  // the last occurrence
  };

  const std::string controller_;
  const std::string instance_;
  Lru<Cached> cache_{kMaxCacheEntries};  // guarded by mu_
  TimerId finish_timer_ = 0;
  TimerId refresh_timer_ = 0;
};

// --- core/v1 (tools/record) -------------------------------------------------------------------

class CoreV1Recorder : public RecorderBase {
 public:
  CoreV1Recorder(Client* client, Clock* clock, std::string component, std::string host)
      : RecorderBase(client, clock), component_(std::move(component)), host_(std::move(host)) {}
  void Stop() override { stopped_ = true; }

  void Eventf(const ObjectRef& regarding, const ObjectRef*, std::string_view type,
              std::string_view reason, std::string_view, std::string note) override {
    if (!ValidType(type)) return;
    const Time now = clock_->Now();
    const std::string now_text = FormatRfc3339(now);
    auto shared = std::make_shared<api::Event>();
    api::Event& ev = *shared;
    ev.involved_object = regarding;
    ev.reason = std::string(reason);
    ev.message = std::move(note);
    ev.type = std::string(type);
    ev.source_component = component_;
    ev.source_host = host_;
    ev.first_timestamp = ev.last_timestamp = now_text;
    ev.count = 1;
    ev.reporting_component = component_;
    ev.reporting_instance = host_;
    ev.meta.namespace_ = NamespaceOf(regarding);

    bool patch = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
      ev.meta.name = EventName(regarding.name, UniqueNow());
      // The three caches' keys, built in buffers kept for the next call.
      std::string& object = object_key_;
      object.clear();
      for (const std::string* f : {&component_, &host_, &regarding.kind, &regarding.namespace_,
                                   &regarding.name, &regarding.uid, &regarding.api_version}) {
        object.append(*f).append(1, '\x1f');
      }
      object += ev.type;
      // 1. Similar events (same object and reason, different messages) beyond 10 in 10 minutes
      // are combined into one.
      std::string& aggregate_key = aggregate_key_;
      aggregate_key.assign(object).append(1, '\x1f').append(ev.reason);
      aggregate_key.append(1, '\x1f').append(component_).append(1, '\x1f').append(host_);
      const uint64_t aggregate_hash = Lru<Aggregate>::Hash(aggregate_key);
      Aggregate* agg = aggregates_.Get(aggregate_key, aggregate_hash);
      if (agg == nullptr) {
        agg = &aggregates_.Add(aggregate_key, aggregate_hash, Aggregate{});
      } else if (now - agg->last > std::chrono::seconds(600)) {
        *agg = Aggregate{};
      }
      agg->messages.insert(ev.message);
      agg->last = now;
      std::string_view cache_key;
      uint64_t cache_hash;
      if (agg->messages.size() >= 10) {
        agg->messages.erase(agg->messages.begin());
        ev.message = "(combined from similar events): " + ev.message;
        cache_key = aggregate_key;
        cache_hash = aggregate_hash;
      } else {
        std::string& k = cache_key_;
        k.assign(object).append(1, '\x1f').append(regarding.field_path);
        k.append(1, '\x1f').append(ev.reason).append(1, '\x1f').append(ev.message);
        cache_key = k;
        cache_hash = Lru<Logged>::Hash(k);
      }
      // 2. Identical events raise the count of the first one.
      if (Logged* logged = logged_.Get(cache_key, cache_hash)) {
        ev.meta.name = logged->name;
        ev.first_timestamp = logged->first_timestamp;
        ev.count = ++logged->count;
        patch = true;
      } else {
        logged_.Add(cache_key, cache_hash, Logged{ev.count, ev.first_timestamp, ev.meta.name});
      }
      // 3. Each source may send 25 events about an object, then one every 5 minutes.
      const uint64_t object_hash = Lru<std::shared_ptr<TokenBucket>>::Hash(object);
      std::shared_ptr<TokenBucket>* bucket = spam_.Get(object, object_hash);
      if (bucket == nullptr) {
        bucket =
            &spam_.Add(object, object_hash, std::make_shared<TokenBucket>(clock_, 1.0 / 300, 25));
      }
      if (!(*bucket)->TryAccept()) return;
    }
    Send(std::move(shared), patch);
  }

 private:
  struct Aggregate {
    std::set<std::string> messages;
    Time last{};
  };
  struct Logged {
    int32_t count = 0;
    std::string first_timestamp;
    std::string name;
  };

  void Send(std::shared_ptr<const api::Event> shared, bool patch) {
    auto create = [this, shared](WriteDone done) {
      client_->CreateEvent(*shared, std::move(done));
    };
    if (!patch) {
      WithRetries(create);
      return;
    }
    std::string body = "{\"count\":" + std::to_string(shared->count) + ",\"lastTimestamp\":\"" +
                       shared->last_timestamp + "\",\"message\":" + JsonString(shared->message) +
                       "}";
    WithRetries([this, shared, body, create](WriteDone done) {
      client_->Patch(Resource::kEvents, shared->meta.namespace_, shared->meta.name,
                     Subresource::kNone, api::PatchType::kStrategicMergePatch, body,
                     [create, done = std::move(done)](ApiResult<store::Bytes> r) mutable {
                       if (!r && r.error().code == 404) return create(std::move(done));
                       done(std::move(r));
                     });
    });
  }

  static std::string JsonString(const std::string& s) {
    rapidjson::Value v(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    return api::EncodeJson(v);
  }

  const std::string component_;
  const std::string host_;
  Lru<Aggregate> aggregates_{kMaxCacheEntries};               // guarded by mu_
  Lru<Logged> logged_{kMaxCacheEntries};                      // guarded by mu_
  Lru<std::shared_ptr<TokenBucket>> spam_{kMaxCacheEntries};  // guarded by mu_
  std::string object_key_, aggregate_key_, cache_key_;        // guarded by mu_
};

// What callers hold: stops the shared recorder when dropped (pending writes still finish).
class RecorderHandle : public EventRecorder {
 public:
  explicit RecorderHandle(std::shared_ptr<RecorderBase> impl) : impl_(std::move(impl)) {}
  ~RecorderHandle() override { impl_->Stop(); }
  void Eventf(const ObjectRef& regarding, const ObjectRef* related, std::string_view type,
              std::string_view reason, std::string_view action, std::string note) override {
    impl_->Eventf(regarding, related, type, reason, action, std::move(note));
  }
  void Stop() override { impl_->Stop(); }

 private:
  std::shared_ptr<RecorderBase> impl_;
};

}  // namespace

ObjectRef RefOf(const server::StoredObject& object) {
  ObjectRef ref;
  const server::ResourceInfo& info = server::Info(object.resource);
  ref.kind = std::string(info.kind);
  ref.api_version = std::string(info.api_version);
  const api::ObjectMeta& meta = object.meta();
  ref.namespace_ = meta.namespace_;
  ref.name = meta.name;
  ref.uid = meta.uid;
  ref.resource_version = std::to_string(object.revision);
  return ref;
}

std::string EventName(std::string_view object_name, Time t) {
  char hex[16];
  char* end = PutHexMinimal(hex, static_cast<uint64_t>(t.time_since_epoch().count()));
  std::string name;
  name.reserve(object_name.size() + 1 + static_cast<size_t>(end - hex));
  name.append(object_name).append(1, '.').append(hex, static_cast<size_t>(end - hex));
  return name;
}

std::unique_ptr<EventRecorder> NewEventsV1Recorder(Client* client, Clock* clock,
                                                   std::string reporting_controller,
                                                   std::string reporting_instance) {
  auto impl = std::make_shared<EventsV1Recorder>(client, clock, std::move(reporting_controller),
                                                 std::move(reporting_instance));
  impl->Start();
  return std::make_unique<RecorderHandle>(std::move(impl));
}

std::unique_ptr<EventRecorder> NewCoreV1Recorder(Client* client, Clock* clock,
                                                 std::string component, std::string host) {
  return std::make_unique<RecorderHandle>(
      std::make_shared<CoreV1Recorder>(client, clock, std::move(component), std::move(host)));
}

}  // namespace kt::client
