// Tests of the API server's object form (object.h): the storage format's resourceVersion stamp
// (one buffer for stored and served bytes, old unstamped values still read) and field-selector
// values computed from the typed view, which must equal upstream's field set computed from the
// JSON.
#include "server/object.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "api/codec.h"
#include "api/selector.h"

namespace kt::server {
namespace {

using api::fields::Field;

std::string ReadTestFile(const std::string& name) {
  std::ifstream in(std::string(KUBETAINT_SOURCE_DIR) + "/src/api/testdata/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `json` in the storage format, without its resourceVersion (what the registry hands the store).
store::Bytes Stored(std::string_view json) {
  Result<rapidjson::Document> doc = api::ParseJson(json);
  EXPECT_TRUE(doc) << json;
  return store::MakeBytes(doc ? EncodeForStorage(*doc) : std::string());
}

TEST(ObjectTest, TheMetadataMemberIsFoundAmongTheFirst256BytesOnly) {
  // A kind and apiVersion full of m's before it, and the member starting at byte 255, then 256:
  // only the first is the storage format's metadata.
  for (const size_t start : {size_t{255}, size_t{256}}) {
    SCOPED_TRACE(start);
    const std::string prefix = R"({"kind":"mmmm","apiVersion":")";
    std::string bytes = prefix + std::string(start - prefix.size() - 2, 'm') + "\",";
    ASSERT_EQ(bytes.size(), start);
    bytes += R"("metadata":{"resourceVersion":"7","name":"x"}})";
    EXPECT_EQ(HasResourceVersion(bytes, 7), start == 255);
  }
  EXPECT_TRUE(HasResourceVersion(R"({"metadata":{"resourceVersion":"7"}})", 7));
  EXPECT_FALSE(HasResourceVersion(R"({"kind":"Metadata","metadata":{"resourceVersion":"8"}})", 7));
  EXPECT_FALSE(HasResourceVersion(R"({"kind":"m","metadat":{"resourceVersion":"7"}})", 7));
}

TEST(ObjectTest, StampedBytesAreServedAsTheyAre) {
  const store::Bytes stored =
      Stored(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default"},)"
             R"("spec":{"containers":[{"name":"c","image":"i"}]}})");
  const store::Bytes stamped = StampResourceVersion(42, stored);
  EXPECT_EQ(*stamped,
            R"({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"42","name":"p",)"
            R"("namespace":"default"},"spec":{"containers":[{"name":"c","image":"i"}]}})");
  EXPECT_TRUE(HasResourceVersion(*stamped, 42));
  EXPECT_FALSE(HasResourceVersion(*stamped, 4));
  EXPECT_FALSE(HasResourceVersion(*stamped, 420));
  EXPECT_FALSE(HasResourceVersion(*stored, 42));

  Result<ObjectPtr> obj =
      MakeStoredObject(Info(Resource::kPods), "/registry/pods/default/p", stamped, 42, 40);
  ASSERT_TRUE(obj) << obj.error().message();
  EXPECT_EQ((*obj)->json.get(), stamped.get()) << "the store's buffer itself, not a copy";
  EXPECT_EQ((*obj)->meta().resource_version, "42");
  EXPECT_EQ((*obj)->As<api::Pod>()->meta.name, "p");
  EXPECT_EQ((*obj)->As<api::Node>(), nullptr);
}

TEST(ObjectTest, ValuesStoredBeforeTheStampGetTheRevisionSplicedIn) {
  // Data dirs written before the stamp hold objects without a resourceVersion.
  const store::Bytes old = Stored(R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n"}})");
  Result<ObjectPtr> obj =
      MakeStoredObject(Info(Resource::kNodes), "/registry/minions/n", old, 7, 7);
  ASSERT_TRUE(obj) << obj.error().message();
  EXPECT_NE((*obj)->json.get(), old.get());
  EXPECT_EQ(*(*obj)->json,
            R"({"kind":"Node","apiVersion":"v1","metadata":{"resourceVersion":"7","name":"n"}})");
  EXPECT_EQ((*obj)->meta().resource_version, "7");

  // Empty metadata; and bytes stamped with another revision get it replaced, never repeated.
  EXPECT_EQ(WithResourceVersion(R"({"kind":"Node","apiVersion":"v1","metadata":{}})", 3),
            R"({"kind":"Node","apiVersion":"v1","metadata":{"resourceVersion":"3"}})");
  EXPECT_EQ(WithResourceVersion(*(*obj)->json, 12),
            R"({"kind":"Node","apiVersion":"v1","metadata":{"resourceVersion":"12","name":"n"}})");
}

// The metadata object is found by its braces, whatever its strings hold (braces, brackets,
// escaped quotes and backslashes), and replaced in place without its resourceVersion.
TEST(ObjectTest, MetadataIsFoundAndReplacedInPlace) {
  const std::string bytes =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"9","name":"p",)"
      R"("annotations":{"a":"}{][\"\\","b":"x\\"},"finalizers":["f"]},)"
      R"("spec":{"nodeName":"n"},"status":{}})";
  const std::optional<std::pair<size_t, size_t>> span = MetadataObject(bytes);
  ASSERT_TRUE(span.has_value());
  const std::string_view meta =
      std::string_view(bytes).substr(span->first, span->second - span->first);
  EXPECT_EQ(meta, R"({"resourceVersion":"9","name":"p","annotations":{"a":"}{][\"\\","b":"x\\"},)"
                  R"("finalizers":["f"]})");
  Result<rapidjson::Document> doc = api::ParseJson(meta);
  ASSERT_TRUE(doc) << doc.error().message();
  doc->AddMember("deletionGracePeriodSeconds", 30, doc->GetAllocator());
  EXPECT_EQ(WithMetadata(bytes, *span, *doc),
            R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p",)"
            R"("annotations":{"a":"}{][\"\\","b":"x\\"},"finalizers":["f"],)"
            R"("deletionGracePeriodSeconds":30},"spec":{"nodeName":"n"},"status":{}})");

  EXPECT_EQ(MetadataObject(R"({"metadata":{}})"), std::make_pair(size_t{12}, size_t{14}));
  // Not the storage format, or cut short: not found.
  EXPECT_FALSE(MetadataObject(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p")"));
  EXPECT_FALSE(MetadataObject(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p})"));
  EXPECT_FALSE(MetadataObject(R"({"kind":"Pod","apiVersion":"v1"})"));
}

