#include "client/informer.h"

#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <thread>

#include "api/codec.h"
#include "client/client.h"
#include "server/registry.h"
#include "store/store.h"

namespace kt::client {
namespace {

using server::Resource;
using server::WatchEventType;

ObjectPtr PodObject(std::string_view name, std::string_view node, store::Revision rev) {
  const server::ResourceInfo& info = server::Info(Resource::kPods);
  std::string json = R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + std::string(name) +
                     R"(","namespace":"default","uid":"u-)" + std::string(name) +
                     R"("},"spec":{"nodeName":")" + std::string(node) + R"("}})";
  auto obj = server::MakeStoredObject(info, server::ObjectKey(info, "default", name),
                                      store::MakeBytes(json), rev, rev);
  return *obj;
}

// A source the test drives: it lists what it is told and hands the watch sink to the test.
class FakeSource : public ListerWatcher {
 public:
  const server::ResourceInfo& Info() const override { return server::Info(Resource::kPods); }
  Result<ListResult> List() override {
    std::lock_guard<std::mutex> lock(mu);
    ++lists;
    return ListResult{items, revision};
  }
  Result<std::unique_ptr<server::WatchCache::WatchHandle>> Watch(
      store::Revision from, std::shared_ptr<server::WatchSink> s) override {
    std::lock_guard<std::mutex> lock(mu);
    watched_from = from;
    sink = std::move(s);
    return std::unique_ptr<server::WatchCache::WatchHandle>(new server::WatchCache::WatchHandle());
  }

  std::mutex mu;
  std::vector<ObjectPtr> items;
  store::Revision revision = 0;
  store::Revision watched_from = -1;
  std::shared_ptr<server::WatchSink> sink;
  int lists = 0;
};

struct Recorded {
  std::vector<std::string> log;
  EventHandler Handler() {
    return EventHandler{
        .on_add =
            [this](const ObjectPtr& o, bool initial) {
              log.push_back((initial ? "add* " : "add ") + o->meta().name);
            },
        .on_update =
            [this](const ObjectPtr& a, const ObjectPtr& b) {
              log.push_back("update " + a->meta().name + " " + std::to_string(a->revision) + "->" +
                            std::to_string(b->revision));
            },
        .on_delete = [this](const ObjectPtr& o) { log.push_back("delete " + o->meta().name); },
    };
  }
};

TEST(InformerTest, ListsThenWatchesFromTheListRevision) {
  auto source = std::make_unique<FakeSource>();
  FakeSource* src = source.get();
  src->items = {PodObject("a", "n1", 3), PodObject("b", "n2", 5)};
  src->revision = 7;
  SimulatedClock clock;
  Informer inf(std::move(source), Informer::Options::Manual(&clock, "pods"));
  Recorded rec;
  inf.AddEventHandler(rec.Handler());
  inf.AddIndexer("node", [](const StoredObject& o) {
    return std::vector<std::string>{o.As<api::Pod>()->spec.node_name};
  });
  inf.Start();
  EXPECT_FALSE(inf.HasSynced());
  inf.DispatchPending();
  EXPECT_TRUE(inf.HasSynced());
  EXPECT_EQ(src->watched_from, 7);
  EXPECT_EQ(rec.log, (std::vector<std::string>{"add* a", "add* b"}));

  src->sink->OnEvent(WatchEventType::kModified, PodObject("a", "n2", 8));
  src->sink->OnEvent(WatchEventType::kAdded, PodObject("c", "n2", 9));
  src->sink->OnEvent(WatchEventType::kDeleted, PodObject("b", "n2", 10));
  EXPECT_EQ(rec.log.size(), 2u);  // nothing until dispatched
  inf.DispatchPending();
  EXPECT_EQ(rec.log,
            (std::vector<std::string>{"add* a", "add* b", "update a 3->8", "add c", "delete b"}));
  EXPECT_EQ(inf.size(), 2u);
  EXPECT_EQ(inf.Get("default", "a")->revision, 8);
  EXPECT_EQ(inf.Get("default", "b"), nullptr);
  EXPECT_EQ(inf.ByIndex("node", "n2").size(), 2u);
  EXPECT_EQ(inf.ByIndex("node", "n1").size(), 0u);
  EXPECT_EQ(inf.LastSyncRevision(), 10);
}

