// RestTransport: HTTP/1.1 to a Kubernetes API server — plain HTTP or HTTPS (TLS 1.2+, OpenSSL
// under Boost.Asio/Beast), with the kubeconfig's CA, client certificate or bearer token.
// Connections are kept alive and reused. Beast stays out of this header.
//
//   Result<std::unique_ptr<RestTransport>> t = RestTransport::New(config);
//   Result<HttpResult> r = (*t)->Do("GET", "/api/v1/nodes");
//   auto w = (*t)->Stream("/api/v1/pods?watch=1&resourceVersion=42",
//                         [](std::string_view line) { ...; return true; },
//                         [](Status end) { ... });
//
// Do blocks the calling thread (at most `timeout`); a connection that fails is a kUnavailable
// error. Stream reads a long response (a watch) on its own thread, one line at a time.
//
// Thread safety: Do may be called from many threads at once.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "client/rest/kubeconfig.h"
#include "core/status.h"

namespace kt::client {

struct HttpResult {
  int status = 0;
  std::string body;
};

class RestTransport {
 public:
  virtual ~RestTransport() = default;

  static Result<std::unique_ptr<RestTransport>> New(const RestConfig& config);

  virtual Result<HttpResult> Do(std::string_view method, std::string_view path,
                                std::string_view body = "",
                                std::string_view content_type = "application/json") = 0;

  // A response read as it arrives. Destroying it stops the stream; on_end is not called then.
  class Streaming {
   public:
    virtual ~Streaming() = default;
  };
  // GET `path` and hand each line of the body to `on_line` (false stops); `on_end` gets OK when
  // the server ends the response, the error otherwise (a non-200 status is kUnavailable with the
  // body as message; callers decode watch ERROR events themselves). Both run on the stream's
  // thread.
  virtual Result<std::unique_ptr<Streaming>> Stream(
      std::string path, std::function<bool(std::string_view line)> on_line,
      std::function<void(Status end, int http_status, std::string body)> on_end) = 0;

  // The configuration's server URL.
  virtual const std::string& server() const = 0;
};

}  // namespace kt::client
