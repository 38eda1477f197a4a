#include "cli/check.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <map>

#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/prettywriter.h>

#include "admission/priority.h"
#include "api/codec.h"
#include "api/defaults.h"
#include "api/manifest.h"
#include "api/scheduling.h"
#include "client/rest/http_client.h"
#include "client/rest/kubeconfig.h"
#include "controllers/tainteviction/controller.h"
#include "core/taint_spec.h"
#include "core/validation.h"
#include "scheduler/config.h"
#include "scheduler/evaluate.h"
#include "server/object.h"
#include "server/resources.h"

namespace kt::cli {

namespace {

using rapidjson::Document;
using server::ObjectPtr;
using server::Resource;

// An object to evaluate or to place, with where it came from (for error messages).
struct Input {
  Document doc;
  std::string where;
};

std::string EvictionText(const EvictionVerdict& v) {
  switch (v.eviction) {
    case Eviction::kStays:
      return "stays";
    case Eviction::kNow:
      return "evict now";
    case Eviction::kAfter:
      return "evict after " + std::to_string(v.after_seconds) + "s";
  }
  return "";
}

// "file.yaml: document 2 (Pod web): " — the prefix of every error about one object.
std::string ObjectPrefix(const api::Manifest& m) {
  std::string p = m.Location();
  p.append(" (").append(m.kind);
  if (!m.name.empty()) p.append(" ").append(m.name);
  p.append("): ");
  return p;
}

std::string JoinFieldErrors(const FieldErrorList& errors) {
  std::string out;
  for (const FieldError& e : errors) {
    if (!out.empty()) out += "; ";
    out += e.ToString();
  }
  return out;
}

std::string Str(const rapidjson::Value& obj, const char* name) {
  if (!obj.IsObject()) return "";
  auto it = obj.FindMember(name);
  return it != obj.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

rapidjson::Value& Member(Document& doc, const char* name) {
  auto it = doc.FindMember(name);
  if (it == doc.MemberEnd()) {
    doc.AddMember(rapidjson::Value(name, doc.GetAllocator()),
                  rapidjson::Value(rapidjson::kObjectType), doc.GetAllocator());
    return doc[name];
  }
  if (!it->value.IsObject()) it->value.SetObject();
  return it->value;
}

void SetStr(rapidjson::Value& obj, const char* name, const std::string& v,
            Document::AllocatorType& alloc) {
  if (obj.HasMember(name)) obj.RemoveMember(name);
  obj.AddMember(rapidjson::Value(name, alloc), rapidjson::Value(v.c_str(), alloc), alloc);
}

// A stored object (JSON plus typed view) from a document.
Result<ObjectPtr> ToObject(Resource r, const Document& doc) {
  const server::ResourceInfo& info = server::Info(r);
  const rapidjson::Value& meta = doc["metadata"];
  std::string stored = server::EncodeForStorage(doc);
  return server::MakeStoredObject(
      info, server::ObjectKey(info, Str(meta, "namespace"), Str(meta, "name")),
      store::MakeBytes(std::move(stored)), 1, 1);
}

// Applies one what-if taint change ("NODE" and a kubectl-taint SPEC) to the node it names.
Status ApplyTaintChange(const std::string& node_name, const std::string& spec,
                        std::map<std::string, Input>& nodes) {
  const std::string prefix = "--taint " + node_name + " " + spec + ": ";
  auto it = nodes.find(node_name);
  if (it == nodes.end()) {
    return NotFound(prefix + "node \"" + node_name + "\" not found");
  }
  Result<api::Node> node = api::DecodeNode(it->second.doc);
  if (!node) return node.error().WithPrefix(prefix);
  Result<TaintChanges> changes = ParseTaints(std::span<const std::string>(&spec, 1));
  if (!changes) return changes.error().WithPrefix(prefix);
  TaintUpdate update = UpdateNodeTaints(node->meta.name, node->spec.taints, *changes, true);
  if (!update.ok()) return update.ToStatus().WithPrefix(prefix);
  return api::SetTaints(it->second.doc, update.taints);
}

// Splits the --taint values into (node, spec) pairs: "NODE=SPEC", or "NODE" then "SPEC".
Result<std::vector<std::pair<std::string, std::string>>> TaintPairs(
    const std::vector<std::string>& values) {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string& v = values[i];
    const size_t eq = v.find('=');
    const bool spec_like = v.find(':') != std::string::npos || (!v.empty() && v.back() == '-');
    if (eq == std::string::npos && !spec_like) {  // a node name: the spec follows
      if (i + 1 >= values.size()) {
        return Err(BadRequest("--taint " + v +
                              ": expected NODE SPEC or NODE=SPEC, e.g. node1 "
                              "key1=value1:NoSchedule"));
      }
      out.emplace_back(v, values[++i]);
      continue;
    }
    if (eq == std::string::npos || eq == 0 || eq + 1 == v.size()) {
      return Err(BadRequest("--taint " + v +
                            ": expected NODE=SPEC or NODE SPEC, e.g. "
                            "node1=key1=value1:NoSchedule or node1 key1-"));
    }
    out.emplace_back(v.substr(0, eq), v.substr(eq + 1));
  }
  return out;
}

// The two classes kube-apiserver creates at start-up.
std::vector<api::PriorityClass> SystemPriorityClasses() {
  std::span<const api::PriorityClass> system = api::SystemPriorityClasses();
  return {system.begin(), system.end()};
}

struct Inputs {
  std::map<std::string, Input> nodes;  // by name
  std::vector<std::string> node_order;
  std::vector<Input> pods;              // from the manifests: reported
  std::vector<ObjectPtr> cluster_pods;  // from the server: placed only
  std::vector<api::PriorityClass> classes;
};

Status LoadManifests(const CheckOptions& options, Inputs& in) {
  const bool allow_comparison = options.gates.taint_toleration_comparison_operators;
  std::map<std::string, std::string> node_where;
  for (const std::string& file : options.files) {
    Result<std::vector<api::Manifest>> manifests = api::LoadManifestFile(file);
    if (!manifests) return manifests.error();
    for (api::Manifest& m : *manifests) {
      if (m.kind == "Node" && m.api_version == "v1") {
        Result<api::Node> node = api::DecodeNode(m.object);
        if (!node) return node.error().WithPrefix(ObjectPrefix(m));
        FieldErrorList errors = ValidateNodeTaints(node->spec.taints, "metadata.taints");
        if (!errors.empty()) return BadRequest(ObjectPrefix(m) + JoinFieldErrors(errors));
        if (node_where.count(node->meta.name)) {
          return BadRequest(ObjectPrefix(m) + "duplicate Node, also at " +
                            node_where[node->meta.name]);
        }
        node_where[node->meta.name] = m.Location();
        if (!in.nodes.count(node->meta.name)) in.node_order.push_back(node->meta.name);
        in.nodes[node->meta.name] = Input{std::move(m.object), m.Location()};
      } else if (m.kind == "Pod" && m.api_version == "v1") {
        Result<api::Pod> pod = api::DecodePod(m.object);
        if (!pod) return pod.error().WithPrefix(ObjectPrefix(m));
        FieldErrorList errors =
            ValidateTolerations(pod->spec.tolerations, "spec.tolerations", allow_comparison);
        if (!errors.empty()) return BadRequest(ObjectPrefix(m) + JoinFieldErrors(errors));
        in.pods.push_back(Input{std::move(m.object), ObjectPrefix(m)});
      } else if (m.kind == "PriorityClass" && m.api_version == "scheduling.k8s.io/v1") {
        Result<api::PriorityClass> pc = api::DecodePriorityClass(m.object);
        if (!pc) return pc.error().WithPrefix(ObjectPrefix(m));
        in.classes.push_back(std::move(*pc));
      }
    }
  }
  return Status::Ok();
}

Status LoadCluster(const CheckOptions& options, Inputs& in) {
  // As kubectl: --server overrides the kubeconfig's server and keeps its credentials and CA; a
  // kubeconfig is needed only when --server is absent or one was named.
  client::RestConfig config;
  const std::string path =
      options.kubeconfig.empty() ? client::DefaultKubeconfigPath() : options.kubeconfig;
  std::error_code ec;
  if (options.server.empty() || !options.kubeconfig.empty() || std::filesystem::exists(path, ec)) {
    Result<client::RestConfig> c = client::LoadKubeconfig(path, options.context);
    if (!c) return c.error();
    config = std::move(*c);
  }
  if (!options.server.empty()) config.server = options.server;
  Result<std::unique_ptr<client::RestTransport>> t = client::RestTransport::New(config);
  if (!t) return t.error();
  auto list = [&](Resource r, std::string fields) {
    return client::NewHttpListerWatcher(t->get(), server::Info(r), "", std::move(fields))->List();
  };
  auto nodes = list(Resource::kNodes, "");
  if (!nodes) return nodes.error();
  for (const ObjectPtr& n : nodes->items) {
    Result<Document> doc = api::ParseTrustedJson(*n->json);
    if (!doc) return doc.error();
    in.node_order.push_back(n->meta().name);
    in.nodes[n->meta().name] = Input{std::move(*doc), config.server};
  }
  auto pods = list(Resource::kPods, "status.phase!=Succeeded,status.phase!=Failed");
  if (!pods) return pods.error();
  in.cluster_pods = std::move(pods->items);
  auto classes = list(Resource::kPriorityClasses, "");
  if (!classes) return classes.error();
  for (const ObjectPtr& pc : classes->items) {
    if (const api::PriorityClass* p = pc->As<api::PriorityClass>()) in.classes.push_back(*p);
  }
  return Status::Ok();
}

// Defaults a pod document as the API server would on create: namespace, uid, schedulerName,
// and the Priority admission plugin's priority.
Status PreparePod(Document& doc, const std::vector<api::PriorityClass>& classes,
                  const std::string& where) {
  auto& alloc = doc.GetAllocator();
  rapidjson::Value& meta = Member(doc, "metadata");
  if (Str(meta, "namespace").empty()) SetStr(meta, "namespace", "default", alloc);
  if (Str(meta, "uid").empty()) {
    SetStr(meta, "uid", "check-" + Str(meta, "namespace") + "-" + Str(meta, "name"), alloc);
  }
  Member(doc, "spec");
  api::SetPodDefaults(doc);
  admission::PriorityClasses lister{
      [&classes](std::string_view name) -> std::optional<api::PriorityClass> {
        for (const auto& pc : classes) {
          if (pc.meta.name == name) return pc;
        }
        return std::nullopt;
      },
      [&classes](const auto& fn) {
        for (const auto& pc : classes) fn(pc);
      }};
  if (Status s = admission::AdmitPodPriorityOnCreate(doc, lister); !s.ok()) {
    return s.WithPrefix(where);
  }
  return Status::Ok();
}

// The human reason of one failing filter; TaintToleration names the taint.
std::string HumanReason(const PluginVerdict& v, const std::optional<Taint>& untolerated) {
  if (v.plugin == "TaintToleration" && untolerated) {
    return "untolerated taint " + TaintToString(*untolerated);
  }
  std::string r;
  for (const std::string& s : v.reasons) {
    if (!r.empty()) r += ", ";
    r += s;
  }
  return r;
}

int PreferNoScheduleUntolerated(const api::Pod& pod, const api::Node& node, bool gate) {
  int count = 0;
  for (const Taint& t : node.spec.taints) {
    if (t.effect != kEffectPreferNoSchedule) continue;
    bool tolerated = false;
    for (const Toleration& tol : pod.spec.tolerations) {
      if ((tol.effect.empty() || tol.effect == kEffectPreferNoSchedule) &&
          ToleratesTaint(tol, t, gate)) {
        tolerated = true;
      }
    }
    if (!tolerated) ++count;
  }
  return count;
}

}  // namespace

bool PodReport::HasFeasibleNode() const {
  return std::any_of(nodes.begin(), nodes.end(), [](const NodeVerdict& v) { return v.feasible; });
}

namespace {

EvictionVerdict VerdictOf(const controllers::tainteviction::Decision& d) {
  using controllers::tainteviction::Decision;
  switch (d.kind) {
    case Decision::kNow:
      return {Eviction::kNow, 0};
    case Decision::kAfter:
      return {Eviction::kAfter, d.seconds};
    case Decision::kNone:
    case Decision::kStay:
      break;
  }
  return {Eviction::kStays, 0};
}

}  // namespace

EvictionVerdict EvictionFor(const api::Pod& pod, const api::Node& node, const FeatureGates& gates) {
  return VerdictOf(controllers::tainteviction::Decide(
      controllers::tainteviction::NoExecuteTaints(node), pod.spec.tolerations,
      gates.taint_toleration_comparison_operators));
}

Result<CheckReport> RunCheck(const CheckOptions& options) {
  Inputs in;
  if (options.live) {
    if (Status s = LoadCluster(options, in); !s.ok()) return Err(s);
  }
  if (Status s = LoadManifests(options, in); !s.ok()) return Err(s);
  for (const api::PriorityClass& pc : SystemPriorityClasses()) {
    if (std::none_of(in.classes.begin(), in.classes.end(),
                     [&](const api::PriorityClass& c) { return c.meta.name == pc.meta.name; })) {
      in.classes.push_back(pc);
    }
  }
  Result<std::vector<std::pair<std::string, std::string>>> changes =
      TaintPairs(options.taint_changes);
  if (!changes) return Err(changes.error());
  // Each changed node's NoExecute taints before the change, for the eviction preview.
  std::map<std::string, std::vector<Taint>> before;
  for (const auto& [node, spec] : *changes) {
    auto it = in.nodes.find(node);
    if (it != in.nodes.end() && before.count(node) == 0) {
      Result<api::Node> decoded = api::DecodeNode(it->second.doc);
      if (decoded) before[node] = controllers::tainteviction::NoExecuteTaints(*decoded);
    }
    if (Status s = ApplyTaintChange(node, spec, in.nodes); !s.ok()) return Err(s);
  }

  scheduler::SchedulerConfig config = scheduler::DefaultSchedulerConfig();
  if (!options.scheduler_config.empty()) {
    Result<scheduler::SchedulerConfig> c = scheduler::LoadSchedulerConfig(options.scheduler_config);
    if (!c) return Err(c.error());
    config = std::move(*c);
  }
  scheduler::Evaluator ev(config.profiles, options.gates);
  if (Status s = ev.Init(); !s.ok()) return Err(s);

  CheckReport report;
  std::map<std::string, ObjectPtr> node_objects;
  for (const std::string& name : in.node_order) {
    Input& n = in.nodes[name];
    Result<ObjectPtr> obj = ToObject(Resource::kNodes, n.doc);
    if (!obj) return Err(obj.error().WithPrefix(n.where + ": "));
    const api::Node& node = *(*obj)->As<api::Node>();
    if (node.status.allocatable.empty()) {
      report.notes.push_back("node " + name +
                             " has no status.allocatable: the scheduler fits no pod there "
                             "(\"Too many pods\")");
    }
    node_objects[name] = *obj;
    ev.AddNode(*obj);
  }
  report.node_count = node_objects.size();

  // The pods to report, prepared as the API server would have stored them.
  std::vector<ObjectPtr> reported;
  for (Input& p : in.pods) {
    if (Status s = PreparePod(p.doc, in.classes, p.where); !s.ok()) return Err(s);
    Result<ObjectPtr> obj = ToObject(Resource::kPods, p.doc);
    if (!obj) return Err(obj.error().WithPrefix(p.where));
    reported.push_back(*obj);
  }
  for (const ObjectPtr& p : in.cluster_pods) ev.AddPod(p);
  for (const ObjectPtr& p : reported) ev.AddPod(p);

  const bool comparison = options.gates.taint_toleration_comparison_operators;
  for (const auto& [name, old_taints] : before) {
    NodeEvictionPreview preview;
    preview.node = name;
    preview.no_execute =
        controllers::tainteviction::NoExecuteTaints(*node_objects.at(name)->As<api::Node>());
    for (const std::vector<ObjectPtr>* list : {&in.cluster_pods, &reported}) {
      for (const ObjectPtr& obj : *list) {
        const api::Pod* pod = obj->As<api::Pod>();
        if (pod == nullptr || pod->spec.node_name != name) continue;
        const auto then =
            controllers::tainteviction::Decide(old_taints, pod->spec.tolerations, comparison);
        const auto now = controllers::tainteviction::Decide(preview.no_execute,
                                                            pod->spec.tolerations, comparison);
        PodEviction e{pod->meta.namespace_, pod->meta.name, VerdictOf(now), false};
        // A countdown that runs already is kept (semantics.md §6.4); a pod due already goes.
        using controllers::tainteviction::Decision;
        if (then.kind == Decision::kNow) {
          e.verdict = {Eviction::kNow, 0};
        } else if (then.kind == Decision::kAfter && now.kind == Decision::kAfter) {
          e.verdict.after_seconds = then.seconds;
          e.countdown_running = true;
        }
        preview.pods.push_back(std::move(e));
      }
    }
    std::sort(preview.pods.begin(), preview.pods.end(),
              [](const PodEviction& a, const PodEviction& b) {
                return a.namespace_ != b.namespace_ ? a.namespace_ < b.namespace_ : a.name < b.name;
              });
    preview.pods.erase(std::unique(preview.pods.begin(), preview.pods.end(),
                                   [](const PodEviction& a, const PodEviction& b) {
                                     return a.namespace_ == b.namespace_ && a.name == b.name;
                                   }),
                       preview.pods.end());
    report.evictions.push_back(std::move(preview));
  }
  if (in.pods.empty() && options.live) {
    // No pods given: explain the cluster's pending ones.
    for (const ObjectPtr& p : in.cluster_pods) {
      const api::Pod* pod = p->As<api::Pod>();
      if (pod != nullptr && pod->spec.node_name.empty()) reported.push_back(p);
    }
  }

  const bool gate = options.gates.taint_toleration_comparison_operators;
  for (const ObjectPtr& obj : reported) {
    const api::Pod& pod = *obj->As<api::Pod>();
    PodReport r;
    r.namespace_ = pod.meta.namespace_;
    r.name = pod.meta.name;
    r.node_name = pod.spec.node_name;
    // A bound pod is evaluated as if it were not bound.
    ObjectPtr unbound = obj;
    if (!pod.spec.node_name.empty()) {
      Result<Document> doc = api::ParseTrustedJson(*obj->json);
      if (!doc) return Err(doc.error());
      (*doc)["spec"].RemoveMember("nodeName");
      Result<ObjectPtr> u = ToObject(Resource::kPods, *doc);
      if (!u) return Err(u.error());
      unbound = *u;
    }
    Result<scheduler::PodEvaluation> e = ev.Evaluate(unbound);
    if (!e) return Err(e.error().WithPrefix("pod " + r.namespace_ + "/" + r.name + ": "));
    r.scheduler_name = e->scheduler_name;
    r.handled = e->handled;
    r.selected_node = e->selected_node;
    r.message = e->message;
    r.nominated_node = e->nominated_node;
    r.victims = e->victims;
    for (const scheduler::NodeEvaluation& ne : e->nodes) {
      const api::Node& node = *ne.node->node();
      NodeVerdict v;
      v.node = node.meta.name;
      v.feasible = ne.feasible;
      v.bound_here = !r.node_name.empty() && r.node_name == v.node;
      if (const Taint* t = FindMatchingUntoleratedTaint(
              node.spec.taints, pod.spec.tolerations, TaintFilter::kNoScheduleOrNoExecute, gate)) {
        v.untolerated_taint = *t;
      }
      for (const auto& [plugin, s] : ne.filters) {
        PluginVerdict pv{plugin, std::string(scheduler::CodeName(s.code())), s.Reasons()};
        if (!s.IsSuccess() && !s.IsSkip()) {
          v.reasons.push_back(plugin + ": " + HumanReason(pv, v.untolerated_taint));
        }
        v.filters.push_back(std::move(pv));
      }
      if (!e->pre_filter_message.empty()) v.reasons.push_back(e->pre_filter_message);
      if (ne.feasible && !ne.scores.empty()) {
        v.score = ne.total_score;
        for (const auto& s : ne.scores) {
          v.scores.push_back(
              PluginScore{std::string(s.plugin), s.raw, s.normalized, s.weight, s.weighted});
        }
      }
      v.prefer_no_schedule_untolerated = PreferNoScheduleUntolerated(pod, node, gate);
      v.if_running = EvictionFor(pod, node, options.gates);
      r.nodes.push_back(std::move(v));
    }
    report.pods.push_back(std::move(r));
  }
  return report;
}

int CheckExitCode(const CheckReport& report) {
  for (const PodReport& r : report.pods) {
    if (r.handled && r.node_name.empty() && !r.HasFeasibleNode()) return 1;
  }
  return 0;
}

namespace {

void PrintTable(const std::vector<std::string>& header,
                const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    out << "  ";
    for (size_t c = 0; c < row.size(); ++c) {
      if (c + 1 == row.size()) {
        out << row[c];
      } else {
        out << std::left << std::setw(static_cast<int>(width[c] + 2)) << row[c];
      }
    }
    out << "\n";
  };
  print_row(header);
  for (const auto& row : rows) print_row(row);
}

}  // namespace

