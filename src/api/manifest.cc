#include "api/manifest.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "api/codec.h"
#include "core/validation.h"

namespace kt::api {

namespace {

using rapidjson::SizeType;
using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

constexpr std::string_view kTagPrefix = "tag:yaml.org,2002:";

// ============================================================================================
// Scalar resolution (go-yaml v2 resolve, as used by sigs.k8s.io/yaml)
// ============================================================================================

struct Scalar {
  enum class Kind { kNull, kBool, kInt, kUint, kFloat, kString } kind = Kind::kString;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
};

std::string_view ShortTag(Scalar::Kind k) {
  switch (k) {
    case Scalar::Kind::kNull:
      return "!!null";
    case Scalar::Kind::kBool:
      return "!!bool";
    case Scalar::Kind::kInt:
    case Scalar::Kind::kUint:
      return "!!int";
    case Scalar::Kind::kFloat:
      return "!!float";
    case Scalar::Kind::kString:
      return "!!str";
  }
  return "!!str";
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Go strconv.ParseUint(s, 0, 64) once underscores are gone: 0x, 0o, 0b prefixes, a leading 0
// means octal.
bool ParseUintBase0(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  unsigned base = 10;
  if (s[0] == '0') {
    const char p = s.size() >= 3 ? static_cast<char>(s[1] | 0x20) : '\0';
    if (p == 'b') {
      base = 2;
      s.remove_prefix(2);
    } else if (p == 'o') {
      base = 8;
      s.remove_prefix(2);
    } else if (p == 'x') {
      base = 16;
      s.remove_prefix(2);
    } else {
      base = 8;
      s.remove_prefix(1);
    }
  }
  uint64_t v = 0;
  for (char c : s) {
    unsigned d;
    if (IsDigit(c)) {
      d = static_cast<unsigned>(c - '0');
    } else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') {
      d = static_cast<unsigned>((c | 0x20) - 'a' + 10);
    } else {
      return false;
    }
    if (d >= base) return false;
    if (v > (UINT64_MAX - d) / base) return false;
    v = v * base + d;
  }
  *out = v;
  return true;
}

// Go strconv.ParseInt(s, 0, 64).
bool ParseIntBase0(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  uint64_t u = 0;
  if (!ParseUintBase0(s, &u)) return false;
  if (neg ? u > (uint64_t{1} << 63) : u > static_cast<uint64_t>(INT64_MAX)) return false;
  *out = neg ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u);
  return true;
}

// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool IsYamlStyleFloat(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  if (i < n && (s[i] == '-' || s[i] == '+')) ++i;
  if (i < n && s[i] == '.') {
    ++i;
    const size_t start = i;
    while (i < n && IsDigit(s[i])) ++i;
    if (i == start) return false;
  } else {
    const size_t start = i;
    while (i < n && IsDigit(s[i])) ++i;
    if (i == start) return false;
    if (i < n && s[i] == '.') {
      ++i;
      while (i < n && IsDigit(s[i])) ++i;
    }
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '-' || s[i] == '+')) ++i;
    const size_t start = i;
    while (i < n && IsDigit(s[i])) ++i;
    if (i == start) return false;
  }
  return i == n;
}

// Go strconv.ParseFloat(s, 64) for the decimal forms above: false on overflow, 0 on underflow.
bool ParseFloat(std::string_view s, double* out) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ptr != s.data() + s.size()) return false;
  if (r.ec == std::errc::result_out_of_range) {
    // from_chars reports underflow and overflow alike; a negative exponent means underflow.
    const size_t e = s.find_first_of("eE");
    if (e == std::string_view::npos || s.substr(e + 1).find('-') == std::string_view::npos) {
      return false;
    }
    v = 0;
  } else if (r.ec != std::errc()) {
    return false;
  }
  *out = neg ? -v : v;
  return true;
}

Scalar Make(Scalar::Kind kind) {
  Scalar s;
  s.kind = kind;
  return s;
}

