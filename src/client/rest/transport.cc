#include "client/rest/transport.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <utility>  // before Asio: boost 1.74's awaitable.hpp needs std::exchange

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <atomic>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/version.h"

namespace kt::client {

namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;

constexpr auto kRequestTimeout = std::chrono::seconds(60);

struct Url {
  bool tls = false;
  std::string host;  // without brackets
  std::string port;
  std::string prefix;  // path prefix, no trailing slash
  std::string host_header;
};

Result<Url> ParseUrl(const std::string& server) {
  Url u;
  std::string_view s = server;
  if (s.substr(0, 8) == "https://") {
    u.tls = true;
    s.remove_prefix(8);
  } else if (s.substr(0, 7) == "http://") {
    s.remove_prefix(7);
  } else {
    return Err(BadRequest("server \"" + server + "\": expected an http:// or https:// URL"));
  }
  const size_t slash = s.find('/');
  std::string_view authority = s.substr(0, slash);
  if (slash != std::string_view::npos) {
    u.prefix = std::string(s.substr(slash));
    while (!u.prefix.empty() && u.prefix.back() == '/') u.prefix.pop_back();
  }
  u.host_header = std::string(authority);
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos)
      return Err(BadRequest("server \"" + server + "\": bad IPv6 host"));
    u.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size() && authority[close + 1] == ':') {
      u.port = std::string(authority.substr(close + 2));
    }
  } else {
    const size_t colon = authority.rfind(':');
    u.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) u.port = std::string(authority.substr(colon + 1));
  }
  if (u.host.empty()) return Err(BadRequest("server \"" + server + "\": no host"));
  if (u.port.empty()) u.port = u.tls ? "443" : "80";
  return u;
}

bool IsIpAddress(const std::string& host) {
  boost::system::error_code ec;
  net::ip::make_address(host, ec);
  return !ec;
}

// One connection, plain or TLS.
struct Conn {
  net::io_context ioc;
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure;
  beast::flat_buffer buffer;

  tcp::socket& socket() {
    return secure ? beast::get_lowest_layer(*secure).socket() : plain->socket();
  }
  template <class F>
  auto With(F&& f) {
    if (secure) return f(*secure);
    return f(*plain);
  }
};

class Transport : public RestTransport {
 public:
  Transport(RestConfig config, Url url, std::unique_ptr<ssl::context> ssl_ctx)
      : config_(std::move(config)), url_(std::move(url)), ssl_ctx_(std::move(ssl_ctx)) {}

  const std::string& server() const override { return config_.server; }

  Result<HttpResult> Do(std::string_view method, std::string_view path, std::string_view body,
                        std::string_view content_type) override {
    // A kept-alive connection may have been closed by the server meanwhile: one retry on a
    // fresh connection.
    for (int attempt = 0; attempt < 2; ++attempt) {
      std::unique_ptr<Conn> conn = TakeIdle();
      const bool reused = conn != nullptr;
      if (!conn) {
        Result<std::unique_ptr<Conn>> c = Connect(/*timeouts=*/true);
        if (!c) return Err(c.error());
        conn = std::move(*c);
      }
      boost::system::error_code ec;
      http::request<http::string_body> req = Request(method, path);
      if (!body.empty()) {
        req.set(http::field::content_type, std::string(content_type));
        req.body() = std::string(body);
      }
      req.prepare_payload();
      conn->With([&](auto& s) { http::write(s, req, ec); });
      http::response_parser<http::string_body> parser;
      parser.body_limit(std::numeric_limits<std::uint64_t>::max());
      if (!ec) conn->With([&](auto& s) { http::read(s, conn->buffer, parser, ec); });
      if (ec) {
        if (reused && attempt == 0) continue;
        return Err(Status(StatusCode::kUnavailable, config_.server + ": " + std::string(method) +
                                                        " " + std::string(path) + ": " +
                                                        ec.message()));
      }
      http::response<http::string_body> res = parser.release();
      HttpResult out{static_cast<int>(res.result_int()), std::move(res.body())};
      if (res.keep_alive()) PutIdle(std::move(conn));
      return out;
    }
    return Err(Status(StatusCode::kUnavailable, config_.server + ": request failed"));
  }

