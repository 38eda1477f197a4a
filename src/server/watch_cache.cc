#include "server/watch_cache.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "server/predecode.h"

namespace kt::server {

namespace {

// Below this many logged events the log is never trimmed by age, so that a quiet resource
// still serves watches from old resourceVersions.
constexpr size_t kMinEventsBeforeAgeTrim = 10'000;

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// `object` with its served bytes carrying `revision` instead of its own resourceVersion: the
// form of DELETED events (upstream sends the last state at the deletion's resourceVersion).
// One copy of the bytes per delete; the typed view is shared with `object`.
ObjectPtr AtRevision(const ObjectPtr& object, store::Revision revision) {
  auto copy = std::make_shared<StoredObject>(*object);
  const std::string& json = *object->json;
  const std::string old_rv = "\"resourceVersion\":\"" + std::to_string(object->revision) + "\"";
  size_t pos = json.find(old_rv);
  std::string out;
  if (pos != std::string::npos && pos < 512) {
    out.reserve(json.size() + 8);
    out.append(json, 0, pos);
    out.append("\"resourceVersion\":\"").append(std::to_string(revision)).append("\"");
    out.append(json, pos + old_rv.size(), std::string::npos);
  } else {
    out = json;  // not in the served format; keep the bytes rather than fail the event
  }
  copy->json = store::MakeBytes(std::move(out));
  copy->revision = revision;
  return copy;
}

}  // namespace

std::string_view WatchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
  }
  return "";
}

bool ObjectFilter::Matches(const StoredObject& object) const {
  const api::ObjectMeta& meta = object.meta();
  if (!namespace_.empty() && meta.namespace_ != namespace_) return false;
  if (!labels.Matches(meta.labels)) return false;
  if (predicate && !predicate(object)) return false;
  return fields.Matches([&](api::fields::Field f) { return object.Field(f); });
}

class WatchCache::Handle : public WatchHandle {
 public:
  Handle(WatchCache* cache, uint64_t id) : cache_(cache), id_(id) {}
  ~Handle() override {
    if (cache_) cache_->RemoveWatcher(id_);
  }

 private:
  WatchCache* cache_;
  uint64_t id_;
};

WatchCache::WatchCache(const ResourceInfo& info, store::Store* store, Options options)
    : info_(info), store_(store), options_(options) {}

WatchCache::~WatchCache() { Stop(); }

Status WatchCache::LoadLocked(const Predecoder* predecoded) {
  Result<store::RangeResponse> range = store_->Range(store::RangeRequest::Prefix(info_.key_prefix));
  if (!range) return range.error();
  {
    std::lock_guard<std::mutex> objects_lock(objects_mu_);
    objects_.clear();
    index_.Clear();
    index_.Reserve(range->kvs.size());
  }
  by_node_.clear();
  log_.clear();
  std::vector<store::KeyValue>& kvs = range->kvs;
  // Decoding dominates start-up (150,000 pods), so it runs on every core; the map is then
  // filled in key order on this thread.
  std::vector<Result<ObjectPtr>> decoded(kvs.size(), Err(Internal("not decoded")));
  const size_t threads =
      kvs.size() < 2048 ? 1 : std::max<size_t>(1, std::thread::hardware_concurrency());
  auto decode = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      if (predecoded != nullptr) {
        if (ObjectPtr o = predecoded->Take(kvs[i].mod_revision, kvs[i].key);
            o && o->resource == info_.resource) {
          decoded[i] = std::move(o);
          continue;
        }
      }
      decoded[i] = MakeStoredObject(info_, kvs[i].key, kvs[i].value, kvs[i].mod_revision,
                                    kvs[i].create_revision);
    }
  };
  std::vector<std::thread> workers;
  const size_t chunk = (kvs.size() + threads - 1) / threads;
  for (size_t t = 1; t < threads; ++t) {
    workers.emplace_back(decode, std::min(kvs.size(), t * chunk),
                         std::min(kvs.size(), (t + 1) * chunk));
  }
  decode(0, std::min(kvs.size(), chunk));
  for (std::thread& w : workers) w.join();
  std::lock_guard<std::mutex> objects_lock(objects_mu_);
  for (size_t i = 0; i < kvs.size(); ++i) {
    if (!decoded[i]) {
      return decoded[i].error().WithPrefix("loading " + kvs[i].key + " from the store: ");
    }
    IndexLocked(*decoded[i], true);
    const std::string_view key = (*decoded[i])->key;
    index_.Insert(objects_.emplace_hint(objects_.end(), key, std::move(*decoded[i])));
  }
  revision_ = range->revision;
  log_floor_ = revision_;
  return Status::Ok();
}