// The value of a plain (unquoted, untagged) scalar. As in go-yaml v2, the first character decides
// what it may be; anything that fails to parse as that stays a string.
Scalar ResolvePlain(std::string_view in) {
  Scalar str;  // kString
  if (in.empty()) return Make(Scalar::Kind::kNull);
  char hint = 0;
  const char c = in[0];
  if (c == '+' || c == '-') {
    hint = 'S';
  } else if (IsDigit(c)) {
    hint = 'D';
  } else if (std::string_view("yYnNtTfFoO~").find(c) != std::string_view::npos) {
    hint = 'M';
  } else if (c == '.') {
    hint = '.';
  }
  if (hint == 0) return str;

  static const auto kTable = [] {
    std::vector<std::pair<std::string_view, Scalar>> t;
    auto add = [&](std::initializer_list<std::string_view> names, Scalar v) {
      for (auto n : names) t.emplace_back(n, v);
    };
    Scalar yes = Make(Scalar::Kind::kBool);
    yes.b = true;
    Scalar no = Make(Scalar::Kind::kBool);
    Scalar nan = Make(Scalar::Kind::kFloat);
    nan.f = std::nan("");
    Scalar inf = Make(Scalar::Kind::kFloat);
    inf.f = HUGE_VAL;
    Scalar ninf = Make(Scalar::Kind::kFloat);
    ninf.f = -HUGE_VAL;
    add({"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}, yes);
    add({"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"}, no);
    add({"~", "null", "Null", "NULL"}, Make(Scalar::Kind::kNull));
    add({".nan", ".NaN", ".NAN"}, nan);
    add({".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"}, inf);
    add({"-.inf", "-.Inf", "-.INF"}, ninf);
    return t;
  }();
  for (const auto& [name, v] : kTable) {
    if (name == in) return v;
  }

  switch (hint) {
    case '.': {
      // Go ParseFloat on the raw text: ".5", ".5e3".
      Scalar f = Make(Scalar::Kind::kFloat);
      if (in.size() > 1 && IsDigit(in[1]) && IsYamlStyleFloat(in) && ParseFloat(in, &f.f)) return f;
      return str;
    }
    case 'D':
    case 'S': {
      std::string plain;
      plain.reserve(in.size());
      for (char ch : in) {
        if (ch != '_') plain.push_back(ch);
      }
      Scalar r = Make(Scalar::Kind::kInt);
      if (ParseIntBase0(plain, &r.i)) return r;
      r.kind = Scalar::Kind::kUint;
      if (ParseUintBase0(plain, &r.u)) return r;
      r.kind = Scalar::Kind::kFloat;
      if (IsYamlStyleFloat(plain) && ParseFloat(plain, &r.f)) return r;
      return str;
    }
    default:
      return str;
  }
}

// ============================================================================================
// YAML node → JSON value
// ============================================================================================

class Converter {
 public:
  Converter(Allocator& alloc, size_t input_size, int line_offset)
      : alloc_(alloc),
        // Alias expansion may multiply the input; allow generous but linear growth.
        budget_(16 * input_size + (size_t{1} << 20)),
        line_offset_(line_offset) {}

  Status Convert(const YAML::Node& node, Value* out, int depth) {
    if (depth > kMaxJsonDepth) {
      return Error(node, "exceeded max depth of " + std::to_string(kMaxJsonDepth));
    }
    if (!Spend(1)) return Error(node, "document contains excessive aliasing");
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out->SetNull();
        return Status();
      case YAML::NodeType::Scalar:
        return ConvertScalar(node, out);
      case YAML::NodeType::Sequence: {
        out->SetArray();
        out->Reserve(static_cast<SizeType>(node.size()), alloc_);
        for (const auto& element : node) {
          Value v;
          KT_RETURN_IF_ERROR(Convert(element, &v, depth + 1));
          out->PushBack(v, alloc_);
        }
        return Status();
      }
      case YAML::NodeType::Map:
        return ConvertMap(node, out, depth);
    }
    return Status();
  }

  Status Error(const YAML::Node& node, std::string_view message) const {
    return LocatedError(node.Mark(), message);
  }

  Status LocatedError(const YAML::Mark& mark, std::string_view message) const {
    std::string m = "yaml: ";
    if (mark.line >= 0) {
      m += "line " + std::to_string(mark.line + 1 + line_offset_) + ", column " +
           std::to_string(mark.column + 1) + ": ";
    }
    m += message;
    return BadRequest(std::move(m));
  }

 private:
  bool Spend(size_t cost) {
    if (cost > budget_) return false;
    budget_ -= cost;
    return true;
  }

  // Resolves a scalar by its tag: "!" (quoted or block) is a string, "?" (plain) is resolved,
  // explicit core-schema tags must agree with the text.
  Status Resolve(const YAML::Node& node, Scalar* out) {
    const std::string& tag = node.Tag();
    const std::string& text = node.Scalar();
    if (!Spend(text.size())) return Error(node, "document contains excessive aliasing");
    if (tag == "?") {
      *out = ResolvePlain(text);
      return Status();
    }
    out->kind = Scalar::Kind::kString;
    if (tag.size() <= kTagPrefix.size() || tag.compare(0, kTagPrefix.size(), kTagPrefix) != 0) {
      return Status();  // "!" or a local tag: the text as a string
    }
    const std::string_view want = std::string_view(tag).substr(kTagPrefix.size());
    if (want != "int" && want != "float" && want != "bool" && want != "null") {
      return Status();  // str, timestamp, binary and unknown tags keep the text
    }
    Scalar r = ResolvePlain(text);
    const bool ok =
        (want == "int" && (r.kind == Scalar::Kind::kInt || r.kind == Scalar::Kind::kUint)) ||
        (want == "bool" && r.kind == Scalar::Kind::kBool) ||
        (want == "null" && r.kind == Scalar::Kind::kNull) ||
        (want == "float" && r.kind == Scalar::Kind::kFloat);
    if (want == "float" && r.kind == Scalar::Kind::kInt) {
      r.kind = Scalar::Kind::kFloat;
      r.f = static_cast<double>(r.i);
    } else if (want == "float" && r.kind == Scalar::Kind::kUint) {
      r.kind = Scalar::Kind::kFloat;
      r.f = static_cast<double>(r.u);
    } else if (!ok) {
      return Error(node, "cannot decode " + std::string(ShortTag(r.kind)) + " `" + text +
                             "` as a !!" + std::string(want));
    }
    *out = r;
    return Status();
  }

  Status ConvertScalar(const YAML::Node& node, Value* out) {
    Scalar s;
    KT_RETURN_IF_ERROR(Resolve(node, &s));
    switch (s.kind) {
      case Scalar::Kind::kNull:
        out->SetNull();
        break;
      case Scalar::Kind::kBool:
        out->SetBool(s.b);
        break;
      case Scalar::Kind::kInt:
        out->SetInt64(s.i);
        break;
      case Scalar::Kind::kUint:
        out->SetUint64(s.u);
        break;
      case Scalar::Kind::kFloat:
        if (std::isnan(s.f)) return Error(node, "json: unsupported value: NaN");
        if (std::isinf(s.f)) {
          return Error(node,
                       s.f > 0 ? "json: unsupported value: +Inf" : "json: unsupported value: -Inf");
        }
        // Go writes an integral float64 without a fraction ("1000"), which then decodes as an
        // integer; keep such values integers.
        if (s.f == std::trunc(s.f) && std::fabs(s.f) < 9.2e18) {
          out->SetInt64(static_cast<int64_t>(s.f));
        } else {
          out->SetDouble(s.f);
        }
        break;
      case Scalar::Kind::kString: {
        const std::string& text = node.Scalar();
        out->SetString(text.data(), static_cast<SizeType>(text.size()), alloc_);
        break;
      }
    }
    return Status();
  }

  // A map key as sigs.k8s.io/yaml turns it into a JSON object key.
  Status KeyString(const YAML::Node& key, std::string* out) {
    if (key.Type() == YAML::NodeType::Null) return Error(key, "unsupported map key: null");
    if (!key.IsScalar()) return Error(key, "unsupported map key: a collection");
    Scalar s;
    KT_RETURN_IF_ERROR(Resolve(key, &s));
    char buf[64];
    switch (s.kind) {
      case Scalar::Kind::kNull:
        return Error(key, "unsupported map key: null");
      case Scalar::Kind::kBool:
        *out = s.b ? "true" : "false";
        return Status();
      case Scalar::Kind::kInt: {
        auto r = std::to_chars(buf, buf + sizeof(buf), s.i);
        out->assign(buf, r.ptr);
        return Status();
      }
      case Scalar::Kind::kUint: {
        auto r = std::to_chars(buf, buf + sizeof(buf), s.u);
        out->assign(buf, r.ptr);
        return Status();
      }
      case Scalar::Kind::kFloat:
        *out = GoFloat32G(s.f);
        return Status();
      case Scalar::Kind::kString:
        *out = key.Scalar();
        return Status();
    }
    return Status();
  }

  // Go strconv.FormatFloat(f, 'g', -1, 32), as sigs.k8s.io/yaml writes float keys.
  static std::string GoFloat32G(double d) {
    const auto f = static_cast<float>(d);
    if (std::isnan(f)) return ".nan";
    if (std::isinf(f)) return f > 0 ? ".inf" : "-.inf";
    if (f == 0) return std::signbit(f) ? "-0" : "0";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof(buf), f, std::chars_format::scientific);
    std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));
    std::string out;
    if (sci[0] == '-') {
      out.push_back('-');
      sci.remove_prefix(1);
    }
    const size_t e = sci.find('e');
    std::string digits;
    for (char c : sci.substr(0, e)) {
      if (c != '.') digits.push_back(c);
    }
    int exp = 0;
    std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+' ? 1 : 0), sci.data() + sci.size(), exp);
    if (exp < -4 || exp >= 6) {
      out += digits[0];
      if (digits.size() > 1) out += "." + digits.substr(1);
      out += exp < 0 ? "e-" : "e+";
      const int a = exp < 0 ? -exp : exp;
      if (a < 10) out += '0';
      out += std::to_string(a);
    } else if (exp >= 0) {
      const auto int_digits = static_cast<size_t>(exp) + 1;
      if (digits.size() <= int_digits) {
        out += digits + std::string(int_digits - digits.size(), '0');
      } else {
        out += digits.substr(0, int_digits) + "." + digits.substr(int_digits);
      }
    } else {
      out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    }
    return out;
  }

  static bool IsMergeKey(const YAML::Node& key) {
    return key.IsScalar() && key.Scalar() == "<<" &&
           (key.Tag() == "?" || key.Tag() == std::string(kTagPrefix) + "merge");
  }

  struct Entry {
    std::string key;
    Value value;
  };

  // Appends the members of a converted merge source (a map) to `entries`.
  Status AppendMerged(const YAML::Node& source, int depth, std::vector<Entry>* entries) {
    if (!source.IsMap()) {
      return Error(source, "map merge requires map or sequence of maps as the value");
    }
    Value merged;
    KT_RETURN_IF_ERROR(Convert(source, &merged, depth + 1));
    for (auto& m : merged.GetObject()) {
      entries->push_back(Entry{std::string(m.name.GetString(), m.name.GetStringLength()),
                               Value(std::move(m.value))});
    }
    return Status();
  }

  Status ConvertMap(const YAML::Node& node, Value* out, int depth) {
    // Entries in document order, merges expanded where they appear; then sorted by key with
    // the last of equal keys winning (go-yaml v2 overwrites map entries in order; Go's JSON
    // encoder sorts keys).
    std::vector<Entry> entries;
    entries.reserve(node.size());
    for (const auto& kv : node) {
      const YAML::Node& key = kv.first;
      const YAML::Node& value = kv.second;
      if (IsMergeKey(key)) {
        if (value.IsSequence()) {
          // Earlier maps in the list win: merge them last.
          for (size_t i = value.size(); i-- > 0;) {
            KT_RETURN_IF_ERROR(AppendMerged(value[i], depth, &entries));
          }
        } else {
          KT_RETURN_IF_ERROR(AppendMerged(value, depth, &entries));
        }
        continue;
      }
      Entry e;
      KT_RETURN_IF_ERROR(KeyString(key, &e.key));
      KT_RETURN_IF_ERROR(Convert(value, &e.value, depth + 1));
      entries.push_back(std::move(e));
    }
    std::vector<size_t> order(entries.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return entries[a].key < entries[b].key; });
    out->SetObject();
    for (size_t i = 0; i < order.size(); ++i) {
      if (i + 1 < order.size() && entries[order[i]].key == entries[order[i + 1]].key) continue;
      Entry& e = entries[order[i]];
      Value name(e.key.data(), static_cast<SizeType>(e.key.size()), alloc_);
      out->AddMember(name, e.value, alloc_);
    }
    return Status();
  }

  Allocator& alloc_;
  size_t budget_;
  int line_offset_;
};

