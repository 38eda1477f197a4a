#include "api/internal/smd_typed.h"

#include <algorithm>
#include <string_view>
#include <utility>

namespace kt::api::internal {
namespace {

std::string_view Sv(const rapidjson::Value& s) { return {s.GetString(), s.GetStringLength()}; }

// SMD's schema.Atom for a node, as schemaconv builds it (see the header).
struct Atom {
  enum class Kind : uint8_t { kLeaf, kStruct, kMap, kList };
  Kind kind = Kind::kLeaf;
  bool atomic = false;
  TypeRef type = nullptr;                // kStruct
  const ValueSchema* element = nullptr;  // kMap, kList
  std::span<const std::string_view> keys;
  std::string_view merge_key;  // a list keyed by its patch merge key alone
  bool keyed = false;          // associative with keys (else a set)
};

Atom Resolve(TypedNode node) {
  Atom a;
  const ValueSchema* v = node.value;
  const SchemaField* f = node.field;
  if (v == nullptr) return a;
  switch (v->kind) {
    case ValueKind::kObject:
      if (v->type == nullptr) return a;
      a.kind = Atom::Kind::kStruct;
      a.type = v->type;
      a.atomic = v->type->map_type == MapType::kAtomic || (f && f->map_type == MapType::kAtomic);
      return a;
    case ValueKind::kMap:
      a.kind = Atom::Kind::kMap;
      a.element = v->element;
      a.atomic = f && f->map_type == MapType::kAtomic;
      return a;
    case ValueKind::kArray:
      a.kind = Atom::Kind::kList;
      a.element = v->element;
      a.atomic = true;
      if (f == nullptr) return a;
      switch (f->list_type) {
        case ListType::kAtomic:
          break;
        case ListType::kSet:
          a.atomic = false;
          break;
        case ListType::kMap:
          a.atomic = false;
          a.keys = f->list_map_keys;
          a.keyed = !a.keys.empty();
          break;
        case ListType::kUnspecified:
          if (f->patch_merge) {
            a.atomic = false;
            a.merge_key = f->patch_merge_key;
            a.keyed = !a.merge_key.empty();
          }
          break;
      }
      return a;
    default:
      return a;
  }
}

TypedNode ElementNode(const Atom& a) { return TypedNode{a.element, nullptr}; }

// The node of member `name` of a struct or map; `known` tells whether it is a struct field.
TypedNode MemberNode(const Atom& a, std::string_view name, bool* known) {
  *known = false;
  if (a.kind == Atom::Kind::kStruct) {
    if (const SchemaField* f = a.type->FindField(name)) {
      *known = true;
      return TypedNode{f->value, f};
    }
    return TypedNode{};
  }
  return TypedNode{a.element, nullptr};
}

std::string GoQuotedList(const Atom& a) {
  std::string s = "[";
  auto add = [&](std::string_view k) {
    if (s.size() > 1) s += " ";
    AppendGoJsonString(k, &s);
  };
  if (!a.merge_key.empty()) add(a.merge_key);
  for (auto k : a.keys) add(k);
  return s + "]";
}

// helpers.go listItemToPathElement.
Result<PathElement> ItemElement(const Atom& a, const rapidjson::Value& item) {
  if (a.keyed) {
    if (item.IsNull()) {
      return Err(BadRequest("associative list with keys may not have a null element"));
    }
    if (!item.IsObject()) {
      return Err(BadRequest("associative list with keys may not have non-map elements"));
    }
    std::vector<KeyField> fields;
    auto add = [&](std::string_view k) {
      auto it = item.FindMember(rapidjson::Value(rapidjson::StringRef(k.data(), k.size())));
      if (it != item.MemberEnd())
        fields.push_back({std::string(k), PathValue::FromJson(it->value)});
    };
    if (!a.merge_key.empty()) add(a.merge_key);
    for (auto k : a.keys) add(k);
    if (fields.empty()) {
      return Err(BadRequest("associative list with keys has an element that omits all key fields " +
                            GoQuotedList(a) +
                            " (and doesn't have default values for any key fields)"));
    }
    return PathElement::Key(std::move(fields));
  }
  if (item.IsObject()) {
    return Err(BadRequest("associative list without keys has an element that's a map type"));
  }
  if (item.IsArray()) {
    return Err(BadRequest("not supported: associative list with lists as elements"));
  }
  if (item.IsNull()) {
    return Err(BadRequest("associative list without keys has an element that's an explicit null"));
  }
  return PathElement::Value(PathValue::FromJson(item));
}

// Is `v` the JSON shape of the atom's container (null counts as an absent container)?
const rapidjson::Value* AsList(const rapidjson::Value* v) {
  return v != nullptr && v->IsArray() ? v : nullptr;
}
const rapidjson::Value* AsObject(const rapidjson::Value* v) {
  return v != nullptr && v->IsObject() ? v : nullptr;
}
bool EmptyContainer(const rapidjson::Value* v) {
  return v == nullptr || (v->IsArray() && v->Empty()) || (v->IsObject() && v->ObjectEmpty());
}

const rapidjson::Value* FindMember(const rapidjson::Value* obj, std::string_view name) {
  if (obj == nullptr) return nullptr;
  auto it = obj->FindMember(rapidjson::Value(rapidjson::StringRef(name.data(), name.size())));
  return it == obj->MemberEnd() ? nullptr : &it->value;
}

void AddError(const Path& path, std::string_view message, TypedErrors* errors) {
  if (errors == nullptr) return;
  std::string p = PathToString(path);
  errors->push_back(p.empty() ? std::string(message) : p + ": " + std::string(message));
}

// Indexes a list's items by path element (first occurrence), in order.
struct IndexedItem {
  PathElement pe;
  const rapidjson::Value* value;  // the first item with this key
  int count;
};

std::vector<IndexedItem> IndexList(const Atom& a, const rapidjson::Value* list, const Path& path,
                                   TypedErrors* errors) {
  std::vector<IndexedItem> out;
  if (list == nullptr) return out;
  int i = 0;
  for (const auto& item : list->GetArray()) {
    Result<PathElement> pe = ItemElement(a, item);
    if (!pe) {
      AddError(path, "element " + std::to_string(i) + ": " + pe.error().message(), errors);
    } else {
      bool found = false;
      for (auto& x : out) {
        if (x.pe == *pe) {
          ++x.count;
          found = true;
          break;
        }
      }
      if (!found) out.push_back({std::move(*pe), &item, 1});
    }
    ++i;
  }
  return out;
}

// --- ToFieldSet ------------------------------------------------------------------------------

void ToFieldSetAt(const rapidjson::Value& v, TypedNode node, Path* path, FieldSet* out,
                  TypedErrors* errors, bool report_duplicates) {
  Atom a = Resolve(node);
  if (a.kind == Atom::Kind::kLeaf || a.atomic) {
    out->Insert(*path);
    return;
  }
  if (a.kind == Atom::Kind::kList) {
    if (!v.IsArray()) return;
    std::vector<IndexedItem> items = IndexList(a, &v, *path, errors);
    for (const auto& x : items) {
      path->push_back(x.pe);
      if (x.count > 1) {  // duplicates are owned whole (tofieldset.go visitListItems)
        if (report_duplicates) {
          path->pop_back();
          AddError(*path, "duplicate entries for key " + x.pe.ToString(), errors);
          path->push_back(x.pe);
        }
        out->Insert(*path);
      } else {
        ToFieldSetAt(*x.value, ElementNode(a), path, out, errors, report_duplicates);
        out->Insert(*path);
      }
      path->pop_back();
    }
    return;
  }
  if (!v.IsObject()) return;
  for (const auto& m : v.GetObject()) {
    bool known = false;
    TypedNode child = MemberNode(a, Sv(m.name), &known);
    path->push_back(PathElement::Field(Sv(m.name)));
    ToFieldSetAt(m.value, child, path, out, errors, report_duplicates);
    if (m.value.IsNull() || (m.value.IsObject() && m.value.ObjectEmpty()) || !known) {
      out->Insert(*path);
    }
    path->pop_back();
  }
}

// --- Compare ---------------------------------------------------------------------------------

class Comparer {
 public:
  explicit Comparer(Comparison* out) : out_(out) {}

