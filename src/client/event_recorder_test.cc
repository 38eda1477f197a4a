#include "client/event_recorder.h"

#include <gtest/gtest.h>

#include <mutex>

#include "api/codec.h"

namespace kt::client {
namespace {

// Records the writes a recorder makes; answers as a server would (404 for unknown patches).
class FakeClient : public Client {
 public:
  struct Call {
    std::string verb;  // create | patch
    std::string namespace_;
    std::string name;
    std::string body;
  };

  void Create(Resource, std::string ns, std::string body, WriteDone done) override {
    auto doc = api::ParseJson(body);
    std::string name = (*doc)["metadata"]["name"].GetString();
    {
      std::lock_guard<std::mutex> lock(mu);
      calls.push_back({"create", ns, name, body});
      if (!forget_creates) existing.push_back(name);
    }
    done(store::MakeBytes(body));
  }
  void Update(Resource, std::string, std::string, Subresource, std::string,
              WriteDone done) override {
    done(store::MakeBytes("{}"));
  }
  void Patch(Resource, std::string ns, std::string name, Subresource, api::PatchType,
             std::string patch, WriteDone done) override {
    bool found;
    {
      std::lock_guard<std::mutex> lock(mu);
      calls.push_back({"patch", ns, name, patch});
      found = std::find(existing.begin(), existing.end(), name) != existing.end();
    }
    if (!found) {
      server::ApiError e;
      e.code = 404;
      e.reason = "NotFound";
      return done(server::ApiErr(e));
    }
    done(store::MakeBytes("{}"));
  }
  void Delete(Resource, std::string, std::string, server::DeleteOptions, WriteDone done) override {
    done(store::MakeBytes("{}"));
  }
  void Get(Resource r, std::string, std::string name, GetDone done) override {
    done(server::ApiErr(server::NotFoundError(server::Info(r), name)));
  }
  void Bind(std::string, std::string, std::string, std::string, Done done) override { done({}); }

