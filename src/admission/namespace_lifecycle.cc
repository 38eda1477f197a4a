#include "admission/namespace_lifecycle.h"

#include <string>

namespace kt::admission {

namespace {

// Upstream's immortal namespaces (metav1.NamespaceDefault, NamespaceSystem, NamespacePublic).
bool Immortal(std::string_view name) {
  return name == "default" || name == "kube-system" || name == "kube-public";
}

}  // namespace

Verdict NamespaceLifecycle::Admit(Attributes& a, const Listers& listers) const {
  const bool is_namespace = a.group.empty() && a.resource == "namespaces";
  if (is_namespace && a.operation == Operation::kDelete && Immortal(a.name)) {
    return Reject(Rejection::Forbidden("this namespace may not be deleted"));
  }
  if (is_namespace || a.namespace_.empty()) return Allow();
  if (a.operation == Operation::kDelete) return Allow();
  std::optional<std::string> phase = listers.namespaces.phase(a.namespace_);
  if (!phase) return Reject(Rejection::NotFound("", "namespaces", std::string(a.namespace_)));
  if (a.operation != Operation::kCreate || *phase != "Terminating") return Allow();
  const std::string ns(a.namespace_);
  Rejection r = Rejection::Forbidden("unable to create new content in namespace " + ns +
                                     " because it is being terminated");
  r.causes.push_back(
      {"NamespaceTerminating", "namespace " + ns + " is being terminated", "metadata.namespace"});
  return Reject(std::move(r));
}

}  // namespace kt::admission
