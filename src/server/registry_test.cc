// The registry's admission, namespace lifecycle and DaemonSet strategy, driven through its own
// entry points: the path the in-process client (scheduler, controllers) writes by. The HTTP
// answers are in api_server_test.cc.
//
// Namespace deletion is asynchronous (upstream's namespace controller): tests wait for it by
// polling the caches, after a Sync, until a deadline; nothing sleeps for a fixed time.

#include "server/registry.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>

#include "api/codec.h"
#include "store/store.h"

namespace kt::server {
namespace {

constexpr auto kDeadline = std::chrono::seconds(10);

rapidjson::Document Parse(std::string_view json) {
  Result<rapidjson::Document> d = api::ParseJson(json);
  EXPECT_TRUE(d) << json;
  return d ? std::move(*d) : rapidjson::Document();
}

std::string Str(const rapidjson::Value& doc, const char* pointer) {
  const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(doc);
  if (v == nullptr) return "<absent>";
  if (!v->IsString()) return "<not a string>";
  return v->GetString();
}

std::string PodJson(std::string_view name, std::string_view spec_extra = "") {
  std::string out = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")";
  out.append(name).append(R"("},"spec":{"containers":[{"name":"c","image":"nginx"}])");
  if (!spec_extra.empty()) out.append(",").append(spec_extra);
  return out + "}}";
}

// A DaemonSet `agent`; `selector` and `labels` are JSON, `strategy` the updateStrategy member.
std::string Agent(std::string_view selector = R"({"matchLabels":{"app":"agent"}})",
                  std::string_view labels = R"({"app":"agent"})", std::string_view strategy = "") {
  std::string out = R"({"apiVersion":"apps/v1","kind":"DaemonSet",)"
                    R"("metadata":{"name":"agent","namespace":"default"},"spec":{"selector":)";
  out.append(selector).append(R"(,"template":{"metadata":{"labels":)").append(labels);
  out.append(R"(},"spec":{"containers":[{"name":"c","image":"v1"}]}})");
  if (!strategy.empty()) out.append(",").append(strategy);
  return out + "}}";
}
const std::string kAgent = Agent();

// The JSON of the value at `pointer`, or "<absent>".
std::string Json(const rapidjson::Value& doc, const char* pointer) {
  const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(doc);
  return v == nullptr ? "<absent>" : api::EncodeJson(*v);
}

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = store::NewMemoryStore(); }

  void Start(Registry::Options options = {}) {
    registry_.reset();
    registry_ = std::make_unique<Registry>(store_.get(), std::move(options));
    ASSERT_TRUE(registry_->Start().ok());
  }

  static std::shared_ptr<const admission::Chain> Chain(admission::Config config) {
    Result<std::shared_ptr<const admission::Chain>> chain = admission::NewChain(config);
    EXPECT_TRUE(chain) << chain.error().message();
    return chain ? *chain : nullptr;
  }

  // The write's answer: the object as JSON, or the error.
  template <class Call>
  ApiResult<rapidjson::Document> Wait(Call call) {
    std::promise<ApiResult<store::Bytes>> p;
    call([&](ApiResult<store::Bytes> r) { p.set_value(std::move(r)); });
    ApiResult<store::Bytes> r = p.get_future().get();
    if (!r) return tl::unexpected<ApiError>(r.error());
    return Parse(**r);
  }

