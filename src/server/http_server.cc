// The HTTP/1.1 server behind http.h: Boost.Beast on one Asio io_context run by a few I/O
// threads, one strand per connection.
//
// Ownership, which decides what is safe when:
//   Core        the io_context, the acceptor, the registry of live connections. Shared by the
//               HttpServer and by every responder and stream handed to the handler, so a handler
//               that keeps a responder or stream past Stop() (or past the server's destruction)
//               still talks to a live, if stopped, io_context. Nothing the io_context owns holds
//               a reference to Core, so there is no cycle.
//   Connection  one socket and its state machine; lives while an operation or a responder holds
//               it. All its members are touched on its strand only (or, after the I/O threads are
//               joined, by Stop alone).
//   StreamState what a watch stream shares between the writer (any thread) and its connection:
//               the queue of chunks not yet written, guarded by a mutex.
//
// A connection reads one request at a time (header, then the whole body), calls the handler,
// waits for its answer, writes it, and reads the next request if keep-alive allows. A stream
// ends the connection when it ends.
#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it
#include <vector>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "core/strings.h"
#include "core/thread_name.h"
#include "server/authn.h"
#include "server/http.h"
#include "server/internal/openssl_ptr.h"
#include "server/server_stream.h"

namespace kt::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    unsigned char x = static_cast<unsigned char>(a[i]);
    unsigned char y = static_cast<unsigned char>(b[i]);
    if (x != y && std::tolower(x) != std::tolower(y)) return false;
  }
  return true;
}

}  // namespace

std::string_view HttpRequest::Header(std::string_view name) const {
  for (const HttpHeader& h : headers) {
    if (EqualsIgnoreCase(h.name, name)) return h.value;
  }
  return {};
}

namespace {

// Timeouts follow kube-apiserver's http.Server (secure_serving.go): ReadHeaderTimeout 32 s for a
// request's header, IdleTimeout 90 s between keep-alive requests, MaxHeaderBytes 1 MiB. Bodies
// and responses get the default request timeout (60 s) so a stalled peer cannot pin a
// connection forever; streams have no timeout (their queue bound handles slow readers).
constexpr auto kFirstHeaderTimeout = std::chrono::seconds(32);
constexpr auto kKeepAliveIdleTimeout = std::chrono::seconds(90);
constexpr auto kBodyTimeout = std::chrono::seconds(60);
constexpr auto kWriteTimeout = std::chrono::seconds(60);
// After an error response we read and discard what the client still sends for this long, so
// the kernel does not answer its unread bytes with a reset that would destroy our response.
constexpr auto kLingerTimeout = std::chrono::seconds(2);
constexpr uint32_t kMaxHeaderBytes = 1 << 20;
constexpr size_t kScratchBytes = 4096;
// The request read buffer's initial capacity.
constexpr size_t kReadBufferBytes = 8192;
// After the grace period, Stop waits this long for forced closes to run on the I/O threads
// before it joins them and closes what is left itself.
constexpr auto kForceCloseWait = std::chrono::milliseconds(500);

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
// Go's http.Server answers a plain-HTTP request on a TLS port with exactly this.
constexpr std::string_view kHttpToHttps =
    "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";
constexpr std::string_view kCrLf = "\r\n";
constexpr std::string_view kFinalChunk = "0\r\n\r\n";

// A minimal JSON string escape for the messages of the Status bodies written here.
void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out->append(buf);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

// A metav1.Status failure body, as kube-apiserver writes it.
Body StatusBody(int code, std::string_view reason, std::string_view message) {
  std::string s =
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)";
  AppendJsonString(&s, message);
  s += R"(,"reason":)";
  AppendJsonString(&s, reason);
  s += R"(,"code":)";
  s += std::to_string(code);
  s += "}";
  return MakeBody(std::move(s));
}

bool IsTokenChar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsSafeValue(std::string_view v) {
  return std::none_of(v.begin(), v.end(), [](char c) { return c == '\r' || c == '\n' || c == 0; });
}

// Headers the handler may not set: the server owns the framing.
bool IsFramingHeader(std::string_view name) {
  return EqualsIgnoreCase(name, "Content-Length") || EqualsIgnoreCase(name, "Transfer-Encoding") ||
         EqualsIgnoreCase(name, "Connection");
}

enum class Framing { kLength, kChunked, kNone };

// The status line and headers of a response. Handler-supplied headers that could break the
// framing or inject lines (CR/LF in a value) are dropped: they may carry user input.
std::string BuildHead(int status, std::string_view content_type, Framing framing,
                      size_t content_length, const std::vector<HttpHeader>& extra,
                      std::string_view connection) {
  boost::string_view beast_reason = bhttp::obsolete_reason(static_cast<bhttp::status>(status));
  std::string_view reason(beast_reason.data(), beast_reason.size());
  if (reason.empty() || reason.front() == '<') reason = "Unknown";
  std::string head;
  head.reserve(128 + content_type.size());
  head += "HTTP/1.1 ";
  head += std::to_string(status);
  head += ' ';
  head += reason;
  head += kCrLf;
  if (!content_type.empty() && IsSafeValue(content_type)) {
    head += "Content-Type: ";
    head += content_type;
    head += kCrLf;
  }
  for (const HttpHeader& h : extra) {
    if (h.name.empty() || !std::all_of(h.name.begin(), h.name.end(), IsTokenChar) ||
        !IsSafeValue(h.value) || IsFramingHeader(h.name)) {
      continue;
    }
    head += h.name;
    head += ": ";
    head += h.value;
    head += kCrLf;
  }
  if (framing == Framing::kChunked) {
    head += "Transfer-Encoding: chunked\r\n";
  } else if (framing == Framing::kLength) {
    head += "Content-Length: ";
    head += std::to_string(content_length);
    head += kCrLf;
  }
  if (!connection.empty()) {
    head += "Connection: ";
    head += connection;
    head += kCrLf;
  }
  head += kCrLf;
  return head;
}