  Result<std::unique_ptr<Streaming>> Stream(
      std::string path, std::function<bool(std::string_view)> on_line,
      std::function<void(Status, int, std::string)> on_end) override;

  Result<std::unique_ptr<Conn>> Connect(bool timeouts) {
    auto conn = std::make_unique<Conn>();
    boost::system::error_code ec;
    tcp::resolver resolver(conn->ioc);
    auto endpoints = resolver.resolve(url_.host, url_.port, ec);
    auto fail = [&](std::string what) {
      return Err(Status(StatusCode::kUnavailable, config_.server + ": " + what));
    };
    if (ec) return fail("resolving " + url_.host + ": " + ec.message());
    if (url_.tls) {
      conn->secure.emplace(conn->ioc, *ssl_ctx_);
      const std::string& name =
          config_.tls_server_name.empty() ? url_.host : config_.tls_server_name;
      if (!IsIpAddress(name)) SSL_set_tlsext_host_name(conn->secure->native_handle(), name.c_str());
      if (!config_.insecure_skip_tls_verify) {
        conn->secure->set_verify_callback(ssl::host_name_verification(name));
      }
      beast::get_lowest_layer(*conn->secure).connect(endpoints, ec);
      if (ec) return fail("connecting: " + ec.message());
      SetTimeouts(conn->socket(), timeouts);
      conn->secure->handshake(ssl::stream_base::client, ec);
      if (ec) return fail("TLS handshake: " + ec.message());
    } else {
      conn->plain.emplace(conn->ioc);
      conn->plain->connect(endpoints, ec);
      if (ec) return fail("connecting: " + ec.message());
      SetTimeouts(conn->socket(), timeouts);
    }
    return conn;
  }

  http::request<http::string_body> Request(std::string_view method, std::string_view path) {
    http::request<http::string_body> req;
    req.method_string(std::string(method));
    req.target(url_.prefix + std::string(path));
    req.version(11);
    req.set(http::field::host, url_.host_header);
    req.set(http::field::user_agent, "kubetaint/" + std::string(KubetaintVersion()));
    req.set(http::field::accept, "application/json");
    if (!config_.bearer_token.empty()) {
      req.set(http::field::authorization, "Bearer " + config_.bearer_token);
    }
    return req;
  }

 private:
  static void SetTimeouts(tcp::socket& socket, bool on) {
    if (!on) return;
    timeval tv{};
    tv.tv_sec = std::chrono::duration_cast<std::chrono::seconds>(kRequestTimeout).count();
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }

  std::unique_ptr<Conn> TakeIdle() {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.empty()) return nullptr;
    std::unique_ptr<Conn> c = std::move(idle_.back());
    idle_.pop_back();
    return c;
  }
  void PutIdle(std::unique_ptr<Conn> c) {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.size() < 16) idle_.push_back(std::move(c));
  }

  RestConfig config_;
  Url url_;
  std::unique_ptr<ssl::context> ssl_ctx_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Conn>> idle_;  // guarded by mu_
};

class StreamingImpl : public RestTransport::Streaming {
 public:
  StreamingImpl(Transport* t, std::unique_ptr<Conn> conn, std::string path,
                std::function<bool(std::string_view)> on_line,
                std::function<void(Status, int, std::string)> on_end)
      : conn_(std::move(conn)) {
    thread_ = std::thread([this, t, path = std::move(path), on_line = std::move(on_line),
                           on_end = std::move(on_end)] {
      Status end;
      int status = 0;
      std::string body;
      Run(t, path, on_line, &end, &status, &body);
      if (!cancelled_.load()) on_end(std::move(end), status, std::move(body));
    });
  }
  ~StreamingImpl() override {
    cancelled_ = true;
    boost::system::error_code ec;
    conn_->socket().shutdown(tcp::socket::shutdown_both, ec);
    thread_.join();
  }

