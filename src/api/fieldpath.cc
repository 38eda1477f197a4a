#include "api/fieldpath.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include <rapidjson/error/en.h>

#include "core/validation.h"

namespace kt::api {
namespace {

template <class T>
int Cmp(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int CompareText(std::string_view a, std::string_view b) {
  int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// strconv.FormatFloat(f, 'f' or 'e', -1, 64) as encoding/json and jsoniter pick them.
void AppendGoFloat(double f, std::string* out) {
  char buf[64];
  double a = std::fabs(f);
  bool exponent = a != 0 && (a < 1e-6 || a >= 1e21);
  auto r = exponent ? std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific)
                    : std::to_chars(buf, buf + sizeof buf, f, std::chars_format::fixed);
  std::string s(buf, r.ptr);
  size_t n = s.size();  // encoding/json writes 1e-07 as 1e-7
  if (exponent && n >= 4 && s[n - 4] == 'e' && s[n - 3] == '-' && s[n - 2] == '0') {
    s.erase(n - 2, 1);
  }
  out->append(s);
}

void AppendCanonicalJson(const rapidjson::Value& v, std::string* out) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      out->append("null");
      break;
    case rapidjson::kFalseType:
      out->append("false");
      break;
    case rapidjson::kTrueType:
      out->append("true");
      break;
    case rapidjson::kStringType:
      AppendGoJsonString(std::string_view(v.GetString(), v.GetStringLength()), out);
      break;
    case rapidjson::kNumberType:
      if (v.IsInt64()) {
        out->append(std::to_string(v.GetInt64()));
      } else if (v.IsUint64()) {
        out->append(std::to_string(v.GetUint64()));
      } else {
        AppendGoFloat(v.GetDouble(), out);
      }
      break;
    case rapidjson::kArrayType: {
      out->push_back('[');
      bool first = true;
      for (const auto& item : v.GetArray()) {
        if (!first) out->push_back(',');
        first = false;
        AppendCanonicalJson(item, out);
      }
      out->push_back(']');
      break;
    }
    case rapidjson::kObjectType: {
      // jsoniter's standard-library-compatible mode sorts map keys.
      std::vector<const rapidjson::Value::Member*> members;
      for (const auto& m : v.GetObject()) members.push_back(&m);
      std::stable_sort(members.begin(), members.end(), [](auto* a, auto* b) {
        return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
               std::string_view(b->name.GetString(), b->name.GetStringLength());
      });
      out->push_back('{');
      bool first = true;
      for (const auto* m : members) {
        if (!first) out->push_back(',');
        first = false;
        AppendGoJsonString(std::string_view(m->name.GetString(), m->name.GetStringLength()), out);
        out->push_back(':');
        AppendCanonicalJson(m->value, out);
      }
      out->push_back('}');
      break;
    }
  }
}

// Parses one JSON value that must fill `text` (trailing whitespace aside).
Status ParseWhole(std::string_view text, rapidjson::Document* doc) {
  std::string copy(text);  // StringStream reads up to a NUL
  rapidjson::StringStream in(copy.c_str());
  doc->ParseStream<rapidjson::kParseStopWhenDoneFlag>(in);
  if (doc->HasParseError()) {
    return BadRequest(std::string(rapidjson::GetParseError_En(doc->GetParseError())));
  }
  for (size_t i = in.Tell(); i < copy.size(); ++i) {
    char c = copy[i];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      return BadRequest("managedFields parsing: unexpected trailing data after JSON object");
    }
  }
  return Status::Ok();
}

}  // namespace

void AppendGoJsonString(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out->append("\\n");
    } else if (c == '\r') {
      out->append("\\r");
    } else if (c == '\t') {
      out->append("\\t");
    } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
      out->append("\\u00");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 0xf]);
    } else if (c == 0xe2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(s[i + 2]) & 0xfe) == 0xa8) {
      out->append(static_cast<unsigned char>(s[i + 2]) == 0xa8 ? "\\u2028" : "\\u2029");
      i += 2;
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
  out->push_back('"');
}

// --- PathValue -------------------------------------------------------------------------------