std::string FormatEndpoint(const tcp::endpoint& ep) {
  std::string addr = ep.address().to_string();
  if (ep.address().is_v6()) addr = "[" + addr + "]";
  return addr + ":" + std::to_string(ep.port());
}

std::string ToString(boost::string_view s) { return std::string(s.data(), s.size()); }

// Errors a malformed request produces, answered with 400 (others end the connection quietly:
// the peer went away or timed out, and nobody is left to read an answer).
bool IsMalformedRequest(const beast::error_code& ec) {
  using E = bhttp::error;
  return ec == E::bad_line_ending || ec == E::bad_method || ec == E::bad_target ||
         ec == E::bad_version || ec == E::bad_field || ec == E::bad_value ||
         ec == E::bad_content_length || ec == E::bad_transfer_encoding || ec == E::bad_chunk ||
         ec == E::bad_chunk_extension || ec == E::bad_obs_fold;
}

// What the client's certificate says, and whether it chains to a client CA (the context's verify
// callback lets every handshake through and leaves this decision here).
std::shared_ptr<const ClientCertificate> PeerCertificate(SSL* ssl) {
  X509* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr) return nullptr;
  auto out = std::make_shared<ClientCertificate>();
  const long result = SSL_get_verify_result(ssl);
  out->verified = result == X509_V_OK;
  if (!out->verified) out->verify_error = X509_verify_cert_error_string(result);
  if (std::optional<UserInfo> user = UserFromCertificate(cert)) {
    out->common_name = std::move(user->name);
    out->organizations = std::move(user->groups);
  }
  return out;
}

Result<internal::SslCtxPtr> NewTlsContext(const HttpTlsOptions& o) {
  // OpenSSL's reason alone ("key values mismatch"), as a user reads it.
  auto bad = [](std::string_view what) {
    const char* reason = ERR_reason_error_string(ERR_peek_last_error());
    std::string message(what);
    message += ": ";
    message += reason != nullptr ? reason : "unknown OpenSSL error";
    ERR_clear_error();
    return Err(BadRequest(message));
  };
  ERR_clear_error();
  internal::SslCtxPtr ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx) return bad("TLS");
  SSL_CTX* native = ctx.get();
  if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1) return bad("TLS 1.2");
  // A peer that closes without close_notify ends the stream like one that sends it: HTTP frames
  // its own messages.
  SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                                  SSL_OP_PRIORITIZE_CHACHA | SSL_OP_NO_COMPRESSION |
                                  SSL_OP_IGNORE_UNEXPECTED_EOF);
  // TLS 1.3 suites in Go's order (kube-apiserver's) on a machine with AES instructions:
  // AES-128-GCM first, then AES-256-GCM, unless the client puts ChaCha20-Poly1305 first
  // (SSL_OP_PRIORITIZE_CHACHA), as Go's server does for clients without AES hardware.
  if (SSL_CTX_set_ciphersuites(native,
                               "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
                               "TLS_CHACHA20_POLY1305_SHA256") != 1) {
    return bad("the TLS 1.3 cipher suites");
  }
  // Read what the socket has, not a record's header and then its body: one read per request.
  SSL_CTX_set_read_ahead(native, 1);
  {
    internal::BioPtr bio(BIO_new_mem_buf(o.certificate_chain_pem.data(),
                                         static_cast<int>(o.certificate_chain_pem.size())));
    internal::X509Ptr leaf(
        bio ? PEM_read_bio_X509_AUX(bio.get(), nullptr, internal::NoPassphrase, nullptr) : nullptr);
    if (!leaf || SSL_CTX_use_certificate(native, leaf.get()) != 1) {
      return bad("the TLS serving certificate does not load");
    }
    while (X509* issuer = PEM_read_bio_X509(bio.get(), nullptr, internal::NoPassphrase, nullptr)) {
      if (SSL_CTX_add0_chain_cert(native, issuer) != 1) {  // takes `issuer` only on success
        X509_free(issuer);
        return bad("the TLS serving certificate's chain does not load");
      }
    }
    const unsigned long last = ERR_peek_last_error();
    if (ERR_GET_LIB(last) != ERR_LIB_PEM || ERR_GET_REASON(last) != PEM_R_NO_START_LINE) {
      return bad("the TLS serving certificate's chain does not load");
    }
    ERR_clear_error();  // the loop ends on "no start line"
  }
  {
    internal::BioPtr bio(
        BIO_new_mem_buf(o.private_key_pem.data(), static_cast<int>(o.private_key_pem.size())));
    internal::KeyPtr key(
        bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, internal::NoPassphrase, nullptr)
            : nullptr);
    if (!key || SSL_CTX_use_PrivateKey(native, key.get()) != 1) {
      return bad("the TLS private key does not load");
    }
  }
  if (SSL_CTX_check_private_key(native) != 1) {
    return bad("the TLS private key does not match the serving certificate");
  }
  // Resumed sessions need an id context once client certificates are asked for.
  static constexpr unsigned char kSessionContext[] = "kubetaint";
  SSL_CTX_set_session_id_context(native, kSessionContext, sizeof kSessionContext - 1);
  if (!o.client_ca_pem.empty()) {
    internal::BioPtr bio(
        BIO_new_mem_buf(o.client_ca_pem.data(), static_cast<int>(o.client_ca_pem.size())));
    X509_STORE* store = SSL_CTX_get_cert_store(native);
    int loaded = 0;
    while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, internal::NoPassphrase, nullptr)) {
      const int added = X509_STORE_add_cert(store, ca);
      // The names sent in the CertificateRequest: clients pick the certificate they offer by
      // them (Go's client sends none if no configured certificate matches).
      const int listed = SSL_CTX_add_client_CA(native, ca);
      X509_free(ca);
      if (added != 1 || listed != 1) return bad("the client CA certificates do not load");
      ++loaded;
    }
    if (loaded == 0) return bad("the client CA file holds no PEM certificate");
    ERR_clear_error();  // the loop ends on "no start line"
    // Every handshake goes through; PeerCertificate records whether the certificate chains.
    SSL_CTX_set_verify(native, SSL_VERIFY_PEER, [](int, X509_STORE_CTX*) { return 1; });
  }
  return ctx;
}

