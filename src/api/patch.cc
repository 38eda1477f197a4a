#include "api/patch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "api/schema.h"

namespace kt::api {

namespace {

using rapidjson::Document;
using rapidjson::SizeType;
using rapidjson::Value;
using Allocator = Document::AllocatorType;

// Deeper documents are refused before parsing: RapidJSON's copy and writer, and our merge,
// recurse. Go's decoder stops at 10000; Kubernetes objects nest a few tens deep.
constexpr int kMaxDepth = 1000;

// A JSON patch may copy at most this many JSON nodes in total (each copy counts its size), so
// a few thousand `copy` operations cannot double a document into gigabytes.
constexpr size_t kMaxCopiedNodes = 1 << 20;

// ---- Small helpers ---------------------------------------------------------------------------

std::string_view View(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

Value::StringRefType Ref(std::string_view s) {
  return Value::StringRefType(s.data(), static_cast<SizeType>(s.size()));
}

Value::MemberIterator Find(Value& object, std::string_view name) {
  return object.FindMember(Value(Ref(name)));
}

Value* FindPtr(Value& object, std::string_view name) {
  auto it = Find(object, name);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

// reflect.Kind names of the Go value a JSON value decodes to.
std::string_view GoKindName(const Value& v) {
  switch (v.GetType()) {
    case rapidjson::kObjectType:
      return "map";
    case rapidjson::kArrayType:
      return "slice";
    case rapidjson::kStringType:
      return "string";
    case rapidjson::kNumberType:
      return v.IsDouble() ? "float64" : "int64";
    case rapidjson::kTrueType:
    case rapidjson::kFalseType:
      return "bool";
    case rapidjson::kNullType:
      return "nil";
  }
  return "invalid";
}

// Go's %v of a float64: shortest round-trip digits, exponent form below 1e-4 or from 1e21.
std::string GoFloat(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  if (d == 0) return std::signbit(d) ? "-0" : "0";
  char buf[64];
  int precision = 1;
  for (; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  // buf = [-]d.ddde±XX
  std::string s = buf;
  bool negative = s[0] == '-';
  if (negative) s.erase(0, 1);
  size_t e = s.find('e');
  int exp = std::atoi(s.c_str() + e + 1);
  std::string digits;
  for (size_t i = 0; i < e; ++i) {
    if (s[i] != '.') digits += s[i];
  }
  std::string out = negative ? "-" : "";
  if (exp < -4 || exp >= 21) {
    out += digits[0];
    if (digits.size() > 1) out += "." + digits.substr(1);
    char ebuf[16];
    std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    return out + ebuf;
  }
  if (exp < 0) return out + "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  if (static_cast<size_t>(exp) + 1 >= digits.size()) {
    return out + digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0');
  }
  return out + digits.substr(0, static_cast<size_t>(exp) + 1) + "." +
         digits.substr(static_cast<size_t>(exp) + 1);
}

// Go's fmt %v of the decoded value: map[k:v ...] with sorted keys, [a b], <nil>. Used in error
// messages that quote a patch fragment, as upstream does.
void AppendGoValue(std::string& out, const Value& v, int depth = 0) {
  if (depth > 32 || out.size() > 4096) {
    out += "...";
    return;
  }
  switch (v.GetType()) {
    case rapidjson::kNullType:
      out += "<nil>";
      break;
    case rapidjson::kTrueType:
      out += "true";
      break;
    case rapidjson::kFalseType:
      out += "false";
      break;
    case rapidjson::kStringType:
      out += View(v);
      break;
    case rapidjson::kNumberType:
      if (v.IsInt64()) {
        out += std::to_string(v.GetInt64());
      } else if (v.IsUint64()) {
        out += std::to_string(v.GetUint64());
      } else {
        out += GoFloat(v.GetDouble());
      }
      break;
    case rapidjson::kArrayType: {
      out += '[';
      bool first = true;
      for (const Value& e : v.GetArray()) {
        if (!first) out += ' ';
        first = false;
        AppendGoValue(out, e, depth + 1);
      }
      out += ']';
      break;
    }
    case rapidjson::kObjectType: {
      std::vector<const Value::Member*> members;
      for (const auto& m : v.GetObject()) members.push_back(&m);
      std::sort(members.begin(), members.end(), [](const Value::Member* a, const Value::Member* b) {
        return View(a->name) < View(b->name);
      });
      out += "map[";
      bool first = true;
      for (const Value::Member* m : members) {
        if (!first) out += ' ';
        first = false;
        out += View(m->name);
        out += ':';
        AppendGoValue(out, m->value, depth + 1);
      }
      out += ']';
      break;
    }
  }
}

std::string GoValue(const Value& v) {
  std::string out;
  AppendGoValue(out, v);
  return out;
}

// Go's quoting of a byte in a syntax error: 'x', or '\x01' for control bytes.
std::string QuoteChar(unsigned char c) {
  if (c == '\'') return "'\\''";
  if (c == '"') return "'\"'";
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "'\\x%02x'", c);
  return buf;
}

// Go encoding/json's wording for a syntax error at `offset` of `text`.
std::string GoSyntaxError(rapidjson::ParseErrorCode code, size_t offset, std::string_view text) {
  if (code == rapidjson::kParseErrorDocumentEmpty) {
    // RapidJSON also says "empty" for a document that starts with a stray character ("}");
    // Go names that character.
    offset = text.find_first_not_of(" \t\r\n");
    if (offset == std::string_view::npos) return "unexpected end of JSON input";
    return "invalid character " + QuoteChar(static_cast<unsigned char>(text[offset])) +
           " looking for beginning of value";
  }
  if (offset >= text.size()) return "unexpected end of JSON input";
  std::string c = QuoteChar(static_cast<unsigned char>(text[offset]));
  if (code == rapidjson::kParseErrorValueInvalid) {
    // RapidJSON stops inside a bad literal; Go reports its first wrong letter.
    size_t start = offset;
    while (start > 0 && text[start - 1] >= 'a' && text[start - 1] <= 'z') --start;
    char first = text[start];
    if (first == 'n' || first == 't' || first == 'f') {
      std::string_view word = first == 'n' ? "null" : first == 't' ? "true" : "false";
      for (size_t k = 1; k < word.size(); ++k) {
        if (start + k >= text.size()) return "unexpected end of JSON input";
        if (text[start + k] != word[k]) {
          return "invalid character " + QuoteChar(static_cast<unsigned char>(text[start + k])) +
                 " in literal " + std::string(word) + " (expecting '" + word[k] + "')";
        }
      }
    }
  }
  switch (code) {
    case rapidjson::kParseErrorDocumentRootNotSingular:
      return "invalid character " + c + " after top-level value";
    case rapidjson::kParseErrorObjectMissName:
      return "invalid character " + c + " looking for beginning of object key string";
    case rapidjson::kParseErrorObjectMissColon:
      return "invalid character " + c + " after object key";
    case rapidjson::kParseErrorObjectMissCommaOrCurlyBracket:
      return "invalid character " + c + " after object key:value pair";
    case rapidjson::kParseErrorArrayMissCommaOrSquareBracket:
      return "invalid character " + c + " after array element";
    case rapidjson::kParseErrorStringUnicodeEscapeInvalidHex:
    case rapidjson::kParseErrorStringEscapeInvalid:
      return "invalid character " + c + " in string escape code";
    case rapidjson::kParseErrorStringMissQuotationMark:
    case rapidjson::kParseErrorStringInvalidEncoding:
    case rapidjson::kParseErrorStringUnicodeSurrogateInvalid:
      return "invalid character " + c + " in string literal";
    case rapidjson::kParseErrorNumberTooBig:
    case rapidjson::kParseErrorNumberMissFraction:
    case rapidjson::kParseErrorNumberMissExponent:
      return "invalid character " + c + " in numeric literal";
    default:
      return "invalid character " + c + " looking for beginning of value";
  }
}

// The nesting depth of JSON text, counted without parsing (brackets outside strings).
bool TooDeep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

// Removes duplicate object members, the last one winning as in Go's decoder, at every level.
void Dedupe(Value& v, Allocator& alloc, int depth = 0) {
  if (depth > kMaxDepth) return;
  if (v.IsArray()) {
    for (Value& e : v.GetArray()) Dedupe(e, alloc, depth + 1);
    return;
  }
  if (!v.IsObject()) return;
  for (auto& m : v.GetObject()) Dedupe(m.value, alloc, depth + 1);
  SizeType n = v.MemberCount();
  if (n < 2) return;
  // Sort member positions by name to find duplicates in O(n log n).
  std::vector<SizeType> order(n);
  for (SizeType i = 0; i < n; ++i) order[i] = i;
  auto begin = v.MemberBegin();
  std::stable_sort(order.begin(), order.end(), [&](SizeType a, SizeType b) {
    return View(begin[a].name) < View(begin[b].name);
  });
  std::vector<bool> drop(n, false);
  bool any = false;
  for (SizeType i = 0; i + 1 < n; ++i) {
    if (View(begin[order[i]].name) == View(begin[order[i + 1]].name)) {
      drop[order[i]] = true;  // stable sort: order[i] comes earlier in the text
      any = true;
    }
  }
  if (!any) return;
  Value kept(rapidjson::kObjectType);
  for (SizeType i = 0; i < n; ++i) {
    if (!drop[i]) kept.AddMember(begin[i].name, begin[i].value, alloc);
  }
  v = kept;
}

// Parses `text` with `alloc` (the result's allocator, so values can be moved into the result).
// Errors are Go's wording, prefixed by `prefix`.
Status ParseJson(std::string_view text, Document& out, std::string_view prefix) {
  if (TooDeep(text)) return BadRequest(std::string(prefix) + "exceeded max depth");
  constexpr unsigned kFlags = rapidjson::kParseValidateEncodingFlag |
                              rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag;
  out.Parse<kFlags>(text.data(), text.size());
  if (out.HasParseError()) {
    return BadRequest(std::string(prefix) +
                      GoSyntaxError(out.GetParseError(), out.GetErrorOffset(), text));
  }
  Dedupe(out, out.GetAllocator());
  return Status::Ok();
}

// A copy that owns all its strings (RapidJSON's own copy shares strings held by reference, whose
// storage belongs to whoever made `src`).
// False when `src` nests deeper than kMaxDepth (the copy is then incomplete).
bool DeepCopy(const Value& src, Value& dst, Allocator& alloc, int depth = 0) {
  if (depth > kMaxDepth) return false;
  switch (src.GetType()) {
    case rapidjson::kStringType:
      dst.SetString(src.GetString(), src.GetStringLength(), alloc);
      return true;
    case rapidjson::kArrayType:
      dst.SetArray();
      dst.Reserve(src.Size(), alloc);
      for (const Value& e : src.GetArray()) {
        Value copy;
        if (!DeepCopy(e, copy, alloc, depth + 1)) return false;
        dst.PushBack(copy, alloc);
      }
      return true;
    case rapidjson::kObjectType:
      dst.SetObject();
      for (const auto& m : src.GetObject()) {
        Value name(m.name.GetString(), m.name.GetStringLength(), alloc);
        Value copy;
        if (!DeepCopy(m.value, copy, alloc, depth + 1)) return false;
        dst.AddMember(name, copy, alloc);
      }
      return true;
    default:
      dst.CopyFrom(src, alloc);  // scalars
      return true;
  }
}

// The nesting depth of a value (a scalar is 0). Callers keep documents within kMaxDepth, so the
// recursion is bounded.
int Depth(const Value& v) {
  int deepest = 0;
  if (v.IsArray()) {
    for (const Value& e : v.GetArray()) deepest = std::max(deepest, Depth(e));
    return deepest + 1;
  }
  if (v.IsObject()) {
    for (const auto& m : v.GetObject()) deepest = std::max(deepest, Depth(m.value));
    return deepest + 1;
  }
  return 0;
}

size_t CountNodes(const Value& v) {
  size_t n = 1;
  if (v.IsArray()) {
    for (const Value& e : v.GetArray()) n += CountNodes(e);
  } else if (v.IsObject()) {
    for (const auto& m : v.GetObject()) n += CountNodes(m.value);
  }
  return n;
}

// Equality of JSON scalars as Go compares decoded values (merge keys, primitive list items).
// Composite values are compared deeply (Go would panic on maps; we just compare).
bool SameValue(const Value& a, const Value& b) { return a == b; }

// A sortable text for a scalar, so that large lists can be indexed; nullopt for composites.
std::optional<std::string> ScalarKey(const Value& v) {
  switch (v.GetType()) {
    case rapidjson::kStringType:
      return "s" + std::string(View(v));
    case rapidjson::kNumberType: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "n%.17g", v.GetDouble());
      return std::string(buf);
    }
    case rapidjson::kTrueType:
      return "t";
    case rapidjson::kFalseType:
      return "f";
    case rapidjson::kNullType:
      return "z";
    default:
      return std::nullopt;
  }
}

// First position of a key among `keys` (nullptr entries never match). Linear for short lists;
// a sorted index once the list is long, so list merges stay O(n log n).
class KeyIndex {
 public:
  explicit KeyIndex(std::vector<const Value*> keys) : keys_(std::move(keys)) {
    if (keys_.size() <= 16) return;
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (keys_[i] == nullptr) continue;
      std::optional<std::string> k = ScalarKey(*keys_[i]);
      if (!k) {
        sorted_.clear();
        return;  // a composite key: stay linear
      }
      sorted_.emplace_back(std::move(*k), i);
    }
    std::stable_sort(sorted_.begin(), sorted_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    indexed_ = true;
  }

