#include "server/pki.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <utility>

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "core/file.h"
#include "core/strings.h"
#include "server/authn.h"
#include "server/internal/openssl_ptr.h"

namespace kt::server {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::system_clock;

constexpr std::string_view kCaCommonName = "kubetaint-ca";
constexpr std::string_view kServingCommonName = "kube-apiserver";
constexpr std::string_view kAdminCommonName = "kubetaint-admin";
constexpr std::string_view kAdminOrganization = "system:masters";
constexpr std::chrono::hours kCaValidity{24 * 365 * 10};
// A leaf this close to its notAfter is re-issued at start, so that a server restarted now and
// then never serves an expired certificate.
constexpr std::chrono::hours kRenewBefore{24 * 30};
// notBefore is back-dated by this much: a client whose clock is a little behind the server's
// would otherwise reject a certificate made a moment ago as "not yet valid".
constexpr std::chrono::minutes kClockSkew{1};

// --- OpenSSL plumbing -------------------------------------------------------------------------

using internal::BignumPtr;
using internal::BioPtr;
using internal::ExtensionPtr;
using internal::GeneralNamePtr;
using internal::GeneralNamesPtr;
using internal::Ia5StringPtr;
using internal::KeyPtr;
using internal::NoPassphrase;
using internal::OctetStringPtr;
using internal::OpenSslReason;
using internal::X509Ptr;

Status OpenSslFailure(std::string_view what) {
  return Internal(std::string(what) + ": " + OpenSslReason());
}

Result<X509Ptr> ParseCertificatePem(std::string_view pem, std::string_view what) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return Err(OpenSslFailure(what));
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr));
  if (!cert) return Err(OpenSslFailure(std::string(what) + ": not a PEM certificate"));
  return cert;
}

Result<KeyPtr> ParsePrivateKeyPem(std::string_view pem, std::string_view what) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return Err(OpenSslFailure(what));
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
  if (!key) return Err(OpenSslFailure(std::string(what) + ": not a PEM private key"));
  return key;
}

// The contents of a memory BIO.
std::string BioContents(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

Result<std::string> CertificateToPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) {
    return Err(OpenSslFailure("encoding a certificate"));
  }
  return BioContents(bio.get());
}

Result<std::string> PrivateKeyToPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return Err(OpenSslFailure("encoding a private key"));
  }
  return BioContents(bio.get());
}

std::optional<Clock::time_point> ToTimePoint(const ASN1_TIME* t) {
  struct tm tm = {};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return std::nullopt;
  return Clock::from_time_t(timegm(&tm));
}

// An IP address's bytes (4 or 16), as a SAN holds them; nullopt if `s` is not one.
std::optional<std::string> ParseIpAddress(std::string_view s) {
  const std::string text(s);
  std::array<unsigned char, 16> buf{};
  if (inet_pton(AF_INET, text.c_str(), buf.data()) == 1) {
    return std::string(reinterpret_cast<const char*>(buf.data()), 4);
  }
  if (inet_pton(AF_INET6, text.c_str(), buf.data()) == 1) {
    return std::string(reinterpret_cast<const char*>(buf.data()), 16);
  }
  return std::nullopt;
}

std::string_view AsView(const ASN1_STRING* s) {
  return {reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
          static_cast<size_t>(ASN1_STRING_length(s))};
}

// The DNS names (as written) and IP addresses (as bytes) of a certificate's subjectAltName.
struct SanSet {
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_bytes;
};

SanSet CertificateSans(X509* cert) {
  SanSet out;
  GeneralNamesPtr names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  if (!names) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    if (name->type == GEN_DNS) out.dns_names.emplace_back(AsView(name->d.dNSName));
    if (name->type == GEN_IPADD) out.ip_bytes.emplace_back(AsView(name->d.iPAddress));
  }
  return out;
}

// --- Building certificates --------------------------------------------------------------------

Result<KeyPtr> NewP256Key() {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return Err(OpenSslFailure("generating a P-256 key"));
  return key;
}

