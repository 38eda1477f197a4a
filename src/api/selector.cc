#include "api/selector.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include <rapidjson/document.h>

#include "core/strings.h"
#include "core/validation.h"

namespace kt::api {

namespace {

// Go's strconv.ParseInt(s, 10, 64): optional sign, decimal digits, in range.
std::optional<int64_t> ParseGoInt64(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
    if (s.empty()) return std::nullopt;
  }
  uint64_t magnitude = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (magnitude > (std::numeric_limits<uint64_t>::max() - digit) / 10) return std::nullopt;
    magnitude = magnitude * 10 + digit;
  }
  constexpr uint64_t kMaxPositive = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (negative) {
    if (magnitude > kMaxPositive + 1) return std::nullopt;
    return magnitude == kMaxPositive + 1 ? std::numeric_limits<int64_t>::min()
                                         : -static_cast<int64_t>(magnitude);
  }
  if (magnitude > kMaxPositive) return std::nullopt;
  return static_cast<int64_t>(magnitude);
}

}  // namespace

// ---- Label selectors -------------------------------------------------------------------------

namespace labels {

namespace {

enum class Token : uint8_t {
  kError,
  kEndOfString,
  kClosedPar,
  kComma,
  kDoesNotExist,
  kDoubleEquals,
  kEquals,
  kGreaterThan,
  kIdentifier,
  kIn,
  kLessThan,
  kNotEquals,
  kNotIn,
  kOpenPar,
};

// Literal tokens (upstream string2token), identifiers excepted.
std::optional<Token> LiteralToken(std::string_view s) {
  if (s == ")") return Token::kClosedPar;
  if (s == ",") return Token::kComma;
  if (s == "!") return Token::kDoesNotExist;
  if (s == "==") return Token::kDoubleEquals;
  if (s == "=") return Token::kEquals;
  if (s == ">") return Token::kGreaterThan;
  if (s == "in") return Token::kIn;
  if (s == "<") return Token::kLessThan;
  if (s == "!=") return Token::kNotEquals;
  if (s == "notin") return Token::kNotIn;
  if (s == "(") return Token::kOpenPar;
  return std::nullopt;
}

bool IsWhitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool IsSpecialSymbol(char c) {
  switch (c) {
    case '=':
    case '!':
    case '(':
    case ')':
    case ',':
    case '>':
    case '<':
      return true;
    default:
      return false;
  }
}

struct ScannedItem {
  Token token;
  std::string_view literal;  // into the selector text; error tokens carry no text here
};

// The upstream lexer. A NUL byte reads as the end of the input, as upstream (whose read()
// returns 0 at the end).
class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  ScannedItem Lex() {
    char c = Read();
    while (IsWhitespace(c)) c = Read();
    if (c == 0) return {Token::kEndOfString, {}};
    Unread();
    if (IsSpecialSymbol(c)) return ScanSpecialSymbol();
    return ScanIdOrKeyword();
  }

 private:
  // At the end Read returns 0 without advancing; a NUL byte in the text also reads as 0 (and
  // is consumed), as upstream.
  char Read() { return pos_ < s_.size() ? s_[pos_++] : '\0'; }
  void Unread() { --pos_; }  // only after a Read that returned non-zero

  ScannedItem ScanIdOrKeyword() {
    size_t start = pos_;
    size_t end = start;
    for (;;) {
      char c = Read();
      if (c == 0) break;
      if (IsSpecialSymbol(c) || IsWhitespace(c)) {
        Unread();
        break;
      }
      end = pos_;
    }
    std::string_view lit = s_.substr(start, end - start);
    if (std::optional<Token> t = LiteralToken(lit)) return {*t, lit};
    return {Token::kIdentifier, lit};
  }

