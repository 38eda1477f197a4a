#include "cli/serve.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <mutex>
#include <thread>

#include "api/codec.h"
#include "core/time.h"
#include "core/version.h"
#include "server/api_server.h"
#include "server/http.h"
#include "server/registry.h"
#include "store/sqlite_store.h"
#include "store/store.h"

namespace kt::cli {

namespace {

int Fail(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return 1;
}

// A Ready demo node: 4 cpu, 16Gi, 110 pods.
std::string DemoNode(int i) {
  const std::string name = "node" + std::to_string(i);
  const std::string now = FormatRfc3339(WallNow());
  const std::string resources =
      R"({"cpu":"4","ephemeral-storage":"100Gi","memory":"16Gi","pods":"110"})";
  std::string n =
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name +
      R"(","labels":{"kubernetes.io/arch":"amd64","kubernetes.io/hostname":")" + name +
      R"(","kubernetes.io/os":"linux"}},"spec":{},"status":{"capacity":)" + resources +
      R"(,"allocatable":)" + resources +
      R"(,"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady",)"
      R"("message":"kubelet is posting ready status","lastHeartbeatTime":")" +
      now + R"(","lastTransitionTime":")" + now +
      R"("}],"addresses":[{"type":"InternalIP","address":"192.0.2.)" + std::to_string(i % 250 + 1) +
      R"("},{"type":"Hostname","address":")" + name +
      R"("}],"nodeInfo":{"architecture":"amd64","containerRuntimeVersion":"kubetaint://)" +
      std::string(KubetaintVersion()) +
      R"(","kernelVersion":"simulated",)"
      R"("kubeletVersion":")" +
      GitVersion() + R"(","operatingSystem":"linux","osImage":"kubetaint simulated node"}}})";
  return n;
}

// Creates node1..nodeN that do not exist yet. The creates are issued together so that the store
// commits them in a few group commits rather than one sync each.
Status CreateDemoNodes(server::Registry& registry, int count) {
  const server::ResourceInfo& info = server::Info(server::Resource::kNodes);
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    int pending = 0;
    Status first_error;
  } state;
  for (int i = 1; i <= count; ++i) {
    Result<rapidjson::Document> doc = api::ParseJson(DemoNode(i));
    if (!doc) return doc.error();
    {
      std::lock_guard<std::mutex> lock(state.mu);
      ++state.pending;
    }
    registry.Create(info, "", std::move(*doc), {}, [&state](server::ApiResult<store::Bytes> r) {
      std::lock_guard<std::mutex> lock(state.mu);
      if (!r && r.error().reason != "AlreadyExists" && state.first_error.ok()) {
        state.first_error = r.error().ToStatus();
      }
      if (--state.pending == 0) state.cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(state.mu);
  state.cv.wait(lock, [&] { return state.pending == 0; });
  return state.first_error;
}

Status WriteKubeconfig(const std::string& path, const std::string& url) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Internal("cannot write " + tmp);
    out << "apiVersion: v1\n"
           "kind: Config\n"
           "clusters:\n"
           "- name: kubetaint\n"
           "  cluster:\n"
           "    server: "
        << url
        << "\n"
           "contexts:\n"
           "- name: kubetaint\n"
           "  context:\n"
           "    cluster: kubetaint\n"
           "    user: kubetaint\n"
           "    namespace: default\n"
           "current-context: kubetaint\n"
           "users:\n"
           "- name: kubetaint\n"
           "  user: {}\n";
    if (!out.flush()) return Internal("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Internal("cannot write " + path + ": " + ec.message());
  return Status::Ok();
}

}  // namespace

void BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int RunServe(const ServeOptions& options) {
  if (options.store != "sqlite" && options.store != "memory") {
    return Fail("--store: must be sqlite or memory, not \"" + options.store + "\"");
  }
  if (options.nodes < 0) return Fail("--nodes: must not be negative");
  std::error_code ec;
  std::filesystem::create_directories(options.data_dir, ec);
  if (ec) return Fail("--data-dir " + options.data_dir + ": " + ec.message());

  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<store::Store> store;
  if (options.store == "memory") {
    store = store::NewMemoryStore();
  } else {
    store::SqliteOptions sqlite;
    sqlite.path = (std::filesystem::path(options.data_dir) / "kubetaint.db").string();
    Result<std::unique_ptr<store::Store>> opened = store::OpenSqliteStore(sqlite);
    if (!opened) return Fail(opened.error().message());
    store = std::move(*opened);
  }

  const auto store_ready = std::chrono::steady_clock::now();
  server::Registry::Options registry_options;
  registry_options.gates = options.gates;
  server::Registry registry(store.get(), registry_options);
  if (Status s = registry.Start(); !s.ok()) return Fail(s.message());
  const auto caches_ready = std::chrono::steady_clock::now();
  if (Status s = CreateDemoNodes(registry, options.nodes); !s.ok()) {
    return Fail("creating demo nodes: " + s.message());
  }

  {
    // The start-up line reports what the caches hold once every write above is in them.
    std::promise<void> synced;
    registry.Sync(server::Resource::kNodes, [&] { synced.set_value(); });
    synced.get_future().wait();
  }
  server::DiscoveryOptions discovery;
  discovery.server_address = options.listen;
  server::ApiServer api(&registry, discovery);
  server::HttpServerOptions http_options;
  http_options.listen = options.listen;
  http_options.access_log = options.verbosity >= 2;
  // Two I/O threads: parsing and answering requests is most of a write's CPU, and one thread
  // caps pod creates at about the target rate (measured 10.2k/s with one, 12.9k/s with two).
  http_options.io_threads = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  auto http = server::StartHttpServer(http_options, &api);
  if (!http) return Fail("--listen " + options.listen + ": " + http.error().message());

  std::string host = options.listen.substr(0, options.listen.rfind(':'));
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  const std::string url = "http://" + host + ":" + std::to_string((*http)->port());
  const std::string kubeconfig =
      options.kubeconfig.empty() ? (std::filesystem::path(options.data_dir) / "kubeconfig").string()
                                 : options.kubeconfig;
  if (Status s = WriteKubeconfig(kubeconfig, url); !s.ok()) return Fail(s.message());
  auto ms = [](auto from, auto to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
  };
  std::printf(
      "kubetaint serving on %s (kubeconfig %s, %zu nodes, %zu pods, ready in %.0f ms: store %.0f "
      "ms, caches %.0f ms)\n",
      url.c_str(), kubeconfig.c_str(), registry.cache(server::Resource::kNodes).size(),
      registry.cache(server::Resource::kPods).size(), ms(start, std::chrono::steady_clock::now()),
      ms(start, store_ready), ms(store_ready, caches_ready));
  std::fflush(stdout);

  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  int sig = 0;
  sigwait(&set, &sig);
  std::fprintf(stderr, "kubetaint: %s received, stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
  (*http)->Stop();
  registry.Stop();
  http->reset();
  store.reset();  // completes and syncs every accepted write
  return 0;
}

}  // namespace kt::cli
