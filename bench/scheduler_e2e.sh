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
# Each run has a server of its own, so that every measured window is SchedulingBasic's: 10,000
# pods onto a cluster of 5,000 nodes and 1,000 pods, as upstream's scheduler_perf and
# build/bench/scheduler_perf run it. SAME_SERVER=1 runs them all on one server instead (the
# second run then starts with 11,000 more pods, the third with 22,000 more).
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

# One section: RUNS runs of `api_load schedule ARGS`, each on a fresh server started with FLAGS
# (SAME_SERVER=1: all on one), then one line of medians over the runs in api_load's own format.
section() {  # NAME "SERVE FLAGS" API_LOAD_ARGS...
  local name=$1 flags=$2
  shift 2
  local out=$TMP/$name.runs
  : >"$out"
  if [ "${SAME_SERVER:-0}" = 1 ]; then
    # shellcheck disable=SC2086
    start_server "$BIN" "$TMP/$name" "$TMP/$name" "${NO_KUBELETS[@]}" $flags
    run "$@" --runs "$RUNS" | tee -a "$out"
    stop_server
  else
    for r in $(seq 1 "$RUNS"); do
      # shellcheck disable=SC2086
      start_server "$BIN" "$TMP/$name-$r" "$TMP/$name-$r" "${NO_KUBELETS[@]}" $flags
      run "$@" --runs 1 | tee -a "$out"
      stop_server
      rm -rf "$TMP/$name-$r"
    done
  fi
  summarize "$out"
}

# Medians over a section's runs (api_load's line for each run), printed as api_load prints its
# own medians.
summarize() {
  awk -v servers="$([ "${SAME_SERVER:-0}" = 1 ] && echo "one server" || echo "a server each")" '
    function median(a, n,   i, j, t) {
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function verdict(v, target, lower) {
      return sprintf("%s (value/target = %.2f)", (lower ? v <= target : v >= target) ? "MET" : "MISSED", v / target)
    }
    / run [0-9]+: .* pods bound in / {
      for (i = 1; i <= NF; i++) {
        if ($i == "=" && $(i + 2) == "pods/s") rate[++n] = $(i + 1)
        if ($i == "(created" && $(i + 1) == "at") { c = $(i + 2); sub("/s,", "", c); created[n] = c }
        if ($i == "creation-to-binding") { p50[n] = $(i + 2); p99[n] = $(i + 5) }
      }
      tag = $1
    }
    / pod creates conns=[0-9]+ run=[0-9]+: / {
      for (i = 1; i < NF; i++) if ($i == "=") { c = $(i + 1); sub("/s;", "", c); creates[++m] = c; break }
      tag = $1 " " $2 " " $3
    }
    /^\(sched\) (basic|taints) workload/ && / median of / { head = $0; sub(/: median of .*/, "", head) }
    END {
      if (m > 0) {
        printf "%s pod creates: median of %d runs, %s, %.0f/s\n", tag, m, servers, median(creates, m)
      } else if (n > 0) {
        r = median(rate, n); q50 = median(p50, n); q99 = median(p99, n)
        printf "%s: median of %d runs, %s, %.0f pods/s (target >= 10000: %s), creation-to-binding p50 %.1f ms, p99 %.1f ms (target <= 50 ms: %s); creates %.0f/s\n", head, n, servers, r, verdict(r, 10000, 0), q50, q99, verdict(q99, 50, 1), median(created, n)
      }
    }' "$1"
}

echo "== 1. scheduler on: SchedulingBasic"
section basic "" --init-pods "$INIT" --pods "$PODS" --conns 16

echo "== 1. scheduler on: taint-heavy"
section taints "" --workload taints --init-pods "$INIT" --pods "$PODS" --conns 16

echo "== 2. scheduler off: the same creates"
section off "--disable-scheduler" --create-only 1 --pods "$PODS" --conns 16

echo "== summary (medians)"
grep -E "median of [0-9]+ runs, " "$LOG" | grep -v '^\$'
awk '/^\(sched\) basic workload.*median of [0-9]+ runs, / { for (i = 1; i < NF; i++) if ($(i + 1) == "pods/s") { on = $i; break } }
     /^\(sched, scheduler off\) pod creates: median of [0-9]+ runs, / { off = $(NF); sub("/s", "", off) }
     END { if (on > 0 && off > 0) printf "(sched) scheduled pods/s with the scheduler on / creates/s with it off: %.0f / %.0f = %.2f\n", on, off, on / off }' "$LOG"
echo "== done"
