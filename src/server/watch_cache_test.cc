// Tests of the watch cache (watch_cache.h) against a memory store: replay from resourceVersion 0
// and N, 410 for a revision older than the event log, selector transitions, the spec.nodeName
// index, slow/ended sinks, many concurrent writers and watchers (DESIGN.md invariant 2), and
// read-your-writes through the Registry; then a few watches end to end over HTTP.
//
// Nothing sleeps: waits are on callbacks and condition variables, each with a deadline.

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>

#include "api/codec.h"
#include "api/selector.h"
#include "server/api_server.h"
#include "server/http.h"
#include "server/http_test_client.h"
#include "server/registry.h"
#include "server/watch_cache.h"
#include "store/sqlite_store.h"
#include "store/store.h"
#include "store/store_test_util.h"

namespace kt::server {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kTimeout = std::chrono::seconds(30);

// Concatenates strings and numbers (GCC 12 warns falsely about `"x" + std::to_string(n)`).
template <class... Args>
std::string Cat(const Args&... args) {
  std::string out;
  auto add = [&](const auto& a) {
    if constexpr (std::is_arithmetic_v<std::decay_t<decltype(a)>>) {
      out += std::to_string(a);
    } else {
      out += std::string_view(a);
    }
  };
  (add(args), ...);
  return out;
}

// --- Recording sinks ---------------------------------------------------------------------------

struct Seen {
  WatchEventType type;
  std::string key;
  store::Revision revision;
  std::string json;  // kept only when asked for

  bool operator==(const Seen& o) const {
    return type == o.type && key == o.key && revision == o.revision;
  }
};

std::ostream& operator<<(std::ostream& os, const Seen& s) {
  return os << WatchEventTypeName(s.type) << " " << s.key << "@" << s.revision;
}

class RecordingSink : public WatchSink {
 public:
  // Returns false from OnEvent once it has taken `accept` events (< 0: never).
  explicit RecordingSink(int accept = -1, bool keep_json = true)
      : accept_(accept), keep_json_(keep_json) {}

  bool OnEvent(WatchEventType type, const ObjectPtr& object) override {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(
        {type, object->key, object->revision, keep_json_ ? *object->json : std::string()});
    cv_.notify_all();
    return accept_ < 0 || static_cast<int>(events_.size()) < accept_;
  }
  void OnProgress(store::Revision revision) override {
    std::lock_guard<std::mutex> lock(mu_);
    progress_ = std::max(progress_, revision);
    cv_.notify_all();
  }
  void OnEnd(Status status) override {
    std::lock_guard<std::mutex> lock(mu_);
    ended_ = status;
    cv_.notify_all();
  }

  bool WaitForEvents(size_t n, std::chrono::seconds timeout = kTimeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_until(lock, Clock::now() + timeout, [&] { return events_.size() >= n; });
  }
  std::vector<Seen> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  size_t count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_.size();
  }
  std::optional<Status> ended() const {
    std::lock_guard<std::mutex> lock(mu_);
    return ended_;
  }

 private:
  const int accept_;
  const bool keep_json_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Seen> events_;
  store::Revision progress_ = 0;
  std::optional<Status> ended_;
};

// --- Fixture: a pods watch cache over a memory store --------------------------------------------

const ResourceInfo& PodInfo() { return Info(Resource::kPods); }

std::string Key(std::string_view ns, std::string_view name) {
  return ObjectKey(PodInfo(), ns, name);
}

// A pod in the storage format (kind, apiVersion, metadata first; no resourceVersion).
std::string StoredPod(std::string_view ns, std::string_view name, std::string_view labels = "{}",
                      std::string_view node = "") {
  std::string out = R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")";
  out.append(name).append(R"(","namespace":")").append(ns).append(R"(","labels":)");
  out.append(labels).append(R"(},"spec":{)");
  if (!node.empty()) out.append(R"("nodeName":")").append(node).append(R"(",)");
  out.append(R"("containers":[{"name":"c","image":"i"}]}})");
  return out;
}

ObjectFilter Filter(std::string_view ns = "", std::string_view labels = "",
                    std::string_view fields = "") {
  ObjectFilter f;
  f.namespace_ = std::string(ns);
  Result<api::labels::Selector> l = api::labels::Parse(labels);
  EXPECT_TRUE(l) << labels;
  if (l) f.labels = std::move(*l);
  Result<api::fields::Selector> s = api::fields::ParseSelector(fields, "Pod");
  EXPECT_TRUE(s) << fields;
  if (s) f.fields = std::move(*s);
  return f;
}

// The resourceVersion inside served bytes.
std::string RvInJson(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  const rapidjson::Value* v = rapidjson::Pointer("/metadata/resourceVersion").Get(d);
  return v != nullptr && v->IsString() ? v->GetString() : "<absent>";
}

std::string LabelInJson(const std::string& json, const char* label) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  const rapidjson::Value* v = rapidjson::Pointer(std::string("/metadata/labels/") + label).Get(d);
  return v != nullptr && v->IsString() ? v->GetString() : "<absent>";
}

class WatchCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { StartCache(WatchCache::Options()); }

  // A write outside the pods prefix first, so the cache starts at revision 1 and a watch from
  // any N >= 1 is a replay (0 means "current objects first").
  void StartCache(WatchCache::Options options, const std::string& sqlite_path = "") {
    cache_.reset();
    store_.reset();
    if (sqlite_path.empty()) {
      store_ = store::NewMemoryStore();
    } else {
      store::SqliteOptions sqlite;
      sqlite.path = sqlite_path;
      Result<std::unique_ptr<store::Store>> opened = store::OpenSqliteStore(sqlite);
      ASSERT_TRUE(opened) << opened.error().ToString();
      store_ = std::move(*opened);
    }
    ASSERT_TRUE(store_->Create("/registry/other/x", store::MakeBytes("{}")));
    base_ = store_->CurrentRevision();
    cache_ = std::make_unique<WatchCache>(PodInfo(), store_.get(), options);
    ASSERT_TRUE(cache_->Start().ok());
  }

  void TearDown() override { cache_.reset(); }

  // Creates or replaces the pod; returns the write's revision.
  store::Revision Put(std::string_view ns, std::string_view name, std::string_view labels = "{}",
                      std::string_view node = "") {
    const std::string key = Key(ns, name);
    auto bytes = store::MakeBytes(StoredPod(ns, name, labels, node));
    Result<store::WriteResult> r =
        store_->Get(key) ? store_->Update(key, bytes, 0) : store_->Create(key, bytes);
    EXPECT_TRUE(r) << key << ": " << r.error().ToString();
    return r ? r->revision : 0;
  }
  store::Revision Del(std::string_view ns, std::string_view name) {
    Result<store::WriteResult> r = store_->Delete(Key(ns, name), 0);
    EXPECT_TRUE(r) << name;
    return r ? r->revision : 0;
  }

  // Waits until the cache has applied every write up to `revision`.
  void Sync(store::Revision revision) {
    auto done = std::make_shared<std::promise<void>>();
    std::future<void> f = done->get_future();
    cache_->AfterRevision(revision, [done] { done->set_value(); });
    ASSERT_EQ(f.wait_for(kTimeout), std::future_status::ready) << "cache stuck before " << revision;
  }

  std::unique_ptr<WatchCache::WatchHandle> Watch(store::Revision rv, ObjectFilter filter,
                                                 std::shared_ptr<RecordingSink> sink) {
    Result<std::unique_ptr<WatchCache::WatchHandle>> h =
        cache_->StartWatch(rv, std::move(filter), std::move(sink));
    EXPECT_TRUE(h) << "watch from " << rv << ": " << h.error().ToString();
    return h ? std::move(*h) : nullptr;
  }

  std::unique_ptr<store::Store> store_;
  std::unique_ptr<WatchCache> cache_;
  store::Revision base_ = 0;
};

using T = WatchEventType;

TEST_F(WatchCacheTest, ResourceVersionZeroReplaysCurrentObjectsAsAddedThenLiveEvents) {
  const store::Revision ra = Put("default", "a", R"({"app":"web"})");
  const store::Revision rb = Put("default", "b", R"({"app":"db"})");
  const store::Revision rgone = Put("default", "gone");
  const store::Revision rdel = Del("default", "gone");
  Sync(rdel);
  (void)rgone;

  auto sink = std::make_shared<RecordingSink>();
  auto h = Watch(0, Filter(), sink);
  // The replay is synchronous, in key order, each object at its own resourceVersion.
  EXPECT_EQ(sink->events(), (std::vector<Seen>{{T::kAdded, Key("default", "a"), ra, ""},
                                               {T::kAdded, Key("default", "b"), rb, ""}}));

  const store::Revision r3 = Put("default", "a", R"({"app":"web","v":"2"})");
  const store::Revision r4 = Put("default", "c");
  const store::Revision r5 = Del("default", "b");
  ASSERT_TRUE(sink->WaitForEvents(5));
  std::vector<Seen> events = sink->events();
  EXPECT_EQ(events, (std::vector<Seen>{{T::kAdded, Key("default", "a"), ra, ""},
                                       {T::kAdded, Key("default", "b"), rb, ""},
                                       {T::kModified, Key("default", "a"), r3, ""},
                                       {T::kAdded, Key("default", "c"), r4, ""},
                                       {T::kDeleted, Key("default", "b"), r5, ""}}));
  // Served bytes carry the event's resourceVersion; DELETED carries the last state at the
  // deletion's revision.
  EXPECT_EQ(RvInJson(events[0].json), std::to_string(ra));
  EXPECT_EQ(RvInJson(events[2].json), std::to_string(r3));
  EXPECT_EQ(LabelInJson(events[2].json, "v"), "2");
  EXPECT_EQ(RvInJson(events[4].json), std::to_string(r5));
  EXPECT_EQ(LabelInJson(events[4].json, "app"), "db");
}

TEST_F(WatchCacheTest, GetAndNameListsFindKeysOfEveryLength) {
  // The lookup key is built in a buffer of its own, spilling to the heap past 256 bytes: the
  // longest namespace (63) and name (253) make a 332-byte key.
  const std::string long_ns(63, 'n');
  const std::string long_name(253, 'p');
  Put("default", "a");
  Put(long_ns, "b");
  Sync(Put(long_ns, long_name));
  for (const auto& [ns, name] : std::vector<std::pair<std::string, std::string>>{
           {"default", "a"}, {long_ns, "b"}, {long_ns, long_name}}) {
    SCOPED_TRACE(name.size());
    EXPECT_EQ(ObjectKeyBuffer(PodInfo(), ns, name).view(), Key(ns, name));
    ObjectPtr got = cache_->Get(ns, name);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->key, Key(ns, name));
    WatchCache::ListResult listed = cache_->List(Filter(ns, "", "metadata.name=" + name), "", 0);
    ASSERT_EQ(listed.items.size(), 1u);
    EXPECT_EQ(listed.items[0]->key, Key(ns, name));
  }
  EXPECT_FALSE(cache_->Get(long_ns, long_name + "x"));
  EXPECT_FALSE(cache_->Get("default", "b"));
  // A cluster-scoped resource's key has no namespace.
  EXPECT_EQ(ObjectKeyBuffer(Info(Resource::kNodes), "ignored", "node-1").view(),
            ObjectKey(Info(Resource::kNodes), "", "node-1"));
}

