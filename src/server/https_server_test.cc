// Tests of the HTTP server over TLS (HttpServerOptions::tls), with a blocking OpenSSL client on
// loopback: certificates from pki.h, client certificates as the handler sees them, responses
// larger than a TLS record, chunked streams, and what a plain-HTTP client gets.
//
// Every read has a deadline (SO_RCVTIMEO), so no test waits forever.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "server/http.h"
#include "server/pki.h"

namespace kt::server {
namespace {

using SslCtxPtr = std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)>;
using SslPtr = std::unique_ptr<SSL, decltype(&SSL_free)>;

// /big: 100,000 bytes of a known pattern. /who: what the handler saw of the client certificate.
// /stream: three chunks, then the end.
class Handler : public HttpHandler {
 public:
  void Handle(HttpRequest req, std::shared_ptr<HttpResponder> r) override {
    if (req.target == "/big") {
      std::string body;
      for (int i = 0; body.size() < 100000; ++i) body += std::to_string(i) + ",";
      body.resize(100000);
      r->Respond(200, "text/plain", MakeBody(std::move(body)));
    } else if (req.target == "/who") {
      std::string who = req.tls ? "tls " : "plain ";
      if (const ClientCertificate* c = req.client_certificate.get()) {
        who += c->verified ? "verified " : "unverified ";
        who += c->common_name;
        for (const std::string& o : c->organizations) who += " " + o;
      } else {
        who += "none";
      }
      r->Respond(200, "text/plain", MakeBody(who));
    } else if (req.target == "/stream") {
      std::shared_ptr<HttpStream> s = r->StartStream(200, "application/json");
      for (const char* event : {"{\"n\":1}\n", "{\"n\":2}\n", "{\"n\":3}\n"}) {
        s->Write({MakeBody(event)});
      }
      s->Close();
    } else {
      r->Respond(404, "text/plain", MakeBody("no"));
    }
  }
};

class HttpsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto now = std::chrono::system_clock::now();
    Result<CertKeyPem> ca = NewCertificateAuthority("test-ca", now);
    ASSERT_TRUE(ca) << ca.error().message();
    ca_ = *ca;
    CertificateRequest serving;
    serving.common_name = "kube-apiserver";
    serving.dns_names = {"localhost"};
    serving.ip_addresses = {"127.0.0.1"};
    serving.server = true;
    Result<CertKeyPem> leaf = IssueCertificate(ca_, serving, now);
    ASSERT_TRUE(leaf) << leaf.error().message();
    CertificateRequest admin;
    admin.common_name = "jane";
    admin.organizations = {"system:masters", "ops"};
    admin.client = true;
    Result<CertKeyPem> client = IssueCertificate(ca_, admin, now);
    ASSERT_TRUE(client);
    client_ = *client;

