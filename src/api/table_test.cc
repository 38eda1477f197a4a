#include "api/table.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace kt::api {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

// All ages below are relative to this instant.
const TimePoint kNow = std::chrono::sys_days{std::chrono::year{2025} / 6 / 1} + hours(12);

rapidjson::Document Parse(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  EXPECT_FALSE(doc.HasParseError()) << json;
  return doc;
}

std::string CellText(const rapidjson::Value& v) {
  if (v.IsString()) return v.GetString();
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  return "?";
}

// The row's cells as text (numbers and booleans spelled out), for golden comparisons.
std::vector<std::string> Cells(TableKind kind, std::string_view object_json) {
  rapidjson::Document object = Parse(object_json);
  std::string row;
  AppendTableRow(kind, object, IncludeObject::kNone, kNow, &row);
  rapidjson::Document parsed = Parse(row);
  std::vector<std::string> out;
  for (const auto& c : parsed["cells"].GetArray()) out.push_back(CellText(c));
  EXPECT_EQ(out.size(), TableColumns(kind).size()) << "one cell per column";
  return out;
}

std::string Ts(TimePoint t) {
  auto secs = std::chrono::floor<seconds>(t);
  auto day = std::chrono::floor<std::chrono::days>(secs);
  std::chrono::year_month_day ymd(day);
  std::chrono::hh_mm_ss hms(secs - day);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02ld:%02ld:%02ldZ", int(ymd.year()),
                unsigned(ymd.month()), unsigned(ymd.day()), long(hms.hours().count()),
                long(hms.minutes().count()), long(hms.seconds().count()));
  return buf;
}

// --- HumanDuration -----------------------------------------------------------------------------

TEST(HumanDurationTest, MatchesApimachinery) {
  struct Case {
    std::chrono::nanoseconds d;
    std::string want;
  };
  // Rows marked (upstream) are apimachinery duration_test.go TestHumanDuration.
  const Case cases[] = {
      {seconds(-3), "<invalid>"},
      {std::chrono::milliseconds(-1999), "0s"},  // clock skew under 2 s is "now"
      {seconds(-1), "0s"},
      {seconds(0), "0s"},
      {seconds(1), "1s"},  // (upstream)
      {seconds(45), "45s"},
      {seconds(70), "70s"},  // (upstream)
      {seconds(119), "119s"},
      {seconds(120), "2m"},
      {seconds(190), "3m10s"},  // (upstream)
      {seconds(192), "3m12s"},
      {minutes(9) + seconds(59), "9m59s"},
      {minutes(10), "10m"},
      {minutes(70), "70m"},  // (upstream)
      {minutes(179), "179m"},
      {hours(3), "3h"},
      {hours(5) + minutes(12), "5h12m"},
      {hours(7) + minutes(59), "7h59m"},
      {hours(8), "8h"},
      {hours(47), "47h"},  // (upstream)
      {hours(48), "2d"},
      {hours(49), "2d1h"},  // (upstream)
      {hours(5 * 24), "5d"},
      {hours(8 * 24 + 2), "8d"},  // (upstream)
      {hours(367 * 24), "367d"},  // (upstream)
      {hours(365 * 2 * 24), "2y"},
      {hours(365 * 2 * 24 + 25), "2y1d"},  // (upstream)
      {hours((365 * 2 + 30) * 24), "2y30d"},
      {hours(365 * 8 * 24 + 2), "8y"},  // (upstream)
      {hours(365 * 20 * 24), "20y"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(HumanDuration(c.d), c.want) << c.d.count() << "ns";
  }
}

TEST(TimestampTest, ParsesRfc3339AsMetav1Time) {
  Timestamp t = ParseTimestamp("2025-01-01T00:00:00Z");
  EXPECT_FALSE(t.zero);
  EXPECT_EQ(t.seconds, 1735689600);
  Timestamp offset = ParseTimestamp("2025-01-01T02:00:00+02:00");
  EXPECT_EQ(offset.seconds, 1735689600);
  Timestamp micro = ParseTimestamp("2025-01-01T00:00:00.123456Z");  // MicroTime (eventTime)
  EXPECT_EQ(micro.seconds, 1735689600);
  EXPECT_EQ(micro.nanos, 123456000);
  EXPECT_TRUE(ParseTimestamp("").zero);
  EXPECT_TRUE(ParseTimestamp("yesterday").zero);
  EXPECT_TRUE(ParseTimestamp("2025-02-30T00:00:00Z").zero);
  EXPECT_TRUE(ParseTimestamp("0001-01-01T00:00:00Z").zero) << "Go's zero time prints <unknown>";
  EXPECT_EQ(TranslateTimestampSince(ParseTimestamp(""), kNow), "<unknown>");
  EXPECT_EQ(TranslateTimestampSince(ParseTimestamp(Ts(kNow - hours(120))), kNow), "5d");
}

TEST(IncludeObjectTest, ParsesQueryValues) {
  EXPECT_EQ(*ParseIncludeObject(""), IncludeObject::kMetadata);
  EXPECT_EQ(*ParseIncludeObject("Metadata"), IncludeObject::kMetadata);
  EXPECT_EQ(*ParseIncludeObject("Object"), IncludeObject::kObject);
  EXPECT_EQ(*ParseIncludeObject("None"), IncludeObject::kNone);
  Result<IncludeObject> bad = ParseIncludeObject("everything");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), StatusCode::kBadRequest);
  EXPECT_EQ(bad.error().message(), "unrecognized includeObject value: \"everything\"");
}