// A first graceful deletion spliced into stored bytes equals the metadata parsed, marked and
// written back with WithMetadata (the path it saves); shapes it does not handle are nullopt.
TEST(ObjectTest, DeletionMarksAreSplicedAsTheParsedMetadataWouldBeWritten) {
  const std::string ts = "2026-11-28T15:04:05Z";
  auto reference = [&](const std::string& stored, int64_t grace) {
    const auto span = MetadataObject(stored);
    EXPECT_TRUE(span.has_value());
    rapidjson::Document meta;
    meta.Parse(stored.data() + span->first, span->second - span->first);
    EXPECT_TRUE(meta.IsObject());
    auto& alloc = meta.GetAllocator();
    if (auto g = meta.FindMember("generation");
        g != meta.MemberEnd() && g->value.IsInt64() && g->value.GetInt64() > 0) {
      g->value.SetInt64(g->value.GetInt64() + 1);
    }
    meta.AddMember("deletionTimestamp", rapidjson::Value(ts.c_str(), alloc), alloc);
    meta.AddMember("deletionGracePeriodSeconds", rapidjson::Value(grace), alloc);
    return WithMetadata(stored, *span, meta);
  };
  const std::string head = R"({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"41",)";
  const std::string tail = R"(},"spec":{"nodeName":"n"},"status":{"phase":"Running"}})";
  struct Row {
    std::string meta;  // metadata's members after resourceVersion
    bool raised;
  };
  const Row rows[] = {
      {R"("name":"p","namespace":"default","uid":"u","generation":3,"labels":{"a":"}\"{"})", true},
      {R"("name":"p","generation":1)", true},
      {R"("generation":9,"name":"p","managedFields":[{"manager":"m","fieldsV1":{"f:spec":{}}}])",
       true},
      {R"("name":"p","annotations":{"x":"\\\"generation\":1"})", false},
      {R"("name":"p","generation":0)", false},
      {R"("name":"p","generation":-2)", false},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.meta);
    const std::string stored = head + row.meta + tail;
    bool raised = !row.raised;
    const std::optional<std::string> out = WithDeletionMarks(stored, ts, 30, &raised);
    ASSERT_TRUE(out.has_value());
    EXPECT_EQ(*out, reference(stored, 30));
    EXPECT_EQ(raised, row.raised);
    EXPECT_TRUE(api::ParseJson(*out)) << *out;
  }
  // Left to the parsed metadata: marks already there, a generation that is not a plain
  // integer, unstamped bytes, metadata that holds nothing but the resourceVersion.
  bool raised = false;
  for (const std::string meta :
       {R"("name":"p","deletionTimestamp":"2026-01-01T00:00:00Z")",
        R"("name":"p","deletionGracePeriodSeconds":5)", R"("name":"p","generation":1.5)",
        R"("name":"p","generation":"1")", R"("name":"p","generation":9223372036854775807)"}) {
    EXPECT_FALSE(WithDeletionMarks(head + meta + tail, ts, 30, &raised)) << meta;
  }
  EXPECT_FALSE(
      WithDeletionMarks(R"({"kind":"Pod","metadata":{"name":"p"},"spec":{}})", ts, 30, &raised));
  EXPECT_FALSE(WithDeletionMarks(R"({"kind":"Pod","metadata":{"resourceVersion":"4"},"spec":{}})",
                                 ts, 30, &raised));
}

