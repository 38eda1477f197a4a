#include "cli/serve.h"

#include <signal.h>
#include <unistd.h>

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
#include "client/client.h"
#include "client/informer.h"
#include "controllers/daemonset/controller.h"
#include "controllers/garbagecollector/controller.h"
#include "controllers/nodelifecycle/controller.h"
#include "controllers/podgc/controller.h"
#include "controllers/tainteviction/controller.h"
#include "core/file.h"
#include "core/strings.h"
#include "core/thread_name.h"
#include "core/time.h"
#include "core/version.h"
#include "kubelet/kubelet.h"
#include "scheduler/config.h"
#include "scheduler/scheduler.h"
#include "server/api_server.h"
#include "server/authn.h"
#include "server/http.h"
#include "server/pki.h"
#include "server/predecode.h"
#include "server/registry.h"
#include "store/sqlite_store.h"
#include "store/store.h"

namespace kt::cli {

namespace {

int Fail(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return 1;
}

// What the kubeconfig that serve writes holds besides the URL: the CA to trust (empty when the
// serving certificate came from --tls-cert-file: its issuer is not known here) and the admin
// client certificate (x509 authentication, group system:masters).
struct KubeconfigCredentials {
  std::string ca_pem;
  std::string client_cert_pem;
  std::string client_key_pem;
};

Status WriteKubeconfig(const std::string& path, const std::string& url,
                       const KubeconfigCredentials& credentials) {
  std::string text =
      "apiVersion: v1\n"
      "kind: Config\n"
      "clusters:\n"
      "- name: kubetaint\n"
      "  cluster:\n";
  if (!credentials.ca_pem.empty()) {
    text.append("    certificate-authority-data: ")
        .append(EncodeBase64(credentials.ca_pem))
        .append("\n");
  }
  text.append("    server: ").append(url).append("\n");
  text.append(
      "contexts:\n"
      "- name: kubetaint\n"
      "  context:\n"
      "    cluster: kubetaint\n"
      "    user: kubetaint-admin\n"
      "    namespace: default\n"
      "current-context: kubetaint\n"
      "users:\n"
      "- name: kubetaint-admin\n"
      "  user:\n");
  text.append("    client-certificate-data: ")
      .append(EncodeBase64(credentials.client_cert_pem))
      .append("\n");
  text.append("    client-key-data: ")
      .append(EncodeBase64(credentials.client_key_pem))
      .append("\n");
  // It holds a private key: only its owner may read it (as kubeadm's admin.conf).
  return WriteFileAtomic(path, text, 0600);
}

// The listen address's host, as a certificate names it: "[::1]:6443" gives "::1".
std::string ListenHost(const std::string& listen) {
  std::string host = listen.substr(0, listen.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host;
}

// The serving certificate and key, the client CAs, and what the kubeconfig needs: from the
// flags, or generated under DATA_DIR/pki on first start (as k3s and kubeadm do).
Result<server::HttpTlsOptions> SecureServing(const ServeOptions& options,
                                             KubeconfigCredentials* credentials) {
  if (options.tls_cert_file.empty() != options.tls_private_key_file.empty()) {
    return Err(BadRequest("--tls-cert-file and --tls-private-key-file must be given together"));
  }
  server::PkiOptions pki_options;
  pki_options.extra_sans = options.tls_sans;
  pki_options.listen_host = ListenHost(options.listen);
  Result<server::ServingPki> pki =
      server::EnsureServingPki(std::filesystem::path(options.data_dir) / "pki", pki_options);
  if (!pki) return Err(pki.error());
  server::HttpTlsOptions tls;
  const bool own_certificate = !options.tls_cert_file.empty();
  const std::filesystem::path cert_file =
      own_certificate ? std::filesystem::path(options.tls_cert_file) : pki->serving_cert;
  const std::filesystem::path key_file =
      own_certificate ? std::filesystem::path(options.tls_private_key_file) : pki->serving_key;
  Result<std::string> cert = ReadFile(cert_file);
  if (!cert) return Err(cert.error().WithPrefix("--tls-cert-file: "));
  Result<std::string> key = ReadFile(key_file);
  if (!key) return Err(key.error().WithPrefix("--tls-private-key-file: "));
  tls.certificate_chain_pem = std::move(*cert);
  tls.private_key_pem = std::move(*key);
  // The data dir's CA signs the kubeconfig's client certificate, so it is always trusted for
  // client certificates, besides --client-ca-file's.
  tls.client_ca_pem = pki->ca_pem;
  if (!options.client_ca_file.empty()) {
    Result<std::string> extra = ReadFile(options.client_ca_file);
    if (!extra) return Err(extra.error().WithPrefix("--client-ca-file: "));
    if (!tls.client_ca_pem.empty() && tls.client_ca_pem.back() != '\n') tls.client_ca_pem += '\n';
    tls.client_ca_pem += *extra;
  }
  credentials->ca_pem = own_certificate ? std::string() : pki->ca_pem;
  credentials->client_cert_pem = pki->admin_cert_pem;
  credentials->client_key_pem = pki->admin_key_pem;
  return tls;
}

// The scheduler's configuration from the flags.
Result<scheduler::SchedulerConfig> SchedulerConfigFromFlags(const ServeOptions& options) {
  if (!options.scheduler_config.empty()) {
    if (options.scheduler_name_set) {
      return Err(
          BadRequest("--scheduler-name and --config cannot be used together: name the "
                     "profiles in the file (profiles[].schedulerName)"));
    }
    return scheduler::LoadSchedulerConfig(options.scheduler_config);
  }
  scheduler::SchedulerConfig c = scheduler::DefaultSchedulerConfig();
  if (options.scheduler_name.empty()) return Err(BadRequest("--scheduler-name: must not be empty"));
  c.profiles[0].scheduler_name = options.scheduler_name;
  return c;
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "kubetaint";
  return buf;
}

}  // namespace

bool ControllerEnabled(const std::vector<std::string>& controllers, std::string_view name) {
  bool enabled = false;
  for (const std::string& c : controllers) {
    if (c.size() == name.size() + 1 && c[0] == '-' && std::string_view(c).substr(1) == name) {
      return false;
    }
    if (c == name || c == "*") enabled = true;
  }
  return enabled;
}

Status ValidateControllers(const std::vector<std::string>& controllers) {
  for (const std::string& c : controllers) {
    std::string_view name = c;
    if (name == "*") continue;
    if (!name.empty() && name[0] == '-') name.remove_prefix(1);
    bool known = false;
    for (const char* k : kKnownControllers) known = known || name == k;
    if (!known) {
      return BadRequest("--controllers: \"" + c + "\" is not in the list of known controllers");
    }
  }
  return Status::Ok();
}

void WaitForStopSignal(const char* who) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  int sig = 0;
  sigwait(&set, &sig);
  std::fprintf(stderr, "%s: %s received, stopping\n", who, sig == SIGINT ? "SIGINT" : "SIGTERM");
}

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
  if (Status s = ValidateControllers(options.controllers); !s.ok()) return Fail(s.message());
  if (options.background_nice < 0 || options.background_nice > 19) {
    return Fail("--background-nice: must be from 0 to 19, not " +
                std::to_string(options.background_nice));
  }
  // Before the store opens: its watch thread is the first background thread.
  core::SetBackgroundNiceness(options.background_nice);
  const bool run_scheduler =
      !options.disable_scheduler && ControllerEnabled(options.controllers, "scheduler");
  Result<scheduler::SchedulerConfig> scheduler_config = SchedulerConfigFromFlags(options);
  if (!scheduler_config) return Fail(scheduler_config.error().message());
  if (run_scheduler) {
    if (Status s = scheduler::ValidateProfiles(scheduler_config->profiles, options.gates);
        !s.ok()) {
      return Fail(s.message());
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(options.data_dir, ec);
  if (ec) return Fail("--data-dir " + options.data_dir + ": " + ec.message());
  if (options.insecure_port < -1 || options.insecure_port > 65535) {
    return Fail("--insecure-port: must be -1 (off) or a port from 0 to 65535, not " +
                std::to_string(options.insecure_port));
  }
  KubeconfigCredentials credentials;
  Result<server::HttpTlsOptions> tls = SecureServing(options, &credentials);
  if (!tls) return Fail(tls.error().message());
  server::Authentication authentication;
  authentication.anonymous = options.anonymous_auth;
  if (!options.token_auth_file.empty()) {
    Result<server::TokenFile> tokens = server::LoadTokenFile(options.token_auth_file);
    if (!tokens) return Fail("--token-auth-file: " + tokens.error().message());
    for (const std::string& w : tokens->warnings())
      std::fprintf(stderr, "warning: %s\n", w.c_str());
    authentication.tokens = std::make_shared<const server::TokenFile>(std::move(*tokens));
  }

  if (options.choose_heap_pages) {
    std::fprintf(stderr, "%s\n", options.choose_heap_pages().c_str());
  }
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<store::Store> store;
  std::unique_ptr<server::Predecoder> predecoded;
  if (options.store == "memory") {
    store = store::NewMemoryStore();
  } else {
    store::SqliteOptions sqlite;
    sqlite.path = (std::filesystem::path(options.data_dir) / "kubetaint.db").string();
    // The caches' objects are decoded on the other core while the file loads.
    predecoded = std::make_unique<server::Predecoder>();
    sqlite.on_load = [pre = predecoded.get()](const store::LoadedRow& row) { pre->Loaded(row); };
    Result<std::unique_ptr<store::Store>> opened = store::OpenSqliteStore(sqlite);
    if (!opened) return Fail(opened.error().message());
    store = std::move(*opened);
    predecoded->Finish();
  }

  const auto store_ready = std::chrono::steady_clock::now();
  // Every component's time, and the registry's timestamps, come from one clock.
  std::unique_ptr<client::Clock> clock = client::NewRealClock();
  Result<std::shared_ptr<const admission::Chain>> admission =
      admission::NewChain(options.admission);
  if (!admission) return Fail(admission.error().message());
  server::Registry::Options registry_options;
  registry_options.gates = options.gates;
  registry_options.admission = std::move(*admission);
  registry_options.track_managed_fields_on_create = options.managed_fields_on_create;
  registry_options.now = [c = clock.get()] {
    return std::chrono::time_point_cast<std::chrono::system_clock::duration>(c->Now());
  };
  server::Registry registry(store.get(), registry_options);
  if (Status s = registry.Start(predecoded.get()); !s.ok()) return Fail(s.message());
  predecoded.reset();
  const auto caches_ready = std::chrono::steady_clock::now();
  std::unique_ptr<client::Client> client = client::NewInProcessClient(&registry);
  // The simulated kubelets of node1..nodeN, through the registry as any client; serving starts
  // once every node has registered.
  std::unique_ptr<kubelet::Kubelets> kubelets;
  if (options.nodes > 0) {
    kubelet::Kubelets::Options ko;
    ko.clock = clock.get();
    ko.client = client.get();
    ko.pods = client::NewCacheListerWatcher(&registry.cache(server::Resource::kPods));
    ko.nodes = client::NewCacheListerWatcher(&registry.cache(server::Resource::kNodes));
    ko.node.prefix = "node";
    ko.node.count = options.nodes;
    ko.status_update_frequency = options.node_status_update_frequency;
    // A kubelet renews its lease every quarter of the lease duration; with a node monitor grace
    // period shorter than the 40 s default lease, the lease is shortened to it, so that the
    // node lifecycle controller of this process never takes a live node for a silent one.
    ko.lease_duration = std::min<std::chrono::nanoseconds>(std::chrono::seconds(40),
                                                           options.node_monitor_grace_period);
    kubelets = std::make_unique<kubelet::Kubelets>(std::move(ko));
    kubelets->Start();
    if (!kubelets->WaitRegistered(std::chrono::steady_clock::now() + std::chrono::seconds(60))) {
      return Fail("the simulated nodes did not register within 60 s");
    }
  }

  {
    // The start-up line reports what the caches hold once every write above is in them.
    std::promise<void> synced;
    registry.Sync(server::Resource::kNodes, [&] { synced.set_value(); });
    synced.get_future().wait();
  }
  // The scheduler, fed by informers over the watch caches and writing through the registry.
  std::unique_ptr<client::Informer> pod_informer;
  std::unique_ptr<client::Informer> node_informer;
  std::unique_ptr<scheduler::Scheduler> sched;
  if (run_scheduler) {
    server::ObjectFilter pods_filter;
    // Pods that finished hold no resources: the scheduler does not watch them (upstream).
    Result<api::fields::Selector> not_finished =
        api::fields::ParseSelector("status.phase!=Succeeded,status.phase!=Failed", "Pod");
    if (!not_finished) return Fail(not_finished.error().message());
    pods_filter.fields = std::move(*not_finished);
    pod_informer = std::make_unique<client::Informer>(
        client::NewCacheListerWatcher(&registry.cache(server::Resource::kPods), pods_filter),
        client::Informer::Options::Manual(clock.get(), "pods"));
    node_informer = std::make_unique<client::Informer>(
        client::NewCacheListerWatcher(&registry.cache(server::Resource::kNodes)),
        client::Informer::Options::Manual(clock.get(), "nodes"));
    scheduler::Scheduler::Options so;
    so.clock = clock.get();
    so.client = client.get();
    so.profiles = scheduler_config->profiles;
    so.gates = options.gates;
    so.queue.initial_backoff = std::chrono::seconds(scheduler_config->pod_initial_backoff_seconds);
    so.queue.max_backoff = std::chrono::seconds(scheduler_config->pod_max_backoff_seconds);
    so.hostname = HostName();
    client::Informer* pods = pod_informer.get();
    so.get_pod = [pods](std::string_view ns, std::string_view name) { return pods->Get(ns, name); };
    Result<std::unique_ptr<scheduler::Scheduler>> created = scheduler::Scheduler::New(so);
    if (!created) return Fail(created.error().message());
    sched = std::move(*created);
    sched->AddEventHandlers(pod_informer.get(), node_informer.get());
  }

  // The taint eviction controller (kube-controller-manager's), on its own informers.
  std::unique_ptr<controllers::tainteviction::Controller> taint_eviction;
  if (ControllerEnabled(options.controllers, controllers::tainteviction::kControllerName)) {
    controllers::tainteviction::Controller::Options to;
    to.clock = clock.get();
    to.client = client.get();
    to.pods = client::NewCacheListerWatcher(&registry.cache(server::Resource::kPods));
    to.nodes = client::NewCacheListerWatcher(&registry.cache(server::Resource::kNodes));
    to.gates = options.gates;
    // Upstream's recorder names the component only (EventSource{Component: controllerName}).
    to.host = "";
    taint_eviction = std::make_unique<controllers::tainteviction::Controller>(std::move(to));
  }

  // The pod garbage collector (kube-controller-manager's).
  std::unique_ptr<controllers::podgc::Controller> pod_gc;
  if (ControllerEnabled(options.controllers, controllers::podgc::kControllerName)) {
    controllers::podgc::Controller::Options go;
    go.clock = clock.get();
    go.client = client.get();
    go.pods = client::NewCacheListerWatcher(&registry.cache(server::Resource::kPods));
    go.nodes = client::NewCacheListerWatcher(&registry.cache(server::Resource::kNodes));
    go.terminated_pod_gc_threshold = options.terminated_pod_gc_threshold;
    pod_gc = std::make_unique<controllers::podgc::Controller>(std::move(go));
  }

  // The garbage collector (kube-controller-manager's): dependents of deleted owners, and the
  // Orphan and Foreground propagation policies.
  std::unique_ptr<controllers::garbagecollector::Controller> garbage_collector;
  if (ControllerEnabled(options.controllers, controllers::garbagecollector::kControllerName)) {
    controllers::garbagecollector::Controller::Options gco;
    gco.clock = clock.get();
    gco.client = client.get();
    gco.pods = client::NewCacheListerWatcher(&registry.cache(server::Resource::kPods),
                                             controllers::garbagecollector::DependentFilter());
    gco.leases = client::NewCacheListerWatcher(&registry.cache(server::Resource::kLeases));
    gco.nodes = client::NewCacheListerWatcher(&registry.cache(server::Resource::kNodes));
    gco.daemonsets = client::NewCacheListerWatcher(&registry.cache(server::Resource::kDaemonSets));
    garbage_collector = std::make_unique<controllers::garbagecollector::Controller>(std::move(gco));
  }

  // The node lifecycle controller (kube-controller-manager's), on its own informers.
  std::unique_ptr<controllers::nodelifecycle::Controller> node_lifecycle;
  if (ControllerEnabled(options.controllers, controllers::nodelifecycle::kControllerName)) {
    namespace nlc = controllers::nodelifecycle;
    nlc::Controller::Options no;
    no.clock = clock.get();
    no.client = client.get();
    no.nodes = client::NewCacheListerWatcher(&registry.cache(server::Resource::kNodes));
    no.pods = client::NewCacheListerWatcher(&registry.cache(server::Resource::kPods));
    server::ObjectFilter node_leases;
    node_leases.namespace_ = std::string(nlc::kNodeLeaseNamespace);
    no.leases =
        client::NewCacheListerWatcher(&registry.cache(server::Resource::kLeases), node_leases);
    no.node_monitor_period = options.node_monitor_period;
    no.node_monitor_grace_period = options.node_monitor_grace_period;
    no.node_startup_grace_period = options.node_startup_grace_period;
    no.node_eviction_rate = options.node_eviction_rate;
    no.secondary_node_eviction_rate = options.secondary_node_eviction_rate;
    no.unhealthy_zone_threshold = options.unhealthy_zone_threshold;
    no.large_cluster_size_threshold = options.large_cluster_size_threshold;
    // Upstream's recorder names the component only (EventSource{Component: "node-controller"}).
    no.host = "";
    node_lifecycle = std::make_unique<nlc::Controller>(std::move(no));
  }

  // The DaemonSet controller (kube-controller-manager's), on its own informers.
  std::unique_ptr<controllers::daemonset::Controller> daemonset;
  if (ControllerEnabled(options.controllers, controllers::daemonset::kControllerName)) {
    controllers::daemonset::Controller::Options dso;
    dso.clock = clock.get();
    dso.client = client.get();
    dso.daemonsets = client::NewCacheListerWatcher(&registry.cache(server::Resource::kDaemonSets));
    dso.pods = client::NewCacheListerWatcher(&registry.cache(server::Resource::kPods),
                                             controllers::daemonset::PodsFilter());
    dso.nodes = client::NewCacheListerWatcher(&registry.cache(server::Resource::kNodes));
    dso.gates = options.gates;
    daemonset = std::make_unique<controllers::daemonset::Controller>(std::move(dso));
  }

  server::DiscoveryOptions discovery;
  discovery.server_address = options.listen;
  server::ApiServer api(&registry, discovery, authentication);
  server::HttpServerOptions http_options;
  http_options.listen = options.listen;
  http_options.access_log = options.verbosity >= 2;
  http_options.tls = std::move(*tls);
  // I/O threads: parsing and answering requests is most of a write's CPU, so alone the API
  // server wants one per core (2 cores: 12.9k pod creates/s with two, 10.2k/s with one). The
  // scheduler's threads need a core of their own: with it running, one fewer (2 cores: 5.0-5.3k
  // scheduled pods/s end to end with one, 3.6-4.1k/s with two).
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  http_options.io_threads = std::max(1, run_scheduler ? cores - 1 : std::max(2, cores));
  auto http = server::StartHttpServer(http_options, &api);
  if (!http) return Fail("--listen " + options.listen + ": " + http.error().message());
  // Plain HTTP besides, only when asked for: it authenticates no one and allows everything.
  Result<std::unique_ptr<server::HttpServer>> insecure = std::unique_ptr<server::HttpServer>();
  if (options.insecure_port >= 0) {
    server::HttpServerOptions plain = http_options;
    plain.tls.reset();
    std::string bind = options.insecure_bind_address;
    if (bind.find(':') != std::string::npos) bind = "[" + bind + "]";
    plain.listen = bind + ":" + std::to_string(options.insecure_port);
    insecure = server::StartHttpServer(plain, &api);
    if (!insecure) return Fail("--insecure-port: " + insecure.error().message());
    std::string plain_host = options.insecure_bind_address;
    if (plain_host == "0.0.0.0") plain_host = "127.0.0.1";
    if (plain_host.find(':') != std::string::npos) plain_host = "[" + plain_host + "]";
    std::printf(
        "kubetaint also serving plain HTTP without authentication on http://%s:%d "
        "(--insecure-port)\n",
        plain_host.c_str(), (*insecure)->port());
  }

  std::string host = options.listen.substr(0, options.listen.rfind(':'));
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  const std::string url = "https://" + host + ":" + std::to_string((*http)->port());
  const std::string kubeconfig =
      options.kubeconfig.empty() ? (std::filesystem::path(options.data_dir) / "kubeconfig").string()
                                 : options.kubeconfig;
  if (Status s = WriteKubeconfig(kubeconfig, url, credentials); !s.ok()) return Fail(s.message());
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

  // The scheduler is a client of the API server, as kube-scheduler is: it syncs and starts once
  // the server serves, so a restart with many pods is not held up by it.
  if (sched) {
    pod_informer->Start();
    node_informer->Start();
    if (!client::WaitForCacheSync({pod_informer.get(), node_informer.get()},
                                  std::chrono::steady_clock::now() + std::chrono::seconds(60))) {
      (*http)->Stop();
      return Fail("the scheduler's informers did not sync within 60 s");
    }
    sched->Start();
  }
  if (taint_eviction) taint_eviction->Start();
  if (pod_gc) pod_gc->Start();
  if (garbage_collector) garbage_collector->Start();
  if (node_lifecycle) node_lifecycle->Start();
  if (daemonset) daemonset->Start();

  WaitForStopSignal("kubetaint");
  (*http)->Stop();
  if (*insecure) (*insecure)->Stop();
  if (sched) sched->Stop();
  if (taint_eviction) taint_eviction->Stop();
  if (pod_gc) pod_gc->Stop();
  if (garbage_collector) garbage_collector->Stop();
  if (node_lifecycle) node_lifecycle->Stop();
  if (daemonset) daemonset->Stop();
  if (pod_informer) pod_informer->Stop();
  if (node_informer) node_informer->Stop();
  if (kubelets) kubelets->Stop();
  registry.Stop();
  http->reset();
  insecure->reset();
  store.reset();  // completes and syncs every accepted write
  return 0;
}

}  // namespace kt::cli
