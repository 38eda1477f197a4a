#include "api/managed_fields.h"

#include <algorithm>
#include <utility>

#include "api/internal/smd_typed.h"
#include "api/table.h"

namespace kt::api {
namespace {

using internal::TypedErrors;
using internal::TypedNode;
using Allocator = rapidjson::Document::AllocatorType;

constexpr std::string_view kApply = "Apply";
constexpr std::string_view kUpdate = "Update";
constexpr size_t kMaxUpdateManagers = 10;  // fieldmanager.go DefaultMaxUpdateManagers

std::string_view Sv(const rapidjson::Value& s) { return {s.GetString(), s.GetStringLength()}; }

const rapidjson::Value* Member(const rapidjson::Value& obj, std::string_view name) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(rapidjson::Value(rapidjson::StringRef(name.data(), name.size())));
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

FieldSet MakeSet(std::initializer_list<std::initializer_list<std::string_view>> paths) {
  FieldSet s;
  for (const auto& p : paths) {
    Path path;
    for (auto name : p) path.push_back(PathElement::Field(name));
    s.Insert(path);
  }
  return s;
}

// stripmeta.go NewStripMetaManager.
const FieldSet& StripSet() {
  static const FieldSet* set = new FieldSet(MakeSet({{"apiVersion"},
                                                     {"kind"},
                                                     {"metadata"},
                                                     {"metadata", "name"},
                                                     {"metadata", "namespace"},
                                                     {"metadata", "creationTimestamp"},
                                                     {"metadata", "selfLink"},
                                                     {"metadata", "uid"},
                                                     {"metadata", "clusterName"},
                                                     {"metadata", "generation"},
                                                     {"metadata", "managedFields"},
                                                     {"metadata", "resourceVersion"}}));
  return *set;
}

// The managers of an object, as SMD's fieldpath.ManagedFields plus the times.
struct Managed {
  std::vector<ManagedFieldsEntry> entries;

