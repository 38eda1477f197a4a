// The registry: every write to the API goes through here — decoding, defaulting, admission
// (admission/chain.h: the mutating plugins before validation, the validating ones after),
// validation with upstream messages, the per-resource strategy (what a create sets, what an
// update may change, status vs spec), and the revisioned store write. Reads come from the watch
// caches.
//
// Namespaces are deleted as upstream: a DELETE marks the namespace Terminating
// (metadata.deletionTimestamp, status.phase) and answers with it; the registry then deletes its
// contents (upstream's namespace controller), removes the `kubernetes` spec finalizer and
// deletes the namespace once metadata.finalizers is empty too. An update that empties the
// finalizers of an object being deleted deletes it (upstream ShouldDeleteDuringUpdate).
//
// Writes are asynchronous: the callback runs once the write is durable (on the store's
// committer thread) or failed (possibly on the calling thread). It must not block.
// Read-your-writes: Sync(resource, fn) runs fn once that resource's cache holds every write
// acknowledged so far.
//
// Controllers, the scheduler and simulated kubelets use the same entry points as HTTP clients
// (DESIGN.md), so behaviour is identical whoever writes.
//
// Thread safety: all methods are thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "admission/chain.h"
#include "api/patch.h"
#include "api/schema.h"
#include "core/feature_gates.h"
#include "server/api_error.h"
#include "server/resources.h"
#include "server/watch_cache.h"
#include "store/store.h"

namespace kt::server {

class Predecoder;

enum class Subresource : unsigned char { kNone, kStatus };

struct WriteOptions {
  bool dry_run = false;  // dryRun=All: validate and answer, persist nothing
  // fieldValidation of a patch (create and update bodies are checked by their caller): the
  // patched object's unknown and duplicate fields are dropped; Strict refuses them (422, as
  // upstream's patch handler), Warn adds one warning each to `warnings`. Absent: a trusted
  // in-process writer, nothing checked.
  std::optional<api::FieldValidation> field_validation;
  std::shared_ptr<std::vector<std::string>> warnings;
  // The manager `metadata.managedFields` records this write under (upstream's fieldManager, or
  // the User-Agent's prefix): create, update and patch add its Update entry. Empty: an
  // untracked in-process writer (scheduler, controllers, kubelets), for whom no field set is
  // computed: the stored object's managedFields are carried over as they are.
  std::string field_manager;
  // Server-side apply (api::PatchType::kApplyPatch, which needs a field_manager): take the
  // fields other managers own instead of answering 409 with the conflicts.
  bool force = false;
  // Set to true by a server-side apply that created the object (answered 201, not 200).
  std::shared_ptr<bool> created;
};

// DeleteOptions.propagationPolicy: what becomes of the object's dependents (objects whose
// ownerReferences name it). Background (the default here, as upstream for every kind served):
// the object goes now and the garbage collector deletes them. Orphan: the object keeps the
// `orphan` finalizer until the garbage collector has removed its references from them.
// Foreground: it keeps `foregroundDeletion` until the garbage collector has deleted them.
enum class Propagation : unsigned char { kDefault, kBackground, kOrphan, kForeground };

inline constexpr std::string_view kFinalizerOrphan = "orphan";
inline constexpr std::string_view kFinalizerForeground = "foregroundDeletion";

struct DeleteOptions {
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  std::optional<int64_t> grace_period_seconds;
  Propagation propagation = Propagation::kDefault;
  bool dry_run = false;
};

// Served JSON bytes of the object a write produced (or deleted).
using WriteCallback = std::function<void(ApiResult<store::Bytes>)>;

class Registry {
 public:
  struct Options {
    FeatureGates gates;
    // Wall clock for creationTimestamp and friends.
    std::function<std::chrono::system_clock::time_point()> now = [] {
      return std::chrono::system_clock::now();
    };
    // The admission plugins every write goes through, whoever writes (HTTP clients, the
    // scheduler, controllers), dry runs included: kube-apiserver's default plugins unless the
    // caller made a chain from --enable/--disable-admission-plugins. Null: no admission.
    std::shared_ptr<const admission::Chain> admission = admission::DefaultChain();
    // Whether a create by a field manager starts tracking managedFields (upstream's
    // ProbabilisticSkipNonAppliedManager with probability 1, kube-apiserver's default) or leaves
    // the object untracked until its first server-side apply (probability 0). Either way an
    // update of an untracked object stays untracked, and a tracked object records every
    // manager. Tracking costs a write tens of microseconds and roughly doubles a stored pod.
    bool track_managed_fields_on_create = false;
  };