// A map key as goyaml v2 resolves it: its kind and canonical text, and how `%#v` prints it.
struct ResolvedKey {
  char kind;  // 's' string, 'i' integer, 'b' bool, 'n' null
  std::string text;
  std::string printed;
};

ResolvedKey ResolveKey(const YAML::Node& key) {
  const std::string& v = key.Scalar();
  if (key.Tag() == "?") {  // plain: resolved by its form
    if (v.empty() || v == "~" || v == "null" || v == "Null" || v == "NULL") {
      return {'n', "", "<nil>"};
    }
    if (v == "true" || v == "True" || v == "TRUE") return {'b', "true", "true"};
    if (v == "false" || v == "False" || v == "FALSE") return {'b', "false", "false"};
    const size_t digits = v[0] == '-' || v[0] == '+' ? 1 : 0;
    if (v.size() > digits && v.find_first_not_of("0123456789", digits) == std::string::npos) {
      std::string n = v[0] == '+' ? v.substr(1) : v;
      return {'i', n, n};
    }
  }
  return {'s', v, GoQuote(v)};
}

void FindDuplicates(const YAML::Node& node, std::vector<std::string>* out) {
  if (node.IsSequence()) {
    for (const YAML::Node& e : node) FindDuplicates(e, out);
    return;
  }
  if (!node.IsMap()) return;
  std::vector<ResolvedKey> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    FindDuplicates(it->second, out);  // goyaml decodes the value before it sets the key
    if (!it->first.IsScalar()) continue;
    ResolvedKey key = ResolveKey(it->first);
    const bool repeated = std::any_of(seen.begin(), seen.end(), [&](const ResolvedKey& k) {
      return k.kind == key.kind && k.text == key.text;
    });
    if (!repeated) {
      seen.push_back(std::move(key));
      continue;
    }
    const YAML::Mark mark = it->second.Mark().is_null() ? it->first.Mark() : it->second.Mark();
    out->push_back("line " + std::to_string(mark.line + 1) + ": key " + key.printed +
                   " already set in map");
  }
}