  void Run(const rapidjson::Value* lhs, const rapidjson::Value* rhs, TypedNode node) {
    Atom a = Resolve(node);
    bool in_leaf = false;
    auto leaf = [&] {
      in_leaf = true;
      if (lhs == nullptr) {
        out_->added.Insert(path_);
      } else if (rhs == nullptr) {
        out_->removed.Insert(path_);
      } else if (!JsonEquals(*lhs, *rhs)) {
        out_->modified.Insert(path_);
      }
    };
    if (a.kind == Atom::Kind::kLeaf) {
      leaf();
    } else if (a.kind == Atom::Kind::kList) {
      const rapidjson::Value* l = AsList(lhs);
      const rapidjson::Value* r = AsList(rhs);
      if (a.atomic || (EmptyContainer(l) && EmptyContainer(r))) {
        leaf();
      } else {
        VisitList(a, l, r);
      }
    } else {
      const rapidjson::Value* l = AsObject(lhs);
      const rapidjson::Value* r = AsObject(rhs);
      if (a.atomic || (EmptyContainer(l) && EmptyContainer(r))) {
        leaf();
      } else {
        VisitMap(a, l, r);
      }
    }
    if (!in_leaf) {
      if (lhs == nullptr) {
        out_->added.Insert(path_);
      } else if (rhs == nullptr) {
        out_->removed.Insert(path_);
      }
    }
  }