class Connection;

// Shared server state; see the top comment for who holds it.
struct Core : std::enable_shared_from_this<Core> {
  Core(const HttpServerOptions& o, HttpHandler* h)
      : options(o),
        handler(h),
        io(std::max(1, o.io_threads)),
        acceptor(asio::make_strand(io)),
        accept_retry(acceptor.get_executor()) {}

  void Register(const std::shared_ptr<Connection>& c);
  void Unregister(Connection* c);
  void DoAccept();
  void OnAccept(const beast::error_code& ec, tcp::socket socket);

  const HttpServerOptions options;
  HttpHandler* const handler;
  internal::SslCtxPtr tls;            // null: plain HTTP
  std::atomic<bool> stopping{false};  // Stop began: accept nothing new, wind down
  std::atomic<bool> stopped{false};   // the I/O threads are joined: work posted now never runs

  // Declared before `io` so that they outlive it: connections destroyed while the io_context
  // drops its pending handlers may still unregister themselves.
  std::mutex mu;
  std::condition_variable cv;                                              // `connections` shrank
  std::unordered_map<Connection*, std::weak_ptr<Connection>> connections;  // guarded by mu

  asio::io_context io;
  tcp::acceptor acceptor;  // on its own strand
  asio::steady_timer accept_retry;
};

// One chunk of a stream: the caller's buffers, sent as one HTTP chunk.
struct Chunk {
  std::vector<Body> buffers;
  size_t bytes = 0;
  char size_line[24] = {};  // "<hex size>\r\n", filled in when written
  size_t size_line_len = 0;
};

// What a stream's writer (any thread) shares with its connection (the strand).
struct StreamState {
  StreamState(std::weak_ptr<Connection> c, size_t max) : conn(std::move(c)), max_queued(max) {}

  // Marks the stream finished and runs the close callback, once. Called by the connection.
  void Terminate() {
    std::function<void()> callback;
    {
      std::lock_guard<std::mutex> lock(mu);
      closing = true;
      pending.clear();
      queued_bytes = 0;
      if (fired) return;
      fired = true;
      callback = std::move(on_close);
    }
    if (callback) callback();
  }

  const std::weak_ptr<Connection> conn;
  const size_t max_queued;

  std::mutex mu;
  std::deque<Chunk> pending;  // guarded by mu: written by Write, taken by the connection
  size_t queued_bytes = 0;    // guarded by mu: accepted by Write, not yet written to the socket
  bool flush_posted = false;  // guarded by mu: a flush is queued or a write will re-check
  bool closing = false;       // guarded by mu: Write refuses (Close, overflow, peer gone, stop)
  bool send_final = false;    // guarded by mu: end with the final chunk (Close, stop)
  bool fired = false;         // guarded by mu: on_close has run (or will run at once)
  std::function<void()> on_close;  // guarded by mu
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(Core* core, tcp::socket socket, std::string remote)
      : core_(core),
        strand_(socket.get_executor()),
        stream_(std::move(socket), core->tls.get()),
        remote_(std::move(remote)) {
    // Beast reads at most the free capacity (512 bytes when empty): room for a whole typical
    // request makes it one recv, not two.
    buffer_.reserve(kReadBufferBytes);
  }

  ~Connection() {
    // Every path ends in Close(); this only matters if one did not.
    if (state_ != State::kClosed) core_->Unregister(this);
  }

  const asio::any_io_executor& strand() const { return strand_; }

  void Start() {
    asio::dispatch(strand_, [self = shared_from_this()] {
      if (self->stream_.is_tls()) {
        self->DetectTls();
      } else {
        self->ReadRequest();
      }
    });
  }

  // The handler's answer to request `seq`. On the strand.
  void WriteResponse(uint64_t seq, int status, const std::string& content_type, Body body,
                     const std::vector<HttpHeader>& extra) {
    if (state_ != State::kHandling || seq != seq_) return;  // closed, or Stop forced it
    if (status < 200 || status > 599) status = 500;
    if (!body) body = MakeBody("");
    keep_alive_ = keep_alive_ && !core_->stopping;
    // 204 and 304 have no body; a HEAD answer announces the body's length but omits it.
    bool no_body = status == 204 || status == 304;
    std::string_view connection = !keep_alive_ ? "close" : (http10_ ? "keep-alive" : "");
    head_buf_ = BuildHead(status, content_type, no_body ? Framing::kNone : Framing::kLength,
                          body->size(), extra, connection);
    status_ = status;
    bytes_sent_ = (no_body || head_request_) ? 0 : body->size();
    body_ = bytes_sent_ > 0 ? std::move(body) : nullptr;
    state_ = State::kWriting;
    stream_.expires_after(kWriteTimeout);
    std::array<asio::const_buffer, 2> buffers = {
        asio::buffer(head_buf_), body_ ? asio::buffer(*body_) : asio::const_buffer()};
    asio::async_write(stream_, buffers, [self = shared_from_this()](beast::error_code ec, size_t) {
      self->OnResponseWritten(ec);
    });
  }

