// ApiServer: the Kubernetes REST API over HTTP for the resources kubetaint serves — routing,
// discovery, content negotiation (JSON, YAML and protobuf request bodies; JSON and Table
// responses), list/get/watch from the watch caches, and writes through the Registry.
//
// See the kubectl protocol notes for what each kubectl command sends and needs back; every
// answer here is shaped so that the stock kubectl prints what it prints against a real server.
//
// Thread safety: Handle is called on the HTTP server's I/O threads; everything it does is
// thread-safe. The ApiServer must outlive the HttpServer that calls it.
#pragma once

#include <memory>

#include "server/authn.h"
#include "server/discovery.h"
#include "server/http.h"
#include "server/openapi.h"
#include "server/registry.h"
#include "server/timer_queue.h"

namespace kt::server {

// How requests that come over TLS are authenticated (kube-apiserver's flags). Requests over plain
// HTTP (the explicit --insecure-port) are not: they may do everything, as upstream's insecure
// port allowed. Authenticated users may do everything (no authorizer but this: the anonymous
// user may only read what the default RBAC policy lets system:unauthenticated read).
struct Authentication {
  std::shared_ptr<const TokenFile> tokens;  // --token-auth-file; null: bearer tokens unread
  bool anonymous = true;                    // --anonymous-auth
};

class ApiServer : public HttpHandler {
 public:
  explicit ApiServer(Registry* registry, const DiscoveryOptions& discovery = {},
                     Authentication authentication = {});
  ~ApiServer() override;

  void Handle(HttpRequest request, std::shared_ptr<HttpResponder> responder) override;

 private:
  struct Request;
  void HandleResource(const std::shared_ptr<Request>& r);
  void List(const std::shared_ptr<Request>& r);
  void Get(const std::shared_ptr<Request>& r);
  void Watch(const std::shared_ptr<Request>& r);
  void Create(const std::shared_ptr<Request>& r);
  void Update(const std::shared_ptr<Request>& r);
  void Patch(const std::shared_ptr<Request>& r);
  void Delete(const std::shared_ptr<Request>& r);
  void DeleteCollection(const std::shared_ptr<Request>& r);
  void Subresource(const std::shared_ptr<Request>& r);
  bool ServeStatic(const HttpRequest& request, HttpResponder& responder);
  // Authenticates a TLS request and lets the anonymous user through only where allowed;
  // otherwise answers 401 or 403 and returns false. `warnings` gets Warning header texts.
  bool Admit(const HttpRequest& request, HttpResponder& responder,
             std::vector<std::string>* warnings);

  Registry* registry_;
  Discovery discovery_;
  const OpenApi& openapi_;
  TimerQueue timers_;
  const Authentication authentication_;
};

}  // namespace kt::server
