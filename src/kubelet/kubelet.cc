#include "kubelet/kubelet.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include <rapidjson/document.h>
#include <rapidjson/pointer.h>

#include "api/codec.h"
#include "api/quantity.h"
#include "api/table.h"
#include "core/strings.h"
#include "core/taint_spec.h"
#include "core/time.h"
#include "core/version.h"

namespace kt::kubelet {

namespace {

using server::ObjectPtr;
using server::Resource;

constexpr std::string_view kNodeNameIndex = "spec.nodeName";
constexpr std::string_view kLeaseNamespace = "kube-node-lease";

// The node conditions a kubelet reports, in upstream's order; NetworkUnavailable (kept by the
// cloud route controller upstream) only once a simulation has set it.
enum ConditionIndex { kMemory, kDisk, kPid, kReady, kNetwork, kConditionCount };
constexpr const char* kConditionTypes[kConditionCount] = {
    "MemoryPressure", "DiskPressure", "PIDPressure", "Ready", "NetworkUnavailable"};

struct ConditionText {
  const char* status;
  const char* reason;
  const char* message;
};

// What the kubelet says for each condition, healthy or not (upstream kubelet_node_status
// setters; NetworkUnavailable as upstream's route controller writes it).
ConditionText Healthy(int c) {
  switch (c) {
    case kMemory:
      return {"False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"};
    case kDisk:
      return {"False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"};
    case kPid:
      return {"False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"};
    case kReady:
      return {"True", "KubeletReady", "kubelet is posting ready status"};
    default:
      return {"False", "RouteCreated", "RouteController created a route"};
  }
}
ConditionText Unhealthy(int c) {
  switch (c) {
    case kMemory:
      return {"True", "KubeletHasInsufficientMemory", "kubelet has insufficient memory available"};
    case kDisk:
      return {"True", "KubeletHasDiskPressure", "kubelet has disk pressure"};
    case kPid:
      return {"True", "KubeletHasInsufficientPID", "kubelet has insufficient PID available"};
    case kReady:
      return {"False", "KubeletNotReady",
              "container runtime network not ready: NetworkReady=false "
              "reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not "
              "initialized"};
    default:
      return {"True", "NoRouteCreated", "Node created without a route"};
  }
}

// A stable 128-bit-looking hex identity for node i: machineID, systemUUID, bootID.
std::string Hex(uint64_t a, uint64_t b) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return buf;
}
std::string Uuid(uint64_t a, uint64_t b) {
  const std::string h = Hex(a, b);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20, 12);
}
uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::string Ipv4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  char buf[20];
  std::snprintf(buf, sizeof(buf), "%u.%u.%u.%u", a, b, c, d);
  return buf;
}

// The comma-separated items of a flag or annotation value, trimmed, empty ones dropped.
std::vector<std::string_view> Items(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool IsNotFound(const server::ApiError& e) { return e.code == 404; }
bool IsAlreadyExists(const server::ApiError& e) { return e.reason == "AlreadyExists"; }

}  // namespace

Result<Simulation> ParseSimulation(std::string_view value) {
  Simulation s;
  for (std::string_view word : Items(value)) {
    if (word == "healthy") continue;
    if (word == "unreachable") {
      s.unreachable = true;
    } else if (word == "not-ready") {
      s.not_ready = true;
    } else if (word == "memory-pressure") {
      s.memory_pressure = true;
    } else if (word == "disk-pressure") {
      s.disk_pressure = true;
    } else if (word == "pid-pressure") {
      s.pid_pressure = true;
    } else if (word == "network-unavailable") {
      s.network_unavailable = true;
    } else {
      return Err(BadRequest(
          "annotation " + std::string(kSimulateAnnotation) + ": unknown value \"" +
          std::string(word) +
          "\" (want unreachable, not-ready, memory-pressure, disk-pressure, pid-pressure, "
          "network-unavailable or healthy)"));
    }
  }
  return s;
}