  ApiResult<rapidjson::Document> Create(Resource res, std::string ns, std::string_view json,
                                        WriteOptions options = {}) {
    return Wait([&](WriteCallback done) {
      registry_->Create(Info(res), ns, Parse(json), options, std::move(done));
    });
  }
  ApiResult<rapidjson::Document> Delete(Resource res, std::string ns, std::string name,
                                        DeleteOptions options = {}) {
    return Wait([&](WriteCallback done) {
      registry_->Delete(Info(res), ns, name, options, std::move(done));
    });
  }
  ApiResult<rapidjson::Document> Patch(Resource res, std::string ns, std::string name,
                                       api::PatchType type, std::string patch,
                                       Subresource sub = Subresource::kNone) {
    return Wait([&](WriteCallback done) {
      registry_->Patch(Info(res), ns, name, sub, type, patch, {}, std::move(done));
    });
  }
  ApiResult<rapidjson::Document> MergePatch(Resource res, std::string ns, std::string name,
                                            std::string patch,
                                            Subresource sub = Subresource::kNone) {
    return Patch(res, std::move(ns), std::move(name), api::PatchType::kMergePatch, std::move(patch),
                 sub);
  }
  // A merge patch of the DaemonSet `agent` in `default`.
  ApiResult<rapidjson::Document> DsPatch(std::string patch, Subresource sub = Subresource::kNone) {
    return MergePatch(Resource::kDaemonSets, "default", "agent", std::move(patch), sub);
  }
  ApiResult<void> Bind(std::string ns, std::string name) {
    std::promise<ApiResult<void>> p;
    registry_->Bind(ns, name, Parse(R"({"target":{"name":"node-1"}})"), {},
                    [&](ApiResult<void> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }
  ApiResult<void> Evict(std::string ns, std::string name) {
    std::promise<ApiResult<void>> p;
    registry_->Evict(ns, name, Parse(R"({"kind":"Eviction","apiVersion":"policy/v1"})"), {},
                     [&](ApiResult<void> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }

  // The object as the cache holds it once every acknowledged write is in, or null.
  ObjectPtr Get(Resource res, std::string_view ns, std::string_view name) {
    std::promise<void> synced;
    registry_->Sync(res, [&] { synced.set_value(); });
    synced.get_future().wait();
    return registry_->cache(res).Get(ns, name);
  }

  // Polls `done` until it holds or the deadline passes.
  template <class Pred>
  bool Eventually(Pred done) {
    const auto deadline = std::chrono::steady_clock::now() + kDeadline;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

  size_t CountIn(Resource res, std::string_view ns) {
    Get(res, ns, "");  // sync
    ObjectFilter filter;
    filter.namespace_ = std::string(ns);
    return registry_->cache(res).List(filter).items.size();
  }

  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Registry> registry_;
};

// `<resource> "<name>" is forbidden: ...` for a create into the Terminating namespace "held".
std::string Refused(std::string_view resource_and_name) {
  std::string out(resource_and_name);
  out +=
      " is forbidden: unable to create new content in namespace held because it is being "
      "terminated";
  return out;
}

// Every create gets a fresh random (version 4, variant 10) UUID in its canonical lowercase form.
TEST_F(RegistryTest, CreatesGetDistinctVersion4Uids) {
  Start();
  const std::regex uuid("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) {
    ApiResult<rapidjson::Document> pod =
        Create(Resource::kPods, "default", PodJson("uid-" + std::to_string(i)));
    ASSERT_TRUE(pod);
    const std::string uid = (*pod)["metadata"]["uid"].GetString();
    EXPECT_TRUE(std::regex_match(uid, uuid)) << uid;
    EXPECT_TRUE(seen.insert(uid).second) << uid;
  }
}

// A binding's typed view is derived from the pod's current one rather than decoded: it must be
// what decoding the stored bytes gives, whether the pod had a PodScheduled condition or not.
TEST_F(RegistryTest, ABindingsTypedViewIsWhatItsBytesDecodeTo) {
  Start();
  ASSERT_TRUE(Create(Resource::kPods, "default", PodJson("fresh")));
  ASSERT_TRUE(Create(Resource::kPods, "default", PodJson("waited")));
  ASSERT_TRUE(MergePatch(Resource::kPods, "default", "waited",
                         R"({"status":{"conditions":[{"type":"Ready","status":"False"},)"
                         R"({"type":"PodScheduled","status":"False","reason":"Unschedulable",)"
                         R"("message":"0/1 nodes are available","observedGeneration":1,)"
                         R"("lastProbeTime":null,"lastTransitionTime":"2026-01-01T00:00:00Z"}]}})",
                         Subresource::kStatus));
  for (const char* name : {"fresh", "waited"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(Bind("default", name));
    ObjectPtr bound = Get(Resource::kPods, "default", name);
    ASSERT_NE(bound, nullptr);
    ASSERT_NE(bound->As<api::Pod>(), nullptr);
    EXPECT_EQ(bound->As<api::Pod>()->spec.node_name, "node-1");
    Result<api::Pod> decoded = api::DecodePod(Parse(std::string_view(*bound->json)));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(api::EncodePod(*bound->As<api::Pod>()), api::EncodePod(*decoded));
  }
  // The condition was replaced in place: reason and message gone, observedGeneration kept.
  ObjectPtr waited = Get(Resource::kPods, "default", "waited");
  const api::Pod& pod = *waited->As<api::Pod>();
  ASSERT_EQ(pod.status.conditions.size(), 2u);
  EXPECT_EQ(pod.status.conditions[1].status, "True");
  EXPECT_EQ(pod.status.conditions[1].reason, "");
  EXPECT_EQ(pod.status.conditions[1].observed_generation, 1);
}

// A binding splices nodeName and its condition into the pod's stored bytes when it can, and
// writes through a document otherwise: either way the bytes are those the document path writes
// (the pod with spec.nodeName and the PodScheduled condition set, condition times completed).
TEST_F(RegistryTest, ABindingWritesTheBytesOfTheDocumentPath) {
  Start();
  ASSERT_TRUE(Create(Resource::kPods, "default", PodJson("fresh")));
  ASSERT_TRUE(Create(Resource::kPods, "default", PodJson("ready")));
  ASSERT_TRUE(MergePatch(Resource::kPods, "default", "ready",
                         R"({"status":{"conditions":[{"type":"Ready","status":"False"}]}})",
                         Subresource::kStatus));
  ASSERT_TRUE(Create(Resource::kPods, "default", PodJson("waited")));
  ASSERT_TRUE(
      MergePatch(Resource::kPods, "default", "waited",
                 R"({"status":{"conditions":[{"type":"PodScheduled","status":"False",)"
                 R"("reason":"Unschedulable","lastTransitionTime":"2026-01-01T00:00:00Z"}]}})",
                 Subresource::kStatus));
  for (const char* name : {"fresh", "ready", "waited"}) {
    SCOPED_TRACE(name);
    ObjectPtr before = Get(Resource::kPods, "default", name);
    ASSERT_NE(before, nullptr);
    ASSERT_TRUE(Bind("default", name));
    ObjectPtr bound = Get(Resource::kPods, "default", name);
    ASSERT_NE(bound, nullptr);
    rapidjson::Document doc = Parse(std::string_view(*before->json));
    doc["metadata"].EraseMember("resourceVersion");
    ASSERT_TRUE(api::SetNodeName(doc, "node-1").ok());
    api::Condition scheduled;
    scheduled.type = "PodScheduled";
    scheduled.status = "True";
    for (const api::Condition& c : bound->As<api::Pod>()->status.conditions) {
      if (c.type == "PodScheduled") scheduled.last_transition_time = c.last_transition_time;
    }
    ASSERT_TRUE(api::SetPodCondition(doc, scheduled).ok());
    for (auto& c : doc["status"]["conditions"].GetArray()) {
      for (const char* t : {"lastProbeTime", "lastTransitionTime"}) {
        if (!c.HasMember(t))
          c.AddMember(rapidjson::StringRef(t), rapidjson::Value(), doc.GetAllocator());
      }
    }
    EXPECT_EQ(*bound->json, WithResourceVersion(EncodeForStorage(doc), bound->revision));
  }
}

// An Event created typed (an in-process recorder's) is refused, defaulted and stored as the same
// Event sent as JSON: the typed view it keeps is what its bytes decode to, and both forms decode
// alike but for what each create sets (uid, creationTimestamp) and the name.
TEST_F(RegistryTest, ATypedEventIsCreatedAsTheSameEventSentAsJson) {
  Start();
  auto create_typed = [&](std::string ns, api::Event ev) {
    return Wait([&](WriteCallback done) {
      registry_->CreateEvent(std::move(ns), std::move(ev), {}, std::move(done));
    });
  };
  api::Event ev;
  ev.meta.name = "web.1";
  ev.meta.namespace_ = "default";
  ev.meta.labels.Set("a", "b");
  ev.involved_object.kind = "Pod";
  ev.involved_object.name = "web";
  ev.involved_object.namespace_ = "default";
  ev.reason = "Scheduled";
  ev.message = "Successfully assigned default/web to \"node-1\"";
  ev.type = "Normal";
  ev.event_time = "2026-01-01T00:00:00.000001Z";
  ev.action = "Binding";
  ev.reporting_component = "default-scheduler";
  ev.reporting_instance = "default-scheduler-x";
  ApiResult<rapidjson::Document> typed = create_typed("default", ev);
  ASSERT_TRUE(typed) << typed.error().message;
  api::Event json_ev = ev;
  json_ev.meta.name = "web.2";
  ASSERT_TRUE(Wait([&](WriteCallback done) {
    registry_->Create(Info(Resource::kEvents), "default", api::EventToDocument(json_ev), {},
                      std::move(done));
  }));
  ObjectPtr a = Get(Resource::kEvents, "default", "web.1");
  ObjectPtr b = Get(Resource::kEvents, "default", "web.2");
  ASSERT_TRUE(a && b);
  Result<api::Event> a_decoded = api::DecodeEvent(Parse(std::string_view(*a->json)));
  ASSERT_TRUE(a_decoded);
  EXPECT_EQ(api::EncodeEvent(*a->As<api::Event>()), api::EncodeEvent(*a_decoded));
  api::Event a_view = *a->As<api::Event>();
  api::Event b_view = *b->As<api::Event>();
  EXPECT_FALSE(a_view.meta.uid.empty());
  EXPECT_NE(a_view.meta.uid, b_view.meta.uid);
  EXPECT_FALSE(a_view.meta.creation_timestamp.empty());
  EXPECT_EQ(a_view.meta.generation, 1);
  EXPECT_EQ(a_view.meta.resource_version, std::to_string(a->revision));
  for (api::Event* v : {&a_view, &b_view}) {
    v->meta.name.clear();
    v->meta.uid.clear();
    v->meta.creation_timestamp.clear();
    v->meta.resource_version.clear();
  }
  EXPECT_EQ(api::EncodeEvent(a_view), api::EncodeEvent(b_view));

  // Refused as a JSON create is.
  api::Event elsewhere = ev;
  elsewhere.meta.name = "x";
  elsewhere.meta.namespace_ = "other";
  ApiResult<rapidjson::Document> mismatch = create_typed("default", elsewhere);
  ASSERT_FALSE(mismatch);
  EXPECT_EQ(mismatch.error().code, 400);
  EXPECT_EQ(
      mismatch.error().message,
      "the namespace of the provided object does not match the namespace sent on the request");
  elsewhere.meta.namespace_.clear();
  ApiResult<rapidjson::Document> missing = create_typed("nowhere", elsewhere);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, 404);
  EXPECT_EQ(missing.error().message, "namespaces \"nowhere\" not found");
  api::Event bad = ev;
  bad.meta.name = "Bad_Name";
  ApiResult<rapidjson::Document> invalid = create_typed("default", bad);
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.error().code, 422);
  ApiResult<rapidjson::Document> invalid_json = Wait([&](WriteCallback done) {
    registry_->Create(Info(Resource::kEvents), "default", api::EventToDocument(bad), {},
                      std::move(done));
  });
  ASSERT_FALSE(invalid_json);
  EXPECT_EQ(invalid.error().message, invalid_json.error().message);
  ApiResult<rapidjson::Document> again = create_typed("default", ev);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, 409);
  EXPECT_EQ(again.error().message, "events \"web.1\" already exists");
  // A generateName names it.
  api::Event generated = ev;
  generated.meta.name.clear();
  generated.meta.generate_name = "web.";
  ApiResult<rapidjson::Document> named = create_typed("default", generated);
  ASSERT_TRUE(named);
  EXPECT_EQ(std::string((*named)["metadata"]["name"].GetString()).size(), 9u);
}

// A patch naming another UID fails its precondition: 409 at once, not retried as a write that
// lost to a newer version (which would wait for some other write to the pods).
TEST_F(RegistryTest, APatchNamingAnotherUidIsRefusedAtOnce) {
  Start();
  ASSERT_TRUE(Create(Resource::kPods, "default", PodJson("web")));
  const std::string uid = Get(Resource::kPods, "default", "web")->meta().uid;
  for (Subresource sub : {Subresource::kNone, Subresource::kStatus}) {
    ApiResult<rapidjson::Document> r =
        MergePatch(Resource::kPods, "default", "web",
                   R"({"metadata":{"uid":"another","labels":{"a":"b"}}})", sub);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, 409);
    EXPECT_EQ(r.error().message,
              "Operation cannot be fulfilled on pods \"web\": Precondition failed: UID in "
              "precondition: another, UID in object meta: " +
                  uid);
  }
}

// A condition added in process (the taint eviction controller's DisruptionTarget) writes what its
// strategic merge patch writes, spliced into the pod's bytes when the pod has none of its type;
// refusals are the patch's.
TEST_F(RegistryTest, AnAddedPodConditionWritesWhatItsPatchWrites) {
  Start();
  auto add = [&](std::string name, std::string uid, const api::Condition& c) {
    return Wait([&](WriteCallback done) {
      registry_->AddPodCondition("default", std::move(name), std::move(uid), c, std::move(done));
    });
  };
  api::Condition c;
  c.type = "DisruptionTarget";
  c.status = "True";
  c.observed_generation = 1;
  c.last_transition_time = "2026-01-01T00:00:00Z";
  c.reason = "DeletionByTaintManager";
  c.message = "Taint manager: deleting due to NoExecute taint";
  for (const char* name : {"spliced", "patched", "bound-spliced", "bound-patched"}) {
    ASSERT_TRUE(Create(Resource::kPods, "default", PodJson(name)));
  }
  ASSERT_TRUE(Bind("default", "bound-spliced"));
  ASSERT_TRUE(Bind("default", "bound-patched"));
  auto uid = [&](const char* name) { return Get(Resource::kPods, "default", name)->meta().uid; };
  for (const auto& [spliced, patched] :
       {std::pair{"spliced", "patched"}, std::pair{"bound-spliced", "bound-patched"}}) {
    SCOPED_TRACE(spliced);
    ASSERT_TRUE(add(spliced, uid(spliced), c));
    ASSERT_TRUE(Patch(Resource::kPods, "default", patched, api::PatchType::kStrategicMergePatch,
                      Registry::PodConditionPatch(uid(patched), c), Subresource::kStatus));
    ObjectPtr a = Get(Resource::kPods, "default", spliced);
    ObjectPtr b = Get(Resource::kPods, "default", patched);
    Result<api::Pod> decoded = api::DecodePod(Parse(std::string_view(*a->json)));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(api::EncodePod(*a->As<api::Pod>()), api::EncodePod(*decoded));
    // The same pod but for the name, the UID and the times of the creates and bindings. (The
    // splice appends the condition, as upstream's taint manager's patch with its
    // $setElementOrder does; this patch, without one, puts it first.)
    api::Pod pa = *decoded;
    Result<api::Pod> pb = api::DecodePod(Parse(std::string_view(*b->json)));
    ASSERT_TRUE(pb);
    for (api::Pod* p : {&pa, &*pb}) {
      p->meta.name.clear();
      p->meta.uid.clear();
      p->meta.resource_version.clear();
      p->meta.creation_timestamp.clear();
      std::sort(p->status.conditions.begin(), p->status.conditions.end(),
                [](const api::Condition& x, const api::Condition& y) { return x.type < y.type; });
      for (api::Condition& cond : p->status.conditions) {
        if (cond.type == "PodScheduled") cond.last_transition_time.clear();
      }
    }
    EXPECT_EQ(api::EncodePod(pa), api::EncodePod(*pb));
    EXPECT_EQ(a->As<api::Pod>()->status.conditions.back().type, "DisruptionTarget");
  }
  // Twice: the condition is there, so the patch decides.
  ASSERT_TRUE(add("spliced", uid("spliced"), c));
  EXPECT_EQ(Get(Resource::kPods, "default", "spliced")->As<api::Pod>()->status.conditions.size(),
            1u);
  // Refused as the patch is.
  ApiResult<rapidjson::Document> stale = add("patched", "not-the-uid", c);
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code, 409);
  EXPECT_EQ(stale.error().message,
            "Operation cannot be fulfilled on pods \"patched\": Precondition failed: UID in "
            "precondition: not-the-uid, UID in object meta: " +
                uid("patched"));
  ApiResult<rapidjson::Document> missing = add("nobody", "u", c);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, 404);
}