Status WatchCache::Start(const Predecoder* predecoded) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    KT_RETURN_IF_ERROR(LoadLocked(predecoded));
  }
  store::WatchRequest request = store::WatchRequest::Prefix(info_.key_prefix, revision() + 1);
  request.progress_notify = true;
  Result<std::unique_ptr<store::Watcher>> watch =
      store_->Watch(request, [this](store::WatchResponse r) { OnStoreResponse(std::move(r)); });
  if (!watch) return watch.error();
  store_watch_ = std::move(*watch);
  following_.store(true);
  return Status::Ok();
}

void WatchCache::Stop() {
  store_watch_.reset();  // no callback runs after this
  following_.store(false);
  {
    std::lock_guard<std::mutex> lock(prepared_mu_);
    prepared_.clear();
  }
  std::vector<Watcher> watchers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    watchers.swap(watchers_);
    waiters_.clear();
  }
  for (Watcher& w : watchers) w.sink->OnEnd(Status(StatusCode::kUnavailable, "server stopping"));
}

store::Revision WatchCache::revision() const {
  std::lock_guard<std::mutex> lock(mu_);
  return revision_;
}

void WatchCache::AfterRevision(store::Revision revision, std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (revision_ < revision && !stopped_) {
      waiters_.emplace(revision, std::move(fn));
      return;
    }
  }
  fn();
}

void WatchCache::IndexLocked(const ObjectPtr& object, bool add) {
  const api::Pod* pod = object->As<api::Pod>();
  if (pod == nullptr || pod->spec.node_name.empty()) return;
  if (add) {
    auto& pods = by_node_[pod->spec.node_name];
    pods.erase(object->key);  // an entry's key must view this object's own key
    pods.emplace(object->key, object);
    return;
  }
  auto it = by_node_.find(pod->spec.node_name);
  if (it == by_node_.end()) return;
  it->second.erase(object->key);
  if (it->second.empty()) by_node_.erase(it);
}

void WatchCache::ApplyLocked(const store::Event& e, std::vector<Event>& applied) {
  const auto now = std::chrono::steady_clock::now();
  auto it = index_.Find(objects_, e.key);
  ObjectPtr prev = it == objects_.end() ? nullptr : it->second;
  if (e.type == store::Event::Type::kDelete) {
    if (!prev) return;
    IndexLocked(prev, false);
    {
      std::lock_guard<std::mutex> objects_lock(objects_mu_);
      index_.Erase(it);
      objects_.erase(it);
    }
    const store::Revision prev_revision = prev->revision;
    applied.push_back(Event{WatchEventType::kDeleted,
                            e.mod_revision,
                            AtRevision(prev, e.mod_revision),
                            std::move(prev),
                            prev_revision,
                            {},
                            now});
    return;
  }
  Result<ObjectPtr> obj =
      MakeStoredObjectWithView(info_, e.key, e.value, e.mod_revision, e.create_revision,
                               TakePrepared(e.mod_revision, e.value));
  if (!obj) {
    // Everything written went through validation; an undecodable value is a bug. Keep serving.
    std::fprintf(stderr, "watch cache %s: skipping undecodable %s at revision %lld: %s\n",
                 std::string(info_.plural).c_str(), e.key.c_str(),
                 static_cast<long long>(e.mod_revision), obj.error().message().c_str());
    return;
  }
  if (prev) {
    IndexLocked(prev, false);
    // Re-point the entry's key at the new object's copy before the old one can go; it goes back
    // where it was (the hint: no second search).
    const auto next = std::next(it);
    std::lock_guard<std::mutex> objects_lock(objects_mu_);
    index_.Erase(it);
    auto node = objects_.extract(it);
    node.key() = (*obj)->key;
    node.mapped() = *obj;
    index_.Insert(objects_.insert(next, std::move(node)));
  } else {
    std::lock_guard<std::mutex> objects_lock(objects_mu_);
    index_.Insert(objects_.emplace((*obj)->key, *obj).first);
  }
  IndexLocked(*obj, true);
  const store::Revision prev_revision = prev ? prev->revision : 0;
  applied.push_back(Event{prev ? WatchEventType::kModified : WatchEventType::kAdded,
                          e.mod_revision,
                          std::move(*obj),
                          std::move(prev),
                          prev_revision,
                          {},
                          now});
}