PathValue PathValue::FromJson(const rapidjson::Value& v) {
  PathValue p;
  switch (v.GetType()) {
    case rapidjson::kNullType:
      p.kind = Kind::kNull;
      break;
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      p.kind = Kind::kBool;
      p.bool_value = v.GetBool();
      break;
    case rapidjson::kStringType:
      p.kind = Kind::kString;
      p.text.assign(v.GetString(), v.GetStringLength());
      break;
    case rapidjson::kNumberType:
      p.kind = Kind::kNumber;
      if (v.IsInt64()) {
        p.is_int = true;
        p.int_value = v.GetInt64();
      } else {
        p.float_value = v.GetDouble();
      }
      break;
    case rapidjson::kArrayType:
      p.kind = Kind::kList;
      AppendCanonicalJson(v, &p.text);
      break;
    case rapidjson::kObjectType:
      p.kind = Kind::kMap;
      AppendCanonicalJson(v, &p.text);
      break;
  }
  return p;
}

int PathValue::Compare(const PathValue& o) const {
  if (kind != o.kind) return kind < o.kind ? -1 : 1;
  switch (kind) {
    case Kind::kNumber:
      if (is_int && o.is_int) return Cmp(int_value, o.int_value);
      return Cmp(is_int ? static_cast<double>(int_value) : float_value,
                 o.is_int ? static_cast<double>(o.int_value) : o.float_value);
    case Kind::kBool:
      return Cmp(bool_value, o.bool_value);
    case Kind::kNull:
      return 0;
    default:
      return CompareText(text, o.text);
  }
}

void PathValue::AppendJson(std::string* out) const {
  switch (kind) {
    case Kind::kNumber:
      if (is_int) {
        out->append(std::to_string(int_value));
      } else {
        AppendGoFloat(float_value, out);
      }
      break;
    case Kind::kString:
      AppendGoJsonString(text, out);
      break;
    case Kind::kBool:
      out->append(bool_value ? "true" : "false");
      break;
    case Kind::kNull:
      out->append("null");
      break;
    default:
      out->append(text);
  }
}

std::string PathValue::ToString() const {
  switch (kind) {
    case Kind::kString:
      return GoQuote(text);
    case Kind::kNumber:
      if (!is_int && float_value == std::floor(float_value) && std::fabs(float_value) < 1e21) {
        return std::to_string(static_cast<int64_t>(float_value));
      }
      [[fallthrough]];
    default: {
      std::string s;
      AppendJson(&s);
      return s;
    }
  }
}

// --- PathElement -----------------------------------------------------------------------------

PathElement PathElement::Field(std::string_view name) {
  PathElement e;
  e.kind = Kind::kField;
  e.name = name;
  return e;
}

PathElement PathElement::Key(std::vector<KeyField> fields) {
  PathElement e;
  e.kind = Kind::kKey;
  std::stable_sort(fields.begin(), fields.end(),
                   [](const KeyField& a, const KeyField& b) { return a.name < b.name; });
  e.key = std::move(fields);
  return e;
}

PathElement PathElement::Value(PathValue v) {
  PathElement e;
  e.kind = Kind::kValue;
  e.value = std::move(v);
  return e;
}

PathElement PathElement::Index(int64_t i) {
  PathElement e;
  e.kind = Kind::kIndex;
  e.index = i;
  return e;
}

int PathElement::Compare(const PathElement& o) const {
  if (kind != o.kind) return kind < o.kind ? -1 : 1;
  switch (kind) {
    case Kind::kField:
      return CompareText(name, o.name);
    case Kind::kKey:
      // value.FieldList.Compare: field by field, then the shorter list first.
      for (size_t i = 0;; ++i) {
        if (i >= key.size() && i >= o.key.size()) return 0;
        if (i >= key.size()) return -1;
        if (i >= o.key.size()) return 1;
        if (int c = CompareText(key[i].name, o.key[i].name)) return c;
        if (int c = key[i].value.Compare(o.key[i].value)) return c;
      }
    case Kind::kValue:
      return value.Compare(o.value);
    case Kind::kIndex:
      return Cmp(index, o.index);
  }
  return 0;
}

std::string PathElement::ToString() const {
  switch (kind) {
    case Kind::kField:
      return "." + name;
    case Kind::kKey: {
      std::string s = "[";
      for (size_t i = 0; i < key.size(); ++i) {
        if (i) s += ",";
        s += key[i].name + "=" + key[i].value.ToString();
      }
      return s + "]";
    }
    case Kind::kValue:
      return "[=" + value.ToString() + "]";
    case Kind::kIndex:
      return "[" + std::to_string(index) + "]";
  }
  return "{{invalid path element}}";
}