// --- Nodes -------------------------------------------------------------------------------------

TEST(NodeTableTest, CordonedControlPlaneNode) {
  std::string node = R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"node-1",
    "creationTimestamp":")" +
                     Ts(kNow - hours(5 * 24)) + R"(",
    "labels":{"node-role.kubernetes.io/control-plane":"","zone":"a"}},
    "spec":{"unschedulable":true},
    "status":{"conditions":[{"type":"MemoryPressure","status":"False"},
                            {"type":"Ready","status":"True"}],
      "addresses":[{"type":"Hostname","address":"node-1"},{"type":"InternalIP","address":"10.0.0.11"}],
      "nodeInfo":{"kubeletVersion":"v1.35.0","osImage":"Linux","kernelVersion":"6.1.0",
                  "containerRuntimeVersion":"containerd://1.7.0"}}})";
  EXPECT_EQ(Cells(TableKind::kNode, node),
            (std::vector<std::string>{"node-1", "Ready,SchedulingDisabled", "control-plane", "5d",
                                      "v1.35.0", "10.0.0.11", "<none>", "Linux", "6.1.0",
                                      "containerd://1.7.0"}));
}

TEST(NodeTableTest, StatusAndRoles) {
  struct Case {
    std::string name;
    std::string conditions;
    std::string labels;
    std::string want_status;
    std::string want_roles;
  };
  const Case cases[] = {
      {"no Ready condition", "[]", "{}", "Unknown", "<none>"},
      {"Ready=False", R"([{"type":"Ready","status":"False"}])", "{}", "NotReady", "<none>"},
      {"Ready=Unknown (lost heartbeat)", R"([{"type":"Ready","status":"Unknown"}])", "{}",
       "NotReady", "<none>"},
      {"roles sorted, deduplicated, legacy label", R"([{"type":"Ready","status":"True"}])",
       R"({"node-role.kubernetes.io/worker":"","node-role.kubernetes.io/control-plane":"true",
           "kubernetes.io/role":"worker","node-role.kubernetes.io/":"x"})",
       "Ready", "control-plane,worker"},
  };
  for (const Case& c : cases) {
    std::string node = R"({"metadata":{"name":"n","labels":)" + c.labels +
                       R"(},"status":{"conditions":)" + c.conditions + "}}";
    std::vector<std::string> cells = Cells(TableKind::kNode, node);
    EXPECT_EQ(cells[1], c.want_status) << c.name;
    EXPECT_EQ(cells[2], c.want_roles) << c.name;
    EXPECT_EQ(cells[3], "<unknown>") << "no creationTimestamp";
    EXPECT_EQ(cells[7], "<unknown>") << "empty OS image";
  }
}

// --- Pods --------------------------------------------------------------------------------------

struct PodCase {
  std::string name;  // what the case shows
  std::string pod;   // the pod's spec/status/metadata members (name and age are added)
  std::string ready;
  std::string status;
  std::string restarts;
};

std::vector<std::string> PodCells(const std::string& members) {
  std::string pod = R"({"kind":"Pod","apiVersion":"v1",)" + members + "}";
  return Cells(TableKind::kPod, pod);
}