    HttpServerOptions o;
    o.listen = "127.0.0.1:0";
    o.tls = HttpTlsOptions{leaf->cert_pem, leaf->key_pem, ca_.cert_pem};
    auto server = StartHttpServer(o, &handler_);
    ASSERT_TRUE(server) << server.error().message();
    server_ = std::move(*server);
  }

  int Connect() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    return fd;
  }

  // A TLS client that trusts the test CA and checks the name "localhost"; with `cert`, it
  // presents that client certificate; `suites` are the TLS 1.3 suites it offers, in order.
  SslPtr Dial(const CertKeyPem* cert = nullptr, int max_version = 0, const char* suites = nullptr) {
    SslCtxPtr ctx(SSL_CTX_new(TLS_client_method()), &SSL_CTX_free);
    if (suites != nullptr) SSL_CTX_set_ciphersuites(ctx.get(), suites);
    X509_STORE* store = SSL_CTX_get_cert_store(ctx.get());
    AddPem(store, ca_.cert_pem);
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
    if (max_version != 0) SSL_CTX_set_max_proto_version(ctx.get(), max_version);
    if (cert != nullptr) UseCert(ctx.get(), *cert);
    SslPtr ssl(SSL_new(ctx.get()), &SSL_free);
    SSL_set1_host(ssl.get(), "localhost");
    SSL_set_tlsext_host_name(ssl.get(), "localhost");
    SSL_set_fd(ssl.get(), Connect());
    if (SSL_connect(ssl.get()) != 1) return SslPtr(nullptr, &SSL_free);
    return ssl;
  }

  static void AddPem(X509_STORE* store, const std::string& pem) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    X509_STORE_add_cert(store, x);
    X509_free(x);
    BIO_free(bio);
  }

  static void UseCert(SSL_CTX* ctx, const CertKeyPem& p) {
    BIO* bio = BIO_new_mem_buf(p.cert_pem.data(), static_cast<int>(p.cert_pem.size()));
    X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    SSL_CTX_use_certificate(ctx, x);
    X509_free(x);
    BIO_free(bio);
    bio = BIO_new_mem_buf(p.key_pem.data(), static_cast<int>(p.key_pem.size()));
    EVP_PKEY* k = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    SSL_CTX_use_PrivateKey(ctx, k);
    EVP_PKEY_free(k);
    BIO_free(bio);
  }

  // Sends a GET; reads the head and its Content-Length of body, or until the peer closes.
  static std::string Get(SSL* ssl, std::string_view path, bool close = false) {
    std::string req = "GET " + std::string(path) + " HTTP/1.1\r\nHost: localhost\r\n";
    if (close) req += "Connection: close\r\n";
    req += "\r\n";
    EXPECT_EQ(SSL_write(ssl, req.data(), static_cast<int>(req.size())),
              static_cast<int>(req.size()));
    std::string in;
    char buf[16384];
    for (;;) {
      const size_t head_end = in.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const size_t cl = in.find("Content-Length: ");
        if (cl != std::string::npos && cl < head_end) {
          const size_t want = std::stoul(in.substr(cl + 16));
          if (in.size() >= head_end + 4 + want) return in.substr(0, head_end + 4 + want);
        }
      }
      const int n = SSL_read(ssl, buf, sizeof buf);
      if (n <= 0) return in;
      in.append(buf, static_cast<size_t>(n));
    }
  }

  static std::string Body(const std::string& response) {
    const size_t at = response.find("\r\n\r\n");
    return at == std::string::npos ? "" : response.substr(at + 4);
  }

  Handler handler_;
  CertKeyPem ca_;
  CertKeyPem client_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpsServerTest, ResponsesLargerThanARecordArriveWholeOnAKeptAliveConnection) {
  SslPtr ssl = Dial();
  ASSERT_TRUE(ssl);
  for (int i = 0; i < 2; ++i) {
    const std::string r = Get(ssl.get(), "/big");
    ASSERT_EQ(Body(r).size(), 100000u) << r.substr(0, 200);
    EXPECT_EQ(Body(r).substr(0, 8), "0,1,2,3,");
  }
}

TEST_F(HttpsServerTest, TheHandlerSeesTheClientCertificate) {
  SslPtr with = Dial(&client_);
  ASSERT_TRUE(with);
  EXPECT_EQ(Body(Get(with.get(), "/who")), "tls verified jane system:masters ops");

  SslPtr without = Dial();
  ASSERT_TRUE(without);
  EXPECT_EQ(Body(Get(without.get(), "/who")), "tls none");

  // A certificate of another CA does not end the handshake; it is reported unverified, for the
  // authenticator to refuse (kube-apiserver's tls.RequestClientCert).
  Result<CertKeyPem> other_ca = NewCertificateAuthority("other", std::chrono::system_clock::now());
  ASSERT_TRUE(other_ca);
  CertificateRequest req;
  req.common_name = "mallory";
  req.organizations = {"system:masters"};
  req.client = true;
  Result<CertKeyPem> forged = IssueCertificate(*other_ca, req, std::chrono::system_clock::now());
  ASSERT_TRUE(forged);
  SslPtr bad = Dial(&*forged);
  ASSERT_TRUE(bad);
  EXPECT_EQ(Body(Get(bad.get(), "/who")), "tls unverified mallory system:masters");
}