  // Longest operator made of special symbols ("!=" rather than "!").
  ScannedItem ScanSpecialSymbol() {
    size_t start = pos_;
    std::optional<ScannedItem> last;
    for (;;) {
      char c = Read();
      if (c == 0) break;
      if (!IsSpecialSymbol(c)) {
        Unread();
        break;
      }
      std::string_view buf = s_.substr(start, pos_ - start);
      if (std::optional<Token> t = LiteralToken(buf)) {
        last = ScannedItem{*t, buf};
      } else if (last) {
        Unread();
        break;
      }
    }
    if (!last) return {Token::kError, s_.substr(start, pos_ - start)};
    return *last;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

enum class Context : uint8_t { kKeyAndOperator, kValues };

std::string Found(std::string_view lit, std::string_view expected) {
  std::string out = "found '";
  out += lit;
  out += "', ";
  out += expected;
  return out;
}

class Parser {
 public:
  explicit Parser(std::string_view text) {
    Lexer lexer(text);
    for (;;) {
      ScannedItem item = lexer.Lex();
      items_.push_back(item);
      if (item.token == Token::kEndOfString) break;
    }
  }

  Result<std::vector<Requirement>> Parse() {
    std::vector<Requirement> requirements;
    for (;;) {
      ScannedItem next = Lookahead(Context::kValues);
      switch (next.token) {
        case Token::kIdentifier:
        case Token::kDoesNotExist: {
          Result<Requirement> r = ParseRequirement();
          if (!r) {
            return Err(BadRequest("unable to parse requirement: " + r.error().message()));
          }
          requirements.push_back(std::move(*r));
          ScannedItem after = Consume(Context::kValues);
          if (after.token == Token::kEndOfString) return requirements;
          if (after.token == Token::kComma) {
            ScannedItem t2 = Lookahead(Context::kValues);
            if (t2.token != Token::kIdentifier && t2.token != Token::kDoesNotExist) {
              return Err(BadRequest(Found(t2.literal, "expected: identifier after ','")));
            }
            break;
          }
          return Err(BadRequest(Found(after.literal, "expected: ',' or 'end of string'")));
        }
        case Token::kEndOfString:
          return requirements;
        default:
          return Err(
              BadRequest(Found(next.literal, "expected: !, identifier, or 'end of string'")));
      }
    }
  }

 private:
  ScannedItem Lookahead(Context context) const { return Adjust(items_[position_], context); }
  ScannedItem Consume(Context context) {
    // The end-of-string item is never passed: every caller stops there.
    const ScannedItem& item = items_[std::min(position_, items_.size() - 1)];
    if (position_ < items_.size() - 1) ++position_;
    return Adjust(item, context);
  }
  // "in" and "notin" are plain values inside a value list or after an operator.
  static ScannedItem Adjust(ScannedItem item, Context context) {
    if (context == Context::kValues && (item.token == Token::kIn || item.token == Token::kNotIn)) {
      item.token = Token::kIdentifier;
    }
    return item;
  }

  Result<Requirement> ParseRequirement() {
    Requirement r;
    bool does_not_exist = false;
    ScannedItem item = Consume(Context::kValues);
    if (item.token == Token::kDoesNotExist) {
      does_not_exist = true;
      item = Consume(Context::kValues);
    }
    if (item.token != Token::kIdentifier) {
      return Err(BadRequest(Found(item.literal, "expected: identifier")));
    }
    r.key = std::string(item.literal);
    if (std::vector<std::string> errs = IsQualifiedName(r.key); !errs.empty()) {
      // Upstream validates with a nil field path, which prints as "<nil>".
      return Err(
          BadRequest(FieldError::Invalid("<nil>", GoQuote(r.key), Join(errs, "; ")).ToString()));
    }
    Token next = Lookahead(Context::kValues).token;
    if (does_not_exist || next == Token::kEndOfString || next == Token::kComma) {
      r.op = does_not_exist ? Operator::kDoesNotExist : Operator::kExists;
      return r;
    }

    ScannedItem op = Consume(Context::kKeyAndOperator);
    switch (op.token) {
      case Token::kIn:
        r.op = Operator::kIn;
        break;
      case Token::kEquals:
        r.op = Operator::kEquals;
        break;
      case Token::kDoubleEquals:
        r.op = Operator::kDoubleEquals;
        break;
      case Token::kGreaterThan:
        r.op = Operator::kGreaterThan;
        break;
      case Token::kLessThan:
        r.op = Operator::kLessThan;
        break;
      case Token::kNotIn:
        r.op = Operator::kNotIn;
        break;
      case Token::kNotEquals:
        r.op = Operator::kNotEquals;
        break;
      default:
        return Err(BadRequest(Found(op.literal, "expected: in, notin, =, ==, !=, gt, lt")));
    }

    Status s = (r.op == Operator::kIn || r.op == Operator::kNotIn) ? ParseValues(r.values)
                                                                   : ParseExactValue(r.values);
    if (!s.ok()) return Err(std::move(s));
    std::sort(r.values.begin(), r.values.end());
    r.values.erase(std::unique(r.values.begin(), r.values.end()), r.values.end());
    if (Status v = Validate(r); !v.ok()) return Err(std::move(v));
    return r;
  }

  Status ParseValues(std::vector<std::string>& values) {
    ScannedItem open = Consume(Context::kValues);
    if (open.token != Token::kOpenPar) {
      return BadRequest("found '" + std::string(open.literal) + "' expected: '('");
    }
    ScannedItem next = Lookahead(Context::kValues);
    switch (next.token) {
      case Token::kIdentifier:
      case Token::kComma: {
        KT_RETURN_IF_ERROR(ParseIdentifiersList(values));
        if (Consume(Context::kValues).token != Token::kClosedPar) {
          // Upstream names the token seen before the list, not the one that failed.
          return BadRequest(Found(next.literal, "expected: ')'"));
        }
        return Status::Ok();
      }
      case Token::kClosedPar:
        Consume(Context::kValues);
        values.emplace_back();
        return Status::Ok();
      default:
        return BadRequest(Found(next.literal, "expected: ',', ')' or identifier"));
    }
  }

  Status ParseIdentifiersList(std::vector<std::string>& values) {
    for (;;) {
      ScannedItem item = Consume(Context::kValues);
      if (item.token == Token::kIdentifier) {
        values.emplace_back(item.literal);
        ScannedItem next = Lookahead(Context::kValues);
        if (next.token == Token::kComma) continue;
        if (next.token == Token::kClosedPar) return Status::Ok();
        return BadRequest(Found(next.literal, "expected: ',' or ')'"));
      }
      if (item.token == Token::kComma) {
        if (values.empty()) values.emplace_back();  // "(,"
        Token next = Lookahead(Context::kValues).token;
        if (next == Token::kClosedPar) {
          values.emplace_back();  // ",)"
          return Status::Ok();
        }
        if (next == Token::kComma) values.emplace_back();  // ",,"
        continue;
      }
      return BadRequest(Found(item.literal, "expected: ',', or identifier"));
    }
  }

  Status ParseExactValue(std::vector<std::string>& values) {
    Token next = Lookahead(Context::kValues).token;
    if (next == Token::kEndOfString || next == Token::kComma) {
      values.emplace_back();
      return Status::Ok();
    }
    ScannedItem item = Consume(Context::kValues);
    if (item.token == Token::kIdentifier) {
      values.emplace_back(item.literal);
      return Status::Ok();
    }
    return BadRequest(Found(item.literal, "expected: identifier"));
  }

  // NewRequirement's checks that the grammar leaves open: integers for > and <, label values.
  static Status Validate(Requirement& r) {
    FieldErrorList errs;
    if (r.op == Operator::kGreaterThan || r.op == Operator::kLessThan) {
      for (size_t i = 0; i < r.values.size(); ++i) {
        std::optional<int64_t> n = ParseGoInt64(r.values[i]);
        if (n) {
          r.number = *n;
        } else {
          errs.push_back(FieldError::Invalid("values[" + std::to_string(i) + "]",
                                             GoQuote(r.values[i]),
                                             "for 'Gt', 'Lt' operators, the value must be an "
                                             "integer"));
        }
      }
    }
    for (size_t i = 0; i < r.values.size(); ++i) {
      if (std::vector<std::string> v = IsValidLabelValue(r.values[i]); !v.empty()) {
        errs.push_back(FieldError::Invalid("values[" + std::to_string(i) + "][" + r.key + "]",
                                           GoQuote(r.values[i]), Join(v, "; ")));
      }
    }
    if (errs.empty()) return Status::Ok();
    return BadRequest(AggregateMessage(errs));
  }

  std::vector<ScannedItem> items_;
  size_t position_ = 0;
};

}  // namespace

bool Requirement::Matches(const StringMap& labels) const {
  const std::string* value = labels.Get(key);
  auto has_value = [&](const std::string& v) {
    // Values are sorted; lists are short, and a linear scan beats a binary search here.
    for (const std::string& candidate : values) {
      if (candidate == v) return true;
    }
    return false;
  };
  switch (op) {
    case Operator::kIn:
    case Operator::kEquals:
    case Operator::kDoubleEquals:
      return value != nullptr && has_value(*value);
    case Operator::kNotIn:
    case Operator::kNotEquals:
      return value == nullptr || !has_value(*value);
    case Operator::kExists:
      return value != nullptr;
    case Operator::kDoesNotExist:
      return value == nullptr;
    case Operator::kGreaterThan:
    case Operator::kLessThan: {
      if (value == nullptr) return false;
      std::optional<int64_t> n = ParseGoInt64(*value);
      if (!n) return false;
      return op == Operator::kGreaterThan ? *n > number : *n < number;
    }
  }
  return false;
}

std::string Requirement::String() const {
  std::string out;
  if (op == Operator::kDoesNotExist) out += '!';
  out += key;
  switch (op) {
    case Operator::kEquals:
      out += "=";
      break;
    case Operator::kDoubleEquals:
      out += "==";
      break;
    case Operator::kNotEquals:
      out += "!=";
      break;
    case Operator::kIn:
      out += " in ";
      break;
    case Operator::kNotIn:
      out += " notin ";
      break;
    case Operator::kGreaterThan:
      out += ">";
      break;
    case Operator::kLessThan:
      out += "<";
      break;
    case Operator::kExists:
    case Operator::kDoesNotExist:
      return out;
  }
  bool set = op == Operator::kIn || op == Operator::kNotIn;
  if (set) out += '(';
  out += Join(values, ",");
  if (set) out += ')';
  return out;
}

std::optional<std::string_view> Selector::RequiresExactMatch(std::string_view key) const {
  for (const Requirement& r : requirements_) {
    if (r.key != key) continue;
    if ((r.op == Operator::kEquals || r.op == Operator::kDoubleEquals || r.op == Operator::kIn) &&
        r.values.size() == 1) {
      return std::string_view(r.values.front());
    }
    return std::nullopt;
  }
  return std::nullopt;
}

std::string Selector::String() const {
  std::string out;
  for (size_t i = 0; i < requirements_.size(); ++i) {
    if (i > 0) out += ',';
    out += requirements_[i].String();
  }
  return out;
}

Result<Selector> Parse(std::string_view text) {
  Parser parser(text);
  Result<std::vector<Requirement>> requirements = parser.Parse();
  if (!requirements) return Err(requirements.error());
  std::stable_sort(requirements->begin(), requirements->end(),
                   [](const Requirement& a, const Requirement& b) { return a.key < b.key; });
  return Selector(std::move(*requirements));
}

Result<Selector> FromLabelSelector(const LabelSelector& selector) {
  std::vector<Requirement> requirements;
  for (const auto& [key, value] : selector.match_labels) {
    requirements.push_back(Requirement{key, Operator::kEquals, {value}, 0});
  }
  for (const SelectorRequirement& e : selector.match_expressions) {
    Requirement r{e.key, Operator::kIn, e.values, 0};
    if (e.op == "In" || e.op == "NotIn") {
      r.op = e.op == "In" ? Operator::kIn : Operator::kNotIn;
      if (e.values.empty()) {
        return Err(
            BadRequest("values: Invalid value: []string{}: for 'in', 'notin' operators, "
                       "values set can't be empty"));
      }
    } else if (e.op == "Exists" || e.op == "DoesNotExist") {
      r.op = e.op == "Exists" ? Operator::kExists : Operator::kDoesNotExist;
      if (!e.values.empty()) {
        return Err(BadRequest("values: Invalid value: " + GoQuote(Join(e.values, ",")) +
                              ": values set must be empty for exists and does not exist"));
      }
    } else {
      return Err(BadRequest(GoQuote(e.op) + " is not a valid label selector operator"));
    }
    std::sort(r.values.begin(), r.values.end());
    r.values.erase(std::unique(r.values.begin(), r.values.end()), r.values.end());
    requirements.push_back(std::move(r));
  }
  std::stable_sort(requirements.begin(), requirements.end(),
                   [](const Requirement& a, const Requirement& b) { return a.key < b.key; });
  return Selector(std::move(requirements));
}

}  // namespace labels

// ---- Field selectors -------------------------------------------------------------------------

namespace fields {

namespace {

struct FieldEntry {
  std::string_view name;
  Field field;
};

// Sorted by name, for a binary search at parse time.
constexpr FieldEntry kFieldNames[] = {
    {"involvedObject.apiVersion", Field::kInvolvedObjectApiVersion},
    {"involvedObject.fieldPath", Field::kInvolvedObjectFieldPath},
    {"involvedObject.kind", Field::kInvolvedObjectKind},
    {"involvedObject.name", Field::kInvolvedObjectName},
    {"involvedObject.namespace", Field::kInvolvedObjectNamespace},
    {"involvedObject.resourceVersion", Field::kInvolvedObjectResourceVersion},
    {"involvedObject.uid", Field::kInvolvedObjectUid},
    {"metadata.name", Field::kMetadataName},
    {"metadata.namespace", Field::kMetadataNamespace},
    {"reason", Field::kReason},
    {"reportingComponent", Field::kReportingComponent},
    {"source", Field::kSource},
    {"spec.hostNetwork", Field::kSpecHostNetwork},
    {"spec.nodeName", Field::kSpecNodeName},
    {"spec.restartPolicy", Field::kSpecRestartPolicy},
    {"spec.schedulerName", Field::kSpecSchedulerName},
    {"spec.serviceAccountName", Field::kSpecServiceAccountName},
    {"spec.unschedulable", Field::kSpecUnschedulable},
    {"status.nominatedNodeName", Field::kStatusNominatedNodeName},
    {"status.phase", Field::kStatusPhase},
    {"status.podIP", Field::kStatusPodIP},
    {"status.podIPs", Field::kStatusPodIPs},
    {"type", Field::kType},
};

std::optional<Field> LookupField(std::string_view name) {
  auto it = std::lower_bound(std::begin(kFieldNames), std::end(kFieldNames), name,
                             [](const FieldEntry& e, std::string_view n) { return e.name < n; });
  if (it == std::end(kFieldNames) || it->name != name) return std::nullopt;
  return it->field;
}

// Which fields each kind accepts (upstream AddFieldLabelConversionFunc lists).
bool KindSupports(std::string_view kind, Field f) {
  using F = Field;
  if (kind == "Pod") {
    switch (f) {
      case F::kMetadataName:
      case F::kMetadataNamespace:
      case F::kSpecNodeName:
      case F::kSpecRestartPolicy:
      case F::kSpecSchedulerName:
      case F::kSpecServiceAccountName:
      case F::kSpecHostNetwork:
      case F::kStatusPhase:
      case F::kStatusPodIP:
      case F::kStatusPodIPs:
      case F::kStatusNominatedNodeName:
        return true;
      default:
        return false;
    }
  }
  if (kind == "Node") return f == F::kMetadataName || f == F::kSpecUnschedulable;
  if (kind == "Namespace") return f == F::kMetadataName || f == F::kStatusPhase;
  if (kind == "Event") {
    switch (f) {
      case F::kInvolvedObjectKind:
      case F::kInvolvedObjectNamespace:
      case F::kInvolvedObjectName:
      case F::kInvolvedObjectUid:
      case F::kInvolvedObjectApiVersion:
      case F::kInvolvedObjectResourceVersion:
      case F::kInvolvedObjectFieldPath:
      case F::kReason:
      case F::kReportingComponent:
      case F::kSource:
      case F::kType:
      case F::kMetadataNamespace:
      case F::kMetadataName:
        return true;
      default:
        return false;
    }
  }
  // Upstream's default conversion (DefaultMetaV1FieldSelectorConversion).
  return f == F::kMetadataName || f == F::kMetadataNamespace;
}

// Unescapes `\\`, `\,` and `\=`; an unescaped `,` or `=` is an error (UnescapeValue).
Result<std::string> UnescapeValue(std::string_view s) {
  std::string out;
  if (s.find_first_of("\\,=") == std::string_view::npos) return std::string(s);
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\') {
      if (i + 1 == s.size()) {
        return Err(BadRequest("invalid field selector: invalid escape sequence: \\"));
      }
      char next = s[i + 1];
      if (next != '\\' && next != ',' && next != '=') {
        // Upstream prints the whole rune after the backslash.
        size_t len = 1;
        unsigned char b = static_cast<unsigned char>(next);
        if (b >= 0xF0) {
          len = 4;
        } else if (b >= 0xE0) {
          len = 3;
        } else if (b >= 0xC0) {
          len = 2;
        }
        len = std::min(len, s.size() - (i + 1));
        return Err(BadRequest("invalid field selector: invalid escape sequence: \\" +
                              std::string(s.substr(i + 1, len))));
      }
      out += next;
      ++i;
    } else if (c == ',' || c == '=') {
      // Upstream formats the rune with %v, which prints its code point.
      return Err(BadRequest("invalid field selector: unescaped character in value: " +
                            std::to_string(static_cast<int>(c))));
    } else {
      out += c;
    }
  }
  return out;
}

const rapidjson::Value* Member(const rapidjson::Value& object, std::string_view name) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(rapidjson::Value(
      rapidjson::StringRef(name.data(), static_cast<rapidjson::SizeType>(name.size()))));
  return it == object.MemberEnd() ? nullptr : &it->value;
}