std::string Meta(const std::string& extra = "") {
  return R"("metadata":{"name":"web","namespace":"default","creationTimestamp":")" +
         Ts(kNow - minutes(3) - seconds(12)) + "\"" + extra + "}";
}

TEST(PodTableTest, StatusColumnFollowsUpstreamPrintPod) {
  const std::string running_container =
      R"({"name":"app","ready":true,"restartCount":0,"state":{"running":{"startedAt":"2025-01-01T00:00:00Z"}}})";
  const std::string two_min_ago = Ts(kNow - minutes(2));
  const PodCase cases[] = {
      {"running and ready",
       Meta() + R"(,"spec":{"containers":[{"name":"app"}]},
         "status":{"phase":"Running","containerStatuses":[)" +
           running_container + "]}",
       "1/1", "Running", "0"},
      {"pending, no statuses yet", Meta() + R"(,"spec":{"containers":[{"name":"a"},{"name":"b"}]},
         "status":{"phase":"Pending"})",
       "0/2", "Pending", "0"},
      {"crash loop: waiting reason wins, restarts show the last restart",
       Meta() + R"(,"spec":{"containers":[{"name":"app"}]},
         "status":{"phase":"Running","containerStatuses":[{"name":"app","ready":false,
           "restartCount":5,"state":{"waiting":{"reason":"CrashLoopBackOff"}},
           "lastState":{"terminated":{"exitCode":1,"reason":"Error","finishedAt":")" +
           two_min_ago + R"("}}}]})",
       "0/1", "CrashLoopBackOff", "5 (2m ago)"},
      {"deletion requested: Terminating",
       Meta(R"(,"deletionTimestamp":"2025-06-01T11:59:00Z")") +
           R"(,"spec":{"containers":[{"name":"app"}]},
         "status":{"phase":"Running","containerStatuses":[)" +
           running_container + "]}",
       "1/1", "Terminating", "0"},
      {"deletion of a pod on a lost node: Unknown",
       Meta(R"(,"deletionTimestamp":"2025-06-01T11:59:00Z")") +
           R"(,"spec":{"containers":[{"name":"app"}]},
         "status":{"phase":"Running","reason":"NodeLost"})",
       "0/1", "Unknown", "0"},
      {"deletion of a completed pod keeps Completed",
       Meta(R"(,"deletionTimestamp":"2025-06-01T11:59:00Z")") +
           R"(,"spec":{"containers":[{"name":"app"}]},
         "status":{"phase":"Succeeded","containerStatuses":[{"name":"app","ready":false,
           "restartCount":0,"state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]})",
       "0/1", "Completed", "0"},
      {"null deletionTimestamp is unset",
       Meta(R"(,"deletionTimestamp":null)") +
           R"(,"spec":{"containers":[{"name":"app"}]},"status":{"phase":"Running"})",
       "0/1", "Running", "0"},
      {"evicted: status.reason", Meta() + R"(,"spec":{"containers":[{"name":"app"}]},
         "status":{"phase":"Failed","reason":"Evicted"})",
       "0/1", "Evicted", "0"},
      {"terminated without reason: signal", Meta() + R"(,"spec":{"containers":[{"name":"app"}]},
         "status":{"phase":"Running","containerStatuses":[{"name":"app","restartCount":1,
           "state":{"terminated":{"exitCode":137,"signal":9}}}]})",
       "0/1", "Signal:9", "1"},
      {"terminated without reason: exit code", Meta() + R"(,"spec":{"containers":[{"name":"app"}]},
         "status":{"phase":"Running","containerStatuses":[{"name":"app",
           "state":{"terminated":{"exitCode":3}}}]})",
       "0/1", "ExitCode:3", "0"},
      {"one container completed, one running and pod Ready: Running",
       Meta() + R"(,"spec":{"containers":[{"name":"app"},{"name":"job"}]},
         "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],
           "containerStatuses":[)" +
           running_container +
           R"(,{"name":"job","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]})",
       "1/2", "Running", "0"},
      {"one container completed, one running, pod not Ready: NotReady",
       Meta() + R"(,"spec":{"containers":[{"name":"app"},{"name":"job"}]},
         "status":{"phase":"Running","containerStatuses":[)" +
           running_container +
           R"(,{"name":"job","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]})",
       "1/2", "NotReady", "0"},
      {"a failed container wins over a completed one",
       Meta() + R"(,"spec":{"containers":[{"name":"a"},{"name":"b"}]},
         "status":{"phase":"Failed","containerStatuses":[
           {"name":"a","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},
           {"name":"b","state":{"terminated":{"exitCode":2,"reason":"Error"}}}]})",
       "0/2", "Error", "0"},
      {"init container waiting", Meta() + R"(,"spec":{"initContainers":[{"name":"init"}],
           "containers":[{"name":"app"}]},
         "status":{"phase":"Pending","initContainerStatuses":[{"name":"init","restartCount":2,
           "state":{"waiting":{"reason":"ErrImagePull"}}}]})",
       "0/1", "Init:ErrImagePull", "2"},
      {"init containers running: Init:i/n", Meta() + R"(,"spec":{"initContainers":[{"name":"i1"},
           {"name":"i2"}],"containers":[{"name":"app"}]},
         "status":{"phase":"Pending","initContainerStatuses":[
           {"name":"i1","state":{"terminated":{"exitCode":0}}},
           {"name":"i2","state":{"running":{}}}]})",
       "0/1", "Init:1/2", "0"},
      {"init container failed", Meta() + R"(,"spec":{"initContainers":[{"name":"init"}],
           "containers":[{"name":"app"}]},
         "status":{"phase":"Pending","initContainerStatuses":[{"name":"init",
           "state":{"terminated":{"exitCode":1,"reason":"Error"}}}]})",
       "0/1", "Init:Error", "0"},
      {"sidecar (restartable init container) counts as ready",
       Meta() + R"(,"spec":{"initContainers":[{"name":"proxy","restartPolicy":"Always"}],
           "containers":[{"name":"app"}]},
         "status":{"phase":"Running","conditions":[{"type":"Initialized","status":"True"}],
           "initContainerStatuses":[{"name":"proxy","ready":true,"started":true,"restartCount":1,
             "state":{"running":{}}}],
           "containerStatuses":[)" +
           running_container + "]}",
       "2/2", "Running", "1"},
      {"scheduling gates", Meta() + R"(,"spec":{"containers":[{"name":"app"}]},
         "status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False",
           "reason":"SchedulingGated"}]})",
       "0/1", "SchedulingGated", "0"},
  };
  for (const PodCase& c : cases) {
    std::vector<std::string> cells = PodCells(c.pod);
    ASSERT_EQ(cells.size(), 9u) << c.name;
    EXPECT_EQ(cells[0], "web") << c.name;
    EXPECT_EQ(cells[1], c.ready) << c.name;
    EXPECT_EQ(cells[2], c.status) << c.name;
    EXPECT_EQ(cells[3], c.restarts) << c.name;
    EXPECT_EQ(cells[4], "3m12s") << c.name;
  }
}