// A uniformly random serial in [1, 2^128), as Go's crypto/x509 users pick them (RFC 5280 wants
// them unique per CA; with 128 random bits they are).
Status SetRandomSerial(X509* cert) {
  std::array<unsigned char, 16> bytes{};
  BignumPtr serial;
  do {
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
      return OpenSslFailure("generating a serial number");
    }
    serial.reset(BN_bin2bn(bytes.data(), static_cast<int>(bytes.size()), nullptr));
    if (!serial) return OpenSslFailure("generating a serial number");
  } while (BN_is_zero(serial.get()));
  if (BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert)) == nullptr) {
    return OpenSslFailure("setting the serial number");
  }
  return Status::Ok();
}

Status AddNameEntry(X509_NAME* name, int nid, std::string_view value) {
  if (X509_NAME_add_entry_by_NID(name, nid, MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(value.data()),
                                 static_cast<int>(value.size()), -1, 0) != 1) {
    return OpenSslFailure("setting the subject");
  }
  return Status::Ok();
}

Status AddExtension(X509* cert, X509V3_CTX* ctx, int nid, const char* value) {
  ExtensionPtr ext(X509V3_EXT_conf_nid(nullptr, ctx, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return OpenSslFailure(std::string("adding extension ") + OBJ_nid2sn(nid));
  }
  return Status::Ok();
}

// subjectAltName built entry by entry rather than from OpenSSL's "DNS:a,IP:b" text, where a
// comma or colon in a name would change its meaning.
Status AddSubjectAltNames(X509* cert, const std::vector<std::string>& dns_names,
                          const std::vector<std::string>& ip_addresses) {
  if (dns_names.empty() && ip_addresses.empty()) return Status::Ok();
  GeneralNamesPtr names(sk_GENERAL_NAME_new_null());
  if (!names) return OpenSslFailure("adding subjectAltName");
  auto push = [&](int type, ASN1_STRING* value) -> Status {
    GeneralNamePtr name(GENERAL_NAME_new());
    if (!name) {
      ASN1_STRING_free(value);
      return OpenSslFailure("adding subjectAltName");
    }
    GENERAL_NAME_set0_value(name.get(), type, value);
    if (sk_GENERAL_NAME_push(names.get(), name.get()) <= 0) {
      return OpenSslFailure("adding subjectAltName");
    }
    name.release();  // owned by `names` now
    return Status::Ok();
  };
  for (const std::string& dns : dns_names) {
    Ia5StringPtr value(ASN1_IA5STRING_new());
    if (!value || ASN1_STRING_set(value.get(), dns.data(), static_cast<int>(dns.size())) != 1) {
      return OpenSslFailure("adding subjectAltName");
    }
    KT_RETURN_IF_ERROR(push(GEN_DNS, value.release()));
  }
  for (const std::string& ip : ip_addresses) {
    std::optional<std::string> bytes = ParseIpAddress(ip);
    if (!bytes) return Status(StatusCode::kInternal, "not an IP address: " + ip);
    OctetStringPtr value(ASN1_OCTET_STRING_new());
    if (!value ||
        ASN1_OCTET_STRING_set(value.get(), reinterpret_cast<const unsigned char*>(bytes->data()),
                              static_cast<int>(bytes->size())) != 1) {
      return OpenSslFailure("adding subjectAltName");
    }
    KT_RETURN_IF_ERROR(push(GEN_IPADD, value.release()));
  }
  if (X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) != 1) {
    return OpenSslFailure("adding subjectAltName");
  }
  return Status::Ok();
}

// What differs between a CA and a leaf.
struct CertificateSpec {
  std::string_view common_name;
  const std::vector<std::string>* organizations = nullptr;
  Clock::time_point not_before;
  Clock::time_point not_after;
  // (nid, OpenSSL extension text) in order; the key identifiers are added by MakeCertificate.
  std::vector<std::pair<int, std::string>> extensions;
  const std::vector<std::string>* dns_names = nullptr;
  const std::vector<std::string>* ip_addresses = nullptr;
};