  // The handler started a stream for request `seq`. On the strand.
  void BeginStream(uint64_t seq, const std::shared_ptr<StreamState>& state, int status,
                   const std::string& content_type) {
    if (state_ != State::kHandling || seq != seq_) {
      state->Terminate();
      return;
    }
    if (status < 200 || status > 599) status = 500;
    state_ = State::kStreaming;
    stream_state_ = state;
    status_ = status;
    stream_.expires_never();
    // The stream ends the connection, so say so; HEAD gets the header alone.
    head_buf_ = BuildHead(status, content_type, head_request_ ? Framing::kNone : Framing::kChunked,
                          0, {}, "close");
    out_.assign(1, asio::buffer(head_buf_));
    StartStreamWrite(false);
    WatchForDisconnect();
    if (core_->stopping) RequestFinalChunk();
  }

  // Writes what the stream's writer queued. On the strand.
  void FlushStream() {
    if (state_ != State::kStreaming || stream_writing_) return;  // the write's end re-checks
    bool final_chunk = false;
    {
      std::lock_guard<std::mutex> lock(stream_state_->mu);
      while (!stream_state_->pending.empty()) {
        in_flight_.push_back(std::move(stream_state_->pending.front()));
        stream_state_->pending.pop_front();
      }
      final_chunk = stream_state_->send_final;
      if (in_flight_.empty() && !final_chunk) {
        stream_state_->flush_posted = false;
        return;
      }
    }
    out_.clear();
    in_flight_bytes_ = 0;
    for (Chunk& c : in_flight_) {
      char* end = PutHexMinimal(c.size_line, c.bytes);
      *end++ = '\r';
      *end++ = '\n';
      c.size_line_len = static_cast<size_t>(end - c.size_line);
      out_.push_back(asio::buffer(c.size_line, c.size_line_len));
      for (const Body& b : c.buffers) {
        if (b && !b->empty()) out_.push_back(asio::buffer(*b));
      }
      out_.push_back(asio::buffer(kCrLf.data(), kCrLf.size()));
      in_flight_bytes_ += c.bytes;
    }
    if (final_chunk) out_.push_back(asio::buffer(kFinalChunk.data(), kFinalChunk.size()));
    StartStreamWrite(final_chunk);
  }

  // The stream's writer overflowed its queue: the client is too slow. Close without the final
  // chunk, so the client sees a broken stream rather than a clean end. On the strand.
  void AbortStream() {
    if (state_ == State::kStreaming) Close();
  }

  // Stop began. On the strand.
  void BeginShutdown() {
    switch (state_) {
      case State::kReading:    // idle keep-alive, or a request not yet complete
      case State::kLingering:  // already answered with an error
        Close();
        break;
      case State::kHandling:  // answered with "Connection: close", see WriteResponse
      case State::kWriting:   // closes when written, see OnResponseWritten
      case State::kClosed:
        break;
      case State::kStreaming:
        RequestFinalChunk();
        break;
    }
  }

  // Ends everything at once: the socket, the stream (firing its close callback), the
  // registration. On the strand, or from Stop once the I/O threads are joined.
  void Close() {
    if (state_ == State::kClosed) return;
    bool was_streaming = state_ == State::kStreaming;
    state_ = State::kClosed;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
    if (stream_state_) {
      if (was_streaming) LogAccess(status_, streamed_bytes_);
      stream_state_->Terminate();
    }
    core_->Unregister(this);
  }

 private:
  enum class State {
    kReading,    // reading a request (or waiting for the next one on a keep-alive connection)
    kHandling,   // the handler has the request; waiting for its answer
    kWriting,    // writing a response
    kStreaming,  // a chunked stream is open
    kLingering,  // an error answer was sent; draining the rest of the request, then close
    kClosed,
  };

  // A TLS port: the first bytes say whether the client speaks TLS at all. Those read go to the
  // handshake.
  void DetectTls() {
    stream_.expires_after(kFirstHeaderTimeout);
    stream_.async_detect_tls([self = shared_from_this()](beast::error_code ec, bool is_tls) {
      if (self->state_ != State::kReading) return;
      if (ec) {
        self->Close();
        return;
      }
      if (!is_tls) {
        self->RefusePlainHttp();
        return;
      }
      self->Handshake();
    });
  }