// Parses and converts one YAML document. `line_offset` is the document's first line in its file;
// `duplicate_keys`, when given, gets its repeated keys (YamlToJson).
Result<rapidjson::Document> ConvertYamlDocument(
    std::string_view text, int line_offset, std::vector<std::string>* duplicate_keys = nullptr) {
  rapidjson::Document doc;
  Converter converter(doc.GetAllocator(), text.size(), line_offset);
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (duplicate_keys != nullptr) FindDuplicates(root, duplicate_keys);
    Value v;
    Status s = converter.Convert(root, &v, 0);
    if (!s.ok()) return Err(std::move(s));
    static_cast<Value&>(doc).Swap(v);
  } catch (const YAML::Exception& e) {
    return Err(converter.LocatedError(e.mark, e.msg));
  } catch (const std::exception& e) {
    return Err(BadRequest(std::string("yaml: ") + e.what()));
  }
  return doc;
}

// ============================================================================================
// Streams of documents
// ============================================================================================

struct Chunk {
  std::string_view text;
  int first_line = 0;  // 0-based line of the chunk's first line in the file
};

std::string_view TrimSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  const size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

// Whether a chunk has anything but blank lines and comments.
bool HasContent(std::string_view chunk) {
  size_t pos = 0;
  while (pos < chunk.size()) {
    size_t end = chunk.find('\n', pos);
    if (end == std::string_view::npos) end = chunk.size();
    const std::string_view line = TrimSpace(chunk.substr(pos, end - pos));
    if (!line.empty() && line[0] != '#') return true;
    pos = end + 1;
  }
  return false;
}