void WatchCache::Prepare(store::Revision revision, const store::Bytes& value, TypedObject typed) {
  if (!following_.load(std::memory_order_relaxed) || !value) return;
  std::lock_guard<std::mutex> lock(prepared_mu_);
  if (prepared_.size() >= kMaxPrepared) prepared_.pop_front();
  prepared_.push_back(Prepared{revision, value.get(), std::move(typed)});
}

TypedObject WatchCache::TakePrepared(store::Revision revision, const store::Bytes& value) {
  std::lock_guard<std::mutex> lock(prepared_mu_);
  while (!prepared_.empty() && prepared_.front().revision < revision) prepared_.pop_front();
  if (prepared_.empty() || prepared_.front().revision != revision ||
      prepared_.front().value != value.get()) {
    return TypedObject();
  }
  TypedObject typed = std::move(prepared_.front().typed);
  prepared_.pop_front();
  return typed;
}

bool WatchCache::Deliver(WatchEventType type, store::Revision revision, const ObjectPtr& object,
                         const ObjectPtr& prev, bool had_prev, Watcher& w) {
  if (revision <= w.from) return true;
  const bool cur = type != WatchEventType::kDeleted && w.filter.Matches(*object);
  // Without `prev` the filter looks at nothing a key does not fix (the namespace), so the state
  // before matched exactly when the new one does.
  const bool old = had_prev && (prev != nullptr ? w.filter.Matches(*prev) : cur);
  if (cur && !old) return w.sink->OnEvent(WatchEventType::kAdded, object);
  if (cur && old) return w.sink->OnEvent(WatchEventType::kModified, object);
  if (old) {
    ObjectPtr gone = type == WatchEventType::kDeleted ? object : AtRevision(prev, revision);
    return w.sink->OnEvent(WatchEventType::kDeleted, gone);
  }
  return true;
}

void WatchCache::LightenLocked(Event& e) {
  if (e.prev_revision != 0) {
    // The state this event superseded was the object of an earlier event, if still logged.
    auto it = std::lower_bound(
        log_.begin(), log_.end(), e.prev_revision,
        [](const Event& logged, store::Revision r) { return logged.revision < r; });
    if (it != log_.end() && it->revision == e.prev_revision && it->object != nullptr &&
        it->type != WatchEventType::kDeleted) {
      it->key = it->object->key;
      it->object.reset();
    }
  }
  if (e.type == WatchEventType::kDeleted) {
    e.key = e.object->key;
    e.object.reset();
  }
  e.prev.reset();
}

Result<ObjectPtr> WatchCache::ReadBack(const std::string& key, store::Revision revision) const {
  auto too_old = [&] {
    return Status(StatusCode::kGone, "too old resource version: the state of " + key +
                                         " at revision " + std::to_string(revision) +
                                         " has been compacted");
  };
  Result<store::RangeResponse> range = store_->Range(store::RangeRequest::Single(key, revision));
  if (!range) {
    if (range.error().code() == StatusCode::kGone) return Err(too_old());
    return Err(range.error());
  }
  if (range->kvs.empty() || range->kvs[0].mod_revision != revision) return Err(too_old());
  const store::KeyValue& kv = range->kvs[0];
  return MakeStoredObject(info_, kv.key, kv.value, kv.mod_revision, kv.create_revision);
}

Result<bool> WatchCache::ReplayLocked(const Event& e, Watcher& w) const {
  if (e.revision <= w.from) return true;
  const std::string& key = e.object ? e.object->key : e.key;
  const bool had_prev = e.prev_revision != 0;
  // A namespace is in the key, so only label, field and in-process filters need the old state.
  const bool need_prev =
      had_prev && (!w.filter.labels.Empty() || !w.filter.fields.Empty() || w.filter.predicate);
  ObjectPtr object = e.object;
  ObjectPtr prev = e.prev;
  if (e.type == WatchEventType::kDeleted) {
    if (!prev) {
      Result<ObjectPtr> last = ReadBack(key, e.prev_revision);
      if (!last) return Err(last.error());
      prev = std::move(*last);
    }
    if (!object) object = AtRevision(prev, e.revision);
  } else {
    if (!object) {
      Result<ObjectPtr> now = ReadBack(key, e.revision);
      if (!now) return Err(now.error());
      object = std::move(*now);
    }
    if (!prev && need_prev) {
      Result<ObjectPtr> before = ReadBack(key, e.prev_revision);
      if (!before) return Err(before.error());
      prev = std::move(*before);
    }
  }
  return Deliver(e.type, e.revision, object, prev, had_prev, w);
}