  ManagedFieldsEntry* Find(const std::string& id) {
    for (auto& e : entries) {
      if (e.Identifier() == id) return &e;
    }
    return nullptr;
  }
  void Erase(const std::string& id) {
    std::erase_if(entries, [&](const ManagedFieldsEntry& e) { return e.Identifier() == id; });
  }
  void DropEmpty() {
    std::erase_if(entries, [](const ManagedFieldsEntry& e) { return e.fields.Empty(); });
  }
};

ManagedFieldsEntry MakeEntry(std::string_view manager, std::string_view operation,
                             const FieldManagerScope& scope) {
  ManagedFieldsEntry e;
  e.manager = manager.empty() ? "unknown" : std::string(manager);  // buildmanagerinfo.go
  e.operation = operation;
  e.api_version = scope.api_version;
  e.subresource = scope.subresource;
  return e;
}

int64_t Seconds(const std::string& time) {
  if (time.empty()) return 0;
  Timestamp t = ParseTimestamp(time);
  return t.zero ? 0 : t.seconds;
}

FieldSet Filtered(const FieldSet& set, const FieldManagerScope& scope) {
  return scope.reset_fields ? set.RecursiveDifference(*scope.reset_fields) : set;
}

// The object a create compares against: upstream converts the kind's zero Go value, whose
// non-pointer structs are `{}` and whose fields without omitempty (`required`) are present.
void ZeroObject(TypeRef type, bool top, rapidjson::Value* out, Allocator& alloc) {
  out->SetObject();
  if (type == nullptr) return;
  for (const SchemaField& f : type->fields) {
    if (f.value == nullptr || (!top && !f.required)) continue;
    rapidjson::Value v;  // null
    if (f.value->kind == ValueKind::kObject && f.value->type != nullptr) {
      if (f.value->type == type) continue;
      ZeroObject(f.value->type, false, &v, alloc);
    } else if (!f.required) {
      continue;
    }
    out->AddMember(
        rapidjson::Value(f.name.data(), static_cast<rapidjson::SizeType>(f.name.size()), alloc), v,
        alloc);
  }
}

struct Comparison {
  FieldSet changed;  // Modified ∪ Added
  FieldSet removed;
};

Comparison CompareObjects(const rapidjson::Value& lhs, const rapidjson::Value& rhs,
                          const FieldManagerScope& scope) {
  internal::Comparison c;
  internal::Compare(&lhs, rhs, internal::RootNode(scope.type), &c);
  return Comparison{Filtered(c.modified.Union(c.added), scope), Filtered(c.removed, scope)};
}

// SMD merge/update.go Updater.update: takes the changed fields from every manager but
// `workflow` (all conflicts: returned, and taken only if `force`), and the removed ones.
void TakeFromOthers(const Comparison& cmp, const std::string& workflow, Managed* managed,
                    std::vector<std::pair<std::string, FieldSet>>* conflicts) {
  for (auto& e : managed->entries) {
    std::string id = e.Identifier();
    if (id == workflow) continue;
    FieldSet conflict = e.fields.Intersection(cmp.changed);
    if (!conflict.Empty() && conflicts) conflicts->push_back({id, std::move(conflict)});
  }
}

void RemoveFromOthers(const Comparison& cmp, const std::string& workflow, Managed* managed) {
  for (auto& e : managed->entries) {
    if (e.Identifier() == workflow) continue;
    e.fields = e.fields.Difference(cmp.changed).Difference(cmp.removed);
  }
  managed->DropEmpty();
}

// capmanagers.go capUpdateManagers.
void CapUpdateManagers(Managed* managed) {
  std::vector<std::string> updaters;
  for (const auto& e : managed->entries) {
    if (!e.applied()) updaters.push_back(e.Identifier());
  }
  if (updaters.size() <= kMaxUpdateManagers) return;
  auto time_of = [&](const std::string& id) { return Seconds(managed->Find(id)->time); };
  std::stable_sort(updaters.begin(), updaters.end(), [&](const auto& a, const auto& b) {
    int64_t ta = time_of(a), tb = time_of(b);
    return ta != tb ? ta < tb : a < b;
  });
  std::vector<std::pair<std::string, std::string>> first_of_version;
  size_t length = updaters.size();
  for (size_t i = 0; i < updaters.size() && length > kMaxUpdateManagers; ++i) {
    ManagedFieldsEntry* e = managed->Find(updaters[i]);
    if (e == nullptr) continue;
    std::string version = e->api_version;
    ManagedFieldsEntry bucket_entry;
    bucket_entry.manager = "ancient-changes";
    bucket_entry.operation = kUpdate;
    bucket_entry.api_version = version;
    std::string bucket = bucket_entry.Identifier();
    auto first = std::find_if(first_of_version.begin(), first_of_version.end(),
                              [&](const auto& p) { return p.first == version; });
    if (first == first_of_version.end()) {
      first_of_version.push_back({version, updaters[i]});
      continue;
    }
    if (managed->Find(bucket) == nullptr) {
      ManagedFieldsEntry* f = managed->Find(first->second);
      bucket_entry.fields = f->fields;
      bucket_entry.time = f->time;
      managed->Erase(first->second);
      managed->entries.push_back(std::move(bucket_entry));
      e = managed->Find(updaters[i]);
    }
    FieldSet fields = e->fields;
    std::string time = e->time;
    managed->Erase(updaters[i]);
    ManagedFieldsEntry* b = managed->Find(bucket);
    b->fields = fields.Union(b->fields);
    b->time = time;  // the more recent update's
    --length;
  }
}

// SMD Updater.Update for "current-operation", then managedfieldsupdater.go, stripmeta.go and
// capmanagers.go.
void UpdateManaged(const rapidjson::Value& lhs, const rapidjson::Value& next,
                   std::string_view manager, const FieldManagerScope& scope, Managed* managed) {
  static const std::string kSelf = "current-operation";
  Comparison cmp = CompareObjects(lhs, next, scope);
  RemoveFromOthers(cmp, kSelf, managed);
  FieldSet set = cmp.changed.Difference(StripSet());
  if (!set.Empty()) {
    ManagedFieldsEntry entry = MakeEntry(manager, kUpdate, scope);
    std::string id = entry.Identifier();
    if (ManagedFieldsEntry* previous = managed->Find(id)) {
      previous->fields = set.Union(previous->fields);
      previous->time = scope.time;
    } else {
      entry.fields = std::move(set);
      entry.time = scope.time;
      managed->entries.push_back(std::move(entry));
    }
  }
  CapUpdateManagers(managed);
}

void SortEntries(std::vector<ManagedFieldsEntry>* entries) {
  std::stable_sort(entries->begin(), entries->end(), [](const auto& p, const auto& q) {
    if (p.operation != q.operation) return p.operation < q.operation;
    int64_t ps = Seconds(p.time), qs = Seconds(q.time);
    if (ps != qs) return ps < qs;
    if (p.manager != q.manager) return p.manager < q.manager;
    if (p.api_version != q.api_version) return p.api_version < q.api_version;
    return p.subresource < q.subresource;
  });
}

std::string ObjectGvknn(const rapidjson::Value& obj, std::string_view gvk) {
  std::string ns = "<unknown>", name = "<unknown>";
  if (const rapidjson::Value* md = Member(obj, "metadata"); md && md->IsObject()) {
    const rapidjson::Value* n = Member(*md, "name");
    const rapidjson::Value* s = Member(*md, "namespace");
    name = n && n->IsString() ? std::string(Sv(*n)) : "";
    ns = s && s->IsString() ? std::string(Sv(*s)) : "";
  }
  return ns + "/" + name + "; " + std::string(gvk);
}

// schema.GroupVersionKind.String(): "/v1, Kind=Pod", "apps/v1, Kind=DaemonSet".
std::string GvkString(std::string_view api_version, std::string_view kind) {
  size_t slash = api_version.find('/');
  std::string group =
      slash == std::string_view::npos ? "" : std::string(api_version.substr(0, slash));
  std::string version(slash == std::string_view::npos ? api_version
                                                      : api_version.substr(slash + 1));
  return group + "/" + version + ", Kind=" + std::string(kind);
}

std::string_view KindOf(const FieldManagerScope& scope) {
  if (scope.type == nullptr) return {};
  size_t slash = scope.api_version.find('/');
  std::string_view group =
      slash == std::string_view::npos ? std::string_view() : scope.api_version.substr(0, slash);
  std::string_view version =
      slash == std::string_view::npos ? scope.api_version : scope.api_version.substr(slash + 1);
  for (const auto& gvk : scope.type->group_version_kinds) {
    if (gvk.group == group && gvk.version == version) return gvk.kind;
  }
  return scope.type->group_version_kinds.empty() ? std::string_view()
                                                 : scope.type->group_version_kinds[0].kind;
}

void SetManagedFields(rapidjson::Value* object, const std::vector<ManagedFieldsEntry>& entries,
                      Allocator& alloc) {
  if (!object->IsObject()) return;
  auto md = object->FindMember("metadata");
  if (md == object->MemberEnd()) {
    if (entries.empty()) return;
    object->AddMember("metadata", rapidjson::Value(rapidjson::kObjectType), alloc);
    md = object->FindMember("metadata");
  }
  if (!md->value.IsObject()) return;
  md->value.RemoveMember("managedFields");
  if (entries.empty()) return;
  rapidjson::Value list;
  EncodeManagedFields(entries, &list, alloc);
  md->value.AddMember("managedFields", list, alloc);
}

const rapidjson::Value* ManagedFieldsOf(const rapidjson::Value& object) {
  const rapidjson::Value* md = Member(object, "metadata");
  return md ? Member(*md, "managedFields") : nullptr;
}

}  // namespace

std::string ManagedFieldsEntry::Identifier() const {
  std::string s = "{\"manager\":";
  AppendGoJsonString(manager, &s);
  s += ",\"operation\":";
  AppendGoJsonString(operation, &s);
  if (!applied() && !api_version.empty()) {
    s += ",\"apiVersion\":";
    AppendGoJsonString(api_version, &s);
  }
  if (!subresource.empty()) {
    s += ",\"subresource\":";
    AppendGoJsonString(subresource, &s);
  }
  return s + "}";
}

Result<std::vector<ManagedFieldsEntry>> DecodeManagedFields(const rapidjson::Value& list) {
  std::vector<ManagedFieldsEntry> out;
  if (list.IsNull()) return out;
  if (!list.IsArray()) return Err(BadRequest("metadata.managedFields: expected array"));
  int i = 0;
  for (const auto& item : list.GetArray()) {
    std::string where = "metadata.managedFields[" + std::to_string(i) + "]";
    if (!item.IsObject()) return Err(BadRequest(where + ": expected object"));
    ManagedFieldsEntry e;
    std::string fields_type;
    struct {
      std::string_view name;
      std::string* into;
    } strings[] = {{"manager", &e.manager},        {"operation", &e.operation},
                   {"apiVersion", &e.api_version}, {"time", &e.time},
                   {"fieldsType", &fields_type},   {"subresource", &e.subresource}};
    for (auto& s : strings) {
      const rapidjson::Value* v = Member(item, s.name);
      if (v == nullptr || v->IsNull()) continue;
      if (!v->IsString()) {
        return Err(BadRequest(where + "." + std::string(s.name) + ": expected string"));
      }
      s.into->assign(Sv(*v));
    }
    // managedfields.go DecodeManagedFields.
    if (e.operation != kApply && e.operation != kUpdate) {
      return Err(BadRequest("operation must be `Apply` or `Update`"));
    }
    if (e.api_version.empty()) return Err(BadRequest("apiVersion must not be empty"));
    if (fields_type.empty()) {
      return Err(BadRequest("missing fieldsType in managed fields entry " + std::to_string(i)));
    }
    if (fields_type != "FieldsV1") {
      std::string quoted;
      AppendGoJsonString(fields_type, &quoted);
      return Err(BadRequest("invalid fieldsType " + quoted + " in managed fields entry " +
                            std::to_string(i)));
    }
    if (const rapidjson::Value* f = Member(item, "fieldsV1"); f != nullptr) {
      Result<FieldSet> set = FieldSet::FromValue(*f);
      if (!set) {
        return Err(BadRequest("error decoding versioned set from " + e.Identifier() +
                              ": error decoding set: " + set.error().message()));
      }
      e.fields = std::move(*set);
    }
    std::string id = e.Identifier();
    auto same = std::find_if(out.begin(), out.end(),
                             [&](const ManagedFieldsEntry& o) { return o.Identifier() == id; });
    if (same != out.end()) {
      *same = std::move(e);
    } else {
      out.push_back(std::move(e));
    }
    ++i;
  }
  return out;
}

std::vector<std::string> ValidateManagedFields(const rapidjson::Value& list) {
  std::vector<std::string> errors;
  if (!list.IsArray()) return errors;
  for (const auto& item : list.GetArray()) {
    auto str = [&](std::string_view name) {
      const rapidjson::Value* v = Member(item, name);
      return v && v->IsString() ? std::string(Sv(*v)) : std::string();
    };
    std::string op = str("operation"), type = str("fieldsType");
    std::string quoted;
    if (op != kApply && op != kUpdate) {
      AppendGoJsonString(op, &quoted);
      errors.push_back("metadata.managedFields.operation: Invalid value: " + quoted +
                       ": must be `Apply` or `Update`");
    }
    if (!type.empty() && type != "FieldsV1") {
      quoted.clear();
      AppendGoJsonString(type, &quoted);
      errors.push_back("metadata.managedFields.fieldsType: Invalid value: " + quoted +
                       ": must be `FieldsV1`");
    }
  }
  return errors;
}

void EncodeManagedFields(const std::vector<ManagedFieldsEntry>& entries, rapidjson::Value* out,
                         Allocator& alloc) {
  std::vector<ManagedFieldsEntry> copy = entries;
  SortEntries(&copy);
  out->SetArray();
  for (const auto& e : copy) {
    rapidjson::Value item(rapidjson::kObjectType);
    auto add = [&](const char* name, const std::string& value) {
      if (value.empty()) return;
      item.AddMember(rapidjson::StringRef(name), rapidjson::Value(value.c_str(), alloc), alloc);
    };
    add("manager", e.manager);
    add("operation", e.operation);
    add("apiVersion", e.api_version);
    add("time", e.time);
    add("fieldsType", "FieldsV1");
    rapidjson::Document fields(&alloc);
    fields.Parse(e.fields.ToJson().c_str());
    rapidjson::Value fields_value;
    fields_value.CopyFrom(fields, alloc);
    item.AddMember("fieldsV1", fields_value, alloc);
    add("subresource", e.subresource);
    out->PushBack(item, alloc);
  }
}

FieldSet FieldsOf(const rapidjson::Value& object, TypeRef type) {
  FieldSet out;
  internal::ToFieldSet(object, internal::RootNode(type), &out, nullptr, false);
  return out;
}

const FieldSet& ResetFields(std::string_view group, std::string_view kind,
                            std::string_view subresource) {
  static const FieldSet* kEmpty = new FieldSet();
  static const FieldSet* kStatus = new FieldSet(MakeSet({{"status"}}));
  static const FieldSet* kSpec = new FieldSet(MakeSet({{"spec"}}));
  // pkg/registry/core/pod/strategy.go podStatusStrategy.GetResetFields.
  static const FieldSet* kPodStatus = new FieldSet(
      MakeSet({{"spec"}, {"metadata", "deletionTimestamp"}, {"metadata", "ownerReferences"}}));
  bool tracked = (group.empty() && (kind == "Pod" || kind == "Node" || kind == "Namespace")) ||
                 (group == "apps" && kind == "DaemonSet");
  if (!tracked) return *kEmpty;
  if (subresource.empty()) return *kStatus;
  if (subresource != "status") return *kEmpty;
  return kind == "Pod" ? *kPodStatus : *kSpec;
}

void UpdateManagedFields(const rapidjson::Value* old, const rapidjson::Value& next,
                         std::string_view manager, const FieldManagerScope& scope,
                         std::vector<ManagedFieldsEntry>* entries) {
  // skipnonapplied.go: an existing object without managedFields stays untracked.
  if (old != nullptr && entries->empty()) return;
  Managed managed{std::move(*entries)};
  rapidjson::Document zero;
  if (old == nullptr) ZeroObject(scope.type, true, &zero, zero.GetAllocator());
  UpdateManaged(old ? *old : zero, next, manager, scope, &managed);
  *entries = std::move(managed.entries);
}

void UpdateObjectManagedFields(const rapidjson::Value* live, rapidjson::Document* next,
                               std::string_view manager, const FieldManagerScope& scope) {
  std::vector<ManagedFieldsEntry> entries;
  auto decode_live = [&] {
    if (live == nullptr) return;
    const rapidjson::Value* mf = ManagedFieldsOf(*live);
    Result<std::vector<ManagedFieldsEntry>> r =
        mf ? DecodeManagedFields(*mf) : Result<std::vector<ManagedFieldsEntry>>();
    if (r) entries = std::move(*r);  // emptyManagedFieldsOnErr
  };
  const rapidjson::Value* mine = ManagedFieldsOf(*next);
  bool reset =
      mine != nullptr && mine->IsArray() &&
      (mine->Empty() || (mine->Size() == 1 && (*mine)[0].IsObject() && (*mine)[0].ObjectEmpty()));
  if (!scope.subresource.empty() || mine == nullptr) {
    decode_live();
  } else if (!reset) {
    Result<std::vector<ManagedFieldsEntry>> r = DecodeManagedFields(*mine);
    if (r && !r->empty()) {
      entries = std::move(*r);
    } else {
      decode_live();
    }
  }
  SetManagedFields(next, {}, next->GetAllocator());  // RemoveObjectManagedFields
  if (reset && live != nullptr) {
    // A reset starts tracking again from this write, as an empty Managed does upstream.
    Managed managed;
    UpdateManaged(*live, *next, manager, scope, &managed);
    entries = std::move(managed.entries);
  } else {
    UpdateManagedFields(live, *next, manager, scope, &entries);
  }
  SetManagedFields(next, entries, next->GetAllocator());
}

Result<ApplyResult> Apply(const rapidjson::Value* live, const rapidjson::Value& applied,
                          std::string_view manager, bool force, const FieldManagerScope& scope,
                          const std::vector<ManagedFieldsEntry>& entries,
                          std::vector<ApplyConflict>* conflicts) {
  if (conflicts) conflicts->clear();
  std::string_view kind = KindOf(scope);
  // versioncheck.go.
  const rapidjson::Value* av = Member(applied, "apiVersion");
  const rapidjson::Value* k = Member(applied, "kind");
  std::string applied_version = av && av->IsString() ? std::string(Sv(*av)) : "";
  std::string applied_kind = k && k->IsString() ? std::string(Sv(*k)) : "";
  if (!applied.IsObject() || applied_version != scope.api_version || applied_kind != kind) {
    return Err(BadRequest("invalid object type: " + GvkString(applied_version, applied_kind)));
  }
  // structuredmerge.go Apply.
  if (const rapidjson::Value* mf = ManagedFieldsOf(applied); mf != nullptr && !mf->IsNull()) {
    return Err(BadRequest("metadata.managedFields must be nil"));
  }
  TypedNode root = internal::RootNode(scope.type);
  TypedErrors errors;
  FieldSet applied_set;
  internal::ToFieldSet(applied, root, &applied_set, &errors, true);
  if (!errors.empty()) {
    return Err(BadRequest("failed to create typed patch object (" +
                          ObjectGvknn(applied, GvkString(applied_version, applied_kind)) +
                          "): " + internal::JoinTypedErrors(errors)));
  }

  ApplyResult result;
  Allocator& alloc = result.object.GetAllocator();
  rapidjson::Value zero;
  if (live == nullptr) ZeroObject(scope.type, true, &zero, alloc);
  const rapidjson::Value& lhs = live ? *live : zero;

  Managed managed{entries};
  // skipnonapplied.go: the fields of an untracked object go to "before-first-apply".
  if (managed.entries.empty() && live != nullptr) {
    rapidjson::Value empty;
    ZeroObject(scope.type, true, &empty, alloc);
    UpdateManaged(empty, lhs, "before-first-apply", scope, &managed);
  }

  // SMD merge/update.go Updater.Apply.
  rapidjson::Value merged;
  if (!internal::Merge(&lhs, applied, root, &merged, alloc, &errors)) {
    return Err(BadRequest("failed to merge config: " + internal::JoinTypedErrors(errors)));
  }
  ManagedFieldsEntry self = MakeEntry(manager, kApply, scope);
  std::string id = self.Identifier();
  FieldSet last;
  if (ManagedFieldsEntry* previous = managed.Find(id)) last = previous->fields;
  self.fields = Filtered(applied_set, scope);
  if (ManagedFieldsEntry* previous = managed.Find(id)) {
    self.time = previous->time;
    *previous = self;
  } else {
    managed.entries.push_back(self);
  }

  // prune: a field the manager applied last time and omits now goes, unless another manager
  // (or this apply) owns it.
  if (!last.Empty()) {
    const ValueSchema* rs = root.value;
    auto fields_of = [&](const rapidjson::Value& v) {
      FieldSet s;
      internal::ToFieldSet(v, root, &s, nullptr, false);
      return s.EnsureNamedFieldsAreMembers(rs);
    };
    FieldSet last_named = last.EnsureNamedFieldsAreMembers(rs);
    rapidjson::Value pruned;
    internal::RemoveItems(merged, last_named, root, &pruned, alloc);
    FieldSet owned;
    for (const auto& e : managed.entries) owned = owned.Union(e.fields);
    FieldSet merged_set = fields_of(merged);
    rapidjson::Value owned_back;  // addBackOwnedItems
    internal::RemoveItems(
        merged,
        merged_set.Difference(fields_of(pruned).Union(owned.EnsureNamedFieldsAreMembers(rs))), root,
        &owned_back, alloc);
    rapidjson::Value out;  // addBackDanglingItems
    internal::RemoveItems(merged,
                          merged_set.Difference(fields_of(owned_back)).Intersection(last_named),
                          root, &out, alloc);
    merged = std::move(out);
  }

  Comparison cmp = CompareObjects(lhs, merged, scope);
  std::vector<std::pair<std::string, FieldSet>> found;
  TakeFromOthers(cmp, id, &managed, &found);
  if (!found.empty() && !force) {
    std::sort(found.begin(), found.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<ApplyConflict> list;
    for (const auto& [owner, set] : found) {
      const ManagedFieldsEntry* e = managed.Find(owner);
      set.Iterate([&](const Path& p) {
        list.push_back({e->manager, e->operation, e->applied() ? "" : e->api_version,
                        e->subresource, PathToString(p)});
      });
    }
    std::string message = ConflictMessage(list);
    if (conflicts) *conflicts = std::move(list);
    return Err(Conflict(std::move(message)));
  }
  RemoveFromOthers(cmp, id, &managed);
  if (ManagedFieldsEntry* mine = managed.Find(id)) {
    mine->fields = mine->fields.Difference(StripSet());
    if (mine->fields.Empty()) managed.Erase(id);
  }

  result.changed = !internal::JsonEquals(lhs, merged);
  if (result.changed) {
    if (ManagedFieldsEntry* mine = managed.Find(id)) mine->time = scope.time;
    internal::DropNullMembers(&merged);
    static_cast<rapidjson::Value&>(result.object).Swap(merged);
  } else {
    result.object.CopyFrom(lhs, alloc);
  }
  SortEntries(&managed.entries);
  SetManagedFields(&result.object, managed.entries, alloc);
  result.entries = std::move(managed.entries);
  return result;
}

std::string ConflictCauseMessage(const ApplyConflict& c) {
  // conflict.go printManager: the identifier carries no time, so no "at <time>".
  std::string s = "conflict with ";
  AppendGoJsonString(c.manager, &s);
  if (!c.subresource.empty()) {
    s += " with subresource ";
    AppendGoJsonString(c.subresource, &s);
  }
  if (c.operation == kUpdate) s += " using " + c.api_version;
  return s;
}

std::string ConflictMessage(const std::vector<ApplyConflict>& conflicts) {
  if (conflicts.size() == 1) {
    return "Apply failed with 1 conflict: " + ConflictCauseMessage(conflicts[0]) + ": " +
           conflicts[0].path;
  }
  std::string s = "Apply failed with " + std::to_string(conflicts.size()) + " conflicts: ";
  bool first = true;
  for (size_t i = 0; i < conflicts.size(); ++i) {
    const ApplyConflict& c = conflicts[i];
    bool new_manager = i == 0 || c.manager != conflicts[i - 1].manager ||
                       c.operation != conflicts[i - 1].operation ||
                       c.api_version != conflicts[i - 1].api_version ||
                       c.subresource != conflicts[i - 1].subresource;
    if (new_manager) {
      if (!first) s += "\n";
      first = false;
      s += "conflicts with" + ConflictCauseMessage(c).substr(std::string("conflict with").size()) +
           ":";
    }
    s += "\n- " + c.path;
  }
  return s;
}

}  // namespace kt::api
