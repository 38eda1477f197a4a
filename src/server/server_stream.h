// The byte stream under one HTTP connection of the API server: plain TCP, or TLS over TCP.
// Internal to http_server.cc and its tests (it pulls in Asio and OpenSSL headers; keep it out of
// anything widely included).
//
// One type for both, so that the connection's state machine is written once: it satisfies
// Beast's AsyncReadStream and AsyncWriteStream, with a timeout like beast::tcp_stream's.
//
//   ServerStream s(std::move(socket), tls_ctx);   // tls_ctx null: plain TCP
//   s.expires_after(32s);
//   s.async_detect_tls([](error_code ec, bool tls) { ... });   // TLS port: peeks, reads nothing
//   s.async_handshake([](error_code ec) { ... });
//   http::async_read_header(s, buffer, parser, handler);      // fails with beast::error::timeout
//
// TLS runs OpenSSL on the socket itself (a non-blocking SSL_read/SSL_write, and a wait for
// readiness when OpenSSL wants one): no memory BIO pair to copy records through, no second
// buffer, one system call per record. One timer serves the whole connection and is re-armed
// only when it fires early or a deadline moves closer, not once per operation.
//
// Every operation's handler runs on the socket's executor (the connection's strand); a
// handler is never invoked from inside the call that started its operation. Callers keep the
// stream alive while an operation is pending (the handler holds its owner) and start at most one
// read and one write at a time.
#pragma once

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/error.hpp>

#include "server/internal/openssl_ptr.h"

namespace kt::server::internal {

class ServerStream {
 public:
  using executor_type = boost::asio::ip::tcp::socket::executor_type;
  using error_code = boost::system::error_code;
  using Clock = std::chrono::steady_clock;

  // `tls` null: plain TCP. Otherwise the stream speaks TLS once async_handshake has completed;
  // until then reads and writes go to the socket as they are (a refusal to a client that did
  // not speak TLS). `tls` must outlive the stream.
  ServerStream(boost::asio::ip::tcp::socket socket, SSL_CTX* tls)
      : impl_(std::make_shared<Impl>(std::move(socket))), tls_ctx_(tls) {}

  ServerStream(const ServerStream&) = delete;
  ServerStream& operator=(const ServerStream&) = delete;

  bool is_tls() const { return tls_ctx_ != nullptr; }
  // The TLS session, once the handshake has begun; null otherwise.
  SSL* ssl() const { return ssl_.get(); }

  executor_type get_executor() { return impl_->socket.get_executor(); }
  boost::asio::ip::tcp::socket& socket() { return impl_->socket; }

  // Operations pending now or started later fail with beast::error::timeout once `d` has
  // passed (the socket's pending operations are cancelled then).
  void expires_after(Clock::duration d) {
    Impl& s = *impl_;
    s.deadline = Clock::now() + d;
    s.timed_out = false;
    if (s.timer_armed && s.armed_for <= s.deadline) return;  // it fires first and re-arms
    Arm(impl_);
  }
  void expires_never() {
    impl_->deadline = Clock::time_point::max();
    impl_->timed_out = false;
  }

  // Closes the socket: pending operations complete with operation_aborted.
  void close() {
    Impl& s = *impl_;
    error_code ignored;
    s.timer.cancel();
    s.timer_armed = false;
    s.socket.close(ignored);
  }

  // Whether the client's first byte opens a TLS handshake (a TLS record of type handshake,
  // 0x16; no HTTP method starts so). Consumes nothing. Handler: void(error_code, bool).
  template <class Handler>
  void async_detect_tls(Handler&& handler) {
    ++impl_->pending;
    Detect(std::forward<Handler>(handler));
  }

  // The server side of the TLS handshake. Handler: void(error_code); the error names OpenSSL's
  // reason (a client that does not trust the certificate, no common version, ...).
  template <class Handler>
  void async_handshake(Handler&& handler) {
    ++impl_->pending;
    if (!ssl_) {
      ERR_clear_error();
      SslPtr ssl(SSL_new(tls_ctx_));
      error_code ec;
      impl_->socket.non_blocking(true, ec);
      if (!ssl || SSL_set_fd(ssl.get(), impl_->socket.native_handle()) != 1) {
        if (!ec) ec = SslError(0);
      }
      if (ec) {
        Complete(std::forward<Handler>(handler), true, ec, NoValue{});
        return;
      }
      SSL_set_accept_state(ssl.get());
      ssl_ = std::move(ssl);
    }
    Handshake(std::forward<Handler>(handler));
  }

  template <class MutableBuffers, class Handler>
  void async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    ++impl_->pending;
    if (!ssl_) {
      impl_->socket.async_read_some(buffers, Completing(std::forward<Handler>(handler)));
      return;
    }
    TlsRead(FirstBuffer<boost::asio::mutable_buffer>(buffers), std::forward<Handler>(handler));
  }

