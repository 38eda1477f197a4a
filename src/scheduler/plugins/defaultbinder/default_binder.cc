#include "scheduler/plugins/defaultbinder/default_binder.h"

#include "client/client.h"

namespace kt::scheduler {

namespace {

class DefaultBinder : public BindPlugin {
 public:
  explicit DefaultBinder(Handle* handle) : handle_(handle) {}
  std::string_view Name() const override { return kDefaultBinderName; }

  void Bind(const PodInfoPtr& pod, const std::string& node,
            std::function<void(Status)> done) override {
    client::Client* client = handle_->ClientOrNull();
    if (client == nullptr) return done(Status::Error("no client to bind with"));
    client->Bind(pod->namespace_(), pod->name(), pod->uid(), node,
                 [done = std::move(done)](client::ApiResult<void> r) {
                   if (!r) return done(Status::Error(r.error().message));
                   done(Status());
                 });
  }

 private:
  Handle* handle_;
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewDefaultBinder(const PluginArgs&, Handle* handle) {
  return std::unique_ptr<Plugin>(new DefaultBinder(handle));
}

}  // namespace kt::scheduler