  void RefusePlainHttp() {
    state_ = State::kWriting;
    stream_.expires_after(kWriteTimeout);
    asio::async_write(stream_, asio::buffer(kHttpToHttps.data(), kHttpToHttps.size()),
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (self->state_ != State::kWriting) return;
                        if (ec) {
                          self->Close();
                          return;
                        }
                        self->Linger();
                      });
  }

  void Handshake() {
    stream_.async_handshake([self = shared_from_this()](beast::error_code ec) {
      if (self->state_ != State::kReading) return;
      if (ec) {
        // A client that does not trust our certificate, or speaks no common version.
        if (self->core_->options.access_log) {
          std::fprintf(stderr, "%s TLS handshake failed: %s\n", self->remote_.c_str(),
                       ec.message().c_str());
        }
        self->Close();
        return;
      }
      self->client_certificate_ = PeerCertificate(self->stream_.ssl());
      self->ReadRequest();
    });
  }

  void ReadRequest() {
    if (state_ == State::kClosed) return;
    if (core_->stopping) {
      Close();
      return;
    }
    state_ = State::kReading;
    parser_.emplace();
    parser_->header_limit(kMaxHeaderBytes);
    parser_->body_limit(core_->options.max_body_bytes);
    method_.clear();
    target_.clear();
    stream_.expires_after(first_request_ ? kFirstHeaderTimeout : kKeepAliveIdleTimeout);
    bhttp::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(const beast::error_code& ec) {
    if (state_ != State::kReading) return;
    started_ = Clock::now();
    if (parser_->got_some()) {
      method_ = ToString(parser_->get().method_string());
      target_ = ToString(parser_->get().target());
    }
    if (ec) {
      OnReadError(ec);
      return;
    }
    if (parser_->is_done()) {
      Dispatch();
      return;
    }
    auto expect = parser_->get().find(bhttp::field::expect);
    if (expect != parser_->get().end() && parser_->get().version() >= 11 &&
        EqualsIgnoreCase(ToString(expect->value()), "100-continue")) {
      // curl sends large bodies only after this (or after a 1 s wait).
      stream_.expires_after(kWriteTimeout);
      asio::async_write(stream_, asio::buffer(kContinue.data(), kContinue.size()),
                        [self = shared_from_this()](beast::error_code ec, size_t) {
                          if (self->state_ != State::kReading) return;
                          if (ec) {
                            self->Close();
                            return;
                          }
                          self->ReadBody();
                        });
      return;
    }
    if (ParseBufferedBody()) return;
    ReadBody();
  }

  // The body, when the read that brought the header brought all of it (as it does for a small
  // request): parsed from the buffer at once, without another trip through the event loop.
  // True if the request was dispatched or answered.
  bool ParseBufferedBody() {
    parser_->eager(true);
    while (buffer_.size() > 0 && !parser_->is_done()) {
      beast::error_code ec;
      const size_t used = parser_->put(buffer_.data(), ec);
      buffer_.consume(used);
      if (ec == bhttp::error::need_more) break;
      if (ec) {
        OnReadError(ec);
        return true;
      }
      if (used == 0) break;
    }
    if (!parser_->is_done()) return false;
    Dispatch();
    return true;
  }

  void ReadBody() {
    stream_.expires_after(kBodyTimeout);
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (self->state_ != State::kReading) return;
                        if (ec) {
                          self->OnReadError(ec);
                          return;
                        }
                        self->Dispatch();
                      });
  }

  void OnReadError(const beast::error_code& ec) {
    if (ec == bhttp::error::body_limit) {
      WriteErrorAndClose(413, "application/json",
                         StatusBody(413, "RequestEntityTooLarge",
                                    "Request entity too large: limit is " +
                                        std::to_string(core_->options.max_body_bytes)));
    } else if (ec == bhttp::error::header_limit) {
      WriteErrorAndClose(431, "text/plain; charset=utf-8",
                         MakeBody("431 Request Header Fields Too Large"));
    } else if (IsMalformedRequest(ec)) {
      WriteErrorAndClose(400, "text/plain; charset=utf-8", MakeBody("400 Bad Request"));
    } else {
      Close();  // the peer closed, reset or timed out
    }
  }

  // Answers a request the handler never saw, then drains and closes: the rest of the request
  // cannot be trusted to be framed correctly.
  void WriteErrorAndClose(int status, std::string_view content_type, Body body) {
    if (method_.empty()) method_ = "-";
    if (target_.empty()) target_ = "-";
    parser_.reset();
    keep_alive_ = false;
    head_buf_ = BuildHead(status, content_type, Framing::kLength, body->size(), {}, "close");
    status_ = status;
    bytes_sent_ = body->size();
    body_ = std::move(body);
    state_ = State::kWriting;
    stream_.expires_after(kWriteTimeout);
    std::array<asio::const_buffer, 2> buffers = {asio::buffer(head_buf_), asio::buffer(*body_)};
    asio::async_write(stream_, buffers, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (self->state_ != State::kWriting) return;
      self->body_.reset();
      self->LogAccess(self->status_, self->bytes_sent_);
      if (ec) {
        self->Close();
        return;
      }
      self->Linger();
    });
  }

  void Linger() {
    state_ = State::kLingering;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(kLingerTimeout);
    DiscardUntilEof();
  }

  // Reads beneath TLS, if any: these bytes are thrown away, and the connection is done.
  void DiscardUntilEof() {
    if (!scratch_) scratch_ = std::make_unique<char[]>(kScratchBytes);
    stream_.async_read_some_raw(asio::buffer(scratch_.get(), kScratchBytes),
                                [self = shared_from_this()](beast::error_code ec, size_t) {
                                  if (self->state_ != State::kLingering) return;
                                  if (ec) {
                                    self->Close();  // EOF, reset, or the linger timeout
                                    return;
                                  }
                                  self->DiscardUntilEof();
                                });
  }

  void Dispatch() {
    auto& msg = parser_->get();
    keep_alive_ = msg.keep_alive();
    http10_ = msg.version() < 11;
    head_request_ = msg.method() == bhttp::verb::head;
    HttpRequest request;
    request.method = method_;
    request.target = target_;
    request.headers.reserve(static_cast<size_t>(std::distance(msg.begin(), msg.end())));
    for (const auto& field : msg) {
      request.headers.push_back({ToString(field.name_string()), ToString(field.value())});
    }
    request.body = std::move(msg.body());
    request.remote = remote_;
    request.tls = stream_.is_tls();
    request.client_certificate = client_certificate_;
    parser_.reset();
    state_ = State::kHandling;
    ++seq_;
    stream_.expires_never();  // the handler may take its time (a watch, a slow write)
    auto responder = MakeResponder();
    try {
      core_->handler->Handle(std::move(request), std::move(responder));
    } catch (const std::exception& e) {
      // No exception may cross the module edge; the dropped responder answers 500.
      std::fprintf(stderr, "kubetaint: http handler threw for %s %s: %s\n", method_.c_str(),
                   target_.c_str(), e.what());
    } catch (...) {
      std::fprintf(stderr, "kubetaint: http handler threw for %s %s\n", method_.c_str(),
                   target_.c_str());
    }
  }

  std::shared_ptr<HttpResponder> MakeResponder();

  void OnResponseWritten(const beast::error_code& ec) {
    if (state_ != State::kWriting) return;
    body_.reset();
    LogAccess(status_, bytes_sent_);
    if (ec) {
      Close();
      return;
    }
    if (!keep_alive_) {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      Close();
      return;
    }
    first_request_ = false;
    ReadRequest();  // closes instead if Stop began meanwhile
  }

  void StartStreamWrite(bool final_chunk) {
    stream_writing_ = true;
    final_in_flight_ = final_chunk;
    asio::async_write(stream_, out_, [self = shared_from_this()](beast::error_code ec, size_t) {
      self->OnStreamWritten(ec);
    });
  }

  void OnStreamWritten(const beast::error_code& ec) {
    stream_writing_ = false;
    if (state_ != State::kStreaming) return;
    if (ec) {
      Close();
      return;
    }
    streamed_bytes_ += in_flight_bytes_;
    {
      std::lock_guard<std::mutex> lock(stream_state_->mu);
      stream_state_->queued_bytes -= std::min(stream_state_->queued_bytes, in_flight_bytes_);
    }
    in_flight_.clear();
    in_flight_bytes_ = 0;
    if (final_in_flight_ || head_request_) {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      Close();
      return;
    }
    FlushStream();
  }

  // Keeps a read pending while streaming, so a peer that goes away is noticed even when no
  // events are written. Anything the client sends meanwhile is discarded.
  void WatchForDisconnect() {
    if (!scratch_) scratch_ = std::make_unique<char[]>(kScratchBytes);
    stream_.async_read_some(asio::buffer(scratch_.get(), kScratchBytes),
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              if (self->state_ != State::kStreaming) return;
                              if (ec) {
                                self->Close();
                                return;
                              }
                              self->WatchForDisconnect();
                            });
  }

  // Ends the stream cleanly after what is queued (Stop). On the strand.
  void RequestFinalChunk() {
    {
      std::lock_guard<std::mutex> lock(stream_state_->mu);
      if (stream_state_->send_final) return;
      stream_state_->closing = true;
      stream_state_->send_final = true;
      stream_state_->flush_posted = true;
    }
    FlushStream();
  }

  void LogAccess(int status, uint64_t bytes) {
    if (!core_->options.access_log) return;
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - started_).count();
    char tail[64];
    std::snprintf(tail, sizeof tail, "\" %d %llu %.3fms\n", status,
                  static_cast<unsigned long long>(bytes), ms);
    std::string line;
    line.reserve(remote_.size() + method_.size() + target_.size() + 80);
    line += remote_;
    line += " \"";
    line += method_;
    line += ' ';
    line += target_;
    line += tail;
    // One write per line, so lines from several I/O threads do not interleave.
    std::fwrite(line.data(), 1, line.size(), stderr);
  }

  Core* const core_;  // outlives every connection (see the top comment)
  const asio::any_io_executor strand_;
  internal::ServerStream stream_;
  const std::string remote_;
  std::shared_ptr<const ClientCertificate> client_certificate_;  // set by the TLS handshake

  State state_ = State::kReading;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  uint64_t seq_ = 0;  // the request being handled; a stale responder cannot answer a later one
  bool first_request_ = true;
  bool keep_alive_ = false;
  bool http10_ = false;
  bool head_request_ = false;
  std::unique_ptr<char[]> scratch_;  // discarded bytes (linger, stream disconnect watch)

  // The request being served, for the access log.
  std::string method_;
  std::string target_;
  Clock::time_point started_;
  int status_ = 0;
  uint64_t bytes_sent_ = 0;

  // The response being written.
  std::string head_buf_;
  Body body_;

  // The stream, if one is open.
  std::shared_ptr<StreamState> stream_state_;
  bool stream_writing_ = false;
  bool final_in_flight_ = false;
  std::vector<Chunk> in_flight_;  // the chunks of the write in progress; out_ points into them
  size_t in_flight_bytes_ = 0;
  std::vector<asio::const_buffer> out_;
  uint64_t streamed_bytes_ = 0;
};