// A binding spliced into stored bytes: the resourceVersion dropped, nodeName last in spec, the
// condition last in status.conditions; strings holding braces, brackets and escaped quotes are
// skipped whole; shapes it does not handle are left to the document path (nullopt).
TEST(ObjectTest, BindingsAreSplicedIntoStoredBytes) {
  const std::string cond = R"({"type":"PodScheduled","status":"True"})";
  const std::string head =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"9","name":"p",)"
      R"("annotations":{"a":"}{][\"\\","spec\"":"x\\","b":"\\\"},\\\\"}},)";
  const std::string out_head =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p",)"
      R"("annotations":{"a":"}{][\"\\","spec\"":"x\\","b":"\\\"},\\\\"}},)";
  struct Row {
    std::string rest;  // after metadata
    std::string want;  // after metadata, or "" for nullopt
  };
  const Row rows[] = {
      {R"("spec":{"containers":[{"name":"c","args":["]","}"]}]},"status":{"phase":"Pending"}})",
       R"("spec":{"containers":[{"name":"c","args":["]","}"]}],"nodeName":"n\"1"},)"
       R"("status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"True"}]}})"},
      {R"("spec":{},"status":{}})",
       R"("spec":{"nodeName":"n\"1"},"status":{"conditions":[{"type":"PodScheduled","status":"True"}]}})"},
      {R"("spec":{"a":1},"status":{"conditions":[]}})",
       R"("spec":{"a":1,"nodeName":"n\"1"},"status":{"conditions":[{"type":"PodScheduled","status":"True"}]}})"},
      {R"("spec":{"a":null},"status":{"conditions":[{"type":"Ready","status":"False"}],"x":true}})",
       R"("spec":{"a":null,"nodeName":"n\"1"},"status":{"conditions":[{"type":"Ready","status":"False"},)"
       R"({"type":"PodScheduled","status":"True"}],"x":true}})"},
      // status before spec
      {R"("status":{"phase":"Pending"},"spec":{"b":[1,2]}})",
       R"("status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"True"}]},)"
       R"("spec":{"b":[1,2],"nodeName":"n\"1"}})"},
      // Left to the document path.
      {R"("spec":{"nodeName":""},"status":{}})", ""},
      {R"("spec":{},"status":{"conditions":[{"status":"False","type":"PodScheduled"}]}})", ""},
      {R"("spec":{},"status":{"conditions":null}})", ""},
      {R"("spec":{}})", ""},
      {R"("spec":[],"status":{}})", ""},
      {R"("spec":{"a":"unterminated},"status":{}})", ""},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.rest);
    std::optional<std::string> out = WithBinding(head + row.rest, R"("n\"1")", cond);
    if (row.want.empty()) {
      EXPECT_FALSE(out.has_value()) << *out;
    } else {
      EXPECT_EQ(out.value_or("<nullopt>"), out_head + row.want);
      if (!out) continue;
      EXPECT_TRUE(api::ParseJson(*out)) << *out;
    }
  }
  // A condition alone (no node): spec as it is; a condition of another type, even one whose
  // name starts alike, stays.
  const std::string target = R"({"type":"DisruptionTarget"})";
  EXPECT_EQ(
      WithPodCondition(
          head + R"("spec":{"a":1},"status":{"conditions":[{"type":"DisruptionTargetX"}]}})",
          "DisruptionTarget", target),
      out_head +
          R"("spec":{"a":1},"status":{"conditions":[{"type":"DisruptionTargetX"},{"type":"DisruptionTarget"}]}})");
  EXPECT_EQ(
      WithPodCondition(head + R"("spec":{"nodeName":"n"},"status":{}})", "DisruptionTarget",
                       target),
      out_head +
          R"("spec":{"nodeName":"n"},"status":{"conditions":[{"type":"DisruptionTarget"}]}})");
  EXPECT_FALSE(WithPodCondition(
      head + R"("spec":{},"status":{"conditions":[{"type":"DisruptionTarget","status":"False"}]}})",
      "DisruptionTarget", target));
  // status, found from the end when it is the last member, holding strings with quotes, braces
  // and backslashes; or found by the scan from the start when it is not last.
  for (const std::string& status :
       {std::string(R"({"message":"}{\"\\\\","reason":"a\\\\"})"),
        std::string(R"({"m":"\\\\\\\",\"status\":{","conditions":[{"type":"Ready","x":"]"}]})"),
        std::string(R"({})")}) {
    SCOPED_TRACE(status);
    const std::string spec = R"("spec":{"nodeName":"n","s":"\"status\":{"})";
    const auto last =
        WithPodCondition(head + spec + R"(,"status":)" + status + "}", "DisruptionTarget", target);
    const auto first = WithPodCondition(head + R"("status":)" + status + "," + spec + "}",
                                        "DisruptionTarget", target);
    ASSERT_TRUE(last.has_value());
    ASSERT_TRUE(first.has_value());
    EXPECT_TRUE(api::ParseJson(*last)) << *last;
    EXPECT_TRUE(api::ParseJson(*first)) << *first;
    // The same status either way, with the condition last in its conditions.
    auto status_of = [](const std::string& json) {
      auto doc = api::ParseJson(json);
      return api::EncodeJson((*doc)["status"]);
    };
    EXPECT_EQ(status_of(*last), status_of(*first));
    EXPECT_NE(status_of(*last).find(R"({"type":"DisruptionTarget"}]})"), std::string::npos)
        << status_of(*last);
  }
  // A last member named otherwise, or status not an object: the scan from the start decides.
  EXPECT_EQ(
      WithPodCondition(head + R"("spec":{},"status":{},"statusx":{}})", "DisruptionTarget", target),
      out_head + R"("spec":{},"status":{"conditions":[{"type":"DisruptionTarget"}]},)"
                 R"("statusx":{}})");
  EXPECT_FALSE(WithPodCondition(head + R"("spec":{},"status":[]})", "DisruptionTarget", target));
  // Unstamped bytes (no resourceVersion first in metadata) are not the stamped storage format.
  EXPECT_FALSE(WithBinding(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"},)"
                           R"("spec":{},"status":{}})",
                           R"("n")", cond));
}