 private:
  void Run(Transport* t, const std::string& path,
           const std::function<bool(std::string_view)>& on_line, Status* end, int* status,
           std::string* error_body) {
    boost::system::error_code ec;
    http::request<http::string_body> req = t->Request("GET", path);
    req.prepare_payload();
    conn_->With([&](auto& s) { http::write(s, req, ec); });
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    if (!ec) conn_->With([&](auto& s) { http::read_header(s, conn_->buffer, parser, ec); });
    if (ec) {
      *end = Status(StatusCode::kUnavailable, t->server() + ": GET " + path + ": " + ec.message());
      return;
    }
    *status = static_cast<int>(parser.get().result_int());
    std::string pending;
    char chunk[64 * 1024];
    while (!parser.is_done() && !cancelled_.load()) {
      parser.get().body().data = chunk;
      parser.get().body().size = sizeof chunk;
      conn_->With([&](auto& s) { http::read_some(s, conn_->buffer, parser, ec); });
      if (ec == http::error::need_buffer) ec = {};
      if (ec) {
        *end =
            Status(StatusCode::kUnavailable, t->server() + ": GET " + path + ": " + ec.message());
        return;
      }
      pending.append(chunk, sizeof chunk - parser.get().body().size);
      if (*status != 200) continue;  // collected whole below
      size_t start = 0;
      for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
        if (nl > start && !on_line(std::string_view(pending).substr(start, nl - start))) return;
      }
      pending.erase(0, start);
    }
    if (*status != 200) {
      *error_body = std::move(pending);
      *end = Status(StatusCode::kUnavailable,
                    t->server() + ": GET " + path + ": HTTP " + std::to_string(*status));
      return;
    }
    if (!pending.empty() && !cancelled_.load()) on_line(pending);
  }

  std::unique_ptr<Conn> conn_;
  std::atomic<bool> cancelled_{false};
  std::thread thread_;
};

Result<std::unique_ptr<RestTransport::Streaming>> Transport::Stream(
    std::string path, std::function<bool(std::string_view)> on_line,
    std::function<void(Status, int, std::string)> on_end) {
  Result<std::unique_ptr<Conn>> c = Connect(/*timeouts=*/false);
  if (!c) return Err(c.error());
  return std::unique_ptr<Streaming>(new StreamingImpl(this, std::move(*c), std::move(path),
                                                      std::move(on_line), std::move(on_end)));
}

}  // namespace

Result<std::unique_ptr<RestTransport>> RestTransport::New(const RestConfig& config) {
  Result<Url> url = ParseUrl(config.server);
  if (!url) return Err(url.error());
  std::unique_ptr<ssl::context> ctx;
  if (url->tls) {
    ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
    boost::system::error_code ec;
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    if (!config.ca_pem.empty()) {
      ctx->add_certificate_authority(net::buffer(config.ca_pem), ec);
      if (ec) return Err(BadRequest("certificate-authority: " + ec.message()));
    } else {
      ctx->set_default_verify_paths(ec);
    }
    if (!config.client_cert_pem.empty() || !config.client_key_pem.empty()) {
      ctx->use_certificate_chain(net::buffer(config.client_cert_pem), ec);
      if (ec) return Err(BadRequest("client-certificate: " + ec.message()));
      ctx->use_private_key(net::buffer(config.client_key_pem), ssl::context::pem, ec);
      if (ec) return Err(BadRequest("client-key: " + ec.message()));
    }
    ctx->set_verify_mode(config.insecure_skip_tls_verify ? ssl::verify_none : ssl::verify_peer);
  }
  return std::unique_ptr<RestTransport>(new Transport(config, std::move(*url), std::move(ctx)));
}

}  // namespace kt::client