  std::mutex mu;
  std::vector<Call> calls;
  std::vector<std::string> existing;
  bool forget_creates = false;  // as if each created event were deleted at once
};

ObjectRef Pod(std::string name, std::string rv = "5") {
  ObjectRef r;
  r.kind = "Pod";
  r.api_version = "v1";
  r.namespace_ = "default";
  r.name = std::move(name);
  r.uid = "uid-1";
  r.resource_version = std::move(rv);
  return r;
}

// The scheduler's event for a pod that fits no node, repeated as a pod is retried.
void FailedScheduling(EventRecorder& r, const ObjectRef& pod) {
  r.Eventf(pod, nullptr, "Warning", "FailedScheduling", "Scheduling", "0/3 nodes");
}

api::Event Decode(const std::string& json) {
  auto doc = api::ParseJson(json);
  return *api::DecodeEvent(*doc);
}

TEST(EventsV1RecorderTest, FirstEventIsCreatedAsAnEventsV1EventStoredAsCoreV1) {
  FakeClient client;
  SimulatedClock clock;
  auto r = NewEventsV1Recorder(&client, &clock, "default-scheduler", "default-scheduler-host");
  r->Eventf(Pod("nginx"), nullptr, "Normal", "Scheduled", "Binding",
            "Successfully assigned default/nginx to node1");
  ASSERT_EQ(client.calls.size(), 1u);
  EXPECT_EQ(client.calls[0].verb, "create");
  EXPECT_EQ(client.calls[0].namespace_, "default");
  EXPECT_EQ(client.calls[0].name,
            EventName("nginx", SimulatedClock::kDefaultStart));  // "<name>.<hex ns>"
  api::Event e = Decode(client.calls[0].body);
  EXPECT_EQ(e.involved_object.name, "nginx");
  EXPECT_EQ(e.involved_object.kind, "Pod");
  EXPECT_EQ(e.reason, "Scheduled");
  EXPECT_EQ(e.action, "Binding");
  EXPECT_EQ(e.type, "Normal");
  EXPECT_EQ(e.reporting_component, "default-scheduler");
  EXPECT_EQ(e.reporting_instance, "default-scheduler-host");
  EXPECT_EQ(e.event_time, "2026-01-01T00:00:00.000000Z");
  EXPECT_EQ(e.series_count, 0);
  EXPECT_EQ(e.count, 0);  // core/v1's count stays unset for events.k8s.io/v1 events
  EXPECT_TRUE(e.first_timestamp.empty());
}

TEST(EventsV1RecorderTest, RepeatsBecomeASeriesPatchedOnceThenByTheFinishJob) {
  FakeClient client;
  SimulatedClock clock;
  auto r = NewEventsV1Recorder(&client, &clock, "default-scheduler", "i");
  const ObjectRef pod = Pod("p");
  FailedScheduling(*r, pod);
  clock.Advance(std::chrono::seconds(1));
  FailedScheduling(*r, pod);
  ASSERT_EQ(client.calls.size(), 2u);
  EXPECT_EQ(client.calls[1].verb, "patch");
  EXPECT_EQ(client.calls[1].name, client.calls[0].name);
  EXPECT_EQ(client.calls[1].body,
            R"({"series":{"count":2,"lastObservedTime":"2026-01-01T00:00:01.000000Z"}})");
  // Later repeats are counted locally...
  FailedScheduling(*r, pod);
  FailedScheduling(*r, pod);
  EXPECT_EQ(client.calls.size(), 2u);
  // ...and sent when the series has been quiet for 6 minutes (the 12-minute run of the job).
  clock.Advance(std::chrono::minutes(12));
  ASSERT_EQ(client.calls.size(), 3u);
  EXPECT_EQ(client.calls[2].body,
            R"({"series":{"count":4,"lastObservedTime":"2026-01-01T00:00:01.000000Z"}})");
  // Forgotten: the next occurrence is a new Event.
  FailedScheduling(*r, pod);
  ASSERT_EQ(client.calls.size(), 4u);
  EXPECT_EQ(client.calls[3].verb, "create");
  EXPECT_NE(client.calls[3].name, client.calls[0].name);
}

TEST(EventsV1RecorderTest, ASeriesWhoseEventIsGoneIsCreatedWithItsSeries) {
  FakeClient client;
  client.forget_creates = true;
  SimulatedClock clock;
  auto r = NewEventsV1Recorder(&client, &clock, "default-scheduler", "i");
  const ObjectRef pod = Pod("p");
  FailedScheduling(*r, pod);
  clock.Advance(std::chrono::seconds(2));
  FailedScheduling(*r, pod);
  ASSERT_EQ(client.calls.size(), 3u);
  EXPECT_EQ(client.calls[1].verb, "patch");
  EXPECT_EQ(client.calls[2].verb, "create");
  EXPECT_EQ(client.calls[2].name, client.calls[0].name);
  const api::Event first = Decode(client.calls[0].body);
  const api::Event again = Decode(client.calls[2].body);
  EXPECT_EQ(first.series_count, 0);
  EXPECT_EQ(again.series_count, 2);
  EXPECT_EQ(again.series_last_observed_time, "2026-01-01T00:00:02.000000Z");
  EXPECT_EQ(again.event_time, first.event_time);  // the first occurrence's, as created
  EXPECT_EQ(again.message, "0/3 nodes");

  // The finish job's final count takes the same way back.
  FailedScheduling(*r, pod);
  clock.Advance(std::chrono::minutes(12));
  ASSERT_EQ(client.calls.size(), 5u);
  EXPECT_EQ(client.calls[3].body,
            R"({"series":{"count":3,"lastObservedTime":"2026-01-01T00:00:02.000000Z"}})");
  EXPECT_EQ(Decode(client.calls[4].body).series_count, 3);
}

TEST(EventsV1RecorderTest, AChangedResourceVersionIsANewEvent) {
  // Upstream's key includes the whole regarding reference.
  FakeClient client;
  SimulatedClock clock;
  auto r = NewEventsV1Recorder(&client, &clock, "c", "i");
  r->Eventf(Pod("p", "5"), nullptr, "Warning", "FailedScheduling", "Scheduling", "m");
  r->Eventf(Pod("p", "6"), nullptr, "Warning", "FailedScheduling", "Scheduling", "m");
  ASSERT_EQ(client.calls.size(), 2u);
  EXPECT_EQ(client.calls[1].verb, "create");
  EXPECT_NE(client.calls[0].name, client.calls[1].name);  // unique even at the same instant
}

TEST(EventsV1RecorderTest, RelatedObjectAndInvalidTypes) {
  FakeClient client;
  SimulatedClock clock;
  auto r = NewEventsV1Recorder(&client, &clock, "c", "i");
  ObjectRef preemptor = Pod("big");
  r->Eventf(Pod("victim"), &preemptor, "Normal", "Preempted", "Preempting", "Preempted by pod x");
  r->Eventf(Pod("victim"), nullptr, "Fatal", "X", "Y", "dropped");
  ASSERT_EQ(client.calls.size(), 1u);
  api::Event e = Decode(client.calls[0].body);
  ASSERT_TRUE(e.related.has_value());
  EXPECT_EQ(e.related->name, "big");
}

TEST(CoreV1RecorderTest, IdenticalEventsRaiseTheCountWithAPatch) {
  FakeClient client;
  SimulatedClock clock;
  auto r = NewCoreV1Recorder(&client, &clock, "taint-eviction-controller", "");
  const ObjectRef pod = Pod("p");
  r->Eventf(pod, nullptr, "Normal", "TaintManagerEviction", "",
            "Marking for deletion Pod default/p");
  ASSERT_EQ(client.calls.size(), 1u);
  api::Event e = Decode(client.calls[0].body);
  EXPECT_EQ(e.count, 1);
  EXPECT_EQ(e.source_component, "taint-eviction-controller");
  EXPECT_EQ(e.first_timestamp, "2026-01-01T00:00:00Z");
  clock.Advance(std::chrono::seconds(3));
  r->Eventf(pod, nullptr, "Normal", "TaintManagerEviction", "",
            "Marking for deletion Pod default/p");
  ASSERT_EQ(client.calls.size(), 2u);
  EXPECT_EQ(client.calls[1].verb, "patch");
  EXPECT_EQ(client.calls[1].name, client.calls[0].name);
  EXPECT_EQ(
      client.calls[1].body,
      R"({"count":2,"lastTimestamp":"2026-01-01T00:00:03Z","message":"Marking for deletion Pod default/p"})");
}

TEST(CoreV1RecorderTest, ManyDifferentMessagesAreCombined) {
  FakeClient client;
  SimulatedClock clock;
  auto r = NewCoreV1Recorder(&client, &clock, "c", "h");
  const ObjectRef pod = Pod("p");
  for (int i = 0; i < 10; ++i) {
    r->Eventf(pod, nullptr, "Warning", "R", "", "message " + std::to_string(i));
  }
  ASSERT_EQ(client.calls.size(), 10u);
  api::Event tenth = Decode(client.calls[9].body);
  EXPECT_EQ(tenth.message, "(combined from similar events): message 9");
}

TEST(CoreV1RecorderTest, SpamFilterAllows25EventsPerObjectThenOneEveryFiveMinutes) {
  FakeClient client;
  SimulatedClock clock;
  auto r = NewCoreV1Recorder(&client, &clock, "c", "h");
  const ObjectRef pod = Pod("p");
  for (int i = 0; i < 30; ++i) r->Eventf(pod, nullptr, "Normal", "R", "", "same");
  EXPECT_EQ(client.calls.size(), 25u);
  clock.Advance(std::chrono::minutes(5));
  r->Eventf(pod, nullptr, "Normal", "R", "", "same");
  ASSERT_EQ(client.calls.size(), 26u);
  EXPECT_NE(client.calls[25].body.find("\"count\":31"), std::string::npos)
      << client.calls[25].body;  // filtered repeats still counted
}

}  // namespace
}  // namespace kt::client
