#!/usr/bin/env bash
# The scheduler end to end (issue "The scheduler ... at 10,000+ pods/s end to end"): the real
# binary on SQLite, pods created over HTTP by a separate process (build/bench/api_load) from 16
# keep-alive connections (one request in flight on each; one thread polls them all, DRIVER=threads
# for a thread per connection) while the server's scheduler binds them, after upstream
# scheduler_perf's SchedulingBasic: 5,000 nodes, 1,000 initial pods, 10,000 measured pods per run.
#   1. scheduler on: pods/s bound, creation-to-binding latency p50/p99 (targets >= 10,000 pods/s,
#      p99 <= 50 ms), the taint-heavy variant too;
#   2. scheduler off (--disable-scheduler), the same creates: the create-only rate, and the ratio.
#
#   bench/scheduler_e2e.sh [BUILD_DIR]           (default build/; builds kubetaint and api_load)
#   RUNS=3 NODES=5000 PODS=10000 bench/scheduler_e2e.sh
#
# Each server runs in a fresh temporary directory; the script kills only the server PIDs it
# started and removes the directory on exit. Bounded: every step has a timeout.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${1:-build}
NODES=${NODES:-5000}
INIT=${INIT:-1000}
PODS=${PODS:-10000}
RUNS=${RUNS:-3}

# shellcheck source=bench/server.sh
source bench/server.sh
bench_setup sched-e2e

run() {  # a bounded api_load step
  echo "\$ api_load schedule $* --url $URL --nodes $NODES --pid $SERVER_PID   [loadavg $(cut -d' ' -f1-3 /proc/loadavg)]"
  timeout 600 "$LOAD" schedule "$@" --url "$URL" --nodes "$NODES" --pid "$SERVER_PID" \
    --driver "${DRIVER:-polled}"
}

LOG=$TMP/log.txt
exec > >(tee "$LOG") 2>&1
echo "== kubetaint scheduler end to end: $NODES nodes, $INIT initial + $PODS measured pods per run, SQLite, $(nproc) cores, runs=$RUNS"

echo "== 1. scheduler on: SchedulingBasic"
start_server "$BIN" "$TMP/basic" "$TMP/basic" "${NO_KUBELETS[@]}"
run --init-pods "$INIT" --pods "$PODS" --conns 16 --runs "$RUNS"
stop_server

echo "== 1. scheduler on: taint-heavy"
start_server "$BIN" "$TMP/taints" "$TMP/taints" "${NO_KUBELETS[@]}"
run --workload taints --init-pods "$INIT" --pods "$PODS" --conns 16 --runs "$RUNS"
stop_server

echo "== 2. scheduler off: the same creates"
start_server "$BIN" "$TMP/off" "$TMP/off" "${NO_KUBELETS[@]}" --disable-scheduler
run --create-only 1 --pods "$PODS" --conns 16 --runs "$RUNS"
stop_server

echo "== summary (medians)"
grep -E "median of" "$LOG" | grep -v '^\$'
awk '/^\(sched\) basic workload/ { for (i = 1; i <= NF; i++) if ($i == "runs") { on = $(i + 1) } }
     /^\(sched, scheduler off\) pod creates: median/ { off = $(NF); sub("/s", "", off) }
     END { if (on > 0 && off > 0) printf "(sched) scheduled pods/s with the scheduler on / creates/s with it off: %.0f / %.0f = %.2f\n", on, off, on / off }' "$LOG"
echo "== done"
