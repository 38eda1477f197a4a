#include "client/informer.h"

#include <algorithm>
#include <cstdio>

#include "core/thread_name.h"

namespace kt::client {

namespace {

using server::WatchEventType;

class CacheListerWatcher : public ListerWatcher {
 public:
  CacheListerWatcher(server::WatchCache* cache, server::ObjectFilter filter)
      : cache_(cache), filter_(std::move(filter)) {}

  const server::ResourceInfo& Info() const override { return cache_->info(); }

  Result<ListResult> List() override {
    server::WatchCache::ListResult list = cache_->List(filter_);
    return ListResult{std::move(list.items), list.revision};
  }

  Result<std::unique_ptr<server::WatchCache::WatchHandle>> Watch(
      store::Revision revision, std::shared_ptr<server::WatchSink> sink) override {
    return cache_->StartWatch(revision, filter_, std::move(sink));
  }

 private:
  server::WatchCache* cache_;
  server::ObjectFilter filter_;
};

// client-go's reflector backoff: 800 ms doubling to 30 s.
Duration RetryDelay(int failures) {
  Duration d = std::chrono::milliseconds(800);
  for (int i = 1; i < failures && d < std::chrono::seconds(30); ++i) d *= 2;
  return std::min<Duration>(d, std::chrono::seconds(30));
}

}  // namespace

std::unique_ptr<ListerWatcher> NewCacheListerWatcher(server::WatchCache* cache,
                                                     server::ObjectFilter filter) {
  return std::make_unique<CacheListerWatcher>(cache, std::move(filter));
}

struct Informer::Lifeline {
  std::mutex mu;
  Informer* informer = nullptr;  // guarded by mu; null once stopped
};

// Receives one watch's events (on the watch's thread, possibly under the cache's lock) and
// queues them for dispatch.
class Informer::Sink : public server::WatchSink {
 public:
  Sink(std::shared_ptr<Lifeline> lifeline, uint64_t generation)
      : lifeline_(std::move(lifeline)), generation_(generation) {}

  bool OnEvent(WatchEventType type, const ObjectPtr& object) override {
    std::lock_guard<std::mutex> lock(lifeline_->mu);
    if (lifeline_->informer == nullptr) return false;
    lifeline_->informer->Push(Change{Change::Kind::kEvent, type, object, {}, generation_});
    return true;
  }
  void OnProgress(store::Revision revision) override {
    store::Revision seen = progress_.load(std::memory_order_relaxed);
    while (revision > seen && !progress_.compare_exchange_weak(seen, revision)) {
    }
  }
  void OnEnd(Status status) override {
    std::lock_guard<std::mutex> lock(lifeline_->mu);
    if (lifeline_->informer == nullptr) return;
    lifeline_->informer->Push(Change{Change::Kind::kEnded, WatchEventType::kAdded, nullptr,
                                     std::move(status), generation_});
  }

  store::Revision progress() const { return progress_.load(std::memory_order_relaxed); }

 private:
  std::shared_ptr<Lifeline> lifeline_;
  const uint64_t generation_;
  std::atomic<store::Revision> progress_{0};
};

Informer::Informer(std::unique_ptr<ListerWatcher> source, Options options)
    : source_(std::move(source)), options_(std::move(options)) {
  if (options_.clock == nullptr) {
    own_clock_ = NewRealClock();
    clock_ = own_clock_.get();
  } else {
    clock_ = options_.clock;
  }
  lifeline_ = std::make_shared<Lifeline>();
  lifeline_->informer = this;
}

Informer::~Informer() { Stop(); }

void Informer::AddEventHandler(EventHandler handler) { handlers_.push_back(std::move(handler)); }

void Informer::AddIndexer(std::string name, IndexFunc fn) {
  std::unique_lock<std::shared_mutex> lock(store_mu_);
  Index& index = indexes_[std::move(name)];
  index.fn = std::move(fn);
  objects_.ForEach([&index](const ObjectPtr& object) {
    for (std::string& v : index.fn(*object)) index.values[std::move(v)].insert(object->key);
  });
}

void Informer::Push(Change change) {
  const bool urgent = change.kind != Change::Kind::kEvent || !options_.wake_for ||
                      change.object == nullptr || options_.wake_for(change.type, *change.object);
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.push_back(std::move(change));
    // Once woken, the dispatcher drains everything before it waits again.
    if (!woken_) {
      if (urgent || pending_.size() >= kLazyLimit) {
        woken_ = wake = true;
      } else {
        ArmLazyFlushLocked();
      }
    }
  }
  if (wake) Notify();
}

void Informer::Notify() {
  if (options_.on_pending) {
    options_.on_pending();
  } else {
    cv_.notify_one();
  }
}

void Informer::ArmLazyFlushLocked() {
  if (stopping_ || lazy_timer_ != 0) return;
  lazy_timer_ = clock_->AfterFunc(options_.lazy_delay, [lifeline = lifeline_] {
    std::lock_guard<std::mutex> line(lifeline->mu);
    Informer* self = lifeline->informer;
    if (self == nullptr) return;
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(self->mu_);
      self->lazy_timer_ = 0;
      if (!self->woken_ && !self->pending_.empty()) self->woken_ = wake = true;
    }
    if (wake) self->Notify();
  });
}

