#!/usr/bin/env bash
# Instructions per eviction (the DisruptionTarget condition as the controller adds it, a status
# write, and the graceful delete of a ~2.6 KB pod, in process on the memory store, with the watch
# cache applying both), counted by valgrind's callgrind, which unlike time does not vary with the
# machine's load: the 1,000-eviction run of registry_bench minus its 1-eviction run (the same
# 1,000 creates), over 999.
#
#   bench/eviction_instructions.sh [BUILD_DIR]     (default build/; builds registry_bench first)
#   BENCH=/path/to/registry_bench SKIP_BUILD=1 bench/eviction_instructions.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
BENCH=${BENCH:-$BUILD/bench/registry_bench}
[ -n "${SKIP_BUILD:-}" ] || cmake --build "$BUILD" --target registry_bench >/dev/null
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }

count() {  # instructions of one registry_bench run with filter $1
  timeout 900 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BENCH" \
    --benchmark_filter="$1" 2>&1 | awk '/Collected :/ { print $4 }'
}
all=$(count 'BM_EvictPod/1/1000/iterations:1000/')
setup=$(count 'BM_EvictPod/1/1000/iterations:1/')
echo "instructions per eviction: $(((all - setup) / 999)) (runs: $all with 1,000 evictions, $setup with 1)"