void PostToConnection(const std::weak_ptr<Connection>& weak, void (Connection::*method)()) {
  if (std::shared_ptr<Connection> c = weak.lock()) {
    asio::post(c->strand(), [c, method] { (c.get()->*method)(); });
  }
}

// The user's handle on a stream. Destroying the last reference closes the stream.
class StreamHandle final : public HttpStream {
 public:
  StreamHandle(std::shared_ptr<Core> core, std::shared_ptr<StreamState> state)
      : core_(std::move(core)), state_(std::move(state)) {}
  ~StreamHandle() override { Close(); }

  bool Write(std::vector<Body> buffers) override {
    size_t bytes = 0;
    for (const Body& b : buffers) bytes += b ? b->size() : 0;
    void (Connection::*action)() = nullptr;
    bool accepted = false;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      if (state_->closing) return false;
      if (core_->stopped) {
        state_->closing = true;
        return false;
      }
      // An empty chunk would read as the end of the stream.
      if (bytes == 0) return true;
      if (state_->queued_bytes + bytes > state_->max_queued) {
        state_->closing = true;  // the client is too slow: it will relist
        action = &Connection::AbortStream;
      } else {
        Chunk chunk;
        chunk.buffers = std::move(buffers);
        chunk.bytes = bytes;
        state_->pending.push_back(std::move(chunk));
        state_->queued_bytes += bytes;
        accepted = true;
        if (!state_->flush_posted) {
          state_->flush_posted = true;
          action = &Connection::FlushStream;
        }
      }
    }
    if (action != nullptr) PostToConnection(state_->conn, action);
    return accepted;
  }

  void Close() override {
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      if (state_->closing) return;
      state_->closing = true;
      state_->send_final = true;
      if (state_->flush_posted) return;  // the pending flush will send the final chunk
      state_->flush_posted = true;
    }
    PostToConnection(state_->conn, &Connection::FlushStream);
  }

  bool closed() const override {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->closing;
  }

  void OnClose(std::function<void()> callback) override {
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      if (!state_->fired && !core_->stopped) {
        state_->on_close = std::move(callback);
        return;
      }
      state_->fired = true;
    }
    if (callback) callback();  // already closed: run it now, on this thread
  }

 private:
  const std::shared_ptr<Core> core_;  // keeps the io_context alive while we may post to it
  const std::shared_ptr<StreamState> state_;
};

