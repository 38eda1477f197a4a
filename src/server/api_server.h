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

#include "server/discovery.h"
#include "server/http.h"
#include "server/registry.h"
#include "server/timer_queue.h"

namespace kt::server {

class ApiServer : public HttpHandler {
 public:
  explicit ApiServer(Registry* registry, const DiscoveryOptions& discovery = {});
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

  Registry* registry_;
  Discovery discovery_;
  TimerQueue timers_;
};

}  // namespace kt::server