// A pod's status patch decodes only the status onto the current typed view, and a deletion mark
// changes only its metadata: each must be what decoding the stored bytes gives. A status patch
// changes nothing but status, whatever else it names.
TEST_F(RegistryTest, StatusPatchesAndDeletionMarksGiveTheTypedViewItsBytesDecodeTo) {
  Start();
  ASSERT_TRUE(Create(Resource::kPods, "default", PodJson("web")));
  ASSERT_TRUE(Bind("default", "web"));
  auto same_as_bytes = [&](std::string_view step) {
    SCOPED_TRACE(step);
    ObjectPtr pod = Get(Resource::kPods, "default", "web");
    ASSERT_NE(pod, nullptr);
    ASSERT_NE(pod->As<api::Pod>(), nullptr);
    Result<api::Pod> decoded = api::DecodePod(Parse(std::string_view(*pod->json)));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(api::EncodePod(*pod->As<api::Pod>()), api::EncodePod(*decoded));
  };
  const std::string uid = Get(Resource::kPods, "default", "web")->meta().uid;
  // As the taint eviction controller patches: a uid precondition and a new condition.
  ASSERT_TRUE(Patch(Resource::kPods, "default", "web", api::PatchType::kStrategicMergePatch,
                    R"({"metadata":{"uid":")" + uid +
                        R"("},"status":{"conditions":[{"type":"DisruptionTarget",)"
                        R"("status":"True","reason":"DeletionByTaintManager"}]}})",
                    Subresource::kStatus));
  same_as_bytes("strategic merge patch of status");
  ObjectPtr patched = Get(Resource::kPods, "default", "web");
  const std::vector<api::Condition>& conditions = patched->As<api::Pod>()->status.conditions;
  ASSERT_EQ(conditions.size(), 2u);
  EXPECT_TRUE(std::any_of(conditions.begin(), conditions.end(), [](const api::Condition& c) {
    return c.type == "DisruptionTarget" && c.reason == "DeletionByTaintManager";
  }));

  // A status patch may change labels, as upstream's; not owner references, nor the spec.
  ASSERT_TRUE(
      MergePatch(Resource::kPods, "default", "web",
                 R"({"metadata":{"labels":{"tier":"x"},"ownerReferences":[{"apiVersion":)"
                 R"("v1","kind":"Node","name":"n","uid":"u"}]},"status":{"phase":"Running"}})",
                 Subresource::kStatus));
  same_as_bytes("merge patch naming labels and owner references");
  ASSERT_TRUE(MergePatch(Resource::kPods, "default", "web",
                         R"({"spec":{"hostname":"h"},"status":{"message":"m"}})",
                         Subresource::kStatus));
  same_as_bytes("merge patch naming spec");
  ObjectPtr now = Get(Resource::kPods, "default", "web");
  const api::Pod& pod = *now->As<api::Pod>();
  EXPECT_EQ(pod.status.phase, "Running");
  EXPECT_EQ(pod.meta.labels.size(), 1u);
  EXPECT_TRUE(pod.meta.owner_references.empty());
  const rapidjson::Document stored = Parse(std::string_view(*now->json));
  EXPECT_EQ(Str(stored, "/metadata/labels/tier"), "x");
  EXPECT_FALSE(stored["metadata"].HasMember("ownerReferences"));
  EXPECT_EQ(Str(stored, "/status/message"), "m");
  EXPECT_EQ(Str(stored, "/status/qosClass"), "BestEffort");
  EXPECT_FALSE(stored["spec"].HasMember("hostname"));

  // A status sent whole without its QoS class keeps the one set at creation.
  ASSERT_TRUE(MergePatch(Resource::kPods, "default", "web", R"({"status":{"qosClass":null}})",
                         Subresource::kStatus));
  EXPECT_EQ(Str(Parse(std::string_view(*Get(Resource::kPods, "default", "web")->json)),
                "/status/qosClass"),
            "BestEffort");

  // A status patch that changes nothing writes nothing.
  ASSERT_TRUE(MergePatch(Resource::kPods, "default", "web", R"({"status":{"phase":"Running"}})",
                         Subresource::kStatus));
  EXPECT_EQ(Get(Resource::kPods, "default", "web")->revision, now->revision);
  // Nor does one whose metadata only restates the uid.
  ASSERT_TRUE(MergePatch(Resource::kPods, "default", "web",
                         R"({"metadata":{"uid":")" + uid + R"("},"status":{"message":"m"}})",
                         Subresource::kStatus));
  EXPECT_EQ(Get(Resource::kPods, "default", "web")->revision, now->revision);

  // A bound pod is marked deleting with its grace period. Its metadata alone is rewritten in
  // the stored bytes: they must be what encoding the whole object gives.
  ASSERT_TRUE(Delete(Resource::kPods, "default", "web"));
  same_as_bytes("deletion mark");
  {
    ObjectPtr o = Get(Resource::kPods, "default", "web");
    EXPECT_EQ(WithResourceVersion(EncodeForStorage(Parse(std::string_view(*o->json))), o->revision),
              *o->json);
  }
  ObjectPtr marked = Get(Resource::kPods, "default", "web");
  ASSERT_NE(marked, nullptr);
  ASSERT_TRUE(marked->meta().deletion_timestamp.has_value());
  EXPECT_EQ(marked->meta().deletion_grace_period_seconds, std::optional<int64_t>(30));
  // A second delete with a shorter grace period shortens it.
  DeleteOptions shorter;
  shorter.grace_period_seconds = 5;
  ASSERT_TRUE(Delete(Resource::kPods, "default", "web", shorter));
  same_as_bytes("shorter grace period");
  {
    ObjectPtr o = Get(Resource::kPods, "default", "web");
    EXPECT_EQ(WithResourceVersion(EncodeForStorage(Parse(std::string_view(*o->json))), o->revision),
              *o->json);
  }
  EXPECT_EQ(Get(Resource::kPods, "default", "web")->meta().deletion_grace_period_seconds,
            std::optional<int64_t>(5));
}

