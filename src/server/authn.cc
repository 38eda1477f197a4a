#include "server/authn.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "core/file.h"
#include "core/strings.h"
#include "core/validation.h"

namespace kt::server {

namespace {

// --- Go's encoding/csv ------------------------------------------------------------------------

constexpr std::string_view kErrBareQuote = "bare \" in non-quoted-field";
constexpr std::string_view kErrQuote = "extraneous or missing \" in quoted-field";

// csv.ParseError.Error(); columns are 1-based byte offsets (Go >= 1.17).
Status CsvParseError(int start_line, int line, size_t column, std::string_view err) {
  std::string out;
  if (start_line != line) out = "record on line " + std::to_string(start_line) + "; ";
  out += "parse error on line " + std::to_string(line) + ", column " + std::to_string(column) +
         ": " + std::string(err);
  return BadRequest(std::move(out));
}

size_t LengthNewline(std::string_view s) { return !s.empty() && s.back() == '\n' ? 1 : 0; }

// Go's csv.Reader as tokenfile.go sets it up: Comma ',', no Comment, FieldsPerRecord -1 (any
// number of fields), LazyQuotes and TrimLeadingSpace false. A line-by-line port of readLine and
// readRecord, so that what parses, and the line and column of what does not, match upstream.
class GoCsvReader {
 public:
  explicit GoCsvReader(std::string_view data) : data_(data) {}

  // The next record into `record`; false at the end of the input.
  Result<bool> Read(std::vector<std::string>& record) {
    std::string line;
    for (;;) {  // skip empty lines
      if (!ReadLine(line)) return false;
      if (line.size() != LengthNewline(line)) break;
    }
    const int record_line = num_line_;
    int pos_line = num_line_;
    size_t pos_col = 1;
    std::string_view rest = line;
    record.clear();
    std::string field;
    for (;;) {
      field.clear();
      if (rest.empty() || rest[0] != '"') {
        // Non-quoted field.
        size_t comma = rest.find(',');
        std::string_view text = comma != std::string_view::npos
                                    ? rest.substr(0, comma)
                                    : rest.substr(0, rest.size() - LengthNewline(rest));
        if (size_t quote = text.find('"'); quote != std::string_view::npos) {
          return Err(CsvParseError(record_line, num_line_, pos_col + quote, kErrBareQuote));
        }
        record.emplace_back(text);
        if (comma == std::string_view::npos) return true;
        rest.remove_prefix(comma + 1);
        pos_col += comma + 1;
        continue;
      }
      // Quoted field, possibly over several lines.
      rest.remove_prefix(1);
      pos_col += 1;
      for (;;) {
        size_t quote = rest.find('"');
        if (quote != std::string_view::npos) {
          field.append(rest.substr(0, quote));
          rest.remove_prefix(quote + 1);
          pos_col += quote + 1;
          if (!rest.empty() && rest[0] == '"') {  // "" is one quote
            field.push_back('"');
            rest.remove_prefix(1);
            pos_col += 1;
          } else if (!rest.empty() && rest[0] == ',') {  // end of field
            rest.remove_prefix(1);
            pos_col += 1;
            break;
          } else if (LengthNewline(rest) == rest.size()) {  // end of record
            record.push_back(std::move(field));
            return true;
          } else {
            return Err(CsvParseError(record_line, num_line_, pos_col - 1, kErrQuote));
          }
        } else if (!rest.empty()) {  // the field goes on at the next line
          field.append(rest);
          pos_col += rest.size();
          ReadLine(line);
          rest = line;
          if (!rest.empty()) {
            ++pos_line;
            pos_col = 1;
          }
        } else {  // end of input inside quotes
          return Err(CsvParseError(record_line, pos_line, pos_col, kErrQuote));
        }
      }
      record.push_back(std::move(field));
    }
  }