// Splits a YAML stream at "---" lines, as apimachinery's YAMLReader does.
Status SplitDocuments(std::string_view text, std::string_view source, std::vector<Chunk>* out) {
  size_t pos = 0;
  size_t start = 0;
  int line = 0;
  int start_line = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const size_t next = end == std::string_view::npos ? text.size() : end + 1;
    const std::string_view l = text.substr(pos, next - pos);
    if (l.substr(0, 3) == "---") {
      const std::string_view rest = TrimSpace(l.substr(3));
      if (!rest.empty() && rest[0] != '#') {
        return BadRequest(std::string(source) + ": line " + std::to_string(line + 1) +
                          ": invalid Yaml document separator: " + std::string(rest));
      }
      if (pos > start) out->push_back(Chunk{text.substr(start, pos - start), start_line});
      start = next;
      start_line = line + 1;
    }
    pos = next;
    ++line;
  }
  if (text.size() > start) out->push_back(Chunk{text.substr(start), start_line});
  return Status();
}

std::string Location(std::string_view source, int document, int item) {
  std::string s(source);
  s += ": document ";
  s += std::to_string(document);
  if (item > 0) {
    s += ", item ";
    s += std::to_string(item);
  }
  return s;
}

Status AtLocation(const std::string& location, const Status& s) {
  return s.WithPrefix(location + ": ");
}