TEST(PodTableTest, WideColumns) {
  std::vector<std::string> bare =
      PodCells(Meta() + R"(,"spec":{"containers":[{"name":"app"}]},"status":{})");
  EXPECT_EQ(std::vector<std::string>(bare.begin() + 5, bare.end()),
            (std::vector<std::string>{"<none>", "<none>", "<none>", "<none>"}));

  std::vector<std::string> full = PodCells(Meta() + R"(,
    "spec":{"nodeName":"node-2","containers":[{"name":"app"}],
            "readinessGates":[{"conditionType":"example.com/lb"},{"conditionType":"example.com/dns"}]},
    "status":{"phase":"Pending","podIPs":[{"ip":"10.1.0.7"},{"ip":"fd00::7"}],
      "nominatedNodeName":"node-3",
      "conditions":[{"type":"example.com/lb","status":"True"},
                    {"type":"example.com/dns","status":"False"}]})");
  EXPECT_EQ(std::vector<std::string>(full.begin() + 5, full.end()),
            (std::vector<std::string>{"10.1.0.7", "node-2", "node-3", "1/2"}));
}

TEST(PodTableTest, CompletedPodsCarryRowConditions) {
  rapidjson::Document pod = Parse(R"({"metadata":{"name":"job"},"status":{"phase":"Succeeded"}})");
  std::string row;
  AppendTableRow(TableKind::kPod, pod, IncludeObject::kNone, kNow, &row);
  rapidjson::Document parsed = Parse(row);
  ASSERT_TRUE(parsed.HasMember("conditions"));
  EXPECT_STREQ(parsed["conditions"][0]["type"].GetString(), "Completed");
  EXPECT_STREQ(parsed["conditions"][0]["reason"].GetString(), "Succeeded");
  EXPECT_STREQ(parsed["conditions"][0]["message"].GetString(),
               "The pod has completed successfully.");
  EXPECT_TRUE(parsed["object"].IsNull());
}

