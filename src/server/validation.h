// Validation of the objects the API server stores, with upstream's field paths and messages
// (k/k pkg/apis/core/validation, semantics.md §4): object metadata, node taints, pod specs
// (containers, node selection, tolerations) and what a pod update may change, DaemonSet
// templates. The field-level rules live in core/validation.h; this file applies them to whole
// objects.
//
// Thread safety: pure functions.
#pragma once

#include <rapidjson/document.h>

#include "core/feature_gates.h"
#include "core/validation.h"
#include "server/object.h"
#include "server/resources.h"

namespace kt::server {

// The field errors of `doc` (decoded as `typed`), a new object when `old_doc` is null, else an
// update of `old_doc` (decoded as `old_typed`). Empty when the object is valid.
FieldErrorList ValidateObject(const ResourceInfo& info, const rapidjson::Value& doc,
                              const TypedObject& typed, const rapidjson::Value* old_doc,
                              const TypedObject* old_typed, const FeatureGates& gates);

}  // namespace kt::server