Status StringMember(const Value& obj, std::string_view key, std::string_view path,
                    std::string* out) {
  auto it = obj.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
  if (it == obj.MemberEnd() || it->value.IsNull()) return Status();
  if (!it->value.IsString()) {
    return BadRequest(std::string(path) + ": expected string, got " +
                      (it->value.IsNumber()  ? "number"
                       : it->value.IsBool()  ? "boolean"
                       : it->value.IsArray() ? "array"
                                             : "object"));
  }
  out->assign(it->value.GetString(), it->value.GetStringLength());
  return Status();
}

// Fills kind, apiVersion, name and namespace from m->object and checks they are present.
Status Identify(Manifest* m) {
  const Value& obj = m->object;
  KT_RETURN_IF_ERROR(StringMember(obj, "kind", "kind", &m->kind));
  KT_RETURN_IF_ERROR(StringMember(obj, "apiVersion", "apiVersion", &m->api_version));
  auto meta = obj.FindMember("metadata");
  if (meta != obj.MemberEnd() && !meta->value.IsNull()) {
    if (!meta->value.IsObject()) {
      return BadRequest(std::string("metadata: expected object, got ") +
                        (meta->value.IsArray() ? "array" : "scalar"));
    }
    KT_RETURN_IF_ERROR(StringMember(meta->value, "name", "metadata.name", &m->name));
    KT_RETURN_IF_ERROR(
        StringMember(meta->value, "namespace", "metadata.namespace", &m->namespace_));
  }
  if (m->kind.empty()) return BadRequest("Object 'Kind' is missing");
  if (m->api_version.empty()) return BadRequest("Object 'apiVersion' is missing");
  return Status();
}