  // Position of the first key equal to `key`, or -1.
  long Find(const Value* key) const {
    if (key == nullptr) return -1;
    if (indexed_) {
      std::optional<std::string> k = ScalarKey(*key);
      if (k) {
        auto it = std::lower_bound(sorted_.begin(), sorted_.end(), *k,
                                   [](const auto& e, const std::string& s) { return e.first < s; });
        return it != sorted_.end() && it->first == *k ? static_cast<long>(it->second) : -1;
      }
    }
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (keys_[i] != nullptr && SameValue(*keys_[i], *key)) return static_cast<long>(i);
    }
    return -1;
  }

 private:
  std::vector<const Value*> keys_;
  std::vector<std::pair<std::string, size_t>> sorted_;
  bool indexed_ = false;
};

// ---- Strategic merge patch schema --------------------------------------------------------------
//
// The patch metadata of the kinds we serve is upstream's schema (api/schema.h): each field's
// `x-kubernetes-patch-strategy` (merge, retainKeys) and `x-kubernetes-patch-merge-key`, the
// `patchStrategy` / `patchMergeKey` tags of k8s.io/api. A list with no strategy is replaced (as
// taints and tolerations are), a map merges recursively.

using SmpType = SchemaType;
using SmpField = SchemaField;

const SmpField* LookupField(const SmpType* type, std::string_view name) {
  return type == nullptr ? nullptr : type->FindField(name);
}

// The struct a field leads to: its own type, or its list's items' or its map's values' type.
const SmpType* StructOf(const SmpField* field) {
  if (field == nullptr) return nullptr;
  const ValueSchema* v = field->value;
  if (v != nullptr && v->kind != ValueKind::kObject && v->element != nullptr) v = v->element;
  return v != nullptr && v->kind == ValueKind::kObject ? v->type : nullptr;
}

// The served kind named `kind` (each kind name is served once, in one group and version).
const SmpType* KindType(std::string_view kind) {
  for (const SchemaType& t : ServedSchema().types()) {
    for (const GroupVersionKind& gvk : t.group_version_kinds) {
      if (gvk.kind == kind) return &t;
    }
  }
  return nullptr;
}

// ---- Strategic merge patch -------------------------------------------------------------------

constexpr std::string_view kDirectiveMarker = "$patch";
constexpr std::string_view kRetainKeysDirective = "$retainKeys";
constexpr std::string_view kSetElementOrderPrefix = "$setElementOrder/";
constexpr std::string_view kDeleteFromPrimitiveListPrefix = "$deleteFromPrimitiveList/";

// An error in the patch. `invalid` marks the cases upstream answers with 422 rather than 400.
struct SmpError {
  std::string message;
  bool invalid = false;
};
using SmpStatus = std::optional<SmpError>;  // nullopt: OK

SmpError ErrBadArgType(std::string_view expected_kind, const Value& actual) {
  return {"expected a " + std::string(expected_kind) + ", but received a " +
          std::string(GoKindName(actual))};
}
SmpError ErrNoMergeKey(const Value& m, std::string_view key) {
  return {"map: " + GoValue(m) + " does not contain declared merge key: " + std::string(key)};
}
SmpError ErrBadPatchType(const Value& directive, const Value& m) {
  return {"unknown patch type: " + GoValue(directive) + " in map: " + GoValue(m)};
}
const SmpError kErrBadPatchFormatForRetainKeys{"invalid patch format of retainKeys"};
const SmpError kErrBadPatchFormatForSetElementOrderList{
    "invalid patch format of setElementOrder list"};