void WatchCache::TrimLogLocked() {
  const auto cutoff = std::chrono::steady_clock::now() - options_.min_event_age;
  while (!log_.empty() && (log_.size() > options_.max_events ||
                           (log_.size() > kMinEventsBeforeAgeTrim && log_.front().at < cutoff))) {
    log_floor_ = log_.front().revision;
    log_.pop_front();
  }
}

void WatchCache::OnStoreResponse(store::WatchResponse response) {
  if (!response.status.ok()) {
    std::vector<Watcher> ended;
    Status end = response.status;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
      ended.swap(watchers_);
      if (response.status.code() == StatusCode::kGone) {
        // Fell behind the store's compaction: reload; watchers relist.
        Status s = LoadLocked(nullptr);
        if (!s.ok()) std::fprintf(stderr, "watch cache reload: %s\n", s.message().c_str());
      }
    }
    for (Watcher& w : ended) w.sink->OnEnd(end);
    if (response.status.code() == StatusCode::kGone) {
      store::WatchRequest request = store::WatchRequest::Prefix(info_.key_prefix, revision() + 1);
      request.progress_notify = true;
      auto watch =
          store_->Watch(request, [this](store::WatchResponse r) { OnStoreResponse(std::move(r)); });
      if (watch) store_watch_ = std::move(*watch);
    }
    return;
  }
  std::vector<std::function<void()>> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    std::vector<Event> applied;
    applied.reserve(response.events.size());
    for (const store::Event& e : response.events) ApplyLocked(e, applied);
    for (Event& e : applied) {
      for (size_t i = 0; i < watchers_.size();) {
        if (Deliver(e.type, e.revision, e.object, e.prev, e.prev != nullptr, watchers_[i])) {
          ++i;
        } else {
          watchers_[i] = std::move(watchers_.back());
          watchers_.pop_back();
        }
      }
      LightenLocked(e);
      log_.push_back(std::move(e));
    }
    revision_ = std::max(revision_, response.revision);
    for (Watcher& w : watchers_) {
      w.from = std::max(w.from, revision_);
      w.sink->OnProgress(revision_);
    }
    TrimLogLocked();
    auto end = waiters_.upper_bound(revision_);
    for (auto it = waiters_.begin(); it != end; ++it) ready.push_back(std::move(it->second));
    waiters_.erase(waiters_.begin(), end);
  }
  for (auto& fn : ready) fn();
}

ObjectPtr WatchCache::Get(std::string_view namespace_, std::string_view name) const {
  const ObjectKeyBuffer key(info_, namespace_, name);
  std::lock_guard<std::mutex> lock(objects_mu_);
  auto it = index_.Find(objects_, key.view());
  return it == objects_.end() ? nullptr : it->second;
}

size_t WatchCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return objects_.size();
}

WatchCache::ListResult WatchCache::List(const ObjectFilter& filter, std::string_view after_key,
                                        int64_t limit) const {
  ListResult result;
  std::lock_guard<std::mutex> lock(mu_);
  result.revision = revision_;
  // Returns false once the page is full.
  auto take = [&](const ObjectPtr& obj) {
    if (!after_key.empty() && obj->key <= after_key) return true;
    if (!filter.Matches(*obj)) return true;
    if (limit > 0 && static_cast<int64_t>(result.items.size()) == limit) {
      result.last_key = result.items.back()->key;
      return false;
    }
    result.items.push_back(obj);
    return true;
  };
  using api::fields::Field;
  // The index holds bound pods only; "spec.nodeName=" (unbound pods) takes the full scan.
  if (auto node = filter.fields.RequiresExactMatch(Field::kSpecNodeName);
      node && !node->empty() && info_.resource == Resource::kPods) {
    auto it = by_node_.find(*node);
    if (it == by_node_.end()) return result;
    for (const auto& [key, obj] : it->second) {
      if (!take(obj)) break;
    }
    return result;
  }
  if (auto name = filter.fields.RequiresExactMatch(Field::kMetadataName);
      name && (!info_.namespaced || !filter.namespace_.empty())) {
    auto it = index_.Find(objects_, ObjectKeyBuffer(info_, filter.namespace_, *name).view());
    if (it != objects_.end()) take(it->second);
    return result;
  }
  const std::string prefix = NamespacePrefix(info_, filter.namespace_);
  auto it = after_key.empty() || after_key < prefix ? objects_.lower_bound(prefix)
                                                    : objects_.upper_bound(after_key);
  for (; it != objects_.end() && StartsWith(it->first, prefix); ++it) {
    if (!take(it->second)) break;
  }
  return result;
}