const rapidjson::Value* Path(const rapidjson::Value& object, std::string_view a,
                             std::string_view b) {
  const rapidjson::Value* v = Member(object, a);
  return v ? Member(*v, b) : nullptr;
}

std::string_view StringOf(const rapidjson::Value* v) {
  if (v == nullptr || !v->IsString()) return {};
  return std::string_view(v->GetString(), v->GetStringLength());
}

std::string_view BoolOf(const rapidjson::Value* v) {
  return v != nullptr && v->IsBool() && v->GetBool() ? "true" : "false";
}

}  // namespace

std::string_view FieldName(Field field) {
  for (const FieldEntry& e : kFieldNames) {
    if (e.field == field) return e.name;
  }
  return {};
}

bool Supports(std::string_view kind, Field field) { return KindSupports(kind, field); }

std::string EscapeValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\' || c == ',' || c == '=') out += '\\';
    out += c;
  }
  return out;
}

std::optional<std::string_view> Selector::RequiresExactMatch(Field field) const {
  for (const Requirement& r : requirements_) {
    if (r.field == field && r.equals) return std::string_view(r.value);
  }
  return std::nullopt;
}

std::string Selector::String() const {
  std::string out;
  for (size_t i = 0; i < requirements_.size(); ++i) {
    if (i > 0) out += ',';
    out += FieldName(requirements_[i].field);
    out += requirements_[i].equals ? "=" : "!=";
    out += EscapeValue(requirements_[i].value);
  }
  return out;
}