const SmpError kErrBadPatchFormatForPrimitiveList{"invalid patch format of primitive list"};
const SmpError kErrNoListOfLists{"lists of lists are not supported", true};

bool IsDirective(const Value& v, std::string_view directive) {
  return v.IsString() && View(v) == directive;
}

// Go treats all JSON numbers alike here; the other types must match exactly.
bool SameGoType(const Value& a, const Value& b) {
  if (a.IsNumber() && b.IsNumber()) return true;
  if (a.IsBool() && b.IsBool()) return true;
  return a.GetType() == b.GetType();
}

// Keys to match list elements by: each element's merge key value (maps), or the element itself
// (primitives). An element that is not a map with the merge key is an error, as upstream.
SmpStatus KeysOf(std::span<Value* const> items, std::string_view merge_key,
                 std::vector<const Value*>& keys) {
  keys.clear();
  keys.reserve(items.size());
  for (const Value* item : items) {
    if (merge_key.empty()) {
      keys.push_back(item);
      continue;
    }
    if (!item->IsObject()) return ErrBadArgType("map", *item);
    auto it = item->FindMember(Value(Ref(merge_key)));
    if (it == item->MemberEnd()) return ErrNoMergeKey(*item, merge_key);
    keys.push_back(&it->value);
  }
  return std::nullopt;
}

std::vector<Value*> Pointers(Value& list) {
  std::vector<Value*> out;
  out.reserve(list.Size());
  for (Value& e : list.GetArray()) out.push_back(&e);
  return out;
}

// sliceElementType: the elements of all lists have one Go type, and are not lists.
SmpStatus CheckElementTypes(std::initializer_list<const Value*> lists, bool* maps) {
  const Value* first = nullptr;
  for (const Value* list : lists) {
    if (list == nullptr) continue;
    for (const Value& e : list->GetArray()) {
      if (first == nullptr) {
        first = &e;
        if (e.IsArray()) return kErrNoListOfLists;
        if (!e.IsNull()) continue;
      } else if (SameGoType(*first, e) && !e.IsNull()) {
        continue;
      }
      std::string all;
      for (const Value* l : lists) {
        if (l == nullptr) continue;
        if (!all.empty()) all += ' ';
        all += GoValue(*l);
      }
      return SmpError{"list element types are not identical: [" + all + "]"};
    }
  }
  *maps = first != nullptr && first->IsObject();
  return std::nullopt;
}

// normalizeSliceOrder: a stable sort of `items` by the first place of their key in
// `order_keys`; items not found keep their relative order after the others.
SmpStatus SortByKeys(std::vector<Value*>& items, std::span<const Value* const> order_keys,
                     std::string_view merge_key) {
  std::vector<const Value*> item_keys;
  if (SmpStatus s = KeysOf(items, merge_key, item_keys)) return s;
  KeyIndex index(std::vector<const Value*>(order_keys.begin(), order_keys.end()));
  std::vector<std::pair<long, Value*>> keyed;
  keyed.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    long at = index.Find(item_keys[i]);
    keyed.emplace_back(at < 0 ? std::numeric_limits<long>::max() : at, items[i]);
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < keyed.size(); ++i) items[i] = keyed[i].second;
  return std::nullopt;
}

// Splits `items` into those whose key is among `by_keys` and the others, keeping order.
SmpStatus Partition(std::span<Value* const> items, std::span<const Value* const> by_keys,
                    std::string_view merge_key, std::vector<Value*>& present,
                    std::vector<Value*>& absent) {
  std::vector<const Value*> item_keys;
  if (SmpStatus s = KeysOf(items, merge_key, item_keys)) return s;
  KeyIndex index(std::vector<const Value*>(by_keys.begin(), by_keys.end()));
  for (size_t i = 0; i < items.size(); ++i) {
    (index.Find(item_keys[i]) >= 0 ? present : absent).push_back(items[i]);
  }
  return std::nullopt;
}

// normalizeElementOrder + mergeSortedSlice: patch items ordered by `patch_order_keys`, server
// items by `server_order_keys`, then interleaved: a server item goes first only when both are
// in the live list and it comes earlier there.
SmpStatus NormalizeOrder(std::vector<Value*> patch_items, std::vector<Value*> server_items,
                         std::span<const Value* const> patch_order_keys,
                         std::span<const Value* const> server_order_keys,
                         std::string_view merge_key, std::vector<Value*>& out) {
  if (SmpStatus s = SortByKeys(patch_items, patch_order_keys, merge_key)) return s;
  if (SmpStatus s = SortByKeys(server_items, server_order_keys, merge_key)) return s;
  std::vector<const Value*> patch_keys, server_keys;
  if (SmpStatus s = KeysOf(patch_items, merge_key, patch_keys)) return s;
  if (SmpStatus s = KeysOf(server_items, merge_key, server_keys)) return s;
  KeyIndex live(std::vector<const Value*>(server_order_keys.begin(), server_order_keys.end()));
  out.clear();
  out.reserve(patch_items.size() + server_items.size());
  size_t i = 0, j = 0;
  while (i < server_items.size() || j < patch_items.size()) {
    if (i >= server_items.size()) {
      out.push_back(patch_items[j++]);
    } else if (j >= patch_items.size()) {
      out.push_back(server_items[i++]);
    } else {
      long li = live.Find(server_keys[i]);
      long ri = live.Find(patch_keys[j]);
      if (li >= 0 && ri >= 0 && li < ri) {
        out.push_back(server_items[i++]);
      } else {
        out.push_back(patch_items[j++]);
      }
    }
  }
  return std::nullopt;
}

// Deep copies of keys, kept while the values they came from are merged away.
std::vector<const Value*> KeyPointers(const std::vector<Value>& keys) {
  std::vector<const Value*> out;
  out.reserve(keys.size());
  for (const Value& k : keys) out.push_back(&k);
  return out;
}

class StrategicMerger {
 public:
  explicit StrategicMerger(Allocator& alloc) : alloc_(alloc) {}