TEST_F(RegistryTest, DeletingANamespaceMarksItTerminatingThenDeletesItsContentsAndIt) {
  Start();
  ASSERT_TRUE(Create(Resource::kNamespaces, "",
                     R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}})"));
  ASSERT_TRUE(Create(Resource::kPods, "team", PodJson("p")));
  ASSERT_TRUE(Create(Resource::kEvents, "team",
                     R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"e"},)"
                     R"("involvedObject":{"kind":"Pod","name":"p","namespace":"team"}})"));
  auto deleted = Delete(Resource::kNamespaces, "", "team");
  ASSERT_TRUE(deleted) << deleted.error().message;
  // The answer is the namespace as the DELETE left it (upstream: 200 and the object).
  EXPECT_EQ(Str(*deleted, "/status/phase"), "Terminating");
  EXPECT_NE(Str(*deleted, "/metadata/deletionTimestamp"), "<absent>");
  EXPECT_EQ(Str(*deleted, "/spec/finalizers/0"), "kubernetes");
  EXPECT_TRUE(Eventually([&] { return !Get(Resource::kNamespaces, "", "team"); }))
      << "the namespace was not deleted";
  EXPECT_EQ(CountIn(Resource::kPods, "team"), 0u);
  EXPECT_EQ(CountIn(Resource::kEvents, "team"), 0u);
  // The name is free again.
  EXPECT_TRUE(Create(Resource::kNamespaces, "",
                     R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}})"));
}

TEST_F(RegistryTest, AMetadataFinalizerHoldsATerminatingNamespaceUntilItIsRemoved) {
  Start();
  ASSERT_TRUE(Create(Resource::kNamespaces, "",
                     R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"held",)"
                     R"("finalizers":["kubetaint.io/hold"]}})"));
  ASSERT_TRUE(Create(Resource::kPods, "held", PodJson("p")));
  ASSERT_TRUE(Delete(Resource::kNamespaces, "", "held"));
  // The contents go and `kubernetes` leaves spec.finalizers; the namespace stays Terminating.
  ASSERT_TRUE(Eventually([&] {
    ObjectPtr ns = Get(Resource::kNamespaces, "", "held");
    return ns && ns->json->find(R"("spec":{})") != std::string::npos;
  })) << *Get(Resource::kNamespaces, "", "held")->json;
  EXPECT_EQ(CountIn(Resource::kPods, "held"), 0u);
  ObjectPtr ns = Get(Resource::kNamespaces, "", "held");
  ASSERT_TRUE(ns);
  EXPECT_EQ(ns->As<api::Namespace>()->phase, "Terminating");

  // Nothing new may be created in it (NamespaceLifecycle), whoever writes.
  auto pod = Create(Resource::kPods, "held", PodJson("new"));
  ASSERT_FALSE(pod);
  EXPECT_EQ(pod.error().code, 403);
  EXPECT_EQ(pod.error().reason, "Forbidden");
  EXPECT_EQ(pod.error().message, Refused("pods \"new\""));
  ASSERT_TRUE(pod.error().details);
  EXPECT_EQ(pod.error().details->name, "new");
  EXPECT_EQ(pod.error().details->kind, "pods");
  ASSERT_EQ(pod.error().details->causes.size(), 1u);
  EXPECT_EQ(pod.error().details->causes[0].reason, "NamespaceTerminating");
  EXPECT_EQ(pod.error().details->causes[0].message, "namespace held is being terminated");
  EXPECT_EQ(pod.error().details->causes[0].field, "metadata.namespace");
  // A generateName is what names the object before it has a name (upstream admission errors).
  auto generated = Create(Resource::kPods, "held",
                          R"({"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"web-"},)"
                          R"("spec":{"containers":[{"name":"c","image":"nginx"}]}})");
  ASSERT_FALSE(generated);
  EXPECT_EQ(generated.error().message, Refused("pods \"web-\""));
  // Nor a dry run, an event, a binding or an eviction (refused before the pod is looked up).
  WriteOptions dry;
  dry.dry_run = true;
  EXPECT_EQ(Create(Resource::kPods, "held", PodJson("dry"), dry).error().code, 403);
  auto event = Create(Resource::kEvents, "held",
                      R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"e"},)"
                      R"("involvedObject":{"kind":"Pod","name":"p","namespace":"held"}})");
  ASSERT_FALSE(event);
  EXPECT_EQ(event.error().message, Refused("events \"e\""));
  ApiResult<void> bound = Bind("held", "gone");
  ASSERT_FALSE(bound);
  EXPECT_EQ(bound.error().message, Refused("pods \"gone\""));
  ApiResult<void> evicted = Evict("held", "gone");
  ASSERT_FALSE(evicted);
  EXPECT_EQ(evicted.error().message, Refused("pods \"gone\""));

  // Deleting it again answers with it as it is.
  auto again = Delete(Resource::kNamespaces, "", "held");
  ASSERT_TRUE(again);
  EXPECT_EQ(Str(*again, "/status/phase"), "Terminating");
  ASSERT_TRUE(Get(Resource::kNamespaces, "", "held"));
  // Its phase follows its deletion (upstream ValidateNamespaceStatusUpdate).
  auto active = MergePatch(Resource::kNamespaces, "", "held", R"({"status":{"phase":"Active"}})",
                           Subresource::kStatus);
  ASSERT_FALSE(active);
  EXPECT_EQ(active.error().message,
            "Namespace \"held\" is invalid: status.Phase: Invalid value: \"Active\": may only be "
            "'Terminating' if `deletionTimestamp` is not empty");
  // Other updates go through.
  auto labelled =
      MergePatch(Resource::kNamespaces, "", "held", R"({"metadata":{"labels":{"a":"b"}}})");
  ASSERT_TRUE(labelled) << labelled.error().message;
  ASSERT_TRUE(Get(Resource::kNamespaces, "", "held"));

  // The update that removes the last finalizer deletes it; the answer is what the update made.
  auto released =
      MergePatch(Resource::kNamespaces, "", "held", R"({"metadata":{"finalizers":null}})");
  ASSERT_TRUE(released) << released.error().message;
  EXPECT_EQ(Str(*released, "/metadata/name"), "held");
  EXPECT_EQ(Str(*released, "/metadata/finalizers"), "<absent>");
  EXPECT_EQ(Str(*released, "/metadata/labels/a"), "b");
  EXPECT_FALSE(Get(Resource::kNamespaces, "", "held"));
}

