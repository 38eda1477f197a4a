#!/usr/bin/env bash
# The main job: build kubetaint and start its API server with three simulated, heartbeating nodes, on 127.0.0.1:6443
# with its state in ./kubetaint-data (SQLite). Point kubectl at ./kubetaint-data/kubeconfig.
# Stops on Ctrl-C (SIGINT) or SIGTERM. Extra arguments go to `kubetaint serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
exec build/kubetaint serve --nodes 3 "$@"
