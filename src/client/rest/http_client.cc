#include "client/rest/http_client.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "api/codec.h"
#include "core/thread_name.h"
#include "server/object.h"

namespace kt::client {

namespace {

using server::ApiErr;
using server::ApiError;

std::string UrlEscape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

std::string_view PatchContentType(api::PatchType type) {
  switch (type) {
    case api::PatchType::kStrategicMergePatch:
      return "application/strategic-merge-patch+json";
    case api::PatchType::kMergePatch:
      return "application/merge-patch+json";
    case api::PatchType::kJsonPatch:
      return "application/json-patch+json";
    default:
      return "application/merge-patch+json";
  }
}

ApiError Unavailable(const Status& s) {
  ApiError e;
  e.code = 503;
  e.reason = "ServiceUnavailable";
  e.message = s.message();
  return e;
}

// A fixed pool of threads running queued calls.
class Workers {
 public:
  explicit Workers(int n) {
    for (int i = 0; i < n; ++i)
      threads_.emplace_back([this] {
        core::NameThisThread("kt-http-client");
        Run();
      });
  }
  ~Workers() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  void Post(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(fn));
    }
    cv_.notify_one();
  }

 private:
  void Run() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
        if (tasks_.empty()) return;  // stopping, everything done
        fn = std::move(tasks_.front());
        tasks_.pop_front();
      }
      fn();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;  // guarded by mu_
  bool stop_ = false;                        // guarded by mu_
  std::vector<std::thread> threads_;
};

Result<ObjectPtr> ToObject(const server::ResourceInfo& info, rapidjson::Document& doc);

class HttpClient : public Client {
 public:
  HttpClient(RestTransport* t, int workers) : t_(t), workers_(workers) {}

  void Create(Resource r, std::string ns, std::string body, WriteDone done) override {
    Call("POST", ResourcePath(server::Info(r), ns), std::move(body), "application/json",
         std::move(done));
  }
  void Update(Resource r, std::string ns, std::string name, Subresource sub, std::string body,
              WriteDone done) override {
    std::string path = ResourcePath(server::Info(r), ns, name);
    if (sub == Subresource::kStatus) path += "/status";
    Call("PUT", std::move(path), std::move(body), "application/json", std::move(done));
  }
  void Patch(Resource r, std::string ns, std::string name, Subresource sub, api::PatchType type,
             std::string patch, WriteDone done) override {
    std::string path = ResourcePath(server::Info(r), ns, name);
    if (sub == Subresource::kStatus) path += "/status";
    Call("PATCH", std::move(path), std::move(patch), PatchContentType(type), std::move(done));
  }
  void Delete(Resource r, std::string ns, std::string name, server::DeleteOptions options,
              WriteDone done) override {
    std::string body = R"({"kind":"DeleteOptions","apiVersion":"v1")";
    if (options.grace_period_seconds) {
      body += ",\"gracePeriodSeconds\":" + std::to_string(*options.grace_period_seconds);
    }
    if (options.precondition_uid || options.precondition_resource_version) {
      body += R"(,"preconditions":{)";
      bool first = true;
      if (options.precondition_uid) {
        body += "\"uid\":\"" + *options.precondition_uid + "\"";
        first = false;
      }
      if (options.precondition_resource_version) {
        body += std::string(first ? "" : ",") + "\"resourceVersion\":\"" +
                *options.precondition_resource_version + "\"";
      }
      body += "}";
    }
    body += "}";
    Call("DELETE", ResourcePath(server::Info(r), ns, name), std::move(body), "application/json",
         std::move(done));
  }
  void Get(Resource r, std::string ns, std::string name, GetDone done) override {
    workers_.Post([this, r, path = ResourcePath(server::Info(r), ns, name),
                   done = std::move(done)]() mutable {
      Result<HttpResult> res = t_->Do("GET", path);
      if (!res) return done(ApiErr(Unavailable(res.error())));
      if (res->status != 200) return done(ApiErr(ApiErrorFromResponse(res->status, res->body)));
      Result<rapidjson::Document> doc = api::ParseJson(res->body);
      if (!doc) return done(ApiErr(doc.error()));
      Result<ObjectPtr> o = ToObject(server::Info(r), *doc);
      if (!o) return done(ApiErr(o.error()));
      done(std::move(*o));
    });
  }
  void Bind(std::string ns, std::string name, std::string uid, std::string node,
            Done done) override {
    std::string path = ResourcePath(server::Info(Resource::kPods), ns, name) + "/binding";
    Call("POST", std::move(path), BindingJson(ns, name, uid, node), "application/json",
         [done = std::move(done)](ApiResult<store::Bytes> r) {
           if (!r) return done(ApiErr(r.error()));
           done({});
         });
  }