TEST_F(RegistryTest, SpecFinalizersChangeOnlyThroughTheLifecycle) {
  Start();
  ASSERT_TRUE(
      Create(Resource::kNamespaces, "",
             R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"},)"
             R"("spec":{"finalizers":["example.com/x"]},"status":{"phase":"Terminating"}})"));
  ObjectPtr ns = Get(Resource::kNamespaces, "", "a");
  ASSERT_TRUE(ns);
  EXPECT_NE(ns->json->find(R"("spec":{"finalizers":["kubernetes"]})"), std::string::npos)
      << *ns->json;
  EXPECT_EQ(ns->As<api::Namespace>()->phase, "Active");
  ASSERT_TRUE(MergePatch(Resource::kNamespaces, "", "a", R"({"spec":{"finalizers":[]}})"));
  ns = Get(Resource::kNamespaces, "", "a");
  EXPECT_NE(ns->json->find(R"("spec":{"finalizers":["kubernetes"]})"), std::string::npos)
      << *ns->json;
}

TEST_F(RegistryTest, ADryRunDeleteOfANamespaceAnswersTerminatingAndChangesNothing) {
  Start();
  ASSERT_TRUE(Create(Resource::kNamespaces, "",
                     R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"dry"}})"));
  ASSERT_TRUE(Create(Resource::kPods, "dry", PodJson("p")));
  const store::Revision before = store_->CurrentRevision();
  DeleteOptions options;
  options.dry_run = true;
  auto r = Delete(Resource::kNamespaces, "", "dry", options);
  ASSERT_TRUE(r);
  EXPECT_EQ(Str(*r, "/status/phase"), "Terminating");
  EXPECT_EQ(store_->CurrentRevision(), before);
  EXPECT_EQ(Get(Resource::kNamespaces, "", "dry")->As<api::Namespace>()->phase, "Active");
  EXPECT_EQ(CountIn(Resource::kPods, "dry"), 1u);
}

TEST_F(RegistryTest, ANamespaceLeftTerminatingIsDeletedAfterARestart) {
  // What a stop between the DELETE and the end of the deletion leaves in the store.
  const std::string ns_key = ObjectKey(Info(Resource::kNamespaces), "", "left");
  ASSERT_TRUE(store_->Create(
      ns_key, store::MakeBytes(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":)"
                               R"("left","uid":"u1","deletionTimestamp":"2026-01-01T00:00:00Z"},)"
                               R"("spec":{"finalizers":["kubernetes"]},)"
                               R"("status":{"phase":"Terminating"}})")));
  ASSERT_TRUE(store_->Create(
      ObjectKey(Info(Resource::kPods), "left", "p"),
      store::MakeBytes(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",)"
                       R"("namespace":"left","uid":"u2"},"spec":{"containers":[{"name":"c",)"
                       R"("image":"nginx"}]}})")));
  Start();
  EXPECT_TRUE(Eventually([&] { return !Get(Resource::kNamespaces, "", "left"); }));
  EXPECT_EQ(CountIn(Resource::kPods, "left"), 0u);
}

TEST_F(RegistryTest, StopEndsANamespaceDeletionThatIsWaiting) {
  Start();
  ASSERT_TRUE(Create(Resource::kNamespaces, "",
                     R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"s"}})"));
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(Create(Resource::kPods, "s", PodJson(std::string("p").append(std::to_string(i)))));
  }
  ASSERT_TRUE(Delete(Resource::kNamespaces, "", "s"));
  // Returns (the destructor too) however far the deletion got; the next Start finishes it.
  registry_->Stop();
  Start();
  EXPECT_TRUE(Eventually([&] { return !Get(Resource::kNamespaces, "", "s"); }));
  EXPECT_EQ(CountIn(Resource::kPods, "s"), 0u);
}

TEST_F(RegistryTest, PodsGetTheDefaultTolerationsFromEveryWriter) {
  Start();
  auto pod = Create(Resource::kPods, "default", PodJson("p"));
  ASSERT_TRUE(pod);
  const rapidjson::Value& tols = (*pod)["spec"]["tolerations"];
  ASSERT_EQ(tols.Size(), 2u);
  EXPECT_EQ(Str(tols[0], "/key"), "node.kubernetes.io/not-ready");
  EXPECT_EQ(tols[0]["tolerationSeconds"].GetInt64(), 300);
  EXPECT_EQ(Str(tols[1], "/key"), "node.kubernetes.io/unreachable");
  // A dry run shows them too and stores nothing.
  WriteOptions dry;
  dry.dry_run = true;
  auto dry_pod = Create(Resource::kPods, "default", PodJson("dry"), dry);
  ASSERT_TRUE(dry_pod);
  EXPECT_EQ((*dry_pod)["spec"]["tolerations"].Size(), 2u);
  EXPECT_FALSE(Get(Resource::kPods, "default", "dry"));
  // A status update is not the pod's: nothing is added there.
  ASSERT_TRUE(MergePatch(Resource::kPods, "default", "p", R"({"status":{"phase":"Running"}})",
                         Subresource::kStatus));
}

TEST_F(RegistryTest, TheChainInTheOptionsDecides) {
  admission::Config config;
  config.disable_plugins = {"DefaultTolerationSeconds"};
  Registry::Options options;
  options.admission = Chain(config);
  Start(std::move(options));
  auto plain = Create(Resource::kPods, "default", PodJson("plain"));
  ASSERT_TRUE(plain);
  EXPECT_FALSE((*plain)["spec"].HasMember("tolerations"));

  // Turned on later, the plugin adds them on the pod's next update (an allowed addition).
  Registry::Options seconds;
  config = {};
  config.default_not_ready_toleration_seconds = 60;
  seconds.admission = Chain(config);
  Start(std::move(seconds));
  auto updated =
      MergePatch(Resource::kPods, "default", "plain", R"({"metadata":{"labels":{"a":"b"}}})");
  ASSERT_TRUE(updated) << updated.error().message;
  ASSERT_EQ((*updated)["spec"]["tolerations"].Size(), 2u);
  EXPECT_EQ((*updated)["spec"]["tolerations"][0]["tolerationSeconds"].GetInt64(), 60);
  EXPECT_EQ((*updated)["spec"]["tolerations"][1]["tolerationSeconds"].GetInt64(), 300);

  // Without NamespaceLifecycle the immortal namespaces are mortal, as upstream.
  Registry::Options mortal;
  config = {};
  config.disable_plugins = {"NamespaceLifecycle"};
  mortal.admission = Chain(config);
  Start(std::move(mortal));
  auto gone = Delete(Resource::kNamespaces, "", "kube-public");
  ASSERT_TRUE(gone) << gone.error().message;
  EXPECT_EQ(Str(*gone, "/status/phase"), "Terminating");
  Start();
  auto immortal = Delete(Resource::kNamespaces, "", "default");
  ASSERT_FALSE(immortal);
  EXPECT_EQ(immortal.error().message,
            "namespaces \"default\" is forbidden: this namespace may not be deleted");
}

