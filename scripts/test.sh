#!/usr/bin/env bash
# Runs every test: installs missing Debian packages (and kubectl when absent), builds, runs the
# unit and end-to-end tests with ctest, then builds the parser, codec, store, controller, watch
# cache and start-up decoder tests with AddressSanitizer and UndefinedBehaviorSanitizer and runs
# them.
set -euo pipefail
cd "$(dirname "$0")/.."
KUBETAINT_WITH_KUBECTL=1 bash scripts/deps.sh

jobs=$(nproc)
echo "== build (Release, profile-guided: scripts/build.sh)"
bash scripts/build.sh
echo "== unit and end-to-end tests"
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== parser, codec, store, watch cache and taint eviction tests under AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKUBETAINT_SANITIZE=ON \
  -DKUBETAINT_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan --target core_test api_test store_test controllers_test server_test
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The taint eviction controller's threads and callbacks too (1,000 of its interleavings).
KUBETAINT_INTERLEAVINGS=1000 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" -L 'core|api|store|controllers'
# The API server's tests: the watch caches and the start-up decoder (threads sharing the store's
# values), and the registry's writes (objects parsed in place, bytes spliced).
build-asan/tests/server_test
