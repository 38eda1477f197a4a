#include "api/table.h"

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include <rapidjson/error/en.h>
#include <rapidjson/writer.h>

#include "api/string_output.h"
#include "core/validation.h"

namespace kt::api {

namespace {

// --- Output ----------------------------------------------------------------------------------

using JsonWriter = rapidjson::Writer<StringOutput>;

void WriteString(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}
void WriteKey(JsonWriter& w, std::string_view s) {
  w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// --- Reading the document (missing or mistyped fields read as Go zero values) ---------------

using rapidjson::Value;

const Value* Member(const Value* v, std::string_view key) {
  if (v == nullptr || !v->IsObject()) return nullptr;
  const Value name(rapidjson::StringRef(key.data(), key.size()));
  auto it = v->FindMember(name);
  if (it == v->MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

const Value* Object(const Value* v, std::string_view key) {
  const Value* m = Member(v, key);
  return m != nullptr && m->IsObject() ? m : nullptr;
}

std::span<const Value> Array(const Value* v, std::string_view key) {
  const Value* m = Member(v, key);
  if (m == nullptr || !m->IsArray()) return {};
  return {m->Begin(), m->End()};
}

std::string_view Str(const Value* v) {
  if (v == nullptr || !v->IsString()) return {};
  return {v->GetString(), v->GetStringLength()};
}
std::string_view Str(const Value* v, std::string_view key) { return Str(Member(v, key)); }

int64_t Int(const Value* v, std::string_view key) {
  const Value* m = Member(v, key);
  if (m == nullptr) return 0;
  if (m->IsInt64()) return m->GetInt64();
  if (m->IsUint64()) return static_cast<int64_t>(m->GetUint64());
  return 0;
}

bool Bool(const Value* v, std::string_view key) {
  const Value* m = Member(v, key);
  return m != nullptr && m->IsBool() && m->GetBool();
}

bool Present(const Value* v, std::string_view key) { return Member(v, key) != nullptr; }

// --- Time ------------------------------------------------------------------------------------

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

// Go's zero time.Time, 0001-01-01T00:00:00Z, in Unix seconds.
constexpr int64_t kGoZeroUnixSeconds = -62135596800;

constexpr int64_t kNanosPerSecond = 1'000'000'000;

struct UnixNanos {
  int64_t seconds;
  int32_t nanos;
};

UnixNanos Split(TimePoint t) {
  int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  int64_t s = ns / kNanosPerSecond;
  int64_t rem = ns % kNanosPerSecond;
  if (rem < 0) {
    rem += kNanosPerSecond;
    --s;
  }
  return {s, static_cast<int32_t>(rem)};
}

// now - t as Go's Time.Sub: saturates at the bounds of a Duration.
std::chrono::nanoseconds Since(const Timestamp& t, TimePoint now) {
  UnixNanos n = Split(now);
  int64_t ds = n.seconds - t.seconds;
  constexpr int64_t kMaxSeconds = INT64_MAX / kNanosPerSecond - 1;
  if (ds > kMaxSeconds) return std::chrono::nanoseconds(INT64_MAX);
  if (ds < -kMaxSeconds) return std::chrono::nanoseconds(INT64_MIN);
  return std::chrono::nanoseconds(ds * kNanosPerSecond + (n.nanos - t.nanos));
}

bool Before(const Timestamp& a, const Timestamp& b) {
  // Go's Before on zero times: the zero time is earlier than any set time.
  if (a.zero != b.zero) return a.zero;
  if (a.zero) return false;
  return a.seconds < b.seconds || (a.seconds == b.seconds && a.nanos < b.nanos);
}

// --- Formatting helpers ----------------------------------------------------------------------

std::string Itoa(int64_t v) { return std::to_string(v); }

// Go's unicode.IsSpace over UTF-8, for strings.TrimSpace: ASCII whitespace, U+0085, U+00A0,
// U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
size_t LeadingSpace(std::string_view s) {
  auto c = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  if (s.empty()) return 0;
  unsigned char b = c(0);
  if (b == ' ' || (b >= '\t' && b <= '\r')) return 1;
  if (b == 0xC2 && s.size() >= 2 && (c(1) == 0x85 || c(1) == 0xA0)) return 2;
  if (b == 0xE1 && s.size() >= 3 && c(1) == 0x9A && c(2) == 0x80) return 3;
  if (b == 0xE2 && s.size() >= 3 && c(1) == 0x80 &&
      (c(2) <= 0x8A || c(2) == 0xA8 || c(2) == 0xA9 || c(2) == 0xAF))
    return 3;
  if (b == 0xE2 && s.size() >= 3 && c(1) == 0x81 && c(2) == 0x9F) return 3;
  if (b == 0xE3 && s.size() >= 3 && c(1) == 0x80 && c(2) == 0x80) return 3;
  return 0;
}

size_t TrailingSpace(std::string_view s) {
  for (size_t n : {1, 2, 3}) {
    if (s.size() >= n && LeadingSpace(s.substr(s.size() - n)) == n) return n;
  }
  return 0;
}

std::string_view TrimSpace(std::string_view s) {
  while (size_t n = LeadingSpace(s)) s.remove_prefix(n);
  while (size_t n = TrailingSpace(s)) s.remove_suffix(n);
  return s;
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) {
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  }
  return out;
}

// labels.FormatLabels: "k=v,k2=v2" sorted by key, "<none>" when empty.
std::string FormatLabels(const Value* map) {
  std::vector<std::pair<std::string_view, std::string_view>> entries;
  if (map != nullptr && map->IsObject()) {
    for (const auto& m : map->GetObject()) {
      entries.emplace_back(std::string_view(m.name.GetString(), m.name.GetStringLength()),
                           Str(&m.value));
    }
  }
  if (entries.empty()) return "<none>";
  std::sort(entries.begin(), entries.end());
  std::string out;
  for (const auto& [k, v] : entries) {
    if (!out.empty()) out += ',';
    out.append(k).append("=").append(v);
  }
  return out;
}

// metav1.FormatLabelSelector: LabelSelectorAsSelector(...).String(), "<none>" when empty,
// "<error>" when the selector does not convert (bad operator, key or value).
std::string FormatLabelSelector(const Value* selector) {
  struct Req {
    std::string_view key;
    std::string text;
  };
  std::vector<Req> reqs;
  if (selector == nullptr || !selector->IsObject()) return "<none>";
  if (const Value* ml = Object(selector, "matchLabels")) {
    for (const auto& m : ml->GetObject()) {
      std::string_view k(m.name.GetString(), m.name.GetStringLength());
      std::string_view v = Str(&m.value);
      if (!IsQualifiedName(k).empty() || !IsValidLabelValue(v).empty()) return "<error>";
      reqs.push_back({k, std::string(k) + "=" + std::string(v)});
    }
  }
  for (const Value& expr : Array(selector, "matchExpressions")) {
    std::string_view key = Str(&expr, "key");
    std::string_view op = Str(&expr, "operator");
    std::vector<std::string_view> values;
    for (const Value& v : Array(&expr, "values")) values.push_back(Str(&v));
    if (!IsQualifiedName(key).empty()) return "<error>";
    for (std::string_view v : values) {
      if (!IsValidLabelValue(v).empty()) return "<error>";
    }
    std::string text;
    if (op == "In" || op == "NotIn") {
      if (values.empty()) return "<error>";
      std::sort(values.begin(), values.end());
      text.append(key).append(op == "In" ? " in (" : " notin (");
      for (size_t i = 0; i < values.size(); ++i) {
        if (i > 0) text += ',';
        text.append(values[i]);
      }
      text += ')';
    } else if (op == "Exists" || op == "DoesNotExist") {
      if (!values.empty()) return "<error>";
      if (op == "DoesNotExist") text += '!';
      text.append(key);
    } else {
      return "<error>";
    }
    reqs.push_back({key, std::move(text)});
  }
  std::stable_sort(reqs.begin(), reqs.end(),
                   [](const Req& a, const Req& b) { return a.key < b.key; });
  std::string out;
  for (const Req& r : reqs) {
    if (!out.empty()) out += ',';
    out += r.text;
  }
  return out.empty() ? "<none>" : out;
}

std::string Age(const Value& object, TimePoint now) {
  return TranslateTimestampSince(
      ParseTimestamp(Str(Object(&object, "metadata"), "creationTimestamp")), now);
}

std::string_view Name(const Value& object) { return Str(Object(&object, "metadata"), "name"); }

// --- Column definitions (upstream AddHandlers; descriptions are the swagger docs it uses) -----

constexpr std::string_view kNameDoc =
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
constexpr std::string_view kCreationDoc =
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate operations. "
    "Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\n"
    "Populated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#metadata";
constexpr std::string_view kAddressesDoc =
    "List of addresses reachable to the node. Queried from cloud provider, if available. More "
    "info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is "
    "declared as mergeable, but the merge key is not sufficiently unique, which can cause data "
    "corruption when it is merged. Callers should instead use a full-replacement patch. See "
    "https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change "
    "during the lifetime of a Node. However, there are some exceptions where this may not be "
    "possible, such as Pods that inherit a Node's address in its own status or consumers of the "
    "downward API (status.hostIP).";
constexpr std::string_view kContainersDoc = "Names of each container in the template.";
constexpr std::string_view kImagesDoc = "Images referenced by each container in the template.";

constexpr std::array kNodeColumns = {
    TableColumn{"Name", "string", "name", kNameDoc, 0},
    TableColumn{"Status", "string", "", "The status of the node", 0},
    TableColumn{"Roles", "string", "", "The roles of the node", 0},
    TableColumn{"Age", "string", "", kCreationDoc, 0},
    TableColumn{"Version", "string", "", "Kubelet Version reported by the node.", 0},
    TableColumn{"Internal-IP", "string", "", kAddressesDoc, 1},
    TableColumn{"External-IP", "string", "", kAddressesDoc, 1},
    TableColumn{"OS-Image", "string", "",
                "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 "
                "(wheezy)).",
                1},
    TableColumn{"Kernel-Version", "string", "",
                "Kernel Version reported by the node from 'uname -r' (e.g. "
                "3.16.0-0.bpo.4-amd64).",
                1},
    TableColumn{"Container-Runtime", "string", "",
                "ContainerRuntime Version reported by the node through runtime remote API (e.g. "
                "containerd://1.4.2).",
                1},
};

constexpr std::array kPodColumns = {
    TableColumn{"Name", "string", "name", kNameDoc, 0},
    TableColumn{"Ready", "string", "",
                "The aggregate readiness state of this pod for accepting traffic.", 0},
    TableColumn{"Status", "string", "", "The aggregate status of the containers in this pod.", 0},
    TableColumn{"Restarts", "string", "",
                "The number of times the containers in this pod have been restarted and when the "
                "last container in this pod has restarted.",
                0},
    TableColumn{"Age", "string", "", kCreationDoc, 0},
    TableColumn{"IP", "string", "",
                "podIP address allocated to the pod. Routable at least within the cluster. Empty "
                "if not yet allocated.",
                1},
    TableColumn{"Node", "string", "",
                "NodeName indicates in which node this pod is scheduled. If empty, this pod is a "
                "candidate for scheduling by the scheduler defined in schedulerName. Once this "
                "field is set, the kubelet for this node becomes responsible for the lifecycle of "
                "this pod. This field should not be used to express a desire for the pod to be "
                "scheduled on a specific node. "
                "https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename",
                1},
    TableColumn{"Nominated Node", "string", "",
                "nominatedNodeName is set only when this pod preempts other pods on the node, but "
                "it cannot be scheduled right away as preemption victims receive their graceful "
                "termination periods. This field does not guarantee that the pod will be "
                "scheduled on this node. Scheduler may decide to place the pod elsewhere if other "
                "nodes become available sooner. Scheduler may also decide to give the resources "
                "on this node to a higher priority pod that is created after preemption. As a "
                "result, this field may be different than PodSpec.nodeName when the pod is "
                "scheduled.",
                1},
    TableColumn{"Readiness Gates", "string", "",
                "If specified, all readiness gates will be evaluated for pod readiness. A pod is "
                "ready when all its containers are ready AND all conditions specified in the "
                "readiness gates have status equal to \"True\" More info: "
                "https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates",
                1},
};

constexpr std::array kNamespaceColumns = {
    TableColumn{"Name", "string", "name", kNameDoc, 0},
    TableColumn{"Status", "string", "", "The status of the namespace", 0},
    TableColumn{"Age", "string", "", kCreationDoc, 0},
};

constexpr std::array kEventColumns = {
    TableColumn{"Last Seen", "string", "",
                "The time at which the most recent occurrence of this event was recorded.", 0},
    TableColumn{"Type", "string", "",
                "Type of this event (Normal, Warning), new types could be added in the future", 0},
    TableColumn{"Reason", "string", "",
                "This should be a short, machine understandable string that gives the reason for "
                "the transition into the object's current status.",
                0},
    TableColumn{"Object", "string", "", "The object that this event is about.", 0},
    TableColumn{"Subobject", "string", "",
                "If referring to a piece of an object instead of an entire object, this string "
                "should contain a valid JSON/Go field access statement, such as "
                "desiredState.manifest.containers[2]. For example, if the object reference is to "
                "a container within a pod, this would take on a value like: "
                "\"spec.containers{name}\" (where \"name\" refers to the name of the container "
                "that triggered the event) or if no container name is specified "
                "\"spec.containers[2]\" (container with index 2 in this pod). This syntax is "
                "chosen only to have some well-defined way of referencing a part of an object.",
                1},
    TableColumn{"Source", "string", "",
                "The component reporting this event. Should be a short machine understandable "
                "string.",
                1},
    TableColumn{"Message", "string", "",
                "A human-readable description of the status of this operation.", 0},
    TableColumn{"First Seen", "string", "",
                "The time at which the event was first recorded. (Time of server receipt is in "
                "TypeMeta.)",
                1},
    TableColumn{"Count", "string", "", "The number of times this event has occurred.", 1},
    TableColumn{"Name", "string", "name", kNameDoc, 1},
};

constexpr std::array kLeaseColumns = {
    TableColumn{"Name", "string", "name", kNameDoc, 0},
    TableColumn{"Holder", "string", "",
                "holderIdentity contains the identity of the holder of a current lease. If "
                "Coordinated Leader Election is used, the holder identity must be equal to the "
                "elected LeaseCandidate.metadata.name field.",
                0},
    TableColumn{"Age", "string", "", kCreationDoc, 0},
};

constexpr std::array kPriorityClassColumns = {
    TableColumn{"Name", "string", "name", kNameDoc, 0},
    TableColumn{"Value", "integer", "",
                "value represents the integer value of this priority class. This is the actual "
                "priority that pods receive when they have the name of this class in their pod "
                "spec.",
                0},
    TableColumn{"Global-Default", "boolean", "",
                "globalDefault specifies whether this PriorityClass should be considered as the "
                "default priority for pods that do not have any priority class. Only one "
                "PriorityClass can be marked as `globalDefault`. However, if more than one "
                "PriorityClasses exists with their `globalDefault` field set to true, the "
                "smallest value of such global default PriorityClasses will be used as the "
                "default priority.",
                0},
    TableColumn{"Age", "string", "", kCreationDoc, 0},
    TableColumn{"PreemptionPolicy", "string", "",
                "preemptionPolicy is the Policy for preempting pods with lower priority. One of "
                "Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.",
                0},
};

constexpr std::array kDaemonSetColumns = {
    TableColumn{"Name", "string", "name", kNameDoc, 0},
    TableColumn{"Desired", "integer", "",
                "The total number of nodes that should be running the daemon pod (including "
                "nodes correctly running the daemon pod). More info: "
                "https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/",
                0},
    TableColumn{"Current", "integer", "",
                "The number of nodes that are running at least 1 daemon pod and are supposed to "
                "run the daemon pod. More info: "
                "https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/",
                0},
    TableColumn{"Ready", "integer", "",
                "numberReady is the number of nodes that should be running the daemon pod and "
                "have one or more of the daemon pod running with a Ready Condition.",
                0},
    TableColumn{"Up-to-date", "integer", "",
                "The total number of nodes that are running updated daemon pod", 0},
    TableColumn{"Available", "integer", "",
                "The number of nodes that should be running the daemon pod and have one or more "
                "of the daemon pod running and available (ready for at least "
                "spec.minReadySeconds)",
                0},
    TableColumn{"Node Selector", "string", "",
                "NodeSelector is a selector which must be true for the pod to fit on a node. "
                "Selector which must match a node's labels for the pod to be scheduled on that "
                "node. More info: "
                "https://kubernetes.io/docs/concepts/configuration/assign-pod-node/",
                0},
    TableColumn{"Age", "string", "", kCreationDoc, 0},
    TableColumn{"Containers", "string", "", kContainersDoc, 1},
    TableColumn{"Images", "string", "", kImagesDoc, 1},
    TableColumn{"Selector", "string", "",
                "A label query over pods that are managed by the daemon set. Must match in order "
                "to be controlled. If empty, defaulted to labels on Pod template. More info: "
                "https://kubernetes.io/docs/concepts/overview/working-with-objects/"
                "labels/#label-selectors",
                1},
};

// --- Cells (upstream print* with GenerateOptions{Wide: true}, as the API server calls them) --

void NodeCells(JsonWriter& w, const Value& node, TimePoint now) {
  const Value* meta = Object(&node, "metadata");
  const Value* spec = Object(&node, "spec");
  const Value* status = Object(&node, "status");

  // Only the Ready condition counts (upstream NodeAllConditions); the last one of that type
  // wins, as in upstream's map.
  std::string state;
  for (const Value& c : Array(status, "conditions")) {
    if (Str(&c, "type") == "Ready") state = Str(&c, "status") == "True" ? "Ready" : "NotReady";
  }
  if (state.empty()) state = "Unknown";
  if (Bool(spec, "unschedulable")) state += ",SchedulingDisabled";

  // findNodeRoles: node-role.kubernetes.io/<role> keys and the legacy kubernetes.io/role value,
  // as a sorted set.
  constexpr std::string_view kRolePrefix = "node-role.kubernetes.io/";
  std::vector<std::string_view> roles;
  if (const Value* labels = Object(meta, "labels")) {
    for (const auto& m : labels->GetObject()) {
      std::string_view k(m.name.GetString(), m.name.GetStringLength());
      if (k.starts_with(kRolePrefix)) {
        if (k.size() > kRolePrefix.size()) roles.push_back(k.substr(kRolePrefix.size()));
      } else if (k == "kubernetes.io/role" && !Str(&m.value).empty()) {
        roles.push_back(Str(&m.value));
      }
    }
  }
  std::sort(roles.begin(), roles.end());
  roles.erase(std::unique(roles.begin(), roles.end()), roles.end());
  std::string role_cell;
  for (std::string_view r : roles) {
    if (!role_cell.empty()) role_cell += ',';
    role_cell.append(r);
  }
  if (role_cell.empty()) role_cell = "<none>";

  const Value* info = Object(status, "nodeInfo");
  auto address = [&](std::string_view type) -> std::string_view {
    for (const Value& a : Array(status, "addresses")) {
      if (Str(&a, "type") == type) return Str(&a, "address");
    }
    return "<none>";
  };
  auto or_unknown = [](std::string_view s) {
    return s.empty() ? std::string_view("<unknown>") : s;
  };

  WriteString(w, Name(node));
  WriteString(w, state);
  WriteString(w, role_cell);
  WriteString(w, Age(node, now));
  WriteString(w, Str(info, "kubeletVersion"));
  WriteString(w, address("InternalIP"));
  WriteString(w, address("ExternalIP"));
  WriteString(w, or_unknown(Str(info, "osImage")));
  WriteString(w, or_unknown(Str(info, "kernelVersion")));
  WriteString(w, or_unknown(Str(info, "containerRuntimeVersion")));
}

bool HasCondition(const Value* status, std::string_view type) {
  for (const Value& c : Array(status, "conditions")) {
    if (Str(&c, "type") == type && Str(&c, "status") == "True") return true;
  }
  return false;
}

// Pod phases after which deletion no longer shows as "Terminating" (IsPodPhaseTerminal).
bool TerminalPhase(std::string_view phase) { return phase == "Succeeded" || phase == "Failed"; }

void PodCells(JsonWriter& w, const Value& pod, TimePoint now) {
  const Value* meta = Object(&pod, "metadata");
  const Value* spec = Object(&pod, "spec");
  const Value* status = Object(&pod, "status");

  int64_t restarts = 0;
  int64_t restartable_init_restarts = 0;
  int64_t total_containers = static_cast<int64_t>(Array(spec, "containers").size());
  int64_t ready_containers = 0;
  Timestamp last_restart;
  Timestamp last_restartable_init_restart;

  std::string_view phase = Str(status, "phase");
  std::string_view status_reason = Str(status, "reason");
  std::string reason(status_reason.empty() ? phase : status_reason);

  for (const Value& c : Array(status, "conditions")) {
    if (Str(&c, "type") == "PodScheduled" && Str(&c, "reason") == "SchedulingGated") {
      reason = "SchedulingGated";
    }
  }

  std::span<const Value> init_specs = Array(spec, "initContainers");
  for (const Value& c : init_specs) {
    if (Str(&c, "restartPolicy") == "Always") ++total_containers;
  }
  // Sidecars: init containers with restartPolicy Always. Upstream keys a map by name, so a
  // duplicated name resolves to the last spec.
  auto restartable = [&](std::string_view name) {
    const Value* found = nullptr;
    for (const Value& c : init_specs) {
      if (Str(&c, "name") == name) found = &c;
    }
    return found != nullptr && Str(found, "restartPolicy") == "Always";
  };
  auto last_termination = [](const Value& cs) {
    const Value* terminated = Object(Object(&cs, "lastState"), "terminated");
    if (terminated == nullptr) return std::optional<Timestamp>();
    return std::optional<Timestamp>(ParseTimestamp(Str(terminated, "finishedAt")));
  };

  bool initializing = false;
  std::span<const Value> init_statuses = Array(status, "initContainerStatuses");
  for (size_t i = 0; i < init_statuses.size(); ++i) {
    const Value& cs = init_statuses[i];
    int64_t count = Int(&cs, "restartCount");
    restarts += count;
    std::optional<Timestamp> terminated_at = last_termination(cs);
    if (terminated_at && Before(last_restart, *terminated_at)) last_restart = *terminated_at;
    bool is_restartable = restartable(Str(&cs, "name"));
    if (is_restartable) {
      restartable_init_restarts += count;
      if (terminated_at && Before(last_restartable_init_restart, *terminated_at)) {
        last_restartable_init_restart = *terminated_at;
      }
    }
    const Value* state = Object(&cs, "state");
    const Value* terminated = Object(state, "terminated");
    const Value* waiting = Object(state, "waiting");
    if (terminated != nullptr && Int(terminated, "exitCode") == 0) continue;
    if (is_restartable && Bool(&cs, "started")) {
      if (Bool(&cs, "ready")) ++ready_containers;
      continue;
    }
    if (terminated != nullptr) {
      // Initialization failed.
      std::string_view r = Str(terminated, "reason");
      if (r.empty()) {
        int64_t signal = Int(terminated, "signal");
        reason = signal != 0 ? "Init:Signal:" + Itoa(signal)
                             : "Init:ExitCode:" + Itoa(Int(terminated, "exitCode"));
      } else {
        reason = "Init:" + std::string(r);
      }
    } else if (waiting != nullptr && !Str(waiting, "reason").empty() &&
               Str(waiting, "reason") != "PodInitializing") {
      reason = "Init:" + std::string(Str(waiting, "reason"));
    } else {
      reason = "Init:" + Itoa(static_cast<int64_t>(i)) + "/" +
               Itoa(static_cast<int64_t>(init_specs.size()));
    }
    initializing = true;
    break;
  }

  if (!initializing || HasCondition(status, "Initialized")) {
    restarts = restartable_init_restarts;
    last_restart = last_restartable_init_restart;
    bool has_running = false;
    std::string error_reason;
    std::span<const Value> statuses = Array(status, "containerStatuses");
    for (size_t i = statuses.size(); i-- > 0;) {
      const Value& cs = statuses[i];
      restarts += Int(&cs, "restartCount");
      std::optional<Timestamp> terminated_at = last_termination(cs);
      if (terminated_at && Before(last_restart, *terminated_at)) last_restart = *terminated_at;
      const Value* state = Object(&cs, "state");
      const Value* terminated = Object(state, "terminated");
      const Value* waiting = Object(state, "waiting");
      if (waiting != nullptr && !Str(waiting, "reason").empty()) {
        reason = Str(waiting, "reason");
      } else if (terminated != nullptr) {
        std::string_view r = Str(terminated, "reason");
        int64_t signal = Int(terminated, "signal");
        int64_t exit_code = Int(terminated, "exitCode");
        if (!r.empty()) {
          reason = r;
        } else if (signal != 0) {
          reason = "Signal:" + Itoa(signal);
        } else {
          reason = "ExitCode:" + Itoa(exit_code);
        }
        if (exit_code != 0) error_reason = reason;
      } else if (Bool(&cs, "ready") && Object(state, "running") != nullptr) {
        has_running = true;
        ++ready_containers;
      }
    }
    // Back to "Running" while a container still runs; a failed container wins over a
    // completed one.
    if (reason == "Completed") {
      if (has_running && HasCondition(status, "Ready")) {
        reason = "Running";
      } else if (!error_reason.empty()) {
        reason = error_reason;
      } else if (has_running) {
        reason = "NotReady";
      }
    }
  }

  bool deleting = Present(meta, "deletionTimestamp");
  if (deleting && status_reason == "NodeLost") {
    reason = "Unknown";
  } else if (deleting && !TerminalPhase(phase)) {
    reason = "Terminating";
  }

  std::string restarts_cell = Itoa(restarts);
  if (restarts != 0 && !last_restart.zero) {
    restarts_cell += " (" + TranslateTimestampSince(last_restart, now) + " ago)";
  }

  // Wide columns. The internal PodIPs[0] is status.podIP when set (v1→internal conversion makes
  // podIP authoritative), else status.podIPs[0].ip.
  std::string_view pod_ip = Str(status, "podIP");
  if (pod_ip.empty()) {
    std::span<const Value> ips = Array(status, "podIPs");
    if (!ips.empty()) pod_ip = Str(&ips[0], "ip");
  }
  std::string_view node_name = Str(spec, "nodeName");
  std::string_view nominated = Str(status, "nominatedNodeName");
  std::string gates = "<none>";
  std::span<const Value> readiness_gates = Array(spec, "readinessGates");
  if (!readiness_gates.empty()) {
    int64_t true_conditions = 0;
    for (const Value& gate : readiness_gates) {
      std::string_view type = Str(&gate, "conditionType");
      for (const Value& c : Array(status, "conditions")) {
        if (Str(&c, "type") == type) {
          if (Str(&c, "status") == "True") ++true_conditions;
          break;
        }
      }
    }
    gates = Itoa(true_conditions) + "/" + Itoa(static_cast<int64_t>(readiness_gates.size()));
  }

  WriteString(w, Name(pod));
  WriteString(w, Itoa(ready_containers) + "/" + Itoa(total_containers));
  WriteString(w, reason);
  WriteString(w, restarts_cell);
  WriteString(w, Age(pod, now));
  WriteString(w, pod_ip.empty() ? "<none>" : pod_ip);
  WriteString(w, node_name.empty() ? "<none>" : node_name);
  WriteString(w, nominated.empty() ? "<none>" : nominated);
  WriteString(w, gates);
}

void NamespaceCells(JsonWriter& w, const Value& ns, TimePoint now) {
  WriteString(w, Name(ns));
  WriteString(w, Str(Object(&ns, "status"), "phase"));
  WriteString(w, Age(ns, now));
}

// formatEventSource: source.component/host, falling back to reportingComponent/Instance.
std::string FormatEventSource(const Value& event) {
  const Value* source = Object(&event, "source");
  std::string_view component = Str(source, "component");
  if (component.empty()) component = Str(&event, "reportingComponent");
  std::string_view host = Str(source, "host");
  if (host.empty()) host = Str(&event, "reportingInstance");
  std::string out(component);
  if (!host.empty()) out.append(", ").append(host);
  return out;
}

void EventCells(JsonWriter& w, const Value& event, TimePoint now) {
  Timestamp first = ParseTimestamp(Str(&event, "firstTimestamp"));
  std::string first_seen =
      first.zero ? TranslateTimestampSince(ParseTimestamp(Str(&event, "eventTime")), now)
                 : TranslateTimestampSince(first, now);
  Timestamp last = ParseTimestamp(Str(&event, "lastTimestamp"));
  std::string last_seen = last.zero ? first_seen : TranslateTimestampSince(last, now);

  int64_t count = Int(&event, "count");
  if (const Value* series = Object(&event, "series")) {
    last_seen = TranslateTimestampSince(ParseTimestamp(Str(series, "lastObservedTime")), now);
    count = Int(series, "count");
  } else if (count == 0) {
    count = 1;  // singleton events of the new API carry no count
  }

  const Value* involved = Object(&event, "involvedObject");
  std::string target = AsciiLower(Str(involved, "kind"));
  std::string_view involved_name = Str(involved, "name");
  if (!involved_name.empty()) target.append("/").append(involved_name);

  WriteString(w, last_seen);
  WriteString(w, Str(&event, "type"));
  WriteString(w, Str(&event, "reason"));
  WriteString(w, target);
  WriteString(w, Str(involved, "fieldPath"));
  WriteString(w, FormatEventSource(event));
  WriteString(w, TrimSpace(Str(&event, "message")));
  WriteString(w, first_seen);
  w.Int64(count);
  WriteString(w, Name(event));
}

void LeaseCells(JsonWriter& w, const Value& lease, TimePoint now) {
  WriteString(w, Name(lease));
  WriteString(w, Str(Object(&lease, "spec"), "holderIdentity"));
  WriteString(w, Age(lease, now));
}

void PriorityClassCells(JsonWriter& w, const Value& pc, TimePoint now) {
  WriteString(w, Name(pc));
  w.Int64(Int(&pc, "value"));
  w.Bool(Bool(&pc, "globalDefault"));
  WriteString(w, Age(pc, now));
  WriteString(w, Str(&pc, "preemptionPolicy"));
}

void DaemonSetCells(JsonWriter& w, const Value& ds, TimePoint now) {
  const Value* spec = Object(&ds, "spec");
  const Value* status = Object(&ds, "status");
  const Value* pod_spec = Object(Object(spec, "template"), "spec");
  std::string names;
  std::string images;
  bool first = true;
  for (const Value& c : Array(pod_spec, "containers")) {
    if (!first) {
      names += ',';
      images += ',';
    }
    first = false;
    names.append(Str(&c, "name"));
    images.append(Str(&c, "image"));
  }
  WriteString(w, Name(ds));
  w.Int64(Int(status, "desiredNumberScheduled"));
  w.Int64(Int(status, "currentNumberScheduled"));
  w.Int64(Int(status, "numberReady"));
  w.Int64(Int(status, "updatedNumberScheduled"));
  w.Int64(Int(status, "numberAvailable"));
  WriteString(w, FormatLabels(Object(pod_spec, "nodeSelector")));
  WriteString(w, Age(ds, now));
  WriteString(w, names);
  WriteString(w, images);
  WriteString(w, FormatLabelSelector(Object(spec, "selector")));
}

void WriteCells(JsonWriter& w, TableKind kind, const Value& object, TimePoint now) {
  switch (kind) {
    case TableKind::kNamespace:
      return NamespaceCells(w, object, now);
    case TableKind::kNode:
      return NodeCells(w, object, now);
    case TableKind::kPod:
      return PodCells(w, object, now);
    case TableKind::kEvent:
      return EventCells(w, object, now);
    case TableKind::kLease:
      return LeaseCells(w, object, now);
    case TableKind::kPriorityClass:
      return PriorityClassCells(w, object, now);
    case TableKind::kDaemonSet:
      return DaemonSetCells(w, object, now);
  }
}

// Where the value of a top-level member of a JSON object starts and ends in its bytes, without
// parsing: lets a row copy an object's metadata as it is instead of re-serializing it. Returns ""
// when the member is absent or the bytes are not what was expected (callers then fall back to
// the parsed document). Keys are compared as raw bytes, so an escaped key is not found.
size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  return i;
}

// `i` at an opening quote; returns the index after the closing one, or npos.
size_t SkipString(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// `i` at the first byte of a value; returns the index after it, or npos.
size_t SkipValue(std::string_view s, size_t i) {
  if (i >= s.size()) return std::string_view::npos;
  if (s[i] == '"') return SkipString(s, i);
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    while (i < s.size()) {
      char c = s[i];
      if (c == '"') {
        i = SkipString(s, i);
        if (i == std::string_view::npos) return i;
        continue;
      }
      if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
      ++i;
    }
    return std::string_view::npos;
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\t' &&
         s[i] != '\n' && s[i] != '\r') {
    ++i;
  }
  return i;
}

std::string_view FindTopLevelMember(std::string_view s, std::string_view key) {
  constexpr size_t npos = std::string_view::npos;
  size_t i = SkipSpace(s, 0);
  if (i >= s.size() || s[i] != '{') return {};
  ++i;
  while (true) {
    i = SkipSpace(s, i);
    if (i >= s.size() || s[i] != '"') return {};
    size_t key_end = SkipString(s, i);
    if (key_end == npos) return {};
    std::string_view name = s.substr(i + 1, key_end - i - 2);
    i = SkipSpace(s, key_end);
    if (i >= s.size() || s[i] != ':') return {};
    i = SkipSpace(s, i + 1);
    size_t value_end = SkipValue(s, i);
    if (value_end == npos) return {};
    if (name == key) return s.substr(i, value_end - i);
    i = SkipSpace(s, value_end);
    if (i >= s.size() || s[i] != ',') return {};
    ++i;
  }
}

// One row, appended to the writer's string. `raw_object`, when given, is the object's own JSON:
// its bytes (or those of its metadata) are copied as they are rather than re-serialized.
void WriteRow(JsonWriter& w, StringOutput& os, TableKind kind, const Value& object,
              std::string_view raw_object, IncludeObject include, TimePoint now,
              std::string_view api_version) {
  w.Reset(os);
  w.StartObject();
  WriteKey(w, "cells");
  w.StartArray();
  WriteCells(w, kind, object, now);
  w.EndArray();
  if (kind == TableKind::kPod) {
    // metav1.RowCompleted conditions for pods that have finished (upstream podSuccessConditions
    // / podFailedConditions).
    std::string_view phase = Str(Object(&object, "status"), "phase");
    if (TerminalPhase(phase)) {
      WriteKey(w, "conditions");
      w.StartArray();
      w.StartObject();
      WriteKey(w, "type");
      WriteString(w, "Completed");
      WriteKey(w, "status");
      WriteString(w, "True");
      WriteKey(w, "reason");
      WriteString(w, phase);
      WriteKey(w, "message");
      WriteString(w,
                  phase == "Succeeded" ? "The pod has completed successfully." : "The pod failed.");
      w.EndObject();
      w.EndArray();
    }
  }
  // The writer is left inside the row: the object part is appended directly (the writer is Reset
  // before each use), so raw bytes are copied in one go instead of character by character.
  std::string* out = os.str();
  switch (include) {
    case IncludeObject::kNone:
      out->append(R"(,"object":null})");
      return;
    case IncludeObject::kObject:
      out->append(R"(,"object":)");
      if (!raw_object.empty()) {
        out->append(raw_object);
      } else {
        w.Reset(os);
        object.Accept(w);
      }
      out->push_back('}');
      return;
    case IncludeObject::kMetadata: {
      out->append(R"(,"object":{"kind":"PartialObjectMetadata","apiVersion":)");
      w.Reset(os);
      WriteString(w, api_version);
      out->append(R"(,"metadata":)");
      std::string_view raw_meta =
          raw_object.empty() ? std::string_view() : FindTopLevelMember(raw_object, "metadata");
      if (!raw_meta.empty() && raw_meta.front() == '{') {
        out->append(raw_meta);
      } else if (const Value* meta = Object(&object, "metadata")) {
        w.Reset(os);
        meta->Accept(w);
      } else {
        out->append("{}");
      }
      out->append("}}");
      return;
    }
  }
}

void AppendColumnsTo(TableKind kind, std::string* out) {
  StringOutput os(out);
  JsonWriter w(os);
  w.StartArray();
  for (const TableColumn& c : TableColumns(kind)) {
    w.StartObject();
    WriteKey(w, "name");
    WriteString(w, c.name);
    WriteKey(w, "type");
    WriteString(w, c.type);
    WriteKey(w, "format");
    WriteString(w, c.format);
    WriteKey(w, "description");
    WriteString(w, c.description);
    WriteKey(w, "priority");
    w.Int(c.priority);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

// --- Public functions ------------------------------------------------------------------------

Result<IncludeObject> ParseIncludeObject(std::string_view value) {
  if (value.empty() || value == "Metadata") return IncludeObject::kMetadata;
  if (value == "Object") return IncludeObject::kObject;
  if (value == "None") return IncludeObject::kNone;
  // k8s.io/apiserver pkg/endpoints/handlers/response.go asTable.
  return Err(BadRequest("unrecognized includeObject value: " + GoQuote(value)));
}

std::string HumanDuration(std::chrono::nanoseconds d) {
  // k8s.io/apimachinery pkg/util/duration/duration.go. Go's int(d.Seconds()) and the integer
  // divisions below all truncate toward zero, as C++ division does.
  const int64_t ns = d.count();
  const int64_t seconds = ns / kNanosPerSecond;
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return Itoa(seconds) + "s";
  const int64_t minutes = ns / (60 * kNanosPerSecond);
  if (minutes < 10) {
    int64_t s = seconds % 60;
    if (s == 0) return Itoa(minutes) + "m";
    return Itoa(minutes) + "m" + Itoa(s) + "s";
  }
  if (minutes < 60 * 3) return Itoa(minutes) + "m";
  const int64_t hours = ns / (3600 * kNanosPerSecond);
  if (hours < 8) {
    int64_t m = minutes % 60;
    if (m == 0) return Itoa(hours) + "h";
    return Itoa(hours) + "h" + Itoa(m) + "m";
  }
  if (hours < 48) return Itoa(hours) + "h";
  if (hours < 24 * 8) {
    int64_t h = hours % 24;
    if (h == 0) return Itoa(hours / 24) + "d";
    return Itoa(hours / 24) + "d" + Itoa(h) + "h";
  }
  if (hours < 24 * 365 * 2) return Itoa(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    int64_t dy = (hours / 24) % 365;
    if (dy == 0) return Itoa(hours / 24 / 365) + "y";
    return Itoa(hours / 24 / 365) + "y" + Itoa(dy) + "d";
  }
  return Itoa(hours / 24 / 365) + "y";
}

Timestamp ParseTimestamp(std::string_view s) {
  // Go's time.Parse(time.RFC3339, s): YYYY-MM-DDTHH:MM:SS[.frac](Z|±hh:mm).
  Timestamp zero;
  int year, month, day, hour, minute, second;
  if (s.size() < 20 || !Digits(s, 0, 4, &year) || s[4] != '-' || !Digits(s, 5, 2, &month) ||
      s[7] != '-' || !Digits(s, 8, 2, &day) || (s[10] != 'T' && s[10] != 't') ||
      !Digits(s, 11, 2, &hour) || s[13] != ':' || !Digits(s, 14, 2, &minute) || s[16] != ':' ||
      !Digits(s, 17, 2, &second)) {
    return zero;
  }
  size_t pos = 19;
  int32_t nanos = 0;
  if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
    ++pos;
    size_t digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 9) nanos = nanos * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return zero;
    for (size_t i = digits; i < 9; ++i) nanos *= 10;
  }
  int64_t offset = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!Digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, &om) || oh > 23 || om > 59) {
      return zero;
    }
    offset = (oh * 3600 + om * 60) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return zero;
  }
  if (pos != s.size()) return zero;
  static constexpr std::array<int, 13> kDaysIn = {0,  31, 29, 31, 30, 31, 30,
                                                  31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (month < 1 || month > 12 || day < 1 || day > kDaysIn[month] ||
      (month == 2 && day == 29 && !leap) || hour > 23 || minute > 59 || second > 59) {
    return zero;
  }
  Timestamp t;
  t.seconds =
      DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
      hour * 3600 + minute * 60 + second - offset;
  t.nanos = nanos;
  t.zero = t.seconds == kGoZeroUnixSeconds && t.nanos == 0;
  return t;
}

std::string TranslateTimestampSince(const Timestamp& t, TimePoint now) {
  if (t.zero) return "<unknown>";
  return HumanDuration(Since(t, now));
}

std::span<const TableColumn> TableColumns(TableKind kind) {
  switch (kind) {
    case TableKind::kNamespace:
      return kNamespaceColumns;
    case TableKind::kNode:
      return kNodeColumns;
    case TableKind::kPod:
      return kPodColumns;
    case TableKind::kEvent:
      return kEventColumns;
    case TableKind::kLease:
      return kLeaseColumns;
    case TableKind::kPriorityClass:
      return kPriorityClassColumns;
    case TableKind::kDaemonSet:
      return kDaemonSetColumns;
  }
  return {};
}

void AppendTableColumns(TableKind kind, std::string* out) { AppendColumnsTo(kind, out); }

void AppendTableRow(TableKind kind, const rapidjson::Value& object, IncludeObject include,
                    TimePoint now, std::string* out, std::string_view table_api_version) {
  StringOutput os(out);
  JsonWriter w(os);
  WriteRow(w, os, kind, object, {}, include, now, table_api_version);
}

// --- TableWriter -----------------------------------------------------------------------------

struct TableWriter::Impl {
  // AddRowJson parses a copy of the bytes in place (strings are not copied again), with the
  // values in a pool whose first 64 KiB are this buffer, cleared per row: a typical object parses
  // without touching malloc.
  static constexpr size_t kPoolBytes = 64 * 1024;

