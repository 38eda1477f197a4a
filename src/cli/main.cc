// kubetaint: the command line. CLI11 is included here and nowhere else (it is slow to compile).
#include <malloc.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <CLI/CLI.hpp>

#include "admission/chain.h"
#include "cli/check.h"
#include "cli/heap_pages.h"
#include "cli/kubelet_cmd.h"
#include "cli/serve.h"
#include "core/feature_gates.h"
#include "core/strings.h"
#include "core/version.h"

namespace {

// Bad flags, manifests or taint specs: one line on stderr, exit status 2.
constexpr int kExitBadInput = 2;

int Fail(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return kExitBadInput;
}

// An int64 flag's value as pflag parses it; on failure, pflag's message.
std::string ParseInt64Flag(std::string_view flag, const std::string& text, int64_t* out) {
  if (kt::ParseDecimalInt64(text, out)) return "";
  std::string_view number = text;
  if (!number.empty() && (number[0] == '+' || number[0] == '-')) number.remove_prefix(1);
  const bool digits = !number.empty() && number.find_first_not_of("0123456789") == number.npos;
  return "invalid argument \"" + text + "\" for \"" + std::string(flag) +
         "\" flag: strconv.ParseInt: parsing \"" + text +
         "\": " + (digits ? "value out of range" : "invalid syntax");
}

// A Go duration flag (pflag's DurationVar): time.ParseDuration, or pflag's message.
std::string ParseDurationFlag(std::string_view flag, const std::string& text,
                              std::chrono::nanoseconds* out) {
  std::string error;
  if (kt::ParseGoDuration(text, out, &error)) return "";
  return "invalid argument \"" + text + "\" for \"" + std::string(flag) + "\" flag: " + error;
}

// A float32 flag (pflag's Float32Var): strconv.ParseFloat(s, 32), or pflag's message.
std::string ParseFloat32Flag(std::string_view flag, const std::string& text, float* out) {
  bool range = false;
  if (kt::ParseFloat32(text, out, &range)) return "";
  return "invalid argument \"" + text + "\" for \"" + std::string(flag) +
         "\" flag: strconv.ParseFloat: parsing \"" + text +
         "\": " + (range ? "value out of range" : "invalid syntax");
}

// An int32 flag (pflag's Int32Var): strconv.ParseInt(s, 0, 32), or pflag's message.
std::string ParseInt32Flag(std::string_view flag, const std::string& text, int32_t* out) {
  int64_t v = 0;
  std::string error = ParseInt64Flag(flag, text, &v);
  if (error.empty() && (v < INT32_MIN || v > INT32_MAX)) {
    error = "invalid argument \"" + text + "\" for \"" + std::string(flag) +
            "\" flag: strconv.ParseInt: parsing \"" + text + "\": value out of range";
  }
  if (error.empty()) *out = static_cast<int32_t>(v);
  return error;
}

// glibc hands memory freed at the top of a heap back to the kernel once 128 KiB are free, and
// takes it back one page fault at a time: under a steady write load every thread's arena
// shrinks and regrows all the time (end to end, 10-15 % of the scheduler's throughput on
// 2 cores). Keep up to 64 MiB free per heap, grow heaps 16 MiB at a time, and serve blocks
// below 4 MiB from the heaps rather than from mmap.
void TuneMalloc() {
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  mallopt(M_TOP_PAD, 16 << 20);
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  TuneMalloc();
  CLI::App app{
      "kubetaint: a Kubernetes-compatible control plane for taints, tolerations, scheduling and "
      "eviction"};
  app.name("kubetaint");
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");

  CLI::App* version = app.add_subcommand("version", "Print the kubetaint and Kubernetes versions");

  kt::cli::CheckOptions check_options;
  std::string feature_gates;
  CLI::App* check = app.add_subcommand(
      "check",
      "Report, for every pod, which nodes it can run on and why not, each plugin's verdict and "
      "score, and the node the scheduler picks");
  check
      ->add_option("-f,--filename", check_options.files,
                   "Manifest file (YAML or JSON; multi-document, kind: List); repeatable")
      ->allow_extra_args(false);
  check->add_option("-o,--output", check_options.output, "Output format: text or json")
      ->check(CLI::IsMember({"text", "json"}));
  check->add_option("--feature-gates", feature_gates,
                    "Feature gates, e.g. TaintTolerationComparisonOperators=true");
  check
      ->add_option("--taint", check_options.taint_changes,
                   "What-if: change a node's taints before checking: NODE SPEC or NODE=SPEC in "
                   "the kubectl taint grammar (key=value:Effect, key:Effect-, key-); repeatable")
      ->expected(1, 2)
      ->allow_extra_args(false);
  CLI::Option* check_server = check->add_option(
      "--server", check_options.server,
      "Check against this live API server's nodes and pods (http(s)://host:port; as "
      "kubectl's --server, it keeps the kubeconfig's credentials and CA)");
  CLI::Option* check_kubeconfig = check->add_option(
      "--kubeconfig", check_options.kubeconfig,
      "Check against the live cluster of this kubeconfig (default $KUBECONFIG or ~/.kube/config "
      "when --context is given)");
  CLI::Option* check_context =
      check->add_option("--context", check_options.context, "The kubeconfig context to use");
  check->add_option("--config", check_options.scheduler_config,
                    "The scheduler's KubeSchedulerConfiguration, as given to kubetaint serve");

  kt::cli::ServeOptions serve_options;
  std::string serve_gates;
  CLI::App* serve = app.add_subcommand(
      "serve", "Run the Kubernetes API server that kubectl talks to, until SIGINT or SIGTERM");
  serve->add_option("--listen", serve_options.listen, "HOST:PORT to listen on; port 0 picks one")
      ->capture_default_str();
  serve
      ->add_option("--data-dir", serve_options.data_dir,
                   "Directory for the database and kubeconfig")
      ->capture_default_str();
  serve->add_option("--store", serve_options.store, "Storage backend: sqlite or memory")
      ->check(CLI::IsMember({"sqlite", "memory"}))
      ->capture_default_str();
  serve->add_option("--kubeconfig", serve_options.kubeconfig,
                    "Where to write the kubeconfig (default DATA_DIR/kubeconfig)");
  // kube-apiserver's secure serving and authentication flags.
  serve->add_option("--tls-cert-file", serve_options.tls_cert_file,
                    "File containing the default x509 certificate for HTTPS (CA cert, if any, "
                    "concatenated after server cert). If neither this nor --tls-private-key-file "
                    "is given, a self-signed CA and a serving certificate are generated under "
                    "DATA_DIR/pki");
  serve->add_option("--tls-private-key-file", serve_options.tls_private_key_file,
                    "File containing the default x509 private key matching --tls-cert-file");
  serve
      ->add_option("--tls-san", serve_options.tls_sans,
                   "Extra host names or IP addresses for the generated serving certificate "
                   "(repeat, or separate with commas)")
      ->delimiter(',');
  serve->add_option("--client-ca-file", serve_options.client_ca_file,
                    "If set, any request presenting a client certificate signed by one of the "
                    "authorities in the client-ca-file is authenticated with an identity "
                    "corresponding to the CommonName of the client certificate (DATA_DIR/pki's "
                    "CA, which signs the kubeconfig's certificate, is trusted as well)");
  serve->add_option("--token-auth-file", serve_options.token_auth_file,
                    "If set, the file that will be used to secure the secure port of the API "
                    "server via token authentication");
  serve
      ->add_flag("--anonymous-auth{true}", serve_options.anonymous_auth,
                 "Enables anonymous requests to the secure port of the API server. Requests "
                 "that are not rejected by another authentication method are treated as "
                 "anonymous requests (user system:anonymous, group system:unauthenticated), "
                 "allowed only /healthz, /livez, /readyz and /version")
      ->capture_default_str();
  serve
      ->add_option("--insecure-port", serve_options.insecure_port,
                   "Also serve plain HTTP, without authentication, on this port (0 picks one; "
                   "-1, the default, disables it). For benchmarks and local tools only")
      ->capture_default_str();
  serve
      ->add_option("--insecure-bind-address", serve_options.insecure_bind_address,
                   "The address --insecure-port listens on")
      ->capture_default_str();
  serve
      ->add_flag("--managed-fields-on-create", serve_options.managed_fields_on_create,
                 "Record metadata.managedFields from every object's creation, as kube-apiserver "
                 "does, rather than from its first server-side apply (costs each create tens of "
                 "microseconds and roughly doubles a stored pod)")
      ->capture_default_str();
  serve->add_option("--feature-gates", serve_gates,
                    "Feature gates, e.g. TaintTolerationComparisonOperators=true");
  serve
      ->add_option("--nodes", serve_options.nodes,
                   "Run N simulated kubelets, nodes node1..nodeN, in this process")
      ->check(CLI::NonNegativeNumber);
  std::string serve_status_frequency = "10s";
  serve
      ->add_option("--node-status-update-frequency", serve_status_frequency,
                   "Specifies how often the simulated kubelets compute node status (and post it "
                   "when it changed, or every 5m0s)")
      ->capture_default_str();
  serve->add_option("-v,--v", serve_options.verbosity,
                    "Log verbosity (upstream levels; 2 and above log every request)");
  serve
      ->add_option("--background-nice", serve_options.background_nice,
                   "Nice levels (0 to 19) below the API server's request threads at which the "
                   "scheduler, the controllers and the watch fan-out run, so that on a busy "
                   "machine answers to clients do not wait behind them (0: same priority)")
      ->capture_default_str();
  std::string serve_heap_pages = "auto";
  serve
      ->add_option("--heap-pages", serve_heap_pages,
                   "Page size of the heap's new memory: auto (2m where a 4 KB page fault is dear, "
                   "as under some hypervisors; else 4k), 4k, or 2m (transparent huge pages)")
      ->capture_default_str();
  CLI::Option* scheduler_name =
      serve
          ->add_option("--scheduler-name", serve_options.scheduler_name,
                       "Name of the scheduler's profile; pods naming another scheduler are left "
                       "alone")
          ->capture_default_str();
  serve->add_option("--config", serve_options.scheduler_config,
                    "KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1): profiles, "
                    "plugins, weights, percentageOfNodesToScore");
  serve->add_flag("--disable-scheduler", serve_options.disable_scheduler,
                  "Do not run the scheduler (pods stay Pending)");
  serve
      ->add_option("--controllers", serve_options.controllers,
                   "Components to run: '*' runs every one on by default, 'name' enables one, "
                   "'-name' disables one (known: scheduler, taint-eviction-controller, "
                   "pod-garbage-collector, node-lifecycle-controller, daemonset-controller, "
                   "garbage-collector-controller)")
      ->delimiter(',')
      ->capture_default_str();

  std::string terminated_threshold = "12500";
  serve
      ->add_option("--terminated-pod-gc-threshold", terminated_threshold,
                   "Number of terminated pods that can exist before the terminated pod garbage "
                   "collector starts deleting terminated pods. If <= 0, the terminated pod "
                   "garbage collector is disabled.")
      ->capture_default_str();

  std::string plugin_names;
  std::string default_on;
  for (const kt::admission::PluginInfo& p : kt::admission::KnownPlugins()) {
    plugin_names += plugin_names.empty() ? "" : ", ";
    plugin_names += p.name;
    if (!p.default_on) continue;
    default_on += default_on.empty() ? "" : ", ";
    default_on += p.name;
  }
  serve
      ->add_option(
          "--enable-admission-plugins", serve_options.admission.enable_plugins,
          "admission plugins that should be enabled in addition to default enabled ones (" +
              default_on + "). Comma-delimited list of admission plugins: " + plugin_names +
              ". The order of plugins in this flag does not matter.")
      ->delimiter(',');
  serve
      ->add_option("--disable-admission-plugins", serve_options.admission.disable_plugins,
                   "admission plugins that should be disabled although they are in the default "
                   "enabled plugins list (" +
                       default_on + "). Comma-delimited list of admission plugins: " +
                       plugin_names + ". The order of plugins in this flag does not matter.")
      ->delimiter(',');
  std::string admission_config_file;
  serve->add_option("--admission-control-config-file", admission_config_file,
                    "File with admission control configuration.");
  // int64 flags, read as Go's pflag reads them (strconv.ParseInt) to refuse out-of-range values.
  std::string not_ready_seconds = "300";
  std::string unreachable_seconds = "300";
  serve
      ->add_option("--default-not-ready-toleration-seconds", not_ready_seconds,
                   "Indicates the tolerationSeconds of the toleration for notReady:NoExecute that "
                   "is added by default to every pod that does not already have such a toleration.")
      ->capture_default_str();
  serve
      ->add_option("--default-unreachable-toleration-seconds", unreachable_seconds,
                   "Indicates the tolerationSeconds of the toleration for unreachable:NoExecute "
                   "that is added by default to every pod that does not already have such a "
                   "toleration.")
      ->capture_default_str();

  // kube-controller-manager's node lifecycle flags, read as pflag reads them.
  std::string node_monitor_period = "5s";
  std::string node_monitor_grace_period = "50s";
  std::string node_startup_grace_period = "1m0s";
  std::string node_eviction_rate = "0.1";
  std::string secondary_node_eviction_rate = "0.01";
  std::string unhealthy_zone_threshold = "0.55";
  std::string large_cluster_size_threshold = "50";
  serve
      ->add_option("--node-monitor-period", node_monitor_period,
                   "The period for syncing NodeStatus in NodeController.")
      ->capture_default_str();
  serve
      ->add_option("--node-monitor-grace-period", node_monitor_grace_period,
                   "Amount of time which we allow running Node to be unresponsive before marking "
                   "it unhealthy. Must be N times more than kubelet's nodeStatusUpdateFrequency, "
                   "where N means number of retries allowed for kubelet to post node status.")
      ->capture_default_str();
  serve
      ->add_option("--node-startup-grace-period", node_startup_grace_period,
                   "Amount of time which we allow starting Node to be unresponsive before "
                   "marking it unhealthy.")
      ->capture_default_str();
  serve
      ->add_option("--node-eviction-rate", node_eviction_rate,
                   "Number of nodes per second on which pods are deleted in case of node failure "
                   "when a zone is healthy (see --unhealthy-zone-threshold for definition of "
                   "healthy/unhealthy). Zone refers to entire cluster in non-multizone clusters.")
      ->capture_default_str();
  serve
      ->add_option("--secondary-node-eviction-rate", secondary_node_eviction_rate,
                   "Number of nodes per second on which pods are deleted in case of node failure "
                   "when a zone is unhealthy (see --unhealthy-zone-threshold for definition of "
                   "healthy/unhealthy). Zone refers to entire cluster in non-multizone clusters. "
                   "This value is implicitly overridden to 0 if the cluster size is smaller than "
                   "--large-cluster-size-threshold.")
      ->capture_default_str();
  serve
      ->add_option("--unhealthy-zone-threshold", unhealthy_zone_threshold,
                   "Fraction of Nodes in a zone which needs to be not Ready (minimum 3) for zone "
                   "to be treated as unhealthy. ")
      ->capture_default_str();
  serve
      ->add_option("--large-cluster-size-threshold", large_cluster_size_threshold,
                   "Number of nodes from which node-lifecycle-controller treats the cluster as "
                   "large for the eviction logic purposes. --secondary-node-eviction-rate is "
                   "implicitly overridden to 0 for clusters this size or smaller.")
      ->capture_default_str();
  kt::cli::KubeletOptions kubelet_options;
  std::string kubelet_status_frequency = "10s";
  CLI::App* kubelet = app.add_subcommand(
      "kubelet",
      "Run simulated kubelets (nodes that register, heartbeat and run pods) against an API "
      "server, until SIGINT or SIGTERM");
  kubelet->add_option("--kubeconfig", kubelet_options.kubeconfig,
                      "Path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)");
  kubelet->add_option("--context", kubelet_options.context, "The kubeconfig context to use");
  kubelet->add_option("--nodes", kubelet_options.nodes, "How many nodes")->capture_default_str();
  kubelet->add_option("--prefix", kubelet_options.prefix, "Node names: PREFIX<number>")
      ->capture_default_str();
  kubelet->add_option("--first", kubelet_options.first, "The first node's number")
      ->capture_default_str();
  kubelet->add_option("--zones", kubelet_options.zones,
                      "Zones, e.g. a,b,c: node i gets topology.kubernetes.io/zone of the i-th, "
                      "round robin");
  kubelet->add_option("--capacity", kubelet_options.capacity,
                      "Capacity and allocatable, e.g. cpu=4,memory=16Gi,pods=110,nvidia.com/gpu=1 "
                      "(default cpu=4,ephemeral-storage=100Gi,memory=16Gi,pods=110)");
  kubelet->add_option("--taints,--register-with-taints", kubelet_options.taints,
                      "Taints the nodes register with, e.g. gpu=true:NoSchedule");
  kubelet
      ->add_option("--node-status-update-frequency", kubelet_status_frequency,
                   "Specifies how often the kubelets compute node status (and post it when it "
                   "changed, or every 5m0s)")
      ->capture_default_str();
  kubelet
      ->add_option("--node-lease-duration-seconds", kubelet_options.node_lease_duration_seconds,
                   "The duration the kubelets set on their node leases; they renew them every "
                   "quarter of it")
      ->capture_default_str();

  // Upstream components take `-v=2`; CLI11 reads `=` only after long names, so give it `--v=2`.
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) {
    std::string arg = argv[i];
    if (arg.rfind("-v=", 0) == 0) arg.insert(0, "-");
    args.push_back(std::move(arg));
  }

  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (what.empty()) what = "invalid command line";
    return Fail(what + " (run 'kubetaint --help' for usage)");
  }

  if (version->parsed()) {
    std::cout << kt::VersionLine() << "\n";
    return 0;
  }
  if (serve->parsed()) {
    if (kt::Status s = kt::ParseFeatureGates(serve_gates, serve_options.gates); !s.ok()) {
      return Fail("--feature-gates: " + s.message());
    }
    for (auto [flag, text, out] :
         {std::tuple{"--default-not-ready-toleration-seconds", &not_ready_seconds,
                     &serve_options.admission.default_not_ready_toleration_seconds},
          std::tuple{"--default-unreachable-toleration-seconds", &unreachable_seconds,
                     &serve_options.admission.default_unreachable_toleration_seconds},
          std::tuple{"--terminated-pod-gc-threshold", &terminated_threshold,
                     &serve_options.terminated_pod_gc_threshold}}) {
      if (std::string error = ParseInt64Flag(flag, *text, out); !error.empty()) return Fail(error);
    }
    for (auto [flag, text, out] :
         {std::tuple{"--node-monitor-period", &node_monitor_period,
                     &serve_options.node_monitor_period},
          std::tuple{"--node-monitor-grace-period", &node_monitor_grace_period,
                     &serve_options.node_monitor_grace_period},
          std::tuple{"--node-startup-grace-period", &node_startup_grace_period,
                     &serve_options.node_startup_grace_period}}) {
      if (std::string error = ParseDurationFlag(flag, *text, out); !error.empty()) {
        return Fail(error);
      }
    }
    for (auto [flag, text, out] :
         {std::tuple{"--node-eviction-rate", &node_eviction_rate,
                     &serve_options.node_eviction_rate},
          std::tuple{"--secondary-node-eviction-rate", &secondary_node_eviction_rate,
                     &serve_options.secondary_node_eviction_rate},
          std::tuple{"--unhealthy-zone-threshold", &unhealthy_zone_threshold,
                     &serve_options.unhealthy_zone_threshold}}) {
      if (std::string error = ParseFloat32Flag(flag, *text, out); !error.empty()) {
        return Fail(error);
      }
    }
    if (std::string error =
            ParseInt32Flag("--large-cluster-size-threshold", large_cluster_size_threshold,
                           &serve_options.large_cluster_size_threshold);
        !error.empty()) {
      return Fail(error);
    }
    // Upstream takes these as given; values that would make the controller spin or count
    // tokens backwards are refused here.
    if (serve_options.node_monitor_period <= std::chrono::nanoseconds::zero()) {
      return Fail("--node-monitor-period: must be greater than 0, not " + node_monitor_period);
    }
    for (auto [flag, text, value] :
         {std::tuple{"--node-eviction-rate", &node_eviction_rate, serve_options.node_eviction_rate},
          std::tuple{"--secondary-node-eviction-rate", &secondary_node_eviction_rate,
                     serve_options.secondary_node_eviction_rate}}) {
      if (!(value >= 0) || std::isinf(value)) {
        return Fail(std::string(flag) +
                    ": must be a finite number of nodes per second, 0 or more, "
                    "not " +
                    *text);
      }
    }
    if (!admission_config_file.empty()) {
      auto plugins = kt::admission::ReadAdmissionConfiguration(admission_config_file);
      if (!plugins) return Fail(plugins.error().message());
      serve_options.admission.plugin_configs = std::move(*plugins);
    }
    // kube-apiserver's checks of the admission flags and of the enabled plugins' configuration,
    // with its messages.
    if (auto chain = kt::admission::NewChain(serve_options.admission); !chain) {
      return Fail(chain.error().message());
    }
    if (std::string error =
            ParseDurationFlag("--node-status-update-frequency", serve_status_frequency,
                              &serve_options.node_status_update_frequency);
        !error.empty()) {
      return Fail(error);
    }
    if (serve_options.node_status_update_frequency <= std::chrono::nanoseconds::zero()) {
      return Fail("--node-status-update-frequency: must be greater than 0, not " +
                  serve_status_frequency);
    }
    serve_options.scheduler_name_set = scheduler_name->count() > 0;
    if (std::string error = kt::cli::HeapPagesModeError(serve_heap_pages); !error.empty()) {
      return Fail(error);
    }
#ifdef KUBETAINT_JEMALLOC
    serve_options.choose_heap_pages = [&serve_heap_pages] {
      return kt::cli::ChooseHeapPages(serve_heap_pages);
    };
#endif  // else glibc's malloc (the sanitizer builds), and the kernel decides
    kt::cli::BlockStopSignals();
    return kt::cli::RunServe(serve_options);
  }
  if (kubelet->parsed()) {
    if (std::string error =
            ParseDurationFlag("--node-status-update-frequency", kubelet_status_frequency,
                              &kubelet_options.node_status_update_frequency);
        !error.empty()) {
      return Fail(error);
    }
    if (kubelet_options.node_status_update_frequency <= std::chrono::nanoseconds::zero()) {
      return Fail("--node-status-update-frequency: must be greater than 0, not " +
                  kubelet_status_frequency);
    }
    kt::cli::BlockStopSignals();
    return kt::cli::RunKubelet(kubelet_options);
  }
  if (check->parsed()) {
    if (kt::Status s = kt::ParseFeatureGates(feature_gates, check_options.gates); !s.ok()) {
      return Fail("--feature-gates: " + s.message());
    }
    check_options.live =
        check_server->count() > 0 || check_kubeconfig->count() > 0 || check_context->count() > 0;
    if (check_options.files.empty() && !check_options.live) {
      return Fail(
          "check: -f,--filename is required (or --server / --kubeconfig for a live "
          "cluster)");
    }
    auto report = kt::cli::RunCheck(check_options);
    if (!report) return Fail(report.error().message());
    if (check_options.output == "json") {
      kt::cli::WriteCheckJson(*report, std::cout);
    } else {
      kt::cli::WriteCheckText(*report, std::cout);
    }
    return kt::cli::CheckExitCode(*report);
  }
  return 0;
}
