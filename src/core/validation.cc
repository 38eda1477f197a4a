#include "core/validation.h"
#include "core/strings.h"

#include <cstdint>
#include <optional>
#include <unordered_set>

namespace kt {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// ---- UTF-8 ---------------------------------------------------------------------------------

constexpr char32_t kRuneError = 0xFFFD;

// Go's utf8.DecodeRune: rejects overlong forms, surrogates and code points past U+10FFFF; an
// invalid sequence decodes as (RuneError, 1).
char32_t DecodeRune(std::string_view s, size_t& width) {
  auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char c0 = b(0);
  width = 1;
  if (c0 < 0x80) return c0;
  auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  if (c0 >= 0xC2 && c0 <= 0xDF) {
    if (!cont(1)) return kRuneError;
    width = 2;
    return (char32_t(c0 & 0x1F) << 6) | (b(1) & 0x3F);
  }
  if (c0 >= 0xE0 && c0 <= 0xEF) {
    if (!cont(1) || !cont(2)) return kRuneError;
    unsigned char c1 = b(1);
    if (c0 == 0xE0 && c1 < 0xA0) return kRuneError;  // overlong
    if (c0 == 0xED && c1 > 0x9F) return kRuneError;  // surrogate
    width = 3;
    return (char32_t(c0 & 0x0F) << 12) | (char32_t(c1 & 0x3F) << 6) | (b(2) & 0x3F);
  }
  if (c0 >= 0xF0 && c0 <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return kRuneError;
    unsigned char c1 = b(1);
    if (c0 == 0xF0 && c1 < 0x90) return kRuneError;  // overlong
    if (c0 == 0xF4 && c1 > 0x8F) return kRuneError;  // > U+10FFFF
    width = 4;
    return (char32_t(c0 & 0x07) << 18) | (char32_t(c1 & 0x3F) << 12) |
           (char32_t(b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
  return kRuneError;
}

// Go's unicode.IsPrint for non-ASCII runes: letters, marks, numbers, punctuation and symbols.
// We treat every assigned-looking rune as printable except the controls, spaces, format
// characters and private-use ranges listed here; unassigned code points, which Go also escapes,
// are not modelled (they are vanishingly rare in taint keys and values).
bool IsPrintNonAscii(char32_t r) {
  struct Range {
    char32_t lo, hi;
  };
  static constexpr Range kNotPrint[] = {
      {0x0080, 0x00A0},    {0x00AD, 0x00AD},   {0x0600, 0x0605},   {0x061C, 0x061C},
      {0x06DD, 0x06DD},    {0x070F, 0x070F},   {0x0890, 0x0891},   {0x08E2, 0x08E2},
      {0x1680, 0x1680},    {0x180E, 0x180E},   {0x2000, 0x200F},   {0x2028, 0x202F},
      {0x205F, 0x206F},    {0x3000, 0x3000},   {0xD800, 0xF8FF},   {0xFEFF, 0xFEFF},
      {0xFFF0, 0xFFFB},    {0xFFFE, 0xFFFF},   {0x110BD, 0x110BD}, {0x110CD, 0x110CD},
      {0x13430, 0x1343F},  {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0000, 0xE0FFF},
      {0xF0000, 0x10FFFF},
  };
  for (const Range& range : kNotPrint) {
    if (r < range.lo) return true;
    if (r <= range.hi) return false;
  }
  return true;
}

void AppendHex(std::string& out, uint32_t v, int digits) {
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += kHex[(v >> shift) & 0xF];
}

// ---- Messages (apimachinery api/validate/content, 1.35) ------------------------------------

constexpr std::string_view kEmptyMsg = "must be non-empty";
constexpr std::string_view kLabelKeyRegexMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
constexpr std::string_view kLabelKeySuffixMsg =
    " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
constexpr std::string_view kLabelValueRegexMsg =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
constexpr std::string_view kDNS1123SubdomainRegexMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
constexpr std::string_view kDNS1123LabelRegexMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
constexpr std::string_view kDecimalIntegerMsg = "must be a valid decimal integer in canonical form";

constexpr size_t kLabelKeyNameMaxLength = 63;
constexpr size_t kLabelValueMaxLength = 63;
constexpr size_t kDNS1123SubdomainMaxLength = 253;
constexpr size_t kDNS1123LabelMaxLength = 63;

std::string MaxLenError(size_t n) { return "must be no more than " + std::to_string(n) + " bytes"; }

std::string Concat(std::string_view a, std::string_view b, std::string_view c = {}) {
  std::string out;
  out.reserve(a.size() + b.size() + c.size());
  out.append(a).append(b).append(c);
  return out;
}

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool MatchesLabelName(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool MatchesDNS1123Label(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// DNS-1123 labels joined by '.'.
bool MatchesDNS1123Subdomain(std::string_view s) {
  while (true) {
    size_t dot = s.find('.');
    if (!MatchesDNS1123Label(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

// Go's strconv.ParseInt(s, 10, 64): nullopt when it parses, else the error text
// (`strconv.ParseInt: parsing "x": invalid syntax` or `...: value out of range`).
std::optional<std::string> ParseInt64Error(std::string_view s0) {
  enum class Err { kNone, kSyntax, kRange } err = Err::kNone;
  std::string_view s = s0;
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  uint64_t n = 0;
  if (s.empty()) {
    err = Err::kSyntax;
  } else {
    constexpr uint64_t kCutoff = UINT64_MAX / 10 + 1;
    for (char c : s) {
      if (c < '0' || c > '9') {
        err = Err::kSyntax;
        break;
      }
      // Go's ParseUint stops at the first overflow, before looking at later characters.
      if (n >= kCutoff) {
        err = Err::kRange;
        break;
      }
      uint64_t next = n * 10 + static_cast<uint64_t>(c - '0');
      if (next < n * 10) {
        err = Err::kRange;
        break;
      }
      n = next;
    }
    if (err == Err::kNone) {
      constexpr uint64_t kSignedCutoff = uint64_t{1} << 63;
      if ((!neg && n >= kSignedCutoff) || (neg && n > kSignedCutoff)) err = Err::kRange;
    }
  }
  if (err == Err::kNone) return std::nullopt;
  std::string out = "strconv.ParseInt: parsing ";
  out += GoQuote(s0);
  out += err == Err::kSyntax ? ": invalid syntax" : ": value out of range";
  return out;
}

bool IsValidTaintEffect(std::string_view e) {
  return e == kEffectNoSchedule || e == kEffectPreferNoSchedule || e == kEffectNoExecute;
}

constexpr std::string_view kTaintEffects[] = {kEffectNoSchedule, kEffectPreferNoSchedule,
                                              kEffectNoExecute};
constexpr std::string_view kBasicOperators[] = {kOpEqual, kOpExists};
constexpr std::string_view kAllOperators[] = {kOpEqual, kOpExists, kOpLt, kOpGt};

// "<path>[<i>].<child>" (child empty: "<path>[<i>]"). Built only when there is an error.
std::string IndexPath(std::string_view path, size_t i, std::string_view child = {}) {
  std::string out(path);
  out += '[';
  out += std::to_string(i);
  out += ']';
  if (!child.empty()) {
    out += '.';
    out += child;
  }
  return out;
}

}  // namespace

// ---- FieldError ------------------------------------------------------------------------------

FieldError FieldError::Invalid(std::string field, std::string rendered_value, std::string detail) {
  return FieldError{Type::kInvalid, std::move(field), std::move(rendered_value), std::move(detail)};
}

FieldError FieldError::Required(std::string field, std::string detail) {
  return FieldError{Type::kRequired, std::move(field), {}, std::move(detail)};
}

FieldError FieldError::Forbidden(std::string field, std::string detail) {
  return FieldError{Type::kForbidden, std::move(field), {}, std::move(detail)};
}

FieldError FieldError::Duplicate(std::string field, std::string rendered_value) {
  return FieldError{Type::kDuplicate, std::move(field), std::move(rendered_value), {}};
}

FieldError FieldError::NotSupported(std::string field, std::string rendered_value,
                                    std::span<const std::string_view> valid_values) {
  std::string detail;
  if (!valid_values.empty()) {
    detail = "supported values: ";
    for (size_t i = 0; i < valid_values.size(); ++i) {
      if (i > 0) detail += ", ";
      detail += GoQuote(valid_values[i]);
    }
  }
  return FieldError{Type::kNotSupported, std::move(field), std::move(rendered_value),
                    std::move(detail)};
}

std::string FieldError::ErrorBody() const {
  std::string out;
  switch (type) {
    case Type::kNotFound:
      out = "Not found";
      break;
    case Type::kRequired:
      out = "Required value";
      break;
    case Type::kDuplicate:
      out = "Duplicate value";
      break;
    case Type::kInvalid:
      out = "Invalid value";
      break;
    case Type::kNotSupported:
      out = "Unsupported value";
      break;
    case Type::kForbidden:
      out = "Forbidden";
      break;
    case Type::kTooLong:
      out = "Too long";
      break;
    case Type::kTooMany:
      out = "Too many";
      break;
    case Type::kInternal:
      out = "Internal error";
      break;
  }
  // Upstream prints no value for these types.
  bool omit_value = type == Type::kRequired || type == Type::kForbidden || type == Type::kTooLong ||
                    type == Type::kInternal;
  if (!omit_value) {
    out += ": ";
    out += bad_value;
  }
  if (!detail.empty()) {
    out += ": ";
    out += detail;
  }
  return out;
}

std::string FieldError::ToString() const {
  std::string out = field;
  out += ": ";
  out += ErrorBody();
  return out;
}

std::string_view FieldError::Reason() const {
  switch (type) {
    case Type::kNotFound:
      return "FieldValueNotFound";
    case Type::kRequired:
      return "FieldValueRequired";
    case Type::kDuplicate:
      return "FieldValueDuplicate";
    case Type::kInvalid:
      return "FieldValueInvalid";
    case Type::kNotSupported:
      return "FieldValueNotSupported";
    case Type::kForbidden:
      return "FieldValueForbidden";
    case Type::kTooLong:
      return "FieldValueTooLong";
    case Type::kTooMany:
      return "FieldValueTooMany";
    case Type::kInternal:
      return "InternalError";
  }
  return "FieldValueInvalid";
}

// ---- Rendering -------------------------------------------------------------------------------

std::string GoQuote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    size_t width = 1;
    char32_t r = DecodeRune(s.substr(i), width);
    if (r == kRuneError && width == 1) {
      out += "\\x";
      AppendHex(out, static_cast<unsigned char>(s[i]), 2);
      ++i;
      continue;
    }
    if (r == '"' || r == '\\') {
      out += '\\';
      out += static_cast<char>(r);
    } else if (r >= 0x20 && r < 0x7F) {
      out += static_cast<char>(r);
    } else if (r >= 0x80 && IsPrintNonAscii(r)) {
      out.append(s.substr(i, width));
    } else {
      switch (r) {
        case '\a':
          out += "\\a";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\v':
          out += "\\v";
          break;
        default:
          if (r < 0x20 || r == 0x7F) {
            out += "\\x";
            AppendHex(out, r, 2);
          } else if (r < 0x10000) {
            out += "\\u";
            AppendHex(out, r, 4);
          } else {
            out += "\\U";
            AppendHex(out, r, 8);
          }
      }
    }
    i += width;
  }
  out += '"';
  return out;
}

std::string JsonString(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          // Go escapes controls and, for safe embedding in HTML, <, > and &.
          if (c < 0x20 || c == '<' || c == '>' || c == '&') {
            out += "\\u00";
            AppendHex(out, c, 2);
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    size_t width = 1;
    char32_t r = DecodeRune(s.substr(i), width);
    if (r == kRuneError && width == 1) {
      out += "\\ufffd";
    } else if (r == 0x2028 || r == 0x2029) {
      out += "\\u";
      AppendHex(out, r, 4);
    } else {
      out.append(s.substr(i, width));
    }
    i += width;
  }
  out += '"';
  return out;
}

std::string InternalTaintJson(const Taint& taint) {
  std::string out = "{\"Key\":";
  out += JsonString(taint.key);
  out += ",\"Value\":";
  out += JsonString(taint.value);
  out += ",\"Effect\":";
  out += JsonString(taint.effect);
  out += ",\"TimeAdded\":";
  out += taint.time_added ? JsonString(*taint.time_added) : std::string("null");
  out += '}';
  return out;
}

// ---- Aggregation -----------------------------------------------------------------------------

std::string AggregateMessage(std::span<const FieldError> errors) {
  std::vector<std::string> seen;
  seen.reserve(errors.size());
  for (const FieldError& e : errors) {
    std::string msg = e.ToString();
    bool dup = false;
    for (const std::string& s : seen) {
      if (s == msg) {
        dup = true;
        break;
      }
    }
    if (!dup) seen.push_back(std::move(msg));
  }
  if (seen.size() == 1) return std::move(seen.front());
  if (seen.empty()) return {};
  std::string out = "[";
  out += Join(seen, ", ");
  out += ']';
  return out;
}

std::string InvalidObjectMessage(std::string_view kind, std::string_view name,
                                 std::span<const FieldError> errors) {
  std::string out(kind);
  out += ' ';
  out += GoQuote(name);
  out += " is invalid";
  if (!errors.empty()) {
    out += ": ";
    out += AggregateMessage(errors);
  }
  return out;
}

Status InvalidObjectStatus(std::string_view kind, std::string_view name,
                           std::span<const FieldError> errors) {
  return Status(StatusCode::kInvalid, InvalidObjectMessage(kind, name, errors));
}

// ---- Name helpers ----------------------------------------------------------------------------

std::vector<std::string> IsQualifiedName(std::string_view value) {
  std::vector<std::string> errs;
  std::string_view name = value;
  size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos) {
      errs.push_back(Concat("a valid label key ", kLabelKeyRegexMsg, kLabelKeySuffixMsg));
      return errs;
    }
    std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back(Concat("prefix part ", kEmptyMsg));
    } else {
      for (std::string& msg : IsDNS1123Subdomain(prefix)) {
        errs.push_back(Concat("prefix part ", msg));
      }
    }
  }
  if (name.empty()) {
    errs.push_back(Concat("name part ", kEmptyMsg));
  } else if (name.size() > kLabelKeyNameMaxLength) {
    errs.push_back(Concat("name part ", MaxLenError(kLabelKeyNameMaxLength)));
  }
  if (!MatchesLabelName(name)) errs.push_back(Concat("name part ", kLabelKeyRegexMsg));
  return errs;
}

std::vector<std::string> IsValidLabelValue(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kLabelValueMaxLength) errs.push_back(MaxLenError(kLabelValueMaxLength));
  if (!value.empty() && !MatchesLabelName(value)) errs.emplace_back(kLabelValueRegexMsg);
  return errs;
}

std::vector<std::string> IsDNS1123Subdomain(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kDNS1123SubdomainMaxLength) {
    errs.push_back(MaxLenError(kDNS1123SubdomainMaxLength));
  }
  if (!MatchesDNS1123Subdomain(value)) errs.emplace_back(kDNS1123SubdomainRegexMsg);
  return errs;
}

std::vector<std::string> IsDNS1123Label(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kDNS1123LabelMaxLength) errs.push_back(MaxLenError(kDNS1123LabelMaxLength));
  if (!MatchesDNS1123Label(value)) errs.emplace_back(kDNS1123LabelRegexMsg);
  return errs;
}

std::vector<std::string> IsDecimalInteger(std::string_view value) {
  if (value.empty()) return {std::string(kEmptyMsg)};
  size_t i = value[0] == '-' ? 1 : 0;
  bool ok = i < value.size();
  if (ok && value[i] == '0') {
    ok = value.size() == 1;  // "0" only; "-0" and "0100" are not canonical
  } else if (ok) {
    ok = value[i] >= '1' && value[i] <= '9';
    for (size_t j = i + 1; ok && j < value.size(); ++j) ok = value[j] >= '0' && value[j] <= '9';
  }
  if (ok) return {};
  return {std::string(kDecimalIntegerMsg)};
}

// ---- Taints and tolerations ------------------------------------------------------------------

FieldErrorList ValidateNodeTaints(std::span<const Taint> taints, std::string_view path) {
  FieldErrorList errs;
  // A taint is a duplicate when an earlier one has its key and effect (upstream records the
  // non-duplicates in a set; an earlier duplicate always has a recorded twin, so any earlier
  // taint will do). Short lists, the usual case, are scanned without allocating.
  constexpr size_t kScanLimit = 16;
  struct KeyEffect {
    std::string_view key, effect;
    bool operator==(const KeyEffect&) const = default;
  };
  struct KeyEffectHash {
    size_t operator()(const KeyEffect& k) const {
      return std::hash<std::string_view>()(k.key) * 31 + std::hash<std::string_view>()(k.effect);
    }
  };
  std::unordered_set<KeyEffect, KeyEffectHash> seen;  // only for long lists
  const bool use_set = taints.size() > kScanLimit;

  for (size_t i = 0; i < taints.size(); ++i) {
    const Taint& t = taints[i];
    for (std::string& msg : IsQualifiedName(t.key)) {
      errs.push_back(
          FieldError::Invalid(IndexPath(path, i, "key"), GoQuote(t.key), std::move(msg)));
    }
    if (std::vector<std::string> v = IsValidLabelValue(t.value); !v.empty()) {
      errs.push_back(
          FieldError::Invalid(IndexPath(path, i, "value"), GoQuote(t.value), Join(v, ";")));
    }
    if (t.effect.empty()) {
      errs.push_back(FieldError::Required(IndexPath(path, i, "effect")));
    } else if (!IsValidTaintEffect(t.effect)) {
      errs.push_back(FieldError::NotSupported(IndexPath(path, i, "effect"), JsonString(t.effect),
                                              kTaintEffects));
    }

    bool duplicate = false;
    if (use_set) {
      duplicate = !seen.insert(KeyEffect{t.key, t.effect}).second;
    } else {
      for (size_t j = 0; j < i && !duplicate; ++j) {
        duplicate = taints[j].key == t.key && taints[j].effect == t.effect;
      }
    }
    if (duplicate) {
      FieldError e = FieldError::Duplicate(IndexPath(path, i), InternalTaintJson(t));
      e.detail = "taints must be unique by key and effect pair";
      errs.push_back(std::move(e));
    }
  }
  return errs;
}

FieldErrorList ValidateTolerations(std::span<const Toleration> tolerations, std::string_view path,
                                   bool allow_comparison_operators) {
  FieldErrorList errs;
  for (size_t i = 0; i < tolerations.size(); ++i) {
    const Toleration& t = tolerations[i];
    if (!t.key.empty()) {
      for (std::string& msg : IsQualifiedName(t.key)) {
        errs.push_back(
            FieldError::Invalid(IndexPath(path, i, "key"), GoQuote(t.key), std::move(msg)));
      }
    }
    // An empty key with Exists and an empty value matches every taint; an empty key with any
    // other operator is meaningless.
    if (t.key.empty() && t.op != kOpExists) {
      errs.push_back(FieldError::Invalid(
          IndexPath(path, i, "operator"), JsonString(t.op),
          "operator must be Exists when `key` is empty, which means \"match all values and all "
          "keys\""));
    }
    if (t.toleration_seconds && t.effect != kEffectNoExecute) {
      errs.push_back(
          FieldError::Invalid(IndexPath(path, i, "effect"), JsonString(t.effect),
                              "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (t.op.empty() || t.op == kOpEqual) {
      // Upstream reports a bad value on the operator's path.
      if (std::vector<std::string> v = IsValidLabelValue(t.value); !v.empty()) {
        errs.push_back(
            FieldError::Invalid(IndexPath(path, i, "operator"), GoQuote(t.value), Join(v, ";")));
      }
    } else if (t.op == kOpExists) {
      if (!t.value.empty()) {
        errs.push_back(FieldError::Invalid(IndexPath(path, i, "operator"), GoQuote(t.value),
                                           "value must be empty when `operator` is 'Exists'"));
      }
    } else if (t.op == kOpLt || t.op == kOpGt) {
      if (!allow_comparison_operators) {
        errs.push_back(FieldError::NotSupported(IndexPath(path, i, "operator"), JsonString(t.op),
                                                kAllOperators));
      } else {
        for (std::string& msg : IsDecimalInteger(t.value)) {
          errs.push_back(
              FieldError::Invalid(IndexPath(path, i, "value"), GoQuote(t.value), std::move(msg)));
        }
        if (std::optional<std::string> err = ParseInt64Error(t.value)) {
          errs.push_back(
              FieldError::Invalid(IndexPath(path, i, "value"), GoQuote(t.value), std::move(*err)));
        }
      }
    } else {
      errs.push_back(FieldError::NotSupported(IndexPath(path, i, "operator"), JsonString(t.op),
                                              kBasicOperators));
    }
    // An empty effect matches every effect.
    if (!t.effect.empty() && !IsValidTaintEffect(t.effect)) {
      errs.push_back(FieldError::NotSupported(IndexPath(path, i, "effect"), JsonString(t.effect),
                                              kTaintEffects));
    }
  }
  return errs;
}

bool AllowComparisonOperators(const FeatureGates& gates,
                              std::span<const Toleration> old_tolerations) {
  if (gates.taint_toleration_comparison_operators) return true;
  for (const Toleration& t : old_tolerations) {
    if (t.op == kOpLt || t.op == kOpGt) return true;
  }
  return false;
}

FieldErrorList ValidatePodTolerationsUpdate(std::span<const Toleration> old_tolerations,
                                            std::span<const Toleration> new_tolerations,
                                            const FeatureGates& gates, std::string_view path) {
  for (const Toleration& old : old_tolerations) {
    bool found = false;
    for (const Toleration& t : new_tolerations) {
      // Every field but tolerationSeconds, compared exactly ("" and "Equal" differ).
      if (MatchToleration(old, t)) {
        found = true;
        break;
      }
    }
    if (!found) {
      FieldErrorList errs;
      errs.push_back(FieldError::Forbidden(
          std::string(path),
          "existing toleration can not be modified except its tolerationSeconds"));
      return errs;
    }
  }
  return ValidateTolerations(new_tolerations, path,
                             AllowComparisonOperators(gates, old_tolerations));
}

}  // namespace kt