Status ParseCapacity(std::string_view text, NodeTemplate* node) {
  for (std::string_view item : Items(text)) {
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return BadRequest("--capacity: \"" + std::string(item) + "\" is not NAME=QUANTITY");
    }
    const std::string name(item.substr(0, eq));
    const std::string value(item.substr(eq + 1));
    if (!api::Quantity::Parse(value)) {
      return BadRequest("--capacity: " + name + ": \"" + value + "\" is not a quantity");
    }
    auto it = std::find_if(node->capacity.begin(), node->capacity.end(),
                           [&](const auto& e) { return e.first == name; });
    if (it != node->capacity.end()) {
      it->second = value;
    } else {
      node->capacity.emplace_back(name, value);
    }
  }
  std::sort(node->capacity.begin(), node->capacity.end());
  return Status::Ok();
}

Result<std::vector<Taint>> ParseRegisterTaints(std::string_view text) {
  std::vector<Taint> out;
  for (std::string_view item : Items(text)) {
    Result<Taint> t = ParseTaint(item);
    if (!t) return Err(BadRequest("--taints: " + t.error().message()));
    out.push_back(std::move(*t));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

Kubelets::Kubelets(Options options)
    : options_(std::move(options)),
      clock_(options_.clock),
      client_(options_.client),
      heartbeat_client_(options_.heartbeat_client != nullptr ? options_.heartbeat_client
                                                             : options_.client) {
  if (options_.kubelet_version.empty()) options_.kubelet_version = GitVersion();
  loop_ = std::make_unique<client::Loop>(
      clock_, client::Loop::Options{.name = "kt-kubelets", .poll = [this] {
                                      return node_informer_->DispatchPending() +
                                             pod_informer_->DispatchPending();
                                    }});
  auto wake = [loop = loop_.get()] { loop->Wake(); };
  client::Informer::Options po = client::Informer::Options::Manual(clock_, "kubelet-pods");
  po.on_pending = wake;
  pod_informer_ = std::make_unique<client::Informer>(std::move(options_.pods), po);
  client::Informer::Options no = client::Informer::Options::Manual(clock_, "kubelet-nodes");
  no.on_pending = wake;
  node_informer_ = std::make_unique<client::Informer>(std::move(options_.nodes), no);
  pod_informer_->AddIndexer(std::string(kNodeNameIndex), [](const server::StoredObject& o) {
    const api::Pod* p = o.As<api::Pod>();
    if (p == nullptr || p->spec.node_name.empty()) return std::vector<std::string>{};
    return std::vector<std::string>{p->spec.node_name};
  });
  pod_informer_->AddEventHandler({
      .on_add = [this](const ObjectPtr& o, bool) { OnPod(o); },
      .on_update = [this](const ObjectPtr&, const ObjectPtr& o) { OnPod(o); },
      .on_delete = [this](const ObjectPtr& o) { OnPodDeleted(o); },
  });
  node_informer_->AddEventHandler({
      .on_add = [this](const ObjectPtr& o, bool) { OnNode(o); },
      .on_update = [this](const ObjectPtr&, const ObjectPtr& o) { OnNode(o); },
      .on_delete = [this](const ObjectPtr& o) { OnNodeDeleted(o); },
  });
  const NodeTemplate& t = options_.node;
  nodes_.resize(static_cast<size_t>(std::max(0, t.count)));
  for (int i = 0; i < t.count; ++i) {
    NodeState& n = nodes_[static_cast<size_t>(i)];
    n.name = NodeName(i);
    if (!t.zones.empty()) n.zone = t.zones[static_cast<size_t>(i) % t.zones.size()];
    const uint32_t k = static_cast<uint32_t>(t.first + i);
    n.host_ip = Ipv4(172, 16 + (k >> 16), (k >> 8) & 255, k & 255);
    n.conditions.resize(kConditionCount);
  }
}

Kubelets::~Kubelets() { Stop(); }

std::string Kubelets::NodeName(int i) const {
  return options_.node.prefix + std::to_string(options_.node.first + i);
}

int Kubelets::IndexOf(std::string_view name) const {
  const std::string& prefix = options_.node.prefix;
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) return -1;
  std::string_view digits = name.substr(prefix.size());
  if (digits.size() > 1 && digits[0] == '0') return -1;  // "node01" is not node1
  int k = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
  if (ec != std::errc() || end != digits.data() + digits.size()) return -1;
  const int i = k - options_.node.first;
  return i >= 0 && i < options_.node.count ? i : -1;
}

size_t Kubelets::Registered() const {
  return static_cast<size_t>(std::count_if(nodes_.begin(), nodes_.end(), [](const NodeState& n) {
    return n.phase == Phase::kRegistered;
  }));
}

void Kubelets::Start() {
  pod_informer_->Start();
  node_informer_->Start();
  for (int i = 0; i < options_.node.count; ++i) loop_->Post([this, i] { Register(i); });
  if (!options_.manual) loop_->Start();
}

void Kubelets::Stop() {
  if (loop_) loop_->Stop();
  if (pod_informer_) pod_informer_->Stop();
  if (node_informer_) node_informer_->Stop();
}

size_t Kubelets::RunPending() { return loop_->RunPending(); }

client::WriteDone Kubelets::Tracked(client::WriteDone done) {
  in_flight_.fetch_add(1, std::memory_order_acq_rel);
  return [this, done = std::move(done)](server::ApiResult<store::Bytes> r) mutable {
    done(std::move(r));
    in_flight_.fetch_sub(1, std::memory_order_acq_rel);
  };
}

bool Kubelets::WaitRegistered(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(registered_mu_);
  return registered_cv_.wait_until(lock, deadline,
                                   [&] { return registered_ >= options_.node.count; });
}

// --- nodes -------------------------------------------------------------------------------------

std::string Kubelets::ConditionsJson(const NodeState& n, const std::string& heartbeat) const {
  std::string out = "[";
  bool first = true;
  for (int c = 0; c < kConditionCount; ++c) {
    const Condition& cond = n.conditions[static_cast<size_t>(c)];
    if (cond.status.empty()) continue;  // not reported (NetworkUnavailable never set)
    if (!first) out.push_back(',');
    first = false;
    out.append(R"({"type":")").append(kConditionTypes[c]).append(R"(","status":")");
    out.append(cond.status).append(R"(","lastHeartbeatTime":")").append(heartbeat);
    out.append(R"(","lastTransitionTime":")").append(cond.last_transition);
    out.append(R"(","reason":")").append(cond.reason).append(R"(","message":)");
    AppendJsonString(out, cond.message);
    out.push_back('}');
  }
  return out.append("]");
}

bool Kubelets::UpdateConditions(NodeState& n, client::Time now) {
  const bool want[kConditionCount] = {n.sim.memory_pressure, n.sim.disk_pressure,
                                      n.sim.pid_pressure, n.sim.not_ready,
                                      n.sim.network_unavailable};
  bool changed = false;
  for (int c = 0; c < kConditionCount; ++c) {
    Condition& cond = n.conditions[static_cast<size_t>(c)];
    // NetworkUnavailable is reported only once something set it.
    if (c == kNetwork && cond.status.empty() && !want[c]) continue;
    const ConditionText t = want[c] ? Unhealthy(c) : Healthy(c);
    if (cond.status != t.status) {
      cond.status = t.status;
      cond.last_transition = FormatRfc3339(now);
      changed = true;
    }
    if (cond.reason != t.reason || cond.message != t.message) {
      cond.reason = t.reason;
      cond.message = t.message;
      changed = true;
    }
  }
  return changed;
}

std::string Kubelets::NodeJson(int i, client::Time now) const {
  const NodeState& n = nodes_[static_cast<size_t>(i)];
  const NodeTemplate& t = options_.node;
  std::string out = R"({"apiVersion":"v1","kind":"Node","metadata":{"name":)";
  AppendJsonString(out, n.name);
  out.append(R"(,"labels":{"beta.kubernetes.io/arch":"amd64","beta.kubernetes.io/os":"linux",)"
             R"("kubernetes.io/arch":"amd64","kubernetes.io/hostname":)");
  AppendJsonString(out, n.name);
  out.append(R"(,"kubernetes.io/os":"linux")");
  if (!n.zone.empty()) {
    out.append(R"(,"topology.kubernetes.io/zone":)");
    AppendJsonString(out, n.zone);
  }
  out.append(R"(},"annotations":{"node.alpha.kubernetes.io/ttl":"0"}},"spec":{)");
  if (!t.taints.empty()) {
    out.append(R"("taints":[)");
    for (size_t k = 0; k < t.taints.size(); ++k) {
      if (k > 0) out.push_back(',');
      out.append(R"({"key":)");
      AppendJsonString(out, t.taints[k].key);
      if (!t.taints[k].value.empty()) {
        out.append(R"(,"value":)");
        AppendJsonString(out, t.taints[k].value);
      }
      out.append(R"(,"effect":)");
      AppendJsonString(out, t.taints[k].effect);
      out.push_back('}');
    }
    out.push_back(']');
  }
  std::string resources = "{";
  for (size_t k = 0; k < t.capacity.size(); ++k) {
    if (k > 0) resources.push_back(',');
    AppendJsonString(resources, t.capacity[k].first);
    resources.push_back(':');
    AppendJsonString(resources, t.capacity[k].second);
  }
  resources.push_back('}');
  const uint64_t seed =
      Mix(static_cast<uint64_t>(t.first + i) ^ Mix(std::hash<std::string>()(n.name)));
  out.append(R"(},"status":{"capacity":)").append(resources);
  out.append(R"(,"allocatable":)").append(resources);
  out.append(R"(,"conditions":)").append(ConditionsJson(n, FormatRfc3339(now)));
  out.append(R"(,"addresses":[{"type":"InternalIP","address":")").append(n.host_ip);
  out.append(R"("},{"type":"Hostname","address":)");
  AppendJsonString(out, n.name);
  out.append(R"(}],"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},"nodeInfo":{)");
  out.append(R"("machineID":")").append(Hex(seed, Mix(seed + 1)));
  out.append(R"(","systemUUID":")").append(Uuid(Mix(seed + 2), Mix(seed + 3)));
  out.append(R"(","bootID":")").append(Uuid(Mix(seed + 4), Mix(seed + 5)));
  out.append(R"(","kernelVersion":"6.1.0-kubetaint","osImage":"kubetaint simulated node",)");
  out.append(R"("containerRuntimeVersion":"kubetaint://)").append(KubetaintVersion());
  out.append(R"(","kubeletVersion":)");
  AppendJsonString(out, options_.kubelet_version);
  out.append(R"(,"kubeProxyVersion":)");
  AppendJsonString(out, options_.kubelet_version);
  out.append(R"(,"operatingSystem":"linux","architecture":"amd64"}}})");
  return out;
}

void Kubelets::Register(int i) {
  NodeState& n = nodes_[static_cast<size_t>(i)];
  const client::Time now = clock_->Now();
  UpdateConditions(n, now);
  n.status_dirty = false;
  n.last_report = now;
  client_->Create(
      Resource::kNodes, "", NodeJson(i, now), Tracked([this, i](server::ApiResult<store::Bytes> r) {
        loop_->Post([this, i, r = std::move(r)]() mutable { Registered(i, std::move(r)); });
      }));
}

void Kubelets::Registered(int i, server::ApiResult<store::Bytes> r) {
  NodeState& n = nodes_[static_cast<size_t>(i)];
  if (!r && !IsAlreadyExists(r.error())) {
    // Upstream retries registration with backoff; so does this.
    std::fprintf(stderr, "kubelet %s: registering: %s\n", n.name.c_str(),
                 r.error().message.c_str());
    loop_->At(clock_->Now() + std::chrono::seconds(1), [this, i] { Register(i); });
    return;
  }
  if (n.phase == Phase::kRegistering) {
    std::lock_guard<std::mutex> lock(registered_mu_);
    ++registered_;
    registered_cv_.notify_all();
  }
  n.phase = Phase::kRegistered;
  if (r) {
    // Its UID, for the Lease's owner reference.
    if (Result<rapidjson::Document> d = api::ParseJson(**r); d && d->IsObject()) {
      const rapidjson::Value* uid = rapidjson::Pointer("/metadata/uid").Get(*d);
      if (uid != nullptr && uid->IsString()) n.uid = uid->GetString();
    }
  } else {
    // A node that existed already is taken over: its status is posted now.
    n.status_dirty = true;
    if (ObjectPtr node = node_informer_->Get("", n.name)) n.uid = node->meta().uid;
  }
  const client::Time now = clock_->Now();
  const client::Duration renew = options_.lease_duration / 4;
  // Nodes tick in ten groups a tenth of the period apart (on whole seconds with the default 10 s
  // period): thousands of nodes do not renew
  // at once, and the nodes of a group share one wake-up of the loop (on a 2-core machine the
  // wake-ups, not the writes, were most of the kubelets' CPU with 5,000 nodes spread evenly).
  const client::Time grid =
      renew >= std::chrono::seconds(10) ? std::chrono::floor<std::chrono::seconds>(now) : now;
  const client::Duration offset = renew * (i % 10) / 10;
  RenewLease(i);
  loop_->At(grid + renew + offset, [this, i] { LeaseTick(i); });
  if (n.status_dirty) PostStatus(i);
  loop_->At(grid + options_.status_update_frequency + offset, [this, i] { StatusTick(i); });
  ResyncPods(i);
}

void Kubelets::LeaseTick(int i) {
  NodeState& n = nodes_[static_cast<size_t>(i)];
  if (n.phase == Phase::kGone) return;
  if (!n.sim.unreachable) RenewLease(i);
  loop_->At(clock_->Now() + options_.lease_duration / 4, [this, i] { LeaseTick(i); });
}

void Kubelets::StatusTick(int i) {
  NodeState& n = nodes_[static_cast<size_t>(i)];
  if (n.phase == Phase::kGone) return;
  const client::Time now = clock_->Now();
  if (!n.sim.unreachable) {
    if (UpdateConditions(n, now)) n.status_dirty = true;
    if (n.status_dirty || now - n.last_report >= options_.status_report_frequency) PostStatus(i);
  }
  loop_->At(now + options_.status_update_frequency, [this, i] { StatusTick(i); });
}

void Kubelets::RenewLease(int i) {
  NodeState& n = nodes_[static_cast<size_t>(i)];
  if (n.lease_busy || n.phase != Phase::kRegistered) return;
  n.lease_busy = true;
  const std::string renew_time = FormatRfc3339Micro(clock_->Now());
  auto done = [this, i](server::ApiResult<store::Bytes> r) {
    loop_->Post([this, i, r = std::move(r)] {
      NodeState& n = nodes_[static_cast<size_t>(i)];
      n.lease_busy = false;
      if (r) {
        n.lease_known = true;
      } else if (IsNotFound(r.error())) {
        n.lease_known = false;
        RenewLease(i);  // creates it
      } else if (IsAlreadyExists(r.error())) {
        n.lease_known = true;
      }
    });
  };
  if (n.lease_known) {
    heartbeat_client_->Patch(Resource::kLeases, std::string(kLeaseNamespace), n.name,
                             server::Subresource::kNone, api::PatchType::kMergePatch,
                             R"({"spec":{"renewTime":")" + renew_time + R"("}})",
                             Tracked(std::move(done)));
    return;
  }
  // The lease is owned by the Node, so that it goes with it (upstream's kubelet does the same).
  std::string owner;
  if (n.uid.empty()) {
    if (ObjectPtr node = node_informer_->Get("", n.name)) n.uid = node->meta().uid;
  }
  if (!n.uid.empty()) {
    owner = R"(,"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":)";
    AppendJsonString(owner, n.name);
    owner.append(R"(,"uid":)");
    AppendJsonString(owner, n.uid);
    owner.append("}]");
  }
  std::string lease =
      R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":)";
  AppendJsonString(lease, n.name);
  lease.append(R"(,"namespace":"kube-node-lease")").append(owner);
  lease.append(R"(},"spec":{"holderIdentity":)");
  AppendJsonString(lease, n.name);
  lease.append(R"(,"leaseDurationSeconds":)")
      .append(std::to_string(
          std::chrono::duration_cast<std::chrono::seconds>(options_.lease_duration).count()));
  lease.append(R"(,"renewTime":")").append(renew_time).append(R"("}})");
  heartbeat_client_->Create(Resource::kLeases, std::string(kLeaseNamespace), std::move(lease),
                            Tracked(std::move(done)));
}

void Kubelets::PostStatus(int i) {
  NodeState& n = nodes_[static_cast<size_t>(i)];
  if (n.status_busy || n.phase != Phase::kRegistered) return;
  n.status_busy = true;
  const client::Time now = clock_->Now();
  n.status_dirty = false;
  n.last_report = now;
  std::string patch = R"({"status":{"conditions":)" + ConditionsJson(n, FormatRfc3339(now)) + "}}";
  heartbeat_client_->Patch(Resource::kNodes, "", n.name, server::Subresource::kStatus,
                           api::PatchType::kStrategicMergePatch, std::move(patch),
                           Tracked([this, i](server::ApiResult<store::Bytes> r) {
                             loop_->Post([this, i, ok = r.has_value()] {
                               NodeState& n = nodes_[static_cast<size_t>(i)];
                               n.status_busy = false;
                               if (!ok) n.status_dirty = true;  // tried again at the next tick
                             });
                           }));
}

void Kubelets::OnNode(const ObjectPtr& node) {
  const int i = IndexOf(node->meta().name);
  if (i < 0) return;
  NodeState& n = nodes_[static_cast<size_t>(i)];
  if (n.phase == Phase::kGone) return;
  n.uid = node->meta().uid;
  const std::string* value = node->meta().annotations.Get(kSimulateAnnotation);
  Result<Simulation> sim = ParseSimulation(value != nullptr ? *value : "");
  if (!sim) {
    std::fprintf(stderr, "kubelet %s: %s\n", n.name.c_str(), sim.error().message().c_str());
    return;
  }
  const client::Time now = clock_->Now();
  // A condition someone else changed (the node lifecycle controller sets Unknown on silence)
  // transitions again when the kubelet next reports it.
  if (const api::Node* typed = node->As<api::Node>()) {
    for (const api::Condition& c : typed->status.conditions) {
      for (int k = 0; k < kConditionCount; ++k) {
        Condition& mine = n.conditions[static_cast<size_t>(k)];
        if (c.type == kConditionTypes[k] && !mine.status.empty() && c.status != mine.status) {
          mine.status = c.status;  // what is there now; UpdateConditions moves it back
          n.status_dirty = true;
        }
      }
    }
  }
  if (*sim == n.sim) return;
  const bool woke = n.sim.unreachable && !sim->unreachable;
  n.sim = *sim;
  if (n.phase != Phase::kRegistered || n.sim.unreachable) return;
  // A change of simulated health is reported at once, as a kubelet reports a changed condition.
  if (UpdateConditions(n, now)) n.status_dirty = true;
  if (n.status_dirty) PostStatus(i);
  if (woke) {
    RenewLease(i);
    ResyncPods(i);
  }
}

void Kubelets::OnNodeDeleted(const ObjectPtr& node) {
  const int i = IndexOf(node->meta().name);
  if (i < 0) return;
  NodeState& n = nodes_[static_cast<size_t>(i)];
  if (n.phase != Phase::kRegistered || node->meta().uid != n.uid) return;
  n.phase = Phase::kGone;
}

// --- pods --------------------------------------------------------------------------------------

void Kubelets::ResyncPods(int i) {
  for (const ObjectPtr& pod :
       pod_informer_->ByIndex(kNodeNameIndex, nodes_[static_cast<size_t>(i)].name)) {
    OnPod(pod);
  }
}

void Kubelets::OnPod(const ObjectPtr& object) {
  const api::Pod* pod = object->As<api::Pod>();
  if (pod == nullptr || pod->spec.node_name.empty()) return;
  const int i = IndexOf(pod->spec.node_name);
  if (i < 0) return;
  const NodeState& n = nodes_[static_cast<size_t>(i)];
  if (n.phase != Phase::kRegistered || n.sim.unreachable) return;
  const api::UidKey key = api::UidKeyOf(pod->meta.uid);
  PodState& state = pods_[key];
  state.node = i;
  if (pod->meta.deletion_timestamp) {
    if (state.finishing) return;
    const api::Timestamp ts = api::ParseTimestamp(*pod->meta.deletion_timestamp);
    const client::Time at =
        client::Time(std::chrono::seconds(ts.seconds) + std::chrono::nanoseconds(ts.nanos));
    if (state.finish_timer != 0 && state.finish_at == at) return;
    if (state.finish_timer != 0) loop_->Cancel(state.finish_timer);
    state.finish_at = at;
    state.finish_timer = loop_->At(at, [this, key] { FinishPod(key); });
    return;
  }
  if (state.started) return;
  const std::string& phase = pod->status.phase;
  if (phase == "Running" || phase == "Succeeded" || phase == "Failed") {
    state.started = true;
    return;
  }
  StartPod(object, state);
}

void Kubelets::OnPodDeleted(const ObjectPtr& object) {
  auto it = pods_.find(api::UidKeyOf(object->meta().uid));
  if (it == pods_.end()) return;
  if (it->second.finish_timer != 0) loop_->Cancel(it->second.finish_timer);
  pods_.erase(it);
}

void Kubelets::StartPod(const ObjectPtr& object, PodState& state) {
  const api::Pod* pod = object->As<api::Pod>();
  NodeState& n = nodes_[static_cast<size_t>(state.node)];
  state.started = true;
  Result<rapidjson::Document> doc = api::ParseJson(*object->json);
  if (!doc) return;
  const rapidjson::Value* spec = nullptr;
  if (auto s = doc->FindMember("spec"); s != doc->MemberEnd() && s->value.IsObject()) {
    spec = &s->value;
  }
  bool host_network = false;
  if (spec != nullptr) {
    auto h = spec->FindMember("hostNetwork");
    host_network = h != spec->MemberEnd() && h->value.IsBool() && h->value.GetBool();
  }
  const uint32_t k = static_cast<uint32_t>(options_.node.first + state.node);
  const uint32_t slot = n.next_ip++ % 253;
  const std::string pod_ip =
      host_network ? n.host_ip : Ipv4(10, 64 + ((k >> 8) & 63), k & 255, slot + 2);
  const std::string now = FormatRfc3339(clock_->Now());
  const uint64_t seed = Mix(api::UidKeyOf(pod->meta.uid).lo);
  auto statuses = [&](const char* list, bool init) {
    std::string out = "[";
    if (spec == nullptr) return out.append("]");
    auto l = spec->FindMember(list);
    if (l == spec->MemberEnd() || !l->value.IsArray()) return out.append("]");
    uint64_t c = 0;
    for (const rapidjson::Value& container : l->value.GetArray()) {
      if (!container.IsObject()) continue;
      std::string_view name, image;
      if (auto m = container.FindMember("name");
          m != container.MemberEnd() && m->value.IsString()) {
        name = std::string_view(m->value.GetString(), m->value.GetStringLength());
      }
      if (auto m = container.FindMember("image");
          m != container.MemberEnd() && m->value.IsString()) {
        image = std::string_view(m->value.GetString(), m->value.GetStringLength());
      }
      if (c > 0) out.push_back(',');
      ++c;
      const std::string id =
          Hex(Mix(seed + c), Mix(seed + c + 100)) + Hex(Mix(seed + c + 200), Mix(seed + c + 300));
      out.append(R"({"name":)");
      AppendJsonString(out, name);
      out.append(R"(,"image":)");
      AppendJsonString(out, image);
      out.append(R"(,"imageID":)");
      AppendJsonString(out, std::string(image) + "@sha256:" + id);
      out.append(R"(,"containerID":"containerd://)").append(id).append("\"");
      if (init) {
        out.append(R"(,"ready":true,"restartCount":0,"started":false,"state":{"terminated":{)"
                   R"("exitCode":0,"reason":"Completed","startedAt":")")
            .append(now)
            .append(R"(","finishedAt":")")
            .append(now)
            .append(R"(","containerID":"containerd://)")
            .append(id)
            .append(R"("}}})");
      } else {
        out.append(R"(,"ready":true,"restartCount":0,"started":true,"state":{"running":{)"
                   R"("startedAt":")")
            .append(now)
            .append(R"("}}})");
      }
    }
    return out.append("]");
  };
  std::string patch = R"({"metadata":{"uid":)";
  AppendJsonString(patch, pod->meta.uid);
  patch.append(R"(},"status":{"phase":"Running","conditions":[)");
  for (const char* type :
       {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady"}) {
    if (type[0] != 'P') patch.push_back(',');
    patch.append(R"({"type":")").append(type).append(R"(","status":"True","lastProbeTime":null,)");
    patch.append(R"("lastTransitionTime":")").append(now).append("\"}");
  }
  patch.append(R"(],"hostIP":")").append(n.host_ip);
  patch.append(R"(","hostIPs":[{"ip":")").append(n.host_ip);
  patch.append(R"("}],"podIP":")").append(pod_ip);
  patch.append(R"(","podIPs":[{"ip":")").append(pod_ip);
  patch.append(R"("}],"startTime":")").append(now);
  patch.append(R"(","containerStatuses":)").append(statuses("containers", false));
  if (!pod->spec.init_containers.empty()) {
    patch.append(R"(,"initContainerStatuses":)").append(statuses("initContainers", true));
  }
  patch.append("}}");
  const api::UidKey key = api::UidKeyOf(pod->meta.uid);
  client_->Patch(Resource::kPods, pod->meta.namespace_, pod->meta.name,
                 server::Subresource::kStatus, api::PatchType::kStrategicMergePatch,
                 std::move(patch), Tracked([this, key](server::ApiResult<store::Bytes> r) {
                   if (r || IsNotFound(r.error()) || r.error().code == 409) return;
                   // Tried again when the pod next changes, or at the kubelet's next resync.
                   loop_->Post([this, key] {
                     if (auto it = pods_.find(key); it != pods_.end()) it->second.started = false;
                   });
                 }));
}

