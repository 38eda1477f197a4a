#!/usr/bin/env bash
# Instructions per scheduled pod in process (memory store): the pod's create, the watch caches
# and informers taking it in, the scheduling cycle over 5,000 nodes, the binding and the
# `Scheduled` event, on every thread. Counted by valgrind's callgrind, which unlike time does not
# vary with the machine's load: scheduler_perf's run with 3,000 pods minus its run with 1,000 (the
# same 5,000 nodes), over 2,000.
#
#   bench/scheduler_instructions.sh [BUILD_DIR]     (default build/; builds scheduler_perf first)
#   BENCH=/path/to/scheduler_perf SKIP_BUILD=1 WORKLOAD=taints bench/scheduler_instructions.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
BENCH=${BENCH:-$BUILD/bench/scheduler_perf}
WORKLOAD=${WORKLOAD:-basic}
[ -n "${SKIP_BUILD:-}" ] || cmake --build "$BUILD" --target scheduler_perf >/dev/null
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }

count() {  # instructions of one scheduler_perf run with $1 measured pods
  timeout 900 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BENCH" --runs 1 \
    --workload "$WORKLOAD" --init-pods 0 --pods "$1" 2>&1 | awk '/Collected :/ { print $4 }'
}
few=$(count 1000)
many=$(count 3000)
echo "instructions per scheduled pod ($WORKLOAD): $(((many - few) / 2000)) (runs: $many with 3,000 pods, $few with 1,000)"