  explicit Impl(std::string* out)
      : os(out),
        writer(os),
        buffer(new char[kPoolBytes]),
        pool(buffer.get(), kPoolBytes),
        doc(&pool) {}

  StringOutput os;
  JsonWriter writer;
  std::unique_ptr<char[]> buffer;
  rapidjson::MemoryPoolAllocator<> pool;
  rapidjson::Document doc;
  std::string scratch;
};

TableWriter::TableWriter(TableKind kind, const TableOptions& options, TimePoint now,
                         std::string* out)
    : kind_(kind), options_(options), now_(now), out_(out), impl_(std::make_unique<Impl>(out)) {}

TableWriter::~TableWriter() = default;

void TableWriter::Begin(const TableListMeta& meta) {
  JsonWriter& w = impl_->writer;
  out_->append(R"({"kind":"Table","apiVersion":)");
  w.Reset(impl_->os);
  WriteString(w, options_.api_version);
  out_->append(R"(,"metadata":)");
  w.Reset(impl_->os);
  w.StartObject();
  if (!meta.resource_version.empty()) {
    WriteKey(w, "resourceVersion");
    WriteString(w, meta.resource_version);
  }
  if (!meta.continue_token.empty()) {
    WriteKey(w, "continue");
    WriteString(w, meta.continue_token);
  }
  if (meta.remaining_item_count) {
    WriteKey(w, "remainingItemCount");
    w.Int64(*meta.remaining_item_count);
  }
  w.EndObject();
  out_->append(R"(,"columnDefinitions":)");
  if (options_.column_definitions) {
    AppendColumnsTo(kind_, out_);
  } else {
    out_->append("null");
  }
  out_->append(R"(,"rows":[)");
}

void TableWriter::AddRow(const rapidjson::Value& object) {
  if (rows_++ > 0) out_->push_back(',');
  WriteRow(impl_->writer, impl_->os, kind_, object, {}, options_.include_object, now_,
           options_.api_version);
}

Status TableWriter::AddRowJson(std::string_view object_json) {
  // An embedded NUL would end the in-place parse early and let the raw copy below carry bytes
  // the parser never saw.
  if (object_json.find('\0') != std::string_view::npos) {
    return Internal("stored object is not valid JSON: embedded NUL");
  }
  impl_->scratch.assign(object_json);
  impl_->pool.Clear();
  impl_->doc.ParseInsitu(impl_->scratch.data());
  if (impl_->doc.HasParseError()) {
    return Internal(std::string("stored object is not valid JSON: ") +
                    rapidjson::GetParseError_En(impl_->doc.GetParseError()));
  }
  if (rows_++ > 0) out_->push_back(',');
  WriteRow(impl_->writer, impl_->os, kind_, impl_->doc, object_json, options_.include_object, now_,
           options_.api_version);
  return Status::Ok();
}

void TableWriter::End() { out_->append("]}"); }

std::string EncodeTable(TableKind kind, std::span<const rapidjson::Value* const> objects,
                        const TableListMeta& meta, const TableOptions& options, TimePoint now) {
  std::string out;
  TableWriter writer(kind, options, now, &out);
  writer.Begin(meta);
  for (const rapidjson::Value* object : objects) writer.AddRow(*object);
  writer.End();
  return out;
}

}  // namespace kt::api