Result<std::vector<Term>> ParseTerms(std::string_view text) {
  // Split on commas that are not escaped; the backslash stays in the term.
  std::vector<std::string_view> parts;
  if (!text.empty()) {
    size_t start = 0;
    bool in_slash = false;
    for (size_t i = 0; i < text.size(); ++i) {
      if (in_slash) {
        in_slash = false;
      } else if (text[i] == '\\') {
        in_slash = true;
      } else if (text[i] == ',') {
        parts.push_back(text.substr(start, i - start));
        start = i + 1;
      }
    }
    parts.push_back(text.substr(start));
  }
  std::sort(parts.begin(), parts.end());

  std::vector<Term> terms;
  terms.reserve(parts.size());
  for (std::string_view part : parts) {
    if (part.empty()) continue;
    // The first operator wins; "!=" and "==" are tried before "=" at each position.
    size_t op_at = std::string_view::npos;
    size_t op_len = 0;
    bool equals = true;
    for (size_t i = 0; i < part.size(); ++i) {
      std::string_view rest = part.substr(i);
      if (rest.starts_with("!=")) {
        op_at = i, op_len = 2, equals = false;
      } else if (rest.starts_with("==")) {
        op_at = i, op_len = 2;
      } else if (rest.starts_with("=")) {
        op_at = i, op_len = 1;
      } else {
        continue;
      }
      break;
    }
    if (op_at == std::string_view::npos) {
      return Err(BadRequest("invalid selector: '" + std::string(text) + "'; can't understand '" +
                            std::string(part) + "'"));
    }
    Result<std::string> value = UnescapeValue(part.substr(op_at + op_len));
    if (!value) return Err(value.error());
    terms.push_back(Term{std::string(part.substr(0, op_at)), equals, std::move(*value)});
  }
  return terms;
}