std::string PathElement::Serialize() const {
  std::string s;
  switch (kind) {
    case Kind::kField:
      s = "f:" + name;  // written raw, as upstream's stream.WriteRaw does
      break;
    case Kind::kKey:
      s = "k:{";
      for (size_t i = 0; i < key.size(); ++i) {
        if (i) s.push_back(',');
        AppendGoJsonString(key[i].name, &s);
        s.push_back(':');
        key[i].value.AppendJson(&s);
      }
      s.push_back('}');
      break;
    case Kind::kValue:
      s = "v:";
      value.AppendJson(&s);
      break;
    case Kind::kIndex:
      s = "i:" + std::to_string(index);
      break;
  }
  return s;
}

Result<PathElement> PathElement::Deserialize(std::string_view s) {
  if (s.size() < 2) return Err(BadRequest("key must be 2 characters long:"));
  if (s[1] != ':') return Err(BadRequest("missing colon: " + std::string(s)));
  std::string_view rest = s.substr(2);
  switch (s[0]) {
    case 'f':
      return Field(rest);
    case 'v': {
      rapidjson::Document doc;
      if (Status st = ParseWhole(rest, &doc); !st.ok()) return Err(st);
      return Value(PathValue::FromJson(doc));
    }
    case 'k': {
      rapidjson::Document doc;
      if (Status st = ParseWhole(rest, &doc); !st.ok()) return Err(st);
      if (!doc.IsObject()) {
        return Err(BadRequest("ReadObjectCB: expect { or n, but found " + std::string(rest)));
      }
      std::vector<KeyField> fields;
      for (const auto& m : doc.GetObject()) {
        fields.push_back({std::string(m.name.GetString(), m.name.GetStringLength()),
                          PathValue::FromJson(m.value)});
      }
      return Key(std::move(fields));
    }
    case 'i': {
      int64_t i = 0;
      std::string_view digits = rest;
      if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
      auto r = std::from_chars(digits.data(), digits.data() + digits.size(), i);
      if (digits.empty() || r.ec != std::errc() || r.ptr != digits.data() + digits.size()) {
        return Err(BadRequest("strconv.Atoi: parsing " + GoQuote(rest) + ": invalid syntax"));
      }
      return Index(i);
    }
    default:
      return Err(NotFound("unknown path element type"));
  }
}

std::string PathToString(std::span<const PathElement> path) {
  std::string s;
  for (const auto& pe : path) s += pe.ToString();
  return s;
}

// --- FieldSet --------------------------------------------------------------------------------

namespace {

template <class Vec, class Get>
auto LowerBound(Vec& v, const PathElement& pe, Get get) {
  return std::lower_bound(v.begin(), v.end(), pe,
                          [&](const auto& a, const PathElement& b) { return get(a) < b; });
}

const PathElement& Self(const PathElement& e) { return e; }
const PathElement& ChildElement(const FieldSet::Child& c) { return c.element; }

bool HasMember(const std::vector<PathElement>& members, const PathElement& pe) {
  auto it = LowerBound(members, pe, Self);
  return it != members.end() && *it == pe;
}

// Merges two sorted member lists.
std::vector<PathElement> MergeMembers(const std::vector<PathElement>& a,
                                      const std::vector<PathElement>& b, bool keep_a_only,
                                      bool keep_b_only, bool keep_both) {
  std::vector<PathElement> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int c = a[i].Compare(b[j]);
    if (c < 0) {
      if (keep_a_only) out.push_back(a[i]);
      ++i;
    } else if (c > 0) {
      if (keep_b_only) out.push_back(b[j]);
      ++j;
    } else {
      if (keep_both) out.push_back(a[i]);
      ++i;
      ++j;
    }
  }
  if (keep_a_only) out.insert(out.end(), a.begin() + i, a.end());
  if (keep_b_only) out.insert(out.end(), b.begin() + j, b.end());
  return out;
}

}  // namespace

FieldSet* FieldSet::Descend(const PathElement& pe) {
  auto it = LowerBound(children_, pe, ChildElement);
  if (it != children_.end() && it->element == pe) return &it->set;
  it = children_.insert(it, Child{pe, FieldSet()});
  return &it->set;
}

void FieldSet::Insert(std::span<const PathElement> path) {
  if (path.empty()) return;
  FieldSet* s = this;
  for (size_t i = 0; i + 1 < path.size(); ++i) s = s->Descend(path[i]);
  auto it = LowerBound(s->members_, path.back(), Self);
  if (it == s->members_.end() || !(*it == path.back())) s->members_.insert(it, path.back());
}

