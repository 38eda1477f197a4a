#!/usr/bin/env bash
# The footprint targets of DESIGN.md "Targets" under write bursts, against the real binary on
# SQLite: 5,000 nodes and 150,000 pods of ~2.6 KB, then
#   (1) VmRSS after populating;
#   (2) 30 s of node taint PATCHes (strategic merge) from 16 keep-alive connections, then VmRSS
#       right after the burst and 10 s later (target <= 1 GiB);
#   (3) restart right after the burst: exec -> serving, exec -> first GET, VmRSS (<= 2 s, 1 GiB);
#   (4) a second burst on the restarted server and a second restart, so that start-up is
#       measured on a data dir carrying two bursts of history.
# The server runs as api_load.sh runs it (every controller but the node lifecycle controller,
# since the nodes here have no kubelets).
#
#   bench/footprint.sh [BUILD_DIR]
#   NODES=500 PODS=15000 BURST=5 RUNS=1 bench/footprint.sh      (a quick, smaller run)
#
# Kills only the server PIDs it started; removes its temporary directory on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${1:-build}
NODES=${NODES:-5000}
PODS=${PODS:-150000}
RUNS=${RUNS:-3}
BURST=${BURST:-30}

# shellcheck source=bench/server.sh
source bench/server.sh
bench_setup footprint
DATA=$TMP/data

rss_mb() {
  awk '/^VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$SERVER_PID/status"
}
verdict() {  # MB -> MET/MISSED against 1 GiB
  [ "$1" -le 1024 ] && echo "MET" || echo "MISSED"
}
run() {  # a bounded api_load step
  echo "\$ api_load $* --nodes $NODES   [loadavg $(cut -d' ' -f1-3 /proc/loadavg)]"
  timeout 300 "$LOAD" "$@" --url "$URL" --nodes "$NODES" --pid "$SERVER_PID"
}
burst() {  # 16-connection taint PATCHes for BURST seconds, then RSS
  run patch --conns 16 --seconds "$BURST" --runs 1 | grep -E "^\(e\)" || true
  local now
  now=$(rss_mb)
  echo "(fp) VmRSS right after the ${BURST} s PATCH burst: $now MB; target <= 1024 MB: $(verdict "$now")"
  sleep 10
  now=$(rss_mb)
  echo "(fp) VmRSS 10 s after the burst: $now MB"
}
restart() {
  stop_server
  echo "(disk) data dir: $(du -sb "$DATA" | awk '{ printf "%.0f MB", $1 / 1048576 }')"
  echo "\$ api_load startup --runs $RUNS"
  timeout 400 "$LOAD" startup --bin "$BIN" --data-dir "$DATA" --runs "$RUNS" | grep -E "^\(a\)|^\(b\)|^kubetaint serving"
}

LOG=$TMP/log.txt
exec > >(tee "$LOG") 2>&1
echo "== kubetaint footprint: $NODES nodes, $PODS pods, SQLite, $(nproc) cores, bursts of ${BURST} s, $BIN"
start_server "$BIN" "$DATA" "$TMP/server" "${NO_KUBELETS[@]}"
run populate --pods "$PODS" --conns 16 --segments 10 | grep -E "^\(f\) pod creates/s" || true
echo "(fp) VmRSS after populating: $(rss_mb) MB"
echo "== burst 1"
burst
echo "== restart after burst 1"
restart
echo "== burst 2 (on a restarted server)"
start_server "$BIN" "$DATA" "$TMP/server" "${NO_KUBELETS[@]}"
burst
echo "== restart after burst 2"
restart
echo "== done"
