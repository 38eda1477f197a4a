#include "core/version.h"

namespace kt {

std::string_view KubetaintVersion() { return KUBETAINT_VERSION; }

std::string GitVersion() {
  std::string v = "v";
  v.append(kKubernetesMajor).append(".").append(kKubernetesMinor).append(".0+kubetaint.");
  v.append(KubetaintVersion());
  return v;
}

std::string VersionLine() {
  std::string v = "kubetaint ";
  v.append(KubetaintVersion()).append(" (Kubernetes v").append(kKubernetesMajor).append(".");
  v.append(kKubernetesMinor).append(".0 semantics)");
  return v;
}

}  // namespace kt
