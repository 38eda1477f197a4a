#include "server/registry.h"

#include <atomic>
#include <future>
#include <random>

#include "admission/priority.h"
#include "api/codec.h"
#include "api/defaults.h"
#include "api/managed_fields.h"
#include "api/scheduling.h"
#include "api/table.h"
#include "core/strings.h"
#include "core/time.h"
#include "core/validation.h"
#include "server/daemonset_strategy.h"
#include "server/object.h"
#include "server/validation.h"

namespace kt::server {

namespace {

using rapidjson::Document;
using rapidjson::Value;
using Alloc = Document::AllocatorType;

// A patch or delete without a resourceVersion precondition is re-applied to the latest object
// until it lands, as upstream's GuaranteedUpdate does; this bounds it against livelock.
constexpr int kMaxConflictRetries = 64;

std::string_view StringMember(const Value& obj, const char* name) {
  if (!obj.IsObject()) return {};
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

Value& EnsureObject(Value& parent, const char* name, Alloc& alloc) {
  auto it = parent.FindMember(name);
  if (it == parent.MemberEnd()) {
    parent.AddMember(Value(name, alloc), Value(rapidjson::kObjectType), alloc);
    return parent[name];
  }
  if (!it->value.IsObject()) it->value.SetObject();
  return it->value;
}

void SetString(Value& obj, const char* name, std::string_view v, Alloc& alloc) {
  Value value(v.data(), static_cast<rapidjson::SizeType>(v.size()), alloc);
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd()) {
    obj.AddMember(Value(name, alloc), value, alloc);
  } else {
    it->value = value;
  }
}

void SetMember(Value& obj, const char* name, Value v, Alloc& alloc) {
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd()) {
    obj.AddMember(Value(name, alloc), v, alloc);
  } else {
    it->value = v;
  }
}

// Keeps the order of the other members (RapidJSON's RemoveMember moves the last one into the
// gap), so that objects keep the order they were written in.
void RemoveMember(Value& obj, const char* name) {
  if (!obj.IsObject()) return;
  auto it = obj.FindMember(name);
  if (it != obj.MemberEnd()) obj.EraseMember(it);
}

// Copies member `name` of `from` into `to` (or removes it from `to` when `from` lacks it).
void CopyMember(const Value& from, Value& to, const char* name, Alloc& alloc) {
  auto it = from.IsObject() ? from.FindMember(name) : from.MemberEnd();
  if (!from.IsObject() || it == from.MemberEnd()) {
    RemoveMember(to, name);
    return;
  }
  SetMember(to, name, Value(it->value, alloc), alloc);
}

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

std::string NewUid() {
  uint64_t hi = Rng()();
  uint64_t lo = Rng()();
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 10
  // 8-4-4-4-12 lowercase hex digits.
  std::string uid(36, '-');
  char* p = uid.data();
  PutHex(p, hi >> 32, 8);
  PutHex(p + 9, hi >> 16, 4);
  PutHex(p + 14, hi, 4);
  PutHex(p + 19, lo >> 48, 4);
  PutHex(p + 24, lo, 12);
  return uid;
}

// The random suffix of generateName (upstream SimpleNameGenerator: 5 of these characters).
std::string NameSuffix() {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string s(5, ' ');
  for (char& c : s) c = kAlphabet[Rng()() % kAlphabet.size()];
  return s;
}

// Upstream's pod QoS class from the containers' cpu and memory requests and limits.
std::string_view QosClass(const Value& pod) {
  auto spec = pod.FindMember("spec");
  if (spec == pod.MemberEnd() || !spec->value.IsObject()) return "BestEffort";
  bool any = false;
  bool guaranteed = true;
  for (const char* list : {"initContainers", "containers"}) {
    auto it = spec->value.FindMember(list);
    if (it == spec->value.MemberEnd() || !it->value.IsArray()) continue;
    for (const Value& c : it->value.GetArray()) {
      auto res = c.IsObject() ? c.FindMember("resources") : c.MemberEnd();
      const Value* requests = nullptr;
      const Value* limits = nullptr;
      if (c.IsObject() && res != c.MemberEnd() && res->value.IsObject()) {
        auto r = res->value.FindMember("requests");
        auto l = res->value.FindMember("limits");
        if (r != res->value.MemberEnd() && r->value.IsObject()) requests = &r->value;
        if (l != res->value.MemberEnd() && l->value.IsObject()) limits = &l->value;
      }
      for (const char* name : {"cpu", "memory"}) {
        const Value* req = requests && requests->HasMember(name) ? &(*requests)[name] : nullptr;
        const Value* lim = limits && limits->HasMember(name) ? &(*limits)[name] : nullptr;
        if (req || lim) any = true;
        if (!lim) {
          guaranteed = false;
        } else if (req) {
          Result<api::Quantity> rq = api::DecodeQuantity(*req);
          Result<api::Quantity> lq = api::DecodeQuantity(*lim);
          if (!rq || !lq || *rq != *lq) guaranteed = false;
        }
      }
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

// Checks kind and apiVersion against the resource and fills them in when absent.
ApiResult<void> CheckTypeMeta(const ResourceInfo& info, Document& doc) {
  if (!doc.IsObject())
    return ApiErr(BadRequestError("the body of the request is not a JSON object"));
  std::string_view kind = StringMember(doc, "kind");
  std::string_view api_version = StringMember(doc, "apiVersion");
  if (!api_version.empty() && api_version != info.api_version) {
    return ApiErr(BadRequestError("the API version in the data (" + std::string(api_version) +
                                  ") does not match the expected API version (" +
                                  std::string(info.api_version) + ")"));
  }
  if (!kind.empty() && kind != info.kind) {
    return ApiErr(BadRequestError(std::string(kind) + " in version \"" + std::string(info.version) +
                                  "\" cannot be handled as a " + std::string(info.kind) +
                                  ": the kind in the data does not match"));
  }
  SetString(doc, "kind", info.kind, doc.GetAllocator());
  SetString(doc, "apiVersion", info.api_version, doc.GetAllocator());
  Value& meta = EnsureObject(doc, "metadata", doc.GetAllocator());
  (void)meta;
  return {};
}

ApiResult<void> CheckNamespaceOfBody(const ResourceInfo& info, Document& doc,
                                     std::string_view namespace_) {
  Value& meta = doc["metadata"];
  if (!info.namespaced) {
    RemoveMember(meta, "namespace");
    return {};
  }
  std::string_view body_ns = StringMember(meta, "namespace");
  if (!body_ns.empty() && body_ns != namespace_) {
    return ApiErr(BadRequestError(
        "the namespace of the provided object does not match the namespace sent on the request"));
  }
  SetString(meta, "namespace", namespace_, doc.GetAllocator());
  return {};
}

// A cached object's bytes were validated when written: parse them without re-validating.
// A condition's times are metav1.Time values, which upstream always serializes, as null when
// unset: the stored object has them whatever the writer sent (a strategic merge patch with
// `"lastProbeTime": null` removes the key; kube-apiserver writes it back as null).
void NormalizeConditionTimes(Resource resource, Document& doc) {
  static constexpr const char* kPodTimes[] = {"lastProbeTime", "lastTransitionTime"};
  static constexpr const char* kNodeTimes[] = {"lastHeartbeatTime", "lastTransitionTime"};
  if (resource != Resource::kPods && resource != Resource::kNodes) return;
  const auto& times = resource == Resource::kPods ? kPodTimes : kNodeTimes;
  auto status = doc.FindMember("status");
  if (status == doc.MemberEnd() || !status->value.IsObject()) return;
  auto conditions = status->value.FindMember("conditions");
  if (conditions == status->value.MemberEnd() || !conditions->value.IsArray()) return;
  for (Value& c : conditions->value.GetArray()) {
    if (!c.IsObject()) continue;
    for (const char* t : times) {
      if (!c.HasMember(t)) c.AddMember(rapidjson::StringRef(t), Value(), doc.GetAllocator());
    }
  }
}

Value* MemberOrNull(Value& v, const char* key) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(key);
  return it == v.MemberEnd() ? nullptr : &it->value;
}

// Quantities are stored as upstream's resource.Quantity writes them: a string in canonical form
// (1 and "1000m" become "1", "1.5Gi" becomes "1536Mi"). Values that do not parse are left for
// validation to report.
void CanonicalizeQuantities(Value* list, Alloc& alloc) {
  if (list == nullptr || !list->IsObject()) return;
  for (auto& m : list->GetObject()) {
    Result<api::Quantity> q = api::DecodeQuantity(m.value);
    if (!q) continue;
    const std::string canonical = q->ToString();
    if (m.value.IsString() &&
        std::string_view(m.value.GetString(), m.value.GetStringLength()) == canonical) {
      continue;
    }
    m.value.SetString(canonical.data(), static_cast<rapidjson::SizeType>(canonical.size()), alloc);
  }
}

// What kube-apiserver's decode and re-encode would make of an object: quantities canonical,
// condition times present. `quantities`: false when they are the stored object's own.
void NormalizeForStorage(Resource resource, Document& doc, bool quantities = true) {
  Alloc& alloc = doc.GetAllocator();
  if (quantities && resource == Resource::kPods) {
    if (Value* spec = MemberOrNull(doc, "spec")) {
      for (const char* list : {"containers", "initContainers"}) {
        Value* containers = MemberOrNull(*spec, list);
        if (containers == nullptr || !containers->IsArray()) continue;
        for (Value& c : containers->GetArray()) {
          Value* resources = MemberOrNull(c, "resources");
          if (resources == nullptr) continue;
          CanonicalizeQuantities(MemberOrNull(*resources, "requests"), alloc);
          CanonicalizeQuantities(MemberOrNull(*resources, "limits"), alloc);
        }
      }
      CanonicalizeQuantities(MemberOrNull(*spec, "overhead"), alloc);
      if (Value* resources = MemberOrNull(*spec, "resources")) {
        CanonicalizeQuantities(MemberOrNull(*resources, "requests"), alloc);
        CanonicalizeQuantities(MemberOrNull(*resources, "limits"), alloc);
      }
    }
  } else if (quantities && resource == Resource::kNodes) {
    if (Value* status = MemberOrNull(doc, "status")) {
      CanonicalizeQuantities(MemberOrNull(*status, "capacity"), alloc);
      CanonicalizeQuantities(MemberOrNull(*status, "allocatable"), alloc);
    }
  }
  NormalizeConditionTimes(resource, doc);
}

// Upstream SetDefaults_PriorityClass: no preemptionPolicy means PreemptLowerPriority.
void SetPriorityClassDefaults(Document& doc) {
  if (!doc.IsObject()) return;
  auto it = doc.FindMember("preemptionPolicy");
  if (it == doc.MemberEnd()) {
    doc.AddMember("preemptionPolicy", "PreemptLowerPriority", doc.GetAllocator());
  } else if (it->value.IsNull()) {
    it->value.SetString("PreemptLowerPriority", doc.GetAllocator());
  }
}

Result<Document> ParseCurrent(const StoredObject& current) {
  return api::ParseTrustedJson(*current.json);
}

// `current` parsed in place in `buffer`, a copy of its bytes, so that its strings are not copied:
// `buffer` must outlive the document and every value copied from it.
Result<Document> ParseCurrentInPlace(const StoredObject& current, std::string& buffer) {
  buffer = *current.json;
  return api::ParseTrustedJsonInPlace(buffer);
}

// Whether the string list at `list` is absent or empty.
bool NoStrings(const Value* list) { return list == nullptr || !list->IsArray() || list->Empty(); }

// Whether an update that leaves `next` deletes the object instead (upstream
// ShouldDeleteDuringUpdate, and ShouldDeleteNamespaceDuringUpdate for namespaces): its deletion
// has begun, with no grace period left, and no finalizer remains.
bool ShouldDeleteDuringUpdate(Resource resource, Document& next, const Document& old) {
  auto old_meta = old.FindMember("metadata");
  if (old_meta == old.MemberEnd() || !old_meta->value.IsObject()) return false;
  auto deletion = old_meta->value.FindMember("deletionTimestamp");
  if (deletion == old_meta->value.MemberEnd() || deletion->value.IsNull()) return false;
  auto grace = old_meta->value.FindMember("deletionGracePeriodSeconds");
  if (grace != old_meta->value.MemberEnd() && grace->value.IsInt64() &&
      grace->value.GetInt64() != 0) {
    return false;
  }
  Value* meta = MemberOrNull(next, "metadata");
  if (meta == nullptr || !NoStrings(MemberOrNull(*meta, "finalizers"))) return false;
  if (resource != Resource::kNamespaces) return true;
  Value* spec = MemberOrNull(next, "spec");
  return spec == nullptr || NoStrings(MemberOrNull(*spec, "finalizers"));
}

// The scope of field management for a write to `info` at `now`; it views the strings it holds.
struct ManagerScope {
  ManagerScope(const ResourceInfo& info, Subresource sub, std::string now)
      : time(std::move(now)),
        scope{.type = api::ServedSchema().FindKind(info.group, info.version, info.kind),
              .api_version = info.api_version,
              .subresource = sub == Subresource::kStatus ? "status" : "",
              .reset_fields = &api::ResetFields(info.group, info.kind,
                                                sub == Subresource::kStatus ? "status" : ""),
              .time = time} {}
  ManagerScope(const ManagerScope&) = delete;
  ManagerScope& operator=(const ManagerScope&) = delete;

  const std::string time;
  const api::FieldManagerScope scope;
};

// conflict.go NewConflictError: 409 Conflict with the message of api::ConflictMessage and one
// FieldManagerConflict cause per field; no name, group or kind (errors.NewApplyConflict).
ApiError ApplyConflictError(const std::vector<api::ApplyConflict>& conflicts) {
  StatusDetails details;
  for (const api::ApplyConflict& c : conflicts) {
    details.causes.push_back({.reason = "FieldManagerConflict",
                              .message = api::ConflictCauseMessage(c),
                              .field = c.path});
  }
  return ApiError{.code = 409,
                  .reason = "Conflict",
                  .message = api::ConflictMessage(conflicts),
                  .details = std::move(details)};
}

ApiError FromStoreError(const ResourceInfo& info, std::string_view name, const Status& s) {
  switch (s.code()) {
    case StatusCode::kAlreadyExists:
      return AlreadyExistsError(info, name);
    case StatusCode::kConflict:
      return ConflictError(info, name);
    case StatusCode::kNotFound:
      return NotFoundError(info, name);
    default:
      return FromStatus(s);
  }
}

}  // namespace

Registry::Registry(store::Store* store, Options options)
    : store_(store), options_(std::move(options)) {
  for (const ResourceInfo& info : AllResources()) {
    caches_[static_cast<size_t>(info.resource)] = std::make_unique<WatchCache>(info, store_);
  }
  listers_ = MakeListers();
}

Registry::~Registry() { Stop(); }

admission::Listers Registry::MakeListers() {
  WatchCache* namespaces = &cache(Resource::kNamespaces);
  WatchCache* classes = &cache(Resource::kPriorityClasses);
  admission::Listers l;
  l.namespaces.phase = [namespaces](std::string_view name) -> std::optional<std::string> {
    ObjectPtr o = namespaces->Get("", name);
    if (!o) return std::nullopt;
    const api::Namespace* ns = o->As<api::Namespace>();
    return ns ? ns->phase : std::string();
  };
  l.namespaces.annotations = [namespaces](std::string_view name) -> std::optional<api::StringMap> {
    ObjectPtr o = namespaces->Get("", name);
    if (!o) return std::nullopt;
    const api::Namespace* ns = o->As<api::Namespace>();
    return ns ? ns->meta.annotations : api::StringMap();
  };
  l.priority_classes.get = [classes](std::string_view name) -> std::optional<api::PriorityClass> {
    ObjectPtr o = classes->Get("", name);
    const api::PriorityClass* pc = o ? o->As<api::PriorityClass>() : nullptr;
    if (pc == nullptr) return std::nullopt;
    return *pc;
  };
  l.priority_classes.for_each = [classes](const auto& fn) {
    // The listed objects stay alive (and their typed views with them) while fn reads them.
    for (const ObjectPtr& o : classes->List(ObjectFilter()).items) {
      if (const api::PriorityClass* pc = o->As<api::PriorityClass>()) fn(*pc);
    }
  };
  return l;
}

namespace {

bool IsSystemPriorityClass(std::string_view name) {
  for (const api::PriorityClass& pc : api::SystemPriorityClasses()) {
    if (pc.meta.name == name) return true;
  }
  return false;
}

// The name upstream's admission errors give the object (admission extractResourceName): the
// request's, else the body's name or generateName, else "Unknown".
std::string AdmissionObjectName(const admission::Attributes& a) {
  if (!a.name.empty()) return std::string(a.name);
  if (a.object != nullptr && a.object->IsObject()) {
    auto meta = a.object->FindMember("metadata");
    if (meta != a.object->MemberEnd()) {
      for (const char* field : {"name", "generateName"}) {
        std::string_view v = StringMember(meta->value, field);
        if (!v.empty()) return std::string(v);
      }
    }
  }
  return "Unknown";
}

ApiError AdmissionError(const admission::Attributes& a, const admission::Rejection& r) {
  switch (r.code) {
    case StatusCode::kNotFound:
      return NewNotFound(r.group, r.resource, r.name);
    case StatusCode::kForbidden: {
      ApiError e = NewForbidden(a.group, a.resource, AdmissionObjectName(a), r.message);
      for (const admission::Rejection::Cause& c : r.causes) {
        e.details->causes.push_back({c.type, c.message, c.field});
      }
      return e;
    }
    case StatusCode::kInternal: {
      // A plain error: 500 with an empty reason (upstream ErrorToAPIStatus).
      ApiError e;
      e.code = 500;
      e.message = r.message;
      return e;
    }
    default:
      return FromStatus(Status(r.code, r.message));
  }
}

}  // namespace

ApiResult<void> Registry::Admit(admission::Attributes& a) {
  if (!options_.admission) return {};
  if (admission::Verdict v = options_.admission->Admit(a, listers_); !v) {
    return ApiErr(AdmissionError(a, v.error()));
  }
  return {};
}

ApiResult<void> Registry::ValidateAdmission(const admission::Attributes& a) {
  if (!options_.admission) return {};
  if (admission::Verdict v = options_.admission->Validate(a, listers_); !v) {
    return ApiErr(AdmissionError(a, v.error()));
  }
  return {};
}

std::string Registry::NowRfc3339() const {
  return FormatRfc3339(std::chrono::time_point_cast<std::chrono::nanoseconds>(options_.now()));
}

Status Registry::Start(const Predecoder* predecoded) {
  for (auto& cache : caches_) KT_RETURN_IF_ERROR(cache->Start(predecoded));
  for (auto& last : last_write_) last.store(store_->CurrentRevision());
  // What kube-apiserver creates at start-up when missing: the system namespaces
  // (bootstrap-controller, start-system-namespaces-controller) and the two system priority
  // classes (scheduling/bootstrap-system-priority-classes). Objects that exist are left as they
  // are.
  auto create_missing = [this](Resource resource, const std::string& name, Document doc) {
    const ResourceInfo& info = Info(resource);
    if (store_->Get(ObjectKey(info, "", name))) return Status::Ok();
    std::promise<ApiResult<store::Bytes>> done;
    Create(info, "", std::move(doc), {},
           [&](ApiResult<store::Bytes> r) { done.set_value(std::move(r)); });
    ApiResult<store::Bytes> r = done.get_future().get();
    if (!r && r.error().reason != "AlreadyExists") return r.error().ToStatus();
    return Status::Ok();
  };
  for (const char* name : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    Document ns;
    ns.Parse((std::string(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")") + name +
              "\"}}")
                 .c_str());
    KT_RETURN_IF_ERROR(create_missing(Resource::kNamespaces, name, std::move(ns)));
  }
  for (const api::PriorityClass& pc : api::SystemPriorityClasses()) {
    KT_RETURN_IF_ERROR(
        create_missing(Resource::kPriorityClasses, pc.meta.name, api::PriorityClassToDocument(pc)));
  }
  // Namespaces whose deletion a stop interrupted (upstream's namespace controller resyncs).
  for (const ObjectPtr& ns : cache(Resource::kNamespaces).List(ObjectFilter()).items) {
    if (ns->meta().deletion_timestamp) FinalizeNamespace(ns->meta().name);
  }
  return Status::Ok();
}

void Registry::Stop() {
  {
    std::lock_guard<std::mutex> lock(background_mu_);
    stopping_ = true;
  }
  // Stopping the caches drops the callbacks waiting on them, and the tokens they hold.
  for (auto& cache : caches_) {
    if (cache) cache->Stop();
  }
  std::unique_lock<std::mutex> lock(background_mu_);
  background_cv_.wait(lock, [this] { return background_ == 0; });
}

void Registry::Sync(Resource r, std::function<void()> fn) {
  cache(r).AfterRevision(last_write_[static_cast<size_t>(r)].load(std::memory_order_acquire),
                         std::move(fn));
}

void Registry::SyncAll(std::initializer_list<Resource> resources, std::function<void()> fn) {
  SyncAll(std::span<const Resource>(resources.begin(), resources.size()), std::move(fn));
}

void Registry::SyncAll(std::span<const Resource> resources, std::function<void()> fn) {
  for (auto it = resources.rbegin(); it != resources.rend(); ++it) {
    fn = [this, r = *it, fn = std::move(fn)]() mutable { Sync(r, std::move(fn)); };
  }
  fn();
}

void Registry::NoteWrite(Resource r, store::Revision revision) {
  std::atomic<store::Revision>& last = last_write_[static_cast<size_t>(r)];
  store::Revision seen = last.load(std::memory_order_relaxed);
  while (revision > seen &&
         !last.compare_exchange_weak(seen, revision, std::memory_order_acq_rel)) {
  }
}

void Registry::Create(const ResourceInfo& info, std::string namespace_, Document body,
                      WriteOptions options, WriteCallback done) {
  auto shared = std::make_shared<Document>(std::move(body));
  // Admission reads the namespace and, for pods and priority classes, the priority classes:
  // both as of every write acknowledged before this create.
  const bool reads_priority_classes =
      info.resource == Resource::kPods || info.resource == Resource::kPriorityClasses;
  SyncAll(
      {Resource::kNamespaces,
       reads_priority_classes ? Resource::kPriorityClasses : Resource::kNamespaces},
      [this, &info, ns = std::move(namespace_), shared, options, done = std::move(done)]() mutable {
        CreateSynced(info, ns, *shared, options, ManagedFieldsFrom::kWriter, std::move(done));
      });
}

void Registry::CreateEvent(std::string namespace_, api::Event event, WriteOptions options,
                           WriteCallback done) {
  const ResourceInfo& info = Info(Resource::kEvents);
  const bool by_document =
      (options_.admission && options_.admission->ReadsObject(info.group, info.plural)) ||
      (!options.field_manager.empty() && options_.track_managed_fields_on_create);
  if (by_document) {
    return Create(info, std::move(namespace_), api::EventToDocument(event), std::move(options),
                  std::move(done));
  }
  auto shared = std::make_shared<api::Event>(std::move(event));
  // Admission reads the namespace as of every write acknowledged before this create.
  Sync(Resource::kNamespaces,
       [this, ns = std::move(namespace_), shared, options, done = std::move(done)]() mutable {
         CreateEventSynced(ns, *shared, options, std::move(done));
       });
}

void Registry::CreateEventSynced(const std::string& ns, api::Event& ev, const WriteOptions& options,
                                 WriteCallback done) {
  const ResourceInfo& info = Info(Resource::kEvents);
  api::ObjectMeta& meta = ev.meta;
  // As CreateSynced does to a document: the namespace of the request, admission (which reads no
  // event), the name, then what every create sets.
  if (!meta.namespace_.empty() && meta.namespace_ != ns) {
    return done(ApiErr(BadRequestError(
        "the namespace of the provided object does not match the namespace sent on the request")));
  }
  meta.namespace_ = ns;
  admission::Attributes attributes{.operation = admission::Operation::kCreate,
                                   .group = info.group,
                                   .resource = info.plural,
                                   .namespace_ = ns,
                                   .name = meta.name};
  if (auto r = Admit(attributes); !r) return done(ApiErr(r.error()));
  if (meta.name.empty() && !meta.generate_name.empty()) {
    meta.name = meta.generate_name + NameSuffix();
  }
  meta.resource_version.clear();
  meta.deletion_timestamp.reset();
  meta.deletion_grace_period_seconds.reset();
  meta.uid = NewUid();
  meta.creation_timestamp = NowRfc3339();
  meta.generation = 1;
  const std::string name = meta.name;
  TypedObject typed(std::move(ev));
  static const Value kNoDocument(rapidjson::kObjectType);  // events validate by their typed view
  FieldErrorList errs = ValidateObject(info, kNoDocument, typed, nullptr, nullptr, options_.gates);
  if (!errs.empty()) return done(ApiErr(InvalidError(info, name, std::move(errs))));
  attributes.name = name;
  if (auto r = ValidateAdmission(attributes); !r) return done(ApiErr(r.error()));
  std::string stored = api::EncodeEvent(*typed.Get<api::Event>());
  WriteStored(info, nullptr, ns, name, std::move(stored), std::move(typed), options,
              std::move(done));
}

void Registry::CreateSynced(const ResourceInfo& info, const std::string& ns, Document& doc,
                            const WriteOptions& options, ManagedFieldsFrom managed_fields,
                            WriteCallback done) {
  Alloc& alloc = doc.GetAllocator();
  if (auto r = CheckTypeMeta(info, doc); !r) return done(ApiErr(r.error()));
  if (auto r = CheckNamespaceOfBody(info, doc, ns); !r) return done(ApiErr(r.error()));
  // Upstream's defaults are set as the body is decoded, before admission.
  if (info.resource == Resource::kPods) {
    EnsureObject(doc, "spec", alloc);
    api::SetPodDefaults(doc);
  } else if (info.resource == Resource::kDaemonSets) {
    DefaultDaemonSet(doc);
  }
  // Upstream's create handler records the writer before mutating admission, so the
  // defaults are the creator's and what the strategy then sets is nobody's.
  if (managed_fields == ManagedFieldsFrom::kWriter) {
    if (options.field_manager.empty() || !options_.track_managed_fields_on_create) {
      RemoveMember(doc["metadata"], "managedFields");
    } else {
      ManagerScope scope(info, Subresource::kNone, NowRfc3339());
      api::UpdateObjectManagedFields(nullptr, &doc, options.field_manager, scope.scope);
    }
  }
  // The mutating admission plugins see the object as sent: a generateName not yet resolved
  // (upstream generates the name in BeforeCreate, after them).
  const std::string body_name(StringMember(doc["metadata"], "name"));
  admission::Attributes attributes{.operation = admission::Operation::kCreate,
                                   .group = info.group,
                                   .resource = info.plural,
                                   .namespace_ = ns,
                                   .name = body_name,
                                   .object = &doc};
  if (auto r = Admit(attributes); !r) return done(ApiErr(r.error()));
  Value& meta = doc["metadata"];
  if (StringMember(meta, "name").empty()) {
    std::string_view generate = StringMember(meta, "generateName");
    if (!generate.empty()) {
      SetString(meta, "name", std::string(generate) + NameSuffix(), alloc);
    }
  }
  // What every create sets (upstream BeforeCreate and the strategies' PrepareForCreate).
  RemoveMember(meta, "resourceVersion");
  RemoveMember(meta, "deletionTimestamp");
  RemoveMember(meta, "deletionGracePeriodSeconds");
  SetString(meta, "uid", NewUid(), alloc);
  SetString(meta, "creationTimestamp", NowRfc3339(), alloc);
  SetMember(meta, "generation", Value(int64_t{1}), alloc);
  switch (info.resource) {
    case Resource::kPods: {
      Value status(rapidjson::kObjectType);
      status.AddMember("phase", "Pending", alloc);
      // A gated pod says so from the start (upstream applySchedulingGatedCondition).
      auto gates = doc["spec"].FindMember("schedulingGates");
      if (gates != doc["spec"].MemberEnd() && gates->value.IsArray() && !gates->value.Empty()) {
        Value conditions(rapidjson::kArrayType);
        Value c(rapidjson::kObjectType);
        c.AddMember("type", "PodScheduled", alloc);
        c.AddMember("status", "False", alloc);
        c.AddMember("lastProbeTime", Value(rapidjson::kNullType), alloc);
        c.AddMember("lastTransitionTime", Value(NowRfc3339().c_str(), alloc), alloc);
        c.AddMember("reason", "SchedulingGated", alloc);
        c.AddMember("message", "Scheduling is blocked due to non-empty scheduling gates", alloc);
        conditions.PushBack(std::move(c), alloc);
        status.AddMember("conditions", std::move(conditions), alloc);
      }
      std::string_view qos = QosClass(doc);
      status.AddMember("qosClass", Value(qos.data(), static_cast<rapidjson::SizeType>(qos.size())),
                       alloc);
      SetMember(doc, "status", std::move(status), alloc);
      break;
    }
    case Resource::kNamespaces: {
      Value& spec = EnsureObject(doc, "spec", alloc);
      Value finalizers(rapidjson::kArrayType);
      finalizers.PushBack("kubernetes", alloc);
      SetMember(spec, "finalizers", std::move(finalizers), alloc);
      Value& status = EnsureObject(doc, "status", alloc);
      SetString(status, "phase", "Active", alloc);
      break;
    }
    case Resource::kDaemonSets:
      PrepareDaemonSetForCreate(doc);
      break;
    case Resource::kPriorityClasses:
      SetPriorityClassDefaults(doc);
      break;
    default:
      break;
  }
  Result<TypedObject> typed = DecodeTyped(info.resource, doc);
  if (!typed)
    return done(ApiErr(BadRequestError(std::string(info.kind) + " in version \"" +
                                       std::string(info.version) + "\" cannot be handled as a " +
                                       std::string(info.kind) + ": " + typed.error().message())));
  FieldErrorList errs = ValidateObject(info, doc, *typed, nullptr, nullptr, options_.gates);
  const std::string name(StringMember(doc["metadata"], "name"));
  if (!errs.empty()) return done(ApiErr(InvalidError(info, name, std::move(errs))));
  attributes.name = name;
  if (auto r = ValidateAdmission(attributes); !r) return done(ApiErr(r.error()));
  Write(info, nullptr, std::move(doc), std::move(*typed), options, std::move(done));
}

namespace {

// The registry's ValueStamp: stamps the resourceVersion into the value and hands the write's
// typed view (if any) to the watch cache with it. `buffer` is the value's own string, which
// nothing else reads before the stamp: the resourceVersion goes into it in place (the write
// left it room), and only bytes of another form are copied to be stamped.
store::ValueStamp PrepareStamp(WatchCache* cache, TypedObject typed,
                               std::shared_ptr<std::string> buffer) {
  return [cache, typed = std::move(typed), buffer = std::move(buffer)](
             store::Revision revision, const store::Bytes& value) mutable {
    store::Bytes stamped;
    if (value.get() == buffer.get() && StampInPlace(*buffer, revision)) {
      stamped = value;
    } else {
      stamped = StampResourceVersion(revision, value);
    }
    buffer.reset();
    if (!typed.empty() && typed.SetResourceVersion(revision)) {
      cache->Prepare(revision, stamped, std::move(typed));
    }
    return stamped;
  };
}

}  // namespace

namespace {

bool HasManagedFields(const Value& meta) {
  auto it = meta.FindMember("managedFields");
  return it != meta.MemberEnd() && it->value.IsArray() && !it->value.Empty();
}

}  // namespace

void Registry::Write(const ResourceInfo& info, ObjectPtr current, Document next, TypedObject typed,
                     WriteOptions options, WriteCallback done, Quantities quantities) {
  const std::string name(StringMember(next["metadata"], "name"));
  const std::string namespace_(StringMember(next["metadata"], "namespace"));
  NormalizeForStorage(info.resource, next, quantities == Quantities::kMayChange);
  WriteStored(info, std::move(current), namespace_, name, EncodeForStorage(next), std::move(typed),
              options, std::move(done));
}

void Registry::WriteStored(const ResourceInfo& info, ObjectPtr current,
                           const std::string& namespace_, const std::string& name,
                           std::string stored, TypedObject typed, const WriteOptions& options,
                           WriteCallback done) {
  if (options.dry_run) {
    if (!current) {
      // A dry run answers what the write would: AlreadyExists included.
      if (cache(info.resource).Get(namespace_, name))
        return done(ApiErr(AlreadyExistsError(info, name)));
      return done(store::MakeBytes(std::move(stored)));
    }
    return done(store::MakeBytes(WithResourceVersion(stored, current->revision)));
  }
  auto on_done = [this, &info, name, done = std::move(done)](Result<store::WriteResult> r) {
    if (!r) return done(ApiErr(FromStoreError(info, name, r.error())));
    NoteWrite(info.resource, r->revision);
    // The stamped bytes: the very buffer the store and the watch cache hold.
    done(std::move(r->value));
  };
  // The store stamps the resourceVersion in once the revision is known (object.h), so the
  // object exists once in memory rather than once unstamped in the store and once served; the
  // buffer keeps room for it, so the stamp is made in place.
  FitForStorage(stored);
  auto buffer = std::make_shared<std::string>(std::move(stored));
  store::Bytes value = buffer;
  store_->Write(
      store::WriteOp{
          .type = current ? store::WriteOp::Type::kUpdate : store::WriteOp::Type::kCreate,
          .key = ObjectKey(info, namespace_, name),
          .value = std::move(value),
          .expected_mod_revision = current ? current->revision : 0,
          .stamp = PrepareStamp(&cache(info.resource), std::move(typed), std::move(buffer))},
      std::move(on_done));
}

void Registry::Update(const ResourceInfo& info, std::string namespace_, std::string name,
                      Subresource sub, Document body, WriteOptions options, WriteCallback done) {
  auto shared = std::make_shared<Document>(std::move(body));
  // Admission reads the namespace (its phase, PodTolerationRestriction its annotations) as of
  // every write acknowledged before this update.
  SyncAll({info.resource, Resource::kNamespaces}, [this, &info, ns = std::move(namespace_),
                                                   name = std::move(name), sub, shared, options,
                                                   done = std::move(done)]() mutable {
    Document& doc = *shared;
    if (auto r = CheckTypeMeta(info, doc); !r) return done(ApiErr(r.error()));
    if (auto r = CheckNamespaceOfBody(info, doc, ns); !r) return done(ApiErr(r.error()));
    Value& meta = doc["metadata"];
    std::string_view body_name = StringMember(meta, "name");
    if (body_name.empty()) {
      SetString(meta, "name", name, doc.GetAllocator());
    } else if (body_name != name) {
      return done(ApiErr(BadRequestError("the name of the object (" + std::string(body_name) +
                                         ") does not match the name on the URL (" + name + ")")));
    }
    ObjectPtr current = cache(info.resource).Get(ns, name);
    if (!current) return done(ApiErr(NotFoundError(info, name)));
    std::string_view rv = StringMember(meta, "resourceVersion");
    if (rv.empty()) {
      if (!info.unconditional_update) {
        return done(ApiErr(InvalidError(info, name,
                                        {FieldError::Invalid("metadata.resourceVersion", "0x0",
                                                             "must be specified for an update")})));
      }
    } else if (rv != std::to_string(current->revision)) {
      return done(ApiErr(ConflictError(info, name)));
    }
    Result<Document> old = ParseCurrent(*current);
    if (!old) return done(ApiErr(NewInternalError(old.error().message())));
    UpdateFrom(info, std::move(current), *old, sub, std::move(doc), options, std::move(done));
  });
}

namespace {

// Whether anything but metadata and status differs between two objects.
bool SpecChanged(const Value& next, const Value& old) {
  for (const auto& m : next.GetObject()) {
    std::string_view n(m.name.GetString(), m.name.GetStringLength());
    if (n == "metadata" || n == "status" || n == "kind" || n == "apiVersion") continue;
    auto o = old.FindMember(m.name);
    if (o == old.MemberEnd() || o->value != m.value) return true;
  }
  for (const auto& m : old.GetObject()) {
    if (!next.HasMember(m.name)) {
      std::string_view n(m.name.GetString(), m.name.GetStringLength());
      if (n != "metadata" && n != "status") return true;
    }
  }
  return false;
}

}  // namespace

void Registry::UpdateFrom(const ResourceInfo& info, ObjectPtr current, const Document& old,
                          Subresource sub, Document body, WriteOptions options, WriteCallback done,
                          ManagedFieldsFrom managed_fields, Body body_kind) {
  const std::string name = current->meta().name;
  // A uid in the body is a precondition (upstream: the update's UID precondition).
  if (auto bm = body.FindMember("metadata"); bm != body.MemberEnd() && bm->value.IsObject()) {
    std::string_view uid = StringMember(bm->value, "uid");
    if (!uid.empty() && uid != current->meta().uid) {
      return done(
          ApiErr(ConflictError(info, name,
                               "Precondition failed: UID in precondition: " + std::string(uid) +
                                   ", UID in object meta: " + current->meta().uid)));
    }
  }
  Document next;
  // The status subresource changes status and metadata, not the spec (upstream's status
  // strategies; a pod keeps its owner references too, below). A status patch that named only
  // metadata and status has the current spec already.
  const bool patched_status = sub == Subresource::kStatus &&
                              body_kind == Body::kPatchedMetadataAndStatus && body.IsObject();
  if (sub == Subresource::kStatus) {
    next.Swap(body);
    if (!patched_status) CopyMember(old, next, "spec", next.GetAllocator());
  } else {
    next.Swap(body);
    if (info.has_status) CopyMember(old, next, "status", next.GetAllocator());
    // A namespace's spec.finalizers change only through the namespace lifecycle (upstream
    // namespaceStrategy.PrepareForUpdate).
    if (info.resource == Resource::kNamespaces) {
      auto old_spec = old.FindMember("spec");
      if (old_spec != old.MemberEnd()) {
        CopyMember(old_spec->value, EnsureObject(next, "spec", next.GetAllocator()), "finalizers",
                   next.GetAllocator());
      } else if (auto spec = next.FindMember("spec"); spec != next.MemberEnd()) {
        RemoveMember(spec->value, "finalizers");
      }
    }
  }
  Alloc& nalloc = next.GetAllocator();
  Value& meta = EnsureObject(next, "metadata", nalloc);
  const Value& old_meta = old["metadata"];
  for (const char* field : {"uid", "creationTimestamp", "deletionTimestamp",
                            "deletionGracePeriodSeconds", "generation", "namespace", "name"}) {
    CopyMember(old_meta, meta, field, nalloc);
  }
  SetString(meta, "resourceVersion", std::to_string(current->revision), nalloc);
  if (sub == Subresource::kStatus && info.resource == Resource::kPods) {
    // Upstream podStatusStrategy: owner references are not the status writer's (old kubelets
    // corrupted them), and a status without a QoS class keeps the one set at creation.
    CopyMember(old_meta, meta, "ownerReferences", nalloc);
    auto status = next.FindMember("status");
    auto old_status = old.FindMember("status");
    if (status != next.MemberEnd() && status->value.IsObject() && old_status != old.MemberEnd() &&
        old_status->value.IsObject() && StringMember(status->value, "qosClass").empty()) {
      CopyMember(old_status->value, status->value, "qosClass", nalloc);
    }
  }
  if (info.resource == Resource::kPriorityClasses) SetPriorityClassDefaults(next);
  const bool daemonset_spec = info.resource == Resource::kDaemonSets && sub != Subresource::kStatus;
  if (daemonset_spec) DefaultDaemonSet(next);
  // Upstream's update handlers record the writer on the object as decoded (defaults set), before
  // the strategy's PrepareForUpdate and admission.
  if (managed_fields == ManagedFieldsFrom::kWriter) {
    if (options.field_manager.empty() || (!HasManagedFields(old_meta) && !HasManagedFields(meta))) {
      // An in-process writer, or an object nobody tracks yet (upstream skipnonapplied.go: an
      // update of an object without managedFields is not tracked).
      CopyMember(old_meta, meta, "managedFields", nalloc);
    } else {
      ManagerScope scope(info, sub, NowRfc3339());
      api::UpdateObjectManagedFields(&old, &next, options.field_manager, scope.scope);
    }
  }
  if (daemonset_spec) PrepareDaemonSetForUpdate(next, old);
  admission::Attributes attributes{.operation = admission::Operation::kUpdate,
                                   .group = info.group,
                                   .resource = info.plural,
                                   .subresource = sub == Subresource::kStatus ? "status" : "",
                                   .namespace_ = current->meta().namespace_,
                                   .name = name,
                                   .object = &next,
                                   .old_object = &old};
  if (auto r = Admit(attributes); !r) return done(ApiErr(r.error()));
  const bool delete_instead = ShouldDeleteDuringUpdate(info.resource, next, old);
  // Nothing changed: no write, no new resourceVersion (upstream skips no-op updates). A status
  // patch that named only metadata and status can differ from the current object only there (no
  // mutating admission plugin changes a subresource's write).
  auto unchanged = [&] {
    if (!patched_status) return next == old;
    for (const char* member : {"metadata", "status"}) {
      auto a = next.FindMember(member);
      auto b = old.FindMember(member);
      if ((a == next.MemberEnd()) != (b == old.MemberEnd())) return false;
      if (a != next.MemberEnd() && a->value != b->value) return false;
    }
    return true;
  };
  if (!delete_instead && unchanged()) return done(current->json);
  // The generation counts changes of anything but metadata and status (which is all the status
  // subresource changes: the rest is the old object's).
  if (sub != Subresource::kStatus && SpecChanged(next, old)) {
    auto g = old_meta.FindMember("generation");
    int64_t gen = g != old_meta.MemberEnd() && g->value.IsInt64() ? g->value.GetInt64() : 0;
    SetMember(meta, "generation", Value(gen + 1), nalloc);
  }
  // A pod's status update keeps the current spec: only metadata and status are decoded, onto
  // the current typed view.
  const api::Pod* current_pod = current->As<api::Pod>();
  Result<TypedObject> typed =
      sub == Subresource::kStatus && current_pod != nullptr
          ? api::DecodePodKeepingSpec(*current_pod, next).transform([](api::Pod pod) {
              return TypedObject(std::move(pod));
            })
          : DecodeTyped(info.resource, next);
  if (!typed) {
    return done(ApiErr(BadRequestError(std::string(info.kind) + " in version \"" +
                                       std::string(info.version) + "\" cannot be handled as a " +
                                       std::string(info.kind) + ": " + typed.error().message())));
  }
  FieldErrorList errs = ValidateObject(info, next, *typed, &old, &current->typed, options_.gates);
  if (!errs.empty()) return done(ApiErr(InvalidError(info, name, std::move(errs))));
  if (auto r = ValidateAdmission(attributes); !r) return done(ApiErr(r.error()));
  if (delete_instead) {
    // Answered with the object the update made, as upstream's deleteWithoutFinalizers ("clients
    // are expecting an updated object if a PUT succeeded").
    NormalizeForStorage(info.resource, next);
    store::Bytes updated =
        store::MakeBytes(WithResourceVersion(EncodeForStorage(next), current->revision));
    if (options.dry_run) return done(std::move(updated));
    return store_->DeleteAsync(current->key, current->revision,
                               [this, &info, name, updated = std::move(updated),
                                done = std::move(done)](Result<store::WriteResult> r) {
                                 if (!r) return done(ApiErr(FromStoreError(info, name, r.error())));
                                 NoteWrite(info.resource, r->revision);
                                 done(updated);
                               });
  }
  // A pod's status update keeps the stored spec, and so its quantities.
  const Quantities quantities = sub == Subresource::kStatus && info.resource == Resource::kPods
                                    ? Quantities::kAsStored
                                    : Quantities::kMayChange;
  Write(info, std::move(current), std::move(next), std::move(*typed), options, std::move(done),
        quantities);
}

void Registry::Patch(const ResourceInfo& info, std::string namespace_, std::string name,
                     Subresource sub, api::PatchType type, std::string patch, WriteOptions options,
                     WriteCallback done) {
  std::string key = ObjectKey(info, namespace_, name);
  auto shared_patch = std::make_shared<const std::string>(std::move(patch));
  Serialized(key, [this, &info, ns = std::move(namespace_), name = std::move(name), sub, type,
                   shared_patch, options,
                   done = std::move(done)](std::function<void()> release) mutable {
    PatchAttempt(
        info, std::move(ns), std::move(name), sub, type, shared_patch, options, 0, 0,
        [release = std::move(release), done = std::move(done)](ApiResult<store::Bytes> r) mutable {
          release();
          done(std::move(r));
        });
  });
}

void Registry::Serialized(const std::string& key, std::function<void(std::function<void()>)> job) {
  {
    std::lock_guard<std::mutex> lock(keys_mu_);
    auto& queue = key_queues_[key];
    queue.push_back(std::move(job));
    if (queue.size() > 1) return;  // runs when the jobs before it release
  }
  // The front job stays in the queue while it runs; only this thread runs it.
  std::function<void(std::function<void()>)> first;
  {
    std::lock_guard<std::mutex> lock(keys_mu_);
    first = key_queues_[key].front();
  }
  first([this, key] { ReleaseKey(key); });
}

void Registry::ReleaseKey(const std::string& key) {
  std::function<void(std::function<void()>)> next;
  {
    std::lock_guard<std::mutex> lock(keys_mu_);
    auto it = key_queues_.find(key);
    if (it == key_queues_.end()) return;
    it->second.pop_front();
    if (it->second.empty()) {
      key_queues_.erase(it);
      return;
    }
    next = it->second.front();
  }
  next([this, key] { ReleaseKey(key); });
}

namespace {

// Upstream's patch handler (handlers/patch.go) under fieldValidation: the duplicates of a merge
// or strategic merge patch body, then the unknown and duplicate fields of the patched object, in
// that order; the patched object keeps none of them. Strict refuses with 422 `"" is invalid:
// patch: Invalid value: "<patched JSON>": strict decoding error: ...` unless the object has a
// type error, which the update reports instead (non-strict errors trump).
ApiResult<void> CheckPatchedFields(const ResourceInfo& info, api::PatchType type,
                                   const Document& original, const std::string& patch,
                                   Document& patched, api::FieldValidation mode,
                                   std::vector<std::string>* warnings) {
  api::FieldProblems problems;
  api::FieldProblems* sink = mode == api::FieldValidation::kIgnore ? nullptr : &problems;
  if (sink != nullptr &&
      (type == api::PatchType::kMergePatch || type == api::PatchType::kStrategicMergePatch)) {
    if (Result<Document> body = api::ParseJson(patch); body) api::FindDuplicateFields(*body, sink);
  }
  api::PruneUnknownFields(patched,
                          api::ServedSchema().FindKind(info.group, info.version, info.kind),
                          patched.GetAllocator(), sink);
  if (problems.messages.empty()) return {};
  if (mode == api::FieldValidation::kWarn) {
    if (warnings != nullptr) {
      warnings->insert(warnings->end(), problems.messages.begin(), problems.messages.end());
    }
    return {};
  }
  if (!DecodeTyped(info.resource, patched)) return {};
  // Upstream quotes the patched object as the patch made it, unknown fields included: made again
  // here, on this error path only, rather than kept aside on every strict patch.
  Result<Document> as_patched = api::ApplyPatch(type, info.kind, original, patch);
  const FieldError error =
      FieldError::Invalid("patch", GoQuote(api::EncodeJson(as_patched ? *as_patched : patched)),
                          api::StrictDecodingError(problems));
  return ApiErr(NewInvalid("", "", "", std::span<const FieldError>(&error, 1)));
}

// The object a patch made, against the URL: a resourceVersion in it is a precondition on
// `revision` (0: none, a create), its name must be the URL's, kind, apiVersion and namespace
// are checked and filled in.
ApiResult<void> CheckPatched(const ResourceInfo& info, const std::string& namespace_,
                             const std::string& name, store::Revision revision, Document& patched) {
  auto meta = patched.FindMember("metadata");
  if (meta != patched.MemberEnd()) {
    std::string_view rv = StringMember(meta->value, "resourceVersion");
    if (!rv.empty() && rv != std::to_string(revision)) return ApiErr(ConflictError(info, name));
    std::string_view body_name = StringMember(meta->value, "name");
    if (!body_name.empty() && body_name != name) {
      return ApiErr(BadRequestError("the name of the object (" + std::string(body_name) +
                                    ") does not match the name on the URL (" + name + ")"));
    }
  }
  if (auto r = CheckTypeMeta(info, patched); !r) return r;
  return CheckNamespaceOfBody(info, patched, namespace_);
}

// Whether a merge or strategic merge patch names no top-level member but metadata and status
// (no directive either), so that the patched object's other members are the original's.
bool PatchNamesOnlyMetadataAndStatus(api::PatchType type, const std::string& patch) {
  if (type != api::PatchType::kMergePatch && type != api::PatchType::kStrategicMergePatch) {
    return false;
  }
  Result<Document> doc = api::ParseJson(patch);
  if (!doc || !doc->IsObject()) return false;
  for (const auto& m : doc->GetObject()) {
    const std::string_view key(m.name.GetString(), m.name.GetStringLength());
    if (key != "metadata" && key != "status") return false;
  }
  return true;
}

}  // namespace

void Registry::PatchAttempt(const ResourceInfo& info, std::string namespace_, std::string name,
                            Subresource sub, api::PatchType type,
                            std::shared_ptr<const std::string> patch, WriteOptions options,
                            int attempt, store::Revision stale, WriteCallback done) {
  SyncAll({info.resource, Resource::kNamespaces}, [this, &info, ns = std::move(namespace_),
                                                   name = std::move(name), sub, type, patch,
                                                   options, attempt, stale,
                                                   done = std::move(done)]() mutable {
    ObjectPtr current = cache(info.resource).Get(ns, name);
    if (!current && type == api::PatchType::kApplyPatch) {
      // Upstream's forceAllowCreate: an apply creates what is missing. If another create wins
      // the race, the apply starts over against what it created.
      auto retry = [this, &info, ns, name, sub, type, patch, options, attempt,
                    done](ApiResult<store::Bytes> r) mutable {
        if (!r && r.error().reason == "AlreadyExists" && attempt + 1 < kMaxConflictRetries) {
          return PatchAttempt(info, ns, name, sub, type, patch, options, attempt + 1, 0,
                              std::move(done));
        }
        done(std::move(r));
      };
      return ApplyAttempt(info, ns, name, sub, nullptr, nullptr, *patch, options, std::move(done),
                          std::move(retry));
    }
    if (!current) return done(ApiErr(NotFoundError(info, name)));
    if (current->revision == stale) {
      // The write that beat us is not in the cache yet: wait for the cache to move on.
      return cache(info.resource)
          .AfterRevision(
              cache(info.resource).revision() + 1,
              [this, &info, ns, name, sub, type, patch, options, attempt, stale, done]() mutable {
                PatchAttempt(info, ns, name, sub, type, patch, options, attempt, stale,
                             std::move(done));
              });
    }
    // Nothing holds the document, or what is copied from it, beyond this call: the write encodes
    // the patched object before it returns.
    std::string buffer;
    Result<Document> doc = ParseCurrentInPlace(*current, buffer);
    if (!doc) return done(ApiErr(NewInternalError(doc.error().message())));
    auto retry = [this, &info, ns, name, sub, type, patch, options, attempt,
                  read = current->revision, done](ApiResult<store::Bytes> r) mutable {
      if (!r && IsStaleWriteConflict(r.error()) && attempt + 1 < kMaxConflictRetries) {
        return PatchAttempt(info, ns, name, sub, type, patch, options, attempt + 1, read,
                            std::move(done));
      }
      done(std::move(r));
    };
    if (type == api::PatchType::kApplyPatch) {
      return ApplyAttempt(info, ns, name, sub, std::move(current), &*doc, *patch, options,
                          std::move(done), std::move(retry));
    }
    Result<Document> patched = api::ApplyPatch(type, info.kind, *doc, *patch);
    if (!patched) {
      const Status& e = patched.error();
      if (e.code() == StatusCode::kInvalid && e.message() == api::kPatchRejectedMessage) {
        return done(ApiErr(NewPatchNotApplicable()));
      }
      return done(ApiErr(e));
    }
    if (!patched->IsObject()) {
      return done(ApiErr(BadRequestError("the patched object is not a JSON object")));
    }
    if (options.field_validation) {
      if (auto r = CheckPatchedFields(info, type, *doc, *patch, *patched, *options.field_validation,
                                      options.warnings.get());
          !r) {
        return done(ApiErr(r.error()));
      }
    }
    if (auto r = CheckPatched(info, ns, name, current->revision, *patched); !r) {
      return done(ApiErr(r.error()));
    }
    const Body body_kind =
        sub == Subresource::kStatus && PatchNamesOnlyMetadataAndStatus(type, *patch)
            ? Body::kPatchedMetadataAndStatus
            : Body::kWhole;
    UpdateFrom(info, std::move(current), *doc, sub, std::move(*patched), options, std::move(retry),
               ManagedFieldsFrom::kWriter, body_kind);
  });
}

void Registry::ApplyAttempt(const ResourceInfo& info, const std::string& ns,
                            const std::string& name, Subresource sub, ObjectPtr current,
                            const Document* live, const std::string& applied_json,
                            const WriteOptions& options, WriteCallback done,
                            WriteCallback written) {
  // The API server has decoded the apply configuration already.
  Result<Document> applied = api::ParseJson(applied_json);
  if (!applied)
    return done(ApiErr(BadRequestError("error decoding YAML: " + applied.error().message())));
  std::vector<api::ManagedFieldsEntry> entries;
  if (live != nullptr) {
    auto meta = live->FindMember("metadata");
    if (meta != live->MemberEnd() && meta->value.IsObject()) {
      if (auto mf = meta->value.FindMember("managedFields"); mf != meta->value.MemberEnd()) {
        Result<std::vector<api::ManagedFieldsEntry>> decoded = api::DecodeManagedFields(mf->value);
        if (!decoded) {
          return done(ApiErr(
              NewInternalError("failed to decode managed fields: " + decoded.error().message())));
        }
        entries = std::move(*decoded);
      }
    }
  }
  ManagerScope scope(info, sub, NowRfc3339());
  std::vector<api::ApplyConflict> conflicts;
  Result<api::ApplyResult> result = api::Apply(live, *applied, options.field_manager, options.force,
                                               scope.scope, entries, &conflicts);
  if (!result) {
    if (!conflicts.empty()) return done(ApiErr(ApplyConflictError(conflicts)));
    return done(ApiErr(result.error()));
  }
  Document& next = result->object;
  if (auto r = CheckPatched(info, ns, name, current ? current->revision : 0, next); !r) {
    return done(ApiErr(r.error()));
  }
  if (current) {
    // Upstream defaults the merged object as it converts it back (structuredmerge.go), so a
    // defaulted field an apply stops naming is set again rather than cleared.
    if (info.resource == Resource::kPods && sub == Subresource::kNone) {
      EnsureObject(next, "spec", next.GetAllocator());
      api::SetPodDefaults(next);
    }
    return UpdateFrom(info, std::move(current), *live, sub, std::move(next), options,
                      std::move(written), ManagedFieldsFrom::kApply);
  }
  // patch.go applyPatch on a create: the apply configuration may not name a uid, and the name
  // is the URL's.
  Value& meta = next["metadata"];
  if (std::string_view uid = StringMember(meta, "uid"); !uid.empty()) {
    return done(ApiErr(ConflictError(info, name,
                                     "uid mismatch: the provided object specified uid " +
                                         std::string(uid) + ", and no existing object was found")));
  }
  SetString(meta, "name", name, next.GetAllocator());
  CreateSynced(
      info, ns, next, options, ManagedFieldsFrom::kApply,
      [created = options.created, written = std::move(written)](ApiResult<store::Bytes> r) {
        if (r && created) *created = true;
        written(std::move(r));
      });
}

void Registry::Delete(const ResourceInfo& info, std::string namespace_, std::string name,
                      DeleteOptions options, WriteCallback done) {
  DeleteAttempt(info, std::move(namespace_), std::move(name), std::move(options), 0, 0,
                std::move(done));
}

void Registry::DeleteAttempt(const ResourceInfo& info, std::string namespace_, std::string name,
                             DeleteOptions options, int attempt, store::Revision stale,
                             WriteCallback done) {
  Sync(info.resource, [this, &info, ns = std::move(namespace_), name = std::move(name),
                       options = std::move(options), attempt, stale,
                       done = std::move(done)]() mutable {
    // Upstream admits a delete before it looks the object up.
    admission::Attributes attributes{.operation = admission::Operation::kDelete,
                                     .group = info.group,
                                     .resource = info.plural,
                                     .namespace_ = ns,
                                     .name = name};
    if (auto r = Admit(attributes); !r) return done(ApiErr(r.error()));
    // The system priority classes cannot be deleted (upstream priorityclass REST.Delete).
    if (info.resource == Resource::kPriorityClasses && IsSystemPriorityClass(name)) {
      return done(ApiErr(NewForbidden(info.group, info.plural, name,
                                      "this is a system priority class and cannot be deleted")));
    }
    ObjectPtr current = cache(info.resource).Get(ns, name);
    if (!current) return done(ApiErr(NotFoundError(info, name)));
    if (current->revision == stale) {
      // The write that beat us is not in the cache yet: wait for the cache to move on.
      return cache(info.resource)
          .AfterRevision(cache(info.resource).revision() + 1,
                         [this, &info, ns, name, options, attempt, stale, done]() mutable {
                           DeleteAttempt(info, ns, name, options, attempt, stale, std::move(done));
                         });
    }
    const api::ObjectMeta& meta = current->meta();
    if (options.precondition_uid && *options.precondition_uid != meta.uid) {
      return done(ApiErr(
          ConflictError(info, name,
                        "Precondition failed: UID in precondition: " + *options.precondition_uid +
                            ", UID in object meta: " + meta.uid)));
    }
    if (options.precondition_resource_version &&
        *options.precondition_resource_version != std::to_string(current->revision)) {
      return done(ApiErr(ConflictError(
          info, name,
          "Precondition failed: ResourceVersion in precondition: " +
              *options.precondition_resource_version +
              ", ResourceVersion in object meta: " + std::to_string(current->revision))));
    }
    if (auto r = ValidateAdmission(attributes); !r) return done(ApiErr(r.error()));
    if (info.resource == Resource::kNamespaces) {
      return DeleteNamespace(info, std::move(current), std::move(options), attempt,
                             std::move(done));
    }
    DeleteGracefully(info, std::move(current), std::move(options), attempt, std::move(done));
  });
}

namespace {

// What a DELETE does to an object that exists (upstream rest.BeforeDelete, the pod strategy's
// CheckGracefulDelete, and the generic store's finalizer handling).
struct DeletePlan {
  enum Kind : unsigned char {
    kDeleteNow,  // remove it from the store
    kAsIs,       // a graceful deletion is pending: answer the object unchanged
    kMark,       // write deletionTimestamp and deletionGracePeriodSeconds
  } kind = kDeleteNow;
  WallTime deletion{};      // kMark: the deletionTimestamp
  bool keep_stamp = false;  // kMark: keep an existing deletionTimestamp (finalizers only)
  int64_t grace = 0;        // kMark: deletionGracePeriodSeconds
};

WallTime FromTimestamp(const std::string& rfc3339) {
  const api::Timestamp t = api::ParseTimestamp(rfc3339);
  return WallTime(std::chrono::seconds(t.seconds) + std::chrono::nanoseconds(t.nanos));
}

// `finalizers`: whether the object has finalizers once this delete has set them.
DeletePlan PlanDelete(const ResourceInfo& info, const StoredObject& current,
                      std::optional<int64_t> requested, WallTime now, bool finalizers) {
  const api::ObjectMeta& meta = current.meta();
  // Negative grace periods count as 1 s on the delete path.
  if (requested && *requested < 0) requested = 1;
  // Objects without graceful deletion (everything but pods): deleted at once unless finalizers
  // hold them, which marks them deleting "now" with no grace period (upstream markAsDeleting).
  auto not_graceful = [&] {
    DeletePlan p;
    if (!finalizers) return p;
    p.kind = DeletePlan::kMark;
    p.deletion = now;
    p.keep_stamp = meta.deletion_timestamp && FromTimestamp(*meta.deletion_timestamp) <= now;
    return p;
  };
  if (info.resource != Resource::kPods) return not_graceful();
  if (meta.deletion_timestamp) {
    std::optional<int64_t> current_grace = meta.deletion_grace_period_seconds;
    if (current_grace && *current_grace < 0) current_grace = 1;
    // A deletion whose grace period is gone (or was never set) finishes now.
    if (!current_grace || *current_grace == 0) return not_graceful();
    // Only a shorter grace period may be asked for; otherwise the deletion stays pending.
    if (!requested || *requested >= *current_grace) return DeletePlan{.kind = DeletePlan::kAsIs};
    DeletePlan p{.kind = DeletePlan::kMark};
    p.deletion = FromTimestamp(*meta.deletion_timestamp) - std::chrono::seconds(*current_grace) +
                 std::chrono::seconds(*requested);
    p.grace = *requested;
    return p;
  }
  const api::Pod* pod = current.As<api::Pod>();
  int64_t period = requested.value_or(
      pod != nullptr ? pod->spec.termination_grace_period_seconds.value_or(0) : 0);
  // An unscheduled pod, or one that has terminated, has nothing to wait for.
  if (pod == nullptr || pod->spec.node_name.empty() || pod->status.phase == "Failed" ||
      pod->status.phase == "Succeeded") {
    period = 0;
  }
  if (period < 0) period = 1;
  return DeletePlan{
      .kind = DeletePlan::kMark, .deletion = now + std::chrono::seconds(period), .grace = period};
}

// The object's finalizers with the garbage collector's as the propagation policy asks
// (upstream deletionFinalizersForGarbageCollection): Orphan and Foreground add theirs and drop
// the other's; Background drops both; no policy leaves them as they are.
std::vector<std::string> FinalizersAfterDelete(const api::ObjectMeta& meta,
                                               Propagation propagation) {
  std::vector<std::string> finalizers(meta.finalizers.begin(), meta.finalizers.end());
  auto drop = [&](std::string_view f) { std::erase(finalizers, f); };
  auto add = [&](std::string_view f) {
    if (std::find(finalizers.begin(), finalizers.end(), f) == finalizers.end()) {
      finalizers.emplace_back(f);
    }
  };
  switch (propagation) {
    case Propagation::kDefault:
      break;
    case Propagation::kBackground:
      drop(kFinalizerOrphan);
      drop(kFinalizerForeground);
      break;
    case Propagation::kOrphan:
      drop(kFinalizerForeground);
      add(kFinalizerOrphan);
      break;
    case Propagation::kForeground:
      drop(kFinalizerOrphan);
      add(kFinalizerForeground);
      break;
  }
  return finalizers;
}

}  // namespace

void Registry::DeleteGracefully(const ResourceInfo& info, ObjectPtr current, DeleteOptions options,
                                int attempt, WriteCallback done) {
  const WallTime now = std::chrono::time_point_cast<std::chrono::nanoseconds>(options_.now());
  const std::vector<std::string> finalizers =
      FinalizersAfterDelete(current->meta(), options.propagation);
  const bool finalizers_changed =
      !std::equal(finalizers.begin(), finalizers.end(), current->meta().finalizers.begin(),
                  current->meta().finalizers.end());
  const DeletePlan plan =
      PlanDelete(info, *current, options.grace_period_seconds, now, !finalizers.empty());
  // No grace period and no finalizer left: the object goes now. Upstream first writes the
  // zero grace period and then deletes; here it is one store delete, so that a crash between
  // the two cannot leave a half-done delete behind (DESIGN.md invariant 5).
  if (plan.kind == DeletePlan::kDeleteNow ||
      (plan.kind == DeletePlan::kMark && plan.grace == 0 && finalizers.empty())) {
    return DeleteStored(info, std::move(current), std::move(options), attempt, std::move(done));
  }
  if (plan.kind == DeletePlan::kAsIs && !finalizers_changed) return done(current->json);
  // Only metadata changes.
  std::string stamp;
  bool next_generation = false;
  auto mark = [&](Value& meta, Alloc& alloc) {
    if (finalizers_changed) {
      if (finalizers.empty()) {
        RemoveMember(meta, "finalizers");
      } else {
        Value list(rapidjson::kArrayType);
        for (const std::string& f : finalizers) {
          list.PushBack(Value(f.data(), static_cast<rapidjson::SizeType>(f.size()), alloc), alloc);
        }
        SetMember(meta, "finalizers", std::move(list), alloc);
      }
    }
    // kAsIs: only the finalizers change, the deletion in progress stays as it is.
    if (plan.kind != DeletePlan::kAsIs) {
      const bool first = !current->meta().deletion_timestamp;
      if (!plan.keep_stamp) {
        stamp = FormatRfc3339(plan.deletion);
        SetString(meta, "deletionTimestamp", stamp, alloc);
      }
      SetMember(meta, "deletionGracePeriodSeconds", Value(plan.grace), alloc);
      if (auto g = meta.FindMember("generation");
          first && g != meta.MemberEnd() && g->value.IsInt64() && g->value.GetInt64() > 0) {
        g->value.SetInt64(g->value.GetInt64() + 1);
        next_generation = true;
      }
    }
    RemoveMember(meta, "resourceVersion");
  };
  WriteOptions write;
  write.dry_run = options.dry_run;
  const store::Revision read = current->revision;
  const std::string ns = current->meta().namespace_;
  const std::string name = current->meta().name;
  auto written = [this, &info, ns, name, options, attempt, read,
                  done = std::move(done)](ApiResult<store::Bytes> r) mutable {
    if (!r && IsConflict(r.error()) && attempt + 1 < kMaxConflictRetries) {
      return DeleteAttempt(info, ns, name, options, attempt + 1, read, std::move(done));
    }
    done(std::move(r));
  };
  // The common case, no finalizer changed: the typed view follows from the current one by the
  // same changes, and the bytes (in the storage format, which EncodeForStorage of their parse
  // gives back as they are) change in place: a first graceful deletion is spliced into them;
  // otherwise the metadata alone is parsed, changed and written back.
  const std::string_view bytes = *current->json;
  std::optional<std::string> stored;
  if (!finalizers_changed && plan.kind == DeletePlan::kMark && !plan.keep_stamp &&
      !current->meta().deletion_timestamp) {
    stamp = FormatRfc3339(plan.deletion);
    stored = WithDeletionMarks(bytes, stamp, plan.grace, &next_generation);
  }
  std::optional<std::pair<size_t, size_t>> span;
  if (!stored && !finalizers_changed) span = MetadataObject(bytes);
  if (span) {
    // The stored bytes are the registry's own encoding: parsed in place, from a copy that lives
    // until WithMetadata has encoded the changed metadata.
    std::string buffer(bytes.substr(span->first, span->second - span->first));
    Result<Document> meta = api::ParseTrustedJsonInPlace(buffer);
    if (meta && meta->IsObject()) {
      mark(*meta, meta->GetAllocator());
      stored = WithMetadata(bytes, *span, *meta);
    }
  }
  if (stored) {
    TypedObject typed = current->typed.WithMeta([&](api::ObjectMeta& m) {
      m.resource_version.clear();
      if (plan.kind == DeletePlan::kAsIs) return;
      if (!stamp.empty()) m.deletion_timestamp = stamp;
      m.deletion_grace_period_seconds = plan.grace;
      if (next_generation) ++m.generation;
    });
    if (!typed.empty()) {
      return WriteStored(info, std::move(current), ns, name, std::move(*stored), std::move(typed),
                         write, std::move(written));
    }
  }
  stamp.clear();
  next_generation = false;
  Result<Document> doc = ParseCurrent(*current);
  if (!doc) return written(ApiErr(NewInternalError(doc.error().message())));
  mark((*doc)["metadata"], doc->GetAllocator());
  Result<TypedObject> typed = DecodeTyped(info.resource, *doc);
  if (!typed) return written(ApiErr(NewInternalError(typed.error().message())));
  Write(info, std::move(current), std::move(*doc), std::move(*typed), write, std::move(written),
        Quantities::kAsStored);
}

void Registry::DeleteStored(const ResourceInfo& info, ObjectPtr current, DeleteOptions options,
                            int attempt, WriteCallback done) {
  if (options.dry_run) return done(current->json);
  const store::Revision revision = current->revision;
  const std::string key = current->key;
  store_->DeleteAsync(
      key, revision,
      [this, &info, options = std::move(options), attempt, current = std::move(current),
       done = std::move(done)](Result<store::WriteResult> r) mutable {
        const api::ObjectMeta& meta = current->meta();
        if (!r && r.error().code() == StatusCode::kConflict && attempt + 1 < kMaxConflictRetries) {
          return DeleteAttempt(info, meta.namespace_, meta.name, options, attempt + 1,
                               current->revision, std::move(done));
        }
        if (!r) return done(ApiErr(FromStoreError(info, meta.name, r.error())));
        NoteWrite(info.resource, r->revision);
        done(current->json);
      });
}

namespace {

// The namespace's spec.finalizers, or null when it has none.
Value* SpecFinalizers(Value& ns) {
  Value* spec = MemberOrNull(ns, "spec");
  Value* finalizers = spec != nullptr ? MemberOrNull(*spec, "finalizers") : nullptr;
  return NoStrings(finalizers) ? nullptr : finalizers;
}

// Every namespaced resource, and namespaces: what finalizing a namespace reads.
const std::vector<Resource>& NamespaceFinalizerResources() {
  static const std::vector<Resource> resources = [] {
    std::vector<Resource> out = {Resource::kNamespaces};
    for (const ResourceInfo& info : AllResources()) {
      if (info.namespaced) out.push_back(info.resource);
    }
    return out;
  }();
  return resources;
}

}  // namespace

void Registry::DeleteNamespace(const ResourceInfo& info, ObjectPtr current, DeleteOptions options,
                               int attempt, WriteCallback done) {
  const std::string name = current->meta().name;
  Result<Document> doc = ParseCurrent(*current);
  if (!doc) return done(ApiErr(NewInternalError(doc.error().message())));
  if (current->meta().deletion_timestamp) {
    // Already Terminating: answered as it is until the namespace controller has finalized it.
    if (SpecFinalizers(*doc) != nullptr || !current->meta().finalizers.empty()) {
      if (!options.dry_run) FinalizeNamespace(name);
      return done(current->json);
    }
    return DeleteStored(info, std::move(current), std::move(options), attempt, std::move(done));
  }
  // The first DELETE: the namespace becomes Terminating, and its contents go.
  Alloc& alloc = doc->GetAllocator();
  Value& meta = (*doc)["metadata"];
  SetString(meta, "deletionTimestamp", NowRfc3339(), alloc);
  RemoveMember(meta, "resourceVersion");
  SetString(EnsureObject(*doc, "status", alloc), "phase", "Terminating", alloc);
  Result<TypedObject> typed = DecodeTyped(info.resource, *doc);
  if (!typed) return done(ApiErr(NewInternalError(typed.error().message())));
  WriteOptions write;
  write.dry_run = options.dry_run;
  const store::Revision read = current->revision;
  Write(info, std::move(current), std::move(*doc), std::move(*typed), write,
        [this, &info, name, options, attempt, read,
         done = std::move(done)](ApiResult<store::Bytes> r) mutable {
          if (!r && IsConflict(r.error()) && attempt + 1 < kMaxConflictRetries) {
            return DeleteAttempt(info, "", name, options, attempt + 1, read, std::move(done));
          }
          if (r && !options.dry_run) FinalizeNamespace(name);
          done(std::move(r));
        });
}

std::shared_ptr<void> Registry::BackgroundToken() {
  std::lock_guard<std::mutex> lock(background_mu_);
  if (stopping_) return nullptr;
  ++background_;
  // Owns `this` only to be non-null; the deleter counts the token out.
  return std::shared_ptr<void>(this, [this](void*) {
    std::lock_guard<std::mutex> lock(background_mu_);
    if (--background_ == 0) background_cv_.notify_all();
  });
}

void Registry::FinalizeNamespace(const std::string& name) {
  std::shared_ptr<void> token = BackgroundToken();
  if (!token) return;
  {
    std::lock_guard<std::mutex> lock(background_mu_);
    if (!finalizing_.insert(name).second) return;  // already under way
  }
  FinalizeNamespaceStep(name, std::move(token));
}

void Registry::FinalizeNamespaceStep(const std::string& name, std::shared_ptr<void> token) {
  auto end = [this, name] {
    std::lock_guard<std::mutex> lock(background_mu_);
    finalizing_.erase(name);
  };
  auto stopping = [this] {
    std::lock_guard<std::mutex> lock(background_mu_);
    return stopping_;
  };
  if (stopping()) return end();
  // Reads as of every acknowledged write, so that nothing created before is missed.
  SyncAll(NamespaceFinalizerResources(), [this, name, token, end, stopping] {
    if (stopping()) return end();
    ObjectPtr ns = cache(Resource::kNamespaces).Get("", name);
    if (!ns || !ns->meta().deletion_timestamp) return end();
    auto again = [this, name, token] { FinalizeNamespaceStep(name, token); };
    std::vector<ObjectPtr> doomed;
    for (const ResourceInfo& info : AllResources()) {
      if (!info.namespaced) continue;
      ObjectFilter filter;
      filter.namespace_ = name;
      WatchCache::ListResult list = cache(info.resource).List(filter);
      doomed.insert(doomed.end(), list.items.begin(), list.items.end());
    }
    // A create admitted just before the namespace became Terminating may land after this list:
    // list again until nothing is left.
    if (!doomed.empty()) {
      return DeleteObjects(std::move(doomed), [again, end](bool ok) { ok ? again() : end(); });
    }
    // Once the cache shows a write that beat ours, try again.
    auto after_conflict = [this, again, revision = ns->revision] {
      cache(Resource::kNamespaces).AfterRevision(revision + 1, again);
    };
    Result<Document> doc = ParseCurrent(*ns);
    if (!doc) return end();
    if (Value* finalizers = SpecFinalizers(*doc)) {
      // Remove `kubernetes` (upstream: the namespace controller's /finalize); another
      // finalizer is someone else's to remove.
      const size_t before = finalizers->Size();
      for (auto it = finalizers->Begin(); it != finalizers->End();) {
        it = it->IsString() && std::string_view(it->GetString()) == "kubernetes"
                 ? finalizers->Erase(it)
                 : it + 1;
      }
      if (finalizers->Size() == before) return end();
      if (finalizers->Empty()) RemoveMember((*doc)["spec"], "finalizers");  // omitempty
      RemoveMember((*doc)["metadata"], "resourceVersion");
      Result<TypedObject> typed = DecodeTyped(Resource::kNamespaces, *doc);
      if (!typed) return end();
      return Write(Info(Resource::kNamespaces), ns, std::move(*doc), std::move(*typed), {},
                   [again, end, after_conflict](ApiResult<store::Bytes> r) {
                     if (r) return again();
                     IsConflict(r.error()) ? after_conflict() : end();
                   });
    }
    // Whoever set metadata.finalizers removes them; that update deletes the namespace.
    if (!ns->meta().finalizers.empty()) return end();
    store_->DeleteAsync(ns->key, ns->revision,
                        [this, end, after_conflict](Result<store::WriteResult> r) {
                          if (r) NoteWrite(Resource::kNamespaces, r->revision);
                          if (!r && r.error().code() == StatusCode::kConflict) {
                            return after_conflict();
                          }
                          end();
                        });
  });
}

void Registry::DeleteObjects(std::vector<ObjectPtr> doomed, std::function<void(bool)> then) {
  struct State {
    std::atomic<size_t> remaining;
    std::atomic<bool> ok{true};
    std::function<void(bool)> then;
  };
  auto state = std::make_shared<State>();
  state->remaining = doomed.size();
  state->then = std::move(then);
  for (const ObjectPtr& obj : doomed) {
    store_->DeleteAsync(obj->key, 0, [this, obj, state](Result<store::WriteResult> r) {
      if (r) {
        NoteWrite(obj->resource, r->revision);
      } else if (r.error().code() != StatusCode::kNotFound) {
        state->ok = false;
      }
      if (state->remaining.fetch_sub(1) == 1) state->then(state->ok);
    });
  }
}

ApiResult<void> Registry::AdmitPodSubresourceCreate(std::string_view subresource,
                                                    const std::string& namespace_,
                                                    const std::string& name, Document& body) {
  admission::Attributes attributes{.operation = admission::Operation::kCreate,
                                   .group = "",
                                   .resource = "pods",
                                   .subresource = subresource,
                                   .namespace_ = namespace_,
                                   .name = name,
                                   .object = &body};
  return Admit(attributes);
}

void Registry::Bind(std::string namespace_, std::string name, Document binding,
                    WriteOptions options, std::function<void(ApiResult<void>)> done) {
  auto shared = std::make_shared<Document>(std::move(binding));
  Sync(Resource::kNamespaces, [this, ns = std::move(namespace_), name = std::move(name), shared,
                               options, done = std::move(done)]() mutable {
    if (auto r = AdmitPodSubresourceCreate("binding", ns, name, *shared); !r) {
      return done(ApiErr(r.error()));
    }
    BindAttempt(std::move(ns), std::move(name), std::move(shared), options, false, std::move(done));
  });
}

void Registry::BindAttempt(std::string namespace_, std::string name,
                           std::shared_ptr<const Document> shared, WriteOptions options,
                           bool synced, std::function<void(ApiResult<void>)> done) {
  const ResourceInfo& info = Info(Resource::kPods);
  // Read from a cache that may lag: a refusal is final only once the cache has caught up.
  auto refuse = [&](ApiError error) {
    if (synced) return done(ApiErr(std::move(error)));
    BindOnceSynced(std::move(namespace_), std::move(name), shared, options, std::move(done));
  };
  const Document& b = *shared;
  std::string_view target;
  if (b.IsObject()) {
    auto t = b.FindMember("target");
    if (t != b.MemberEnd()) target = StringMember(t->value, "name");
  }
  if (target.empty()) {
    return done(ApiErr(InvalidError(info, name, {FieldError::Required("target.name")})));
  }
  ObjectPtr current = cache(Resource::kPods).Get(namespace_, name);
  if (!current) return refuse(NotFoundError(info, name));
  const api::Pod* pod = current->As<api::Pod>();
  ResourceInfo binding_info = info;
  binding_info.plural = "pods/binding";
  if (current->meta().deletion_timestamp) {
    return refuse(ConflictError(binding_info, name,
                                "pod " + name + " is being deleted, cannot be assigned to a host"));
  }
  // The binding names the pod's UID: a pod re-created under the same name is not bound.
  if (b.IsObject()) {
    auto bm = b.FindMember("metadata");
    std::string_view uid = bm != b.MemberEnd() ? StringMember(bm->value, "uid") : "";
    if (!uid.empty() && uid != current->meta().uid) {
      return refuse(ConflictError(binding_info, name,
                                  "Precondition failed: UID in precondition: " + std::string(uid) +
                                      ", UID in object meta: " + current->meta().uid));
    }
  }
  if (pod && !pod->spec.node_name.empty()) {
    return refuse(ConflictError(
        binding_info, name,
        "pod " + name + " is already assigned to node \"" + pod->spec.node_name + "\""));
  }
  api::Condition scheduled;
  scheduled.type = "PodScheduled";
  scheduled.status = "True";
  scheduled.last_transition_time = NowRfc3339();
  auto on_written = [this, ns = namespace_, name, shared, options, synced,
                     done = std::move(done)](ApiResult<store::Bytes> r) mutable {
    if (r) return done({});
    // Lost to a newer version than the cache showed: read again once it has it.
    if (synced || r.error().reason != "Conflict") return done(ApiErr(r.error()));
    BindOnceSynced(std::move(ns), std::move(name), shared, options, std::move(done));
  };
  // The typed view follows from the current one by the same two changes, without decoding.
  auto bound_view = [&] {
    api::Pod next = *pod;
    next.meta.resource_version.clear();
    next.spec.node_name.assign(target);
    api::SetPodCondition(next, scheduled);
    return TypedObject(std::move(next));
  };
  // Most pods take the binding into their bytes as they are: nodeName and the condition
  // spliced in, nothing parsed or encoded again.
  if (pod != nullptr) {
    std::string node_json;
    AppendJsonString(node_json, target);
    std::optional<std::string> spliced =
        WithBinding(*current->json, node_json, api::EncodePodCondition(scheduled));
    if (spliced) {
      return WriteStored(info, current, namespace_, name, std::move(*spliced), bound_view(),
                         options, std::move(on_written));
    }
  }
  // The write encodes the document before it returns.
  std::string buffer;
  Result<Document> doc = ParseCurrentInPlace(*current, buffer);
  if (!doc) return done(ApiErr(NewInternalError(doc.error().message())));
  (void)api::SetNodeName(*doc, target);
  (void)api::SetPodCondition(*doc, scheduled);
  RemoveMember((*doc)["metadata"], "resourceVersion");
  TypedObject typed;
  if (pod != nullptr) {
    typed = bound_view();
  } else if (Result<TypedObject> decoded = DecodeTyped(info.resource, *doc)) {
    typed = std::move(*decoded);
  }
  Write(info, current, std::move(*doc), std::move(typed), options, std::move(on_written),
        Quantities::kAsStored);
}

void Registry::BindOnceSynced(std::string namespace_, std::string name,
                              std::shared_ptr<const Document> binding, WriteOptions options,
                              std::function<void(ApiResult<void>)> done) {
  Sync(Resource::kPods, [this, ns = std::move(namespace_), name = std::move(name), binding, options,
                         done = std::move(done)]() mutable {
    BindAttempt(std::move(ns), std::move(name), binding, options, true, std::move(done));
  });
}

std::string Registry::PodConditionPatch(std::string_view uid, const api::Condition& condition) {
  std::string patch = R"({"metadata":{"uid":)";
  AppendJsonString(patch, uid);
  patch.append(R"(},"status":{"conditions":[)")
      .append(api::EncodePodCondition(condition))
      .append("]}}");
  return patch;
}

void Registry::AddPodCondition(std::string namespace_, std::string name, std::string uid,
                               api::Condition condition, WriteCallback done) {
  const ResourceInfo& info = Info(Resource::kPods);
  auto by_patch = [this, &info, ns = namespace_, name, uid, condition](WriteCallback done) {
    Patch(info, ns, name, Subresource::kStatus, api::PatchType::kStrategicMergePatch,
          PodConditionPatch(uid, condition), {}, std::move(done));
  };
  if (options_.admission && options_.admission->ReadsObject(info.group, info.plural, "status")) {
    return by_patch(std::move(done));
  }
  SyncAll(
      {Resource::kPods, Resource::kNamespaces},
      [this, &info, ns = std::move(namespace_), name = std::move(name), uid = std::move(uid),
       condition = std::move(condition), by_patch = std::move(by_patch),
       done = std::move(done)]() mutable {
        ObjectPtr current = cache(Resource::kPods).Get(ns, name);
        const api::Pod* pod = current ? current->As<api::Pod>() : nullptr;
        // A missing pod, another pod of that name, one being deleted (whose status write
        // may delete it): Patch answers each as upstream.
        if (pod == nullptr || pod->meta.uid != uid || pod->meta.deletion_timestamp) {
          return by_patch(std::move(done));
        }
        std::optional<std::string> spliced =
            WithPodCondition(*current->json, condition.type, api::EncodePodCondition(condition));
        if (!spliced) return by_patch(std::move(done));
        // The update's admission (NamespaceLifecycle: the namespace must exist). Validation
        // reads nothing this changes: the spec, metadata and tolerations are the stored
        // ones, and status conditions are not validated.
        admission::Attributes attributes{.operation = admission::Operation::kUpdate,
                                         .group = info.group,
                                         .resource = info.plural,
                                         .subresource = "status",
                                         .namespace_ = ns,
                                         .name = name};
        if (auto r = Admit(attributes); !r) return done(ApiErr(r.error()));
        if (auto r = ValidateAdmission(attributes); !r) return done(ApiErr(r.error()));
        api::Pod next = *pod;
        next.meta.resource_version.clear();
        api::SetPodCondition(next, condition);
        WriteStored(info, current, ns, name, std::move(*spliced), TypedObject(std::move(next)), {},
                    [by_patch = std::move(by_patch),
                     done = std::move(done)](ApiResult<store::Bytes> r) mutable {
                      // Lost to a newer version: the patch reads it and tries again.
                      if (!r && IsStaleWriteConflict(r.error())) {
                        return by_patch(std::move(done));
                      }
                      done(std::move(r));
                    });
      });
}

void Registry::Evict(std::string namespace_, std::string name, Document eviction,
                     WriteOptions options, std::function<void(ApiResult<void>)> done) {
  auto shared = std::make_shared<Document>(std::move(eviction));
  Sync(Resource::kNamespaces, [this, ns = std::move(namespace_), name = std::move(name), shared,
                               options, done = std::move(done)]() mutable {
    if (auto r = AdmitPodSubresourceCreate("eviction", ns, name, *shared); !r) {
      return done(ApiErr(r.error()));
    }
    EvictAdmitted(std::move(ns), std::move(name), std::move(*shared), options, std::move(done));
  });
}

void Registry::EvictAdmitted(std::string namespace_, std::string name, Document eviction,
                             WriteOptions options, std::function<void(ApiResult<void>)> done) {
  DeleteOptions del;
  del.dry_run = options.dry_run;
  if (eviction.IsObject()) {
    auto opts = eviction.FindMember("deleteOptions");
    if (opts != eviction.MemberEnd() && opts->value.IsObject()) {
      auto pre = opts->value.FindMember("preconditions");
      if (pre != opts->value.MemberEnd() && pre->value.IsObject()) {
        if (pre->value.HasMember("uid"))
          del.precondition_uid = std::string(StringMember(pre->value, "uid"));
        if (pre->value.HasMember("resourceVersion")) {
          del.precondition_resource_version =
              std::string(StringMember(pre->value, "resourceVersion"));
        }
      }
    }
  }
  Delete(Info(Resource::kPods), std::move(namespace_), std::move(name), std::move(del),
         [done = std::move(done)](ApiResult<store::Bytes> r) {
           if (!r) return done(ApiErr(r.error()));
           done({});
         });
}

}  // namespace kt::server