// The two classes upstream's scheduling/bootstrap-system-priority-classes hook creates.
TEST_F(RegistryTest, TheSystemPriorityClassesExistFromTheStartAndStay) {
  Start();
  ObjectPtr node = Get(Resource::kPriorityClasses, "", "system-node-critical");
  ASSERT_TRUE(node);
  const api::PriorityClass* pc = node->As<api::PriorityClass>();
  ASSERT_NE(pc, nullptr);
  EXPECT_EQ(pc->value, 2000001000);
  EXPECT_FALSE(pc->global_default);
  EXPECT_EQ(pc->preemption_policy, "PreemptLowerPriority");
  EXPECT_EQ(pc->description,
            "Used for system critical pods that must not be moved from their current node.");
  ObjectPtr cluster = Get(Resource::kPriorityClasses, "", "system-cluster-critical");
  ASSERT_TRUE(cluster);
  EXPECT_EQ(cluster->As<api::PriorityClass>()->value, 2000000000);
  EXPECT_EQ(cluster->As<api::PriorityClass>()->description,
            "Used for system critical pods that must run in the cluster, but can be moved to "
            "another node if necessary.");

  // A restart finds them and leaves them as they are: same object, same resourceVersion.
  ASSERT_TRUE(MergePatch(Resource::kPriorityClasses, "", "system-node-critical",
                         R"({"metadata":{"labels":{"kept":"yes"}}})"));
  ObjectPtr before = Get(Resource::kPriorityClasses, "", "system-node-critical");
  Start();
  ObjectPtr after = Get(Resource::kPriorityClasses, "", "system-node-critical");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->revision, before->revision);
  EXPECT_EQ(after->meta().uid, before->meta().uid);

  // They cannot be deleted (upstream priorityclass REST.Delete).
  auto refused = Delete(Resource::kPriorityClasses, "", "system-cluster-critical");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, 403);
  EXPECT_EQ(refused.error().message,
            "priorityclasses.scheduling.k8s.io \"system-cluster-critical\" is forbidden: this is "
            "a system priority class and cannot be deleted");
  EXPECT_TRUE(Get(Resource::kPriorityClasses, "", "system-cluster-critical"));
}

// semantics.md §11.10 PC1-PC5 (upstream pkg/apis/scheduling/validation ValidatePriorityClass,
// ValidatePriorityClassUpdate and IsKnownSystemPriorityClass).
TEST_F(RegistryTest, PriorityClassValidation) {
  Start();
  auto pc = [](std::string_view name, std::string_view rest) {
    return std::string(R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",)") +
           R"("metadata":{"name":")" + std::string(name) + R"("},)" + std::string(rest) + "}";
  };
  struct Row {
    const char* id;
    std::string name, body;
    std::string want;  // "" = created
  };
  const std::string reserved =
      "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for "
      "system use only. error: ";
  const Row rows[] = {
      {"PC1 an unknown system- name", "system-foo", R"("value":1)",
       reserved + "system-foo is not a known system priority class"},
      {"PC1 a system class's name with another value", "system-node-critical", R"("value":5)",
       reserved + "value of system-node-critical PriorityClass must be 2000001000"},
      {"PC1 a system class as global default", "system-cluster-critical",
       R"("value":2000000000,"globalDefault":true)",
       reserved + "globalDefault of system-cluster-critical PriorityClass must be false"},
      {"PC2 above the user maximum", "high", R"("value":1000000001)",
       "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"},
      {"PC3 the user maximum", "high", R"("value":1000000000)", ""},
      {"PC4 negative", "low", R"("value":-5)", ""},
      {"an unknown preemptionPolicy", "odd", R"("value":1,"preemptionPolicy":"Sometimes")",
       "preemptionPolicy: Unsupported value: \"Sometimes\": supported values: "
       "\"PreemptLowerPriority\", \"Never\""},
      {"an empty preemptionPolicy", "odd", R"("value":1,"preemptionPolicy":"")",
       "preemptionPolicy: Required value"},
  };
  for (const Row& r : rows) {
    auto created = Create(Resource::kPriorityClasses, "", pc(r.name, r.body));
    if (r.want.empty()) {
      EXPECT_TRUE(created) << r.id << ": " << created.error().message;
      continue;
    }
    ASSERT_FALSE(created) << r.id;
    EXPECT_EQ(created.error().code, 422) << r.id;
    EXPECT_EQ(created.error().message,
              "PriorityClass.scheduling.k8s.io \"" + r.name + "\" is invalid: " + r.want)
        << r.id;
  }
  // PC5: the value and the preemption policy are fixed once created; the rest may change.
  ASSERT_TRUE(Create(Resource::kPriorityClasses, "", pc("five", R"("value":5)")));
  auto changed = MergePatch(Resource::kPriorityClasses, "", "five", R"({"value":6})");
  ASSERT_FALSE(changed);
  EXPECT_EQ(changed.error().message,
            "PriorityClass.scheduling.k8s.io \"five\" is invalid: value: Forbidden: may not be "
            "changed in an update.");
  auto policy =
      MergePatch(Resource::kPriorityClasses, "", "five", R"({"preemptionPolicy":"Never"})");
  ASSERT_FALSE(policy);
  EXPECT_EQ(policy.error().message,
            "PriorityClass.scheduling.k8s.io \"five\" is invalid: preemptionPolicy: Invalid "
            "value: \"Never\": field is immutable");
  EXPECT_TRUE(MergePatch(Resource::kPriorityClasses, "", "five", R"({"description":"five"})"));
}

TEST_F(RegistryTest, PodsNamingASystemClassGetItsPriority) {
  Registry::Options options;
  options.admission = admission::DefaultChain();
  Start(std::move(options));
  auto pod = Create(Resource::kPods, "kube-system",
                    PodJson("critical", R"("priorityClassName":"system-node-critical")"));
  ASSERT_TRUE(pod) << pod.error().message;
  EXPECT_EQ((*pod)["spec"]["priority"].GetInt(), 2000001000);
  EXPECT_EQ(Str(*pod, "/spec/preemptionPolicy"), "PreemptLowerPriority");
}

TEST_F(RegistryTest, TaintNodesByConditionTaintsNewNodes) {
  admission::Config config;
  config.enable_plugins = {"TaintNodesByCondition"};
  Registry::Options options;
  options.admission = Chain(config);
  Start(std::move(options));
  auto node =
      Create(Resource::kNodes, "", R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}})");
  ASSERT_TRUE(node) << node.error().message;
  EXPECT_EQ(api::EncodeJson((*node)["spec"]["taints"]),
            R"([{"key":"node.kubernetes.io/not-ready","effect":"NoSchedule"}])");
  // Only at creation: a node may drop the taint afterwards.
  auto updated = MergePatch(Resource::kNodes, "", "n", R"({"spec":{"taints":null}})");
  ASSERT_TRUE(updated) << updated.error().message;
  EXPECT_FALSE((*updated)["spec"].HasMember("taints"));
}

// PodTolerationRestriction reads the pod's namespace as of every acknowledged write, on creates
// and updates alike; its refusals are plain errors: 500, no reason. DefaultTolerationSeconds
// runs before it, so a whitelist must allow the not-ready and unreachable tolerations too.
TEST_F(RegistryTest, PodTolerationRestrictionReadsTheNamespaceOfEveryWrite) {
  admission::Config config;
  config.enable_plugins = {"PodTolerationRestriction"};
  Registry::Options options;
  options.admission = Chain(config);
  Start(std::move(options));
  auto whitelist = [](std::string_view list) {
    std::string escaped;
    for (char c : list) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
    return R"({"metadata":{"annotations":{"scheduler.alpha.kubernetes.io/tolerationsWhitelist":")" +
           escaped + R"("}}})";
  };
  ASSERT_TRUE(Create(Resource::kNamespaces, "",
                     R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}})"));
  ASSERT_TRUE(MergePatch(
      Resource::kNamespaces, "", "team",
      whitelist(
          R"([{"key":"dedicated","operator":"Exists"},{"operator":"Exists","effect":"NoExecute"}])")));
  auto refused = Create(Resource::kPods, "team",
                        PodJson("other", R"("tolerations":[{"key":"other","operator":"Exists"}])"));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().Json(),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
            R"("pod tolerations (possibly merged with namespace default tolerations) conflict )"
            R"(with its namespace whitelist","code":500})");
  const std::string dedicated = R"("tolerations":[{"key":"dedicated","operator":"Exists"}])";
  auto allowed = Create(Resource::kPods, "team", PodJson("p", dedicated));
  ASSERT_TRUE(allowed) << allowed.error().message;
  // Narrowed, the whitelist refuses the pod's next update at once.
  ASSERT_TRUE(MergePatch(Resource::kNamespaces, "", "team",
                         whitelist(R"([{"operator":"Exists","effect":"NoExecute"}])")));
  auto update = MergePatch(Resource::kPods, "team", "p", R"({"metadata":{"labels":{"a":"b"}}})");
  ASSERT_FALSE(update);
  EXPECT_EQ(update.error().code, 500);
  EXPECT_EQ(update.error().reason, "");
  // A malformed annotation fails the request with Go's JSON error.
  ASSERT_TRUE(MergePatch(Resource::kNamespaces, "", "team",
                         R"({"metadata":{"annotations":{"scheduler.alpha.kubernetes.io/)"
                         R"(defaultTolerations":"[{"}}})"));
  auto malformed = Create(Resource::kPods, "team", PodJson("q"));
  ASSERT_FALSE(malformed);
  EXPECT_EQ(malformed.error().message, "unexpected end of JSON input");
}

}  // namespace
}  // namespace kt::server