TEST_F(WatchCacheTest, ResourceVersionNReplaysEveryLaterEventOnceInOrder) {
  struct Op {
    T type;
    std::string name;
    store::Revision rev;
  };
  std::vector<Op> ops;
  auto put = [&](const std::string& name, bool exists, std::string_view labels = "{}") {
    ops.push_back({exists ? T::kModified : T::kAdded, name, Put("default", name, labels)});
  };
  put("a", false);
  put("b", false);
  put("a", true, R"({"v":"1"})");
  ops.push_back({T::kDeleted, "b", Del("default", "b")});
  put("b", false);  // re-created under the same name
  put("c", false);
  put("a", true, R"({"v":"2"})");
  ops.push_back({T::kDeleted, "a", Del("default", "a")});
  put("d", false);
  put("c", true, R"({"v":"3"})");
  ASSERT_TRUE(store_->Create("/registry/other/y", store::MakeBytes("{}")));  // a gap
  put("e", false);
  const store::Revision last = ops.back().rev;
  Sync(last);

  struct Started {
    std::shared_ptr<RecordingSink> sink;
    std::unique_ptr<WatchCache::WatchHandle> handle;
    size_t replayed;
  };
  std::vector<Started> watches;
  for (store::Revision n = base_; n <= last; ++n) {
    SCOPED_TRACE(Cat("resourceVersion ", n));
    auto sink = std::make_shared<RecordingSink>();
    auto h = Watch(n, Filter(), sink);
    std::vector<Seen> want;
    for (const Op& op : ops) {
      if (op.rev > n) want.push_back({op.type, Key("default", op.name), op.rev, ""});
    }
    EXPECT_EQ(sink->events(), want) << "the replay";
    watches.push_back({sink, std::move(h), want.size()});
  }
  // A watch from a revision the store has not reached yet waits for it: it gets what comes
  // after, not the write at that revision.
  auto future = std::make_shared<RecordingSink>();
  auto hf = Watch(last + 1, Filter(), future);
  EXPECT_EQ(future->count(), 0u);

  // Live writes reach every watcher exactly once each, after its replay.
  const store::Revision live = Put("default", "live");
  const store::Revision fence = Put("default", "fence");
  ASSERT_EQ(live, last + 1);
  for (Started& w : watches) {
    ASSERT_TRUE(w.sink->WaitForEvents(w.replayed + 2));
    std::vector<Seen> events = w.sink->events();
    ASSERT_EQ(events.size(), w.replayed + 2);
    EXPECT_EQ(events[w.replayed], (Seen{T::kAdded, Key("default", "live"), live, ""}));
    EXPECT_EQ(events[w.replayed + 1], (Seen{T::kAdded, Key("default", "fence"), fence, ""}));
  }
  ASSERT_TRUE(future->WaitForEvents(1));
  EXPECT_EQ(future->events(), (std::vector<Seen>{{T::kAdded, Key("default", "fence"), fence, ""}}));
}

TEST_F(WatchCacheTest, ResourceVersionOlderThanTheLogIsGone) {
  WatchCache::Options options;
  options.min_event_age = std::chrono::seconds(0);
  options.max_events = 5;
  StartCache(options);
  store::Revision last = 0;
  for (int i = 0; i < 20; ++i) last = Put("default", Cat("p", i % 4));
  Sync(last);
  // The log holds the last 5 events; a watch may start from the revision just before them
  // (upstream: oldest - 1) and no earlier.
  const store::Revision floor = last - 5;
  for (store::Revision n : {base_, floor - 3, floor - 1}) {
    auto sink = std::make_shared<RecordingSink>();
    Result<std::unique_ptr<WatchCache::WatchHandle>> h = cache_->StartWatch(n, Filter(), sink);
    ASSERT_FALSE(h) << n;
    EXPECT_EQ(h.error().code(), StatusCode::kGone);
    EXPECT_EQ(h.error().message(), Cat("too old resource version: ", n, " (", floor, ")"));
    EXPECT_EQ(sink->count(), 0u);
  }
  auto sink = std::make_shared<RecordingSink>();
  auto h = Watch(floor, Filter(), sink);
  ASSERT_TRUE(h);
  EXPECT_EQ(sink->count(), 5u);
  // rv=0 is never too old: the current objects, then live events.
  auto zero = std::make_shared<RecordingSink>();
  auto hz = Watch(0, Filter(), zero);
  EXPECT_EQ(zero->count(), 4u);
}