  Registry(store::Store* store, Options options);
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Loads the caches (taking what `predecoded` decoded during the store's load), creates the
  // default namespaces (default, kube-system, kube-public, kube-node-lease) if missing, and goes
  // on deleting the namespaces that were Terminating.
  Status Start(const Predecoder* predecoded = nullptr);
  // Ends every watch and the registry's own background work (namespace deletion, which resumes
  // at the next Start); afterwards writes fail with kUnavailable.
  void Stop();

  WatchCache& cache(Resource r) { return *caches_[static_cast<size_t>(r)]; }
  store::Store* store() { return store_; }
  const Options& options() const { return options_; }

  // Runs `fn` once the resource's cache holds every write to that resource acknowledged before
  // this call (read-your-writes). Writes to other resources are not waited for.
  void Sync(Resource r, std::function<void()> fn);
  // Sync for each resource in turn, then `fn`.
  void SyncAll(std::initializer_list<Resource> resources, std::function<void()> fn);
  void SyncAll(std::span<const Resource> resources, std::function<void()> fn);

  void Create(const ResourceInfo& info, std::string namespace_, rapidjson::Document body,
              WriteOptions options, WriteCallback done);
  // Create of an Event already in typed form (an in-process event recorder's): the same checks,
  // defaults, admission and validation as Create, but the stored bytes are encoded from the
  // typed object, which the watch cache then takes as it is. Where an admission plugin reads
  // events' objects, or managedFields are to be recorded, it goes through Create.
  void CreateEvent(std::string namespace_, api::Event event, WriteOptions options,
                   WriteCallback done);
  // PUT. The body's name must match `name`.
  void Update(const ResourceInfo& info, std::string namespace_, std::string name, Subresource sub,
              rapidjson::Document body, WriteOptions options, WriteCallback done);
  // kApplyPatch is server-side apply: `patch` is the apply configuration as JSON, merged into
  // the object (which it creates when missing) by options.field_manager.
  void Patch(const ResourceInfo& info, std::string namespace_, std::string name, Subresource sub,
             api::PatchType type, std::string patch, WriteOptions options, WriteCallback done);
  // Answers with the object's last state.
  void Delete(const ResourceInfo& info, std::string namespace_, std::string name,
              DeleteOptions options, WriteCallback done);
  // pods/binding: sets spec.nodeName once (409 if already bound). Reads the cache as it is and
  // writes conditionally on what it read; only when that finds no pod or loses to a newer
  // version does it wait for the cache to catch up and try again (upstream GuaranteedUpdate).
  void Bind(std::string namespace_, std::string name, rapidjson::Document binding,
            WriteOptions options, std::function<void(ApiResult<void>)> done);
  // pods/status: adds `condition` to the pod whose UID is `uid`, as the strategic merge patch
  // {"metadata":{"uid":<uid>},"status":{"conditions":[<condition>]}} does. A pod without a
  // condition of that type takes it into its stored bytes as they are (nothing parsed or encoded
  // again); any other case goes through Patch, and so does a write that loses to a newer version.
  void AddPodCondition(std::string namespace_, std::string name, std::string uid,
                       api::Condition condition, WriteCallback done);
  // The strategic merge patch AddPodCondition stands for.
  static std::string PodConditionPatch(std::string_view uid, const api::Condition& condition);
  // pods/eviction (policy/v1 Eviction): deletes the pod.
  void Evict(std::string namespace_, std::string name, rapidjson::Document eviction,
             WriteOptions options, std::function<void(ApiResult<void>)> done);

 private:
  struct Prepared;
  // Stores `next`; `typed` (optional) is its decoded view, which the watch cache then takes
  // instead of decoding the stored bytes again.
  void BindAttempt(std::string namespace_, std::string name,
                   std::shared_ptr<const rapidjson::Document> binding, WriteOptions options,
                   bool synced, std::function<void(ApiResult<void>)> done);
  // BindAttempt again once the pods cache has every write acknowledged so far.
  void BindOnceSynced(std::string namespace_, std::string name,
                      std::shared_ptr<const rapidjson::Document> binding, WriteOptions options,
                      std::function<void(ApiResult<void>)> done);
  // Whether a write's quantities (a pod's spec resources, a node's capacity and allocatable)
  // may differ from the stored object's, or are its own, already canonical, and need no second
  // look (a status update of a pod, a binding, a deletion mark).
  enum class Quantities : unsigned char { kMayChange, kAsStored };
  void Write(const ResourceInfo& info, ObjectPtr current, rapidjson::Document next,
             TypedObject typed, WriteOptions options, WriteCallback done,
             Quantities quantities = Quantities::kMayChange);
  // Write's second half: stores `stored` (the storage format, EncodeForStorage's) as
  // namespace_/name, with `typed` its view.
  void WriteStored(const ResourceInfo& info, ObjectPtr current, const std::string& namespace_,
                   const std::string& name, std::string stored, TypedObject typed,
                   const WriteOptions& options, WriteCallback done);
  // `old` is `current` parsed.
  // Where a write's metadata.managedFields come from: the writer (its Update entry when
  // options.field_manager is set, else the stored object's carried over), or a server-side
  // apply that has already set them.
  enum class ManagedFieldsFrom : unsigned char { kWriter, kApply };
  void CreateEventSynced(const std::string& namespace_, api::Event& event,
                         const WriteOptions& options, WriteCallback done);
  void CreateSynced(const ResourceInfo& info, const std::string& namespace_,
                    rapidjson::Document& doc, const WriteOptions& options,
                    ManagedFieldsFrom managed_fields, WriteCallback done);
  // What an update's body is: the writer's whole object, or the current object under a patch
  // that named no top-level member but metadata and status (all else is the current object's).
  enum class Body : unsigned char { kWhole, kPatchedMetadataAndStatus };
  void UpdateFrom(const ResourceInfo& info, ObjectPtr current, const rapidjson::Document& old,
                  Subresource sub, rapidjson::Document body, WriteOptions options,
                  WriteCallback done, ManagedFieldsFrom managed_fields = ManagedFieldsFrom::kWriter,
                  Body body_kind = Body::kWhole);
  // PatchAttempt's server-side apply: merges the apply configuration into `live` (`current`
  // parsed; null: the object is created) and hands the result to UpdateFrom or CreateSynced,
  // whose outcome goes to `written` (which may start over on a conflict); the apply's own
  // refusals (409 field conflicts included) go to `done`.
  void ApplyAttempt(const ResourceInfo& info, const std::string& namespace_,
                    const std::string& name, Subresource sub, ObjectPtr current,
                    const rapidjson::Document* live, const std::string& applied,
                    const WriteOptions& options, WriteCallback done, WriteCallback written);
  void PatchAttempt(const ResourceInfo& info, std::string namespace_, std::string name,
                    Subresource sub, api::PatchType type, std::shared_ptr<const std::string> patch,
                    WriteOptions options, int attempt, store::Revision stale, WriteCallback done);
  void DeleteAttempt(const ResourceInfo& info, std::string namespace_, std::string name,
                     DeleteOptions options, int attempt, store::Revision stale, WriteCallback done);
  // DELETE of a namespace (upstream namespace REST Delete): marks it Terminating the first
  // time, deletes it once its finalizers are gone.
  void DeleteNamespace(const ResourceInfo& info, ObjectPtr current, DeleteOptions options,
                       int attempt, WriteCallback done);
  // Upstream's namespace controller for one Terminating namespace: deletes its contents until
  // none is left, removes the `kubernetes` spec finalizer, then deletes the namespace if no
  // finalizer is left. At most one runs per namespace; it ends when the namespace is gone, is
  // waiting for metadata.finalizers, or the registry stops.
  void FinalizeNamespace(const std::string& name);
  void FinalizeNamespaceStep(const std::string& name, std::shared_ptr<void> token);
  // Deletes `doomed` from the store, then runs `then` with whether every delete succeeded (or
  // found the object gone already).
  void DeleteObjects(std::vector<ObjectPtr> doomed, std::function<void(bool)> then);
  // DELETE of anything but a namespace, as upstream's generic store: a pod bound to a node
  // gets deletionTimestamp and deletionGracePeriodSeconds and stays until its kubelet deletes it
  // with grace period 0; objects with finalizers are marked deleting and stay until the last
  // finalizer goes; everything else is deleted at once.
  void DeleteGracefully(const ResourceInfo& info, ObjectPtr current, DeleteOptions options,
                        int attempt, WriteCallback done);
  // Deletes `current` from the store (nothing for a dry run); a conflict starts DeleteAttempt
  // over.
  void DeleteStored(const ResourceInfo& info, ObjectPtr current, DeleteOptions options, int attempt,
                    WriteCallback done);
  // A token that holds Stop() back while any copy of it lives; null once stopping. Background
  // work carries one in each of its callbacks.
  std::shared_ptr<void> BackgroundToken();
  // Runs `job` once every job queued before it for `key` has released; `job` must call the
  // release function it is given exactly once, when its write has completed. Patches of one
  // object go through here so that they never conflict with each other.
  void Serialized(const std::string& key, std::function<void(std::function<void()>)> job);
  void ReleaseKey(const std::string& key);

  // Records an acknowledged write to `r` (before it is acknowledged), for Sync.
  void NoteWrite(Resource r, store::Revision revision);

  // Admission of a create of pods/binding or pods/eviction (the namespace must exist and not be
  // Terminating).
  ApiResult<void> AdmitPodSubresourceCreate(std::string_view subresource,
                                            const std::string& namespace_, const std::string& name,
                                            rapidjson::Document& body);
  void EvictAdmitted(std::string namespace_, std::string name, rapidjson::Document eviction,
                     WriteOptions options, std::function<void(ApiResult<void>)> done);
  // The admission chain's phases for one request; refusals come back as API errors.
  ApiResult<void> Admit(admission::Attributes& a);
  ApiResult<void> ValidateAdmission(const admission::Attributes& a);
  std::string NowRfc3339() const;
  // What admission plugins read: the namespaces and PriorityClasses in the caches.
  admission::Listers MakeListers();

  store::Store* store_;
  Options options_;
  std::array<std::unique_ptr<WatchCache>, kResourceCount> caches_;
  admission::Listers listers_;
  // Per resource, the revision of the last acknowledged write: what Sync waits for.
  std::array<std::atomic<store::Revision>, kResourceCount> last_write_{};

  std::mutex keys_mu_;
  // Per object key: the queued jobs; the front one is running. Guarded by keys_mu_.
  std::map<std::string, std::deque<std::function<void(std::function<void()>)>>, std::less<>>
      key_queues_;

  std::mutex background_mu_;
  std::condition_variable background_cv_;
  int background_ = 0;                // live background tokens; guarded by background_mu_
  bool stopping_ = false;             // guarded by background_mu_
  std::set<std::string> finalizing_;  // namespaces being finalized; guarded by background_mu_
};

}  // namespace kt::server
