// The client layer over HTTP: the same Client and ListerWatcher interfaces as in-process, against
// a remote kubetaint or any Kubernetes API server (client/rest/transport.h does the talking).
//
//   auto transport = RestTransport::New(*LoadKubeconfig(path));
//   std::unique_ptr<Client> client = NewHttpClient(transport->get());
//   Informer pods(NewHttpListerWatcher(transport->get(), server::Info(Resource::kPods)));
//
// Client calls run on a small pool of worker threads and complete through their callbacks
// there. Errors are the server's metav1.Status (reason, code, message); a connection failure is
// a 503-like ServiceUnavailable error.
//
// Lists are read in pages of 500 (limit/continue); watches ask for bookmarks, restart on a
// normal close, and report 410 Gone so informers relist.
//
// Thread safety: everything is thread-safe; the transport must outlive its users.
#pragma once

#include <memory>

#include "client/client.h"
#include "client/informer.h"
#include "client/rest/transport.h"
#include "server/resources.h"

namespace kt::client {

std::unique_ptr<Client> NewHttpClient(RestTransport* transport, int workers = 4);

// `filter`'s namespace, label and field selectors are sent to the server.
std::unique_ptr<ListerWatcher> NewHttpListerWatcher(RestTransport* transport,
                                                    const server::ResourceInfo& info,
                                                    std::string label_selector = "",
                                                    std::string field_selector = "",
                                                    std::string namespace_ = "");

// The REST path of a resource collection or object: "/api/v1/namespaces/ns/pods[/name]".
std::string ResourcePath(const server::ResourceInfo& info, std::string_view namespace_,
                         std::string_view name = "");

// An error answer's metav1.Status (or a synthesized one for a body that is not a Status).
server::ApiError ApiErrorFromResponse(int http_status, std::string_view body);

}  // namespace kt::client
