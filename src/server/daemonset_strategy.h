// What the API server does to an apps/v1 DaemonSet besides the generic create and update steps
// (upstream pkg/registry/apps/daemonset/strategy.go with pkg/apis/apps/v1 defaults and
// conversion):
//   - defaults (api/defaults.h SetDaemonSetDefaults), before admission, on create and update;
//   - create: status starts at upstream's zero counts (currentNumberScheduled,
//     numberMisscheduled, desiredNumberScheduled, numberReady: 0);
//   - the template generation: internally spec.templateGeneration, in apps/v1 the annotation
//     `deprecated.daemonset.template.generation`, which the server owns. A create keeps the
//     annotation's value if it is an integer >= 1, else 1; an update keeps the old value, plus
//     one when spec.template changed. (metadata.generation counts every spec change: the
//     registry's generic rule, which is upstream's for DaemonSets.)
//
// Thread safety: pure functions over their arguments.
#pragma once

#include <string_view>

#include <rapidjson/document.h>

namespace kt::server {

inline constexpr std::string_view kTemplateGenerationAnnotation =
    "deprecated.daemonset.template.generation";

void DefaultDaemonSet(rapidjson::Document& ds);
void PrepareDaemonSetForCreate(rapidjson::Document& ds);
// `next` is the whole new object (not a status update), `old` the stored one.
void PrepareDaemonSetForUpdate(rapidjson::Document& next, const rapidjson::Value& old);

}  // namespace kt::server
