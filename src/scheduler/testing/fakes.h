// Test helpers for the scheduler: pods and nodes from short JSON, and a Handle over a Cache for
// running plugins and frameworks without a server. For tests only.
//
//   ObjectPtr node = testing::Node(R"({"metadata":{"name":"n1"},"spec":{"taints":[...]}})");
//   ObjectPtr pod = testing::Pod(R"({"metadata":{"name":"p"},"spec":{"tolerations":[...]}})");
//   testing::FakeHandle handle;
//   handle.cache.AddNode(node);
//   auto fw = testing::NewFramework(&handle);          // the default profile
//   Status s = fw->RunFilterPlugins(*NewPodInfo(pod), *handle.cache.Get("n1"));
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/codec.h"
#include "client/clock.h"
#include "scheduler/cache.h"
#include "scheduler/framework/framework.h"
#include "scheduler/plugins/registry.h"
#include "server/object.h"
#include "server/resources.h"

namespace kt::scheduler::testing {

// A stored object of `resource` from JSON; kind, apiVersion, a namespace ("default") for pods
// and a uid (from the name) are filled in when missing. Aborts on bad JSON: tests only.
inline ObjectPtr Object(server::Resource resource, std::string_view json,
                        store::Revision revision = 1) {
  Result<rapidjson::Document> doc = api::ParseJson(json);
  if (!doc) std::abort();
  const server::ResourceInfo& info = server::Info(resource);
  auto& alloc = doc->GetAllocator();
  if (!doc->HasMember("kind")) {
    doc->AddMember("kind", rapidjson::Value(std::string(info.kind).c_str(), alloc), alloc);
  }
  if (!doc->HasMember("apiVersion")) {
    doc->AddMember("apiVersion", rapidjson::Value(std::string(info.api_version).c_str(), alloc),
                   alloc);
  }
  if (!doc->HasMember("metadata")) {
    doc->AddMember("metadata", rapidjson::Value(rapidjson::kObjectType), alloc);
  }
  rapidjson::Value& meta = (*doc)["metadata"];
  std::string name = meta.HasMember("name") ? meta["name"].GetString() : "";
  std::string ns;
  if (info.namespaced) {
    if (!meta.HasMember("namespace")) meta.AddMember("namespace", "default", alloc);
    ns = meta["namespace"].GetString();
  }
  if (!meta.HasMember("uid")) {
    meta.AddMember("uid", rapidjson::Value(("uid-" + ns + "-" + name).c_str(), alloc), alloc);
  }
  std::string stored = server::EncodeForStorage(*doc);
  Result<ObjectPtr> obj =
      server::MakeStoredObject(info, server::ObjectKey(info, ns, name),
                               store::MakeBytes(std::move(stored)), revision, revision);
  if (!obj) std::abort();
  return *obj;
}

inline ObjectPtr Pod(std::string_view json, store::Revision revision = 1) {
  return Object(server::Resource::kPods, json, revision);
}
inline ObjectPtr Node(std::string_view json, store::Revision revision = 1) {
  return Object(server::Resource::kNodes, json, revision);
}

// A Ready node with allocatable cpu, memory and pods (and more JSON spliced into "spec" and the
// metadata's labels if given).
inline ObjectPtr ReadyNode(std::string_view name, std::string_view cpu = "4",
                           std::string_view memory = "16Gi", std::string_view pods = "110",
                           std::string_view spec = "{}", std::string_view labels = "{}") {
  std::string json = R"({"metadata":{"name":")" + std::string(name) + R"(","labels":)" +
                     std::string(labels) + R"(},"spec":)" + std::string(spec) +
                     R"(,"status":{"allocatable":{"cpu":")" + std::string(cpu) + R"(","memory":")" +
                     std::string(memory) + R"(","pods":")" + std::string(pods) + R"("}}})";
  return Node(json);
}

// A Handle over its own Cache, a simulated clock and no client: plugins evaluate, never write.
class FakeHandle : public Handle, public Nominator {
 public:
  Cache cache;
  client::SimulatedClock clock;
  FeatureGates gates;
  uint64_t cycle = 1;
  Framework* framework = nullptr;
  std::vector<std::pair<std::string, PodInfoPtr>> nominated;  // node → pod
  std::vector<ObjectPtr> pods;                                // what GetPod finds

  const NodeLister& Nodes() const override { return cache; }
  const Nominator& Nominated() const override { return *this; }
  client::Client* ClientOrNull() override { return nullptr; }
  client::EventRecorder* RecorderOrNull() override { return nullptr; }
  client::Clock& Clock() override { return clock; }
  const FeatureGates& Gates() const override { return gates; }
  ObjectPtr GetPod(std::string_view ns, std::string_view name) const override {
    for (const ObjectPtr& p : pods) {
      if (p->meta().namespace_ == ns && p->meta().name == name) return p;
    }
    return nullptr;
  }
  uint64_t SchedulingCycle() const override { return cycle; }
  Framework& Fw() override { return *framework; }
  void Post(std::function<void()> fn) override { fn(); }
  void Activate(const std::string&) override {}

  std::span<const PodInfoPtr> NominatedPodsForNode(std::string_view node) const override {
    by_node_.clear();
    for (const auto& [n, p] : nominated) {
      if (n == node) by_node_.push_back(p);
    }
    return by_node_;
  }
  bool Empty() const override { return nominated.empty(); }

 private:
  mutable std::vector<PodInfoPtr> by_node_;
};

// A framework for `profile` (the default profile when omitted) over `handle`.
inline std::unique_ptr<Framework> NewFramework(FakeHandle* handle,
                                               const Profile& profile = Profile()) {
  Result<std::unique_ptr<Framework>> fw = Framework::New(profile, InTreeRegistry(), handle);
  if (!fw) std::abort();
  handle->framework = fw->get();
  return std::move(*fw);
}

// One plugin alone, by name, from the in-tree registry.
inline std::unique_ptr<Plugin> NewPlugin(std::string_view name, FakeHandle* handle,
                                         const PluginArgs& args = {}) {
  static const PluginRegistry registry = InTreeRegistry();
  const PluginFactory* f = registry.Find(std::string(name));
  if (f == nullptr) std::abort();
  Result<std::unique_ptr<Plugin>> p = (*f)(args, handle);
  if (!p) std::abort();
  return std::move(*p);
}

}  // namespace kt::scheduler::testing