// --- Events, namespaces, leases, priority classes, daemon sets --------------------------------

TEST(EventTableTest, NodeEvent) {
  std::string event = R"({"kind":"Event","apiVersion":"v1",
    "metadata":{"name":"node-1.17a2b","namespace":"default"},
    "involvedObject":{"kind":"Node","name":"node-1","uid":"node-1"},
    "reason":"NodeNotReady","message":"  Node node-1 status is now: NodeNotReady\n",
    "source":{"component":"node-controller","host":"cp-1"},
    "firstTimestamp":")" +
                      Ts(kNow - hours(2)) + R"(","lastTimestamp":")" + Ts(kNow - seconds(45)) +
                      R"(","count":3,"type":"Warning"})";
  EXPECT_EQ(Cells(TableKind::kEvent, event),
            (std::vector<std::string>{
                "45s", "Warning", "NodeNotReady", "node/node-1", "", "node-controller, cp-1",
                "Node node-1 status is now: NodeNotReady", "120m", "3", "node-1.17a2b"}));
}

TEST(EventTableTest, NewStyleEventFallsBackToEventTimeAndReportingController) {
  std::string event = R"({"metadata":{"name":"e"},
    "involvedObject":{"kind":"Pod","namespace":"default","name":"web","fieldPath":"spec.containers{app}"},
    "reason":"Scheduled","message":"ok","type":"Normal",
    "eventTime":")" + Ts(kNow - minutes(5)).substr(0, 19) +
                      R"(.250000Z",
    "reportingComponent":"default-scheduler","reportingInstance":"default-scheduler-cp-1",
    "firstTimestamp":null,"lastTimestamp":null})";
  std::vector<std::string> cells = Cells(TableKind::kEvent, event);
  EXPECT_EQ(cells[0], "4m59s") << "last seen = first seen = eventTime";
  EXPECT_EQ(cells[3], "pod/web");
  EXPECT_EQ(cells[4], "spec.containers{app}");
  EXPECT_EQ(cells[5], "default-scheduler, default-scheduler-cp-1");
  EXPECT_EQ(cells[7], "4m59s");
  EXPECT_EQ(cells[8], "1") << "a singleton event without count counts once";
}

TEST(EventTableTest, SeriesAndKindWithoutName) {
  std::string event = R"({"metadata":{"name":"e"},"involvedObject":{"kind":"Node"},
    "firstTimestamp":")" +
                      Ts(kNow - hours(30)) + R"(","count":0,
    "series":{"count":7,"lastObservedTime":")" +
                      Ts(kNow - seconds(10)).substr(0, 19) + R"(.000000Z"}})";
  std::vector<std::string> cells = Cells(TableKind::kEvent, event);
  EXPECT_EQ(cells[0], "10s") << "a series is last seen at its lastObservedTime";
  EXPECT_EQ(cells[3], "node");
  EXPECT_EQ(cells[5], "");
  EXPECT_EQ(cells[7], "30h");
  EXPECT_EQ(cells[8], "7");
}

TEST(OtherTablesTest, NamespaceLeasePriorityClass) {
  std::string age = Ts(kNow - hours(49));
  EXPECT_EQ(Cells(TableKind::kNamespace, R"({"metadata":{"name":"team-a","creationTimestamp":")" +
                                             age + R"("},"status":{"phase":"Terminating"}})"),
            (std::vector<std::string>{"team-a", "Terminating", "2d1h"}));
  EXPECT_EQ(Cells(TableKind::kLease, R"({"metadata":{"name":"node-1","creationTimestamp":")" + age +
                                         R"("},"spec":{"holderIdentity":"node-1"}})"),
            (std::vector<std::string>{"node-1", "node-1", "2d1h"}));
  EXPECT_EQ(Cells(TableKind::kLease, R"({"metadata":{"name":"l"},"spec":{"holderIdentity":null}})"),
            (std::vector<std::string>{"l", "", "<unknown>"}));
  EXPECT_EQ(Cells(TableKind::kPriorityClass,
                  R"({"metadata":{"name":"system-node-critical","creationTimestamp":")" + age +
                      R"("},"value":2000001000,"preemptionPolicy":"PreemptLowerPriority"})"),
            (std::vector<std::string>{"system-node-critical", "2000001000", "false", "2d1h",
                                      "PreemptLowerPriority"}));
}