class Responder final : public HttpResponder {
 public:
  Responder(std::shared_ptr<Core> core, std::shared_ptr<Connection> conn, uint64_t seq)
      : core_(std::move(core)), conn_(std::move(conn)), seq_(seq) {}

  ~Responder() override {
    if (answered_.exchange(true) || core_->stopped) return;
    Post(500, "application/json",
         StatusBody(500, "InternalError",
                    "Internal error occurred: the request handler returned no response"),
         {});
  }

  void Respond(int status, std::string_view content_type, Body body,
               std::vector<HttpHeader> extra_headers) override {
    if (answered_.exchange(true)) {
      std::fprintf(stderr, "kubetaint: http: second response to one request ignored\n");
      return;
    }
    Post(status, std::string(content_type), std::move(body), std::move(extra_headers));
  }

  std::shared_ptr<HttpStream> StartStream(int status, std::string_view content_type) override {
    auto state = std::make_shared<StreamState>(conn_, core_->options.max_stream_queue_bytes);
    if (answered_.exchange(true)) {
      std::fprintf(stderr, "kubetaint: http: stream started after a response; ignored\n");
      state->closing = true;
      state->fired = true;
      return std::make_shared<StreamHandle>(core_, std::move(state));
    }
    {
      // Under the lock Stop takes to mark the server stopped, so that the stream either starts
      // before Stop runs what is left in the queue, or is born closed: its close callback runs
      // either way.
      std::lock_guard<std::mutex> lock(core_->mu);
      if (core_->stopped) {
        state->closing = true;
        state->fired = true;
      } else {
        asio::post(conn_->strand(),
                   [conn = conn_, seq = seq_, state, status, ct = std::string(content_type)] {
                     conn->BeginStream(seq, state, status, ct);
                   });
      }
    }
    return std::make_shared<StreamHandle>(core_, std::move(state));
  }

 private:
  void Post(int status, std::string content_type, Body body, std::vector<HttpHeader> extra) {
    asio::post(conn_->strand(), [conn = conn_, seq = seq_, status, ct = std::move(content_type),
                                 body = std::move(body), extra = std::move(extra)]() mutable {
      conn->WriteResponse(seq, status, ct, std::move(body), extra);
    });
  }

  // Declared first, destroyed last: the connection must go before the io_context can.
  const std::shared_ptr<Core> core_;
  const std::shared_ptr<Connection> conn_;
  const uint64_t seq_;
  std::atomic<bool> answered_{false};
};

std::shared_ptr<HttpResponder> Connection::MakeResponder() {
  return std::make_shared<Responder>(core_->shared_from_this(), shared_from_this(), seq_);
}

void Core::Register(const std::shared_ptr<Connection>& c) { connections.emplace(c.get(), c); }

void Core::Unregister(Connection* c) {
  std::lock_guard<std::mutex> lock(mu);
  connections.erase(c);
  if (connections.empty()) cv.notify_all();
}

void Core::DoAccept() {
  acceptor.async_accept(asio::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
    OnAccept(ec, std::move(socket));
  });
}

void Core::OnAccept(const beast::error_code& ec, tcp::socket socket) {
  if (stopping || ec == asio::error::operation_aborted) return;
  if (ec) {
    // Out of descriptors or memory: retry soon rather than spin or stop serving.
    std::fprintf(stderr, "kubetaint: http: accept: %s\n", ec.message().c_str());
    accept_retry.expires_after(std::chrono::milliseconds(100));
    accept_retry.async_wait([this](beast::error_code wait_ec) {
      if (!wait_ec && !stopping) DoAccept();
    });
    return;
  }
  beast::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  tcp::endpoint peer = socket.remote_endpoint(ignored);
  auto conn = std::make_shared<Connection>(this, std::move(socket), FormatEndpoint(peer));
  {
    std::lock_guard<std::mutex> lock(mu);
    // Checked under the lock Stop takes to snapshot the connections, so none escapes it.
    if (stopping) return;
    Register(conn);
  }
  conn->Start();
  DoAccept();
}

class HttpServerImpl final : public HttpServer {
 public:
  HttpServerImpl(std::shared_ptr<Core> core, int port)
      : core_(std::move(core)), port_(port), work_(asio::make_work_guard(core_->io)) {
    asio::post(core_->acceptor.get_executor(), [core = core_.get()] { core->DoAccept(); });
    int n = std::max(1, core_->options.io_threads);
    threads_.reserve(static_cast<size_t>(n));
    try {
      for (int i = 0; i < n; ++i) {
        threads_.emplace_back([core = core_.get()] {
          core::NameThisThread("kt-http");
          RunIo(core);
        });
      }
    } catch (...) {
      // Out of threads: undo, so that no joinable std::thread is destroyed.
      core_->io.stop();
      for (std::thread& t : threads_) t.join();
      core_->stopped = true;
      throw;
    }
  }

  ~HttpServerImpl() override { Stop(2000); }

  int port() const override { return port_; }