 private:
  // The next line with its '\n', "\r\n" read as "\n", a '\r' right before the end of input
  // dropped; false (and an empty line) at the end of input.
  bool ReadLine(std::string& line) {
    ++num_line_;
    line.clear();
    if (pos_ >= data_.size()) return false;
    size_t newline = data_.find('\n', pos_);
    size_t end = newline == std::string_view::npos ? data_.size() : newline + 1;
    line.assign(data_.substr(pos_, end - pos_));
    pos_ = end;
    if (newline == std::string_view::npos && !line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    if (line.size() >= 2 && line[line.size() - 2] == '\r' && line.back() == '\n') {
      line.erase(line.size() - 2, 1);
    }
    return true;
  }

  std::string_view data_;
  size_t pos_ = 0;
  int num_line_ = 0;
};

// Go's strings.Split(s, ","): "" gives one empty string.
std::vector<std::string> SplitComma(std::string_view s) {
  std::vector<std::string> out;
  for (;;) {
    size_t comma = s.find(',');
    out.emplace_back(s.substr(0, comma));
    if (comma == std::string_view::npos) return out;
    s.remove_prefix(comma + 1);
  }
}

// --- Helpers ----------------------------------------------------------------------------------

bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// strings.TrimSpace for the bytes an HTTP header can hold.
std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && IsAsciiSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsAsciiSpace(s.back())) s.remove_suffix(1);
  return s;
}

// The values of one attribute of a certificate subject, in order (Go's pkix.Name fills
// Organization this way).
std::vector<std::string> SubjectEntries(const X509_NAME* name, int nid) {
  std::vector<std::string> out;
  for (int i = X509_NAME_get_index_by_NID(name, nid, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(name, nid, i)) {
    const ASN1_STRING* value = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
    out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(value)),
                     static_cast<size_t>(ASN1_STRING_length(value)));
  }
  return out;
}