void Kubelets::FinishPod(api::UidKey key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  PodState& state = it->second;
  state.finish_timer = 0;
  const NodeState& n = nodes_[static_cast<size_t>(state.node)];
  if (n.phase != Phase::kRegistered || n.sim.unreachable) return;  // again once it is back
  // The pod as the kubelet last saw it: its name and UID for the delete.
  ObjectPtr pod;
  for (const ObjectPtr& p : pod_informer_->ByIndex(kNodeNameIndex, n.name)) {
    if (api::UidKeyOf(p->meta().uid) == key) pod = p;
  }
  if (!pod) return;
  state.finishing = true;
  server::DeleteOptions options;
  options.grace_period_seconds = 0;
  options.precondition_uid = pod->meta().uid;
  client_->Delete(Resource::kPods, pod->meta().namespace_, pod->meta().name, std::move(options),
                  Tracked([this, key](server::ApiResult<store::Bytes> r) {
                    if (r || IsNotFound(r.error()) || r.error().code == 409) return;
                    loop_->Post([this, key] {
                      auto it = pods_.find(key);
                      if (it == pods_.end()) return;
                      it->second.finishing = false;
                      it->second.finish_timer = loop_->At(clock_->Now() + std::chrono::seconds(1),
                                                          [this, key] { FinishPod(key); });
                    });
                  }));
}

}  // namespace kt::kubelet
