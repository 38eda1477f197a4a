#!/usr/bin/env bash
# The NoExecute taint eviction controller end to end (DESIGN.md "Targets": 100,000 pods to evict,
# all gone in <= 10 s), against the real binary on SQLite with the scheduler off:
#   1. mass eviction: 1,000 nodes x 100 pods bound to them (none tolerating the taint), every node
#      tainted bench/evict=x:NoExecute at once by 16 connections; the time from the first taint
#      PATCH to the last pod's DELETED event on a pod watch; the DisruptionTarget conditions seen
#      in the watch and the TaintManagerEviction events counted afterwards;
#   2. one node at a time: 200 nodes x 110 pods, tainted one after the other; per node, the time
#      from the PATCH's answer to the DELETED event of the last of its 110 pods (p50/p99).
# Each run of each scenario starts a fresh server in a fresh data dir (the evictions consume the
# pods); the driver is build/bench/api_load (commands evict and evict-node).
#
#   bench/eviction_e2e.sh [BUILD_DIR]        (default build/; builds kubetaint and api_load first)
#   RUNS=3 NODES=1000 PER_NODE=100 SEQ_NODES=200 SEQ_PER_NODE=110 bench/eviction_e2e.sh
#   ONLY=mass|node bench/eviction_e2e.sh     (one scenario)
#
# The script kills only the server PIDs it started and removes its temporary directory on exit.
# Bounded: every step has a timeout. On 2 cores a mass run takes 1-2 minutes (populating 100,000
# pods over HTTP is most of it), a one-node-at-a-time run about 20 s.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${1:-build}
RUNS=${RUNS:-3}
NODES=${NODES:-1000}
PER_NODE=${PER_NODE:-100}
SEQ_NODES=${SEQ_NODES:-200}
SEQ_PER_NODE=${SEQ_PER_NODE:-110}
ONLY=${ONLY:-}

# shellcheck source=bench/server.sh
source bench/server.sh
bench_setup evict-e2e

run() {  # a bounded api_load step
  echo "\$ api_load $* --url $URL --pid $SERVER_PID   [loadavg $(cut -d' ' -f1-3 /proc/loadavg)]"
  timeout 600 "$LOAD" "$@" --url "$URL" --pid "$SERVER_PID" || echo "(api_load exited with $?)"
}

# median/min/max of the values of KEY on the "PREFIX result:" lines of the log
stats() {
  local prefix=$1 key=$2
  grep -F "$prefix result:" "$LOG" | grep -v '^\$' |
    awk -v k="$key" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' | sort -g |
    awk '{ v[NR] = $1 } END {
      if (NR == 0) { print "n/a"; exit }
      printf "median %s (min %s, max %s, %d runs)", v[int((NR + 1) / 2)], v[1], v[NR], NR }'
}

LOG=$TMP/log.txt
exec > >(tee "$LOG") 2>&1
echo "== kubetaint taint eviction end to end: SQLite, scheduler off, $(nproc) cores, runs=$RUNS, $BIN"

if [ "$ONLY" != node ]; then
  for r in $(seq 1 "$RUNS"); do
    echo "== 1. mass eviction, run $r: $NODES nodes x $PER_NODE pods, all nodes tainted at once"
    start_server "$BIN" "$TMP/mass$r" "$TMP/mass$r" "${NO_KUBELETS[@]}" --disable-scheduler
    run evict --nodes "$NODES" --pods-per-node "$PER_NODE" --conns 16 --timeout 120
    stop_server
    rm -rf "$TMP/mass$r"
  done
fi
if [ "$ONLY" != mass ]; then
  for r in $(seq 1 "$RUNS"); do
    echo "== 2. one node at a time, run $r: $SEQ_NODES nodes x $SEQ_PER_NODE pods"
    start_server "$BIN" "$TMP/node$r" "$TMP/node$r" "${NO_KUBELETS[@]}" --disable-scheduler
    run evict-node --nodes "$SEQ_NODES" --pods-per-node "$SEQ_PER_NODE" --conns 16
    stop_server
    rm -rf "$TMP/node$r"
  done
fi

echo "== summary"
if [ "$ONLY" != node ]; then
  echo "(evict) first taint PATCH -> last of $((NODES * PER_NODE)) pods deleted (s): $(stats '(evict)' all_deleted_s); target <= 10 s"
  echo "(evict) the $NODES taint PATCHes themselves (s): $(stats '(evict)' patches_s)"
  echo "(evict) half the pods deleted by (s): $(stats '(evict)' p50_deleted_s)"
  echo "(evict) pods with DisruptionTarget read before their DELETED: $(stats '(evict)' disruption_target_before_delete)"
  echo "(evict) \"Marking for deletion\" events: $(stats '(evict)' marking_events)"
  echo "(evict) server CPU during the evictions (s): $(stats '(evict)' server_cpu_s)"
fi
if [ "$ONLY" != mass ]; then
  echo "(evict-node) PATCH answer -> last of $SEQ_PER_NODE pods deleted, p50 (ms): $(stats '(evict-node)' p50_ms)"
  echo "(evict-node) PATCH answer -> last of $SEQ_PER_NODE pods deleted, p99 (ms): $(stats '(evict-node)' p99_ms)"
  echo "(evict-node) max (ms): $(stats '(evict-node)' max_ms)"
  grep -F '(evict-node) samples_ms:' "$LOG" | grep -v '^\$' | sed 's/.*samples_ms://' | tr ' ' '\n' |
    grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END {
      if (NR == 0) exit
      i50 = int(NR * 0.5 + 0.999); i99 = int(NR * 0.99 + 0.999)
      printf "(evict-node) all runs pooled, %d nodes: p50 %s ms, p99 %s ms, max %s ms\n", NR, v[i50], v[i99], v[NR] }'
fi
echo "== done"
