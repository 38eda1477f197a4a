// Defaults the API server applies to a new Pod (upstream pkg/apis/core/v1/defaults.go, the
// parts kubetaint's decisions depend on), on its JSON document:
//   - spec.schedulerName: "default-scheduler" when empty;
//   - for every container and init container with limits, each limited resource that has no
//     request gets the limit as its request (SetDefaults_Pod), so `limits: {nvidia.com/gpu: 1}`
//     requests one GPU.
//
// Thread safety: pure functions over their arguments.
#pragma once

#include <rapidjson/document.h>

namespace kt::api {

void SetPodDefaults(rapidjson::Document& pod);

}  // namespace kt::api
