#!/usr/bin/env bash
# The main job: build kubetaint and start its API server with three simulated, heartbeating nodes, on 127.0.0.1:6443
# with its state in ./kubetaint-data (SQLite). Point kubectl at ./kubetaint-data/kubeconfig.
# HTTPS with a CA of its own (kubetaint-data/pki); the kubeconfig trusts it and carries an admin
# client certificate. Stops on Ctrl-C (SIGINT) or SIGTERM. Extra arguments go to `kubetaint serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
echo "kubetaint: serving HTTPS; point kubectl at the kubeconfig it writes (the serving line names it):"
echo "  export KUBECONFIG=$PWD/kubetaint-data/kubeconfig     # the default --data-dir"
echo "(it holds the server's CA and an admin client certificate; kubectl uses it as it is)"
exec build/kubetaint serve --nodes 3 "$@"
