#!/usr/bin/env bash
# The training of the profile-guided build (scripts/build.sh): runs the binaries of an
# instrumented build (cmake -DKUBETAINT_PGO=GEN) through the work whose speed the project's
# targets measure, at smaller sizes, so that the optimized build (KUBETAINT_PGO=USE) is laid out
# for it: the scheduler in process (both workloads), the API server on SQLite with its scheduler
# (pods created over HTTP, both workloads, and with the scheduler off), the taint eviction
# controller evicting, and the API server's start-up, reads, lists and taint patches. Each server
# stops with SIGTERM, so that it writes its profile on the way out.
#
#   bench/pgo_train.sh BUILD_DIR      (the instrumented build: kubetaint, api_load, scheduler_perf)
#
# About 50 s on 2 cores. Every step is bounded by the scripts it runs; the first that fails
# stops the training, and the build with it.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:?usage: bench/pgo_train.sh BUILD_DIR}
for f in kubetaint bench/api_load bench/scheduler_perf; do
  [ -x "$BUILD/$f" ] || { echo "bench/pgo_train.sh: $BUILD/$f is missing" >&2; exit 1; }
done
export SKIP_BUILD=1 BIN="$BUILD/kubetaint"
step() {  # NAME COMMAND...: the command's output kept in a log, shown only if it fails
  local name=$1 start=$SECONDS status=0 log
  shift
  log=$(mktemp)
  "$@" >"$log" 2>&1 || status=$?
  if [ "$status" != 0 ]; then
    echo "bench/pgo_train.sh: $name failed (exit $status):" >&2
    tail -20 "$log" >&2
  fi
  rm -f "$log"
  [ "$status" = 0 ] || exit 1
  echo "  $name: $((SECONDS - start)) s"
}
echo "== profile-guided build: training $BUILD"
step "scheduler in process, basic" timeout 300 "$BUILD/bench/scheduler_perf" --runs 1
step "scheduler in process, taint-heavy" \
  timeout 300 "$BUILD/bench/scheduler_perf" --runs 1 --workload taints
step "scheduler end to end" env RUNS=1 bash bench/scheduler_e2e.sh "$BUILD"
step "taint eviction end to end" env RUNS=1 NODES=100 PER_NODE=100 SEQ_NODES=10 \
  SEQ_PER_NODE=110 bash bench/eviction_e2e.sh "$BUILD"
step "API server reads and writes" env NODES=500 PODS=15000 RUNS=1 SECS=1 \
  bash bench/api_load.sh "$BUILD"
