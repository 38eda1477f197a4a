// Defaults the API server applies to a new Pod (upstream pkg/apis/core/v1/defaults.go, the
// parts kubetaint's decisions depend on), on its JSON document:
//   - spec.schedulerName: "default-scheduler" when empty;
//   - for every container and init container with limits, each limited resource that has no
//     request gets the limit as its request (SetDefaults_Pod), so `limits: {nvidia.com/gpu: 1}`
//     requests one GPU.
//
// And to a new or updated DaemonSet (upstream pkg/apis/apps/v1/defaults.go SetDefaults_DaemonSet):
//   - spec.updateStrategy.type: "RollingUpdate" when empty; for RollingUpdate,
//     rollingUpdate.maxUnavailable 1 and rollingUpdate.maxSurge 0 when unset;
//   - spec.revisionHistoryLimit: 10 when unset;
//   - spec.template.spec: the pod defaults above.
//
// Thread safety: pure functions over their arguments.
#pragma once

#include <rapidjson/document.h>

namespace kt::api {

void SetPodDefaults(rapidjson::Document& pod);
// The pod defaults on a pod spec (a pod's spec, or a template's).
void SetPodSpecDefaults(rapidjson::Value& spec, rapidjson::Document::AllocatorType& alloc);
void SetDaemonSetDefaults(rapidjson::Document& daemon_set);

}  // namespace kt::api
