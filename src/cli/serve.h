// `kubetaint serve`: the API server the stock kubectl talks to, on embedded SQLite (or memory).
#pragma once

#include <string>

#include "core/feature_gates.h"

namespace kt::cli {

struct ServeOptions {
  std::string listen = "127.0.0.1:6443";
  std::string data_dir = "./kubetaint-data";
  std::string store = "sqlite";  // sqlite | memory
  std::string kubeconfig;        // default DATA_DIR/kubeconfig
  FeatureGates gates;
  int nodes = 0;      // demo nodes node1..nodeN
  int verbosity = 0;  // upstream -v; 2 and above log every request
};

// Blocks SIGINT and SIGTERM in the calling thread; call before any thread starts, so that
// RunServe can wait for them.
void BlockStopSignals();

// Serves until SIGINT or SIGTERM, then stops cleanly. Returns the process exit status; errors
// are printed as one line on stderr.
int RunServe(const ServeOptions& options);

}  // namespace kt::cli