// A certificate for a new key, signed by `issuer_key`; `issuer` null means self-signed.
Result<CertKeyPem> MakeCertificate(const CertificateSpec& spec, X509* issuer,
                                   EVP_PKEY* issuer_key) {
  Result<KeyPtr> key = NewP256Key();
  if (!key) return Err(key.error());
  X509Ptr cert(X509_new());
  if (!cert || X509_set_version(cert.get(), X509_VERSION_3) != 1) {
    return Err(OpenSslFailure("creating a certificate"));
  }
  if (Status s = SetRandomSerial(cert.get()); !s.ok()) return Err(std::move(s));

  X509_NAME* subject = X509_get_subject_name(cert.get());
  // Go's pkix.Name order: O before CN.
  if (spec.organizations != nullptr) {
    for (const std::string& o : *spec.organizations) {
      if (Status s = AddNameEntry(subject, NID_organizationName, o); !s.ok()) {
        return Err(std::move(s));
      }
    }
  }
  if (!spec.common_name.empty()) {
    if (Status s = AddNameEntry(subject, NID_commonName, spec.common_name); !s.ok()) {
      return Err(std::move(s));
    }
  }
  if (X509_set_issuer_name(cert.get(),
                           issuer != nullptr ? X509_get_subject_name(issuer) : subject) != 1 ||
      ASN1_TIME_set(X509_getm_notBefore(cert.get()), Clock::to_time_t(spec.not_before)) ==
          nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(cert.get()), Clock::to_time_t(spec.not_after)) == nullptr ||
      X509_set_pubkey(cert.get(), key->get()) != 1) {
    return Err(OpenSslFailure("creating a certificate"));
  }

  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer != nullptr ? issuer : cert.get(), cert.get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] : spec.extensions) {
    if (Status s = AddExtension(cert.get(), &ctx, nid, value.c_str()); !s.ok()) {
      return Err(std::move(s));
    }
  }
  if (Status s = AddExtension(cert.get(), &ctx, NID_subject_key_identifier, "hash"); !s.ok()) {
    return Err(std::move(s));
  }
  if (issuer != nullptr) {
    if (Status s = AddExtension(cert.get(), &ctx, NID_authority_key_identifier, "keyid:always");
        !s.ok()) {
      return Err(std::move(s));
    }
  }
  static const std::vector<std::string> kNone;
  if (Status s = AddSubjectAltNames(cert.get(), spec.dns_names ? *spec.dns_names : kNone,
                                    spec.ip_addresses ? *spec.ip_addresses : kNone);
      !s.ok()) {
    return Err(std::move(s));
  }
  if (X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key->get(), EVP_sha256()) <= 0) {
    return Err(OpenSslFailure("signing a certificate"));
  }

  Result<std::string> cert_pem = CertificateToPem(cert.get());
  if (!cert_pem) return Err(cert_pem.error());
  Result<std::string> key_pem = PrivateKeyToPem(key->get());
  if (!key_pem) return Err(key_pem.error());
  return CertKeyPem{std::move(*cert_pem), std::move(*key_pem)};
}

// --- Files ------------------------------------------------------------------------------------

std::string ErrnoText(int err) { return std::strerror(err); }

Status WritePair(const fs::path& cert_path, const fs::path& key_path, const CertKeyPem& pair) {
  // The key first: a crash between the two leaves a key that does not match the old
  // certificate, which the next start detects and re-issues.
  KT_RETURN_IF_ERROR(WriteFileAtomic(key_path, pair.key_pem, 0600));
  return WriteFileAtomic(cert_path, pair.cert_pem, 0644);
}

Status EnsureDirectory(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return Status::Ok();
  if (dir.has_parent_path()) {
    fs::create_directories(dir.parent_path(), ec);
    if (ec) return Internal("create " + dir.parent_path().string() + ": " + ec.message());
  }
  if (::mkdir(dir.c_str(), 0700) != 0) {
    int err = errno;
    // EEXIST: created meanwhile by someone else, fine if it is a directory.
    if (err == EEXIST && fs::is_directory(dir, ec)) return Status::Ok();
    return Internal("create " + dir.string() + ": " + ErrnoText(err));
  }
  return Status::Ok();
}