// Adds the object of one document (expanding Lists) to `out`.
Status AddDocument(rapidjson::Document doc, std::string_view source, int document,
                   std::vector<Manifest>* out) {
  const std::string location = Location(source, document, 0);
  if (doc.IsNull()) return Status();  // an empty document
  if (!doc.IsObject()) {
    return BadRequest(location + ": expected object, got " + std::string(JsonTypeName(doc)));
  }
  Manifest m;
  m.source = std::string(source);
  m.document = document;
  m.object = std::move(doc);
  std::string kind;
  KT_RETURN_IF_ERROR(AtLocation(location, StringMember(m.object, "kind", "kind", &kind)));
  auto items = m.object.FindMember("items");
  const bool is_list = kind == "List" || (kind.size() > 4 && kind.ends_with("List") &&
                                          items != m.object.MemberEnd() && items->value.IsArray());
  if (!is_list) {
    KT_RETURN_IF_ERROR(AtLocation(location, Identify(&m)));
    out->push_back(std::move(m));
    return Status();
  }
  if (items == m.object.MemberEnd() || items->value.IsNull()) return Status();
  if (!items->value.IsArray()) {
    return BadRequest(location + ": items: expected array, got " +
                      std::string(JsonTypeName(items->value)));
  }
  const auto& array = items->value.GetArray();
  for (SizeType i = 0; i < array.Size(); ++i) {
    const int item = static_cast<int>(i) + 1;
    const std::string item_location = Location(source, document, item);
    if (!array[i].IsObject()) {
      return BadRequest(item_location + ": expected object, got " +
                        std::string(JsonTypeName(array[i])));
    }
    Manifest im;
    im.source = m.source;
    im.document = document;
    im.item = item;
    im.object.CopyFrom(array[i], im.object.GetAllocator());
    KT_RETURN_IF_ERROR(AtLocation(item_location, Identify(&im)));
    out->push_back(std::move(im));
  }
  return Status();
}

Status LoadJsonStream(std::string_view text, size_t offset, std::string_view source,
                      std::vector<Manifest>* out) {
  int document = 0;
  for (;;) {
    while (offset < text.size() &&
           std::string_view(" \t\n\r").find(text[offset]) != std::string_view::npos) {
      ++offset;
    }
    if (offset >= text.size()) return Status();
    ++document;
    size_t consumed = 0;
    Result<rapidjson::Document> doc = ParseJsonPrefix(text.substr(offset), &consumed, offset);
    if (!doc) return AtLocation(Location(source, document, 0), doc.error());
    offset += consumed;
    KT_RETURN_IF_ERROR(AddDocument(std::move(*doc), source, document, out));
  }
}

}  // namespace

std::string Manifest::Location() const { return api::Location(source, document, item); }

Result<rapidjson::Document> YamlToJson(std::string_view yaml,
                                       std::vector<std::string>* duplicate_keys) {
  return ConvertYamlDocument(yaml, 0, duplicate_keys);
}

Result<std::vector<Manifest>> LoadManifests(std::string_view text, std::string_view source) {
  std::vector<Manifest> out;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 byte order mark
  const size_t first = text.find_first_not_of(" \t\n\r");
  if (first != std::string_view::npos && text[first] == '{') {
    Status s = LoadJsonStream(text, first, source, &out);
    if (!s.ok()) return Err(std::move(s));
    return out;
  }
  std::vector<Chunk> chunks;
  Status s = SplitDocuments(text, source, &chunks);
  if (!s.ok()) return Err(std::move(s));
  int document = 0;
  for (const Chunk& chunk : chunks) {
    if (!HasContent(chunk.text)) continue;
    ++document;
    Result<rapidjson::Document> doc = ConvertYamlDocument(chunk.text, chunk.first_line);
    if (!doc) return Err(AtLocation(Location(source, document, 0), doc.error()));
    s = AddDocument(std::move(*doc), source, document, &out);
    if (!s.ok()) return Err(std::move(s));
  }
  return out;
}

Result<std::vector<Manifest>> LoadManifestFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    const int err = errno;
    std::string m = path + ": " + std::strerror(err);
    return Err(err == ENOENT ? NotFound(std::move(m)) : BadRequest(std::move(m)));
  }
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed) return Err(BadRequest(path + ": " + std::strerror(err)));
  return LoadManifests(text, path);
}

}  // namespace kt::api