 private:
  void Descend(PathElement pe, const rapidjson::Value* l, const rapidjson::Value* r,
               TypedNode node) {
    path_.push_back(std::move(pe));
    Run(l, r, node);
    path_.pop_back();
  }

  // compare.go visitListItems: items with one occurrence a side are compared; duplicated keys
  // compare as whole lists of items.
  void VisitList(const Atom& a, const rapidjson::Value* l, const rapidjson::Value* r) {
    std::vector<std::pair<PathElement, std::vector<const rapidjson::Value*>>> lv, rv;
    auto collect = [&](const rapidjson::Value* list, auto* into) {
      if (list == nullptr) return;
      for (const auto& item : list->GetArray()) {
        Result<PathElement> pe = ItemElement(a, item);
        if (!pe) continue;
        auto it =
            std::find_if(into->begin(), into->end(), [&](const auto& x) { return x.first == *pe; });
        if (it == into->end()) {
          into->push_back({std::move(*pe), {&item}});
        } else {
          it->second.push_back(&item);
        }
      }
    };
    collect(l, &lv);
    collect(r, &rv);
    std::vector<const PathElement*> all;
    for (const auto& x : lv) all.push_back(&x.first);
    auto find = [](const auto& v,
                   const PathElement& pe) -> const std::vector<const rapidjson::Value*>* {
      for (const auto& x : v) {
        if (x.first == pe) return &x.second;
      }
      return nullptr;
    };
    for (const auto& x : rv) {
      if (find(lv, x.first) == nullptr) all.push_back(&x.first);
    }
    static const std::vector<const rapidjson::Value*> kNone;
    for (const PathElement* pe : all) {
      const auto* ll = find(lv, *pe);
      const auto* rl = find(rv, *pe);
      const auto& lList = ll ? *ll : kNone;
      const auto& rList = rl ? *rl : kNone;
      if (lList.size() <= 1 && rList.size() <= 1) {
        Descend(*pe, lList.empty() ? nullptr : lList[0], rList.empty() ? nullptr : rList[0],
                ElementNode(a));
      } else if (lList.size() >= 2 && rList.size() >= 2) {
        bool equal = lList.size() == rList.size();
        for (size_t i = 0; equal && i < lList.size(); ++i) equal = JsonEquals(*lList[i], *rList[i]);
        if (!equal) Insert(&out_->modified, *pe);
      } else if (lList.size() >= 2) {
        if (!rList.empty()) Descend(*pe, nullptr, rList[0], ElementNode(a));
        Insert(&out_->removed, *pe);
      } else {
        if (!lList.empty()) Descend(*pe, lList[0], nullptr, ElementNode(a));
        Insert(&out_->added, *pe);
      }
    }
  }

