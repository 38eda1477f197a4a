// Who a request is, decided as kube-apiserver's authenticators decide it, and the 401 / 403
// bodies it answers with.
//
//   Result<TokenFile> tokens = LoadTokenFile("/etc/kubetaint/tokens.csv");  // --token-auth-file
//   for (const std::string& w : tokens->warnings()) log(w);
//   ...
//   AuthenticationResult who = AuthenticateRequest(request.authorization_header,
//                                                  tls_peer_certificate, &*tokens,
//                                                  /*anonymous_auth=*/true);
//   if (!who.user) return Respond(401, UnauthorizedError().Json());
//   if (!authorized) return Respond(403, NewRequestForbidden(attributes).Json());
//
// What upstream does, and where (k8s.io/apiserver is staging/src/k8s.io/apiserver in
// kubernetes/kubernetes):
//
// * The chain (pkg/kubeapiserver/authenticator/config.go): the request authenticators — x509
//   client certificates, then bearer tokens (the token file among them) — in a union that
//   returns the first success and otherwise the errors; wrapped in AuthenticatedGroupAdder;
//   then, with --anonymous-auth (default true), union.NewFailOnError(chain, anonymous): an
//   *error* from the chain fails the request ("don't consider a bad bearer token ...
//   anonymous"), only "no credentials of mine" falls through to the anonymous user.
// * No usable credentials and --anonymous-auth=false, or a bearer token that no authenticator
//   accepts (whatever --anonymous-auth says): 401 from filters/authentication.go Unauthorized,
//   apierrors.NewUnauthorized("Unauthorized"), no WWW-Authenticate header:
//     {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
//      "message":"Unauthorized","reason":"Unauthorized","code":401}
// * Authenticated (anonymous included) but the authorizer says no: 403 from
//   endpoints/handlers/responsewriters/errors.go Forbidden, apierrors.NewForbidden(group
//   resource, name, forbiddenMessage(attributes)). For a resource request the message starts
//   with the resource ("pods is forbidden: User \"system:anonymous\" cannot list resource
//   \"pods\" in API group \"\" at the cluster scope", details {"kind":"pods"}); only a
//   non-resource request has the bare form ("forbidden: User \"system:anonymous\" cannot get
//   path \"/api\"", details {}). RBAC adds no reason in the usual case.
// * Anonymous users may, under the default RBAC policy
//   (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go: ClusterRole
//   system:public-info-viewer, bound to system:authenticated and system:unauthenticated), only
//   `get` the exact paths /livez, /readyz, /healthz, /version and /version/. Not /livez/ping,
//   /readyz/etcd or /healthz/ (RBAC matches a non-resource URL exactly unless the rule ends in
//   `*`, and these do not), not /api or /apis (system:discovery is bound to
//   system:authenticated only).
//
// Thread safety: TokenFile is immutable after loading and safe to share between threads; the
// functions are pure.
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "server/http.h"
#include "server/status_json.h"

struct x509_st;  // OpenSSL's X509, kept out of this header

namespace kt::server {

// user.Info (k8s.io/apiserver pkg/authentication/user): who a request is.
struct UserInfo {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;

  bool operator==(const UserInfo&) const = default;
};

// Upstream's well-known names (k8s.io/apiserver pkg/authentication/user/user.go).
inline constexpr std::string_view kAnonymousUser = "system:anonymous";
inline constexpr std::string_view kAllAuthenticated = "system:authenticated";
inline constexpr std::string_view kAllUnauthenticated = "system:unauthenticated";
inline constexpr std::string_view kSystemPrivilegedGroup = "system:masters";

// --- Static token file (--token-auth-file) ----------------------------------------------------
//
// Upstream pkg/authentication/token/tokenfile/tokenfile.go NewCSV, read with Go's encoding/csv
// defaults (plus a variable number of fields):
// * A record is `token,user name,user uid[,"group1,group2"[,ignored...]]`. Fewer than 3 fields
//   is an error: token file '<path>' must have at least 3 columns (token, user name, user uid),
//   found <n>.
// * Fields may be quoted ("a,b", "" for a quote inside); a quote inside an unquoted field, or
//   anything but a comma or the line end after a closing quote, is Go's csv.ParseError
//   (`parse error on line 1, column 17: bare " in non-quoted-field`); a quoted field may span
//   lines.
// * Spaces are part of fields: " token" is a different token from "token", and
//   `a,b,c, "g"` is a bare-quote error. Groups are the 4th field split at every comma with no
//   trimming ("g1, g2" gives "g1" and " g2"; an empty 4th field gives one empty group).
// * Empty lines are skipped (a line of spaces is not empty: it is a 1-field record, an error);
//   CRLF reads as LF. There are no comments.
// * An empty token is skipped with a warning ("empty token has been found in token file
//   '<path>', record number '<n>'"); a duplicate token replaces the earlier entry with a warning
//   ("duplicate token has been found in token file '<path>', record number '<n>'"). Record
//   numbers count records, from 1. Upstream logs these; here they are warnings() to print.
class TokenFile {
 public:
  TokenFile() = default;  // no tokens

  // The user of `token`, or null. Tokens are kept as SHA-256 digests and looked up by digest,
  // so lookup time does not depend on how much of a guess matches a real token.
  const UserInfo* Authenticate(std::string_view token) const;

  size_t size() const { return users_.size(); }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  using Digest = std::array<unsigned char, 32>;
  struct DigestHash {
    size_t operator()(const Digest& d) const;
  };
  friend Result<TokenFile> ParseTokenFile(std::string_view contents, std::string_view path);