void Informer::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    relist_due_ = true;  // the first list
  }
  if (!options_.manual_dispatch) {
    thread_ = std::thread([this] {
      core::NameBackgroundThread("kt-informer");
      Run();
    });
  }
}

void Informer::Stop() {
  {
    std::lock_guard<std::mutex> lock(lifeline_->mu);
    lifeline_->informer = nullptr;  // no sink or timer reaches this informer from now on
  }
  TimerId timer;
  TimerId lazy_timer;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    timer = retry_timer_;
    retry_timer_ = 0;
    lazy_timer = lazy_timer_;
    lazy_timer_ = 0;
  }
  cv_.notify_all();
  if (timer != 0) clock_->Cancel(timer);
  if (lazy_timer != 0) clock_->Cancel(lazy_timer);
  if (thread_.joinable()) thread_.join();
  watch_.reset();
  sink_.reset();
}

void Informer::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || woken_ || relist_due_ || rewatch_due_; });
    if (stopping_) return;
    lock.unlock();
    DispatchPending();
    lock.lock();
  }
}

size_t Informer::DispatchPending() {
  size_t delivered = 0;
  // Two vectors take turns as the queue and the batch being handled, so that a dispatch
  // allocates nothing for them: what one batch leaves (handled, or dropped by a relist) is
  // cleared and becomes the queue, and the last one is kept in spare_ for the next call.
  std::vector<Change> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    batch.swap(spare_);
  }
  for (;;) {
    bool relist;
    bool rewatch;
    uint64_t generation;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return delivered;
      batch.clear();
      batch.swap(pending_);
      woken_ = false;
      relist = relist_due_;
      rewatch = rewatch_due_;
      relist_due_ = rewatch_due_ = false;
      generation = watch_generation_;
    }
    if (relist) {
      ListAndWatch();
      ++delivered;
      continue;  // events of older watches are dropped by generation below
    }
    if (rewatch) {
      const store::Revision from =
          std::max(LastSyncRevision(), sink_ ? sink_->progress() : store::Revision{0});
      Watch(from);
      continue;
    }
    if (batch.empty()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (batch.capacity() > spare_.capacity()) spare_.swap(batch);
      return delivered;
    }
    for (Change& change : batch) {
      if (change.watch_generation != generation) continue;  // from a watch since replaced
      if (change.kind == Change::Kind::kEnded) {
        if (change.status.code() == StatusCode::kGone) {
          ListAndWatch();
        } else if (change.status.ok()) {
          // The server closed the watch normally (its timeout): watch again at once.
          Watch(std::max(LastSyncRevision(), sink_ ? sink_->progress() : store::Revision{0}));
        } else {
          ScheduleRetry(/*relist=*/false);
        }
        ++delivered;
        break;  // what follows belongs to the ended watch
      }
      Process(change);
      ++delivered;
    }
  }
}

void Informer::ListAndWatch() {
  Result<ListerWatcher::ListResult> list = source_->List();
  if (!list) {
    std::fprintf(stderr, "informer %s: list failed: %s\n", options_.name.c_str(),
                 list.error().message().c_str());
    ScheduleRetry(/*relist=*/true);
    return;
  }
  // Replace the store's contents with the list, telling the handlers what changed.
  const bool initial = !started_;
  started_ = true;
  std::vector<ObjectPtr> gone;
  if (!initial) {
    std::unordered_set<std::string_view> listed;
    listed.reserve(list->items.size());
    for (const ObjectPtr& o : list->items) listed.insert(o->key);
    std::shared_lock<std::shared_mutex> lock(store_mu_);
    objects_.ForEach([&](const ObjectPtr& object) {
      if (!listed.count(object->key)) gone.push_back(object);
    });
  }
  for (const ObjectPtr& o : list->items) Apply(o, initial);
  for (const ObjectPtr& o : gone) Remove(o);
  {
    std::unique_lock<std::shared_mutex> lock(store_mu_);
    revision_ = list->revision;
  }
  synced_.store(true, std::memory_order_release);
  Watch(list->revision);
}

void Informer::Watch(store::Revision from) {
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    generation = ++watch_generation_;
  }
  watch_.reset();  // the old watch delivers nothing after this
  sink_ = std::make_shared<Sink>(lifeline_, generation);
  auto watch = source_->Watch(from, sink_);
  if (!watch) {
    if (watch.error().code() == StatusCode::kGone) {
      ListAndWatch();
      return;
    }
    std::fprintf(stderr, "informer %s: watch failed: %s\n", options_.name.c_str(),
                 watch.error().message().c_str());
    ScheduleRetry(/*relist=*/false);
    return;
  }
  watch_ = std::move(*watch);
  failures_ = 0;
}