bool Exists(const fs::path& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

// --- Checking existing files ------------------------------------------------------------------

// What a leaf on disk must be to be kept.
struct LeafRequirements {
  int purpose;             // X509_PURPOSE_SSL_SERVER or X509_PURPOSE_SSL_CLIENT
  std::string_view user;   // empty: any; else the user it must authenticate as...
  std::string_view group;  // ...in this group
  const ServingSans* sans = nullptr;
};

bool HasSans(X509* cert, const ServingSans& want) {
  SanSet have = CertificateSans(cert);
  for (const std::string& dns : want.dns_names) {
    bool found = false;
    for (const std::string& h : have.dns_names) found = found || EqualFoldAscii(h, dns);
    if (!found) return false;
  }
  for (const std::string& ip : want.ip_addresses) {
    std::optional<std::string> bytes = ParseIpAddress(ip);
    bool found = false;
    for (const std::string& h : have.ip_bytes) found = found || (bytes && h == *bytes);
    if (!found) return false;
  }
  return true;
}

// The pair at (cert_path, key_path) if it can be served as is; nullopt means re-issue (any
// doubt does: re-issuing costs a millisecond).
std::optional<CertKeyPem> ReadUsableLeaf(const fs::path& cert_path, const fs::path& key_path,
                                         X509* ca, Clock::time_point now,
                                         const LeafRequirements& want) {
  Result<std::string> cert_pem = ReadFile(cert_path);
  Result<std::string> key_pem = ReadFile(key_path);
  if (!cert_pem || !key_pem) return std::nullopt;
  Result<X509Ptr> cert = ParseCertificatePem(*cert_pem, cert_path.string());
  Result<KeyPtr> key = ParsePrivateKeyPem(*key_pem, key_path.string());
  bool usable = cert && key && X509_check_private_key(cert->get(), key->get()) == 1 &&
                X509_check_issued(ca, cert->get()) == X509_V_OK &&
                X509_verify(cert->get(), X509_get0_pubkey(ca)) == 1 &&
                X509_check_purpose(cert->get(), want.purpose, 0) == 1;
  if (usable) {
    std::optional<Clock::time_point> not_before = ToTimePoint(X509_get0_notBefore(cert->get()));
    std::optional<Clock::time_point> not_after = ToTimePoint(X509_get0_notAfter(cert->get()));
    usable = not_before && not_after && *not_before <= now && *not_after > now + kRenewBefore;
  }
  if (usable && !want.user.empty()) {
    // Judged as the API server will: who does this certificate authenticate as?
    std::optional<UserInfo> user = UserFromCertificate(cert->get());
    usable = user && user->name == want.user &&
             std::find(user->groups.begin(), user->groups.end(), want.group) != user->groups.end();
  }
  if (usable && want.sans != nullptr) usable = HasSans(cert->get(), *want.sans);
  ERR_clear_error();  // failed checks leave entries that must not leak into a later message
  if (!usable) return std::nullopt;
  return CertKeyPem{std::move(*cert_pem), std::move(*key_pem)};
}

// The leaf at (cert_path, key_path) if usable, else a new one for `req`, written there.
Result<CertKeyPem> EnsureLeaf(const fs::path& cert_path, const fs::path& key_path,
                              const CertKeyPem& ca, X509* ca_cert, Clock::time_point now,
                              const LeafRequirements& want, const CertificateRequest& req) {
  if (std::optional<CertKeyPem> kept = ReadUsableLeaf(cert_path, key_path, ca_cert, now, want)) {
    return std::move(*kept);
  }
  Result<CertKeyPem> issued = IssueCertificate(ca, req, now);
  if (!issued) return issued;
  if (Status s = WritePair(cert_path, key_path, *issued); !s.ok()) return Err(std::move(s));
  return issued;
}

// The CA from `dir`, or a new one when neither file exists.
Result<CertKeyPem> EnsureCa(const fs::path& cert_path, const fs::path& key_path,
                            Clock::time_point now) {
  const bool have_cert = Exists(cert_path);
  const bool have_key = Exists(key_path);
  if (!have_cert && !have_key) {
    Result<CertKeyPem> ca = NewCertificateAuthority(kCaCommonName, now);
    if (!ca) return ca;
    if (Status s = WritePair(cert_path, key_path, *ca); !s.ok()) return Err(std::move(s));
    return ca;
  }
  // One half alone is a damaged CA, not a missing one: replacing it would break every
  // kubeconfig that trusts the old certificate. The user decides.
  if (!have_cert || !have_key) {
    const fs::path& missing = have_cert ? key_path : cert_path;
    const fs::path& present = have_cert ? cert_path : key_path;
    return Err(Internal(missing.string() + ": missing while " + present.string() +
                        " exists; restore it, or remove " + present.string() +
                        " to create a new certificate authority (clients that trust the old "
                        "one must then be given the new ca.crt)"));
  }
  CertKeyPem ca;
  Result<std::string> cert_pem = ReadFile(cert_path);
  if (!cert_pem) return Err(cert_pem.error());
  Result<std::string> key_pem = ReadFile(key_path);
  if (!key_pem) return Err(key_pem.error());
  Result<X509Ptr> cert = ParseCertificatePem(*cert_pem, cert_path.string());
  if (!cert) return Err(cert.error());
  Result<KeyPtr> key = ParsePrivateKeyPem(*key_pem, key_path.string());
  if (!key) return Err(key.error());
  if (X509_check_private_key(cert->get(), key->get()) != 1) {
    return Err(OpenSslFailure(key_path.string() + ": does not match " + cert_path.string()));
  }
  if (X509_check_ca(cert->get()) == 0) {
    return Err(Internal(cert_path.string() + ": not a CA certificate"));
  }
  std::optional<Clock::time_point> not_after = ToTimePoint(X509_get0_notAfter(cert->get()));
  if (!not_after || *not_after <= now) {
    return Err(Internal(cert_path.string() +
                        ": the certificate authority has expired; remove ca.crt and ca.key to "
                        "create a new one"));
  }
  ca.cert_pem = std::move(*cert_pem);
  ca.key_pem = std::move(*key_pem);
  return ca;
}

std::string ListenHostSan(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "0.0.0.0" || host == "::") return "";
  return std::string(host);
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

}  // namespace