TEST_F(WatchCacheTest, LabelSelectorTransitionsAreAddedAndDeleted) {
  auto sink = std::make_shared<RecordingSink>();
  auto h = Watch(0, Filter("", "app=web"), sink);
  Put("default", "p", R"({"app":"db"})");                              // not matching
  const store::Revision r2 = Put("default", "p", R"({"app":"web"})");  // starts matching
  const store::Revision r3 = Put("default", "p", R"({"app":"web","v":"2"})");
  const store::Revision r4 = Put("default", "p", R"({"app":"db","v":"3"})");  // stops matching
  Put("default", "p", R"({"app":"db","v":"4"})");                             // still not matching
  Del("default", "p");                                                        // gone unseen
  const store::Revision r7 = Put("default", "q", R"({"app":"web"})");         // fence
  ASSERT_TRUE(sink->WaitForEvents(4));
  std::vector<Seen> events = sink->events();
  ASSERT_EQ(events, (std::vector<Seen>{{T::kAdded, Key("default", "p"), r2, ""},
                                       {T::kModified, Key("default", "p"), r3, ""},
                                       {T::kDeleted, Key("default", "p"), r4, ""},
                                       {T::kAdded, Key("default", "q"), r7, ""}}));
  // The DELETED of an object that stopped matching is its previous content at the new
  // resourceVersion (upstream cacheWatcher).
  EXPECT_EQ(RvInJson(events[2].json), std::to_string(r4));
  EXPECT_EQ(LabelInJson(events[2].json, "app"), "web");
  EXPECT_EQ(LabelInJson(events[2].json, "v"), "2");

  // The same transitions for a field selector, replayed from the log.
  auto nodes = std::make_shared<RecordingSink>();
  auto hn = Watch(r7, Filter("default", "", "spec.nodeName=n1"), nodes);
  const store::Revision b1 = Put("default", "m", "{}", "n1");
  const store::Revision b2 = Put("default", "m", "{}", "n2");
  const store::Revision b3 = Put("default", "m", "{}", "n1");
  const store::Revision b4 = Del("default", "m");
  Put("other", "m", "{}", "n1");  // another namespace
  const store::Revision fence = Put("default", "fence", "{}", "n1");
  ASSERT_TRUE(nodes->WaitForEvents(5));
  EXPECT_EQ(nodes->events(), (std::vector<Seen>{{T::kAdded, Key("default", "m"), b1, ""},
                                                {T::kDeleted, Key("default", "m"), b2, ""},
                                                {T::kAdded, Key("default", "m"), b3, ""},
                                                {T::kDeleted, Key("default", "m"), b4, ""},
                                                {T::kAdded, Key("default", "fence"), fence, ""}}));
}

// The log keeps neither superseded states nor the states before its events (see
// WatchCache::Event); a replay reads them back from the store. On SQLite those values have been
// released from memory too and come from disk. Either way a replay must equal what live
// watchers saw: the same events, the same bytes, selector transitions included.
TEST_F(WatchCacheTest, ReplaysReadSupersededStatesBackExactlyAsLiveWatchersSawThem) {
  for (const bool sqlite : {false, true}) {
    SCOPED_TRACE(sqlite ? "sqlite" : "memory");
    store::testing::TempDir dir;
    ASSERT_TRUE(dir.ok());
    StartCache(WatchCache::Options(), sqlite ? dir.File("store.db") : "");
    const std::vector<ObjectFilter> filters = {Filter(), Filter("", "app=web"),
                                               Filter("default", "", "spec.nodeName=n1"),
                                               Filter("other")};
    std::vector<std::shared_ptr<RecordingSink>> live;
    std::vector<std::unique_ptr<WatchCache::WatchHandle>> handles;
    for (const ObjectFilter& f : filters) {
      live.push_back(std::make_shared<RecordingSink>());
      handles.push_back(Watch(base_, f, live.back()));
    }
    Put("default", "p", R"({"app":"db"})", "n1");
    Put("default", "p", R"({"app":"web"})", "n2");
    Put("default", "p", R"({"app":"web","v":"2"})", "n1");
    Put("default", "p", R"({"app":"db","v":"3"})", "n1");
    Put("other", "q", R"({"app":"web"})", "n1");
    Put("default", "p", R"({"app":"db","v":"4"})", "n2");
    Del("default", "p");
    Put("default", "p", R"({"app":"web"})", "n1");  // re-created under the same name
    Put("other", "q", R"({"app":"db"})", "n1");
    Del("other", "q");
    const store::Revision last = Put("default", "fence", R"({"app":"web"})", "n1");
    Sync(last);
    for (size_t i = 0; i < filters.size(); ++i) {
      SCOPED_TRACE(Cat("filter ", i));
      ASSERT_TRUE(live[i]->WaitForEvents(1));
      std::vector<Seen> want = live[i]->events();
      ASSERT_FALSE(want.empty());
      auto replay = std::make_shared<RecordingSink>();
      auto h = Watch(base_, filters[i], replay);
      ASSERT_NE(h, nullptr);
      std::vector<Seen> got = replay->events();
      ASSERT_EQ(got, want);
      for (size_t e = 0; e < got.size(); ++e) EXPECT_EQ(got[e].json, want[e].json) << got[e];
    }
  }
}