TEST(InformerTest, RelistsOnGoneAndReportsWhatChangedMeanwhile) {
  auto source = std::make_unique<FakeSource>();
  FakeSource* src = source.get();
  src->items = {PodObject("a", "n1", 3), PodObject("b", "n1", 4)};
  src->revision = 4;
  SimulatedClock clock;
  Informer inf(std::move(source), Informer::Options::Manual(&clock, "pods"));
  Recorded rec;
  inf.AddEventHandler(rec.Handler());
  inf.Start();
  inf.DispatchPending();
  rec.log.clear();
  // While the watch was lost: a changed, b deleted, c created.
  src->items = {PodObject("a", "n1", 20), PodObject("c", "n1", 21)};
  src->revision = 22;
  src->sink->OnEnd(Status(StatusCode::kGone, "too old resource version"));
  inf.DispatchPending();
  EXPECT_EQ(src->lists, 2);
  EXPECT_EQ(src->watched_from, 22);
  EXPECT_EQ(rec.log, (std::vector<std::string>{"update a 3->20", "add c", "delete b"}));
}

TEST(InformerTest, RewatchesAfterABackoffWhenTheWatchFails) {
  auto source = std::make_unique<FakeSource>();
  FakeSource* src = source.get();
  src->revision = 5;
  SimulatedClock clock;
  Informer inf(std::move(source), Informer::Options::Manual(&clock, "pods"));
  inf.Start();
  inf.DispatchPending();
  src->sink->OnEvent(WatchEventType::kAdded, PodObject("a", "n1", 6));
  src->sink->OnEnd(Status(StatusCode::kUnavailable, "connection reset"));
  inf.DispatchPending();
  EXPECT_EQ(src->lists, 1);
  clock.Advance(std::chrono::milliseconds(800));  // client-go's first backoff
  inf.DispatchPending();
  EXPECT_EQ(src->lists, 1);         // no relist
  EXPECT_EQ(src->watched_from, 6);  // resumes after the last event seen
}