TEST(OtherTablesTest, DaemonSet) {
  std::string ds = R"({"metadata":{"name":"agent","namespace":"kube-system",
      "creationTimestamp":")" +
                   Ts(kNow - hours(5 * 24)) + R"("},
    "spec":{"selector":{"matchLabels":{"app":"agent"},
              "matchExpressions":[{"key":"tier","operator":"In","values":["b","a"]},
                                  {"key":"canary","operator":"DoesNotExist"}]},
      "template":{"spec":{"nodeSelector":{"zone":"a","kubernetes.io/os":"linux"},
        "containers":[{"name":"agent","image":"agent:1.0"},{"name":"log","image":"fluent:2"}]}}},
    "status":{"desiredNumberScheduled":3,"currentNumberScheduled":3,"numberReady":2,
              "updatedNumberScheduled":3,"numberAvailable":2}})";
  EXPECT_EQ(Cells(TableKind::kDaemonSet, ds),
            (std::vector<std::string>{"agent", "3", "3", "2", "3", "2",
                                      "kubernetes.io/os=linux,zone=a", "5d", "agent,log",
                                      "agent:1.0,fluent:2", "app=agent,!canary,tier in (a,b)"}));

  std::vector<std::string> bare = Cells(TableKind::kDaemonSet, R"({"metadata":{"name":"x"}})");
  EXPECT_EQ(bare[6], "<none>");
  EXPECT_EQ(bare[10], "<none>");
  std::vector<std::string> bad = Cells(
      TableKind::kDaemonSet,
      R"({"spec":{"selector":{"matchExpressions":[{"key":"a","operator":"Gt","values":["1"]}]}}})");
  EXPECT_EQ(bad[10], "<error>");
}

// --- Whole tables ------------------------------------------------------------------------------

const char kPodJson[] =
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web","namespace":"default",)"
    R"("uid":"u1","resourceVersion":"105","creationTimestamp":"2025-05-27T12:00:00Z",)"
    R"("labels":{"app":"web"}},"spec":{"containers":[{"name":"app"}]},"status":{"phase":"Pending"}})";

TEST(TableDocumentTest, ShapeKubectlNeeds) {
  rapidjson::Document pod = Parse(kPodJson);
  const rapidjson::Value* objects[] = {&pod};
  std::string table = EncodeTable(TableKind::kPod, objects, {.resource_version = "120"}, {}, kNow);
  rapidjson::Document doc = Parse(table);
  EXPECT_STREQ(doc["kind"].GetString(), "Table");
  EXPECT_STREQ(doc["apiVersion"].GetString(), "meta.k8s.io/v1");
  EXPECT_STREQ(doc["metadata"]["resourceVersion"].GetString(), "120");
  EXPECT_FALSE(doc["metadata"].HasMember("continue"));

  const auto& columns = doc["columnDefinitions"].GetArray();
  ASSERT_EQ(columns.Size(), 9u);
  EXPECT_STREQ(columns[0]["name"].GetString(), "Name");
  EXPECT_STREQ(columns[0]["format"].GetString(), "name");
  EXPECT_EQ(columns[4]["priority"].GetInt(), 0);
  EXPECT_STREQ(columns[5]["name"].GetString(), "IP");
  EXPECT_EQ(columns[5]["priority"].GetInt(), 1) << "wide-only column";
  for (const auto& c : columns) {
    for (const char* key : {"name", "type", "format", "description", "priority"}) {
      EXPECT_TRUE(c.HasMember(key)) << key;
    }
  }

  ASSERT_EQ(doc["rows"].Size(), 1u);
  const auto& row = doc["rows"][0];
  EXPECT_STREQ(row["cells"][4].GetString(), "5d");
  // Without the row object, `get -A` loses NAMESPACE and --show-labels prints nothing (§4).
  const auto& object = row["object"];
  EXPECT_STREQ(object["kind"].GetString(), "PartialObjectMetadata");
  EXPECT_STREQ(object["apiVersion"].GetString(), "meta.k8s.io/v1");
  EXPECT_STREQ(object["metadata"]["namespace"].GetString(), "default");
  EXPECT_STREQ(object["metadata"]["labels"]["app"].GetString(), "web");
  EXPECT_FALSE(object.HasMember("spec"));
}