 private:
  void Call(std::string method, std::string path, std::string body, std::string_view type,
            WriteDone done) {
    workers_.Post([this, method = std::move(method), path = std::move(path), body = std::move(body),
                   type = std::string(type), done = std::move(done)]() mutable {
      Result<HttpResult> r = t_->Do(method, path, body, type);
      if (!r) return done(ApiErr(Unavailable(r.error())));
      if (r->status >= 200 && r->status < 300) return done(store::MakeBytes(std::move(r->body)));
      done(ApiErr(ApiErrorFromResponse(r->status, r->body)));
    });
  }

  RestTransport* t_;
  Workers workers_;
};

// The objects of a list or watch answer, with what the informer needs.
Result<ObjectPtr> ToObject(const server::ResourceInfo& info, rapidjson::Document& doc) {
  if (!doc.IsObject()) return Err(BadRequest("expected an object"));
  auto& alloc = doc.GetAllocator();
  // List items from kube-apiserver carry no kind or apiVersion.
  if (!doc.HasMember("kind")) {
    doc.AddMember("kind", rapidjson::Value(std::string(info.kind).c_str(), alloc), alloc);
  }
  if (!doc.HasMember("apiVersion")) {
    doc.AddMember("apiVersion", rapidjson::Value(std::string(info.api_version).c_str(), alloc),
                  alloc);
  }
  auto meta = doc.FindMember("metadata");
  if (meta == doc.MemberEnd() || !meta->value.IsObject()) {
    return Err(BadRequest("object without metadata"));
  }
  auto str = [&](const char* name) -> std::string {
    auto it = meta->value.FindMember(name);
    return it != meta->value.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
  };
  store::Revision rev = 0;
  const std::string rv = str("resourceVersion");
  if (!rv.empty()) rev = std::strtoll(rv.c_str(), nullptr, 10);
  meta->value.RemoveMember("resourceVersion");
  return server::MakeStoredObject(info, server::ObjectKey(info, str("namespace"), str("name")),
                                  store::MakeBytes(server::EncodeForStorage(doc)), rev, rev);
}

class HttpListerWatcher : public ListerWatcher {
 public:
  HttpListerWatcher(RestTransport* t, const server::ResourceInfo& info, std::string labels,
                    std::string fields, std::string ns)
      : t_(t),
        info_(info),
        labels_(std::move(labels)),
        fields_(std::move(fields)),
        ns_(std::move(ns)) {}

  const server::ResourceInfo& Info() const override { return info_; }

  Result<ListResult> List() override {
    ListResult out;
    std::string cont;
    do {
      std::string path = Path() + "limit=500";
      if (!cont.empty()) path += "&continue=" + UrlEscape(cont);
      Result<HttpResult> r = t_->Do("GET", path);
      if (!r) return Err(r.error());
      if (r->status != 200) {
        ApiError e = ApiErrorFromResponse(r->status, r->body);
        return Err(e.ToStatus().WithPrefix("listing " + std::string(info_.plural) + ": "));
      }
      Result<rapidjson::Document> doc = api::ParseJson(r->body);
      if (!doc) return Err(doc.error());
      auto meta = doc->FindMember("metadata");
      cont.clear();
      if (meta != doc->MemberEnd() && meta->value.IsObject()) {
        if (auto c = meta->value.FindMember("continue");
            c != meta->value.MemberEnd() && c->value.IsString()) {
          cont = c->value.GetString();
        }
        if (auto rv = meta->value.FindMember("resourceVersion");
            rv != meta->value.MemberEnd() && rv->value.IsString()) {
          out.revision = std::strtoll(rv->value.GetString(), nullptr, 10);
        }
      }
      auto items = doc->FindMember("items");
      if (items != doc->MemberEnd() && items->value.IsArray()) {
        for (rapidjson::Value& item : items->value.GetArray()) {
          rapidjson::Document one;
          one.CopyFrom(item, one.GetAllocator());
          Result<ObjectPtr> obj = ToObject(info_, one);
          if (!obj) return Err(obj.error());
          out.items.push_back(std::move(*obj));
        }
      }
    } while (!cont.empty());
    return out;
  }

