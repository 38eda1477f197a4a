#!/usr/bin/env bash
# The API performance scenario of DESIGN.md "Targets" against the real binary, on SQLite:
# 5,000 nodes and 150,000 pods stored, then
#   (a) start-up on the populated data dir: exec -> "serving on" line, exec -> first GET 200
#   (b) VmRSS after loading and after restart (<= 1 GB)
#   (c) single GET p99 (random pods and nodes), 1 and 16 keep-alive connections (<= 2 ms)
#   (d) LIST one node's 30 pods by fieldSelector=spec.nodeName (p50, p99 <= 5 ms)
#   (e) node taint PATCH (strategic merge, as kubectl sends) p99 (<= 10 ms)
#   (f) pod creates/s from 16 keep-alive connections, ~2.6 KB pods spread over nodes (>= 10,000/s)
#   (g) one write reaching 100 open watches (all within 10 ms)
# plus the server's CPU time during population and the on-disk size.
#
#   bench/api_load.sh [BUILD_DIR]          (default build/; builds kubetaint and api_load first)
#   NODES=500 PODS=15000 RUNS=2 SECS=2 bench/api_load.sh     (a quick, smaller run)
#   BIN=/other/kubetaint SKIP_BUILD=1 bench/api_load.sh      (another server binary)
#
# Every figure is printed by build/bench/api_load; each is measured over RUNS runs and the
# median reported with its ratio to the target. The server runs in a fresh temporary directory;
# the script kills only the server PID it started and removes the directory on exit.
# Bounded: each step has a timeout; the whole run takes about 2-3 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${1:-build}
NODES=${NODES:-5000}
PODS=${PODS:-150000}
RUNS=${RUNS:-3}
SECS=${SECS:-4}

CLK_TCK=$(getconf CLK_TCK)
# shellcheck source=bench/server.sh
source bench/server.sh
bench_setup api-load
DATA=$TMP/data

cpu_seconds() {  # utime + stime of the server (fields 14, 15 of /proc/PID/stat)
  awk -v t="$CLK_TCK" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / t }' "/proc/$SERVER_PID/stat"
}
rss_mb() {
  awk '/^VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$SERVER_PID/status"
}
disk() {
  du -sb "$DATA" | awk '{ printf "%.0f MB", $1 / 1048576 }'
  printf ' ('; ls -l "$DATA" | awk 'NR > 1 { printf "%s %.0f MB; ", $9, $5 / 1048576 }'; printf ')'
}
run() {  # a bounded api_load step
  echo "\$ api_load $* --url $URL --nodes $NODES --pid $SERVER_PID   [loadavg $(cut -d' ' -f1-3 /proc/loadavg)]"
  timeout 300 "$LOAD" "$@" --url "$URL" --nodes "$NODES" --pid "$SERVER_PID"
}

LOG=$TMP/log.txt
exec > >(tee "$LOG") 2>&1
echo "== kubetaint API load: $NODES nodes, $PODS pods, SQLite, $(nproc) cores, runs=$RUNS x ${SECS}s, $BIN"
start_server "$BIN" "$DATA" "$TMP/server" "${NO_KUBELETS[@]}"

echo "== populate over HTTP (also figure (f))"
cpu0=$(cpu_seconds)
t0=$(date +%s.%N)
run populate --pods "$PODS" --conns 16 --segments 10
t1=$(date +%s.%N)
cpu1=$(cpu_seconds)
awk -v a="$cpu0" -v b="$cpu1" -v s="$t0" -v e="$t1" -v n="$PODS" 'BEGIN {
  printf "(populate) server CPU during population: %.1f s for %.1f s wall (%.0f%% of one core), %.0f us of server CPU per pod\n",
         b - a, e - s, 100 * (b - a) / (e - s), 1e6 * (b - a) / n }'
rss=$(rss_mb)
echo "(b) VmRSS after population: $rss MB ($(awk -v r="$rss" -v n="$PODS" 'BEGIN { printf "%.1f KB per pod", r * 1024 / n }')); target <= 1024 MB: $([ "$rss" -le 1024 ] && echo MET || echo MISSED) (value/target = $(awk -v r="$rss" 'BEGIN { printf "%.2f", r / 1024 }'))"
echo "(disk) data dir while serving: $(disk)"

echo "== (c) GET"
run get --pods "$PODS" --conns 1,16 --seconds "$SECS" --runs "$RUNS"
echo "== (d) LIST by field selector"
run list --pods "$PODS" --conns 1,16 --seconds "$SECS" --runs "$RUNS"
echo "== (e) PATCH node taints"
run patch --conns 1,16 --seconds "$SECS" --runs "$RUNS"
echo "== (g) one write to 100 watches"
run watch --watchers 100 --events 20 --resource pods
run watch --watchers 100 --events 20 --resource nodes
echo "(b) VmRSS after (c)-(g): $(rss_mb) MB; server CPU so far $(cpu_seconds) s"

stop_server
echo "(disk) data dir after a clean stop: $(disk)"

echo "== (a) restart on the populated data dir"
echo "\$ api_load startup --data-dir DATA --runs $RUNS"
timeout 400 "$LOAD" startup --bin "$BIN" --data-dir "$DATA" --runs "$RUNS"

echo "== after restart: GET and extra create runs (f)"
start_server "$BIN" "$DATA" "$TMP/server" "${NO_KUBELETS[@]}"
echo "(b) VmRSS right after restart (this server): $(rss_mb) MB"
run get --pods "$PODS" --conns 1,16 --seconds "$SECS" --runs 1
run create --pods $((PODS / 10)) --conns 16 --runs 2
echo "(b) VmRSS at the end ($((PODS + PODS / 5)) pods): $(rss_mb) MB"
stop_server
sleep 0.3
echo "== summary (medians; value/target > 1 means missed for latencies, < 1 for rates)"
grep -E "median|^\(b\)|^\(f\) pod creates/s|^\(g\) (pods|nodes):|^\(populate\) server CPU|^\(disk\)" "$LOG" |
  grep -v -e "^\$" -e "^==" | sed -E 's/ \(runs: [^)]*\)//'
echo "== done"
