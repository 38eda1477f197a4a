#include "client/client.h"

#include <future>

#include <rapidjson/writer.h>

#include "api/codec.h"
#include "api/string_output.h"

namespace kt::client {

namespace {

using server::Info;

// BindingJson's object, built as a document (no JSON text in process).
rapidjson::Document BindingDocument(std::string_view namespace_, std::string_view name,
                                    std::string_view uid, std::string_view node) {
  rapidjson::Document doc;
  auto& alloc = doc.GetAllocator();
  auto str = [&](std::string_view s) {
    return rapidjson::Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), alloc);
  };
  rapidjson::Value meta(rapidjson::kObjectType);
  meta.AddMember("name", str(name), alloc);
  meta.AddMember("namespace", str(namespace_), alloc);
  if (!uid.empty()) meta.AddMember("uid", str(uid), alloc);
  rapidjson::Value target(rapidjson::kObjectType);
  target.AddMember("kind", "Node", alloc);
  target.AddMember("name", str(node), alloc);
  doc.SetObject();
  doc.AddMember("kind", "Binding", alloc);
  doc.AddMember("apiVersion", "v1", alloc);
  doc.AddMember("metadata", meta, alloc);
  doc.AddMember("target", target, alloc);
  return doc;
}

class InProcessClient : public Client {
 public:
  explicit InProcessClient(server::Registry* registry) : registry_(registry) {}

  void Create(Resource resource, std::string namespace_, std::string body,
              WriteDone done) override {
    Result<rapidjson::Document> doc = api::ParseJson(body);
    if (!doc) return done(server::ApiErr(doc.error()));
    registry_->Create(Info(resource), std::move(namespace_), std::move(*doc), {}, std::move(done));
  }

  void Create(Resource resource, std::string namespace_, rapidjson::Document body,
              WriteDone done) override {
    registry_->Create(Info(resource), std::move(namespace_), std::move(body), {}, std::move(done));
  }

  void CreateEvent(api::Event event, WriteDone done) override {
    std::string namespace_ = event.meta.namespace_;
    registry_->CreateEvent(std::move(namespace_), std::move(event), {}, std::move(done));
  }

  void Update(Resource resource, std::string namespace_, std::string name, Subresource sub,
              std::string body, WriteDone done) override {
    Result<rapidjson::Document> doc = api::ParseJson(body);
    if (!doc) return done(server::ApiErr(doc.error()));
    registry_->Update(Info(resource), std::move(namespace_), std::move(name), sub, std::move(*doc),
                      {}, std::move(done));
  }

  void Patch(Resource resource, std::string namespace_, std::string name, Subresource sub,
             api::PatchType type, std::string patch, WriteDone done) override {
    registry_->Patch(Info(resource), std::move(namespace_), std::move(name), sub, type,
                     std::move(patch), {}, std::move(done));
  }

  void AddPodCondition(std::string namespace_, std::string name, std::string uid,
                       api::Condition condition, WriteDone done) override {
    registry_->AddPodCondition(std::move(namespace_), std::move(name), std::move(uid),
                               std::move(condition), std::move(done));
  }

  void Delete(Resource resource, std::string namespace_, std::string name,
              server::DeleteOptions options, WriteDone done) override {
    registry_->Delete(Info(resource), std::move(namespace_), std::move(name), std::move(options),
                      std::move(done));
  }

  void Get(Resource resource, std::string namespace_, std::string name, GetDone done) override {
    registry_->Sync(resource, [this, resource, ns = std::move(namespace_), name = std::move(name),
                               done = std::move(done)] {
      server::ObjectPtr o = registry_->cache(resource).Get(ns, name);
      if (!o) return done(server::ApiErr(server::NotFoundError(Info(resource), name)));
      done(std::move(o));
    });
  }

  void Bind(std::string namespace_, std::string name, std::string uid, std::string node,
            Done done) override {
    rapidjson::Document doc = BindingDocument(namespace_, name, uid, node);
    registry_->Bind(std::move(namespace_), std::move(name), std::move(doc), {}, std::move(done));
  }