  // mergeMap: merges `patch` (an object, consumed) into `original` (made an object if it is
  // not one).
  SmpStatus MergeMap(Value& original, Value& patch, const SmpType* type, int depth) {
    if (depth > kMaxDepth) return SmpError{"exceeded max depth"};
    if (Value* directive = FindPtr(patch, kDirectiveMarker)) {
      if (IsDirective(*directive, "replace")) {
        patch.EraseMember(Value(Ref(kDirectiveMarker)));
        Value replacement(rapidjson::kObjectType);
        if (SmpStatus s = MergeMap(replacement, patch, type, depth + 1)) return s;
        original = replacement;
        return std::nullopt;
      }
      if (IsDirective(*directive, "delete")) {
        original.SetObject();
        return std::nullopt;
      }
      // "$patch: merge" asks for what merging does anyway (upstream rejects it in a map).
      if (!IsDirective(*directive, "merge")) return ErrBadPatchType(*directive, patch);
      patch.EraseMember(Value(Ref(kDirectiveMarker)));
    }
    if (!original.IsObject()) original.SetObject();

    if (SmpStatus s = ApplyRetainKeys(original, patch)) return s;
    if (SmpStatus s = ApplySetElementOrder(original, patch, type, depth)) return s;

    // Members of `original` are found through an index when both sides are large.
    std::optional<MemberIndex> index;
    if (static_cast<size_t>(original.MemberCount()) * patch.MemberCount() > 256) {
      index.emplace(original);
    }
    std::vector<bool> removed;
    auto find = [&](std::string_view name) -> long {
      long at;
      if (index) {
        at = index->Find(name);
      } else {
        auto it = Find(original, name);
        at = it == original.MemberEnd() ? -1 : static_cast<long>(it - original.MemberBegin());
      }
      if (at >= 0 && !removed.empty() && removed[static_cast<size_t>(at)]) return -1;
      return at;
    };

    for (auto& member : patch.GetObject()) {
      std::string_view key = View(member.name);
      Value& patch_value = member.value;
      bool delete_list = false;
      if (key.starts_with(kDeleteFromPrimitiveListPrefix)) {
        key.remove_prefix(kDeleteFromPrimitiveListPrefix.size());
        delete_list = true;
      } else if (key.starts_with(kSetElementOrderPrefix) || key == kRetainKeysDirective) {
        continue;  // consumed above
      }

      long at = find(key);
      if (patch_value.IsNull()) {
        if (at >= 0 && !delete_list) {
          if (removed.empty()) removed.resize(original.MemberCount(), false);
          removed[static_cast<size_t>(at)] = true;
        }
        continue;
      }
      const SmpField* field = LookupField(type, key);
      const SmpType* field_type = StructOf(field);
      bool merge_list = field != nullptr && field->patch_merge;
      std::string_view merge_key = field ? field->patch_merge_key : std::string_view();

      if (at < 0) {
        if (delete_list) {
          if (!patch_value.IsArray()) return kErrBadPatchFormatForPrimitiveList;
          continue;  // nothing to delete from
        }
        Value fresh;
        if (SmpStatus s = Fresh(fresh, patch_value, field_type, merge_list, merge_key, depth)) {
          return s;
        }
        Value name(key.data(), static_cast<SizeType>(key.size()), alloc_);
        original.AddMember(name, fresh, alloc_);
        if (!removed.empty()) removed.push_back(false);
        continue;
      }

      Value& original_value = original.MemberBegin()[at].value;
      if (delete_list) {
        if (!patch_value.IsArray()) return kErrBadPatchFormatForPrimitiveList;
        if (!original_value.IsArray()) continue;
        if (SmpStatus s =
                MergeSlice(original_value, patch_value, field_type, merge_key, true, depth + 1)) {
          return s;
        }
        continue;
      }
      if (!SameGoType(original_value, patch_value)) {
        Value fresh;
        if (SmpStatus s = Fresh(fresh, patch_value, field_type, merge_list, merge_key, depth)) {
          return s;
        }
        original_value = fresh;
      } else if (original_value.IsObject()) {
        if (SmpStatus s = MergeMap(original_value, patch_value, field_type, depth + 1)) return s;
      } else if (original_value.IsArray() && merge_list) {
        if (SmpStatus s =
                MergeSlice(original_value, patch_value, field_type, merge_key, false, depth + 1)) {
          return s;
        }
      } else if (original_value.IsArray()) {
        Value fresh;
        if (SmpStatus s = Fresh(fresh, patch_value, field_type, false, {}, depth)) return s;
        original_value = fresh;
      } else {
        original_value = patch_value;
      }
    }

    if (!removed.empty()) {
      Value kept(rapidjson::kObjectType);
      auto begin = original.MemberBegin();
      for (SizeType i = 0; i < original.MemberCount(); ++i) {
        if (!removed[i]) kept.AddMember(begin[i].name, begin[i].value, alloc_);
      }
      original = kept;
    }
    return std::nullopt;
  }

  // A patch value stored where the original had nothing (or a value of another type): its
  // directives are applied against an empty value, so none is ever stored.
  SmpStatus Fresh(Value& out, Value& patch_value, const SmpType* type, bool merge_list,
                  std::string_view merge_key, int depth) {
    if (depth > kMaxDepth) return SmpError{"exceeded max depth"};
    if (patch_value.IsObject()) {
      out.SetObject();
      return MergeMap(out, patch_value, type, depth + 1);
    }
    if (patch_value.IsArray()) {
      out.SetArray();
      if (merge_list) return MergeSlice(out, patch_value, type, merge_key, false, depth + 1);
      out.Reserve(patch_value.Size(), alloc_);
      for (Value& e : patch_value.GetArray()) {
        Value element;
        if (SmpStatus s = Fresh(element, e, type, false, {}, depth + 1)) return s;
        out.PushBack(element, alloc_);
      }
      return std::nullopt;
    }
    out = patch_value;
    return std::nullopt;
  }

 private:
  // Positions of an object's members by name.
  class MemberIndex {
   public:
    explicit MemberIndex(const Value& object) {
      entries_.reserve(object.MemberCount());
      auto begin = object.MemberBegin();
      for (SizeType i = 0; i < object.MemberCount(); ++i) {
        entries_.emplace_back(std::string(View(begin[i].name)), i);
      }
      std::stable_sort(entries_.begin(), entries_.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    long Find(std::string_view name) const {
      auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                                 [](const auto& e, std::string_view n) { return e.first < n; });
      return it != entries_.end() && it->first == name ? static_cast<long>(it->second) : -1;
    }

   private:
    // Copies: members move when the object grows, and short names live inside them.
    std::vector<std::pair<std::string, SizeType>> entries_;
  };

  // applyRetainKeysDirective: keys of `original` not listed are cleared; every non-null patch
  // key must be listed.
  SmpStatus ApplyRetainKeys(Value& original, Value& patch) {
    auto it = Find(patch, kRetainKeysDirective);
    if (it == patch.MemberEnd()) return std::nullopt;
    if (!it->value.IsArray()) return kErrBadPatchFormatForRetainKeys;
    std::vector<std::string_view> retain;
    for (const Value& v : it->value.GetArray()) {
      if (v.IsString()) retain.push_back(View(v));
    }
    std::sort(retain.begin(), retain.end());
    auto listed = [&](std::string_view k) {
      return std::binary_search(retain.begin(), retain.end(), k);
    };
    for (const auto& m : patch.GetObject()) {
      std::string_view k = View(m.name);
      if (m.value.IsNull() || k == kRetainKeysDirective ||
          k.starts_with(kDeleteFromPrimitiveListPrefix) || k.starts_with(kSetElementOrderPrefix)) {
        continue;
      }
      if (!listed(k)) return kErrBadPatchFormatForRetainKeys;
    }
    bool any = false;
    for (const auto& m : original.GetObject()) any |= !listed(View(m.name));
    if (any) {
      Value kept(rapidjson::kObjectType);
      for (auto& m : original.GetObject()) {
        if (listed(View(m.name))) kept.AddMember(m.name, m.value, alloc_);
      }
      original = kept;
    }
    patch.EraseMember(it);  // last: `retain` points into it
    return std::nullopt;
  }

  // validatePatchWithSetOrderList: the patch list's items (deletions aside) appear in the
  // `$setElementOrder` list in the same relative order.
  static SmpStatus ValidateSetOrder(const Value* patch_list, const Value& order,
                                    std::string_view merge_key) {
    if (patch_list == nullptr || patch_list->Empty() || order.Empty()) return std::nullopt;
    std::vector<const Value*> items;
    for (const Value& v : patch_list->GetArray()) {
      if (!merge_key.empty()) {
        if (!v.IsObject()) return ErrBadArgType("map", v);
        auto d = v.FindMember(Value(Ref(kDirectiveMarker)));
        if (d != v.MemberEnd()) continue;  // deletions and other directives are not ordered
      }
      items.push_back(&v);
    }
    auto key_of = [&](const Value& v, const Value** out) -> SmpStatus {
      if (merge_key.empty()) {
        *out = &v;
        return std::nullopt;
      }
      if (!v.IsObject()) return ErrBadArgType("map", v);
      auto it = v.FindMember(Value(Ref(merge_key)));
      if (it == v.MemberEnd()) return ErrNoMergeKey(v, merge_key);
      *out = &it->value;
      return std::nullopt;
    };
    size_t p = 0, o = 0;
    while (p < items.size() && o < order.Size()) {
      const Value *left = nullptr, *right = nullptr;
      if (SmpStatus s = key_of(*items[p], &left)) return s;
      if (SmpStatus s = key_of(order[static_cast<SizeType>(o)], &right)) return s;
      if (SameValue(*left, *right)) ++p;
      ++o;
    }
    if (p < items.size()) {
      return SmpError{"The order in patch list:\n" + GoValue(*patch_list) +
                      "\n doesn't match $setElementOrder list:\n" + GoValue(order) + "\n"};
    }
    return std::nullopt;
  }