  std::unordered_map<Digest, UserInfo, DigestHash> users_;
  std::vector<std::string> warnings_;
};

// Reads and parses the file at `path`. A file that cannot be read is Go's os error text
// ("open <path>: no such file or directory"); a CSV error is Go's csv.ParseError text prefixed
// with "token file '<path>': " (upstream returns it bare; the prefix says which flag is wrong).
Result<TokenFile> LoadTokenFile(const std::filesystem::path& path);
// The same for file contents already read; `path` is only for messages.
Result<TokenFile> ParseTokenFile(std::string_view contents, std::string_view path);

// --- Bearer tokens ----------------------------------------------------------------------------
//
// Upstream pkg/authentication/request/bearertoken/bearertoken.go: the Authorization header,
// trimmed, split at single spaces into at most 3 parts; the scheme compared without case. A
// missing header, another scheme ("Basic ..."), "Bearer" alone or an empty token is not an
// error: this authenticator has nothing to say and the next one (finally anonymous) decides.
// "Bearer  tok" (two spaces) is an empty token plus a warning for the client. Anything after
// the token and a space is ignored.

struct BearerToken {
  std::string_view token;           // empty: no bearer credentials
  bool space_before_token = false;  // send kInvalidTokenWithSpaceWarning as a Warning header
};
BearerToken ParseBearerToken(std::string_view authorization);

inline constexpr std::string_view kInvalidTokenWithSpaceWarning =
    "the provided Authorization header contains extra space before the bearer token, and is "
    "ignored";
// The error upstream logs when no token authenticator accepts a token.
inline constexpr std::string_view kInvalidBearerToken = "invalid bearer token";

// --- Client certificates ----------------------------------------------------------------------

// Upstream pkg/authentication/request/x509/x509.go CommonNameUserConversion: the user is the
// subject's CN, the groups its O values in order. A subject without a CN authenticates no one
// (nullopt: the next authenticator decides), as upstream. The caller has verified the chain
// (the TLS handshake did). Upstream's UID from the subject (feature AllowParsingUserUIDFromCert
// Auth) and credential-id extra are not produced.
std::optional<UserInfo> UserFromCertificate(const x509_st* cert);

// --- Groups and the anonymous user -----------------------------------------------------------

// anonymous.go: system:anonymous in group system:unauthenticated.
UserInfo Anonymous();
// group/authenticated_group_adder.go: appends system:authenticated unless the user is
// system:anonymous or already has system:authenticated or system:unauthenticated.
void AddAuthenticatedGroup(UserInfo& user);

// Whether the default RBAC policy lets the anonymous user make this request: `method` GET (any
// case: upstream lower-cases it into the verb) on exactly /livez, /readyz, /healthz, /version
// or /version/. `path` is the URL path without the query.
bool AnonymousAllowedPath(std::string_view path, std::string_view method = "GET");

// --- The chain --------------------------------------------------------------------------------

struct AuthenticationResult {
  // Who; nullopt: answer 401 UnauthorizedError().
  std::optional<UserInfo> user;
  // For the log when the request fails ("invalid bearer token").
  std::string error;
  // Texts for `Warning: 299 - "<text>"` response headers.
  std::vector<std::string> warnings;
};

// kube-apiserver's chain (see the top of this file) for what kubetaint supports:
// `client_cert` (null without one) through UserFromCertificate, then the bearer token against
// `tokens` (null: no --token-auth-file, so bearer tokens are not examined), then, when
// `anonymous_auth`, the anonymous user. Non-anonymous users get system:authenticated. On
// success upstream deletes the Authorization header before the request goes on, so that no
// handler (or proxied request) ever sees the credential; callers should do the same.
AuthenticationResult AuthenticateRequest(std::string_view authorization, const x509_st* client_cert,
                                         const TokenFile* tokens, bool anonymous_auth);
// The same with the certificate as the TLS layer reports it once per connection (null: none).
// One that did not verify is an error, as upstream's x509 authenticator: 401, never anonymous.
AuthenticationResult AuthenticateRequest(std::string_view authorization,
                                         const ClientCertificate* client_cert,
                                         const TokenFile* tokens, bool anonymous_auth);

// --- Responses --------------------------------------------------------------------------------

// The 401 kube-apiserver sends for every authentication failure: NewUnauthorized("Unauthorized").
StatusError UnauthorizedError();

// authorizer.Attributes, as far as the 403 message uses them. (Default member initializers let
// designated initializers leave fields out under -Wextra.)
struct AuthorizationAttributes {
  std::string user{};  // the user's name
  std::string verb{};  // "list", "get", ...; for a non-resource request the lower-case method
  bool resource_request = false;
  std::string path{};  // non-resource requests
  std::string api_group{};
  std::string resource{};
  std::string subresource{};
  std::string namespace_{};
  std::string name{};
};

// responsewriters forbiddenMessage: `User "u" cannot get path "/api"`,
// `User "u" cannot list resource "pods" in API group "" at the cluster scope`,
// `User "u" cannot get resource "pods/log" in API group "" in the namespace "ns"`.
std::string ForbiddenMessage(const AuthorizationAttributes& a);
// responsewriters.Forbidden: NewForbidden(group resource, name, message[: reason]), with `&`,
// `<`, `>` in the message HTML-escaped as upstream does.
StatusError NewRequestForbidden(const AuthorizationAttributes& a, std::string_view reason = "");

}  // namespace kt::server