// --- Public API -------------------------------------------------------------------------------

Result<CertKeyPem> NewCertificateAuthority(std::string_view common_name, Clock::time_point now) {
  CertificateSpec spec;
  spec.common_name = common_name;
  spec.not_before = now - kClockSkew;
  spec.not_after = now + kCaValidity;
  spec.extensions = {
      {NID_basic_constraints, "critical,CA:TRUE"},
      {NID_key_usage, "critical,digitalSignature,keyCertSign,cRLSign"},
  };
  return MakeCertificate(spec, nullptr, nullptr);
}

Result<CertKeyPem> IssueCertificate(const CertKeyPem& ca, const CertificateRequest& req,
                                    Clock::time_point now) {
  for (const std::string& ip : req.ip_addresses) {
    if (!ParseIpAddress(ip)) {
      return Err(
          BadRequest("certificate for " + req.common_name + ": invalid IP address \"" + ip + "\""));
    }
  }
  for (const std::string& dns : req.dns_names) {
    if (dns.empty()) {
      return Err(BadRequest("certificate for " + req.common_name + ": empty DNS name"));
    }
  }
  Result<X509Ptr> ca_cert = ParseCertificatePem(ca.cert_pem, "CA certificate");
  if (!ca_cert) return Err(ca_cert.error());
  Result<KeyPtr> ca_key = ParsePrivateKeyPem(ca.key_pem, "CA private key");
  if (!ca_key) return Err(ca_key.error());
  std::optional<Clock::time_point> ca_not_after = ToTimePoint(X509_get0_notAfter(ca_cert->get()));
  if (!ca_not_after) return Err(OpenSslFailure("CA certificate: reading notAfter"));

  CertificateSpec spec;
  spec.common_name = req.common_name;
  spec.organizations = &req.organizations;
  spec.not_before = now - kClockSkew;
  // A certificate outliving its issuer would only fail verification later, and less clearly.
  spec.not_after = std::min<Clock::time_point>(now + req.validity, *ca_not_after);
  spec.extensions = {
      {NID_basic_constraints, "critical,CA:FALSE"},
      {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
  };
  std::string usages;
  if (req.server) usages = "serverAuth";
  if (req.client) usages += usages.empty() ? "clientAuth" : ",clientAuth";
  if (!usages.empty()) spec.extensions.emplace_back(NID_ext_key_usage, usages);
  spec.dns_names = &req.dns_names;
  spec.ip_addresses = &req.ip_addresses;
  return MakeCertificate(spec, ca_cert->get(), ca_key->get());
}

ServingSans RequiredServingSans(const PkiOptions& options) {
  ServingSans out;
  std::vector<std::string> ip_bytes;  // for de-duplication by value ("::1" == "0::1")
  auto add = [&](const std::string& name) {
    if (name.empty()) return;
    if (std::optional<std::string> bytes = ParseIpAddress(name)) {
      if (std::find(ip_bytes.begin(), ip_bytes.end(), *bytes) != ip_bytes.end()) return;
      ip_bytes.push_back(*bytes);
      out.ip_addresses.push_back(name);
      return;
    }
    for (const std::string& d : out.dns_names) {
      if (EqualFoldAscii(d, name)) return;
    }
    out.dns_names.push_back(name);
  };
  add("127.0.0.1");
  add("::1");
  add("localhost");
  add(HostName());
  add(ListenHostSan(options.listen_host));
  for (const std::string& san : options.extra_sans) add(san);
  return out;
}

Result<ServingPki> EnsureServingPki(const fs::path& dir, const PkiOptions& options) {
  const Clock::time_point now = options.now == Clock::time_point{} ? Clock::now() : options.now;
  if (Status s = EnsureDirectory(dir); !s.ok()) return Err(std::move(s));

  ServingPki pki;
  pki.ca_cert = dir / "ca.crt";
  pki.serving_cert = dir / "apiserver.crt";
  pki.serving_key = dir / "apiserver.key";
  pki.admin_cert = dir / "admin.crt";
  pki.admin_key = dir / "admin.key";

  Result<CertKeyPem> ca = EnsureCa(pki.ca_cert, dir / "ca.key", now);
  if (!ca) return Err(ca.error());
  Result<X509Ptr> ca_cert = ParseCertificatePem(ca->cert_pem, pki.ca_cert.string());
  if (!ca_cert) return Err(ca_cert.error());

  const ServingSans sans = RequiredServingSans(options);
  CertificateRequest serving_req;
  serving_req.common_name = kServingCommonName;
  serving_req.dns_names = sans.dns_names;
  serving_req.ip_addresses = sans.ip_addresses;
  serving_req.server = true;
  Result<CertKeyPem> serving =
      EnsureLeaf(pki.serving_cert, pki.serving_key, *ca, ca_cert->get(), now,
                 {X509_PURPOSE_SSL_SERVER, "", "", &sans}, serving_req);
  if (!serving) return Err(serving.error());

  CertificateRequest admin_req;
  admin_req.common_name = kAdminCommonName;
  admin_req.organizations = {std::string(kAdminOrganization)};
  admin_req.client = true;
  Result<CertKeyPem> admin =
      EnsureLeaf(pki.admin_cert, pki.admin_key, *ca, ca_cert->get(), now,
                 {X509_PURPOSE_SSL_CLIENT, kAdminCommonName, kAdminOrganization}, admin_req);
  if (!admin) return Err(admin.error());

  pki.admin_cert_pem = std::move(admin->cert_pem);
  pki.admin_key_pem = std::move(admin->key_pem);
  pki.ca_pem = std::move(ca->cert_pem);
  return pki;
}

}  // namespace kt::server
