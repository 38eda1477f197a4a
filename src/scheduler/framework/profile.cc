#include "scheduler/framework/profile.h"

#include <algorithm>

namespace kt::scheduler {

namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Upstream mergePluginSet: defaults not disabled keep their place (a custom entry of the same
// name replaces them there, with its weight), then the other custom entries in their order.
PluginSet MergePluginSet(const PluginSet& defaults, const PluginSet& custom) {
  PluginSet out;
  out.disabled = custom.disabled;
  for (const std::string& d : defaults.disabled) {
    if (!Contains(out.disabled, d)) out.disabled.push_back(d);
  }
  std::vector<bool> used(custom.enabled.size(), false);
  if (!Contains(out.disabled, "*")) {
    for (const PluginRef& def : defaults.enabled) {
      if (Contains(out.disabled, def.name)) continue;
      PluginRef ref = def;
      for (size_t i = 0; i < custom.enabled.size(); ++i) {
        if (!used[i] && custom.enabled[i].name == def.name) {
          ref = custom.enabled[i];
          used[i] = true;
          break;
        }
      }
      out.enabled.push_back(ref);
    }
  }
  for (size_t i = 0; i < custom.enabled.size(); ++i) {
    if (!used[i]) out.enabled.push_back(custom.enabled[i]);
  }
  return out;
}

}  // namespace

Plugins DefaultPlugins() {
  Plugins p;
  p.multi_point.enabled = {
      {"SchedulingGates", 0},   {"PrioritySort", 0},
      {"NodeUnschedulable", 0}, {"NodeName", 0},
      {"TaintToleration", 3},   {"NodeAffinity", 2},
      {"NodePorts", 0},         {"NodeResourcesFit", 1},
      {"DefaultPreemption", 0}, {"NodeResourcesBalancedAllocation", 1},
      {"DefaultBinder", 0},
  };
  return p;
}

Plugins MergePlugins(const Plugins& d, const Plugins& c) {
  Plugins out;
  out.pre_enqueue = MergePluginSet(d.pre_enqueue, c.pre_enqueue);
  out.queue_sort = MergePluginSet(d.queue_sort, c.queue_sort);
  out.pre_filter = MergePluginSet(d.pre_filter, c.pre_filter);
  out.filter = MergePluginSet(d.filter, c.filter);
  out.post_filter = MergePluginSet(d.post_filter, c.post_filter);
  out.pre_score = MergePluginSet(d.pre_score, c.pre_score);
  out.score = MergePluginSet(d.score, c.score);
  out.reserve = MergePluginSet(d.reserve, c.reserve);
  out.permit = MergePluginSet(d.permit, c.permit);
  out.pre_bind = MergePluginSet(d.pre_bind, c.pre_bind);
  out.bind = MergePluginSet(d.bind, c.bind);
  out.post_bind = MergePluginSet(d.post_bind, c.post_bind);
  out.multi_point = MergePluginSet(d.multi_point, c.multi_point);
  return out;
}

}  // namespace kt::scheduler
