// `kubetaint kubelet`: simulated kubelets (kubelet/kubelet.h) in their own process, against any
// API server named by a kubeconfig, until SIGINT or SIGTERM.
//
//   kubetaint kubelet --kubeconfig kubetaint-data/kubeconfig --nodes 100 --prefix edge-
//       --zones a,b,c --capacity cpu=8,nvidia.com/gpu=1 --taints gpu=true:NoSchedule
#pragma once

#include <chrono>
#include <string>

namespace kt::cli {

struct KubeletOptions {
  std::string kubeconfig;  // empty: $KUBECONFIG or ~/.kube/config
  std::string context;
  int nodes = 1;
  int first = 1;
  std::string prefix = "node-";
  std::string zones;     // "a,b,c"
  std::string capacity;  // "cpu=4,memory=16Gi"
  std::string taints;    // "k=v:NoSchedule,..."
  std::chrono::nanoseconds node_status_update_frequency = std::chrono::seconds(10);
  int node_lease_duration_seconds = 40;  // renewed every quarter of it
};

// Runs until SIGINT or SIGTERM (block them first: BlockStopSignals). Returns the exit status;
// bad options print one line on stderr and return 2.
int RunKubelet(const KubeletOptions& options);

}  // namespace kt::cli
