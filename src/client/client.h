// Client: how the scheduler, the controllers and the simulated kubelets write to the API.
//
// In-process, every call goes through the Registry — the very path an HTTP request takes, with
// admission and validation — never to the store (DESIGN.md). Over HTTP the same calls are REST
// requests to a kubetaint (or any Kubernetes) API server, so a component can run in its own
// process without changing.
//
//   std::unique_ptr<Client> client = NewInProcessClient(&registry);
//   client->Patch(Resource::kPods, "default", "nginx", Subresource::kStatus,
//                 api::PatchType::kStrategicMergePatch, R"({"status":{...}})",
//                 [](ApiResult<store::Bytes> r) { ... });
//
// Callbacks: each call completes once through its callback, with the served JSON of the
// object written (or the error as upstream's metav1.Status). A callback may run on the calling
// thread before the call returns (in-process memory store), on the store's committer thread,
// or on the HTTP client's thread: it must be quick, must not block, and must not assume any
// lock of the caller is free — so never call a Client while holding a lock the callback takes.
//
// Thread safety: every method is thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <rapidjson/document.h>

#include "api/patch.h"
#include "server/api_error.h"
#include "server/registry.h"
#include "server/resources.h"
#include "store/store.h"

namespace kt::client {

using server::ApiError;
using server::ApiResult;
using server::Resource;
using server::Subresource;

using WriteDone = std::function<void(ApiResult<store::Bytes>)>;
using Done = std::function<void(ApiResult<void>)>;
using GetDone = std::function<void(ApiResult<server::ObjectPtr>)>;

class Client {
 public:
  virtual ~Client() = default;

  // `body` is the object's JSON.
  virtual void Create(Resource resource, std::string namespace_, std::string body,
                      WriteDone done) = 0;
  // The same with the object already built as a document (no JSON text in process).
  virtual void Create(Resource resource, std::string namespace_, rapidjson::Document body,
                      WriteDone done);
  // Creates a core/v1 Event in its namespace. In process the registry takes it typed
  // (Registry::CreateEvent); elsewhere it is sent as its JSON.
  virtual void CreateEvent(api::Event event, WriteDone done);
  virtual void Update(Resource resource, std::string namespace_, std::string name, Subresource sub,
                      std::string body, WriteDone done) = 0;
  virtual void Patch(Resource resource, std::string namespace_, std::string name, Subresource sub,
                     api::PatchType type, std::string patch, WriteDone done) = 0;
  // pods/status: adds `condition` to the pod whose UID is `uid` (a strategic merge patch of
  // status.conditions with that UID as precondition). In process the registry splices it into
  // the pod's bytes when it can (Registry::AddPodCondition); elsewhere the patch is sent.
  virtual void AddPodCondition(std::string namespace_, std::string name, std::string uid,
                               api::Condition condition, WriteDone done);
  virtual void Delete(Resource resource, std::string namespace_, std::string name,
                      server::DeleteOptions options, WriteDone done) = 0;
  // A live read (not an informer's copy): the object as of every write acknowledged before the
  // call, or NotFound.
  virtual void Get(Resource resource, std::string namespace_, std::string name, GetDone done) = 0;
  // pods/binding: assigns the pod to `node`; `uid` (optional) must be the pod's.
  virtual void Bind(std::string namespace_, std::string name, std::string uid, std::string node,
                    Done done) = 0;

  // Blocking forms, for callers on their own threads (never from a callback).
  ApiResult<store::Bytes> CreateSync(Resource resource, std::string namespace_, std::string body);
  ApiResult<store::Bytes> PatchSync(Resource resource, std::string namespace_, std::string name,
                                    Subresource sub, api::PatchType type, std::string patch);
  ApiResult<store::Bytes> DeleteSync(Resource resource, std::string namespace_, std::string name,
                                     server::DeleteOptions options = {});
  ApiResult<store::Bytes> UpdateSync(Resource resource, std::string namespace_, std::string name,
                                     Subresource sub, std::string body);
  ApiResult<server::ObjectPtr> GetSync(Resource resource, std::string namespace_, std::string name);
};

// A client that writes through `registry` in this process.
std::unique_ptr<Client> NewInProcessClient(server::Registry* registry);

// The JSON body of a pods/binding request (a v1 Binding).
std::string BindingJson(std::string_view namespace_, std::string_view name, std::string_view uid,
                        std::string_view node);

}  // namespace kt::client