// The registry's stamp inserts the resourceVersion into the write's own buffer: the bytes are
// WithResourceVersion's, and with room reserved the buffer is not replaced.
TEST(ObjectTest, StampsInPlaceGiveWithResourceVersionsBytes) {
  for (std::string bytes :
       {std::string(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"},"spec":{}})"),
        std::string(R"({"kind":"Pod","apiVersion":"v1","metadata":{}})")}) {
    SCOPED_TRACE(bytes);
    const std::string want = WithResourceVersion(bytes, 1234567);
    bytes.reserve(bytes.size() + kStampRoom);
    const char* data = bytes.data();
    ASSERT_TRUE(StampInPlace(bytes, 1234567));
    EXPECT_EQ(bytes, want);
    EXPECT_EQ(bytes.data(), data);
    // Stamped already, or not the storage format: left to WithResourceVersion.
    EXPECT_FALSE(StampInPlace(bytes, 7));
    EXPECT_EQ(bytes, want);
  }
  std::string other = R"({"metadata":{"name":"p"},"kind":"Pod"})";
  std::string not_storage = std::string(300, ' ') + other;
  EXPECT_FALSE(StampInPlace(not_storage, 1));
}

// A version's bytes live as long as the version: the buffers the registry stores keep the
// stamp's room and not the slack of a buffer grown by doubling while it was written.
TEST(ObjectTest, StoredBuffersKeepTheStampsRoomAndLittleMore) {
  auto fits = [](const std::string& s) {
    return s.capacity() >= s.size() + kStampRoom &&
           s.capacity() <= s.size() + kStampRoom + (s.size() + kStampRoom) / 8;
  };
  // A pod of about 3 KB, as the writers' buffers would otherwise double past it.
  std::string pod = R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","labels":{)";
  for (int i = 0; i < 60; ++i) {
    if (i > 0) pod.push_back(',');
    pod.append(R"("label-)").append(std::to_string(i)).append(R"(":"value-)");
    pod.append(std::to_string(i)).append(20, 'x').push_back('"');
  }
  pod += R"(}},"spec":{"containers":[{"name":"c","image":"i"}]},"status":{}})";
  Result<rapidjson::Document> doc = api::ParseJson(pod);
  ASSERT_TRUE(doc) << doc.error().message();
  const std::string encoded = EncodeForStorage(*doc);
  EXPECT_EQ(encoded, pod);
  EXPECT_TRUE(fits(encoded)) << encoded.size() << " in " << encoded.capacity();

  const std::optional<std::pair<size_t, size_t>> span = MetadataObject(encoded);
  ASSERT_TRUE(span.has_value());
  Result<rapidjson::Document> meta =
      api::ParseJson(std::string_view(encoded).substr(span->first, span->second - span->first));
  ASSERT_TRUE(meta) << meta.error().message();
  // More metadata than the old 64 bytes of room: the result is still allocated at its size.
  meta->AddMember("deletionTimestamp", "2026-11-28T10:00:00Z", meta->GetAllocator());
  meta->AddMember("deletionGracePeriodSeconds", 30, meta->GetAllocator());
  meta->AddMember("generation", 2, meta->GetAllocator());
  const std::string marked = WithMetadata(encoded, *span, *meta);
  EXPECT_NE(marked.find(R"("deletionGracePeriodSeconds":30)"), std::string::npos);
  EXPECT_TRUE(fits(marked)) << marked.size() << " in " << marked.capacity();

  std::optional<std::string> bound = WithBinding(WithResourceVersion(encoded, 5), R"("node-1")",
                                                 R"({"type":"PodScheduled","status":"True"})");
  ASSERT_TRUE(bound.has_value());
  EXPECT_TRUE(fits(*bound)) << bound->size() << " in " << bound->capacity();

  // A buffer with twice the room it needs is copied into one of its size; one that fits is
  // kept as it is.
  std::string grown = pod;
  grown.reserve(2 * pod.size());
  FitForStorage(grown);
  EXPECT_EQ(grown, pod);
  EXPECT_TRUE(fits(grown)) << grown.size() << " in " << grown.capacity();
  const char* data = grown.data();
  FitForStorage(grown);
  EXPECT_EQ(grown.data(), data);
  // Too little room for the stamp: made.
  std::string tight = pod;
  tight.shrink_to_fit();
  FitForStorage(tight);
  EXPECT_EQ(tight, pod);
  EXPECT_TRUE(fits(tight));
}