 private:
  server::Registry* registry_;
};

template <class Call>
ApiResult<store::Bytes> Wait(Call call) {
  std::promise<ApiResult<store::Bytes>> promise;
  std::future<ApiResult<store::Bytes>> future = promise.get_future();
  call([&promise](ApiResult<store::Bytes> r) { promise.set_value(std::move(r)); });
  return future.get();
}

}  // namespace

void Client::Create(Resource resource, std::string namespace_, rapidjson::Document body,
                    WriteDone done) {
  Create(resource, std::move(namespace_), api::EncodeJson(body), std::move(done));
}

void Client::CreateEvent(api::Event event, WriteDone done) {
  std::string namespace_ = event.meta.namespace_;
  Create(Resource::kEvents, std::move(namespace_), api::EventToDocument(event), std::move(done));
}

void Client::AddPodCondition(std::string namespace_, std::string name, std::string uid,
                             api::Condition condition, WriteDone done) {
  Patch(Resource::kPods, std::move(namespace_), std::move(name), Subresource::kStatus,
        api::PatchType::kStrategicMergePatch, server::Registry::PodConditionPatch(uid, condition),
        std::move(done));
}

ApiResult<store::Bytes> Client::CreateSync(Resource resource, std::string namespace_,
                                           std::string body) {
  return Wait([&](WriteDone done) {
    Create(resource, std::move(namespace_), std::move(body), std::move(done));
  });
}

ApiResult<store::Bytes> Client::PatchSync(Resource resource, std::string namespace_,
                                          std::string name, Subresource sub, api::PatchType type,
                                          std::string patch) {
  return Wait([&](WriteDone done) {
    Patch(resource, std::move(namespace_), std::move(name), sub, type, std::move(patch),
          std::move(done));
  });
}

ApiResult<store::Bytes> Client::DeleteSync(Resource resource, std::string namespace_,
                                           std::string name, server::DeleteOptions options) {
  return Wait([&](WriteDone done) {
    Delete(resource, std::move(namespace_), std::move(name), std::move(options), std::move(done));
  });
}

ApiResult<store::Bytes> Client::UpdateSync(Resource resource, std::string namespace_,
                                           std::string name, Subresource sub, std::string body) {
  return Wait([&](WriteDone done) {
    Update(resource, std::move(namespace_), std::move(name), sub, std::move(body), std::move(done));
  });
}

ApiResult<server::ObjectPtr> Client::GetSync(Resource resource, std::string namespace_,
                                             std::string name) {
  std::promise<ApiResult<server::ObjectPtr>> p;
  Get(resource, std::move(namespace_), std::move(name),
      [&p](ApiResult<server::ObjectPtr> r) { p.set_value(std::move(r)); });
  return p.get_future().get();
}

std::unique_ptr<Client> NewInProcessClient(server::Registry* registry) {
  return std::make_unique<InProcessClient>(registry);
}

std::string BindingJson(std::string_view namespace_, std::string_view name, std::string_view uid,
                        std::string_view node) {
  std::string out;
  api::StringOutput os(&out);
  rapidjson::Writer<api::StringOutput> w(os);
  w.StartObject();
  w.Key("kind");
  w.String("Binding");
  w.Key("apiVersion");
  w.String("v1");
  w.Key("metadata");
  w.StartObject();
  w.Key("name");
  w.String(name.data(), static_cast<rapidjson::SizeType>(name.size()));
  w.Key("namespace");
  w.String(namespace_.data(), static_cast<rapidjson::SizeType>(namespace_.size()));
  if (!uid.empty()) {
    w.Key("uid");
    w.String(uid.data(), static_cast<rapidjson::SizeType>(uid.size()));
  }
  w.EndObject();
  w.Key("target");
  w.StartObject();
  w.Key("kind");
  w.String("Node");
  w.Key("name");
  w.String(node.data(), static_cast<rapidjson::SizeType>(node.size()));
  w.EndObject();
  w.EndObject();
  return out;
}

}  // namespace kt::client
