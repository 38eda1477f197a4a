// Tests of ServerStream, the byte stream under the HTTP server's connections: its timeouts,
// TLS detection that consumes nothing, and TLS writes that outgrow the socket's buffers (so
// OpenSSL has to wait for room) while a read is pending, checked byte for byte by a blocking
// OpenSSL client on loopback.
//
// Every wait has a deadline, so no test waits forever.

#include "server/server_stream.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <array>
#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "server/pki.h"

namespace kt::server::internal {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

constexpr auto kDeadline = std::chrono::seconds(10);

// A connected pair on loopback: `server` for a ServerStream, `client` a blocking descriptor.
struct Pair {
  explicit Pair(asio::io_context& io) : server(io), client(io) {
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    client.connect(acceptor.local_endpoint());
    acceptor.accept(server);
    timeval tv{static_cast<time_t>(kDeadline.count()), 0};
    setsockopt(client.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(client.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }
  tcp::socket server;
  tcp::socket client;
};

// Runs `io` until `done` holds or the deadline passes; false on the deadline.
template <class Done>
bool RunUntil(asio::io_context& io, Done done) {
  const auto end = std::chrono::steady_clock::now() + kDeadline;
  io.restart();
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    io.run_for(std::chrono::milliseconds(10));
    io.restart();
  }
  return true;
}

SslCtxPtr ServerContext() {
  auto ca = NewCertificateAuthority("stream-test", std::chrono::system_clock::now());
  EXPECT_TRUE(ca);
  SslCtxPtr ctx(SSL_CTX_new(TLS_server_method()));
  BioPtr cert_bio(BIO_new_mem_buf(ca->cert_pem.data(), static_cast<int>(ca->cert_pem.size())));
  X509Ptr cert(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  BioPtr key_bio(BIO_new_mem_buf(ca->key_pem.data(), static_cast<int>(ca->key_pem.size())));
  KeyPtr key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  EXPECT_EQ(SSL_CTX_use_certificate(ctx.get(), cert.get()), 1);
  EXPECT_EQ(SSL_CTX_use_PrivateKey(ctx.get(), key.get()), 1);
  SSL_CTX_set_options(ctx.get(), SSL_OP_IGNORE_UNEXPECTED_EOF);
  return ctx;
}

TEST(ServerStreamTest, APendingPlainReadFailsWithTimeoutAtItsDeadline) {
  asio::io_context io;
  Pair p(io);
  ServerStream s(std::move(p.server), nullptr);
  s.expires_after(std::chrono::milliseconds(50));
  char buf[16];
  std::optional<error_code> got;
  const auto start = std::chrono::steady_clock::now();
  s.async_read_some(asio::buffer(buf), [&](error_code ec, size_t) { got = ec; });
  ASSERT_TRUE(RunUntil(io, [&] { return got.has_value(); }));
  EXPECT_EQ(*got, boost::beast::error::timeout);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(50));
}

TEST(ServerStreamTest, ALaterDeadlineKeepsAReadAliveAndExpiresNeverDisarms) {
  asio::io_context io;
  Pair p(io);
  ServerStream s(std::move(p.server), nullptr);
  s.expires_after(std::chrono::milliseconds(20));
  s.expires_after(std::chrono::milliseconds(200));  // moved later: the early timer re-arms
  s.expires_never();
  char buf[16];
  std::optional<error_code> got;
  size_t n = 0;
  s.async_read_some(asio::buffer(buf), [&](error_code ec, size_t k) {
    got = ec;
    n = k;
  });
  // Past both deadlines nothing has failed; then the client's bytes arrive.
  io.run_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(got.has_value());
  ASSERT_EQ(::send(p.client.native_handle(), "hi", 2, 0), 2);
  ASSERT_TRUE(RunUntil(io, [&] { return got.has_value(); }));
  EXPECT_FALSE(*got) << got->message();
  EXPECT_EQ(std::string(buf, n), "hi");
}

TEST(ServerStreamTest, DetectingPlainHttpConsumesNothing) {
  asio::io_context io;
  Pair p(io);
  SslCtxPtr ctx = ServerContext();
  ServerStream s(std::move(p.server), ctx.get());
  ASSERT_EQ(::send(p.client.native_handle(), "GET / HTTP/1.1\r\n", 16, 0), 16);
  std::optional<bool> tls;
  s.async_detect_tls([&](error_code ec, bool is_tls) {
    EXPECT_FALSE(ec) << ec.message();
    tls = is_tls;
  });
  ASSERT_TRUE(RunUntil(io, [&] { return tls.has_value(); }));
  EXPECT_FALSE(*tls);
  // Before a handshake the stream's reads are the socket's: the request is all there.
  char buf[16];
  size_t got = 0;
  std::optional<error_code> done;
  asio::async_read(s, asio::buffer(buf), [&](error_code ec, size_t n) {
    done = ec;
    got = n;
  });
  ASSERT_TRUE(RunUntil(io, [&] { return done.has_value(); }));
  EXPECT_EQ(std::string(buf, got), "GET / HTTP/1.1\r\n");
}

TEST(ServerStreamTest, DetectingAClientThatClosesIsEof) {
  asio::io_context io;
  Pair p(io);
  SslCtxPtr ctx = ServerContext();
  ServerStream s(std::move(p.server), ctx.get());
  p.client.close();
  std::optional<error_code> got;
  s.async_detect_tls([&](error_code ec, bool) { got = ec; });
  ASSERT_TRUE(RunUntil(io, [&] { return got.has_value(); }));
  EXPECT_EQ(*got, asio::error::eof);
}

// The client: handshake, send `request`, then (once `go` is ready) read everything until the
// server closes.
std::string TlsClient(int fd, const std::string& request, std::shared_future<void> go) {
  SslCtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  SslPtr ssl(SSL_new(ctx.get()));
  SSL_set_fd(ssl.get(), fd);
  if (SSL_connect(ssl.get()) != 1) return "handshake failed";
  if (SSL_write(ssl.get(), request.data(), static_cast<int>(request.size())) !=
      static_cast<int>(request.size())) {
    return "write failed";
  }
  if (go.wait_for(kDeadline) != std::future_status::ready) return "never told to read";
  std::string got;
  char buf[4096];
  for (;;) {
    const int n = SSL_read(ssl.get(), buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

TEST(ServerStreamTest, TlsWritesLargerThanTheSocketBuffersArriveWhole) {
  asio::io_context io;
  Pair p(io);
  // Fixed buffers both ways (no autotuning), much smaller than what is written.
  const int buffer_bytes = 64 * 1024;
  setsockopt(p.server.native_handle(), SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof buffer_bytes);
  setsockopt(p.client.native_handle(), SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof buffer_bytes);
  SslCtxPtr ctx = ServerContext();
  ServerStream s(std::move(p.server), ctx.get());
  std::promise<void> go;
  auto client = std::async(std::launch::async, TlsClient, p.client.native_handle(), "ping",
                           go.get_future().share());

  std::optional<bool> tls;
  s.expires_after(kDeadline);
  s.async_detect_tls([&](error_code ec, bool is_tls) {
    EXPECT_FALSE(ec) << ec.message();
    tls = is_tls;
  });
  ASSERT_TRUE(RunUntil(io, [&] { return tls.has_value(); }));
  ASSERT_TRUE(*tls);
  std::optional<error_code> shook;
  s.async_handshake([&](error_code ec) { shook = ec; });
  ASSERT_TRUE(RunUntil(io, [&] { return shook.has_value(); }));
  ASSERT_FALSE(*shook) << shook->message();
  ASSERT_NE(s.ssl(), nullptr);

  char request[4];
  std::optional<error_code> read;
  asio::async_read(s, asio::buffer(request), [&](error_code ec, size_t) { read = ec; });
  ASSERT_TRUE(RunUntil(io, [&] { return read.has_value(); }));
  ASSERT_FALSE(*read) << read->message();
  EXPECT_EQ(std::string(request, 4), "ping");

  // A read stays pending (as a watch's disconnect check does) while 1 MB goes out in pieces.
  s.expires_never();
  char scratch[64];
  std::optional<error_code> watch;
  s.async_read_some(asio::buffer(scratch), [&](error_code ec, size_t) { watch = ec; });
  std::string head = "head:";
  std::string body;
  for (int i = 0; body.size() < (1 << 20); ++i) body += std::to_string(i) + ",";
  std::array<asio::const_buffer, 2> out = {asio::buffer(head), asio::buffer(body)};
  std::optional<error_code> wrote;
  size_t wrote_bytes = 0;
  asio::async_write(s, out, [&](error_code ec, size_t n) {
    wrote = ec;
    wrote_bytes = n;
  });
  // The client reads nothing yet: the socket fills and the write has to wait for room.
  const int fd = s.socket().native_handle();
  ASSERT_TRUE(RunUntil(io, [&] {
    pollfd pf{fd, POLLOUT, 0};
    return wrote.has_value() || poll(&pf, 1, 0) == 0;
  }));
  EXPECT_FALSE(wrote.has_value());  // 1 MB does not fit in both sides' buffers
  go.set_value();
  ASSERT_TRUE(RunUntil(io, [&] { return wrote.has_value(); }));
  ASSERT_FALSE(*wrote) << wrote->message();
  EXPECT_EQ(wrote_bytes, head.size() + body.size());
  EXPECT_FALSE(watch.has_value());
  // Closing ends the pending read and the client's stream.
  s.socket().shutdown(tcp::socket::shutdown_both);
  s.close();
  ASSERT_TRUE(RunUntil(io, [&] { return watch.has_value(); }));
  EXPECT_EQ(*watch, asio::error::operation_aborted);
  ASSERT_EQ(client.wait_for(kDeadline), std::future_status::ready);
  const std::string got = client.get();
  EXPECT_EQ(got.size(), head.size() + body.size());
  EXPECT_TRUE(got == head + body) << got.substr(0, 80);
}

TEST(ServerStreamTest, APendingTlsReadFailsWithTimeoutAtItsDeadline) {
  asio::io_context io;
  Pair p(io);
  SslCtxPtr ctx = ServerContext();
  ServerStream s(std::move(p.server), ctx.get());
  // The client shakes hands, then sends nothing until the server gives up.
  std::promise<void> go;
  go.set_value();
  auto client = std::async(std::launch::async, TlsClient, p.client.native_handle(), "",
                           go.get_future().share());
  std::optional<error_code> shook;
  s.async_handshake([&](error_code ec) { shook = ec; });
  ASSERT_TRUE(RunUntil(io, [&] { return shook.has_value(); }));
  ASSERT_FALSE(*shook) << shook->message();
  s.expires_after(std::chrono::milliseconds(50));
  char buf[16];
  std::optional<error_code> got;
  s.async_read_some(asio::buffer(buf), [&](error_code ec, size_t) { got = ec; });
  ASSERT_TRUE(RunUntil(io, [&] { return got.has_value(); }));
  EXPECT_EQ(*got, boost::beast::error::timeout);
  s.close();
  ASSERT_EQ(client.wait_for(kDeadline), std::future_status::ready);
  EXPECT_EQ(client.get(), "");
}

TEST(ServerStreamTest, AHandshakeWithAClientThatSpeaksGarbageFailsNamingWhy) {
  asio::io_context io;
  Pair p(io);
  SslCtxPtr ctx = ServerContext();
  ServerStream s(std::move(p.server), ctx.get());
  // A TLS record header of type handshake, then nonsense.
  const char junk[] = "\x16\x03\x01\x00\x05hello";
  ASSERT_GT(::send(p.client.native_handle(), junk, sizeof junk - 1, 0), 0);
  std::optional<error_code> shook;
  s.async_handshake([&](error_code ec) { shook = ec; });
  ASSERT_TRUE(RunUntil(io, [&] { return shook.has_value(); }));
  ASSERT_TRUE(*shook);
  EXPECT_EQ(shook->category(), asio::error::get_ssl_category()) << shook->message();
  EXPECT_FALSE(shook->message().empty());
}

}  // namespace
}  // namespace kt::server::internal