  void Stop(int grace_ms) override {
    std::lock_guard<std::mutex> stop_lock(stop_mu_);
    if (core_->stopped) return;
    for (const std::thread& t : threads_) {
      if (t.get_id() == std::this_thread::get_id()) {
        // Joining ourselves would hang forever: a programming error, so fail loudly.
        std::fprintf(stderr, "kubetaint: HttpServer::Stop called on an I/O thread\n");
        std::abort();
      }
    }
    const auto deadline = Clock::now() + std::chrono::milliseconds(std::max(0, grace_ms));

    // 1. Accept nothing new; idle connections close, responses in flight finish, streams end
    //    with their final chunk.
    {
      std::lock_guard<std::mutex> lock(core_->mu);
      core_->stopping = true;
    }
    asio::post(core_->acceptor.get_executor(), [core = core_.get()] {
      beast::error_code ignored;
      core->acceptor.close(ignored);
      core->accept_retry.cancel();
    });
    ForEachConnection(&Connection::BeginShutdown);
    WaitForConnections(deadline);

    // 2. Past the grace period: close what is left, on the I/O threads (so close callbacks run
    //    where the contract says).
    ForEachConnection(&Connection::Close);
    WaitForConnections(Clock::now() + kForceCloseWait);

    // 3. Join the I/O threads. Anything still open (a stuck handler held a strand) is closed
    //    from here, where nothing else runs now; then what is left in the queue runs here too,
    //    so that a stream started meanwhile still sees its close callback.
    work_.reset();
    core_->io.stop();
    for (std::thread& t : threads_) t.join();
    {
      std::lock_guard<std::mutex> lock(core_->mu);
      core_->stopped = true;
    }
    for (const std::shared_ptr<Connection>& c : Snapshot()) c->Close();
    core_->io.restart();
    RunIo(core_.get(), /*poll=*/true);
  }

 private:
  // Runs the io_context until it stops (or, with `poll`, until nothing is ready), surviving
  // exceptions from handlers.
  static void RunIo(Core* core, bool poll = false) {
    for (;;) {
      try {
        poll ? core->io.poll() : core->io.run();
        return;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "kubetaint: http: I/O thread caught: %s\n", e.what());
      } catch (...) {
        std::fprintf(stderr, "kubetaint: http: I/O thread caught an unknown exception\n");
      }
    }
  }

  std::vector<std::shared_ptr<Connection>> Snapshot() {
    std::vector<std::shared_ptr<Connection>> out;
    std::lock_guard<std::mutex> lock(core_->mu);
    out.reserve(core_->connections.size());
    for (auto& [ptr, weak] : core_->connections) {
      if (auto c = weak.lock()) out.push_back(std::move(c));
    }
    return out;
  }

  void ForEachConnection(void (Connection::*method)()) {
    for (const std::shared_ptr<Connection>& c : Snapshot()) {
      asio::post(c->strand(), [c, method] { (c.get()->*method)(); });
    }
  }

  void WaitForConnections(Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(core_->mu);
    core_->cv.wait_until(lock, deadline, [this] { return core_->connections.empty(); });
  }

  const std::shared_ptr<Core> core_;
  const int port_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
  std::mutex stop_mu_;  // serializes Stop
};

struct ListenAddress {
  std::string host;
  std::string port;
};

Result<ListenAddress> ParseListen(std::string_view listen) {
  auto bad = [&](std::string_view why) {
    return Err(
        BadRequest("invalid listen address \"" + std::string(listen) + "\": " + std::string(why)));
  };
  size_t colon = listen.rfind(':');
  if (colon == std::string_view::npos) return bad("want HOST:PORT");
  std::string_view host = listen.substr(0, colon);
  std::string_view port = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return bad("an IPv6 host must be in brackets, as in [::1]:6443");
  }
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      std::stoi(std::string(port)) > 65535) {
    return bad("the port must be a number from 0 to 65535");
  }
  return ListenAddress{host.empty() ? "0.0.0.0" : std::string(host), std::string(port)};
}

}  // namespace

Result<std::unique_ptr<HttpServer>> StartHttpServer(const HttpServerOptions& options,
                                                    HttpHandler* handler) {
  if (handler == nullptr) return Err(BadRequest("StartHttpServer: no handler"));
  if (options.io_threads < 1) {
    return Err(BadRequest("StartHttpServer: io_threads must be at least 1, got " +
                          std::to_string(options.io_threads)));
  }
  Result<ListenAddress> address = ParseListen(options.listen);
  if (!address) return Err(address.error());
  try {
    auto core = std::make_shared<Core>(options, handler);
    if (options.tls) {
      Result<internal::SslCtxPtr> tls = NewTlsContext(*options.tls);
      if (!tls) return Err(tls.error());
      core->tls = std::move(*tls);
    }
    beast::error_code ec;
    tcp::resolver resolver(core->io);
    auto endpoints = resolver.resolve(address->host, address->port,
                                      tcp::resolver::passive | tcp::resolver::numeric_service, ec);
    if (ec || endpoints.empty()) {
      return Err(BadRequest("invalid listen address \"" + options.listen +
                            "\": cannot resolve host: " + ec.message()));
    }
    tcp::endpoint endpoint = endpoints.begin()->endpoint();
    auto fail = [&](std::string_view what) {
      return Err(Status(StatusCode::kUnavailable, "cannot listen on \"" + options.listen + "\": " +
                                                      std::string(what) + ": " + ec.message()));
    };
    core->acceptor.open(endpoint.protocol(), ec);
    if (ec) return fail("socket");
    // Lets a restarted server bind while old connections sit in TIME_WAIT.
    core->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (ec) return fail("setsockopt");
    core->acceptor.bind(endpoint, ec);
    if (ec) return fail("bind");
    core->acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return fail("listen");
    int port = core->acceptor.local_endpoint(ec).port();
    if (ec) return fail("getsockname");
    return std::unique_ptr<HttpServer>(std::make_unique<HttpServerImpl>(std::move(core), port));
  } catch (const std::exception& e) {
    // Thread creation or allocation failed.
    return Err(Status(StatusCode::kUnavailable,
                      "cannot start the HTTP server on \"" + options.listen + "\": " + e.what()));
  }
}

}  // namespace kt::server
