#!/usr/bin/env bash
# Simulated kubelets at scale (issue target: 5,000 heartbeating nodes in <= 10 % of one core and
# <= 100 MB): a fresh `kubetaint serve` (SQLite, scheduler on, no nodes of its own) and one
# `kubetaint kubelet --nodes N` process against it over HTTP. Once every node has registered,
# the kubelet process's CPU and RSS are sampled over a steady window (lease renewals every 10 s,
# status computed every 10 s and posted every 5 min), with the server's CPU beside them.
#
#   bench/kubelet_load.sh [BUILD_DIR]          NODES=5000 WINDOW=60 RUNS=3
#
# Kills only the PIDs it started; removes its temporary directory on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${1:-build}
NODES=${NODES:-5000}
WINDOW=${WINDOW:-60}
RUNS=${RUNS:-3}
BIN=${BIN:-$BUILD/kubetaint}
[ "${SKIP_BUILD:-0}" = 1 ] || cmake --build "$BUILD" --target kubetaint >/dev/null
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kubetaint-kubelet-load.XXXXXX")
# shellcheck source=bench/server.sh
source bench/server.sh
KUBELET_PID=""
cleanup() {
  [ -n "$KUBELET_PID" ] && kill -TERM "$KUBELET_PID" 2>/dev/null && wait "$KUBELET_PID" 2>/dev/null
  stop_server
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_mb() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
hz=$(getconf CLK_TCK)

for r in $(seq 1 "$RUNS"); do
  start_server "$BIN" "$TMP/d$r" "$TMP/s$r"
  t0=$(date +%s.%N)
  "$BIN" kubelet --kubeconfig "$TMP/d$r/kubeconfig" --nodes "$NODES" --prefix sim- \
    --zones zone-a,zone-b,zone-c >"$TMP/k$r.out" 2>"$TMP/k$r.err" &
  KUBELET_PID=$!
  for _ in $(seq 1 1200); do grep -q registered "$TMP/k$r.out" && break; sleep 0.1; done
  grep -q registered "$TMP/k$r.out" || { cat "$TMP/k$r.err"; exit 1; }
  t1=$(date +%s.%N)
  sleep 15  # the registration burst's writes settle; the first lease renewals pass
  k0=$(ticks "$KUBELET_PID"); s0=$(ticks "$SERVER_PID"); w0=$(date +%s.%N)
  sleep "$WINDOW"
  k1=$(ticks "$KUBELET_PID"); s1=$(ticks "$SERVER_PID"); w1=$(date +%s.%N)
  # Leases renewed within the last 15 s (every node renews every 10 s).
  leases=$(curl -s "$URL/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases" |
    python3 -c '
import datetime, json, sys
now = datetime.datetime.now(datetime.timezone.utc)
items = json.load(sys.stdin)["items"]
fresh = [l for l in items if (now - datetime.datetime.fromisoformat(
    l["spec"]["renewTime"].replace("Z", "+00:00"))).total_seconds() < 15]
print(len(fresh))')
  awk -v n="$NODES" -v reg="$(echo "$t1 - $t0" | bc)" -v k=$((k1 - k0)) -v s=$((s1 - s0)) \
    -v w="$(echo "$w1 - $w0" | bc)" -v hz="$hz" -v rss="$(rss_mb "$KUBELET_PID")" \
    -v srss="$(rss_mb "$SERVER_PID")" -v leases="$leases" 'BEGIN {
      printf "run result: nodes %d registered_s %.1f fresh_leases %d kubelet_core_pct %.2f kubelet_rss_mb %.1f server_core_pct %.2f server_rss_mb %.1f window_s %.0f\n",
        n, reg, leases, 100 * k / hz / w, rss, 100 * s / hz / w, srss, w }'
  kill -TERM "$KUBELET_PID"; wait "$KUBELET_PID" 2>/dev/null || true; KUBELET_PID=""
  stop_server
done