void Informer::ScheduleRetry(bool relist) {
  const Duration delay = RetryDelay(++failures_);
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  if (retry_timer_ != 0) clock_->Cancel(retry_timer_);
  retry_timer_ = clock_->AfterFunc(delay, [lifeline = lifeline_, relist] {
    std::lock_guard<std::mutex> line(lifeline->mu);
    Informer* self = lifeline->informer;
    if (self == nullptr) return;
    {
      std::lock_guard<std::mutex> lock(self->mu_);
      self->retry_timer_ = 0;
      (relist ? self->relist_due_ : self->rewatch_due_) = true;
    }
    self->cv_.notify_one();
    if (self->options_.on_pending) self->options_.on_pending();
  });
}

void Informer::Process(Change& change) {
  if (change.type == WatchEventType::kDeleted) {
    Remove(change.object);
  } else {
    Apply(change.object, false);
  }
  std::unique_lock<std::shared_mutex> lock(store_mu_);
  revision_ = std::max(revision_, change.object->revision);
}

void Informer::IndexLocked(const StoredObject& object, bool add) {
  for (auto& [name, index] : indexes_) {
    for (const std::string& v : index.fn(object)) {
      if (add) {
        index.values[v].insert(object.key);
        continue;
      }
      auto it = index.values.find(v);
      if (it == index.values.end()) continue;
      it->second.erase(object.key);
      if (it->second.empty()) index.values.erase(it);
    }
  }
}

uint64_t Informer::KeyHash(std::string_view key) { return HashSlots<ObjectPtr>::OfKey(key); }

const ObjectPtr* Informer::FindLocked(std::string_view key, uint64_t h) const {
  return objects_.Find(h, [key](const ObjectPtr& o) { return o->key == key; });
}

void Informer::Apply(const ObjectPtr& object, bool initial) {
  ObjectPtr old;
  {
    std::unique_lock<std::shared_mutex> lock(store_mu_);
    const uint64_t h = KeyHash(object->key);
    ObjectPtr* found = FindLocked(object->key, h);
    if (found == nullptr) {
      objects_.Insert(h, object);
      IndexLocked(*object, true);
    } else {
      if ((*found)->revision == object->revision) return;
      old = std::move(*found);
      // The indexes view the keys of the objects they list: the old one's go before it can.
      IndexLocked(*old, false);
      *found = object;
      IndexLocked(*object, true);
    }
  }
  for (const EventHandler& h : handlers_) {
    if (old) {
      if (h.on_update) h.on_update(old, object);
    } else if (h.on_add) {
      h.on_add(object, initial);
    }
  }
}

void Informer::Remove(const ObjectPtr& object) {
  ObjectPtr old;
  {
    std::unique_lock<std::shared_mutex> lock(store_mu_);
    const uint64_t h = KeyHash(object->key);
    const ObjectPtr* found = FindLocked(object->key, h);
    if (found == nullptr) return;
    old = *found;
    IndexLocked(*old, false);
    objects_.Erase(h, [&old](const ObjectPtr& o) { return o == old; });
  }
  // The watch's last state when it has one (a DELETED event), else the last one known here.
  const ObjectPtr& last = object->revision >= old->revision ? object : old;
  for (const EventHandler& h : handlers_) {
    if (h.on_delete) h.on_delete(last);
  }
}

ObjectPtr Informer::GetByKey(std::string_view key) const {
  std::shared_lock<std::shared_mutex> lock(store_mu_);
  const ObjectPtr* found = FindLocked(key, KeyHash(key));
  return found == nullptr ? nullptr : *found;
}

ObjectPtr Informer::Get(std::string_view namespace_, std::string_view name) const {
  return GetByKey(server::ObjectKey(source_->Info(), namespace_, name));
}

std::vector<ObjectPtr> Informer::List() const {
  std::shared_lock<std::shared_mutex> lock(store_mu_);
  std::vector<ObjectPtr> out;
  out.reserve(objects_.size());
  objects_.ForEach([&out](const ObjectPtr& object) { out.push_back(object); });
  return out;
}

std::vector<ObjectPtr> Informer::ByIndex(std::string_view index, std::string_view value) const {
  std::shared_lock<std::shared_mutex> lock(store_mu_);
  std::vector<ObjectPtr> out;
  auto i = indexes_.find(std::string(index));
  if (i == indexes_.end()) return out;
  auto v = i->second.values.find(std::string(value));
  if (v == i->second.values.end()) return out;
  out.reserve(v->second.size());
  for (std::string_view key : v->second) {
    if (const ObjectPtr* found = FindLocked(key, KeyHash(key))) out.push_back(*found);
  }
  return out;
}

size_t Informer::size() const {
  std::shared_lock<std::shared_mutex> lock(store_mu_);
  return objects_.size();
}

store::Revision Informer::LastSyncRevision() const {
  std::shared_lock<std::shared_mutex> lock(store_mu_);
  return revision_;
}

bool WaitForCacheSync(std::initializer_list<Informer*> informers,
                      std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    bool all = true;
    for (Informer* i : informers) {
      if (i->manual_dispatch()) i->DispatchPending();
      all = all && i->HasSynced();
    }
    if (all) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace kt::client
