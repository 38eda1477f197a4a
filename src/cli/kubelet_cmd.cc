#include "cli/kubelet_cmd.h"

#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/serve.h"
#include "client/client.h"
#include "client/clock.h"
#include "client/informer.h"
#include "client/rest/http_client.h"
#include "client/rest/kubeconfig.h"
#include "client/rest/transport.h"
#include "kubelet/kubelet.h"
#include "server/resources.h"

namespace kt::cli {

namespace {

int Bad(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return 2;
}

}  // namespace

int RunKubelet(const KubeletOptions& options) {
  if (options.nodes < 1) return Bad("--nodes: must be at least 1");
  if (options.first < 0) return Bad("--first: must not be negative");
  if (options.prefix.empty()) return Bad("--prefix: must not be empty");
  if (options.node_lease_duration_seconds <= 0) {
    return Bad("--node-lease-duration-seconds: must be greater than 0");
  }
  kubelet::NodeTemplate node;
  node.prefix = options.prefix;
  node.first = options.first;
  node.count = options.nodes;
  for (size_t start = 0; start < options.zones.size();) {
    size_t comma = options.zones.find(',', start);
    if (comma == std::string::npos) comma = options.zones.size();
    if (comma > start) node.zones.push_back(options.zones.substr(start, comma - start));
    start = comma + 1;
  }
  if (Status s = kubelet::ParseCapacity(options.capacity, &node); !s.ok()) return Bad(s.message());
  Result<std::vector<Taint>> taints = kubelet::ParseRegisterTaints(options.taints);
  if (!taints) return Bad(taints.error().message());
  node.taints = std::move(*taints);

  const std::string path =
      options.kubeconfig.empty() ? client::DefaultKubeconfigPath() : options.kubeconfig;
  Result<client::RestConfig> config = client::LoadKubeconfig(path, options.context);
  if (!config) return Bad("--kubeconfig " + path + ": " + config.error().message());
  Result<std::unique_ptr<client::RestTransport>> transport = client::RestTransport::New(*config);
  if (!transport) return Bad(transport.error().message());
  std::unique_ptr<client::Clock> clock = client::NewRealClock();
  std::unique_ptr<client::Client> client = client::NewHttpClient(transport->get());
  // Heartbeats on their own workers (and so their own connections), as upstream's kubelet.
  std::unique_ptr<client::Client> heartbeats = client::NewHttpClient(transport->get(), 2);

  kubelet::Kubelets::Options ko;
  ko.clock = clock.get();
  ko.client = client.get();
  ko.heartbeat_client = heartbeats.get();
  ko.pods = client::NewHttpListerWatcher(transport->get(), server::Info(server::Resource::kPods));
  ko.nodes = client::NewHttpListerWatcher(transport->get(), server::Info(server::Resource::kNodes));
  ko.node = node;
  ko.status_update_frequency = options.node_status_update_frequency;
  ko.lease_duration = std::chrono::seconds(options.node_lease_duration_seconds);
  kubelet::Kubelets kubelets(std::move(ko));
  kubelets.Start();
  if (!kubelets.WaitRegistered(std::chrono::steady_clock::now() + std::chrono::seconds(120))) {
    std::cerr << "error: the nodes did not register with " << config->server << " within 120 s\n";
    return 1;
  }
  std::printf("kubetaint kubelet: %d nodes %s%d..%s%d registered with %s\n", options.nodes,
              options.prefix.c_str(), options.first, options.prefix.c_str(),
              options.first + options.nodes - 1, config->server.c_str());
  std::fflush(stdout);

  WaitForStopSignal("kubetaint kubelet");
  kubelets.Stop();
  return 0;
}

}  // namespace kt::cli