TEST(ObjectTest, TypedViewIsHeldByPointer) {
  // An object pays for its own kind's view, not for the largest alternative's.
  EXPECT_LE(sizeof(TypedObject), 3 * sizeof(void*));
  TypedObject empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.meta(), nullptr);
  api::Namespace ns;
  ns.meta.name = "default";
  TypedObject typed(std::move(ns));
  ASSERT_NE(typed.Get<api::Namespace>(), nullptr);
  EXPECT_EQ(typed.meta()->name, "default");
  EXPECT_EQ(typed.Get<api::Pod>(), nullptr);
}

// One row per object: every field label of its kind must read the same from the typed view as
// upstream's field set computed from the JSON (api::fields::FieldValue), including the
// defaults ("false" for an absent boolean) and the fallbacks (status.podIPs[0] over
// status.podIP; source.component over reportingComponent).
TEST(ObjectTest, FieldLabelsFromTheTypedViewEqualThoseOfTheJson) {
  struct Row {
    Resource resource;
    std::string json;
    std::string why;
  };
  const std::vector<Row> rows = {
      {Resource::kPods, ReadTestFile("pod.json"), "realistic pod: every pod field set"},
      {Resource::kPods,
       R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default"},)"
       R"("spec":{"containers":[{"name":"c","image":"i"}]}})",
       "minimal pod: empty strings, hostNetwork false"},
      {Resource::kPods,
       R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"ns"},)"
       R"("spec":{"nodeName":"n1","hostNetwork":true,"restartPolicy":"Never",)"
       R"("serviceAccountName":"sa","schedulerName":"s","containers":[]},)"
       R"("status":{"phase":"Running","podIP":"10.0.0.1","podIPs":[{"ip":"fd00::1"},)"
       R"({"ip":"10.0.0.1"}],"nominatedNodeName":"n2"}})",
       "podIPs[0] wins over podIP"},
      {Resource::kPods,
       R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"},"spec":{"hostNetwork":false},)"
       R"("status":{"podIP":"10.0.0.9","podIPs":[]}})",
       "empty podIPs: podIP"},
      {Resource::kPods,
       R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"},"spec":null,)"
       R"("status":{"podIP":"10.0.0.9","podIPs":[null]}})",
       "null podIPs element: empty, as upstream"},
      {Resource::kNodes,
       R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n"},"spec":{"unschedulable":true}})",
       "cordoned node"},
      {Resource::kNodes, R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n"}})",
       "node: unschedulable defaults to false"},
      {Resource::kNamespaces,
       R"({"kind":"Namespace","apiVersion":"v1","metadata":{"name":"x"},)"
       R"("status":{"phase":"Terminating"}})",
       "namespace phase"},
      {Resource::kEvents,
       R"({"kind":"Event","apiVersion":"v1","metadata":{"name":"e","namespace":"default"},)"
       R"("involvedObject":{"kind":"Pod","namespace":"default","name":"p","uid":"u",)"
       R"("apiVersion":"v1","resourceVersion":"5","fieldPath":"spec.containers{c}"},)"
       R"("reason":"Scheduled","type":"Normal","source":{"component":"kubelet"},)"
       R"("reportingComponent":"rc"})",
       "event: source.component"},
      {Resource::kEvents,
       R"({"kind":"Event","apiVersion":"v1","metadata":{"name":"e","namespace":"default"},)"
       R"("involvedObject":{"kind":"Node","name":"n"},"reportingComponent":"taint-eviction"})",
       "event: source falls back to reportingComponent"},
      {Resource::kLeases,
       R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1",)"
       R"("metadata":{"name":"l","namespace":"kube-node-lease"}})",
       "a kind with name and namespace only"},
  };
  const Field all[] = {
      Field::kMetadataName,
      Field::kMetadataNamespace,
      Field::kSpecNodeName,
      Field::kSpecRestartPolicy,
      Field::kSpecSchedulerName,
      Field::kSpecServiceAccountName,
      Field::kSpecHostNetwork,
      Field::kStatusPhase,
      Field::kStatusPodIP,
      Field::kStatusPodIPs,
      Field::kStatusNominatedNodeName,
      Field::kSpecUnschedulable,
      Field::kInvolvedObjectKind,
      Field::kInvolvedObjectNamespace,
      Field::kInvolvedObjectName,
      Field::kInvolvedObjectUid,
      Field::kInvolvedObjectApiVersion,
      Field::kInvolvedObjectResourceVersion,
      Field::kInvolvedObjectFieldPath,
      Field::kReason,
      Field::kReportingComponent,
      Field::kSource,
      Field::kType,
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.why);
    const ResourceInfo& info = Info(row.resource);
    Result<rapidjson::Document> doc = api::ParseJson(row.json);
    ASSERT_TRUE(doc);
    Result<ObjectPtr> obj =
        MakeStoredObject(info, "/k", StampResourceVersion(1, Stored(row.json)), 1, 1);
    ASSERT_TRUE(obj) << obj.error().message();
    for (Field f : all) {
      const bool of_kind =
          f == Field::kMetadataName || f == Field::kMetadataNamespace ||
          std::find(info.fields.begin(), info.fields.end(), f) != info.fields.end();
      // A field the kind does not have reads as "" (the selector parser rejects it anyway).
      const std::string_view want = of_kind ? api::fields::FieldValue(*doc, f) : "";
      EXPECT_EQ((*obj)->Field(f), want) << api::fields::FieldName(f);
    }
  }
}

}  // namespace
}  // namespace kt::server