  // mergePatchIntoOriginal: each `$setElementOrder/<list>` is applied with its list: the list is
  // merged (or taken from the patch), then ordered by the directive, the live list deciding
  // where the server's own items go. Both the directive and the list leave the patch.
  SmpStatus ApplySetElementOrder(Value& original, Value& patch, const SmpType* type, int depth) {
    // Names to erase from the patch afterwards, copied: short names live inside the members.
    std::vector<std::string> handled;
    for (auto& member : patch.GetObject()) {
      std::string_view key = View(member.name);
      if (!key.starts_with(kSetElementOrderPrefix)) continue;
      handled.emplace_back(key);
      Value& order = member.value;
      if (!order.IsArray()) return ErrBadArgType("slice", order);
      std::string_view list_key = key.substr(kSetElementOrderPrefix.size());
      Value* live = FindPtr(original, list_key);
      Value* patch_list = FindPtr(patch, list_key);
      if (live != nullptr && !live->IsArray()) return ErrBadArgType("slice", *live);
      if (patch_list != nullptr && !patch_list->IsArray())
        return ErrBadArgType("slice", *patch_list);
      const SmpField* field = LookupField(type, list_key);
      bool merge_list = field != nullptr && field->patch_merge;
      std::string_view merge_key = field ? field->patch_merge_key : std::string_view();
      const SmpType* elem_type = StructOf(field);
      if (SmpStatus s = ValidateSetOrder(patch_list, order, merge_key)) return s;
      if (live == nullptr && patch_list == nullptr) continue;
      handled.emplace_back(list_key);

      // The live order, snapshot before merging changes the live elements.
      std::vector<Value> server_keys;
      bool maps = false;
      if (merge_list) {
        if (SmpStatus s = CheckElementTypes({live, patch_list}, &maps)) return s;
        if (maps && merge_key.empty()) {
          return SmpError{"cannot merge lists without merge key for type string"};
        }
      }
      std::string_view item_key = maps ? merge_key : std::string_view();
      if (live != nullptr && merge_list) {
        std::vector<const Value*> keys;
        std::vector<Value*> items = Pointers(*live);
        if (SmpStatus s = KeysOf(items, item_key, keys)) return s;
        for (const Value* k : keys) server_keys.emplace_back(*k, alloc_);
      }

      Value merged;
      if (live != nullptr && patch_list == nullptr) {
        merged = *live;
      } else if (live == nullptr || !merge_list) {
        if (SmpStatus s = Fresh(merged, *patch_list, elem_type, merge_list, merge_key, depth)) {
          return s;
        }
      } else {
        merged = *live;
        if (SmpStatus s = MergeSlice(merged, *patch_list, elem_type, merge_key, false, depth + 1)) {
          return s;
        }
      }

      if (merge_list && !merged.Empty()) {
        std::vector<const Value*> order_keys;
        std::vector<Value*> order_items = Pointers(order);
        if (SmpStatus s = KeysOf(order_items, item_key, order_keys)) return s;
        std::vector<Value*> items = Pointers(merged);
        std::vector<Value*> present, absent, ordered;
        if (SmpStatus s = Partition(items, order_keys, item_key, present, absent)) return s;
        std::vector<const Value*> live_keys = KeyPointers(server_keys);
        if (SmpStatus s = NormalizeOrder(std::move(present), std::move(absent), order_keys,
                                         live_keys, item_key, ordered)) {
          return s;
        }
        Assign(merged, ordered);
      }
      if (live != nullptr) {
        *live = merged;
      } else {
        Value name(list_key.data(), static_cast<SizeType>(list_key.size()), alloc_);
        original.AddMember(name, merged, alloc_);
      }
    }
    for (const std::string& name : handled) patch.EraseMember(Value(Ref(name)));
    return std::nullopt;
  }

  // Rebuilds `target` from `items`, which point into arrays still alive (possibly `target`).
  void Assign(Value& target, std::span<Value* const> items) {
    Value list(rapidjson::kArrayType);
    list.Reserve(static_cast<SizeType>(items.size()), alloc_);
    for (Value* item : items) list.PushBack(*item, alloc_);
    target = list;
  }

  // mergeSlice for a list with a merge strategy (or a `$deleteFromPrimitiveList`); `patch` is
  // consumed.
  SmpStatus MergeSlice(Value& original, Value& patch, const SmpType* elem_type,
                       std::string_view merge_key, bool delete_list, int depth) {
    if (depth > kMaxDepth) return SmpError{"exceeded max depth"};
    if (original.Empty() && patch.Empty()) return std::nullopt;
    bool maps = false;
    if (SmpStatus s = CheckElementTypes({&original, &patch}, &maps)) return s;

    if (!maps) {
      std::vector<Value*> live = Pointers(original);
      std::vector<Value*> patch_items = Pointers(patch);
      std::vector<const Value*> patch_keys(patch_items.begin(), patch_items.end());
      if (delete_list) {
        // deleteFromSlice: drop every live item listed; no reordering.
        KeyIndex index(patch_keys);
        std::vector<Value*> kept;
        for (Value* v : live) {
          if (index.Find(v) < 0) kept.push_back(v);
        }
        if (kept.size() != live.size()) Assign(original, kept);
        return std::nullopt;
      }
      // Concatenate without duplicates, then order.
      std::vector<Value*> all = live;
      all.insert(all.end(), patch_items.begin(), patch_items.end());
      KeyIndex first(std::vector<const Value*>(all.begin(), all.end()));
      std::vector<Value*> merged;
      for (size_t i = 0; i < all.size(); ++i) {
        if (first.Find(all[i]) == static_cast<long>(i)) merged.push_back(all[i]);
      }
      std::vector<Value*> present, absent, ordered;
      if (SmpStatus s = Partition(merged, patch_keys, {}, present, absent)) return s;
      std::vector<const Value*> live_keys(live.begin(), live.end());
      if (SmpStatus s = NormalizeOrder(std::move(present), std::move(absent), patch_keys, live_keys,
                                       {}, ordered)) {
        return s;
      }
      Assign(original, ordered);
      return std::nullopt;
    }

    if (merge_key.empty()) {
      return SmpError{"cannot merge lists without merge key for type string"};
    }

    // mergeSliceWithSpecialElements: `$patch` elements delete by key, or replace the list.
    std::vector<Value*> live = Pointers(original);
    std::vector<Value*> patch_items;
    bool replace = false;
    for (Value& element : patch.GetArray()) {
      auto directive = element.FindMember(Value(Ref(kDirectiveMarker)));
      if (directive == element.MemberEnd()) {
        patch_items.push_back(&element);
      } else if (IsDirective(directive->value, "merge")) {
        element.EraseMember(directive);  // what merging does anyway
        patch_items.push_back(&element);
      } else if (IsDirective(directive->value, "delete")) {
        auto key = element.FindMember(Value(Ref(merge_key)));
        if (key == element.MemberEnd()) return ErrNoMergeKey(element, merge_key);
        for (size_t i = 0; i < live.size(); ++i) {
          if (!live[i]->IsObject()) {
            return SmpError{"value for key " + std::to_string(i) + " is not a map."};
          }
        }
        std::erase_if(live, [&](const Value* item) {
          auto k = item->FindMember(Value(Ref(merge_key)));
          return k != item->MemberEnd() && SameValue(k->value, key->value);
        });
      } else if (IsDirective(directive->value, "replace")) {
        replace = true;
      } else {
        return ErrBadPatchType(directive->value, element);
      }
    }
    if (replace) {
      // The list becomes the patch's ordinary elements, stored as they are (directives cleaned).
      for (Value* item : patch_items) {
        Value fresh;
        if (SmpStatus s = Fresh(fresh, *item, elem_type, false, {}, depth)) return s;
        *item = fresh;
      }
      Assign(original, patch_items);
      std::vector<Value*> items = Pointers(original);
      std::vector<const Value*> keys;
      return KeysOf(items, merge_key, keys);  // each element needs its merge key
    }

    // mergeSliceWithoutSpecialElements: merge by key into the live element, or append. The
    // patch's keys are copied first: merging moves them out of the patch elements.
    std::vector<const Value*> key_refs;
    if (SmpStatus s = KeysOf(patch_items, merge_key, key_refs)) return s;
    std::vector<Value> patch_keys;
    patch_keys.reserve(key_refs.size());
    for (const Value* k : key_refs) patch_keys.emplace_back(*k, alloc_);
    std::vector<const Value*> live_keys;
    if (SmpStatus s = KeysOf(live, merge_key, live_keys)) return s;
    std::vector<Value> server_keys;
    server_keys.reserve(live_keys.size());
    for (const Value* k : live_keys) server_keys.emplace_back(*k, alloc_);
    KeyIndex live_index(KeyPointers(server_keys));

    std::vector<Value*> merged = live;
    for (size_t i = 0; i < patch_items.size(); ++i) {
      long at = live_index.Find(&patch_keys[i]);
      if (at >= 0) {
        if (SmpStatus s =
                MergeMap(*live[static_cast<size_t>(at)], *patch_items[i], elem_type, depth + 1)) {
          return s;
        }
      } else {
        Value fresh;
        if (SmpStatus s = Fresh(fresh, *patch_items[i], elem_type, false, {}, depth)) return s;
        *patch_items[i] = fresh;
        merged.push_back(patch_items[i]);
      }
    }

    std::vector<const Value*> patch_key_refs = KeyPointers(patch_keys);
    std::vector<const Value*> server_key_refs = KeyPointers(server_keys);
    std::vector<Value*> present, absent, ordered;
    if (SmpStatus s = Partition(merged, patch_key_refs, merge_key, present, absent)) return s;
    if (SmpStatus s = NormalizeOrder(std::move(present), std::move(absent), patch_key_refs,
                                     server_key_refs, merge_key, ordered)) {
      return s;
    }
    Assign(original, ordered);
    return std::nullopt;
  }

