// Cache: the scheduler's picture of the cluster (upstream pkg/scheduler/backend/cache): every
// node with the pods bound or assumed to it.
//
// A pod is *assumed* on a node as soon as the scheduler picks that node, before the binding is
// written, so that the next pod already sees its resources taken; the binding then finishes
// asynchronously. When the pod arrives bound from the API the assumption is confirmed; if the
// binding fails it is forgotten. Assumed pods never expire (upstream's TTL is 0).
//
// Nodes are listed in upstream's NodeTree order: zones (topology.kubernetes.io/region and zone)
// in the order first seen, and the nodes of all zones interleaved round-robin, so that a
// scheduling pass that stops early (percentageOfNodesToScore) still spreads over zones.
//
// Nodes whose taints are equal (key, value, effect; timeAdded aside) share a taint-set id
// (NodeInfo::taint_set) so plugins can decide once per distinct taint list; nodes whose labels
// differ only in kubernetes.io/hostname share a label-set id (NodeInfo::label_set) for the same
// use. A node holds its two ids while it is listed: an id goes with the last node that has its
// list, and its slot is reused under a new id (SetIds).
//
// Thread safety: none; owned and used by one thread (the scheduler's, or a check run's).
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "scheduler/framework/interface.h"
#include "scheduler/framework/types.h"
#include "scheduler/set_ids.h"

namespace kt::scheduler {

class Cache : public NodeLister {
 public:
  Cache() = default;
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  // --- Nodes -----------------------------------------------------------------------------------
  void AddNode(const ObjectPtr& node);  // adds or updates
  void UpdateNode(const ObjectPtr& node) { AddNode(node); }
  // The node goes from the list; its pods stay accounted to it until they are removed.
  void RemoveNode(const std::string& name);
  size_t NumNodes() const { return zone_of_.size(); }

  // NodeLister: the listed nodes, in NodeTree order.
  std::span<NodeInfo* const> List() const override;
  NodeInfo* Get(std::string_view name) const override;

  // --- Pods --------------------------------------------------------------------------------------
  // Places `pod` on `node` (one of this cache's, as List or Get gave it) before its binding is
  // written; an error if the pod is known already.
  Status AssumePod(const PodInfoPtr& pod, const NodeInfo* node);
  // A pod is named by its UID, as text or as its key (PodInfo::uid_key).
  void FinishBinding(const api::UidKey& uid);
  // Undoes AssumePod (the binding failed). False if the pod was not assumed.
  bool ForgetPod(const api::UidKey& uid);
  bool ForgetPod(const std::string& uid) { return ForgetPod(api::UidKeyOf(uid)); }
  bool IsAssumedPod(const api::UidKey& uid) const;
  bool IsAssumedPod(const std::string& uid) const { return IsAssumedPod(api::UidKeyOf(uid)); }

  // A pod bound to a node, as the API reports it: confirms an assumed pod, or adds it.
  void AddPod(const PodInfoPtr& pod);
  void UpdatePod(const PodInfoPtr& old_pod, const PodInfoPtr& new_pod);
  void RemovePod(const std::string& uid);
  // The node a known pod is on ("" when unknown).
  std::string NodeOfPod(const std::string& uid) const;
  size_t NumPods() const { return pods_.size(); }

  // Distinct taint lists and label lists held by the nodes now.
  size_t NumTaintSets() const { return taint_sets_.size(); }
  size_t NumLabelSets() const { return label_sets_.size(); }

 private:
  struct PodState {
    PodInfoPtr pod;
    NodeInfo* node = nullptr;
    bool assumed = false;
    bool binding_finished = false;
  };

  NodeInfo& NodeForPods(const std::string& name);
  // Takes the node out of the NodeTree list.
  void Unlist(const std::string& name);
  // Drops a deleted node's NodeInfo once no pod is accounted to it.
  void DropIfGhost(NodeInfo* info);
  void ClassifyTaints(NodeInfo& info);
  void ClassifyLabels(NodeInfo& info);
  // The node gives up its taint-set and label-set ids (it is deleted, or becomes a ghost).
  void ReleaseSets(NodeInfo& info);
  void RebuildList() const;
  static std::string ZoneKey(const api::Node& node);

  // NodeInfos come from slabs, so that a scan over the listed nodes reads neighbouring memory.
  NodeInfo* NewNodeInfo();
  void FreeNodeInfo(NodeInfo* info);

  // One slab spans a 2 MiB huge page where the kernel grants one, so that the NodeInfos of
  // thousands of nodes sit behind one TLB entry.
  static constexpr size_t kSlabBytes = size_t{2} << 20;
  static constexpr size_t kSlabSize = kSlabBytes / sizeof(NodeInfo);
  struct SlabDeleter {
    void operator()(NodeInfo* slab) const;
  };
  std::vector<std::unique_ptr<NodeInfo, SlabDeleter>> slabs_;
  std::vector<NodeInfo*> free_;

  // Every node known, including ones deleted while pods remain accounted to them.
  std::unordered_map<std::string, NodeInfo*> nodes_;
  // NodeTree: zone → listed node names in insertion order (removal swaps with the last), and the
  // zones in the order first seen.
  std::map<std::string, std::vector<std::string>> zones_;
  std::vector<std::string> zone_order_;
  std::unordered_map<std::string, std::string> zone_of_;  // listed node → zone key
  mutable std::vector<NodeInfo*> list_;
  mutable bool list_dirty_ = false;

  std::unordered_map<api::UidKey, PodState, api::UidKeyHash> pods_;

  // Distinct taint lists (key, value, effect), and label lists (key, value) with
  // kubernetes.io/hostname left out, held by the listed nodes.
  SetIds taint_sets_;
  SetIds label_sets_;
};

}  // namespace kt::scheduler