TEST_F(WatchCacheTest, NodeNameIndexAnswersExactlyAsAFullScan) {
  // Pods spread over namespaces and nodes, then moved, unbound, deleted and re-created, so the
  // index has seen every kind of change.
  store::Revision last = 0;
  for (int i = 0; i < 60; ++i) {
    const std::string ns = Cat("ns-", i % 3);
    const std::string node = i % 7 == 0 ? "" : Cat("n", i % 5);
    last = Put(ns, Cat("p", i), Cat(R"({"i":")", i % 2, R"("})"), node);
  }
  for (int i = 0; i < 60; i += 4) {
    const std::string ns = Cat("ns-", i % 3);
    const std::string name = Cat("p", i);
    switch (i % 3) {
      case 0:
        last = Put(ns, name, "{}", Cat("n", (i + 1) % 5));
        break;  // moved
      case 1:
        last = Put(ns, name, "{}", "");
        break;  // unbound
      default:
        Del(ns, name);
        last = Put(ns, name, "{}", "n4");  // re-created elsewhere
    }
  }
  last = Del("ns-1", "p1");
  Sync(last);

  std::vector<std::string> selectors = {"spec.nodeName=", "spec.nodeName=missing",
                                        "spec.nodeName=n1,status.phase!=Failed",
                                        "spec.nodeName=n2,metadata.name=p2"};
  for (int n = 0; n < 5; ++n) selectors.push_back(Cat("spec.nodeName=n", n));
  for (const std::string& fields : selectors) {
    for (std::string_view ns : {"", "ns-1"}) {
      for (std::string_view labels : {"", "i=1"}) {
        SCOPED_TRACE(fields + " in '" + std::string(ns) + "' labels " + std::string(labels));
        ObjectFilter filter = Filter(ns, labels, fields);
        // The full scan: everything in the namespace, filtered here.
        std::vector<std::string> want;
        for (const ObjectPtr& obj : cache_->List(Filter(ns)).items) {
          if (filter.Matches(*obj)) want.push_back(obj->key);
        }
        std::vector<std::string> got;
        for (const ObjectPtr& obj : cache_->List(filter).items) got.push_back(obj->key);
        EXPECT_EQ(got, want);
        // The same in pages of 3.
        std::vector<std::string> paged;
        std::string after;
        for (int page = 0; page < 100; ++page) {
          WatchCache::ListResult r = cache_->List(filter, after, 3);
          for (const ObjectPtr& obj : r.items) paged.push_back(obj->key);
          if (r.last_key.empty()) break;
          after = r.last_key;
        }
        EXPECT_EQ(paged, want);
      }
    }
  }
}

TEST_F(WatchCacheTest, SinkThatReturnsFalseIsRemoved) {
  // Live: the first event is taken, then the sink says stop.
  auto quitter = std::make_shared<RecordingSink>(1);
  auto keeper = std::make_shared<RecordingSink>();
  auto hq = Watch(base_, Filter(), quitter);
  auto hk = Watch(base_, Filter(), keeper);
  Put("default", "a");
  Put("default", "b");
  Put("default", "c");
  ASSERT_TRUE(keeper->WaitForEvents(3));
  EXPECT_EQ(quitter->count(), 1u);
  EXPECT_FALSE(quitter->ended()) << "a sink that ended its own watch is not told again";

  // During the rv=0 replay and during a log replay.
  auto replay_quitter = std::make_shared<RecordingSink>(2);
  auto hr = Watch(0, Filter(), replay_quitter);
  EXPECT_EQ(replay_quitter->count(), 2u);
  auto log_quitter = std::make_shared<RecordingSink>(1);
  auto hl = Watch(base_, Filter(), log_quitter);
  EXPECT_EQ(log_quitter->count(), 1u);
  const store::Revision fence = Put("default", "d");
  ASSERT_TRUE(keeper->WaitForEvents(4));
  Sync(fence);
  EXPECT_EQ(quitter->count(), 1u);
  EXPECT_EQ(replay_quitter->count(), 2u);
  EXPECT_EQ(log_quitter->count(), 1u);
  // Destroying the handles of removed watchers is harmless, before or after the cache.
  hq.reset();
  hr.reset();
}

TEST_F(WatchCacheTest, DestroyingTheHandleEndsTheWatchAndStopEndsTheRest) {
  auto gone = std::make_shared<RecordingSink>();
  auto stays = std::make_shared<RecordingSink>();
  auto hg = Watch(base_, Filter(), gone);
  auto hs = Watch(base_, Filter(), stays);
  Put("default", "a");
  ASSERT_TRUE(gone->WaitForEvents(1));
  hg.reset();
  const store::Revision r = Put("default", "b");
  ASSERT_TRUE(stays->WaitForEvents(2));
  Sync(r);
  EXPECT_EQ(gone->count(), 1u);
  cache_->Stop();
  ASSERT_TRUE(stays->ended());
  EXPECT_EQ(stays->ended()->code(), StatusCode::kUnavailable);
  EXPECT_FALSE(gone->ended());
  // After Stop a watch cannot start.
  auto late = std::make_shared<RecordingSink>();
  EXPECT_FALSE(cache_->StartWatch(0, Filter(), late));
}

