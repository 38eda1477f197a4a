// The HTTP/1.1 layer of the API server: an asynchronous server (Boost.Beast on Asio, a small
// fixed number of I/O threads, no thread per connection) that hands each request to an
// HttpHandler and writes back either one response or a chunked stream (watches).
//
// This header keeps Beast and Asio out of the rest of the server: it speaks only in the types
// below. The handler may answer from any thread, at any later time; the server posts the write
// to the connection's own strand.
//
//   class Hello : public HttpHandler {
//     void Handle(HttpRequest req, std::shared_ptr<HttpResponder> r) override {
//       r->Respond(200, "application/json", MakeBody("{}"));
//     }
//   };
//   Hello hello;
//   auto server = StartHttpServer({.listen = "127.0.0.1:0"}, &hello);
//   int port = (*server)->port();
//
// Thread safety: HttpServer methods are thread-safe. An HttpResponder may be used from any
// thread; calls on one responder must not race each other (use it from one thread at a time).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace kt::server {

// A shared immutable buffer: response bodies and watch events are encoded once and shared.
using Body = std::shared_ptr<const std::string>;
inline Body MakeBody(std::string s) { return std::make_shared<const std::string>(std::move(s)); }

struct HttpHeader {
  std::string name;  // as received; compare case-insensitively
  std::string value;
};

// The client certificate of a TLS connection, as the handshake found it. The server asks for one
// but does not require it, and never refuses the handshake over it (kube-apiserver's
// tls.RequestClientCert): whether it counts is the authenticator's decision.
struct ClientCertificate {
  bool verified = false;                   // chains to a client CA and is valid now
  std::string verify_error;                // why not, when !verified
  std::string common_name;                 // the subject's CN
  std::vector<std::string> organizations;  // the subject's O values, in order
};

struct HttpRequest {
  std::string method;  // "GET", "POST", "PUT", "PATCH", "DELETE", ...
  std::string target;  // path and query, undecoded: "/api/v1/pods?limit=500"
  std::vector<HttpHeader> headers;
  std::string body;
  std::string remote;  // "127.0.0.1:54321", for the access log
  bool tls = false;    // came over TLS
  // The certificate the client presented on this connection (null: none, or plain HTTP). Shared
  // by every request of the connection.
  std::shared_ptr<const ClientCertificate> client_certificate;

  // The value of the first header named `name` (case-insensitive), or "".
  std::string_view Header(std::string_view name) const;
};

// The answer to one request. Exactly one of Respond or StartStream must be called, once; if the
// responder is destroyed without either, the server answers 500. A second answer is ignored (and
// logged). After the server stopped, answers go nowhere and streams start closed.
class HttpResponder {
 public:
  virtual ~HttpResponder() = default;

  // A complete response with Content-Length. `extra_headers` may add e.g. Warning or Location;
  // the server owns the framing, so Content-Length, Transfer-Encoding, Connection and any header
  // with CR or LF in it are dropped. A status outside 200-599 is sent as 500.
  virtual void Respond(int status, std::string_view content_type, Body body,
                       std::vector<HttpHeader> extra_headers = {}) = 0;

  // Starts a chunked response (Transfer-Encoding: chunked) for a watch; its header is sent at
  // once. The connection ends with the stream ("Connection: close"). Returns the stream.
  virtual std::shared_ptr<class HttpStream> StartStream(int status,
                                                        std::string_view content_type) = 0;
};

// A chunked response in progress. Each Write sends one chunk made of the given buffers (in order,
// without copying them) and flushes it. Writes are queued; if more than `max_queued_bytes` of
// the stream's output is waiting because the client does not read, the stream is closed (the
// watcher is too slow and will relist). Close ends the stream with the final chunk. Destroying
// the last reference to a stream closes it.
class HttpStream {
 public:
  virtual ~HttpStream() = default;
  // Returns false if the stream is closed (client gone, too slow, or server stopping); the
  // caller should then stop producing events.
  virtual bool Write(std::vector<Body> buffers) = 0;
  virtual void Close() = 0;
  virtual bool closed() const = 0;
  // Called once, on an I/O thread, when the stream closes for any reason (client disconnect,
  // overflow, Close, server stop). Set it right after StartStream. If the stream has already
  // closed, the callback runs at once on the calling thread. (A stream that a stuck handler kept
  // from closing on an I/O thread during Stop is closed, and its callback run, by Stop's thread.)
  virtual void OnClose(std::function<void()> callback) = 0;
};

class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  // Called on an I/O thread for every request. Must not block: long work goes elsewhere and
  // answers through the responder later.
  virtual void Handle(HttpRequest request, std::shared_ptr<HttpResponder> responder) = 0;
};

// TLS for the server (TLS 1.2 and later). PEM text, not file names.
struct HttpTlsOptions {
  std::string certificate_chain_pem;  // the serving certificate, then any intermediates
  std::string private_key_pem;
  std::string client_ca_pem;  // CAs for client certificates; empty: none are asked for
};

struct HttpServerOptions {
  std::string listen = "127.0.0.1:6443";  // HOST:PORT; port 0 picks a free port
  int io_threads = 1;
  size_t max_body_bytes = 3 * 1024 * 1024;  // larger bodies get 413 before the handler runs
  size_t max_stream_queue_bytes = 16 * 1024 * 1024;
  // Access log: one line per request on stderr when true ("-v=2" and above).
  bool access_log = false;
  // Serve HTTPS with these (absent: plain HTTP). A plain-HTTP request to a TLS server gets
  // 400 "Client sent an HTTP request to an HTTPS server.", as Go's http.Server answers it.
  std::optional<HttpTlsOptions> tls;
};

class HttpServer {
 public:
  virtual ~HttpServer() = default;  // stops the server (see Stop)
  // The port actually bound (useful with port 0).
  virtual int port() const = 0;
  // Stops accepting, lets in-flight responses finish for up to `grace_ms`, closes every stream
  // (with the final chunk, so clients see a clean end) and connection, and joins the I/O
  // threads. Idempotent. Call it from any thread but an I/O thread (not from a handler or a
  // callback): it joins them. A signal-handling thread is fine.
  virtual void Stop(int grace_ms = 2000) = 0;
};

// Binds, listens and starts the I/O threads. Errors: the address does not parse or cannot be
// bound (kBadRequest / kUnavailable with the system's reason); the TLS certificate, key or
// client CAs do not load (kBadRequest naming which, with OpenSSL's reason).
Result<std::unique_ptr<HttpServer>> StartHttpServer(const HttpServerOptions& options,
                                                    HttpHandler* handler);

}  // namespace kt::server