TEST(TableDocumentTest, IncludeObjectAndListMeta) {
  std::string out;
  TableWriter writer(TableKind::kPod,
                     {.include_object = IncludeObject::kObject, .column_definitions = false}, kNow,
                     &out);
  writer.Begin({.resource_version = "7", .continue_token = "abc", .remaining_item_count = 12});
  ASSERT_TRUE(writer.AddRowJson(kPodJson).ok());
  rapidjson::Document pod = Parse(kPodJson);
  writer.AddRow(pod);
  Status bad = writer.AddRowJson("{not json");
  EXPECT_EQ(bad.code(), StatusCode::kInternal);
  writer.End();
  EXPECT_EQ(writer.rows(), 2u);

  rapidjson::Document doc = Parse(out);
  EXPECT_TRUE(doc["columnDefinitions"].IsNull());
  EXPECT_STREQ(doc["metadata"]["continue"].GetString(), "abc");
  EXPECT_EQ(doc["metadata"]["remainingItemCount"].GetInt(), 12);
  ASSERT_EQ(doc["rows"].Size(), 2u);
  for (const auto& row : doc["rows"].GetArray()) {
    EXPECT_STREQ(row["object"]["kind"].GetString(), "Pod");  // --sort-by needs the whole object
    EXPECT_STREQ(row["object"]["spec"]["containers"][0]["name"].GetString(), "app");
  }

  std::string none = EncodeTable(
      TableKind::kPod, {}, {},
      {.include_object = IncludeObject::kNone, .api_version = "meta.k8s.io/v1beta1"}, kNow);
  rapidjson::Document empty = Parse(none);
  EXPECT_STREQ(empty["apiVersion"].GetString(), "meta.k8s.io/v1beta1");
  EXPECT_TRUE(empty["metadata"].IsObject());
  EXPECT_EQ(empty["metadata"].MemberCount(), 0u);
  EXPECT_TRUE(empty["rows"].IsArray());
  EXPECT_EQ(empty["rows"].Size(), 0u);
}

TEST(TableDocumentTest, RowMetadataFromStoredBytes) {
  // AddRowJson copies the metadata bytes as they are; strings holding braces, quotes and
  // escapes must not confuse it, and a member it cannot find raw (an escaped key) falls back to
  // the parsed document.
  const std::string stored =
      R"({"kind":"Pod","apiVersion":"v1","status":{"message":"}{\"]"},"metadata":{"name":"p",)"
      R"("annotations":{"note":"a } b \" c {[","x":"\u007d"},"labels":{"app":"web"}},)"
      R"("spec":{"containers":[]}})";
  const std::string escaped_key = R"({"metad\u0061ta":{"name":"q","labels":{"k":"v"}}})";
  std::string out;
  TableWriter writer(TableKind::kPod, {}, kNow, &out);
  writer.Begin({});
  ASSERT_TRUE(writer.AddRowJson(stored).ok());
  ASSERT_TRUE(writer.AddRowJson(escaped_key).ok());
  writer.End();
  rapidjson::Document doc = Parse(out);
  rapidjson::Document original = Parse(stored);
  EXPECT_TRUE(doc["rows"][0]["object"]["metadata"] == original["metadata"]);
  EXPECT_STREQ(doc["rows"][0]["object"]["metadata"]["annotations"]["x"].GetString(), "}");
  EXPECT_STREQ(doc["rows"][1]["cells"][0].GetString(), "q");
  EXPECT_STREQ(doc["rows"][1]["object"]["metadata"]["labels"]["k"].GetString(), "v");
}

TEST(TableDocumentTest, EveryKindHasANameColumnAndWellFormedColumns) {
  for (TableKind kind :
       {TableKind::kNamespace, TableKind::kNode, TableKind::kPod, TableKind::kEvent,
        TableKind::kLease, TableKind::kPriorityClass, TableKind::kDaemonSet}) {
    std::string columns;
    AppendTableColumns(kind, &columns);
    rapidjson::Document doc = Parse(columns);
    ASSERT_TRUE(doc.IsArray());
    int names = 0;
    for (const auto& c : doc.GetArray()) {
      if (std::string_view(c["format"].GetString()) == "name") ++names;
    }
    EXPECT_EQ(names, 1) << "kubectl keys rows by the one name-format column";
  }
}

}  // namespace
}  // namespace kt::api