TEST_F(WatchCacheTest, ConcurrentWritersAndWatchersSeeEveryEventInRevisionOrder) {
  constexpr int kWriters = 8;
  constexpr int kWritesPerWriter = 500;
  constexpr int kPodsPerWriter = 50;
  constexpr int kWatchers = 20;

  // Half the watchers start before the writes (from the current revision), half while they run.
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  std::vector<store::Revision> from;
  std::vector<std::unique_ptr<WatchCache::WatchHandle>> handles;
  for (int i = 0; i < kWatchers / 2; ++i) {
    sinks.push_back(std::make_shared<RecordingSink>(-1, false));
    from.push_back(base_);
    handles.push_back(Watch(base_, Filter(), sinks.back()));
  }

  std::vector<std::vector<store::Revision>> revisions(kWriters);
  std::atomic<int> writes{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < kWriters; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kWritesPerWriter; ++i) {
        const std::string name = Cat("w", t, "-", i % kPodsPerWriter);
        const std::string key = Key("default", name);
        auto bytes = store::MakeBytes(
            StoredPod("default", name, Cat(R"({"round":")", i / kPodsPerWriter, R"("})")));
        Result<store::WriteResult> r =
            i < kPodsPerWriter ? store_->Create(key, bytes) : store_->Update(key, bytes, 0);
        if (!r) {
          ADD_FAILURE() << key << ": " << r.error().ToString();
          return;
        }
        revisions[t].push_back(r->revision);
        ++writes;
      }
    });
  }
  // The late watchers start at whatever revision the store has reached.
  for (int i = 0; i < kWatchers / 2; ++i) {
    const int target = (i + 1) * kWriters * kWritesPerWriter / (kWatchers / 2 + 2);
    while (writes.load() < target) std::this_thread::yield();
    const store::Revision rv = store_->CurrentRevision();
    sinks.push_back(std::make_shared<RecordingSink>(-1, false));
    from.push_back(rv);
    handles.push_back(Watch(rv, Filter(), sinks.back()));
  }
  for (std::thread& w : writers) w.join();

  std::vector<store::Revision> all;
  for (const auto& r : revisions) all.insert(all.end(), r.begin(), r.end());
  ASSERT_EQ(all.size(), static_cast<size_t>(kWriters * kWritesPerWriter));
  std::sort(all.begin(), all.end());
  for (size_t w = 0; w < sinks.size(); ++w) {
    SCOPED_TRACE(Cat("watcher ", w, " from ", from[w]));
    std::vector<store::Revision> want;
    for (store::Revision r : all) {
      if (r > from[w]) want.push_back(r);
    }
    ASSERT_TRUE(sinks[w]->WaitForEvents(want.size(), std::chrono::seconds(120)))
        << sinks[w]->count() << " of " << want.size();
    std::vector<Seen> events = sinks[w]->events();
    std::vector<store::Revision> got;
    std::set<std::string> keys_seen;
    for (const Seen& e : events) {
      got.push_back(e.revision);
      // From before the writes, each pod's first event is its ADDED.
      if (from[w] == base_) {
        const bool first = keys_seen.insert(e.key).second;
        EXPECT_EQ(e.type, first ? T::kAdded : T::kModified) << e;
      }
    }
    EXPECT_TRUE(got == want) << "every write once, in revision order: got " << got.size()
                             << " events, want " << want.size();
  }
}

TEST(RegistryWriteTest, EachVersionOfAnObjectIsOneBufferSharedByStoreCacheAndResponse) {
  // The store stamps the resourceVersion in at commit (object.h), so the bytes a write answers
  // with are those the store keeps and the watch cache serves: no second copy per object.
  std::unique_ptr<store::Store> store = store::NewMemoryStore();
  Registry registry(store.get(), Registry::Options{});
  ASSERT_TRUE(registry.Start().ok());
  const ResourceInfo& pods = Info(Resource::kPods);
  auto await = [&](auto write) {
    std::promise<store::Bytes> written;
    write([&](ApiResult<store::Bytes> r) {
      EXPECT_TRUE(r) << r.error().message;
      written.set_value(r ? *r : nullptr);
    });
    std::future<store::Bytes> f = written.get_future();
    EXPECT_EQ(f.wait_for(kTimeout), std::future_status::ready);
    store::Bytes bytes = f.get();
    std::promise<void> synced;
    registry.Sync(Resource::kPods, [&] { synced.set_value(); });
    EXPECT_EQ(synced.get_future().wait_for(kTimeout), std::future_status::ready);
    return bytes;
  };
  store::Bytes created = await([&](WriteCallback done) {
    Result<rapidjson::Document> doc = api::ParseJson(
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"one","resourceVersion":"9"},)"
        R"("spec":{"containers":[{"name":"c","image":"i"}]}})");
    ASSERT_TRUE(doc);
    registry.Create(pods, "default", std::move(*doc), {}, std::move(done));
  });
  store::Bytes patched = await([&](WriteCallback done) {
    registry.Patch(pods, "default", "one", Subresource::kNone, api::PatchType::kMergePatch,
                   R"({"metadata":{"labels":{"a":"b"}}})", {}, std::move(done));
  });
  ASSERT_NE(created, nullptr);
  ASSERT_NE(patched, nullptr);
  for (const store::Bytes& bytes : {created, patched}) {
    // Exactly one resourceVersion, first in metadata: the client's "9" was dropped.
    EXPECT_EQ(bytes->find("\"resourceVersion\""), bytes->rfind("\"resourceVersion\""));
    EXPECT_NE(bytes->find("\"metadata\":{\"resourceVersion\":\""), std::string::npos) << *bytes;
  }
  ObjectPtr cached = registry.cache(Resource::kPods).Get("default", "one");
  ASSERT_NE(cached, nullptr);
  EXPECT_EQ(RvInJson(*patched), std::to_string(cached->revision));
  EXPECT_EQ(cached->json.get(), patched.get());
  Result<store::KeyValue> kv = store->Get(cached->key);
  ASSERT_TRUE(kv);
  EXPECT_EQ(kv->value.get(), patched.get());
  registry.Stop();
}