TEST_F(HttpsServerTest, StreamsAreChunkedOverTls) {
  SslPtr ssl = Dial();
  ASSERT_TRUE(ssl);
  const std::string r = Get(ssl.get(), "/stream", /*close=*/true);
  EXPECT_NE(r.find("Transfer-Encoding: chunked"), std::string::npos) << r;
  EXPECT_NE(r.find("8\r\n{\"n\":1}\n\r\n8\r\n{\"n\":2}\n\r\n8\r\n{\"n\":3}\n\r\n0\r\n\r\n"),
            std::string::npos)
      << r;
}

TEST_F(HttpsServerTest, PlainHttpGetsGosAnswer) {
  const int fd = Connect();
  const std::string req = "GET /who HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::write(fd, req.data(), req.size()), static_cast<ssize_t>(req.size()));
  std::string in;
  char buf[512];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) in.append(buf, static_cast<size_t>(n));
  ::close(fd);
  EXPECT_EQ(in,
            "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n");
}

TEST_F(HttpsServerTest, Tls13NegotiatesGosSuiteOrder) {
  // OpenSSL's client lists AES-256-GCM first; the server picks AES-128-GCM, as Go's does.
  SslPtr aes = Dial();
  ASSERT_TRUE(aes);
  EXPECT_STREQ(SSL_get_version(aes.get()), "TLSv1.3");
  EXPECT_STREQ(SSL_CIPHER_get_name(SSL_get_current_cipher(aes.get())), "TLS_AES_128_GCM_SHA256");

  // A client that puts ChaCha20-Poly1305 first (one without AES instructions) gets it.
  SslPtr chacha = Dial(nullptr, 0, "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256");
  ASSERT_TRUE(chacha);
  EXPECT_STREQ(SSL_CIPHER_get_name(SSL_get_current_cipher(chacha.get())),
               "TLS_CHACHA20_POLY1305_SHA256");
  EXPECT_EQ(Body(Get(chacha.get(), "/who")), "tls none");
}

TEST_F(HttpsServerTest, Tls11IsRefused) {
  EXPECT_FALSE(Dial(nullptr, TLS1_1_VERSION));
  EXPECT_TRUE(Dial(nullptr, TLS1_2_VERSION));
  ERR_clear_error();
}

TEST(HttpsServerStartTest, UnusableCertificatesAreErrorsNamingWhat) {
  const auto now = std::chrono::system_clock::now();
  Result<CertKeyPem> ca = NewCertificateAuthority("ca", now);
  ASSERT_TRUE(ca);
  Result<CertKeyPem> other = NewCertificateAuthority("other", now);
  ASSERT_TRUE(other);
  Handler handler;
  struct Row {
    HttpTlsOptions tls;
    std::string want;
  } rows[] = {
      {{"not a pem", ca->key_pem, ""}, "the TLS serving certificate does not load"},
      {{ca->cert_pem, "not a key", ""}, "the TLS private key does not load"},
      {{ca->cert_pem, other->key_pem, ""},
       "the TLS private key does not load: key values mismatch"},
      {{ca->cert_pem, ca->key_pem, "junk"}, "the client CA file holds no PEM certificate"},
  };
  for (const Row& row : rows) {
    HttpServerOptions o;
    o.listen = "127.0.0.1:0";
    o.tls = row.tls;
    auto server = StartHttpServer(o, &handler);
    ASSERT_FALSE(server) << row.want;
    EXPECT_EQ(server.error().message().substr(0, row.want.size()), row.want);
  }
}

}  // namespace
}  // namespace kt::server