// Changes the owner need not hear of at once (Options::wake_for) do not wake it: they wait, in
// order, for the next change that does, for lazy_delay, or for kLazyLimit of them.
TEST(InformerTest, ChangesThatNeedNoPromptDispatchWaitWithoutWakingTheOwner) {
  auto source = std::make_unique<FakeSource>();
  FakeSource* src = source.get();
  src->revision = 1;
  SimulatedClock clock;
  Informer::Options options = Informer::Options::Manual(&clock, "pods");
  int wakes = 0;
  options.on_pending = [&] { ++wakes; };
  options.wake_for = [](WatchEventType, const StoredObject& o) {
    return !o.As<api::Pod>()->spec.node_name.empty();  // bound pods only
  };
  options.lazy_delay = std::chrono::milliseconds(100);
  Informer inf(std::move(source), options);
  Recorded rec;
  inf.AddEventHandler(rec.Handler());
  inf.Start();
  inf.DispatchPending();
  ASSERT_TRUE(inf.HasSynced());
  wakes = 0;

  // Unbound pods: queued, the owner not woken.
  src->sink->OnEvent(WatchEventType::kAdded, PodObject("a", "", 2));
  src->sink->OnEvent(WatchEventType::kAdded, PodObject("b", "", 3));
  EXPECT_EQ(wakes, 0);
  // A bound one wakes it once; the dispatch delivers all three in order.
  src->sink->OnEvent(WatchEventType::kModified, PodObject("a", "n1", 4));
  src->sink->OnEvent(WatchEventType::kModified, PodObject("b", "n1", 5));
  EXPECT_EQ(wakes, 1);
  inf.DispatchPending();
  EXPECT_EQ(rec.log,
            (std::vector<std::string>{"add a", "add b", "update a 2->4", "update b 3->5"}));

  // Alone, a change that needs no prompt dispatch is flushed after lazy_delay.
  rec.log.clear();
  src->sink->OnEvent(WatchEventType::kAdded, PodObject("c", "", 6));
  clock.Advance(std::chrono::milliseconds(99));
  EXPECT_EQ(wakes, 1);
  clock.Advance(std::chrono::milliseconds(1));
  EXPECT_EQ(wakes, 2);
  inf.DispatchPending();
  EXPECT_EQ(rec.log, (std::vector<std::string>{"add c"}));
  clock.Advance(std::chrono::seconds(1));
  EXPECT_EQ(wakes, 2);  // nothing waited: no further wake-up

  // Or once kLazyLimit of them wait.
  for (size_t i = 0; i < Informer::kLazyLimit; ++i) {
    EXPECT_EQ(wakes, 2) << i;
    std::string name = "p";
    name.append(std::to_string(i));
    src->sink->OnEvent(WatchEventType::kAdded, PodObject(name, "", 7 + static_cast<int64_t>(i)));
  }
  EXPECT_EQ(wakes, 3);
  EXPECT_EQ(inf.DispatchPending(), Informer::kLazyLimit);
  EXPECT_EQ(inf.size(), 3 + Informer::kLazyLimit);
}

// With a dispatch thread of its own, the informer likewise waits for a change that needs it, or
// for lazy_delay.
TEST(InformerTest, AThreadedInformerDispatchesLazyChangesAfterTheDelay) {
  auto source = std::make_unique<FakeSource>();
  FakeSource* src = source.get();
  src->revision = 1;
  auto clock = NewRealClock();
  Informer::Options options = Informer::Options::Threaded(clock.get(), "pods");
  options.wake_for = [](WatchEventType, const StoredObject&) { return false; };
  options.lazy_delay = std::chrono::milliseconds(20);
  Informer inf(std::move(source), options);
  inf.Start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  ASSERT_TRUE(WaitForCacheSync({&inf}, deadline));
  src->sink->OnEvent(WatchEventType::kAdded, PodObject("a", "", 2));
  while (inf.size() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_EQ(inf.size(), 1u);
  inf.Stop();
}

// The informer over a real watch cache: a write through the registry reaches the handlers with
// the object's stored bytes, not a copy.
TEST(InformerTest, InProcessInformerSharesTheCachedObjects) {
  std::unique_ptr<store::Store> store = store::NewMemoryStore();
  server::Registry registry(store.get(), {});
  ASSERT_TRUE(registry.Start().ok());
  std::unique_ptr<Client> client = NewInProcessClient(&registry);
  SimulatedClock clock;
  Informer inf(NewCacheListerWatcher(&registry.cache(Resource::kNodes)),
               Informer::Options::Manual(&clock, "pods"));
  std::vector<ObjectPtr> added;
  EventHandler handler;
  handler.on_add = [&](const ObjectPtr& o, bool) { added.push_back(o); };
  inf.AddEventHandler(handler);
  inf.Start();
  ASSERT_TRUE(
      WaitForCacheSync({&inf}, std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  ASSERT_TRUE(client->CreateSync(Resource::kNodes, "", R"({"metadata":{"name":"n1"}})"));
  std::promise<void> synced;
  registry.Sync(Resource::kNodes, [&] { synced.set_value(); });
  synced.get_future().wait();
  inf.DispatchPending();
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0]->meta().name, "n1");
  EXPECT_EQ(added[0]->json, registry.cache(Resource::kNodes).Get("", "n1")->json);
  inf.Stop();
  registry.Stop();
}

}  // namespace
}  // namespace kt::client