namespace kt::server {
namespace {

// Graceful deletion (upstream rest.BeforeDelete and the pod strategy's CheckGracefulDelete),
// at a fixed wall time.
class GracefulDeleteTest : public RegistryTest {
 protected:
  void SetUp() override {
    RegistryTest::SetUp();
    Registry::Options options;
    options.now = [this] { return now_; };
    Start(std::move(options));
  }
  std::chrono::system_clock::time_point now_ =
      std::chrono::sys_days(std::chrono::year(2026) / 11 / 24) + std::chrono::hours(6);
};

TEST_F(GracefulDeleteTest, ABoundPodIsTerminatingForItsGracePeriodUntilAGraceZeroDelete) {
  ASSERT_TRUE(Create(Resource::kPods, "default", PodJson("web", R"("nodeName":"node-1")")));
  ApiResult<rapidjson::Document> first = Delete(Resource::kPods, "default", "web");
  ASSERT_TRUE(first) << first.error().message;
  // terminationGracePeriodSeconds defaults to 30.
  EXPECT_EQ(Str(*first, "/metadata/deletionTimestamp"), "2026-11-24T06:00:30Z");
  EXPECT_EQ((*first)["metadata"]["deletionGracePeriodSeconds"].GetInt64(), 30);
  ObjectPtr pod = Get(Resource::kPods, "default", "web");
  ASSERT_NE(pod, nullptr);
  const store::Revision marked = pod->revision;

  // A second delete without a shorter grace period changes nothing.
  now_ += std::chrono::seconds(5);
  ASSERT_TRUE(Delete(Resource::kPods, "default", "web"));
  DeleteOptions longer;
  longer.grace_period_seconds = 60;
  ASSERT_TRUE(Delete(Resource::kPods, "default", "web", longer));
  EXPECT_EQ(Get(Resource::kPods, "default", "web")->revision, marked);

  // A shorter one moves the deadline: the old start plus the new period.
  DeleteOptions shorter;
  shorter.grace_period_seconds = 10;
  ApiResult<rapidjson::Document> shortened = Delete(Resource::kPods, "default", "web", shorter);
  ASSERT_TRUE(shortened);
  EXPECT_EQ(Str(*shortened, "/metadata/deletionTimestamp"), "2026-11-24T06:00:10Z");
  EXPECT_EQ((*shortened)["metadata"]["deletionGracePeriodSeconds"].GetInt64(), 10);

  // The kubelet's confirmation: grace period 0, with the pod's UID as precondition.
  DeleteOptions confirm;
  confirm.grace_period_seconds = 0;
  confirm.precondition_uid = pod->meta().uid;
  ASSERT_TRUE(Delete(Resource::kPods, "default", "web", confirm));
  EXPECT_EQ(Get(Resource::kPods, "default", "web"), nullptr);
}

TEST_F(GracefulDeleteTest, UnboundFinishedOrZeroGracePodsGoAtOnce) {
  ASSERT_TRUE(Create(Resource::kPods, "default", PodJson("pending")));
  ASSERT_TRUE(Create(Resource::kPods, "default",
                     PodJson("zero", R"("nodeName":"node-1","terminationGracePeriodSeconds":0)")));
  ASSERT_TRUE(Create(Resource::kPods, "default", PodJson("done", R"("nodeName":"node-1")")));
  ASSERT_TRUE(MergePatch(Resource::kPods, "default", "done", R"({"status":{"phase":"Succeeded"}})",
                         Subresource::kStatus));
  ASSERT_TRUE(Create(Resource::kPods, "default", PodJson("forced", R"("nodeName":"node-1")")));
  for (const char* name : {"pending", "zero", "done"}) {
    ApiResult<rapidjson::Document> r = Delete(Resource::kPods, "default", name);
    ASSERT_TRUE(r) << name << ": " << r.error().message;
    EXPECT_EQ(Get(Resource::kPods, "default", name), nullptr) << name;
  }
  DeleteOptions force;  // kubectl delete --grace-period=0 --force
  force.grace_period_seconds = 0;
  ASSERT_TRUE(Delete(Resource::kPods, "default", "forced", force));
  EXPECT_EQ(Get(Resource::kPods, "default", "forced"), nullptr);
}

TEST_F(GracefulDeleteTest, ANegativeGracePeriodCountsAsOneSecond) {
  ASSERT_TRUE(Create(Resource::kPods, "default", PodJson("web", R"("nodeName":"node-1")")));
  DeleteOptions negative;
  negative.grace_period_seconds = -5;
  ApiResult<rapidjson::Document> r = Delete(Resource::kPods, "default", "web", negative);
  ASSERT_TRUE(r);
  EXPECT_EQ(Str(*r, "/metadata/deletionTimestamp"), "2026-11-24T06:00:01Z");
  EXPECT_EQ((*r)["metadata"]["deletionGracePeriodSeconds"].GetInt64(), 1);
}

TEST_F(GracefulDeleteTest, FinalizersHoldAnObjectMarkedDeletingUntilTheLastGoes) {
  ASSERT_TRUE(Create(Resource::kPods, "default",
                     R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"held",)"
                     R"("finalizers":["example.com/hold"]},)"
                     R"("spec":{"containers":[{"name":"c","image":"nginx"}]}})"));
  ApiResult<rapidjson::Document> r = Delete(Resource::kPods, "default", "held");
  ASSERT_TRUE(r);
  EXPECT_EQ(Str(*r, "/metadata/deletionTimestamp"), "2026-11-24T06:00:00Z");
  ASSERT_NE(Get(Resource::kPods, "default", "held"), nullptr);
  ASSERT_TRUE(
      MergePatch(Resource::kPods, "default", "held", R"({"metadata":{"finalizers":null}})"));
  EXPECT_EQ(Get(Resource::kPods, "default", "held"), nullptr);

  // Objects without graceful deletion: marked with no grace period, not deleted.
  ASSERT_TRUE(Create(Resource::kPriorityClasses, "",
                     R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",)"
                     R"("metadata":{"name":"pc","finalizers":["example.com/hold"]},"value":5})"));
  ApiResult<rapidjson::Document> pc = Delete(Resource::kPriorityClasses, "", "pc");
  ASSERT_TRUE(pc);
  EXPECT_EQ(Str(*pc, "/metadata/deletionTimestamp"), "2026-11-24T06:00:00Z");
  EXPECT_EQ((*pc)["metadata"]["deletionGracePeriodSeconds"].GetInt64(), 0);
  ASSERT_NE(Get(Resource::kPriorityClasses, "", "pc"), nullptr);
  ASSERT_TRUE(
      MergePatch(Resource::kPriorityClasses, "", "pc", R"({"metadata":{"finalizers":[]}})"));
  EXPECT_EQ(Get(Resource::kPriorityClasses, "", "pc"), nullptr);
}

TEST_F(GracefulDeleteTest, ADryRunGracefulDeleteAnswersTerminatingAndChangesNothing) {
  ASSERT_TRUE(Create(Resource::kPods, "default", PodJson("web", R"("nodeName":"node-1")")));
  const store::Revision before = Get(Resource::kPods, "default", "web")->revision;
  DeleteOptions dry;
  dry.dry_run = true;
  ApiResult<rapidjson::Document> r = Delete(Resource::kPods, "default", "web", dry);
  ASSERT_TRUE(r);
  EXPECT_EQ(Str(*r, "/metadata/deletionTimestamp"), "2026-11-24T06:00:30Z");
  ObjectPtr pod = Get(Resource::kPods, "default", "web");
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->revision, before);
  EXPECT_FALSE(pod->meta().deletion_timestamp.has_value());
}

// apps/v1 DaemonSets as upstream's daemonset strategy has them: defaults, the template
// generation annotation, metadata.generation, the status subresource, validation.

