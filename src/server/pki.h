// The API server's certificates: a cluster CA, the serving certificate and the admin client
// certificate, made on first start and kept in a directory, as k3s and kubeadm do.
//
//   PkiOptions options{.extra_sans = {"api.example.com", "10.0.0.5"},
//                      .listen_host = "0.0.0.0",
//                      .now = std::chrono::system_clock::now()};
//   Result<ServingPki> pki = EnsureServingPki(data_dir / "pki", options);
//   if (!pki) return pki.error();
//   // TLS: pki->serving_cert / pki->serving_key; clients: pki->ca_pem, pki->admin_cert_pem.
//
// Keys are ECDSA P-256 (Go, Node.js and Python clients accept it; generating one takes a
// millisecond, RSA-2048 tens); signatures are ECDSA with SHA-256. Certificates and keys are PEM
// (keys as unencrypted PKCS#8, "BEGIN PRIVATE KEY").
//
// The CA is never replaced behind the user's back: kubeconfigs already handed out trust it, so
// a CA file that is missing its other half, unreadable or corrupt is an error naming the file,
// and the user decides (remove both ca.* files to start a new CA). The serving and admin
// certificates are cheap to re-issue and are, whenever they are not fit for use (see
// EnsureServingPki).
//
// Errors are kt::Status values (kInternal for I/O and OpenSSL failures, kBadRequest for bad
// input such as an unparsable IP address) whose message names the file and OpenSSL's reason.
//
// Thread safety: pure functions of their arguments, except EnsureServingPki, which owns `dir`:
// two processes must not run it on the same directory at once. OpenSSL 3 needs no global
// initialisation.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace kt::server {

// A certificate and its private key, both PEM.
struct CertKeyPem {
  std::string cert_pem;
  std::string key_pem;
};

// A self-signed CA: critical basicConstraints CA:TRUE, critical keyUsage keyCertSign, cRLSign
// and digitalSignature, a subjectKeyIdentifier, a random positive 128-bit serial, valid from
// `now` - 1 minute for 10 years.
Result<CertKeyPem> NewCertificateAuthority(std::string_view common_name,
                                           std::chrono::system_clock::time_point now);

// What IssueCertificate puts in a leaf certificate.
struct CertificateRequest {
  std::string common_name{};
  std::vector<std::string> organizations{};  // subject O values, in order (Kubernetes groups)
  std::vector<std::string> dns_names{};      // subjectAltName DNS entries
  std::vector<std::string> ip_addresses{};   // subjectAltName IP entries, IPv4 or IPv6 text
  bool server = false;                       // extendedKeyUsage serverAuth
  bool client = false;                       // extendedKeyUsage clientAuth
  std::chrono::hours validity{24 * 365};
};

// A leaf certificate for `req` with a new key, signed by `ca`: critical basicConstraints
// CA:FALSE, critical keyUsage digitalSignature and keyEncipherment, the extended key usages
// asked for, the SANs, subject and authority key identifiers. Valid from `now` - 1 minute (so
// that a client whose clock is a little behind accepts it) for `req.validity`, but never past
// the CA's own notAfter. An IP address that does not parse, or an empty DNS name, is a
// kBadRequest error naming it.
Result<CertKeyPem> IssueCertificate(const CertKeyPem& ca, const CertificateRequest& req,
                                    std::chrono::system_clock::time_point now);

struct PkiOptions {
  // More names for the serving certificate: each is an IP SAN if it parses as an IP address,
  // else a DNS SAN.
  std::vector<std::string> extra_sans{};
  // The address the server listens on; a SAN too unless empty, "0.0.0.0" or "::" (a wildcard
  // address is not a name clients connect to). "[::1]" is read as "::1".
  std::string listen_host{};
  // The time to judge and issue certificates at; the epoch (the default) means "now".
  std::chrono::system_clock::time_point now{};
};

// Where EnsureServingPki left everything, and the PEM a kubeconfig embeds.
struct ServingPki {
  std::filesystem::path ca_cert, serving_cert, serving_key, admin_cert, admin_key;
  std::string ca_pem, admin_cert_pem, admin_key_pem;
};

// The SANs the serving certificate must have: IPs 127.0.0.1 and ::1, DNS localhost, the
// machine's host name (gethostname), the listen host (see PkiOptions) and the extra SANs, each
// once (DNS names compared without case, IPs by value), in that order. Split into DNS names and
// IPs as a CertificateRequest wants them.
struct ServingSans {
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;
};
ServingSans RequiredServingSans(const PkiOptions& options);

// Keeps a working PKI in `dir` (created mode 0700 if missing, parents as needed):
//
//   ca.crt, ca.key                the cluster CA (CN "kubetaint-ca")
//   apiserver.crt, apiserver.key  the serving certificate (CN "kube-apiserver", serverAuth)
//   admin.crt, admin.key          the admin client certificate (CN "kubetaint-admin",
//                                 O "system:masters", clientAuth)
//
// First start (neither CA file exists): creates all six. Later starts reuse the CA, and
// re-issue the serving certificate when it is missing, unreadable, not signed by the CA, not
// matching its key, not valid at `now`, expiring within 30 days, lacking serverAuth, or lacking
// any of RequiredServingSans; likewise the admin certificate (clientAuth, and it must
// authenticate as kubetaint-admin in system:masters).
// Certificates that are fine are left byte for byte, so clients that pinned them keep working.
//
// Errors, with nothing replaced: one CA file without the other; a CA file that does not parse
// or a key that does not match the certificate (the message names the file); a CA that has
// expired; any I/O failure. Every file is written atomically (a temporary file in `dir`, synced,
// then renamed over the old one), keys mode 0600, certificates 0644; a failure never leaves a
// half-written file under a final name.
Result<ServingPki> EnsureServingPki(const std::filesystem::path& dir, const PkiOptions& options);

}  // namespace kt::server
