// DefaultBinder (upstream pkg/scheduler/framework/plugins/defaultbinder): binds through the
// pods/binding subresource, with the pod's UID so that a re-created pod is never bound.
#pragma once

#include "scheduler/framework/framework.h"

namespace kt::scheduler {

inline constexpr std::string_view kDefaultBinderName = "DefaultBinder";

Result<std::unique_ptr<Plugin>> NewDefaultBinder(const PluginArgs& args, Handle* handle);

}  // namespace kt::scheduler
