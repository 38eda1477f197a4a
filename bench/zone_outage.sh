#!/usr/bin/env bash
# A zone outage end to end (issue target: 1,000 nodes and 30,000 pods on SQLite with short grace
# flags; report the wall time from the last heartbeat to the last eviction and the server's CPU
# time for it), against the real binary:
#   - `kubetaint serve` on SQLite with three simulated nodes of its own (no zone: the healthy
#     rest of the cluster, so that not every zone is down) and the short flags below;
#   - one `kubetaint kubelet` process with NODES nodes node-1.. in zone `outage`, renewing their
#     leases every 2 s (--node-lease-duration-seconds 8);
#   - PODS pods bound to those nodes (build/bench/api_load outage); once they run, the kubelet
#     process is SIGKILLed. The node lifecycle controller finds the nodes silent after the grace
#     period, taints them node.kubernetes.io/unreachable:NoExecute (the zone is in
#     FullDisruption, so at --node-eviction-rate), and the taint eviction controller evicts every
#     pod when its 2 s toleration ends. An eviction counts when its deletion is read on a pod
#     watch (the pods stay Terminating: their kubelets are gone).
# Short flags: --node-monitor-grace-period 8s --node-monitor-period 1s
# --default-unreachable-toleration-seconds 2 --default-not-ready-toleration-seconds 2, and the
# eviction rates raised to 1000 nodes/s (at upstream's 0.1/s, 1,000 nodes take 10,000 s).
#
#   bench/zone_outage.sh [BUILD_DIR]        NODES=1000 PODS=30000 RUNS=3
#
# Kills only the PIDs it started; removes its temporary directory on exit. A run takes about
# 1-2 minutes on 2 cores (creating the pods and their kubelets taking them to Running is most).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${1:-build}
NODES=${NODES:-1000}
PODS=${PODS:-30000}
RUNS=${RUNS:-3}
BIN=${BIN:-$BUILD/kubetaint}
LOAD=$BUILD/bench/api_load
[ "${SKIP_BUILD:-0}" = 1 ] || cmake --build "$BUILD" --target kubetaint api_load >/dev/null
[ -x "$BIN" ] && [ -x "$LOAD" ] || { echo "missing $BIN or $LOAD" >&2; exit 1; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/kubetaint-zone-outage.XXXXXX")
# shellcheck source=bench/server.sh
source bench/server.sh
KUBELET_PID=""
cleanup() {
  if [ -n "$KUBELET_PID" ]; then
    kill -KILL "$KUBELET_PID" 2>/dev/null || true
    wait "$KUBELET_PID" 2>/dev/null || true
  fi
  stop_server
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

FLAGS=(--nodes 3 --node-monitor-grace-period 8s --node-monitor-period 1s
  --default-unreachable-toleration-seconds 2 --default-not-ready-toleration-seconds 2
  --node-eviction-rate 1000 --secondary-node-eviction-rate 1000)

LOG=$TMP/log.txt
exec > >(tee "$LOG") 2>&1
echo "== kubetaint zone outage: $NODES nodes, $PODS pods, SQLite, $(nproc) cores, runs=$RUNS"
for r in $(seq 1 "$RUNS"); do
  echo "== run $r [loadavg $(cut -d' ' -f1-3 /proc/loadavg)]"
  start_server "$BIN" "$TMP/d$r" "$TMP/s$r" "${FLAGS[@]}"
  "$BIN" kubelet --kubeconfig "$TMP/d$r/kubeconfig" --nodes "$NODES" --prefix node- \
    --zones outage --node-lease-duration-seconds 8 >"$TMP/k$r.out" 2>"$TMP/k$r.err" &
  KUBELET_PID=$!
  for _ in $(seq 1 1200); do
    grep -q "registered with" "$TMP/k$r.out" && break
    kill -0 "$KUBELET_PID" 2>/dev/null || { cat "$TMP/k$r.err" >&2; exit 1; }
    sleep 0.1
  done
  grep -q "registered with" "$TMP/k$r.out" || { echo "the kubelets did not register" >&2; exit 1; }
  timeout 900 "$LOAD" outage --url "$URL" --pid "$SERVER_PID" --kubelet-pid "$KUBELET_PID" \
    --nodes "$NODES" --pods "$PODS" --conns 16 --timeout 300 || echo "(api_load exited with $?)"
  rc=0
  wait "$KUBELET_PID" 2>/dev/null || rc=$?
  [ "$rc" = 137 ] || echo "the kubelet process ended with status $rc, not by the outage's SIGKILL"
  KUBELET_PID=""
  stop_server
  rm -rf "$TMP/d$r"
done

# median/min/max of the values of KEY on the "(outage) result:" lines
stats() {
  grep -F "(outage) result:" "$LOG" |
    awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' | sort -g |
    awk '{ v[NR] = $1 } END {
      if (NR == 0) { print "n/a"; exit }
      printf "median %s (min %s, max %s, %d runs)", v[int((NR + 1) / 2)], v[1], v[NR], NR }'
}
echo "== summary"
echo "last heartbeat -> last eviction (s): $(stats heartbeat_to_last_eviction_s)"
echo "last heartbeat -> first / last node tainted (s): $(stats heartbeat_to_first_taint_s) / $(stats heartbeat_to_last_taint_s)"
echo "last heartbeat -> first eviction (s): $(stats heartbeat_to_first_eviction_s)"
echo "server CPU from the kill to the last eviction (s): $(stats server_cpu_s)"
echo "== done"