  Allocator& alloc_;
};

Status ToStatus(const SmpError& e, std::string* cause) {
  if (e.invalid) {
    if (cause != nullptr) *cause = e.message;
    return Status(StatusCode::kInvalid, std::string(kPatchRejectedMessage));
  }
  return BadRequest(e.message);
}

// ---- JSON patch (RFC 6902, as evanphx/json-patch v4) -------------------------------------------

// decodePatchKey: "~1" then "~0", as upstream (so "~01" is "~1").
std::string DecodePatchKey(std::string_view s) {
  std::string first;
  first.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '~' && i + 1 < s.size() && s[i + 1] == '1') {
      first += '/';
      ++i;
    } else {
      first += s[i];
    }
  }
  std::string out;
  out.reserve(first.size());
  for (size_t i = 0; i < first.size(); ++i) {
    if (first[i] == '~' && i + 1 < first.size() && first[i + 1] == '0') {
      out += '~';
      ++i;
    } else {
      out += first[i];
    }
  }
  return out;
}

// Go's strconv.Atoi.
std::optional<long> Atoi(std::string_view s) {
  if (s.empty()) return std::nullopt;
  size_t i = 0;
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    i = 1;
  }
  if (i == s.size()) return std::nullopt;
  long v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    if (v > (std::numeric_limits<long>::max() - (s[i] - '0')) / 10) return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return negative ? -v : v;
}

// A located container and the last key of a pointer (upstream findObject).
struct Location {
  Value* container = nullptr;  // object or array; null when the path does not resolve
  std::string key;
};

// Resolves an array index for get/remove/replace: negative counts from the end.
std::optional<SizeType> ArrayIndex(const Value& array, std::string_view key, std::string* error) {
  std::optional<long> idx = Atoi(key);
  if (!idx) {
    *error = "strconv.Atoi: parsing \"" + std::string(key) + "\": invalid syntax";
    return std::nullopt;
  }
  long size = static_cast<long>(array.Size());
  long i = *idx;
  if (i < 0) {
    if (i < -size) {
      *error =
          "Unable to access invalid index: " + std::to_string(i) + ": invalid index referenced";
      return std::nullopt;
    }
    i += size;
  }
  if (i >= size) {
    *error = "Unable to access invalid index: " + std::to_string(i) + ": invalid index referenced";
    return std::nullopt;
  }
  return static_cast<SizeType>(i);
}

