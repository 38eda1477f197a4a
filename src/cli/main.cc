// kubetaint: the command line. CLI11 is included here and nowhere else (it is slow to compile).
#include <malloc.h>

#include <iostream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <CLI/CLI.hpp>

#include "admission/chain.h"
#include "cli/check.h"
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
      "Check against this live API server's nodes and pods (http(s)://host:port)");
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
  serve->add_option("--feature-gates", serve_gates,
                    "Feature gates, e.g. TaintTolerationComparisonOperators=true");
  serve->add_option("--nodes", serve_options.nodes, "Register N demo nodes node1..nodeN")
      ->check(CLI::NonNegativeNumber);
  serve->add_option("-v,--v", serve_options.verbosity,
                    "Log verbosity (upstream levels; 2 and above log every request)");
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
                   "daemonset-controller)")
      ->delimiter(',')
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
                     &serve_options.admission.default_unreachable_toleration_seconds}}) {
      if (std::string error = ParseInt64Flag(flag, *text, out); !error.empty()) return Fail(error);
    }
    // kube-apiserver's checks of the admission flags, with its messages.
    if (auto enabled =
            kt::admission::EnabledPlugins(kt::admission::KnownPlugins(), serve_options.admission);
        !enabled) {
      return Fail(enabled.error().message());
    }
    serve_options.scheduler_name_set = scheduler_name->count() > 0;
    kt::cli::BlockStopSignals();
    return kt::cli::RunServe(serve_options);
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