bool FieldSet::Has(std::span<const PathElement> path) const {
  if (path.empty()) return false;
  const FieldSet* s = this;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    s = s->WithPrefix(path[i]);
    if (s == nullptr) return false;
  }
  return HasMember(s->members_, path.back());
}

bool FieldSet::Empty() const {
  if (!members_.empty()) return false;
  for (const auto& c : children_) {
    if (!c.set.Empty()) return false;
  }
  return true;
}

size_t FieldSet::Size() const {
  size_t n = members_.size();
  for (const auto& c : children_) n += c.set.Size();
  return n;
}

const FieldSet* FieldSet::WithPrefix(const PathElement& pe) const {
  auto it = LowerBound(children_, pe, ChildElement);
  if (it != children_.end() && it->element == pe) return &it->set;
  return nullptr;
}

FieldSet FieldSet::Union(const FieldSet& o) const {
  FieldSet out;
  out.members_ = MergeMembers(members_, o.members_, true, true, true);
  size_t i = 0, j = 0;
  while (i < children_.size() && j < o.children_.size()) {
    int c = children_[i].element.Compare(o.children_[j].element);
    if (c < 0) {
      out.children_.push_back(children_[i++]);
    } else if (c > 0) {
      out.children_.push_back(o.children_[j++]);
    } else {
      out.children_.push_back(
          Child{children_[i].element, children_[i].set.Union(o.children_[j].set)});
      ++i;
      ++j;
    }
  }
  out.children_.insert(out.children_.end(), children_.begin() + i, children_.end());
  out.children_.insert(out.children_.end(), o.children_.begin() + j, o.children_.end());
  return out;
}

FieldSet FieldSet::Intersection(const FieldSet& o) const {
  FieldSet out;
  out.members_ = MergeMembers(members_, o.members_, false, false, true);
  size_t i = 0, j = 0;
  while (i < children_.size() && j < o.children_.size()) {
    int c = children_[i].element.Compare(o.children_[j].element);
    if (c < 0) {
      ++i;
    } else if (c > 0) {
      ++j;
    } else {
      FieldSet res = children_[i].set.Intersection(o.children_[j].set);
      if (!res.Empty()) out.children_.push_back(Child{children_[i].element, std::move(res)});
      ++i;
      ++j;
    }
  }
  return out;
}

FieldSet FieldSet::Difference(const FieldSet& o) const {
  FieldSet out;
  out.members_ = MergeMembers(members_, o.members_, true, false, false);
  size_t i = 0, j = 0;
  while (i < children_.size() && j < o.children_.size()) {
    int c = children_[i].element.Compare(o.children_[j].element);
    if (c < 0) {
      out.children_.push_back(children_[i++]);
    } else if (c > 0) {
      ++j;
    } else {
      FieldSet diff = children_[i].set.Difference(o.children_[j].set);
      if (!diff.Empty()) out.children_.push_back(Child{children_[i].element, std::move(diff)});
      ++i;
      ++j;
    }
  }
  out.children_.insert(out.children_.end(), children_.begin() + i, children_.end());
  return out;
}

FieldSet FieldSet::RecursiveDifference(const FieldSet& o) const {
  FieldSet out;
  out.members_ = MergeMembers(members_, o.members_, true, false, false);
  for (const auto& c : children_) {
    if (HasMember(o.members_, c.element)) continue;
    const FieldSet* other = o.WithPrefix(c.element);
    if (other == nullptr) {
      out.children_.push_back(c);
      continue;
    }
    FieldSet diff = c.set.RecursiveDifference(*other);
    if (!diff.Empty()) out.children_.push_back(Child{c.element, std::move(diff)});
  }
  return out;
}

FieldSet FieldSet::EnsureNamedFieldsAreMembers(const ValueSchema* schema) const {
  FieldSet out;
  out.members_ = members_;
  bool is_struct = schema != nullptr && schema->kind == ValueKind::kObject && schema->type;
  for (const auto& c : children_) {
    const ValueSchema* child_schema = nullptr;
    if (schema != nullptr) {
      if (c.element.kind == PathElement::Kind::kField) {
        if (is_struct) {
          if (const SchemaField* f = schema->type->FindField(c.element.name)) {
            child_schema = f->value;
            auto it = LowerBound(out.members_, c.element, Self);
            if (it == out.members_.end() || !(*it == c.element)) {
              out.members_.insert(it, c.element);
            }
          }
        } else if (schema->kind == ValueKind::kMap) {
          child_schema = schema->element;
        }
      } else if (c.element.kind == PathElement::Kind::kKey && schema->kind == ValueKind::kArray) {
        child_schema = schema->element;
      }
    }
    out.children_.push_back(Child{c.element, c.set.EnsureNamedFieldsAreMembers(child_schema)});
  }
  return out;
}