TEST_F(RegistryTest, DaemonSetCreateSetsDefaultsZeroStatusAndTemplateGenerationOne) {
  Start();
  ApiResult<rapidjson::Document> ds = Create(Resource::kDaemonSets, "default", kAgent);
  ASSERT_TRUE(ds) << ds.error().message;
  EXPECT_EQ(Json(*ds, "/spec/updateStrategy"),
            R"({"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":1,"maxSurge":0}})");
  EXPECT_EQ(Json(*ds, "/spec/revisionHistoryLimit"), "10");
  EXPECT_EQ(Json(*ds, "/spec/template/spec/schedulerName"), R"("default-scheduler")");
  EXPECT_EQ(Json(*ds, "/status"),
            R"({"currentNumberScheduled":0,"numberMisscheduled":0,"desiredNumberScheduled":0,)"
            R"("numberReady":0})");
  EXPECT_EQ(Json(*ds, "/metadata/annotations"),
            R"({"deprecated.daemonset.template.generation":"1"})");
  EXPECT_EQ(Json(*ds, "/metadata/generation"), "1");
}

TEST_F(RegistryTest, DaemonSetOnDeleteKeepsNoRollingUpdateDefaults) {
  Start();
  ApiResult<rapidjson::Document> ds =
      Create(Resource::kDaemonSets, "default",
             Agent(R"({"matchLabels":{"app":"agent"}})", R"({"app":"agent"})",
                   R"("updateStrategy":{"type":"OnDelete"})"));
  ASSERT_TRUE(ds) << ds.error().message;
  EXPECT_EQ(Json(*ds, "/spec/updateStrategy"), R"({"type":"OnDelete"})");
}

TEST_F(RegistryTest, DaemonSetTemplateGenerationCountsTemplateChangesGenerationEverySpecChange) {
  Start();
  ASSERT_TRUE(Create(Resource::kDaemonSets, "default", kAgent));
  // A spec change outside the template: generation only.
  ApiResult<rapidjson::Document> ds = DsPatch(R"({"spec":{"minReadySeconds":5}})");
  ASSERT_TRUE(ds) << ds.error().message;
  EXPECT_EQ(Json(*ds, "/metadata/generation"), "2");
  EXPECT_EQ(Json(*ds, "/metadata/annotations/deprecated.daemonset.template.generation"), R"("1")");
  // A template change: both.
  ds = DsPatch(R"({"spec":{"template":{"spec":{"containers":[{"name":"c","image":"v2"}]}}}})");
  ASSERT_TRUE(ds) << ds.error().message;
  EXPECT_EQ(Json(*ds, "/metadata/generation"), "3");
  EXPECT_EQ(Json(*ds, "/metadata/annotations/deprecated.daemonset.template.generation"), R"("2")");
  // Metadata alone: neither; and the annotation is the server's.
  ds = DsPatch(R"({"metadata":{"labels":{"x":"y"},)"
               R"("annotations":{"deprecated.daemonset.template.generation":"7"}}})");
  ASSERT_TRUE(ds) << ds.error().message;
  EXPECT_EQ(Json(*ds, "/metadata/generation"), "3");
  EXPECT_EQ(Json(*ds, "/metadata/annotations/deprecated.daemonset.template.generation"), R"("2")");
}

TEST_F(RegistryTest, DaemonSetStatusChangesOnlyThroughTheSubresource) {
  Start();
  ASSERT_TRUE(Create(Resource::kDaemonSets, "default", kAgent));
  ApiResult<rapidjson::Document> ds = DsPatch(R"({"status":{"numberReady":3}})");
  ASSERT_TRUE(ds);
  EXPECT_EQ(Json(*ds, "/status/numberReady"), "0");
  ds =
      DsPatch(R"({"status":{"numberReady":3},"spec":{"minReadySeconds":9}})", Subresource::kStatus);
  ASSERT_TRUE(ds) << ds.error().message;
  EXPECT_EQ(Json(*ds, "/status/numberReady"), "3");
  EXPECT_EQ(Json(*ds, "/spec/minReadySeconds"), "<absent>");
  EXPECT_EQ(Json(*ds, "/metadata/generation"), "1");
}

TEST_F(RegistryTest, DaemonSetValidationAsUpstream) {
  Start();
  ApiResult<rapidjson::Document> ds =
      Create(Resource::kDaemonSets, "default",
             Agent(R"({"matchLabels":{"app":"agent"}})", R"({"app":"other"})"));
  ASSERT_FALSE(ds);
  EXPECT_EQ(ds.error().code, 422);
  EXPECT_NE(ds.error().message.find("spec.template.metadata.labels: Invalid value: "
                                    "map[string]string{\"app\":\"other\"}: `selector` does not "
                                    "match template `labels`"),
            std::string::npos)
      << ds.error().message;

  ds = Create(Resource::kDaemonSets, "default", Agent("{}"));
  ASSERT_FALSE(ds);
  EXPECT_NE(ds.error().message.find("empty selector is invalid for daemonset"), std::string::npos)
      << ds.error().message;

  ASSERT_TRUE(Create(Resource::kDaemonSets, "default", kAgent));
  ds = DsPatch(R"({"spec":{"selector":{"matchLabels":{"app":"agent","x":"y"}}}})");
  ASSERT_FALSE(ds);
  EXPECT_NE(ds.error().message.find("spec.selector: Invalid value: {}: field is immutable"),
            std::string::npos)
      << ds.error().message;
  ds = DsPatch(R"({"spec":{"updateStrategy":{"rollingUpdate":{"maxUnavailable":0}}}})");
  ASSERT_FALSE(ds);
  EXPECT_NE(ds.error().message.find("spec.updateStrategy.rollingUpdate.maxUnavailable: Required "
                                    "value: cannot be 0 when maxSurge is 0"),
            std::string::npos)
      << ds.error().message;
  ds = DsPatch(R"({"spec":{"updateStrategy":{"type":"Sometimes"}}})");
  ASSERT_FALSE(ds);
  EXPECT_NE(ds.error().message.find("spec.updateStrategy: Unsupported value: \"Sometimes\""),
            std::string::npos)
      << ds.error().message;
}

// Not DaemonSet-specific, but what daemon pods carry: upstream ValidateOwnerReferences.
TEST_F(RegistryTest, OwnerReferencesAreValidatedAsUpstream) {
  Start();
  auto create_pod = [&](std::string_view refs) {
    std::string json =
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","ownerReferences":)";
    json.append(refs).append(R"(},"spec":{"containers":[{"name":"c","image":"x"}]}})");
    return Create(Resource::kPods, "default", json);
  };
  ApiResult<rapidjson::Document> pod = create_pod(
      R"([{"apiVersion":"apps/v1","kind":"DaemonSet","name":"a","uid":"1","controller":true},)"
      R"({"apiVersion":"apps/v1","kind":"DaemonSet","name":"b","uid":"2","controller":true}])");
  ASSERT_FALSE(pod);
  EXPECT_NE(pod.error().message.find(
                R"(metadata.ownerReferences: Invalid value: [{"apiVersion":"apps/v1","kind":)"
                R"("DaemonSet","name":"a","uid":"1","controller":true},{"apiVersion":"apps/v1",)"
                R"("kind":"DaemonSet","name":"b","uid":"2","controller":true}]: Only one )"
                R"(reference can have Controller set to true. Found "true" in references for )"
                R"(DaemonSet/a and DaemonSet/b)"),
            std::string::npos)
      << pod.error().message;
  pod = create_pod(R"([{"apiVersion":"apps/","kind":"","name":"a","uid":""}])");
  ASSERT_FALSE(pod);
  for (const char* want :
       {R"(metadata.ownerReferences.apiVersion: Invalid value: "apps/": )"
        R"(version must not be empty)",
        R"(metadata.ownerReferences.kind: Invalid value: "": must not be empty)",
        R"(metadata.ownerReferences.uid: Invalid value: "": must not be empty)"}) {
    EXPECT_NE(pod.error().message.find(want), std::string::npos) << pod.error().message;
  }
  EXPECT_TRUE(create_pod(
      R"([{"apiVersion":"apps/v1","kind":"DaemonSet","name":"a","uid":"1","controller":true,)"
      R"("blockOwnerDeletion":true},{"apiVersion":"v1","kind":"Node","name":"n","uid":"2"}])"));
}

}  // namespace
}  // namespace kt::server
