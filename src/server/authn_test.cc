#include "server/authn.h"

#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <openssl/x509.h>

#include "server/internal/openssl_ptr.h"
#include "store/store_test_util.h"

namespace kt::server {
namespace {

// --- Token file -------------------------------------------------------------------------------
// Sources: k8s.io/apiserver pkg/authentication/token/tokenfile/tokenfile.go (NewCSV) and its
// tokenfile_test.go; Go's encoding/csv reader.go (the parser NewCSV uses, defaults but
// FieldsPerRecord = -1).

constexpr std::string_view kPath = "/etc/tokens.csv";

struct TokenRow {
  const char* name;
  std::string contents;
  std::string error;  // the whole message; empty: loads
  std::vector<std::pair<std::string, UserInfo>> users;
  std::vector<std::string> unknown;  // tokens that must not authenticate
  std::vector<std::string> warnings;
};

std::string Cols(int n) {
  return "token file '/etc/tokens.csv' must have at least 3 columns (token, user name, user "
         "uid), found " +
         std::to_string(n);
}

const TokenRow kTokenRows[] = {
    {"upstream TestTokenFile (tokenfile_test.go): groups quoted or not, extra columns ignored",
     "\ntoken1,user1,uid1\ntoken2,user2,uid2\ntoken3,user3,uid3,\"group1,group2\"\n"
     "token4,user4,uid4,\"group2\"\ntoken5,user5,uid5,group5\n"
     "token6,user6,uid6,group5,otherdata\ntoken7,user7,uid7,\"group1,group2\",otherdata\n",
     "",
     {{"token1", {"user1", "uid1", {}}},
      {"token2", {"user2", "uid2", {}}},
      {"token3", {"user3", "uid3", {"group1", "group2"}}},
      {"token4", {"user4", "uid4", {"group2"}}},
      {"token5", {"user5", "uid5", {"group5"}}},
      {"token6", {"user6", "uid6", {"group5"}}},
      {"token7", {"user7", "uid7", {"group1", "group2"}}}},
     {"token8", "", "Token1"},
     {}},
    {"fewer than 3 columns (TestInsufficientColumnsTokenFile)", "token4\n", Cols(1), {}, {}, {}},
    {"a short record after good ones (TestBadTokenFile)",
     "\ntoken1,user1,uid1\ntoken2,user2,uid2\ntoken3,user3\ntoken4\n",
     Cols(2),
     {},
     {},
     {}},
    {"a line of spaces is a record of one field, not an empty line (csv: blank lines)",
     "tok,user,uid\n   \n",
     Cols(1),
     {},
     {},
     {}},
    {"empty token skipped with a warning (TestEmptyTokenTokenFile)",
     ",user5,uid5\n",
     "",
     {},
     {""},
     {"empty token has been found in token file '/etc/tokens.csv', record number '1'"}},
    {"quoted empty token is empty too",
     "\"\",user,uid\n",
     "",
     {},
     {""},
     {"empty token has been found in token file '/etc/tokens.csv', record number '1'"}},
    {"duplicate token: the later record wins, with a warning",
     "tok,first,1\ntok,second,2\n",
     "",
     {{"tok", {"second", "2", {}}}},
     {},
     {"duplicate token has been found in token file '/etc/tokens.csv', record number '2'"}},
    {"record numbers count records, not lines",
     "\na,user,1\n\n\n,user,2\n",
     "",
     {{"a", {"user", "1", {}}}},
     {},
     {"empty token has been found in token file '/etc/tokens.csv', record number '2'"}},
    {"leading spaces are part of fields (TrimLeadingSpace false)",
     " tok, user,uid\n",
     "",
     {{" tok", {" user", "uid", {}}}},
     {"tok"},
     {}},
    {"groups split at every comma, no trimming",
     "tok,user,uid,\"g1, g2,\"\n",
     "",
     {{"tok", {"user", "uid", {"g1", " g2", ""}}}},
     {},
     {}},
    {"an empty 4th column is one empty group (strings.Split(\"\", \",\"))",
     "tok,user,uid,\n",
     "",
     {{"tok", {"user", "uid", {""}}}},
     {},
     {}},
    {"\"\" inside a quoted field is a quote",
     "\"a\"\"b\",user,uid\n",
     "",
     {{"a\"b", {"user", "uid", {}}}},
     {"a\"\"b", "ab"},
     {}},
    {"a quoted field may span lines",
     "tok,user,uid,\"g1\ng2\"\n",
     "",
     {{"tok", {"user", "uid", {"g1\ng2"}}}},
     {},
     {}},
    {"CRLF reads as LF, a final CR is dropped, blank lines skipped",
     "\r\n\na,user,uid\r\nb,user,uid\r",
     "",
     {{"a", {"user", "uid", {}}}, {"b", {"user", "uid", {}}}},
     {},
     {}},
    {"no comment syntax", "#tok,user,uid\n", "", {{"#tok", {"user", "uid", {}}}}, {"tok"}, {}},
    {"empty file", "", "", {}, {"tok"}, {}},
    {"bare quote in an unquoted field (csv ErrBareQuote; column is 1-based bytes)",
     "tok,user,uid, \"g1,g2\"\n",
     "token file '/etc/tokens.csv': parse error on line 1, column 15: bare \" in "
     "non-quoted-field",
     {},
     {},
     {}},
    {"text after a closing quote (csv ErrQuote)",
     "\"tok\"x,user,uid\n",
     "token file '/etc/tokens.csv': parse error on line 1, column 5: extraneous or missing \" in "
     "quoted-field",
     {},
     {},
     {}},
    {"unterminated quote at the end of the file (csv ErrQuote)",
     "tok,user,uid,\"g1",
     "token file '/etc/tokens.csv': parse error on line 1, column 17: extraneous or missing \" "
     "in quoted-field",
     {},
     {},
     {}},
    {"an error inside a multi-line record names both lines",
     "ok,user,uid\ntok,user,uid,\"g1\ng2\"x\n",
     "token file '/etc/tokens.csv': record on line 2; parse error on line 3, column 3: "
     "extraneous or missing \" in quoted-field",
     {},
     {},
     {}},
};

TEST(TokenFileTest, UpstreamParsingRules) {
  for (const TokenRow& row : kTokenRows) {
    SCOPED_TRACE(row.name);
    Result<TokenFile> file = ParseTokenFile(row.contents, kPath);
    if (!row.error.empty()) {
      ASSERT_FALSE(file);
      EXPECT_EQ(file.error().message(), row.error);
      continue;
    }
    ASSERT_TRUE(file) << file.error().ToString();
    EXPECT_EQ(file->size(), row.users.size());
    for (const auto& [token, user] : row.users) {
      const UserInfo* got = file->Authenticate(token);
      ASSERT_NE(got, nullptr) << token;
      EXPECT_EQ(*got, user) << token;
    }
    for (const std::string& token : row.unknown) EXPECT_EQ(file->Authenticate(token), nullptr);
    EXPECT_EQ(file->warnings(), row.warnings);
  }
}

TEST(TokenFileTest, LoadReadsTheFileAndNamesItOnError) {
  store::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::ofstream(dir.File("tokens.csv")) << "secret,alice,u-1,\"dev,ops\"\n";
  Result<TokenFile> file = LoadTokenFile(dir.File("tokens.csv"));
  ASSERT_TRUE(file) << file.error().ToString();
  ASSERT_NE(file->Authenticate("secret"), nullptr);
  EXPECT_EQ(file->Authenticate("secret")->name, "alice");

  // Go's os.Open error, as kube-apiserver prints it.
  Result<TokenFile> missing = LoadTokenFile(dir.File("nope.csv"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.error().message(),
            "open " + dir.File("nope.csv") + ": no such file or directory");
}

// --- Bearer tokens ----------------------------------------------------------------------------
// Source: k8s.io/apiserver pkg/authentication/request/bearertoken/bearertoken.go and its
// bearertoken_test.go.

TEST(BearerTokenTest, HeaderParsing) {
  struct Row {
    std::string_view header;
    std::string_view token;  // empty: not a bearer credential (no error)
    bool warning;
  } rows[] = {
      {"Bearer token", "token", false},        // TestAuthenticateRequest
      {"bearer token", "token", false},        // scheme without case
      {"BEARER token", "token", false},        //
      {"  Bearer token \t", "token", false},   // trimmed
      {"Bearer token a", "token", false},      // TestAuthenticateRequestIncludingValueAfterToken
      {"Bearer token a b c", "token", false},  //
      {"Bearer token   a", "token", false},    //
      {"", "", false},                         // TestAuthenticateRequestBadValue
      {"Bearer", "", false},                   //
      {"bear token", "", false},               //
      {"Bearer: token", "", false},            //
      {"Bearer ", "", false},                  // TestBearerToken "empty bearer token"
      {"Basic 123", "", false},                // "non-bearer header"
      {"Bearer\ttoken", "", false},            // split at spaces only
      {"Bearer  token", "", true},             // space before the token: warned, ignored
  };
  for (const Row& row : rows) {
    BearerToken got = ParseBearerToken(row.header);
    EXPECT_EQ(got.token, row.token) << "[" << row.header << "]";
    EXPECT_EQ(got.space_before_token, row.warning) << "[" << row.header << "]";
  }
}

// --- Client certificates ----------------------------------------------------------------------

// A certificate with this subject (O values first, then the CN unless empty). Only the subject
// matters to UserFromCertificate: the TLS layer has verified the chain before it is called.
internal::X509Ptr CertWithSubject(const std::string& cn,
                                  const std::vector<std::string>& organizations) {
  internal::X509Ptr cert(X509_new());
  X509_NAME* name = X509_get_subject_name(cert.get());
  auto add = [&](int nid, const std::string& value) {
    X509_NAME_add_entry_by_NID(name, nid, MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(value.data()),
                               static_cast<int>(value.size()), -1, 0);
  };
  for (const std::string& o : organizations) add(NID_organizationName, o);
  if (!cn.empty()) add(NID_commonName, cn);
  return cert;
}

// Source: k8s.io/apiserver pkg/authentication/request/x509/x509.go CommonNameUserConversion.
TEST(UserFromCertificateTest, CommonNameIsTheUserAndOrganizationsTheGroups) {
  auto cert = CertWithSubject("jane", {"dev", "system:masters"});
  std::optional<UserInfo> user = UserFromCertificate(cert.get());
  ASSERT_TRUE(user);
  EXPECT_EQ(*user, (UserInfo{"jane", "", {"dev", "system:masters"}}));

  EXPECT_EQ(UserFromCertificate(CertWithSubject("bob", {}).get()), (UserInfo{"bob", "", {}}));
  // No CN: not authenticated by this certificate (the next authenticator decides).
  EXPECT_EQ(UserFromCertificate(CertWithSubject("", {"dev"}).get()), std::nullopt);
  EXPECT_EQ(UserFromCertificate(nullptr), std::nullopt);
  // Several CNs: Go's pkix.Name keeps the last one.
  auto two = CertWithSubject("first", {});
  X509_NAME_add_entry_by_NID(X509_get_subject_name(two.get()), NID_commonName, MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>("second"), -1, -1, 0);
  ASSERT_TRUE(UserFromCertificate(two.get()));
  EXPECT_EQ(UserFromCertificate(two.get())->name, "second");
}

// --- Groups, anonymous, the chain -------------------------------------------------------------

// Source: group/authenticated_group_adder.go, request/anonymous/anonymous.go.
TEST(AuthenticatedGroupsTest, Rules) {
  struct Row {
    UserInfo in;
    std::vector<std::string> groups;
  } rows[] = {
      {{"alice", "", {}}, {"system:authenticated"}},
      {{"alice", "", {"dev"}}, {"dev", "system:authenticated"}},
      {{"alice", "", {"system:authenticated", "dev"}}, {"system:authenticated", "dev"}},
      {{"odd", "", {"system:unauthenticated"}}, {"system:unauthenticated"}},
      {{"system:anonymous", "", {}}, {}},
  };
  for (Row& row : rows) {
    AddAuthenticatedGroup(row.in);
    EXPECT_EQ(row.in.groups, row.groups) << row.in.name;
  }
  EXPECT_EQ(Anonymous(), (UserInfo{"system:anonymous", "", {"system:unauthenticated"}}));
}

// Source: pkg/kubeapiserver/authenticator/config.go (union, AuthenticatedGroupAdder,
// NewFailOnError with anonymous).
TEST(AuthenticateRequestTest, Chain) {
  Result<TokenFile> tokens = ParseTokenFile("secret,alice,u-1,dev\n", kPath);
  ASSERT_TRUE(tokens);
  auto cert = CertWithSubject("jane", {"ops"});
  const UserInfo alice{"alice", "u-1", {"dev", "system:authenticated"}};
  const UserInfo jane{"jane", "", {"ops", "system:authenticated"}};
  struct Row {
    const char* name;
    std::string_view authorization;
    const x509_st* cert;
    const TokenFile* tokens;
    bool anonymous_auth;
    std::optional<UserInfo> user;
    std::string error;
    std::vector<std::string> warnings;
  } rows[] = {
      {"valid token", "Bearer secret", nullptr, &*tokens, true, alice, "", {}},
      {"valid token, anonymous off", "Bearer secret", nullptr, &*tokens, false, alice, "", {}},
      {"wrong token is 401 even with anonymous",
       "Bearer nope",
       nullptr,
       &*tokens,
       true,
       std::nullopt,
       "invalid bearer token",
       {}},
      {"no credentials, anonymous on", "", nullptr, &*tokens, true, Anonymous(), "", {}},
      {"no credentials, anonymous off", "", nullptr, &*tokens, false, std::nullopt, "", {}},
      {"other scheme is no credentials",
       "Basic YTpi",
       nullptr,
       &*tokens,
       true,
       Anonymous(),
       "",
       {}},
      {"space before token: ignored with a warning",
       "Bearer  secret",
       nullptr,
       &*tokens,
       true,
       Anonymous(),
       "",
       {std::string(kInvalidTokenWithSpaceWarning)}},
      {"no token file: bearer tokens not examined",
       "Bearer secret",
       nullptr,
       nullptr,
       true,
       Anonymous(),
       "",
       {}},
      {"client certificate", "", cert.get(), &*tokens, false, jane, "", {}},
      {"client certificate first, token unused",
       "Bearer nope",
       cert.get(),
       &*tokens,
       false,
       jane,
       "",
       {}},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    AuthenticationResult got =
        AuthenticateRequest(row.authorization, row.cert, row.tokens, row.anonymous_auth);
    EXPECT_EQ(got.user, row.user);
    EXPECT_EQ(got.error, row.error);
    EXPECT_EQ(got.warnings, row.warnings);
  }
}

// Source: plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go (system:public-info-viewer)
// and rbac/v1 helpers NonResourceURLMatches (exact unless the rule ends in '*').
TEST(AnonymousAllowedPathTest, DefaultRbacPublicInfoViewer) {
  struct Row {
    std::string_view method, path;
    bool allowed;
  } rows[] = {
      {"GET", "/livez", true},
      {"GET", "/readyz", true},
      {"GET", "/healthz", true},
      {"GET", "/version", true},
      {"GET", "/version/", true},
      {"get", "/healthz", true},
      {"GET", "/livez/ping", false},
      {"GET", "/readyz/etcd", false},
      {"GET", "/healthz/", false},
      {"GET", "/api", false},
      {"GET", "/apis", false},
      {"GET", "/metrics", false},
      {"GET", "/api/v1/pods", false},
      {"HEAD", "/healthz", false},
      {"POST", "/version", false},
      {"GET", "/HEALTHZ", false},
      {"GET", "", false},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(AnonymousAllowedPath(row.path, row.method), row.allowed)
        << row.method << " " << row.path;
  }
  EXPECT_TRUE(AnonymousAllowedPath("/readyz"));  // GET by default
}

// --- Responses --------------------------------------------------------------------------------

// Source: k8s.io/apiserver pkg/endpoints/filters/authentication.go Unauthorized.
TEST(AuthnResponsesTest, Unauthorized) {
  StatusError e = UnauthorizedError();
  EXPECT_EQ(e.code, 401);
  EXPECT_EQ(e.Json(), R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                      R"("message":"Unauthorized","reason":"Unauthorized","code":401})");
  EXPECT_EQ(NewUnauthorized("").message, "not authorized");  // apimachinery errors.go
}

// Source: k8s.io/apiserver pkg/endpoints/handlers/responsewriters/errors.go Forbidden and
// forbiddenMessage; apimachinery errors.go NewForbidden.
TEST(AuthnResponsesTest, Forbidden) {
  struct Row {
    const char* name;
    AuthorizationAttributes attributes;
    std::string_view reason;
    std::string json;
  } rows[] = {
      {"anonymous list pods at the cluster scope",
       {.user = "system:anonymous", .verb = "list", .resource_request = true, .resource = "pods"},
       "",
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
       R"("message":"pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" )"
       R"(in API group \"\" at the cluster scope","reason":"Forbidden",)"
       R"("details":{"kind":"pods"},"code":403})"},
      {"non-resource path",
       {.user = "system:anonymous", .verb = "get", .path = "/api"},
       "",
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
       R"("message":"forbidden: User \"system:anonymous\" cannot get path \"/api\"",)"
       R"("reason":"Forbidden","details":{},"code":403})"},
      {"named, namespaced, subresource",
       {.user = "bob",
        .verb = "get",
        .resource_request = true,
        .resource = "pods",
        .subresource = "log",
        .namespace_ = "default",
        .name = "web"},
       "",
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
       R"("message":"pods \"web\" is forbidden: User \"bob\" cannot get resource \"pods/log\" )"
       R"(in API group \"\" in the namespace \"default\"","reason":"Forbidden",)"
       R"("details":{"name":"web","kind":"pods"},"code":403})"},
      {"grouped resource, with the authorizer's reason",
       {.user = "bob",
        .verb = "list",
        .resource_request = true,
        .api_group = "apps",
        .resource = "deployments",
        .namespace_ = "ns"},
       R"(RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found)",
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
       R"("message":"deployments.apps is forbidden: User \"bob\" cannot list resource )"
       R"(\"deployments\" in API group \"apps\" in the namespace \"ns\": RBAC: )"
       R"(clusterrole.rbac.authorization.k8s.io \"gone\" not found","reason":"Forbidden",)"
       R"("details":{"group":"apps","kind":"deployments"},"code":403})"},
      {"HTML in the message is escaped",
       {.user = "system:anonymous", .verb = "get", .path = "/<b>&"},
       "",
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
       R"("message":"forbidden: User \"system:anonymous\" cannot get path \"/&lt;b&gt;&amp;\"",)"
       R"("reason":"Forbidden","details":{},"code":403})"},
  };
  for (const Row& row : rows) {
    StatusError e = NewRequestForbidden(row.attributes, row.reason);
    EXPECT_EQ(e.code, 403) << row.name;
    EXPECT_EQ(e.Json(), row.json) << row.name;
  }
}

}  // namespace
}  // namespace kt::server
