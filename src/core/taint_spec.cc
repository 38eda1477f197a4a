#include "core/taint_spec.h"

#include <algorithm>

#include "core/validation.h"

namespace kt {

namespace {

Status SpecError(std::string_view spec, const std::vector<std::string>& reasons = {}) {
  std::string m = "invalid taint spec: ";
  m += spec;
  for (size_t i = 0; i < reasons.size(); ++i) {
    m += i == 0 ? ", " : "; ";
    m += reasons[i];
  }
  return BadRequest(std::move(m));
}

bool IsTaintEffect(std::string_view e) {
  return e == kEffectNoSchedule || e == kEffectPreferNoSchedule || e == kEffectNoExecute;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

bool IsTaintArg(std::string_view arg) {
  return arg.find('=') != std::string_view::npos || arg.find(':') != std::string_view::npos ||
         (!arg.empty() && arg.back() == '-');
}

Result<TaintArgs> ClassifyTaintArgs(std::span<const std::string> args) {
  TaintArgs out;
  for (const std::string& arg : args) {
    if (IsTaintArg(arg)) {
      out.specs.push_back(arg);
    } else if (out.specs.empty()) {
      out.resources.push_back(arg);
    } else {
      return Err(BadRequest("all resources must be specified before taint changes: " + arg));
    }
  }
  if (out.resources.empty()) {
    return Err(BadRequest("one or more resources must be specified as <resource> <name>"));
  }
  if (out.specs.empty()) return Err(BadRequest("at least one taint update is required"));
  return out;
}

Result<Taint> ParseTaint(std::string_view spec) {
  Taint taint;
  size_t colon = spec.find(':');
  if (colon == std::string_view::npos) {
    taint.key = spec;
  } else {
    if (spec.find(':', colon + 1) != std::string_view::npos) return Err(SpecError(spec));
    std::string_view effect = spec.substr(colon + 1);
    if (!IsTaintEffect(effect)) {
      std::string m = "invalid taint effect: ";
      m += effect;
      m += ", unsupported taint effect";
      return Err(BadRequest(std::move(m)));
    }
    taint.effect = effect;
    std::string_view key_value = spec.substr(0, colon);
    size_t eq = key_value.find('=');
    if (eq == std::string_view::npos) {
      taint.key = key_value;
    } else {
      if (key_value.find('=', eq + 1) != std::string_view::npos) return Err(SpecError(spec));
      taint.key = key_value.substr(0, eq);
      taint.value = key_value.substr(eq + 1);
      if (std::vector<std::string> errs = IsValidLabelValue(taint.value); !errs.empty()) {
        return Err(SpecError(spec, errs));
      }
    }
  }
  if (std::vector<std::string> errs = IsQualifiedName(taint.key); !errs.empty()) {
    return Err(SpecError(spec, errs));
  }
  return taint;
}

std::string GoTaintStruct(const Taint& taint) {
  std::string out = "{";
  out += taint.key;
  out += ' ';
  out += taint.value;
  out += ' ';
  out += taint.effect;
  out += ' ';
  // kubectl-parsed taints never carry timeAdded; Go would print a *metav1.Time with its String().
  out += taint.time_added ? *taint.time_added : std::string("<nil>");
  out += '}';
  return out;
}

Result<TaintChanges> ParseTaints(std::span<const std::string> specs) {
  TaintChanges out;
  for (const std::string& spec : specs) {
    std::string_view s = spec;
    if (!s.empty() && s.back() == '-') {
      s.remove_suffix(1);
      Result<Taint> t = ParseTaint(s);
      if (!t) return Err(t.error());
      t->value.clear();  // a removal names a key and maybe an effect; any value is ignored
      out.remove.push_back(std::move(*t));
      continue;
    }
    Result<Taint> t = ParseTaint(s);
    if (!t) return Err(t.error());
    // `key` and `key=value` parse but name no effect: fine for a removal, not for an addition.
    if (t->effect.empty()) return Err(SpecError(s));
    for (const Taint& prev : out.add) {
      if (prev.key == t->key && prev.effect == t->effect) {
        return Err(
            BadRequest("duplicated taints with the same key and effect: " + GoTaintStruct(*t)));
      }
    }
    out.add.push_back(std::move(*t));
  }
  return out;
}

Status ValidateTaintConflicts(const TaintChanges& changes) {
  std::string list;
  for (const Taint& add : changes.add) {
    for (const Taint& rm : changes.remove) {
      if (add.key != rm.key) continue;
      if (rm.effect.empty() || add.effect == rm.effect) {
        if (!list.empty()) list += ", ";
        list += rm.key;
        list += '=';
        list += rm.effect;
      }
    }
  }
  if (list.empty()) return Status::Ok();
  return BadRequest("can not both modify and remove the following taint(s) in the same command: " +
                    list);
}

Status ValidateTaintFlags(bool all, std::string_view selector,
                          std::span<const std::string> resources) {
  if (all && !selector.empty()) {
    return BadRequest("setting 'all' parameter with a non empty selector is prohibited");
  }
  if (!all && selector.empty() && resources.size() < 2) {
    return BadRequest(
        "at least one resource name must be specified since 'all' parameter is not set");
  }
  return Status::Ok();
}

Status ValidateTaintCommand(std::string_view resource_kind, std::span<const std::string> resources,
                            const TaintChanges& changes, bool all, std::string_view selector) {
  if (resource_kind != "Node") {
    std::string type = resources.empty() ? std::string() : Lower(resources.front());
    return BadRequest("invalid resource type " + type + ", only node types are supported");
  }
  KT_RETURN_IF_ERROR(ValidateTaintConflicts(changes));
  return ValidateTaintFlags(all, selector, resources);
}

std::string CheckIfTaintsAlreadyExist(std::span<const Taint> existing,
                                      std::span<const Taint> to_add) {
  std::string out;
  for (const Taint& t : to_add) {
    // One entry per matching existing taint, as upstream (a node can hold duplicates).
    for (const Taint& old : existing) {
      if (t.key == old.key && t.effect == old.effect) {
        if (!out.empty()) out += ',';
        out += t.key;
      }
    }
  }
  return out;
}

bool DeleteTaint(std::vector<Taint>& taints, const Taint& to_delete) {
  size_t before = taints.size();
  std::erase_if(taints, [&](const Taint& t) { return MatchTaint(to_delete, t); });
  return taints.size() != before;
}

bool DeleteTaintsByKey(std::vector<Taint>& taints, std::string_view key) {
  size_t before = taints.size();
  std::erase_if(taints, [&](const Taint& t) { return t.key == key; });
  return taints.size() != before;
}

Status TaintUpdate::ToStatus() const {
  if (errors.empty()) return Status::Ok();
  return BadRequest(GoAggregateError(errors));
}

TaintUpdate ReorganizeTaints(std::span<const Taint> existing, bool overwrite,
                             std::span<const Taint> add, std::span<const Taint> remove) {
  TaintUpdate out;
  out.taints.reserve(add.size() + existing.size());
  out.taints.assign(add.begin(), add.end());
  for (const Taint& old : existing) {
    bool replaced =
        std::any_of(add.begin(), add.end(), [&](const Taint& t) { return MatchTaint(t, old); });
    if (!replaced) out.taints.push_back(old);
  }
  const bool added = existing.size() != out.taints.size();

  bool deleted = false;
  for (const Taint& rm : remove) {
    deleted =
        rm.effect.empty() ? DeleteTaintsByKey(out.taints, rm.key) : DeleteTaint(out.taints, rm);
    if (!deleted) {
      Taint key_effect;
      key_effect.key = rm.key;
      key_effect.effect = rm.effect;
      out.errors.push_back("taint " + GoQuote(TaintToString(key_effect)) + " not found");
    }
  }

  if ((added && deleted) || overwrite) {
    out.operation = kTaintOpModified;
  } else if (added) {
    out.operation = kTaintOpTainted;
  } else {
    out.operation = kTaintOpUntainted;
  }
  return out;
}

TaintUpdate UpdateNodeTaints(std::string_view node_name, std::span<const Taint> existing,
                             const TaintChanges& changes, bool overwrite) {
  if (!overwrite) {
    if (std::string keys = CheckIfTaintsAlreadyExist(existing, changes.add); !keys.empty()) {
      TaintUpdate out;
      out.taints.assign(existing.begin(), existing.end());
      out.operation = kTaintOpUntainted;
      std::string m = "node ";
      m += node_name;
      m += " already has ";
      m += keys;
      m += " taint(s) with same effect(s) and --overwrite is false";
      out.errors.push_back(std::move(m));
      return out;
    }
  }
  return ReorganizeTaints(existing, overwrite, changes.add, changes.remove);
}

std::string GoAggregateError(std::span<const std::string> messages) {
  std::vector<std::string_view> seen;
  seen.reserve(messages.size());
  for (const std::string& m : messages) {
    if (std::find(seen.begin(), seen.end(), m) == seen.end()) seen.push_back(m);
  }
  if (seen.empty()) return {};
  if (seen.size() == 1) return std::string(seen.front());
  std::string out = "[";
  for (size_t i = 0; i < seen.size(); ++i) {
    if (i > 0) out += ", ";
    out += seen[i];
  }
  out += ']';
  return out;
}

std::string KubectlErrorOutput(std::span<const std::string> messages) {
  if (messages.empty()) return {};
  std::string out;
  if (messages.size() == 1) {
    // An aggregate of one is unwrapped and printed like any single error.
    const std::string& m = messages.front();
    if (m.rfind("error: ", 0) != 0) out = "error: ";
    out += m;
    if (out.back() != '\n') out += '\n';
    return out;
  }
  for (const std::string& m : messages) {
    out += m;
    out += '\n';
  }
  return out;
}

}  // namespace kt