static void WriteEvictionPreview(const CheckReport& report, std::ostream& out) {
  for (const NodeEvictionPreview& p : report.evictions) {
    out << "node " << p.node << " after the change: ";
    if (p.no_execute.empty()) {
      out << "no NoExecute taint";
    } else {
      out << "NoExecute taint(s)";
      for (const Taint& t : p.no_execute) out << " " << TaintToString(t);
    }
    out << "\n";
    if (p.pods.empty()) {
      out << "  no pods run there\n\n";
      continue;
    }
    size_t now = 0, later = 0, stay = 0;
    std::vector<std::vector<std::string>> rows;
    for (const PodEviction& e : p.pods) {
      std::string what = EvictionText(e.verdict);
      if (e.countdown_running) {
        what = "evict when its running countdown ends (at most " +
               std::to_string(e.verdict.after_seconds) + "s from now)";
      }
      rows.push_back({e.namespace_ + "/" + e.name, what});
      switch (e.verdict.eviction) {
        case Eviction::kNow:
          ++now;
          break;
        case Eviction::kAfter:
          ++later;
          break;
        case Eviction::kStays:
          ++stay;
          break;
      }
    }
    PrintTable({"POD", "EVICTION"}, rows, out);
    out << "  " << p.pods.size() << " pod(s): " << now << " evicted now, " << later
        << " after a countdown, " << stay << " stay\n\n";
  }
}

