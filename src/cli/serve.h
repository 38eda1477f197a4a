// `kubetaint serve`: the API server the stock kubectl talks to, on embedded SQLite (or memory).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "admission/chain.h"
#include "core/feature_gates.h"
#include "core/status.h"

namespace kt::cli {

struct ServeOptions {
  std::string listen = "127.0.0.1:6443";
  std::string data_dir = "./kubetaint-data";
  std::string store = "sqlite";  // sqlite | memory
  std::string kubeconfig;        // default DATA_DIR/kubeconfig
  // Secure serving (kube-apiserver's flags). Without --tls-cert-file and
  // --tls-private-key-file, a CA and a serving certificate are generated under DATA_DIR/pki.
  std::string tls_cert_file;
  std::string tls_private_key_file;
  std::vector<std::string> tls_sans;
  std::string client_ca_file;
  std::string token_auth_file;
  bool anonymous_auth = true;
  // Plain HTTP besides, unauthenticated (-1: off; 0: any free port).
  int insecure_port = -1;
  std::string insecure_bind_address = "127.0.0.1";
  // Record managedFields from an object's creation (kube-apiserver's default), rather than from
  // its first server-side apply.
  bool managed_fields_on_create = false;
  FeatureGates gates;
  int nodes = 0;  // simulated kubelets of node1..nodeN
  // Their --node-status-update-frequency.
  std::chrono::nanoseconds node_status_update_frequency = std::chrono::seconds(10);
  int verbosity = 0;  // upstream -v; 2 and above log every request
  // How many nice levels below the API server's request threads (HTTP I/O, the SQLite
  // committer) the in-process components' threads run: the scheduler, the controllers, their
  // informers and timers, the store's watch fan-out. 0 to 19; 0 runs them all alike.
  int background_nice = 5;
  // Chooses the page size of the heap's new memory (--heap-pages; src/cli/heap_pages.h), once the
  // flags are checked and before the store is read; returns the line to log. Set by main where
  // jemalloc is linked.
  std::function<std::string()> choose_heap_pages;
  // The scheduler: the default profile's name (without --config), a KubeSchedulerConfiguration
  // file, and whether it runs at all.
  std::string scheduler_name = "default-scheduler";
  bool scheduler_name_set = false;
  std::string scheduler_config;
  bool disable_scheduler = false;
  // kube-apiserver's admission flags: which plugins run, DefaultTolerationSeconds' seconds.
  admission::Config admission;
  // kube-controller-manager's --controllers: "*" (every one on by default), "name", "-name".
  std::vector<std::string> controllers = {"*"};
  // kube-controller-manager's --terminated-pod-gc-threshold (0: never).
  int64_t terminated_pod_gc_threshold = 12500;
  // kube-controller-manager's flags of the node lifecycle controller, with their defaults.
  std::chrono::nanoseconds node_monitor_period = std::chrono::seconds(5);
  std::chrono::nanoseconds node_monitor_grace_period = std::chrono::seconds(50);
  std::chrono::nanoseconds node_startup_grace_period = std::chrono::seconds(60);
  float node_eviction_rate = 0.1f;
  float secondary_node_eviction_rate = 0.01f;
  float unhealthy_zone_threshold = 0.55f;
  int32_t large_cluster_size_threshold = 50;
};

// The components `serve` runs besides the API server, by --controllers name.
inline constexpr const char* kKnownControllers[] = {"scheduler",
                                                    "taint-eviction-controller",
                                                    "pod-garbage-collector",
                                                    "node-lifecycle-controller",
                                                    "daemonset-controller",
                                                    "garbage-collector-controller"};

// Whether component `name` is enabled by --controllers (kube-controller-manager's rules:
// "-name" disables, "name" enables, "*" enables every component that is on by default).
bool ControllerEnabled(const std::vector<std::string>& controllers, std::string_view name);
// Checks every --controllers entry names a known component.
Status ValidateControllers(const std::vector<std::string>& controllers);

// Blocks SIGINT and SIGTERM in the calling thread; call before any thread starts, so that
// RunServe can wait for them.
void BlockStopSignals();

// Waits for SIGINT or SIGTERM (blocked by BlockStopSignals), then prints "<who>: SIGTERM
// received, stopping" on stderr.
void WaitForStopSignal(const char* who);

// Serves until SIGINT or SIGTERM, then stops cleanly. Returns the process exit status; errors
// are printed as one line on stderr.
int RunServe(const ServeOptions& options);

}  // namespace kt::cli