  void VisitMap(const Atom& a, const rapidjson::Value* l, const rapidjson::Value* r) {
    bool known = false;
    if (l != nullptr) {
      for (const auto& m : l->GetObject()) {
        Descend(PathElement::Field(Sv(m.name)), &m.value, FindMember(r, Sv(m.name)),
                MemberNode(a, Sv(m.name), &known));
      }
    }
    if (r != nullptr) {
      for (const auto& m : r->GetObject()) {
        if (FindMember(l, Sv(m.name)) != nullptr) continue;
        Descend(PathElement::Field(Sv(m.name)), nullptr, &m.value,
                MemberNode(a, Sv(m.name), &known));
      }
    }
  }

  void Insert(FieldSet* set, const PathElement& pe) {
    path_.push_back(pe);
    set->Insert(path_);
    path_.pop_back();
  }

  Comparison* out_;
  Path path_;
};

// --- Merge -----------------------------------------------------------------------------------

class Merger {
 public:
  Merger(Allocator& alloc, TypedErrors* errors) : alloc_(alloc), errors_(errors) {}

  // Returns false when there is no output (merge.go leaves w.out nil).
  bool Run(const rapidjson::Value* lhs, const rapidjson::Value* rhs, TypedNode node,
           rapidjson::Value* out) {
    Atom a = Resolve(node);
    auto leaf = [&] {
      const rapidjson::Value* keep = rhs != nullptr ? rhs : lhs;
      out->CopyFrom(*keep, alloc_);
      return true;
    };
    if (a.kind == Atom::Kind::kLeaf) return leaf();
    if (a.kind == Atom::Kind::kList) {
      const rapidjson::Value* l = AsList(lhs);
      const rapidjson::Value* r = AsList(rhs);
      if (a.atomic || (EmptyContainer(l) && EmptyContainer(r))) return leaf();
      if (l == nullptr && r == nullptr) return false;
      return VisitList(a, l, r, out);
    }
    const rapidjson::Value* l = AsObject(lhs);
    const rapidjson::Value* r = AsObject(rhs);
    if (a.atomic || (EmptyContainer(l) && EmptyContainer(r))) return leaf();
    if (l == nullptr && r == nullptr) return false;
    return VisitMap(a, l, r, out);
  }

 private:
  bool Item(const PathElement& pe, const rapidjson::Value* l, const rapidjson::Value* r,
            TypedNode node, rapidjson::Value* out) {
    path_.push_back(pe);
    bool ok = Run(l, r, node, out);
    path_.pop_back();
    return ok;
  }

