#include "server/pki.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "server/authn.h"
#include "server/internal/openssl_ptr.h"
#include "store/store_test_util.h"

namespace kt::server {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::system_clock;
using store::testing::TempDir;

// --- OpenSSL helpers for checking what a client would check ---------------------------------

using internal::KeyPtr;
using internal::SslCtxPtr;
using internal::SslPtr;
using internal::X509Ptr;

X509Ptr Cert(const std::string& pem) {
  internal::BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return X509Ptr(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

KeyPtr Key(const std::string& pem) {
  internal::BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return KeyPtr(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
}

constexpr int kServer = X509_PURPOSE_SSL_SERVER;
constexpr int kClient = X509_PURPOSE_SSL_CLIENT;

// X509_verify_cert of `leaf` against `ca` alone, for `purpose` (kServer, kClient),
// optionally for `host`: X509_V_OK or the reason it fails.
int VerifyChain(const std::string& ca_pem, const std::string& leaf_pem, int purpose,
                const char* host = nullptr) {
  X509Ptr ca = Cert(ca_pem);
  X509Ptr leaf = Cert(leaf_pem);
  internal::X509StorePtr store(X509_STORE_new());
  X509_STORE_add_cert(store.get(), ca.get());
  internal::X509StoreCtxPtr ctx(X509_STORE_CTX_new());
  X509_STORE_CTX_init(ctx.get(), store.get(), leaf.get(), nullptr);
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  X509_VERIFY_PARAM_set_purpose(param, purpose);
  if (host != nullptr) X509_VERIFY_PARAM_set1_host(param, host, 0);
  if (X509_verify_cert(ctx.get()) == 1) return X509_V_OK;
  return X509_STORE_CTX_get_error(ctx.get());
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

unsigned Mode(const fs::path& path) {
  struct stat st = {};
  ::stat(path.c_str(), &st);
  return st.st_mode & 07777;
}

std::string HostName() {
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

CertKeyPem NewCa(Clock::time_point now = Clock::now()) {
  Result<CertKeyPem> ca = NewCertificateAuthority("test-ca", now);
  EXPECT_TRUE(ca) << ca.error().ToString();
  return ca ? *ca : CertKeyPem{};
}

// --- Certificates -----------------------------------------------------------------------------

TEST(PkiTest, CertificateAuthorityIsAValidSelfSignedCa) {
  Clock::time_point now = Clock::now();
  CertKeyPem ca = NewCa(now);
  X509Ptr cert = Cert(ca.cert_pem);
  ASSERT_TRUE(cert);
  EXPECT_EQ(X509_check_ca(cert.get()), 1);
  // A chain of the CA alone verifies: self-signed, CA:TRUE, keyCertSign.
  EXPECT_EQ(VerifyChain(ca.cert_pem, ca.cert_pem, X509_PURPOSE_ANY), X509_V_OK);
  EXPECT_EQ(X509_get_extension_flags(cert.get()) & EXFLAG_CA, EXFLAG_CA);
  EXPECT_EQ(X509_get_key_usage(cert.get()),
            static_cast<uint32_t>(KU_KEY_CERT_SIGN | KU_CRL_SIGN | KU_DIGITAL_SIGNATURE));
  EXPECT_NE(X509_get0_subject_key_id(cert.get()), nullptr);
  // The key is ECDSA P-256.
  KeyPtr key = Key(ca.key_pem);
  ASSERT_TRUE(key);
  EXPECT_EQ(EVP_PKEY_get_base_id(key.get()), EVP_PKEY_EC);
  EXPECT_EQ(EVP_PKEY_get_bits(key.get()), 256);
  EXPECT_EQ(X509_check_private_key(cert.get(), key.get()), 1);
  // The serial is positive and at most 128 bits.
  BIGNUM* serial = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert.get()), nullptr);
  EXPECT_FALSE(BN_is_negative(serial));
  EXPECT_FALSE(BN_is_zero(serial));
  EXPECT_LE(BN_num_bits(serial), 128);
  BN_free(serial);
  // Valid for ten years.
  int days = 0, seconds = 0;
  ASN1_TIME_diff(&days, &seconds, X509_get0_notBefore(cert.get()), X509_get0_notAfter(cert.get()));
  EXPECT_GE(days, 3650);
  EXPECT_LE(days, 3653);
}

TEST(PkiTest, ServingCertificateVerifiesForEachSanAndNoOtherName) {
  CertKeyPem ca = NewCa();
  CertificateRequest req;
  req.common_name = "kube-apiserver";
  req.dns_names = {"localhost", "api.example.com"};
  req.ip_addresses = {"127.0.0.1", "::1", "10.0.0.5", "fd00::5"};
  req.server = true;
  Result<CertKeyPem> leaf = IssueCertificate(ca, req, Clock::now());
  ASSERT_TRUE(leaf) << leaf.error().ToString();

  EXPECT_EQ(VerifyChain(ca.cert_pem, leaf->cert_pem, kServer), X509_V_OK);
  X509Ptr cert = Cert(leaf->cert_pem);
  for (const std::string& dns : req.dns_names) {
    EXPECT_EQ(X509_check_host(cert.get(), dns.c_str(), dns.size(), 0, nullptr), 1) << dns;
    EXPECT_EQ(VerifyChain(ca.cert_pem, leaf->cert_pem, kServer, dns.c_str()), X509_V_OK);
  }
  for (const std::string& ip : req.ip_addresses) {
    EXPECT_EQ(X509_check_ip_asc(cert.get(), ip.c_str(), 0), 1) << ip;
  }
  EXPECT_EQ(X509_check_host(cert.get(), "evil.example.com", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_check_ip_asc(cert.get(), "10.0.0.6", 0), 0);
  EXPECT_EQ(VerifyChain(ca.cert_pem, leaf->cert_pem, kServer, "evil.example.com"),
            X509_V_ERR_HOSTNAME_MISMATCH);
  // A server certificate is not a client certificate, and not a CA.
  EXPECT_EQ(VerifyChain(ca.cert_pem, leaf->cert_pem, kClient), X509_V_ERR_INVALID_PURPOSE);
  EXPECT_EQ(X509_check_ca(cert.get()), 0);
  // Signed by the CA, which another CA is not.
  EXPECT_EQ(VerifyChain(NewCa().cert_pem, leaf->cert_pem, kServer),
            X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
}

TEST(PkiTest, ClientCertificateCarriesUserAndGroups) {
  CertKeyPem ca = NewCa();
  CertificateRequest req;
  req.common_name = "jane";
  req.organizations = {"dev", "ops"};
  req.client = true;
  Result<CertKeyPem> leaf = IssueCertificate(ca, req, Clock::now());
  ASSERT_TRUE(leaf) << leaf.error().ToString();
  EXPECT_EQ(VerifyChain(ca.cert_pem, leaf->cert_pem, kClient), X509_V_OK);
  EXPECT_EQ(VerifyChain(ca.cert_pem, leaf->cert_pem, kServer), X509_V_ERR_INVALID_PURPOSE);
  // The API server reads the user from the subject: CN, then each O in order.
  std::optional<UserInfo> user = UserFromCertificate(Cert(leaf->cert_pem).get());
  ASSERT_TRUE(user);
  EXPECT_EQ(user->name, "jane");
  EXPECT_EQ(user->groups, (std::vector<std::string>{"dev", "ops"}));
}

TEST(PkiTest, ValidityIsBackdatedAndBoundedByTheCa) {
  Clock::time_point now = Clock::now();
  CertKeyPem ca = NewCa(now);
  CertificateRequest req{.common_name = "x", .server = true, .validity = std::chrono::hours(48)};
  Result<CertKeyPem> leaf = IssueCertificate(ca, req, now);
  ASSERT_TRUE(leaf);
  X509Ptr cert = Cert(leaf->cert_pem);
  const time_t t = Clock::to_time_t(now);
  // notBefore = now - 1 minute: a client a few seconds behind accepts it.
  time_t a_bit_earlier = t - 30;
  EXPECT_EQ(X509_cmp_time(X509_get0_notBefore(cert.get()), &a_bit_earlier), -1);
  time_t two_minutes_earlier = t - 120;
  EXPECT_EQ(X509_cmp_time(X509_get0_notBefore(cert.get()), &two_minutes_earlier), 1);
  int days = 0, seconds = 0;
  ASN1_TIME_diff(&days, &seconds, X509_get0_notBefore(cert.get()), X509_get0_notAfter(cert.get()));
  EXPECT_EQ(days, 2);
  // A leaf never outlives its CA.
  req.validity = std::chrono::hours(24 * 365 * 20);
  leaf = IssueCertificate(ca, req, now);
  ASSERT_TRUE(leaf);
  EXPECT_EQ(ASN1_TIME_compare(X509_get0_notAfter(Cert(leaf->cert_pem).get()),
                              X509_get0_notAfter(Cert(ca.cert_pem).get())),
            0);
}

TEST(PkiTest, BadIpAddressIsAnErrorNamingIt) {
  CertKeyPem ca = NewCa();
  CertificateRequest req{.common_name = "x", .ip_addresses = {"10.0.0.1", "10.0.0.300"}};
  Result<CertKeyPem> leaf = IssueCertificate(ca, req, Clock::now());
  ASSERT_FALSE(leaf);
  EXPECT_EQ(leaf.error().code(), StatusCode::kBadRequest);
  EXPECT_NE(leaf.error().message().find("\"10.0.0.300\""), std::string::npos)
      << leaf.error().message();
}

TEST(PkiTest, RequiredServingSans) {
  PkiOptions options{.extra_sans = {"api.example.com", "10.1.2.3", "LOCALHOST", "0::1"},
                     .listen_host = "192.168.1.10"};
  ServingSans sans = RequiredServingSans(options);
  EXPECT_EQ(sans.ip_addresses,
            (std::vector<std::string>{"127.0.0.1", "::1", "192.168.1.10", "10.1.2.3"}));
  std::vector<std::string> dns = {"localhost"};
  if (HostName() != "localhost") dns.push_back(HostName());
  dns.push_back("api.example.com");
  EXPECT_EQ(sans.dns_names, dns);
  // Wildcard listen addresses are not names a client connects to.
  for (const char* wildcard : {"0.0.0.0", "::", "[::]", ""}) {
    EXPECT_EQ(RequiredServingSans({.listen_host = wildcard}).ip_addresses,
              (std::vector<std::string>{"127.0.0.1", "::1"}))
        << wildcard;
  }
  EXPECT_EQ(RequiredServingSans({.listen_host = "[fd00::1]"}).ip_addresses,
            (std::vector<std::string>{"127.0.0.1", "::1", "fd00::1"}));
}

// --- EnsureServingPki -------------------------------------------------------------------------

class EnsureServingPkiTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(tmp_.ok()); }

  fs::path dir() const { return fs::path(tmp_.path()) / "pki"; }
  std::string Read(const char* name) const { return Slurp(dir() / name); }

  ServingPki Ensure(const PkiOptions& options) {
    Result<ServingPki> pki = EnsureServingPki(dir(), options);
    EXPECT_TRUE(pki) << pki.error().ToString();
    return pki ? *pki : ServingPki{};
  }

  TempDir tmp_;
};

TEST_F(EnsureServingPkiTest, FirstStartCreatesAWorkingPki) {
  ServingPki pki = Ensure({.extra_sans = {"api.example.com"}});
  for (const char* name :
       {"ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "admin.crt", "admin.key"}) {
    EXPECT_TRUE(fs::exists(dir() / name)) << name;
  }
  EXPECT_EQ(pki.ca_cert, dir() / "ca.crt");
  EXPECT_EQ(pki.ca_pem, Read("ca.crt"));
  EXPECT_EQ(pki.admin_cert_pem, Read("admin.crt"));
  EXPECT_EQ(pki.admin_key_pem, Read("admin.key"));
  // Private keys, and the directory, are the owner's alone.
  EXPECT_EQ(Mode(dir()), 0700u);
  EXPECT_EQ(Mode(dir() / "ca.key"), 0600u);
  EXPECT_EQ(Mode(dir() / "apiserver.key"), 0600u);
  EXPECT_EQ(Mode(dir() / "admin.key"), 0600u);
  EXPECT_EQ(Mode(dir() / "ca.crt"), 0644u);
  // No temporary files are left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir()), fs::directory_iterator()), 6);

  // The serving certificate is for every name a local client uses.
  const std::string serving = Read("apiserver.crt");
  for (const std::string& host :
       {std::string("localhost"), HostName(), std::string("api.example.com")}) {
    EXPECT_EQ(VerifyChain(pki.ca_pem, serving, kServer, host.c_str()), X509_V_OK) << host;
  }
  X509Ptr serving_cert = Cert(serving);
  EXPECT_EQ(X509_check_ip_asc(serving_cert.get(), "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(serving_cert.get(), "::1", 0), 1);
  EXPECT_EQ(X509_check_private_key(serving_cert.get(), Key(Read("apiserver.key")).get()), 1);

  // The admin is in system:masters (cluster-admin under the default RBAC policy).
  EXPECT_EQ(VerifyChain(pki.ca_pem, pki.admin_cert_pem, kClient), X509_V_OK);
  X509Ptr admin = Cert(pki.admin_cert_pem);
  std::optional<UserInfo> user = UserFromCertificate(admin.get());
  ASSERT_TRUE(user);
  EXPECT_EQ(user->name, "kubetaint-admin");
  EXPECT_EQ(user->groups, (std::vector<std::string>{"system:masters"}));
}

TEST_F(EnsureServingPkiTest, SecondStartKeepsEverythingByteForByte) {
  Ensure({});
  const std::string ca = Read("ca.crt"), ca_key = Read("ca.key");
  const std::string serving = Read("apiserver.crt"), admin = Read("admin.crt");
  ServingPki pki = Ensure({});
  EXPECT_EQ(Read("ca.crt"), ca);
  EXPECT_EQ(Read("ca.key"), ca_key);
  EXPECT_EQ(Read("apiserver.crt"), serving);
  EXPECT_EQ(Read("admin.crt"), admin);
  EXPECT_EQ(pki.admin_cert_pem, admin);
}

TEST_F(EnsureServingPkiTest, NewSanReissuesTheServingCertificateUnderTheSameCa) {
  Ensure({});
  const std::string ca = Read("ca.crt"), serving = Read("apiserver.crt"), admin = Read("admin.crt");
  ServingPki pki = Ensure({.extra_sans = {"api.example.com", "10.9.8.7"}});
  EXPECT_EQ(Read("ca.crt"), ca);
  EXPECT_EQ(Read("admin.crt"), admin);
  const std::string reissued = Read("apiserver.crt");
  EXPECT_NE(reissued, serving);
  EXPECT_EQ(VerifyChain(ca, reissued, kServer, "api.example.com"), X509_V_OK);
  EXPECT_EQ(X509_check_ip_asc(Cert(reissued).get(), "10.9.8.7", 0), 1);
  // Fewer SANs than the certificate has is fine: no re-issue.
  Ensure({});
  EXPECT_EQ(Read("apiserver.crt"), reissued);
}

TEST_F(EnsureServingPkiTest, ListenHostIsASan) {
  Ensure({.listen_host = "192.0.2.7"});
  EXPECT_EQ(X509_check_ip_asc(Cert(Read("apiserver.crt")).get(), "192.0.2.7", 0), 1);
}

TEST_F(EnsureServingPkiTest, LeavesCloseToExpiryAreReissued) {
  const Clock::time_point start = Clock::now();
  Ensure({.now = start});
  const std::string ca = Read("ca.crt"), serving = Read("apiserver.crt"), admin = Read("admin.crt");
  // 300 days on: more than 30 days left, kept.
  Ensure({.now = start + std::chrono::hours(24 * 300)});
  EXPECT_EQ(Read("apiserver.crt"), serving);
  EXPECT_EQ(Read("admin.crt"), admin);
  // 340 days on: 25 days left, re-issued (the CA stays).
  Ensure({.now = start + std::chrono::hours(24 * 340)});
  EXPECT_NE(Read("apiserver.crt"), serving);
  EXPECT_NE(Read("admin.crt"), admin);
  EXPECT_EQ(Read("ca.crt"), ca);
}

TEST_F(EnsureServingPkiTest, LeavesThatAreMissingBrokenOrForeignAreReissued) {
  Ensure({});
  const std::string ca = Read("ca.crt");
  // Missing.
  fs::remove(dir() / "apiserver.crt");
  // Not signed by our CA (a valid pair from another CA).
  CertKeyPem other_ca = NewCa();
  Result<CertKeyPem> foreign = IssueCertificate(
      other_ca,
      {.common_name = "kubetaint-admin", .organizations = {"system:masters"}, .client = true},
      Clock::now());
  ASSERT_TRUE(foreign);
  std::ofstream(dir() / "admin.crt", std::ios::trunc) << foreign->cert_pem;
  std::ofstream(dir() / "admin.key", std::ios::trunc) << foreign->key_pem;

  ServingPki pki = Ensure({});
  EXPECT_EQ(Read("ca.crt"), ca);
  EXPECT_EQ(VerifyChain(ca, Read("apiserver.crt"), kServer, "localhost"), X509_V_OK);
  EXPECT_EQ(VerifyChain(ca, Read("admin.crt"), kClient), X509_V_OK);

  // A key that does not match its certificate (a crash between writing the two).
  const std::string serving = Read("apiserver.crt");
  std::ofstream(dir() / "apiserver.key", std::ios::trunc) << Read("admin.key");
  Ensure({});
  EXPECT_NE(Read("apiserver.crt"), serving);
  EXPECT_EQ(
      X509_check_private_key(Cert(Read("apiserver.crt")).get(), Key(Read("apiserver.key")).get()),
      1);

  // Garbage.
  std::ofstream(dir() / "apiserver.crt", std::ios::trunc) << "not a certificate";
  Ensure({});
  EXPECT_EQ(VerifyChain(ca, Read("apiserver.crt"), kServer, "localhost"), X509_V_OK);
}

TEST_F(EnsureServingPkiTest, CorruptCaKeyIsAnErrorNamingTheFile) {
  Ensure({});
  const std::string ca = Read("ca.crt"), serving = Read("apiserver.crt");
  std::ofstream(dir() / "ca.key", std::ios::trunc) << "-----BEGIN PRIVATE KEY-----\ngarbage\n";
  Result<ServingPki> pki = EnsureServingPki(dir(), {});
  ASSERT_FALSE(pki);
  EXPECT_NE(pki.error().message().find((dir() / "ca.key").string()), std::string::npos)
      << pki.error().message();
  // Nothing was replaced.
  EXPECT_EQ(Read("ca.crt"), ca);
  EXPECT_EQ(Read("apiserver.crt"), serving);
}

TEST_F(EnsureServingPkiTest, CorruptCaCertIsAnErrorNamingTheFile) {
  Ensure({});
  std::ofstream(dir() / "ca.crt", std::ios::trunc) << "garbage";
  Result<ServingPki> pki = EnsureServingPki(dir(), {});
  ASSERT_FALSE(pki);
  EXPECT_NE(pki.error().message().find((dir() / "ca.crt").string()), std::string::npos)
      << pki.error().message();
}

TEST_F(EnsureServingPkiTest, CaKeyOfAnotherCaIsAnError) {
  Ensure({});
  std::ofstream(dir() / "ca.key", std::ios::trunc) << NewCa().key_pem;
  Result<ServingPki> pki = EnsureServingPki(dir(), {});
  ASSERT_FALSE(pki);
  EXPECT_NE(pki.error().message().find("does not match"), std::string::npos)
      << pki.error().message();
}

TEST_F(EnsureServingPkiTest, HalfACaIsAnErrorNotANewCa) {
  Ensure({});
  const std::string ca_key = Read("ca.key");
  fs::remove(dir() / "ca.crt");
  Result<ServingPki> pki = EnsureServingPki(dir(), {});
  ASSERT_FALSE(pki);
  EXPECT_NE(pki.error().message().find((dir() / "ca.crt").string() + ": missing"),
            std::string::npos)
      << pki.error().message();
  EXPECT_FALSE(fs::exists(dir() / "ca.crt"));
  EXPECT_EQ(Read("ca.key"), ca_key);
}

// --- TLS with the result ----------------------------------------------------------------------

// Drives a client and a server SSL over a BIO pair (no sockets) until both finish or one fails.
bool Handshake(SSL* client, SSL* server) {
  BIO* client_io = nullptr;
  BIO* server_io = nullptr;
  BIO_new_bio_pair(&client_io, 0, &server_io, 0);
  SSL_set_bio(client, client_io, client_io);
  SSL_set_bio(server, server_io, server_io);
  SSL_set_connect_state(client);
  SSL_set_accept_state(server);
  auto pending = [](SSL* ssl, int rc) {
    int err = SSL_get_error(ssl, rc);
    return err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE;
  };
  for (int round = 0; round < 50; ++round) {
    int c = SSL_do_handshake(client);
    int s = SSL_do_handshake(server);
    if (c == 1 && s == 1) return true;
    if ((c != 1 && !pending(client, c)) || (s != 1 && !pending(server, s))) return false;
  }
  return false;
}

class TlsTest : public EnsureServingPkiTest {
 protected:
  void SetUp() override {
    EnsureServingPkiTest::SetUp();
    pki_ = Ensure({});
    server_ctx_.reset(SSL_CTX_new(TLS_server_method()));
    ASSERT_EQ(SSL_CTX_use_certificate(server_ctx_.get(), Cert(Read("apiserver.crt")).get()), 1);
    ASSERT_EQ(SSL_CTX_use_PrivateKey(server_ctx_.get(), Key(Read("apiserver.key")).get()), 1);
    client_ctx_.reset(SSL_CTX_new(TLS_client_method()));
    X509_STORE_add_cert(SSL_CTX_get_cert_store(client_ctx_.get()), Cert(pki_.ca_pem).get());
    SSL_CTX_set_verify(client_ctx_.get(), SSL_VERIFY_PEER, nullptr);
  }

  ServingPki pki_;
  SslCtxPtr server_ctx_, client_ctx_;
};

TEST_F(TlsTest, ClientTrustingTheCaConnectsByEveryLocalName) {
  struct Row {
    const char* name;
    bool ip;
    bool ok;
  } rows[] = {
      {"localhost", false, true},    {"127.0.0.1", true, true},     {"::1", true, true},
      {"example.com", false, false}, {"10.255.255.1", true, false},
  };
  for (const Row& row : rows) {
    SslPtr client(SSL_new(client_ctx_.get()));
    SslPtr server(SSL_new(server_ctx_.get()));
    X509_VERIFY_PARAM* param = SSL_get0_param(client.get());
    if (row.ip) {
      X509_VERIFY_PARAM_set1_ip_asc(param, row.name);
    } else {
      SSL_set_tlsext_host_name(client.get(), row.name);
      SSL_set1_host(client.get(), row.name);
    }
    EXPECT_EQ(Handshake(client.get(), server.get()), row.ok) << row.name;
    const long want =
        row.ok ? X509_V_OK
               : (row.ip ? X509_V_ERR_IP_ADDRESS_MISMATCH : X509_V_ERR_HOSTNAME_MISMATCH);
    EXPECT_EQ(SSL_get_verify_result(client.get()), want) << row.name;
  }
}

TEST_F(TlsTest, AdminClientCertificateAuthenticatesAsSystemMasters) {
  // The server asks for a client certificate and verifies it against the CA, as kube-apiserver
  // with --client-ca-file.
  X509_STORE_add_cert(SSL_CTX_get_cert_store(server_ctx_.get()), Cert(pki_.ca_pem).get());
  SSL_CTX_set_verify(server_ctx_.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  ASSERT_EQ(SSL_CTX_use_certificate(client_ctx_.get(), Cert(pki_.admin_cert_pem).get()), 1);
  ASSERT_EQ(SSL_CTX_use_PrivateKey(client_ctx_.get(), Key(pki_.admin_key_pem).get()), 1);
  SslPtr client(SSL_new(client_ctx_.get()));
  SslPtr server(SSL_new(server_ctx_.get()));
  SSL_set1_host(client.get(), "localhost");
  ASSERT_TRUE(Handshake(client.get(), server.get()));
  EXPECT_EQ(SSL_get_verify_result(server.get()), X509_V_OK);

  AuthenticationResult who =
      AuthenticateRequest("", SSL_get0_peer_certificate(server.get()), nullptr, false);
  ASSERT_TRUE(who.user);
  EXPECT_EQ(who.user->name, "kubetaint-admin");
  EXPECT_EQ(who.user->groups, (std::vector<std::string>{"system:masters", "system:authenticated"}));
}

TEST_F(TlsTest, ServingCertificateIsNotAClientCertificate) {
  X509_STORE_add_cert(SSL_CTX_get_cert_store(server_ctx_.get()), Cert(pki_.ca_pem).get());
  SSL_CTX_set_verify(server_ctx_.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  ASSERT_EQ(SSL_CTX_use_certificate(client_ctx_.get(), Cert(Read("apiserver.crt")).get()), 1);
  ASSERT_EQ(SSL_CTX_use_PrivateKey(client_ctx_.get(), Key(Read("apiserver.key")).get()), 1);
  SslPtr client(SSL_new(client_ctx_.get()));
  SslPtr server(SSL_new(server_ctx_.get()));
  EXPECT_FALSE(Handshake(client.get(), server.get()));
  EXPECT_EQ(SSL_get_verify_result(server.get()), X509_V_ERR_INVALID_PURPOSE);
}

}  // namespace
}  // namespace kt::server