Location FindObject(Value& doc, std::string_view path) {
  std::vector<std::string_view> split;
  size_t start = 0;
  for (;;) {
    size_t slash = path.find('/', start);
    split.push_back(path.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (split.size() < 2) return {};
  Value* current = &doc;
  for (size_t i = 1; i + 1 < split.size(); ++i) {
    std::string part = DecodePatchKey(split[i]);
    Value* next = nullptr;
    if (current->IsObject()) {
      next = FindPtr(*current, part);
    } else if (current->IsArray()) {
      std::string error;
      if (std::optional<SizeType> at = ArrayIndex(*current, part, &error)) {
        next = &(*current)[*at];
      }
    }
    if (next == nullptr || !(next->IsObject() || next->IsArray())) return {};
    current = next;
  }
  return {current, DecodePatchKey(split.back())};
}

struct JsonPatchError {
  std::string message;
  bool bad_request = false;  // a decoding error (400) rather than one applying (422)
};

class JsonPatcher {
 public:
  JsonPatcher(Document& doc) : doc_(doc), alloc_(doc.GetAllocator()) {}

  std::optional<JsonPatchError> Apply(Value& op) {
    std::string_view kind = "unknown";
    if (Value* v = FindPtr(op, "op"); v != nullptr && v->IsString()) kind = View(*v);
    if (kind == "add") return Add(op);
    if (kind == "remove") return Remove(op);
    if (kind == "replace") return Replace(op);
    if (kind == "move") return Move(op);
    if (kind == "test") return Test(op);
    if (kind == "copy") return Copy(op);
    return JsonPatchError{"Unexpected kind: " + std::string(kind)};
  }

 private:
  // The "path" (or "from") member: nullopt with `*error` set when missing.
  static std::optional<std::string_view> Member(Value& op, std::string_view name,
                                                std::string* error) {
    Value* v = FindPtr(op, name);
    if (v == nullptr || v->IsNull()) {
      *error = name == "path" ? "operation missing path field: missing value"
                              : "operation, missing from field: missing value";
      return std::nullopt;
    }
    if (!v->IsString()) {
      *error = "json: cannot unmarshal " + std::string(GoJsonTypeName(*v)) +
               " into Go value of type string";
      return std::nullopt;
    }
    return View(*v);
  }

  // The operation's value, moved out of the patch (null when absent, as upstream adds nil).
  static Value TakeValue(Value& op) {
    Value* v = FindPtr(op, "value");
    Value out;
    if (v != nullptr) out = *v;
    return out;
  }

  static JsonPatchError Missing(std::string what) { return {std::move(what) + ": missing value"}; }

  // Adding `value` at `path` must keep the document within kMaxDepth, or a few thousand
  // operations could nest it deep enough to overflow the stack of whoever walks it next.
  static std::optional<JsonPatchError> CheckDepth(const Value& value, std::string_view path) {
    int path_depth = static_cast<int>(std::count(path.begin(), path.end(), '/'));
    if (path_depth + Depth(value) > kMaxDepth) return JsonPatchError{"exceeded max depth"};
    return std::nullopt;
  }

  std::optional<JsonPatchError> AddAt(Location& loc, Value value, std::string_view path) {
    if (std::optional<JsonPatchError> e = CheckDepth(value, path)) return e;
    if (loc.container->IsObject()) {
      if (Value* existing = FindPtr(*loc.container, loc.key)) {
        *existing = value;
      } else {
        Value name(loc.key.data(), static_cast<SizeType>(loc.key.size()), alloc_);
        loc.container->AddMember(name, value, alloc_);
      }
      return std::nullopt;
    }
    Value& array = *loc.container;
    if (loc.key == "-") {
      array.PushBack(value, alloc_);
      return std::nullopt;
    }
    std::optional<long> idx = Atoi(loc.key);
    std::string error;
    if (!idx) {
      error = "value was not a proper array index: '" + loc.key + "': strconv.Atoi: parsing \"" +
              loc.key + "\": invalid syntax";
    } else {
      long size = static_cast<long>(array.Size()) + 1;
      long i = *idx;
      if (i >= size || i < -size) {
        error =
            "Unable to access invalid index: " + std::to_string(i) + ": invalid index referenced";
      } else {
        if (i < 0) i += size;
        array.PushBack(Value(), alloc_);
        for (long j = size - 1; j > i; --j) {
          array[static_cast<SizeType>(j)] = array[static_cast<SizeType>(j - 1)];
        }
        array[static_cast<SizeType>(i)] = value;
        return std::nullopt;
      }
    }
    return JsonPatchError{error};
  }

  // Removes and returns the value at `loc`; nullopt with `*error` when absent.
  std::optional<Value> RemoveAt(Location& loc, std::string* error) {
    if (loc.container->IsObject()) {
      auto it = Find(*loc.container, loc.key);
      if (it == loc.container->MemberEnd()) {
        *error = "Unable to remove nonexistent key: " + loc.key + ": missing value";
        return std::nullopt;
      }
      Value out;
      out = it->value;
      loc.container->EraseMember(it);  // keeps the order of the others
      return out;
    }
    std::optional<SizeType> at = ArrayIndex(*loc.container, loc.key, error);
    if (!at) return std::nullopt;
    Value out;
    out = (*loc.container)[*at];
    loc.container->Erase(loc.container->Begin() + *at);
    return out;
  }

  // The value at `loc` (nullptr for a missing object member); false with `*error` when an
  // array index is bad.
  static bool GetAt(Location& loc, Value** out, std::string* error) {
    if (loc.container->IsObject()) {
      *out = FindPtr(*loc.container, loc.key);
      return true;
    }
    std::optional<SizeType> at = ArrayIndex(*loc.container, loc.key, error);
    if (!at) return false;
    *out = &(*loc.container)[*at];
    return true;
  }

  std::optional<JsonPatchError> Add(Value& op) {
    std::string error;
    std::optional<std::string_view> path = Member(op, "path", &error);
    if (!path) return Missing("add operation failed to decode path");
    Location loc = FindObject(doc_, *path);
    if (loc.container == nullptr) {
      return Missing("add operation does not apply: doc is missing path: \"" + std::string(*path) +
                     "\"");
    }
    if (std::optional<JsonPatchError> e = AddAt(loc, TakeValue(op), *path)) {
      e->message = "error in add for path: '" + std::string(*path) + "': " + e->message;
      return e;
    }
    return std::nullopt;
  }

  std::optional<JsonPatchError> Remove(Value& op) {
    std::string error;
    std::optional<std::string_view> path = Member(op, "path", &error);
    if (!path) return Missing("remove operation failed to decode path");
    Location loc = FindObject(doc_, *path);
    if (loc.container == nullptr) {
      return Missing("remove operation does not apply: doc is missing path: \"" +
                     std::string(*path) + "\"");
    }
    if (!RemoveAt(loc, &error)) {
      return JsonPatchError{"error in remove for path: '" + std::string(*path) + "': " + error};
    }
    return std::nullopt;
  }

  std::optional<JsonPatchError> Replace(Value& op) {
    std::string error;
    std::optional<std::string_view> path = Member(op, "path", &error);
    if (!path) return JsonPatchError{"replace operation failed to decode path: " + error};
    if (path->empty()) {
      Value value = TakeValue(op);
      if (!value.IsObject() && !value.IsArray()) {
        return JsonPatchError{"replace operation value must be object or array"};
      }
      static_cast<Value&>(doc_) = value;
      return std::nullopt;
    }
    Location loc = FindObject(doc_, *path);
    if (loc.container == nullptr) {
      return Missing("replace operation does not apply: doc is missing path: " +
                     std::string(*path));
    }
    Value* target = nullptr;
    if (!GetAt(loc, &target, &error)) {
      return Missing("replace operation does not apply: doc is missing key: " + std::string(*path));
    }
    Value value = TakeValue(op);
    if (std::optional<JsonPatchError> e = CheckDepth(value, *path)) return e;
    if (target != nullptr) {
      *target = value;
    } else {  // upstream v4 sets a missing object member
      Value name(loc.key.data(), static_cast<SizeType>(loc.key.size()), alloc_);
      loc.container->AddMember(name, value, alloc_);
    }
    return std::nullopt;
  }

  std::optional<JsonPatchError> Move(Value& op) {
    std::string error;
    std::optional<std::string_view> from = Member(op, "from", &error);
    if (!from) return JsonPatchError{"move operation failed to decode from: " + error};
    Location src = FindObject(doc_, *from);
    if (src.container == nullptr) {
      return Missing("move operation does not apply: doc is missing from path: " +
                     std::string(*from));
    }
    Value* probe = nullptr;
    if (!GetAt(src, &probe, &error)) {
      return JsonPatchError{"error in move for path: '" + src.key + "': " + error};
    }
    std::optional<Value> value = RemoveAt(src, &error);
    if (!value) return JsonPatchError{"error in move for path: '" + src.key + "': " + error};
    std::optional<std::string_view> path = Member(op, "path", &error);
    if (!path) return JsonPatchError{"move operation failed to decode path: " + error};
    Location dst = FindObject(doc_, *path);
    if (dst.container == nullptr) {
      return Missing("move operation does not apply: doc is missing destination path: " +
                     std::string(*path));
    }
    if (std::optional<JsonPatchError> e = AddAt(dst, std::move(*value), *path)) {
      e->message = "error in move for path: '" + std::string(*path) + "': " + e->message;
      return e;
    }
    return std::nullopt;
  }

  std::optional<JsonPatchError> Copy(Value& op) {
    std::string error;
    std::optional<std::string_view> from = Member(op, "from", &error);
    if (!from) return JsonPatchError{"copy operation failed to decode from: " + error};
    Location src = FindObject(doc_, *from);
    if (src.container == nullptr) {
      return Missing("copy operation does not apply: doc is missing from path: " +
                     std::string(*from));
    }
    Value* source = nullptr;
    if (!GetAt(src, &source, &error)) {
      return JsonPatchError{"error in copy for from: '" + std::string(*from) + "': " + error};
    }
    std::optional<std::string_view> path = Member(op, "path", &error);
    if (!path) return Missing("copy operation failed to decode path");
    Location dst = FindObject(doc_, *path);
    if (dst.container == nullptr) {
      return Missing("copy operation does not apply: doc is missing destination path: " +
                     std::string(*path));
    }
    Value copy;
    if (source != nullptr) {
      copied_ += CountNodes(*source);
      if (copied_ > kMaxCopiedNodes) {
        return JsonPatchError{
            "Unable to complete the copy, the accumulated size increase of copy "
            "is " +
            std::to_string(copied_) + ", exceeding the limit " + std::to_string(kMaxCopiedNodes)};
      }
      DeepCopy(*source, copy, alloc_);  // within kMaxDepth: it is part of the document
    }
    if (std::optional<JsonPatchError> e = AddAt(dst, std::move(copy), *path)) {
      e->message = "error while adding value during copy: " + e->message;
      return e;
    }
    return std::nullopt;
  }

  std::optional<JsonPatchError> Test(Value& op) {
    std::string error;
    std::optional<std::string_view> path = Member(op, "path", &error);
    if (!path) return JsonPatchError{"test operation failed to decode path: " + error};
    Value* expected = FindPtr(op, "value");
    Value* actual = nullptr;
    if (path->empty()) {
      actual = &doc_;
    } else {
      Location loc = FindObject(doc_, *path);
      if (loc.container == nullptr) {
        return Missing("test operation does not apply: is missing path: " + std::string(*path));
      }
      if (!GetAt(loc, &actual, &error)) {
        return JsonPatchError{"error in test for path: '" + std::string(*path) + "': " + error};
      }
    }
    bool ok;
    if (actual == nullptr) {
      ok = expected == nullptr || expected->IsNull();
    } else {
      ok = expected != nullptr && *actual == *expected;
    }
    if (ok) return std::nullopt;
    return JsonPatchError{"testing value " + std::string(*path) + " failed: test failed"};
  }

  Document& doc_;
  Allocator& alloc_;
  size_t copied_ = 0;
};

// A fresh document holding a copy of `original`, plus a patch document sharing its allocator.
struct Workspace {
  Document result;
  Document patch;
  bool copied;  // false when `original` nests deeper than kMaxDepth
  explicit Workspace(const Value& original) : patch(&result.GetAllocator()) {
    copied = DeepCopy(original, result, result.GetAllocator());
  }
  Status Check() const {
    return copied ? Status::Ok() : BadRequest("the object exceeds the maximum nesting depth");
  }
};

}  // namespace

Result<PatchType> ParsePatchType(std::string_view content_type) {
  std::string_view type = content_type.substr(0, content_type.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) type.remove_prefix(1);
  if (type == "application/json-patch+json") return PatchType::kJsonPatch;
  if (type == "application/merge-patch+json") return PatchType::kMergePatch;
  if (type == "application/strategic-merge-patch+json") return PatchType::kStrategicMergePatch;
  if (type == "application/apply-patch+yaml") return PatchType::kApplyPatch;
  return Err(Status(StatusCode::kUnsupportedMediaType,
                    "the body of the request was in an unknown format - accepted media types "
                    "include: application/json-patch+json, application/merge-patch+json, "
                    "application/strategic-merge-patch+json, application/apply-patch+yaml"));
}

Result<rapidjson::Document> ApplyPatch(PatchType type, std::string_view kind,
                                       const rapidjson::Value& original, std::string_view patch,
                                       std::string* cause) {
  switch (type) {
    case PatchType::kJsonPatch:
      return ApplyJsonPatch(original, patch, cause);
    case PatchType::kMergePatch:
      return ApplyMergePatch(original, patch);
    case PatchType::kStrategicMergePatch:
      return ApplyStrategicMergePatch(kind, original, patch, cause);
    case PatchType::kApplyPatch:
      break;
  }
  return Err(Status(StatusCode::kUnsupportedMediaType,
                    "apply patches are handled by the server, not by ApplyPatch"));
}

Result<rapidjson::Document> ApplyJsonPatch(const rapidjson::Value& original, std::string_view patch,
                                           std::string* cause) {
  Workspace ws(original);
  if (Status s = ws.Check(); !s.ok()) return Err(std::move(s));
  if (Status parsed = ParseJson(patch, ws.patch, "error decoding patch: "); !parsed.ok())
    return Err(std::move(parsed));
  Value& ops = ws.patch;
  if (ops.IsNull()) return std::move(ws.result);  // Go decodes null into an empty patch
  if (!ops.IsArray()) {
    return Err(BadRequest("error decoding patch: json: cannot unmarshal " +
                          std::string(GoJsonTypeName(ops)) +
                          " into Go value of type []handlers.jsonPatchOp"));
  }
  for (Value& op : ops.GetArray()) {
    if (op.IsNull()) continue;  // an empty operation: fails below as "unknown"
    if (!op.IsObject()) {
      return Err(BadRequest("error decoding patch: json: cannot unmarshal " +
                            std::string(GoJsonTypeName(op)) +
                            " into Go value of type handlers.jsonPatchOp"));
    }
    for (std::string_view name : {"op", "path", "from"}) {
      Value* v = FindPtr(op, name);
      if (v != nullptr && !v->IsNull() && !v->IsString()) {
        return Err(BadRequest(
            "error decoding patch: json: cannot unmarshal " + std::string(GoJsonTypeName(*v)) +
            " into Go struct field jsonPatchOp." + std::string(name) + " of type string"));
      }
    }
  }
  if (ops.Size() > kMaxJsonPatchOperations) {
    return Err(Status(StatusCode::kRequestEntityTooLarge,
                      "The allowed maximum operations in a JSON patch is " +
                          std::to_string(kMaxJsonPatchOperations) + ", got " +
                          std::to_string(ops.Size())));
  }
  JsonPatcher patcher(ws.result);
  for (Value& op : ops.GetArray()) {
    Value empty(rapidjson::kObjectType);
    std::optional<JsonPatchError> e = patcher.Apply(op.IsNull() ? empty : op);
    if (e) {
      if (cause != nullptr) *cause = e->message;
      return Err(Status(StatusCode::kInvalid, std::string(kPatchRejectedMessage)));
    }
  }
  return std::move(ws.result);
}

namespace {

void MergePatchAt(Value& target, Value& patch, Allocator& allocator, int depth) {
  if (!patch.IsObject()) {
    target = patch;
    return;
  }
  if (!target.IsObject()) target.SetObject();
  // Members of `target` by name: sorted copies when both sides are large.
  std::vector<std::pair<std::string, SizeType>> index;
  bool indexed = static_cast<size_t>(target.MemberCount()) * patch.MemberCount() > 256;
  if (indexed) {
    auto begin = target.MemberBegin();
    for (SizeType i = 0; i < target.MemberCount(); ++i) {
      index.emplace_back(std::string(View(begin[i].name)), i);
    }
    std::stable_sort(index.begin(), index.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  auto find = [&](std::string_view name) -> long {
    if (!indexed) {
      auto it = Find(target, name);
      return it == target.MemberEnd() ? -1 : static_cast<long>(it - target.MemberBegin());
    }
    auto it = std::lower_bound(index.begin(), index.end(), name,
                               [](const auto& e, std::string_view n) { return e.first < n; });
    return it != index.end() && it->first == name ? static_cast<long>(it->second) : -1;
  };
  std::vector<bool> removed;
  for (auto& m : patch.GetObject()) {
    long at = find(View(m.name));
    if (at >= 0 && !removed.empty() && removed[static_cast<size_t>(at)]) at = -1;
    if (m.value.IsNull()) {
      if (at >= 0) {
        if (removed.empty()) removed.resize(target.MemberCount(), false);
        removed[static_cast<size_t>(at)] = true;
      }
      continue;
    }
    if (at < 0) {
      Value value;
      if (depth < kMaxDepth) MergePatchAt(value, m.value, allocator, depth + 1);
      target.AddMember(m.name, value, allocator);
      if (!removed.empty()) removed.push_back(false);
    } else if (depth < kMaxDepth) {
      MergePatchAt(target.MemberBegin()[at].value, m.value, allocator, depth + 1);
    }
  }
  if (!removed.empty()) {
    Value kept(rapidjson::kObjectType);
    auto begin = target.MemberBegin();
    for (SizeType i = 0; i < target.MemberCount(); ++i) {
      if (!removed[i]) kept.AddMember(begin[i].name, begin[i].value, allocator);
    }
    target = kept;
  }
}

}  // namespace

void MergePatchValue(rapidjson::Value& target, rapidjson::Value& patch,
                     rapidjson::Document::AllocatorType& allocator) {
  MergePatchAt(target, patch, allocator, 0);
}

Result<rapidjson::Document> ApplyMergePatch(const rapidjson::Value& original,
                                            std::string_view patch) {
  Workspace ws(original);
  if (Status s = ws.Check(); !s.ok()) return Err(std::move(s));
  if (Status parsed = ParseJson(patch, ws.patch, "error decoding patch: "); !parsed.ok())
    return Err(std::move(parsed));
  if (!ws.patch.IsObject()) {
    if (ws.patch.IsNull()) return std::move(ws.result);  // decodes as an empty map
    return Err(BadRequest("error decoding patch: json: cannot unmarshal " +
                          std::string(GoJsonTypeName(ws.patch)) +
                          " into Go value of type map[string]interface {}"));
  }
  MergePatchValue(ws.result, ws.patch, ws.result.GetAllocator());
  return std::move(ws.result);
}

bool SupportsStrategicMergePatch(std::string_view kind) { return KindType(kind) != nullptr; }

Result<rapidjson::Document> ApplyStrategicMergePatch(std::string_view kind,
                                                     const rapidjson::Value& original,
                                                     std::string_view patch, std::string* cause) {
  const SmpType* type = KindType(kind);
  if (type == nullptr) {
    return Err(Status(StatusCode::kUnsupportedMediaType,
                      "the body of the request was in an unknown format - accepted media types "
                      "include: application/json-patch+json, application/merge-patch+json, "
                      "application/apply-patch+yaml"));
  }
  Workspace ws(original);
  if (Status s = ws.Check(); !s.ok()) return Err(std::move(s));
  if (Status parsed = ParseJson(patch, ws.patch, ""); !parsed.ok()) return Err(std::move(parsed));
  if (ws.patch.IsNull()) return std::move(ws.result);  // decodes as an empty map
  if (!ws.patch.IsObject()) {
    return Err(BadRequest("json: cannot unmarshal " + std::string(GoJsonTypeName(ws.patch)) +
                          " into Go value of type map[string]interface {}"));
  }
  StrategicMerger merger(ws.result.GetAllocator());
  if (SmpStatus s = merger.MergeMap(ws.result, ws.patch, type, 0)) {
    return Err(ToStatus(*s, cause));
  }
  return std::move(ws.result);
}

std::string_view GoJsonTypeName(const Value& v) {
  switch (v.GetType()) {
    case rapidjson::kObjectType:
      return "object";
    case rapidjson::kArrayType:
      return "array";
    case rapidjson::kStringType:
      return "string";
    case rapidjson::kNumberType:
      return "number";
    case rapidjson::kTrueType:
    case rapidjson::kFalseType:
      return "bool";
    case rapidjson::kNullType:
      return "null";
  }
  return "value";
}

std::string GoJsonSyntaxError(std::string_view text) {
  Document doc;
  constexpr unsigned kFlags = rapidjson::kParseValidateEncodingFlag |
                              rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag;
  doc.Parse<kFlags>(text.data(), text.size());
  if (!doc.HasParseError()) return {};
  return GoSyntaxError(doc.GetParseError(), doc.GetErrorOffset(), text);
}

}  // namespace kt::api