  // merge.go visitListItems: the result keeps rhs's order for the items rhs has, and puts each
  // lhs-only item where it stood relative to the items both sides share.
  bool VisitList(const Atom& a, const rapidjson::Value* lhs, const rapidjson::Value* rhs,
                 rapidjson::Value* out) {
    struct Entry {
      PathElement pe;
      const rapidjson::Value* value;
    };
    auto index = [&](const rapidjson::Value* list, bool allow_duplicates, std::vector<Entry>* pes,
                     std::vector<Entry>* observed) {
      if (list == nullptr) return true;
      bool ok = true;
      int i = 0;
      for (const auto& item : list->GetArray()) {
        Result<PathElement> pe = ItemElement(a, item);
        if (!pe) {
          AddError(path_, "element " + std::to_string(i++) + ": " + pe.error().message(), errors_);
          ok = false;
          continue;
        }
        ++i;
        auto it = std::find_if(observed->begin(), observed->end(),
                               [&](const Entry& e) { return e.pe == *pe; });
        if (it != observed->end()) {
          if (!allow_duplicates) {
            AddError(path_, "duplicate entries for key " + pe->ToString(), errors_);
            ok = false;
            continue;
          }
          it->value = nullptr;  // a duplicated lhs key merges as if absent
        } else {
          observed->push_back({*pe, &item});
        }
        pes->push_back({std::move(*pe), &item});
      }
      return ok;
    };
    std::vector<Entry> rhs_pes, observed_rhs, lhs_pes, observed_lhs;
    bool ok = index(rhs, false, &rhs_pes, &observed_rhs);
    ok = index(lhs, true, &lhs_pes, &observed_lhs) && ok;
    if (!ok) return false;
    auto get = [](const std::vector<Entry>& v, const PathElement& pe, bool* found) {
      for (const auto& e : v) {
        if (e.pe == pe) {
          *found = true;
          return e.value;
        }
      }
      *found = false;
      return static_cast<const rapidjson::Value*>(nullptr);
    };
    std::vector<const PathElement*> shared_order;
    for (const auto& e : rhs_pes) {
      bool found = false;
      get(observed_lhs, e.pe, &found);
      if (found) shared_order.push_back(&e.pe);
    }
    size_t next_shared_index = 0;
    auto next_shared = [&]() -> const PathElement* {
      return next_shared_index < shared_order.size() ? shared_order[next_shared_index] : nullptr;
    };
    const PathElement* shared = next_shared();
    if (shared) ++next_shared_index;
    std::vector<Entry> merged_rhs;
    out->SetArray();
    auto emit = [&](const PathElement& pe, const rapidjson::Value* l, const rapidjson::Value* r) {
      rapidjson::Value item;
      if (Item(pe, l, r, ElementNode(a), &item)) out->PushBack(item, alloc_);
    };
    size_t li = 0, ri = 0;
    while (li < lhs_pes.size() || ri < rhs_pes.size()) {
      if (li < lhs_pes.size() && ri < rhs_pes.size()) {
        const PathElement& pe = lhs_pes[li].pe;
        if (pe == rhs_pes[ri].pe) {
          merged_rhs.push_back({pe, nullptr});
          bool f = false;
          emit(pe, get(observed_lhs, pe, &f), get(observed_rhs, pe, &f));
          ++li;
          ++ri;
          shared = next_shared();
          if (shared) ++next_shared_index;
          continue;
        }
        bool in_rhs = false;
        get(observed_rhs, pe, &in_rhs);
        if (in_rhs && shared != nullptr && !(*shared == pe)) {
          ++li;
          continue;
        }
      }
      if (li < lhs_pes.size()) {
        const PathElement& pe = lhs_pes[li].pe;
        bool in_rhs = false;
        get(observed_rhs, pe, &in_rhs);
        if (!in_rhs) {
          emit(pe, lhs_pes[li].value, nullptr);
          ++li;
          continue;
        }
        bool merged = false;
        get(merged_rhs, pe, &merged);
        if (merged) ++li;
      }
      if (ri < rhs_pes.size()) {
        const PathElement& pe = rhs_pes[ri].pe;
        merged_rhs.push_back({pe, nullptr});
        bool f = false;
        emit(pe, get(observed_lhs, pe, &f), get(observed_rhs, pe, &f));
        ++ri;
        if (shared != nullptr && *shared == pe) {
          shared = next_shared();
          if (shared) ++next_shared_index;
        }
      }
    }
    return !out->Empty();
  }

  bool VisitMap(const Atom& a, const rapidjson::Value* l, const rapidjson::Value* r,
                rapidjson::Value* out) {
    out->SetObject();
    bool known = false;
    auto visit = [&](const rapidjson::Value& name, const rapidjson::Value* lv,
                     const rapidjson::Value* rv) {
      rapidjson::Value item;
      if (Item(PathElement::Field(Sv(name)), lv, rv, MemberNode(a, Sv(name), &known), &item)) {
        out->AddMember(rapidjson::Value(name, alloc_), item, alloc_);
      }
    };
    if (l != nullptr) {
      for (const auto& m : l->GetObject()) visit(m.name, &m.value, FindMember(r, Sv(m.name)));
    }
    if (r != nullptr) {
      for (const auto& m : r->GetObject()) {
        if (FindMember(l, Sv(m.name)) == nullptr) visit(m.name, nullptr, &m.value);
      }
    }
    return !out->ObjectEmpty();
  }

  Allocator& alloc_;
  TypedErrors* errors_;
  Path path_;
};

}  // namespace

std::string JoinTypedErrors(const TypedErrors& errors) {
  if (errors.size() == 1) return errors[0];
  std::string s = "errors:";
  for (const auto& e : errors) s += "\n  " + e;
  return s;
}

bool JsonEquals(const rapidjson::Value& a, const rapidjson::Value& b) {
  if (a.IsNumber() && b.IsNumber()) {
    if (a.IsInt64() && b.IsInt64()) return a.GetInt64() == b.GetInt64();
    if (a.IsUint64() && b.IsUint64()) return a.GetUint64() == b.GetUint64();
    return a.GetDouble() == b.GetDouble();
  }
  if (a.GetType() != b.GetType()) return false;
  switch (a.GetType()) {
    case rapidjson::kStringType:
      return Sv(a) == Sv(b);
    case rapidjson::kArrayType: {
      if (a.Size() != b.Size()) return false;
      for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
        if (!JsonEquals(a[i], b[i])) return false;
      }
      return true;
    }
    case rapidjson::kObjectType: {
      if (a.MemberCount() != b.MemberCount()) return false;
      for (const auto& m : a.GetObject()) {
        const rapidjson::Value* o = FindMember(&b, Sv(m.name));
        if (o == nullptr || !JsonEquals(m.value, *o)) return false;
      }
      return true;
    }
    default:
      return true;  // null, true, false: the type says it all
  }
}