void WriteCheckText(const CheckReport& report, std::ostream& out) {
  for (const std::string& note : report.notes) out << "note: " << note << "\n";
  if (!report.notes.empty()) out << "\n";
  WriteEvictionPreview(report, out);
  if (report.pods.empty()) {
    if (report.evictions.empty()) {
      out << "no pods to check (" << report.node_count << " node(s))\n";
    }
    return;
  }
  size_t without_node = 0;
  for (const PodReport& r : report.pods) {
    size_t feasible = 0;
    for (const NodeVerdict& v : r.nodes) feasible += v.feasible ? 1 : 0;
    out << "pod " << r.namespace_ << "/" << r.name;
    if (!r.node_name.empty()) out << " (bound to " << r.node_name << ")";
    if (!r.handled) {
      out << ": schedulerName \"" << r.scheduler_name
          << "\" is not a profile of this scheduler; it leaves the pod alone\n\n";
      continue;
    }
    if (r.nodes.empty()) {
      out << ": no nodes to check\n";
    } else if (feasible == 0) {
      out << ": no feasible node\n";
    } else {
      out << ": feasible on " << feasible << " of " << r.nodes.size()
          << " node(s); the scheduler picks " << r.selected_node << "\n";
    }
    if (r.node_name.empty() && feasible == 0) ++without_node;
    if (!r.message.empty()) out << "  " << r.message << "\n";
    if (!r.nominated_node.empty()) {
      out << "  preemption would nominate " << r.nominated_node << " and evict";
      for (const std::string& v : r.victims) out << " " << v;
      out << "\n";
    }
    if (r.nodes.empty()) {
      out << "\n";
      continue;
    }
    std::vector<std::vector<std::string>> rows;
    for (const NodeVerdict& v : r.nodes) {
      std::string reasons;
      for (const std::string& reason : v.reasons) {
        if (!reasons.empty()) reasons += "; ";
        reasons += reason;
      }
      std::string scores;
      for (const PluginScore& s : v.scores) {
        if (!scores.empty()) scores += " ";
        scores += s.plugin + "=" + std::to_string(s.weight) + "x" + std::to_string(s.normalized);
      }
      rows.push_back({v.node + (v.bound_here ? " (bound)" : ""), v.feasible ? "yes" : "no",
                      v.score ? std::to_string(*v.score) : "-", EvictionText(v.if_running),
                      reasons.empty() ? (scores.empty() ? "-" : scores) : reasons});
    }
    PrintTable(
        {"NODE", "FEASIBLE", "SCORE", "IF-RUNNING-THERE", "REASONS / SCORES (weight x score)"},
        rows, out);
    out << "\n";
  }
  out << report.pods.size() << " pod(s), " << report.node_count << " node(s): ";
  if (without_node == 0) {
    out << "every unbound pod has a feasible node\n";
  } else {
    out << without_node << " unbound pod(s) without a feasible node\n";
  }
}

