// What an admission plugin is (upstream k8s.io/apiserver pkg/admission interfaces.go): it sees
// each write request (Attributes) and may change the object being written (Admit, the mutating
// phase, before validation) or refuse the request (Admit or Validate, the validating phase,
// after validation). The chain that runs plugins in order is in admission/chain.h.
//
//   class DenyAll : public Plugin {
//    public:
//     std::string_view Name() const override { return "AlwaysDeny"; }
//     Verdict Validate(const Attributes&, const Listers&) const override {
//       return Reject(Rejection::Forbidden("admission control is denying all modifications"));
//     }
//   };
//
// A refusal is a Rejection in upstream's terms; the API server renders it as a metav1.Status
// naming the request's object (server/registry.cc), as upstream's admission.NewForbidden does.
//
// Thread safety: plugins hold only their configuration and are called from many threads at
// once; they read the cluster through the Listers they are given, which must be thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <tl/expected.hpp>

#include "api/types.h"
#include "core/status.h"

namespace kt::admission {

enum class Operation : unsigned char { kCreate, kUpdate, kDelete };

// One request, as a plugin sees it (upstream admission.Attributes).
struct Attributes {
  Operation operation = Operation::kCreate;
  std::string_view group{};        // "" for the core group
  std::string_view resource{};     // the plural: "pods", "namespaces"
  std::string_view subresource{};  // "", "status", "binding", "eviction"
  std::string_view namespace_{};   // "" for cluster-scoped resources
  // The object's name: from the URL, or on a create from the body ("" when the body has only a
  // generateName).
  std::string_view name{};
  // The object being written: the body of a create or the new object of an update; the body of
  // a subresource create (a Binding, an Eviction). Null on a delete. Mutating plugins change it.
  rapidjson::Document* object = nullptr;
  // The stored object an update replaces; null otherwise.
  const rapidjson::Value* old_object = nullptr;

  bool IsPods() const { return group.empty() && resource == "pods"; }
};

// Why a plugin refuses a request (upstream: the apierrors it returns).
struct Rejection {
  struct Cause {
    std::string type;  // metav1.CauseType, e.g. "NamespaceTerminating"
    std::string message;
    std::string field;
  };

  // kForbidden, kNotFound, or kInternal for a plain error (Error below).
  StatusCode code = StatusCode::kForbidden;
  // kForbidden: why, the text after `<resource> "<name>" is forbidden: ` (the object is the
  // request's, as upstream admission.NewForbidden names it); otherwise the whole message.
  std::string message;
  // kNotFound: what does not exist, e.g. the namespace of a create.
  std::string group, resource, name;
  std::vector<Cause> causes;

  static Rejection Forbidden(std::string why) {
    Rejection r;
    r.message = std::move(why);
    return r;
  }
  // A plain Go error (fmt.Errorf, a JSON decoding error), not an apierrors status: kube-apiserver
  // answers it with code 500, an empty reason (StatusReasonUnknown) and the message as it is
  // (responsewriters.ErrorToAPIStatus), which kubectl prints as `Error from server: <message>`.
  static Rejection Error(std::string message) {
    Rejection r;
    r.code = StatusCode::kInternal;
    r.message = std::move(message);
    return r;
  }
  static Rejection NotFound(std::string group, std::string resource, std::string name) {
    Rejection r;
    r.code = StatusCode::kNotFound;
    r.group = std::move(group);
    r.resource = std::move(resource);
    r.name = std::move(name);
    return r;
  }
};

using Verdict = tl::expected<void, Rejection>;
inline Verdict Allow() { return {}; }
inline tl::unexpected<Rejection> Reject(Rejection r) {
  return tl::unexpected<Rejection>(std::move(r));
}

// The namespaces that exist, as plugins read them.
struct Namespaces {
  // The namespace's status.phase ("Active", "Terminating"), or nullopt when there is none.
  std::function<std::optional<std::string>(std::string_view name)> phase;
  // The namespace's metadata.annotations, or nullopt when there is no such namespace.
  std::function<std::optional<api::StringMap>(std::string_view name)> annotations;
};

// The PriorityClasses that exist, as plugins read them.
struct PriorityClasses {
  std::function<std::optional<api::PriorityClass>(std::string_view name)> get;
  // Calls `fn` with every class, in no particular order, copying none.
  std::function<void(const std::function<void(const api::PriorityClass&)>& fn)> for_each;
};

// What plugins read of the cluster (upstream: the informers plugins are initialized with). The
// API server reads them as of every write acknowledged before the request.
struct Listers {
  Namespaces namespaces;
  PriorityClasses priority_classes;
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  // Upstream's name, as --enable-admission-plugins spells it.
  virtual std::string_view Name() const = 0;
  // The mutating phase (upstream MutationInterface.Admit): may change *a.object. By default
  // admits everything unchanged.
  virtual Verdict Admit(Attributes& /*a*/, const Listers& /*listers*/) const { return Allow(); }
  // The validating phase (upstream ValidationInterface.Validate), after the object has been
  // validated; must not change it. By default admits everything.
  virtual Verdict Validate(const Attributes& /*a*/, const Listers& /*listers*/) const {
    return Allow();
  }
  // Whether Admit or Validate may read or change the object of a request for `resource` (of API
  // group `group`; `subresource` "" for the resource itself). Where no plugin does, a writer
  // holding the object in typed form skips building its document and hands the chain none
  // (Attributes::object null). By default, yes.
  virtual bool ReadsObject(std::string_view /*group*/, std::string_view /*resource*/,
                           std::string_view /*subresource*/) const {
    return true;
  }
};

}  // namespace kt::admission