TEST(RegistryReadYourWritesTest, AfterAWriteCallbackSyncThenGetReturnsIt) {
  std::unique_ptr<store::Store> store = store::NewMemoryStore();
  Registry registry(store.get(), Registry::Options{});
  ASSERT_TRUE(registry.Start().ok());
  const ResourceInfo& pods = Info(Resource::kPods);

  // Each check: the write's callback calls Sync, whose callback reads the cache.
  auto check = [&](auto write, std::function<bool(const ObjectPtr&, const std::string&)> ok) {
    auto result = std::make_shared<std::promise<std::string>>();
    std::future<std::string> f = result->get_future();
    write([&registry, result, ok](ApiResult<store::Bytes> r) {
      if (!r) return result->set_value("write failed: " + r.error().message);
      const std::string rv = RvInJson(**r);
      const std::string name = [&] {
        rapidjson::Document d;
        d.Parse((*r)->c_str());
        return std::string(d["metadata"]["name"].GetString());
      }();
      registry.Sync(Resource::kPods, [&registry, result, ok, rv, name] {
        ObjectPtr obj = registry.cache(Resource::kPods).Get("default", name);
        result->set_value(ok(obj, rv) ? "" : "cache does not show the write of " + name + "@" + rv);
      });
    });
    ASSERT_EQ(f.wait_for(kTimeout), std::future_status::ready);
    EXPECT_EQ(f.get(), "");
  };
  auto is_at = [](const ObjectPtr& obj, const std::string& rv) {
    return obj != nullptr && std::to_string(obj->revision) == rv && RvInJson(*obj->json) == rv;
  };
  for (int i = 0; i < 50; ++i) {
    const std::string name = Cat("ryw-", i);
    check(
        [&](WriteCallback done) {
          Result<rapidjson::Document> doc =
              api::ParseJson(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                             R"("},"spec":{"containers":[{"name":"c","image":"i"}]}})");
          ASSERT_TRUE(doc);
          registry.Create(pods, "default", std::move(*doc), {}, std::move(done));
        },
        is_at);
    check(
        [&](WriteCallback done) {
          registry.Patch(pods, "default", name, Subresource::kNone, api::PatchType::kMergePatch,
                         R"({"metadata":{"labels":{"step":"2"}}})", {}, std::move(done));
        },
        [&](const ObjectPtr& obj, const std::string& rv) {
          return is_at(obj, rv) && obj->meta().labels.size() == 1;
        });
    if (i % 2 == 0) {
      check(
          [&](WriteCallback done) { registry.Delete(pods, "default", name, {}, std::move(done)); },
          [](const ObjectPtr& obj, const std::string&) { return obj == nullptr; });
    }
  }
  EXPECT_EQ(registry.cache(Resource::kPods).size(), 25u);
}

// --- Watches over HTTP -------------------------------------------------------------------------

// A client for one watch: sends the request, then reads the chunked stream with a deadline.
class WatchClient {
 public:
  WatchClient(int port, const std::string& target, std::string_view accept = "application/json")
      : conn_(port) {
    if (!conn_.Send("GET " + target + " HTTP/1.1\r\nHost: t\r\nAccept: " + std::string(accept) +
                    "\r\n\r\n")) {
      return;
    }
    if (std::optional<testing::HttpResponse> r = conn_.ReadHead()) head_ = std::move(r->head);
  }

  const std::string& head() const { return head_; }

  // The next event line (without "\n"); nullopt when the stream has ended (the final chunk, EOF)
  // or the deadline passed — see ended().
  std::optional<std::string> NextLine(Clock::time_point deadline) {
    for (;;) {
      if (size_t nl = lines_.find('\n'); nl != std::string::npos) {
        std::string line = lines_.substr(0, nl);
        lines_.erase(0, nl + 1);
        return line;
      }
      if (ended_) return std::nullopt;
      std::optional<std::string> chunk = conn_.ReadChunk(deadline);
      if (!chunk) return std::nullopt;
      if (chunk->empty()) ended_ = true;
      lines_.append(*chunk);
    }
  }
  bool ended() const { return ended_; }

 private:
  testing::TestConnection conn_;
  std::string head_;
  std::string lines_;
  bool ended_ = false;
};

