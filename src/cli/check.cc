#include "cli/check.h"

#include <algorithm>
#include <iomanip>

#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/prettywriter.h>

#include "api/codec.h"
#include "api/manifest.h"
#include "api/node_affinity.h"
#include "core/taint_spec.h"
#include "core/validation.h"

namespace kt::cli {

namespace {

constexpr std::string_view kReasonNodeAffinity = "node didn't match Pod's node affinity/selector";
constexpr std::string_view kReasonUnschedulable = "node is unschedulable (cordoned)";

const Taint& UnschedulableTaint() {
  static const Taint* taint = new Taint{std::string(kTaintNodeUnschedulable), "",
                                        std::string(kEffectNoSchedule), std::nullopt};
  return *taint;
}

std::string PodKey(const PodReport& r) { return r.namespace_ + "/" + r.name; }

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

}  // namespace

bool PodReport::HasFeasibleNode() const {
  return std::any_of(nodes.begin(), nodes.end(), [](const NodeVerdict& v) { return v.feasible; });
}

EvictionVerdict EvictionFor(const api::Pod& pod, const api::Node& node, const FeatureGates& gates) {
  std::vector<Taint> no_execute;
  for (const Taint& t : node.spec.taints) {
    if (t.effect == kEffectNoExecute) no_execute.push_back(t);
  }
  if (no_execute.empty()) return {Eviction::kStays, 0};
  auto used = GetMatchingTolerations(no_execute, pod.spec.tolerations,
                                     gates.taint_toleration_comparison_operators);
  if (!used) return {Eviction::kNow, 0};
  int64_t seconds = MinTolerationSeconds(*used);
  if (seconds < 0) return {Eviction::kStays, 0};
  if (seconds == 0) return {Eviction::kNow, 0};
  return {Eviction::kAfter, seconds};
}

NodeVerdict CheckPodOnNode(const api::Pod& pod, const api::Node& node, const FeatureGates& gates) {
  const bool gate = gates.taint_toleration_comparison_operators;
  NodeVerdict v;
  v.node = node.meta.name;
  v.bound_here = !pod.spec.node_name.empty() && pod.spec.node_name == node.meta.name;

  if (node.spec.unschedulable &&
      !TolerationsTolerateTaint(pod.spec.tolerations, UnschedulableTaint(), gate)) {
    v.feasible = false;
    v.reasons.emplace_back(kReasonUnschedulable);
  }
  if (!api::PodMatchesNodeSelectorAndAffinityTerms(pod, node)) {
    v.feasible = false;
    v.reasons.emplace_back(kReasonNodeAffinity);
  }
  if (const Taint* t = FindMatchingUntoleratedTaint(node.spec.taints, pod.spec.tolerations,
                                                    TaintFilter::kNoScheduleOrNoExecute, gate)) {
    v.feasible = false;
    v.untolerated_taint = *t;
    v.reasons.push_back("untolerated taint " + TaintToString(*t));
  }
  // Upstream scoring looks only at tolerations with an empty or PreferNoSchedule effect.
  for (const Taint& t : node.spec.taints) {
    if (t.effect != kEffectPreferNoSchedule) continue;
    bool tolerated = false;
    for (const Toleration& tol : pod.spec.tolerations) {
      if ((tol.effect.empty() || tol.effect == kEffectPreferNoSchedule) &&
          ToleratesTaint(tol, t, gate)) {
        tolerated = true;
        break;
      }
    }
    if (!tolerated) ++v.prefer_no_schedule_untolerated;
  }
  v.if_running = EvictionFor(pod, node, gates);
  return v;
}

std::vector<PodReport> CheckPods(const std::vector<api::Pod>& pods,
                                 const std::vector<api::Node>& nodes, const FeatureGates& gates) {
  std::vector<PodReport> reports;
  reports.reserve(pods.size());
  for (const api::Pod& pod : pods) {
    PodReport r;
    r.namespace_ = pod.meta.namespace_.empty() ? "default" : pod.meta.namespace_;
    r.name = pod.meta.name;
    r.node_name = pod.spec.node_name;
    r.nodes.reserve(nodes.size());
    for (const api::Node& node : nodes) r.nodes.push_back(CheckPodOnNode(pod, node, gates));
    reports.push_back(std::move(r));
  }
  return reports;
}

int CheckExitCode(const std::vector<PodReport>& reports) {
  for (const PodReport& r : reports) {
    if (r.node_name.empty() && !r.HasFeasibleNode()) return 1;
  }
  return 0;
}

void WriteCheckText(const std::vector<PodReport>& reports, size_t node_count, std::ostream& out) {
  if (reports.empty()) {
    out << "no pods in the manifests (" << node_count << " node(s))\n";
    return;
  }
  size_t without_node = 0;
  for (const PodReport& r : reports) {
    size_t feasible = 0;
    for (const NodeVerdict& v : r.nodes) feasible += v.feasible ? 1 : 0;
    out << "pod " << PodKey(r);
    if (!r.node_name.empty()) out << " (bound to " << r.node_name << ")";
    if (r.nodes.empty()) {
      out << ": no nodes to check\n";
    } else if (feasible == 0) {
      out << ": no feasible node\n";
    } else {
      out << ": feasible on " << feasible << " of " << r.nodes.size() << " node(s)\n";
    }
    if (r.node_name.empty() && feasible == 0) ++without_node;
    if (r.nodes.empty()) {
      out << "\n";
      continue;
    }

    const std::vector<std::string> header = {"NODE", "FEASIBLE", "PREFERNOSCHEDULE-UNTOLERATED",
                                             "IF-RUNNING-THERE", "REASONS"};
    std::vector<std::vector<std::string>> rows;
    for (const NodeVerdict& v : r.nodes) {
      std::string reasons;
      for (const std::string& reason : v.reasons) {
        if (!reasons.empty()) reasons += "; ";
        reasons += reason;
      }
      rows.push_back({v.node + (v.bound_here ? " (bound)" : ""), v.feasible ? "yes" : "no",
                      std::to_string(v.prefer_no_schedule_untolerated), EvictionText(v.if_running),
                      reasons.empty() ? "-" : reasons});
    }
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
    out << "\n";
  }
  out << reports.size() << " pod(s), " << node_count << " node(s): ";
  if (without_node == 0) {
    out << "every unbound pod has a feasible node\n";
  } else {
    out << without_node << " unbound pod(s) without a feasible node\n";
  }
}

void WriteCheckJson(const std::vector<PodReport>& reports, std::ostream& out) {
  rapidjson::OStreamWrapper os(out);
  rapidjson::PrettyWriter<rapidjson::OStreamWrapper> w(os);
  w.SetIndent(' ', 2);
  w.StartObject();
  w.Key("pods");
  w.StartArray();
  for (const PodReport& r : reports) {
    w.StartObject();
    w.Key("namespace");
    w.String(r.namespace_);
    w.Key("name");
    w.String(r.name);
    w.Key("nodes");
    w.StartArray();
    for (const NodeVerdict& v : r.nodes) {
      w.StartObject();
      w.Key("name");
      w.String(v.node);
      w.Key("feasible");
      w.Bool(v.feasible);
      w.Key("reasons");
      w.StartArray();
      for (const std::string& reason : v.reasons) w.String(reason);
      w.EndArray();
      w.Key("untoleratedTaint");
      if (v.untolerated_taint) {
        w.StartObject();
        w.Key("key");
        w.String(v.untolerated_taint->key);
        w.Key("value");
        w.String(v.untolerated_taint->value);
        w.Key("effect");
        w.String(v.untolerated_taint->effect);
        w.EndObject();
      } else {
        w.Null();
      }
      w.Key("preferNoScheduleUntolerated");
      w.Int(v.prefer_no_schedule_untolerated);
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
  w.EndObject();
  os.Flush();
  out << "\n";
}

namespace {

// "file.yaml: document 2 (Pod web): " — the prefix of every error about one object.
std::string ObjectPrefix(const api::Manifest& m) {
  std::string p = m.Location();
  p.append(" (").append(m.kind);
  if (!m.name.empty()) p.append(" ").append(m.name);
  p.append("): ");
  return p;
}

// All field errors on one line.
std::string JoinFieldErrors(const FieldErrorList& errors) {
  std::string out;
  for (const FieldError& e : errors) {
    if (!out.empty()) out += "; ";
    out += e.ToString();
  }
  return out;
}

// Applies one --taint NODE=SPEC to the node it names.
Status ApplyTaintChange(std::string_view change, std::vector<api::Node>& nodes) {
  std::string prefix = "--taint ";
  prefix.append(change).append(": ");
  size_t eq = change.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == change.size()) {
    return BadRequest(prefix +
                      "expected NODE=SPEC, e.g. node1=key1=value1:NoSchedule or node1=key1-");
  }
  std::string_view node_name = change.substr(0, eq);
  auto node = std::find_if(nodes.begin(), nodes.end(),
                           [&](const api::Node& n) { return n.meta.name == node_name; });
  if (node == nodes.end()) {
    return NotFound(prefix + "node \"" + std::string(node_name) + "\" not found in the manifests");
  }
  const std::string spec(change.substr(eq + 1));
  Result<TaintChanges> changes = ParseTaints(std::span<const std::string>(&spec, 1));
  if (!changes) return changes.error().WithPrefix(prefix);
  TaintUpdate update =
      UpdateNodeTaints(node->meta.name, node->spec.taints, *changes, /*overwrite=*/true);
  if (!update.ok()) return update.ToStatus().WithPrefix(prefix);
  node->spec.taints = std::move(update.taints);
  return Status::Ok();
}

}  // namespace

Result<std::vector<PodReport>> RunCheck(const CheckOptions& options, size_t* node_count) {
  std::vector<api::Node> nodes;
  std::vector<api::Pod> pods;
  std::vector<std::string> node_locations;  // parallel to `nodes`, for duplicate errors
  const bool allow_comparison = options.gates.taint_toleration_comparison_operators;
  for (const std::string& file : options.files) {
    Result<std::vector<api::Manifest>> manifests = api::LoadManifestFile(file);
    if (!manifests) return Err(manifests.error());
    for (const api::Manifest& m : *manifests) {
      if (m.kind == "Node" && m.api_version == "v1") {
        Result<api::Node> node = api::DecodeNode(m.object);
        if (!node) return Err(node.error().WithPrefix(ObjectPrefix(m)));
        FieldErrorList errors = ValidateNodeTaints(node->spec.taints, "metadata.taints");
        if (!errors.empty()) return Err(BadRequest(ObjectPrefix(m) + JoinFieldErrors(errors)));
        for (size_t i = 0; i < nodes.size(); ++i) {
          if (nodes[i].meta.name == node->meta.name) {
            return Err(
                BadRequest(ObjectPrefix(m) + "duplicate Node, also at " + node_locations[i]));
          }
        }
        nodes.push_back(std::move(*node));
        node_locations.push_back(m.Location());
      } else if (m.kind == "Pod" && m.api_version == "v1") {
        Result<api::Pod> pod = api::DecodePod(m.object);
        if (!pod) return Err(pod.error().WithPrefix(ObjectPrefix(m)));
        FieldErrorList errors =
            ValidateTolerations(pod->spec.tolerations, "spec.tolerations", allow_comparison);
        if (!errors.empty()) return Err(BadRequest(ObjectPrefix(m) + JoinFieldErrors(errors)));
        pods.push_back(std::move(*pod));
      }
    }
  }
  for (const std::string& change : options.taint_changes) {
    Status s = ApplyTaintChange(change, nodes);
    if (!s.ok()) return Err(s);
  }
  *node_count = nodes.size();
  return CheckPods(pods, nodes, options.gates);
}

}  // namespace kt::cli