  // Over TLS each write is one record and one send: leading small buffers (an HTTP head and its
  // body, a chunk's size line, event and CRLF) are first copied into one, up to a record's size.
  // At most one write is in flight per stream (async_write's contract), so one buffer serves.
  template <class ConstBuffers, class Handler>
  void async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    ++impl_->pending;
    if (!ssl_) {
      impl_->socket.async_write_some(buffers, Completing(std::forward<Handler>(handler)));
      return;
    }
    coalesced_.clear();
    for (auto it = boost::asio::buffer_sequence_begin(buffers),
              end = boost::asio::buffer_sequence_end(buffers);
         it != end && coalesced_.size() < kTlsRecordBytes; ++it) {
      const size_t n = std::min(it->size(), kTlsRecordBytes - coalesced_.size());
      coalesced_.append(static_cast<const char*>(it->data()), n);
    }
    TlsWrite(std::forward<Handler>(handler));
  }

  // Reads the socket beneath TLS, if any: for bytes that are to be thrown away.
  template <class Handler>
  void async_read_some_raw(boost::asio::mutable_buffer buffer, Handler&& handler) {
    ++impl_->pending;
    impl_->socket.async_read_some(buffer, Completing(std::forward<Handler>(handler)));
  }

 private:
  static constexpr size_t kTlsRecordBytes = 16 * 1024;

  // What the timer's handler may outlive the stream with.
  struct Impl {
    explicit Impl(boost::asio::ip::tcp::socket s)
        : socket(std::move(s)), timer(socket.get_executor()) {}
    boost::asio::ip::tcp::socket socket;
    boost::asio::steady_timer timer;
    Clock::time_point deadline = Clock::time_point::max();
    Clock::time_point armed_for{};
    uint64_t timer_generation = 0;
    bool timer_armed = false;
    bool timed_out = false;
    int pending = 0;  // operations started and not yet completed
  };

  enum class Want { kDone, kRead, kWrite };

  static void Arm(const std::shared_ptr<Impl>& impl) {
    Impl& s = *impl;
    s.armed_for = s.deadline;
    s.timer_armed = true;
    const uint64_t generation = ++s.timer_generation;
    s.timer.expires_at(s.deadline);  // cancels the wait it replaces
    s.timer.async_wait([weak = std::weak_ptr<Impl>(impl), generation](error_code ec) {
      std::shared_ptr<Impl> impl = weak.lock();
      if (ec == boost::asio::error::operation_aborted || !impl) return;
      OnTimer(impl, generation);
    });
  }

  static void OnTimer(const std::shared_ptr<Impl>& impl, uint64_t generation) {
    Impl& s = *impl;
    if (generation != s.timer_generation) return;  // replaced by a closer deadline
    s.timer_armed = false;
    if (s.deadline == Clock::time_point::max() || !s.socket.is_open()) return;
    if (Clock::now() < s.deadline) {
      Arm(impl);  // the deadline moved later since the timer was set
      return;
    }
    if (s.pending > 0) {
      s.timed_out = true;
      error_code ignored;
      s.socket.cancel(ignored);
    }
  }

  template <class Buffer, class Buffers>
  static Buffer FirstBuffer(const Buffers& buffers) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers),
              end = boost::asio::buffer_sequence_end(buffers);
         it != end; ++it) {
      if (it->size() > 0) return Buffer(*it);
    }
    return Buffer();
  }

  // What a handshake completes with besides its error: nothing.
  struct NoValue {};

  // Ends an operation: `immediate` when still inside the call that started it (the handler is
  // then posted, never run from there).
  template <class Handler, class Value>
  void Complete(Handler&& handler, bool immediate, error_code ec, Value value) {
    Finish(ec);
    auto bound = [&] {
      if constexpr (std::is_same_v<Value, NoValue>) {
        return boost::beast::bind_front_handler(std::forward<Handler>(handler), ec);
      } else {
        return boost::beast::bind_front_handler(std::forward<Handler>(handler), ec, value);
      }
    }();
    if (immediate) {
      boost::asio::post(impl_->socket.get_executor(), std::move(bound));
    } else {
      std::move(bound)();
    }
  }
  // The completion handler of a socket operation of the stream's own: ends the operation.
  template <class Handler>
  auto Completing(Handler&& handler) {
    return [this, h = std::forward<Handler>(handler)](error_code ec, size_t n) mutable {
      Complete(std::move(h), false, ec, n);
    };
  }
  void Finish(error_code& ec) {
    --impl_->pending;
    if (ec == boost::asio::error::operation_aborted && impl_->timed_out) {
      ec = boost::beast::error::timeout;
    }
  }

  // The error for a failed OpenSSL call: OpenSSL's reason if it queued one, else the system's.
  static error_code SslError(int saved_errno) {
    const unsigned long code = ERR_get_error();
    ERR_clear_error();
    if (code != 0)
      return error_code(static_cast<int>(code), boost::asio::error::get_ssl_category());
    if (saved_errno != 0) return error_code(saved_errno, boost::system::system_category());
    return boost::asio::error::eof;
  }

  // What an SSL_* call's result `r` asks for next; `ec` is set when it failed for good.
  Want Classify(int r, error_code& ec) {
    const int saved_errno = errno;
    switch (SSL_get_error(ssl_.get(), r)) {
      case SSL_ERROR_WANT_READ:
        return Want::kRead;
      case SSL_ERROR_WANT_WRITE:
        return Want::kWrite;
      case SSL_ERROR_ZERO_RETURN:
        ec = boost::asio::error::eof;  // close_notify, or EOF (SSL_OP_IGNORE_UNEXPECTED_EOF)
        return Want::kDone;
      default:
        ec = SslError(saved_errno);
        return Want::kDone;
    }
  }

  // Runs `attempt` (Want(error_code&, Value&)) until it is done, waiting between tries for the
  // socket to be ready as it asks; then completes the operation with its error and value.
  template <class Value, class Attempt, class Handler>
  void Drive(Attempt attempt, Handler&& handler, bool immediate) {
    error_code ec;
    Value value{};
    Want want = Want::kDone;
    if (impl_->socket.is_open()) {
      want = attempt(ec, value);
    } else {
      ec = boost::asio::error::bad_descriptor;
    }
    if (want == Want::kDone) {
      Complete(std::forward<Handler>(handler), immediate, ec, value);
      return;
    }
    impl_->socket.async_wait(
        want == Want::kRead ? boost::asio::ip::tcp::socket::wait_read
                            : boost::asio::ip::tcp::socket::wait_write,
        [this, attempt, h = std::forward<Handler>(handler)](error_code ec) mutable {
          if (ec) {
            Complete(std::move(h), false, ec, Value{});
            return;
          }
          Drive<Value>(attempt, std::move(h), false);
        });
  }

  template <class Handler>
  void Detect(Handler&& handler) {
    const int fd = impl_->socket.native_handle();
    Drive<bool>(
        [fd](error_code& ec, bool& tls) {
          unsigned char first = 0;
          const ssize_t n = ::recv(fd, &first, 1, MSG_PEEK);
          if (n == 1) {
            tls = first == 0x16;
          } else if (n == 0) {
            ec = boost::asio::error::eof;
          } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            return Want::kRead;
          } else {
            ec = error_code(errno, boost::system::system_category());
          }
          return Want::kDone;
        },
        std::forward<Handler>(handler), true);
  }

  template <class Handler>
  void Handshake(Handler&& handler) {
    Drive<NoValue>(
        [this](error_code& ec, NoValue&) {
          ERR_clear_error();
          const int r = SSL_do_handshake(ssl_.get());
          return r == 1 ? Want::kDone : Classify(r, ec);
        },
        std::forward<Handler>(handler), true);
  }

  template <class Handler>
  void TlsRead(boost::asio::mutable_buffer buffer, Handler&& handler) {
    Drive<size_t>(
        [this, buffer](error_code& ec, size_t& n) {
          if (buffer.size() == 0) return Want::kDone;
          ERR_clear_error();
          const int r = SSL_read(ssl_.get(), buffer.data(),
                                 static_cast<int>(std::min<size_t>(buffer.size(), INT32_MAX)));
          if (r <= 0) return Classify(r, ec);
          n = static_cast<size_t>(r);
          return Want::kDone;
        },
        std::forward<Handler>(handler), true);
  }

  // Writes coalesced_ as one record (a retry passes OpenSSL the same buffer, as it requires).
  template <class Handler>
  void TlsWrite(Handler&& handler) {
    Drive<size_t>(
        [this](error_code& ec, size_t& n) {
          if (coalesced_.empty()) return Want::kDone;
          ERR_clear_error();
          const int r =
              SSL_write(ssl_.get(), coalesced_.data(), static_cast<int>(coalesced_.size()));
          if (r <= 0) return Classify(r, ec);
          n = static_cast<size_t>(r);
          return Want::kDone;
        },
        std::forward<Handler>(handler), true);
  }

  std::shared_ptr<Impl> impl_;
  SSL_CTX* const tls_ctx_;
  SslPtr ssl_;             // after the handshake began; uses the socket's descriptor
  std::string coalesced_;  // the TLS write in flight
};

}  // namespace kt::server::internal
