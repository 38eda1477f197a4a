// NamespaceLifecycle admission (upstream k8s.io/apiserver pkg/admission/plugin/namespace/
// lifecycle), enabled by default, first in the chain:
//   - nothing is created, updated or created under (a subresource such as pods/binding or
//     pods/eviction) in a namespace that does not exist: 404 `namespaces "x" not found`;
//   - nothing is created in a namespace that is Terminating: 403 `<resource> "<name>" is
//     forbidden: unable to create new content in namespace x because it is being terminated`,
//     with a NamespaceTerminating cause on metadata.namespace;
//   - the namespaces default, kube-system and kube-public cannot be deleted: 403
//     `namespaces "default" is forbidden: this namespace may not be deleted`.
// Namespaces themselves, cluster-scoped resources and deletes of anything else always pass.
//
// Upstream reads a namespace informer and falls back to a live GET when its cache may be stale;
// here the lister is the API server's namespace cache as of every acknowledged write, which is
// what that live GET would return.
//
// Thread safety: immutable.
#pragma once

#include "admission/plugin.h"

namespace kt::admission {

class NamespaceLifecycle : public Plugin {
 public:
  static constexpr std::string_view kName = "NamespaceLifecycle";

  std::string_view Name() const override { return kName; }
  // Upstream implements the plugin as a mutating one (it changes nothing), so it refuses before
  // any other plugin or validation runs.
  Verdict Admit(Attributes& a, const Listers& listers) const override;
  // It reads the namespace, never the object.
  bool ReadsObject(std::string_view, std::string_view, std::string_view) const override {
    return false;
  }
};

}  // namespace kt::admission