class HttpWatchTest : public ::testing::Test {
 protected:
  // `prior_writes` writes outside the API's keys happen before the server starts, so its caches
  // start at that revision.
  void Start(int prior_writes = 0) {
    store_ = store::NewMemoryStore();
    for (int i = 0; i < prior_writes; ++i) {
      ASSERT_TRUE(store_->Create(Cat("/registry/other/", i), store::MakeBytes("{}")));
    }
    registry_ = std::make_unique<Registry>(store_.get(), Registry::Options{});
    ASSERT_TRUE(registry_->Start().ok());
    api_ = std::make_unique<ApiServer>(registry_.get());
    HttpServerOptions options;
    options.listen = "127.0.0.1:0";
    auto server = StartHttpServer(options, api_.get());
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  void CreatePod(const std::string& name, std::string_view labels = "{}") {
    auto done = std::make_shared<std::promise<std::string>>();
    std::future<std::string> f = done->get_future();
    Result<rapidjson::Document> doc = api::ParseJson(
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","labels":)" +
        std::string(labels) + R"(},"spec":{"containers":[{"name":"c","image":"i"}]}})");
    ASSERT_TRUE(doc);
    registry_->Create(
        Info(Resource::kPods), "default", std::move(*doc), {},
        [done](ApiResult<store::Bytes> r) { done->set_value(r ? "" : r.error().message); });
    ASSERT_EQ(f.wait_for(kTimeout), std::future_status::ready);
    EXPECT_EQ(f.get(), "");
  }

  int port() const { return server_->port(); }

  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Registry> registry_;
  std::unique_ptr<ApiServer> api_;
  std::unique_ptr<HttpServer> server_;
};

rapidjson::Document ParseLine(const std::string& line) {
  rapidjson::Document d;
  d.Parse(line.c_str());
  return d;
}

std::string At(const rapidjson::Document& d, const char* pointer) {
  const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(d);
  return v != nullptr && v->IsString() ? v->GetString() : "<absent>";
}

TEST_F(HttpWatchTest, WatchWithTimeoutSecondsEndsOnItsOwn) {
  Start();
  CreatePod("a");
  const auto start = Clock::now();
  WatchClient w(port(), "/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1");
  EXPECT_NE(w.head().find("HTTP/1.1 200"), std::string::npos) << w.head();
  EXPECT_NE(w.head().find("Transfer-Encoding: chunked"), std::string::npos) << w.head();
  const auto deadline = start + std::chrono::seconds(10);
  std::optional<std::string> line = w.NextLine(deadline);
  ASSERT_TRUE(line) << "the synthetic ADDED of resourceVersion 0";
  rapidjson::Document added = ParseLine(*line);
  EXPECT_EQ(At(added, "/type"), "ADDED");
  EXPECT_EQ(At(added, "/object/metadata/name"), "a");
  // Then nothing, until the server ends the stream with the final chunk.
  EXPECT_FALSE(w.NextLine(deadline));
  EXPECT_TRUE(w.ended()) << "the stream did not end within 10 s of a 1 s timeout";
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(900)) << "ended before its timeout";
}

TEST_F(HttpWatchTest, WatchStreamsLiveEventsAsJsonLines) {
  Start();
  CreatePod("before", R"({"app":"web"})");
  WatchClient w(
      port(),
      "/api/v1/namespaces/default/pods?watch=true&labelSelector=app%3Dweb&timeoutSeconds=30");
  const auto deadline = Clock::now() + kTimeout;
  std::optional<std::string> first = w.NextLine(deadline);
  ASSERT_TRUE(first);
  EXPECT_EQ(At(ParseLine(*first), "/object/metadata/name"), "before");
  CreatePod("other", R"({"app":"db"})");
  CreatePod("after", R"({"app":"web"})");
  std::optional<std::string> second = w.NextLine(deadline);
  ASSERT_TRUE(second);
  rapidjson::Document d = ParseLine(*second);
  EXPECT_EQ(At(d, "/type"), "ADDED");
  EXPECT_EQ(At(d, "/object/kind"), "Pod");
  EXPECT_EQ(At(d, "/object/metadata/name"), "after") << "the non-matching pod is not sent";
  EXPECT_EQ(At(d, "/object/metadata/resourceVersion"), std::to_string(store_->CurrentRevision()));
}

TEST_F(HttpWatchTest, ClientLeavingATimedWatchEarlyLeavesTimeoutsWorking) {
  // `kubectl get -w` interrupted with Ctrl-C: the client goes before its watch's timeout.
  Start();
  {
    WatchClient early(port(), "/api/v1/pods?watch=true&timeoutSeconds=300");
    ASSERT_NE(early.head().find("HTTP/1.1 200"), std::string::npos) << early.head();
  }  // closed here; the server cancels the 300 s timer
  // A few round trips, so the server has seen the disconnect before the next timer is set.
  for (int i = 0; i < 3; ++i) {
    WatchClient list(port(), "/api/v1/namespaces?limit=1");
    EXPECT_NE(list.head().find("HTTP/1.1 200"), std::string::npos);
  }
  const auto start = Clock::now();
  WatchClient w(port(), "/api/v1/pods?watch=true&timeoutSeconds=1");
  EXPECT_FALSE(w.NextLine(start + std::chrono::seconds(10)));
  EXPECT_TRUE(w.ended()) << "the 1 s watch did not end";
}

TEST_F(HttpWatchTest, WatchFromACompactedRevisionGetsAnExpiredErrorEvent) {
  Start(/*prior_writes=*/10);  // the pods cache starts at revision 10
  const std::string want =
      R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},)"
      R"j("status":"Failure","message":"too old resource version: 3 (10)","reason":"Expired",)j"
      R"("code":410}})";
  for (std::string_view accept :
       {std::string_view("application/json"),
        std::string_view("application/json;as=Table;v=v1;g=meta.k8s.io,application/json")}) {
    SCOPED_TRACE(accept);
    WatchClient w(port(), "/api/v1/pods?watch=true&resourceVersion=3", accept);
    EXPECT_NE(w.head().find("HTTP/1.1 200"), std::string::npos) << w.head();
    const auto deadline = Clock::now() + kTimeout;
    std::optional<std::string> line = w.NextLine(deadline);
    ASSERT_TRUE(line);
    EXPECT_EQ(*line, want);
    // The stream then ends; an informer relists.
    EXPECT_FALSE(w.NextLine(deadline));
    EXPECT_TRUE(w.ended());
  }
  // From the cache's start revision the watch is fine.
  WatchClient ok(port(), "/api/v1/pods?watch=true&resourceVersion=10&timeoutSeconds=1");
  EXPECT_FALSE(ok.NextLine(Clock::now() + kTimeout)) << "no events, no error";
  EXPECT_TRUE(ok.ended());
}

}  // namespace
}  // namespace kt::server