void WriteCheckJson(const CheckReport& report, std::ostream& out) {
  rapidjson::OStreamWrapper os(out);
  rapidjson::PrettyWriter<rapidjson::OStreamWrapper> w(os);
  w.SetIndent(' ', 2);
  auto str = [&](const std::string& s) {
    w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  };
  auto opt_str = [&](const std::string& s) {
    if (s.empty()) {
      w.Null();
    } else {
      str(s);
    }
  };
  w.StartObject();
  w.Key("notes");
  w.StartArray();
  for (const std::string& n : report.notes) str(n);
  w.EndArray();
  w.Key("pods");
  w.StartArray();
  for (const PodReport& r : report.pods) {
    w.StartObject();
    w.Key("namespace");
    str(r.namespace_);
    w.Key("name");
    str(r.name);
    w.Key("schedulerName");
    str(r.scheduler_name);
    w.Key("handled");
    w.Bool(r.handled);
    w.Key("selectedNode");
    opt_str(r.selected_node);
    w.Key("message");
    opt_str(r.message);
    w.Key("preemption");
    if (r.nominated_node.empty()) {
      w.Null();
    } else {
      w.StartObject();
      w.Key("node");
      str(r.nominated_node);
      w.Key("victims");
      w.StartArray();
      for (const std::string& v : r.victims) str(v);
      w.EndArray();
      w.EndObject();
    }
    w.Key("nodes");
    w.StartArray();
    for (const NodeVerdict& v : r.nodes) {
      w.StartObject();
      w.Key("name");
      str(v.node);
      w.Key("feasible");
      w.Bool(v.feasible);
      w.Key("reasons");
      w.StartArray();
      for (const std::string& reason : v.reasons) str(reason);
      w.EndArray();
      w.Key("untoleratedTaint");
      if (v.untolerated_taint) {
        w.StartObject();
        w.Key("key");
        str(v.untolerated_taint->key);
        w.Key("value");
        str(v.untolerated_taint->value);
        w.Key("effect");
        str(v.untolerated_taint->effect);
        w.EndObject();
      } else {
        w.Null();
      }
      w.Key("preferNoScheduleUntolerated");
      w.Int(v.prefer_no_schedule_untolerated);
      w.Key("score");
      if (v.score) {
        w.Int64(*v.score);
      } else {
        w.Null();
      }
      w.Key("filters");
      w.StartArray();
      for (const PluginVerdict& f : v.filters) {
        w.StartObject();
        w.Key("plugin");
        str(f.plugin);
        w.Key("status");
        str(f.code);
        w.Key("reasons");
        w.StartArray();
        for (const std::string& reason : f.reasons) str(reason);
        w.EndArray();
        w.EndObject();
      }
      w.EndArray();
      w.Key("scores");
      w.StartArray();
      for (const PluginScore& s : v.scores) {
        w.StartObject();
        w.Key("plugin");
        str(s.plugin);
        w.Key("raw");
        w.Int64(s.raw);
        w.Key("normalized");
        w.Int64(s.normalized);
        w.Key("weight");
        w.Int64(s.weight);
        w.Key("weighted");
        w.Int64(s.weighted);
        w.EndObject();
      }
      w.EndArray();
      w.Key("eviction");
      if (v.bound_here) {
        switch (v.if_running.eviction) {
          case Eviction::kStays:
            w.String("stays");
            break;
          case Eviction::kNow:
            w.String("now");
            break;
          case Eviction::kAfter:
            w.String("after");
            break;
        }
      } else {
        w.Null();
      }
      w.Key("evictAfterSeconds");
      if (v.bound_here && v.if_running.eviction == Eviction::kAfter) {
        w.Int64(v.if_running.after_seconds);
      } else {
        w.Null();
      }
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("evictions");
  w.StartArray();
  for (const NodeEvictionPreview& p : report.evictions) {
    w.StartObject();
    w.Key("node");
    str(p.node);
    w.Key("noExecuteTaints");
    w.StartArray();
    for (const Taint& t : p.no_execute) str(TaintToString(t));
    w.EndArray();
    w.Key("pods");
    w.StartArray();
    for (const PodEviction& e : p.pods) {
      w.StartObject();
      w.Key("namespace");
      str(e.namespace_);
      w.Key("name");
      str(e.name);
      w.Key("eviction");
      str(e.verdict.eviction == Eviction::kNow     ? "now"
          : e.verdict.eviction == Eviction::kAfter ? "after"
                                                   : "stays");
      w.Key("evictAfterSeconds");
      if (e.verdict.eviction == Eviction::kAfter) {
        w.Int64(e.verdict.after_seconds);
      } else {
        w.Null();
      }
      w.Key("countdownRunning");
      w.Bool(e.countdown_running);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  os.Flush();
  out << "\n";
}

}  // namespace kt::cli