void FieldSet::IteratePrefix(Path* prefix, const std::function<void(const Path&)>& fn) const {
  for (const auto& m : members_) {
    prefix->push_back(m);
    fn(*prefix);
    prefix->pop_back();
  }
  for (const auto& c : children_) {
    prefix->push_back(c.element);
    c.set.IteratePrefix(prefix, fn);
    prefix->pop_back();
  }
}

void FieldSet::Iterate(const std::function<void(const Path&)>& fn) const {
  Path prefix;
  IteratePrefix(&prefix, fn);
}

std::vector<std::string> FieldSet::PathStrings() const {
  std::vector<std::string> out;
  Iterate([&](const Path& p) { out.push_back(PathToString(p)); });
  return out;
}

bool FieldSet::operator==(const FieldSet& o) const {
  if (members_ != o.members_ || children_.size() != o.children_.size()) return false;
  for (size_t i = 0; i < children_.size(); ++i) {
    if (!(children_[i].element == o.children_[i].element) ||
        !(children_[i].set == o.children_[i].set)) {
      return false;
    }
  }
  return true;
}

void FieldSet::EmitContents(bool include_self, std::string* out) const {
  bool first = true;
  auto pre_write = [&] {
    if (!first) out->push_back(',');
    first = false;
  };
  if (include_self && !(members_.empty() && children_.empty())) {
    pre_write();
    out->append("\".\":{}");
  }
  auto write_key = [&](const PathElement& pe) {
    AppendGoJsonString(pe.Serialize(), out);
    out->push_back(':');
  };
  size_t mi = 0, ci = 0;
  while (mi < members_.size() || ci < children_.size()) {
    int c = mi >= members_.size()    ? 1
            : ci >= children_.size() ? -1
                                     : members_[mi].Compare(children_[ci].element);
    pre_write();
    if (c < 0) {
      write_key(members_[mi++]);
      out->append("{}");
      continue;
    }
    write_key(children_[ci].element);
    out->push_back('{');
    children_[ci].set.EmitContents(c == 0, out);
    out->push_back('}');
    if (c == 0) ++mi;
    ++ci;
  }
}

void FieldSet::AppendJson(std::string* out) const {
  out->push_back('{');
  EmitContents(false, out);
  out->push_back('}');
}

std::string FieldSet::ToJson() const {
  std::string out;
  AppendJson(&out);
  return out;
}

Status FieldSet::Read(const rapidjson::Value& v, FieldSet* out, bool* is_member) {
  *is_member = false;
  bool any = false;
  if (v.IsObject()) {
    for (const auto& m : v.GetObject()) {
      std::string_view key(m.name.GetString(), m.name.GetStringLength());
      if (key == ".") {
        *is_member = true;
        continue;
      }
      Result<PathElement> pe = PathElement::Deserialize(key);
      if (!pe) {
        if (pe.error().code() == StatusCode::kNotFound) continue;  // an unknown type: skipped
        return BadRequest("parsing key as path element: " + pe.error().message());
      }
      FieldSet grandchildren;
      bool child_is_member = false;
      KT_RETURN_IF_ERROR(Read(m.value, &grandchildren, &child_is_member));
      if (child_is_member) {
        any = true;
        auto it = LowerBound(out->members_, *pe, Self);
        if (it == out->members_.end() || !(*it == *pe)) out->members_.insert(it, *pe);
      }
      if (!grandchildren.members_.empty() || !grandchildren.children_.empty()) {
        any = true;
        *out->Descend(*pe) = std::move(grandchildren);
      }
    }
  } else if (!v.IsNull()) {
    return BadRequest("ReadMapCB: expect { or n, but found a non-object value");
  }
  if (!any) *is_member = true;
  return Status::Ok();
}

Result<FieldSet> FieldSet::FromValue(const rapidjson::Value& fields_v1) {
  FieldSet out;
  bool is_member = false;
  if (Status st = Read(fields_v1, &out, &is_member); !st.ok()) return Err(st);
  return out;
}

Result<FieldSet> FieldSet::FromJson(std::string_view json) {
  rapidjson::Document doc;
  if (Status st = ParseWhole(json, &doc); !st.ok()) return Err(st);
  return FromValue(doc);
}

}  // namespace kt::api
