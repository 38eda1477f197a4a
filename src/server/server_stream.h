// The byte stream under one HTTP connection of the API server: plain TCP, or TLS over TCP.
// Internal to http_server.cc (it pulls in Beast, Asio and OpenSSL headers; keep it out of
// anything widely included).
//
// One type for both, so that the connection's state machine is written once: it satisfies
// Beast's AsyncReadStream and AsyncWriteStream, and forwards the timeouts and the socket of the
// TCP layer underneath.
//
//   ServerStream s(std::move(socket), tls_context);   // tls_context null: plain TCP
//   s.expires_after(32s);
//   http::async_read_header(s, buffer, parser, handler);
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include "core/status.h"

namespace kt::server::internal {

class ServerStream {
 public:
  using executor_type = boost::beast::tcp_stream::executor_type;
  using TlsStream = boost::asio::ssl::stream<boost::beast::tcp_stream>;

  // `tls` null: plain TCP. Otherwise the stream speaks TLS once `tls_stream()` has completed its
  // server handshake; `tls` must outlive the stream.
  ServerStream(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context* tls) {
    if (tls == nullptr) {
      plain_.emplace(std::move(socket));
    } else {
      tls_.emplace(std::move(socket), *tls);
    }
  }

  bool is_tls() const { return tls_.has_value(); }
  TlsStream& tls_stream() { return *tls_; }

  // The TCP layer: its timeouts bound every operation of the layers above.
  boost::beast::tcp_stream& tcp() { return tls_ ? tls_->next_layer() : *plain_; }

  executor_type get_executor() { return tcp().get_executor(); }
  boost::asio::ip::tcp::socket& socket() { return tcp().socket(); }
  template <class Duration>
  void expires_after(Duration d) {
    tcp().expires_after(d);
  }
  void expires_never() { tcp().expires_never(); }
  void close() { tcp().close(); }

  template <class MutableBuffers, class Handler>
  void async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_read_some(buffers, std::forward<Handler>(handler));
    } else {
      plain_->async_read_some(buffers, std::forward<Handler>(handler));
    }
  }

  // Over TLS each write is one record and one send: leading small buffers (an HTTP head and its
  // body, a chunk's size line, event and CRLF) are first copied into one, up to a record's size.
  // At most one write is in flight per stream (async_write's contract), so one buffer serves.
  template <class ConstBuffers, class Handler>
  void async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    if (!tls_) {
      plain_->async_write_some(buffers, std::forward<Handler>(handler));
      return;
    }
    coalesced_.clear();
    for (auto it = boost::asio::buffer_sequence_begin(buffers),
              end = boost::asio::buffer_sequence_end(buffers);
         it != end && coalesced_.size() < kTlsRecordBytes; ++it) {
      const size_t n = std::min(it->size(), kTlsRecordBytes - coalesced_.size());
      coalesced_.append(static_cast<const char*>(it->data()), n);
    }
    tls_->async_write_some(boost::asio::buffer(coalesced_), std::forward<Handler>(handler));
  }

 private:
  static constexpr size_t kTlsRecordBytes = 16 * 1024;

  std::optional<boost::beast::tcp_stream> plain_;
  std::string coalesced_;
  std::optional<TlsStream> tls_;
};

}  // namespace kt::server::internal
