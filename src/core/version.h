// Versions: kubetaint's own, and the Kubernetes release whose semantics it follows.
#pragma once

#include <string>
#include <string_view>

namespace kt {

// The Kubernetes minor release whose behaviour kubetaint follows.
inline constexpr std::string_view kKubernetesMajor = "1";
inline constexpr std::string_view kKubernetesMinor = "35";

// kubetaint's version, e.g. "0.1.0".
std::string_view KubetaintVersion();
// The semver the API server reports as gitVersion: "v1.35.0+kubetaint.0.1.0".
std::string GitVersion();
// "kubetaint 0.1.0 (Kubernetes v1.35.0 semantics)"
std::string VersionLine();

}  // namespace kt