// responsewriters' sanitizer: no error text that looks like HTML.
std::string EscapeHtml(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

// --- TokenFile --------------------------------------------------------------------------------

size_t TokenFile::DigestHash::operator()(const Digest& d) const {
  size_t h;  // the digest is uniformly random already
  std::memcpy(&h, d.data(), sizeof(h));
  return h;
}

namespace {

std::array<unsigned char, 32> Sha256(std::string_view s) {
  std::array<unsigned char, 32> digest{};
  unsigned int len = 0;
  // Fails only without memory. Carrying on would give every token the same (zero) digest, and
  // so any token would match any other: stop instead.
  if (EVP_Digest(s.data(), s.size(), digest.data(), &len, EVP_sha256(), nullptr) != 1) {
    std::abort();
  }
  return digest;
}

}  // namespace

const UserInfo* TokenFile::Authenticate(std::string_view token) const {
  if (users_.empty()) return nullptr;
  auto it = users_.find(Sha256(token));
  return it == users_.end() ? nullptr : &it->second;
}

Result<TokenFile> ParseTokenFile(std::string_view contents, std::string_view path) {
  const std::string file(path);
  GoCsvReader reader(contents);
  TokenFile out;
  std::vector<std::string> record;
  int record_num = 0;
  for (;;) {
    Result<bool> more = reader.Read(record);
    if (!more) return Err(more.error().WithPrefix("token file '" + file + "': "));
    if (!*more) break;
    if (record.size() < 3) {
      return Err(BadRequest("token file '" + file +
                            "' must have at least 3 columns (token, user name, user uid), found " +
                            std::to_string(record.size())));
    }
    ++record_num;
    if (record[0].empty()) {
      out.warnings_.push_back("empty token has been found in token file '" + file +
                              "', record number '" + std::to_string(record_num) + "'");
      continue;
    }
    UserInfo user{std::move(record[1]), std::move(record[2]), {}};
    if (record.size() >= 4) user.groups = SplitComma(record[3]);
    auto [it, inserted] = out.users_.insert_or_assign(Sha256(record[0]), std::move(user));
    if (!inserted) {
      out.warnings_.push_back("duplicate token has been found in token file '" + file +
                              "', record number '" + std::to_string(record_num) + "'");
    }
  }
  return out;
}

Result<TokenFile> LoadTokenFile(const std::filesystem::path& path) {
  Result<std::string> contents = ReadFile(path);
  if (!contents) return Err(contents.error());
  return ParseTokenFile(*contents, path.string());
}

// --- Bearer tokens ----------------------------------------------------------------------------

BearerToken ParseBearerToken(std::string_view authorization) {
  std::string_view auth = TrimSpace(authorization);
  // strings.SplitN(auth, " ", 3): the scheme, the token, and the rest.
  size_t first = auth.find(' ');
  if (first == std::string_view::npos) return {};
  if (!EqualFoldAscii(auth.substr(0, first), "bearer")) return {};
  std::string_view after = auth.substr(first + 1);
  size_t second = after.find(' ');
  std::string_view token = after.substr(0, second);
  if (token.empty()) return {"", second != std::string_view::npos};
  return {token, false};
}

// --- Client certificates ----------------------------------------------------------------------

std::optional<UserInfo> UserFromCertificate(const x509_st* cert) {
  if (cert == nullptr) return std::nullopt;
  const X509_NAME* subject = X509_get_subject_name(cert);
  // Go's pkix.Name keeps the last CN when a subject has several.
  std::vector<std::string> cn = SubjectEntries(subject, NID_commonName);
  if (cn.empty() || cn.back().empty()) return std::nullopt;
  return UserInfo{std::move(cn.back()), "", SubjectEntries(subject, NID_organizationName)};
}

// --- Groups and the anonymous user -----------------------------------------------------------

UserInfo Anonymous() {
  return UserInfo{std::string(kAnonymousUser), "", {std::string(kAllUnauthenticated)}};
}

void AddAuthenticatedGroup(UserInfo& user) {
  if (user.name == kAnonymousUser) return;
  for (const std::string& g : user.groups) {
    if (g == kAllAuthenticated || g == kAllUnauthenticated) return;
  }
  user.groups.emplace_back(kAllAuthenticated);
}

bool AnonymousAllowedPath(std::string_view path, std::string_view method) {
  if (!EqualFoldAscii(method, "GET")) return false;
  for (std::string_view allowed : {"/livez", "/readyz", "/healthz", "/version", "/version/"}) {
    if (path == allowed) return true;
  }
  return false;
}

// --- The chain --------------------------------------------------------------------------------

AuthenticationResult AuthenticateRequest(std::string_view authorization, const x509_st* client_cert,
                                         const TokenFile* tokens, bool anonymous_auth) {
  ClientCertificate cert;
  if (std::optional<UserInfo> user = UserFromCertificate(client_cert)) {
    cert.verified = true;
    cert.common_name = std::move(user->name);
    cert.organizations = std::move(user->groups);
  }
  return AuthenticateRequest(authorization, cert.verified ? &cert : nullptr, tokens,
                             anonymous_auth);
}

AuthenticationResult AuthenticateRequest(std::string_view authorization,
                                         const ClientCertificate* client_cert,
                                         const TokenFile* tokens, bool anonymous_auth) {
  AuthenticationResult out;
  if (client_cert != nullptr && !client_cert->verified) {
    out.error = "x509: " + client_cert->verify_error;
    return out;
  }
  if (client_cert != nullptr && !client_cert->common_name.empty()) {
    out.user = UserInfo{client_cert->common_name, "", client_cert->organizations};
  } else if (tokens != nullptr) {
    BearerToken bearer = ParseBearerToken(authorization);
    if (bearer.space_before_token) out.warnings.emplace_back(kInvalidTokenWithSpaceWarning);
    if (!bearer.token.empty()) {
      const UserInfo* user = tokens->Authenticate(bearer.token);
      if (user == nullptr) {
        // An error, not "no credentials": never anonymous (config.go NewFailOnError).
        out.error = kInvalidBearerToken;
        return out;
      }
      out.user = *user;
    }
  }
  if (out.user) {
    AddAuthenticatedGroup(*out.user);
  } else if (anonymous_auth) {
    out.user = Anonymous();
  }
  return out;
}

// --- Responses --------------------------------------------------------------------------------

StatusError UnauthorizedError() { return NewUnauthorized("Unauthorized"); }

std::string ForbiddenMessage(const AuthorizationAttributes& a) {
  std::string out = "User " + GoQuote(a.user) + " cannot " + std::string(a.verb);
  if (!a.resource_request) return out + " path " + GoQuote(a.path);
  std::string resource(a.resource);
  if (!a.subresource.empty()) resource.append("/").append(a.subresource);
  out += " resource " + GoQuote(resource) + " in API group " + GoQuote(a.api_group);
  if (!a.namespace_.empty()) return out + " in the namespace " + GoQuote(a.namespace_);
  return out + " at the cluster scope";
}

StatusError NewRequestForbidden(const AuthorizationAttributes& a, std::string_view reason) {
  std::string message = EscapeHtml(ForbiddenMessage(a));
  if (!reason.empty()) message.append(": ").append(reason);
  return NewForbidden(a.api_group, a.resource, a.name, message);
}

}  // namespace kt::server