Result<Selector> ParseSelector(std::string_view text, std::string_view kind) {
  Result<std::vector<Term>> terms = ParseTerms(text);
  if (!terms) return Err(terms.error());
  std::vector<Requirement> requirements;
  requirements.reserve(terms->size());
  for (Term& term : *terms) {
    std::optional<Field> field = LookupField(term.field);
    if (!field && kind == "Pod" && term.field == "spec.host") field = Field::kSpecNodeName;
    if (!field || !KindSupports(kind, *field)) {
      return Err(BadRequest("field label not supported: " + term.field));
    }
    requirements.push_back(Requirement{*field, term.equals, std::move(term.value)});
  }
  return Selector(std::move(requirements));
}

std::string_view FieldValue(const rapidjson::Value& object, Field field) {
  switch (field) {
    case Field::kMetadataName:
      return StringOf(Path(object, "metadata", "name"));
    case Field::kMetadataNamespace:
      return StringOf(Path(object, "metadata", "namespace"));
    case Field::kSpecNodeName:
      return StringOf(Path(object, "spec", "nodeName"));
    case Field::kSpecRestartPolicy:
      return StringOf(Path(object, "spec", "restartPolicy"));
    case Field::kSpecSchedulerName:
      return StringOf(Path(object, "spec", "schedulerName"));
    case Field::kSpecServiceAccountName:
      return StringOf(Path(object, "spec", "serviceAccountName"));
    case Field::kSpecHostNetwork:
      return BoolOf(Path(object, "spec", "hostNetwork"));
    case Field::kStatusPhase:
      return StringOf(Path(object, "status", "phase"));
    case Field::kStatusPodIP: {
      const rapidjson::Value* ips = Path(object, "status", "podIPs");
      if (ips != nullptr && ips->IsArray() && !ips->Empty())
        return StringOf(Member((*ips)[0], "ip"));
      return StringOf(Path(object, "status", "podIP"));
    }
    case Field::kStatusPodIPs:
      return {};
    case Field::kStatusNominatedNodeName:
      return StringOf(Path(object, "status", "nominatedNodeName"));
    case Field::kSpecUnschedulable:
      return BoolOf(Path(object, "spec", "unschedulable"));
    case Field::kInvolvedObjectKind:
      return StringOf(Path(object, "involvedObject", "kind"));
    case Field::kInvolvedObjectNamespace:
      return StringOf(Path(object, "involvedObject", "namespace"));
    case Field::kInvolvedObjectName:
      return StringOf(Path(object, "involvedObject", "name"));
    case Field::kInvolvedObjectUid:
      return StringOf(Path(object, "involvedObject", "uid"));
    case Field::kInvolvedObjectApiVersion:
      return StringOf(Path(object, "involvedObject", "apiVersion"));
    case Field::kInvolvedObjectResourceVersion:
      return StringOf(Path(object, "involvedObject", "resourceVersion"));
    case Field::kInvolvedObjectFieldPath:
      return StringOf(Path(object, "involvedObject", "fieldPath"));
    case Field::kReason:
      return StringOf(Member(object, "reason"));
    case Field::kReportingComponent:
      return StringOf(Member(object, "reportingComponent"));
    case Field::kSource: {
      std::string_view component = StringOf(Path(object, "source", "component"));
      return component.empty() ? StringOf(Member(object, "reportingComponent")) : component;
    }
    case Field::kType:
      return StringOf(Member(object, "type"));
  }
  return {};
}

}  // namespace fields

}  // namespace kt::api