  Result<std::unique_ptr<server::WatchCache::WatchHandle>> Watch(
      store::Revision revision, std::shared_ptr<server::WatchSink> sink) override {
    std::string path = Path() + "watch=1&allowWatchBookmarks=true&timeoutSeconds=300" +
                       "&resourceVersion=" + std::to_string(revision);
    const server::ResourceInfo& info = info_;
    auto stream = t_->Stream(
        std::move(path),
        [sink, &info](std::string_view line) {
          Result<rapidjson::Document> ev = api::ParseJson(line);
          if (!ev || !ev->IsObject()) return true;
          auto type = ev->FindMember("type");
          auto object = ev->FindMember("object");
          if (type == ev->MemberEnd() || !type->value.IsString() || object == ev->MemberEnd()) {
            return true;
          }
          const std::string_view t(type->value.GetString(), type->value.GetStringLength());
          rapidjson::Document obj;
          obj.CopyFrom(object->value, obj.GetAllocator());
          if (t == "ERROR") {
            const int code = obj.IsObject() && obj.HasMember("code") && obj["code"].IsInt()
                                 ? obj["code"].GetInt()
                                 : 500;
            const std::string message =
                obj.IsObject() && obj.HasMember("message") && obj["message"].IsString()
                    ? obj["message"].GetString()
                    : "watch error";
            sink->OnEnd(
                Status(code == 410 ? StatusCode::kGone : StatusCode::kUnavailable, message));
            return false;
          }
          if (t == "BOOKMARK") {
            auto m = obj.FindMember("metadata");
            if (m != obj.MemberEnd() && m->value.IsObject() &&
                m->value.HasMember("resourceVersion") && m->value["resourceVersion"].IsString()) {
              sink->OnProgress(std::strtoll(m->value["resourceVersion"].GetString(), nullptr, 10));
            }
            return true;
          }
          Result<ObjectPtr> o = ToObject(info, obj);
          if (!o) return true;
          server::WatchEventType wt = t == "ADDED"     ? server::WatchEventType::kAdded
                                      : t == "DELETED" ? server::WatchEventType::kDeleted
                                                       : server::WatchEventType::kModified;
          return sink->OnEvent(wt, *o);
        },
        [sink](Status end, int http_status, std::string body) {
          if (http_status == 410) return sink->OnEnd(Status(StatusCode::kGone, body));
          // A normal close (the server's timeout) is OK: the informer watches again at once.
          sink->OnEnd(end);
        });
    if (!stream) return Err(stream.error());
    struct Handle : server::WatchCache::WatchHandle {
      std::unique_ptr<RestTransport::Streaming> stream;
    };
    auto h = std::make_unique<Handle>();
    h->stream = std::move(*stream);
    return std::unique_ptr<server::WatchCache::WatchHandle>(std::move(h));
  }

 private:
  std::string Path() const {
    std::string p = ResourcePath(info_, ns_) + "?";
    if (!labels_.empty()) p += "labelSelector=" + UrlEscape(labels_) + "&";
    if (!fields_.empty()) p += "fieldSelector=" + UrlEscape(fields_) + "&";
    return p;
  }

  RestTransport* t_;
  const server::ResourceInfo& info_;
  std::string labels_;
  std::string fields_;
  std::string ns_;
};

}  // namespace

std::string ResourcePath(const server::ResourceInfo& info, std::string_view namespace_,
                         std::string_view name) {
  std::string p = info.group.empty()
                      ? "/api/" + std::string(info.version)
                      : "/apis/" + std::string(info.group) + "/" + std::string(info.version);
  if (info.namespaced && !namespace_.empty()) p += "/namespaces/" + std::string(namespace_);
  p += "/" + std::string(info.plural);
  if (!name.empty()) p += "/" + std::string(name);
  return p;
}

ApiError ApiErrorFromResponse(int http_status, std::string_view body) {
  ApiError e;
  e.code = http_status;
  Result<rapidjson::Document> doc = api::ParseJson(body);
  if (doc && doc->IsObject()) {
    if (auto m = doc->FindMember("message"); m != doc->MemberEnd() && m->value.IsString()) {
      e.message = m->value.GetString();
    }
    if (auto r = doc->FindMember("reason"); r != doc->MemberEnd() && r->value.IsString()) {
      e.reason = r->value.GetString();
    }
    if (auto c = doc->FindMember("code"); c != doc->MemberEnd() && c->value.IsInt()) {
      e.code = c->value.GetInt();
    }
  }
  if (e.message.empty()) e.message = "the server answered HTTP " + std::to_string(http_status);
  return e;
}

std::unique_ptr<Client> NewHttpClient(RestTransport* transport, int workers) {
  return std::make_unique<HttpClient>(transport, workers);
}

std::unique_ptr<ListerWatcher> NewHttpListerWatcher(RestTransport* transport,
                                                    const server::ResourceInfo& info,
                                                    std::string label_selector,
                                                    std::string field_selector,
                                                    std::string namespace_) {
  return std::make_unique<HttpListerWatcher>(transport, info, std::move(label_selector),
                                             std::move(field_selector), std::move(namespace_));
}

}  // namespace kt::client