void ToFieldSet(const rapidjson::Value& v, TypedNode node, FieldSet* out, TypedErrors* errors,
                bool report_duplicates) {
  Path path;
  ToFieldSetAt(v, node, &path, out, errors, report_duplicates);
}

void Compare(const rapidjson::Value* lhs, const rapidjson::Value& rhs, TypedNode node,
             Comparison* out) {
  Comparer(out).Run(lhs, &rhs, node);
}

bool Merge(const rapidjson::Value* lhs, const rapidjson::Value& rhs, TypedNode node,
           rapidjson::Value* out, Allocator& alloc, TypedErrors* errors) {
  TypedErrors local;
  Merger m(alloc, &local);
  bool has = m.Run(lhs, &rhs, node, out);
  if (!local.empty()) {
    if (errors) errors->insert(errors->end(), local.begin(), local.end());
    return false;
  }
  if (!has) out->SetObject();
  return true;
}

void RemoveItems(const rapidjson::Value& v, const FieldSet& to_remove, TypedNode node,
                 rapidjson::Value* out, Allocator& alloc) {
  Atom a = Resolve(node);
  if (a.kind == Atom::Kind::kLeaf || a.atomic || EmptyContainer(&v) ||
      (a.kind == Atom::Kind::kList && !v.IsArray()) ||
      (a.kind != Atom::Kind::kList && !v.IsObject())) {
    // remove.go: scalars, atomic and empty containers are kept as they are (a mismatched
    // value is dropped upstream; keeping it is harmless, validation rejects it).
    out->CopyFrom(v, alloc);
    return;
  }
  if (a.kind == Atom::Kind::kList) {
    out->SetArray();
    for (const auto& item : v.GetArray()) {
      Result<PathElement> pe = ItemElement(a, item);
      if (!pe) {
        out->PushBack(rapidjson::Value(item, alloc), alloc);
        continue;
      }
      if (to_remove.Has(std::span<const PathElement>(&*pe, 1))) continue;
      rapidjson::Value kept;
      if (const FieldSet* sub = to_remove.WithPrefix(*pe); sub != nullptr && !sub->Empty()) {
        RemoveItems(item, *sub, ElementNode(a), &kept, alloc);
      } else {
        kept.CopyFrom(item, alloc);
      }
      out->PushBack(kept, alloc);
    }
    if (out->Empty()) out->SetNull();
    return;
  }
  out->SetObject();
  for (const auto& m : v.GetObject()) {
    PathElement pe = PathElement::Field(Sv(m.name));
    if (to_remove.Has(std::span<const PathElement>(&pe, 1))) continue;
    rapidjson::Value kept;
    if (const FieldSet* sub = to_remove.WithPrefix(pe); sub != nullptr && !sub->Empty()) {
      bool known = false;
      RemoveItems(m.value, *sub, MemberNode(a, Sv(m.name), &known), &kept, alloc);
    } else {
      kept.CopyFrom(m.value, alloc);
    }
    out->AddMember(rapidjson::Value(m.name, alloc), kept, alloc);
  }
  if (out->ObjectEmpty()) out->SetNull();
}

void DropNullMembers(rapidjson::Value* v) {
  if (v->IsArray()) {
    for (auto& item : v->GetArray()) DropNullMembers(&item);
    return;
  }
  if (!v->IsObject()) return;
  for (auto it = v->MemberBegin(); it != v->MemberEnd();) {
    if (it->value.IsNull()) {
      it = v->EraseMember(it);
    } else {
      DropNullMembers(&it->value);
      ++it;
    }
  }
}

}  // namespace kt::api::internal