Result<WatchCache::ListResult> WatchCache::ListAt(store::Revision revision,
                                                  const ObjectFilter& filter,
                                                  std::string_view after_key, int64_t limit) const {
  ListResult result;
  result.revision = revision;
  const std::string prefix = NamespacePrefix(info_, filter.namespace_);
  std::string start = after_key.empty() ? prefix : std::string(after_key) + '\0';
  if (start < prefix) start = prefix;
  const std::string end = store::PrefixEnd(prefix);
  const int64_t chunk = limit > 0 ? std::max<int64_t>(limit, 64) : 0;
  for (;;) {
    Result<store::RangeResponse> range =
        store_->Range(store::RangeRequest{store::KeyRange{start, end}, revision, chunk});
    if (!range) return Err(range.error());
    for (store::KeyValue& kv : range->kvs) {
      Result<ObjectPtr> obj =
          MakeStoredObject(info_, kv.key, kv.value, kv.mod_revision, kv.create_revision);
      if (!obj) return Err(obj.error());
      if (!filter.Matches(**obj)) continue;
      if (limit > 0 && static_cast<int64_t>(result.items.size()) == limit) {
        result.last_key = result.items.back()->key;
        return result;
      }
      result.items.push_back(std::move(*obj));
    }
    if (!range->more || range->kvs.empty()) return result;
    start = range->kvs.back().key + '\0';
  }
}

Result<std::unique_ptr<WatchCache::WatchHandle>> WatchCache::StartWatch(
    store::Revision resource_version, ObjectFilter filter, std::shared_ptr<WatchSink> sink) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_) return Err(Status(StatusCode::kUnavailable, "server stopping"));
  Watcher w{next_watcher_id_++, std::move(filter), std::move(sink), 0};
  if (resource_version == 0) {
    const std::string prefix = NamespacePrefix(info_, w.filter.namespace_);
    for (auto it = objects_.lower_bound(prefix);
         it != objects_.end() && StartsWith(it->first, prefix); ++it) {
      if (w.filter.Matches(*it->second) && !w.sink->OnEvent(WatchEventType::kAdded, it->second)) {
        return std::unique_ptr<WatchHandle>(std::make_unique<Handle>(nullptr, 0));
      }
    }
    w.from = revision_;
  } else {
    if (resource_version < log_floor_) {
      return Err(Status(StatusCode::kGone,
                        "too old resource version: " + std::to_string(resource_version) + " (" +
                            std::to_string(log_floor_) + ")"));
    }
    w.from = resource_version;
    auto it = std::upper_bound(
        log_.begin(), log_.end(), resource_version,
        [](store::Revision r, const Event& logged) { return r < logged.revision; });
    for (; it != log_.end(); ++it) {
      Result<bool> delivered = ReplayLocked(*it, w);
      if (!delivered) return Err(delivered.error());
      if (!*delivered) return std::unique_ptr<WatchHandle>(std::make_unique<Handle>(nullptr, 0));
    }
    w.from = std::max(resource_version, revision_);
  }
  const uint64_t id = w.id;
  watchers_.push_back(std::move(w));
  return std::unique_ptr<WatchHandle>(std::make_unique<Handle>(this, id));
}

void WatchCache::RemoveWatcher(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < watchers_.size(); ++i) {
    if (watchers_[i].id == id) {
      watchers_[i] = std::move(watchers_.back());
      watchers_.pop_back();
      return;
    }
  }
}

}  // namespace kt::server
