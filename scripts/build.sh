#!/usr/bin/env bash
# Configures and builds kubetaint into build/ (Release, Ninja), installing missing Debian
# packages first. Profile-guided (README "Profile-guided build"): an instrumented kubetaint is
# built into build-pgo/ and run through bench/pgo_train.sh, and build/ is compiled with the
# profile it recorded. The profile is taken again only when the instrumented binaries changed,
# and then everything compiled with it is compiled again.
# PGO=0 builds build/ without a profile.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
if [ "${PGO:-1}" = 0 ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKUBETAINT_PGO= >/dev/null
  cmake --build build
  exit 0
fi

profile=$PWD/build-pgo/profile
stamp=$PWD/build-pgo/profile.stamp
echo "== profile-guided build, 1 of 2: instrumented binaries (build-pgo/)"
cmake -S . -B build-pgo -G Ninja -DCMAKE_BUILD_TYPE=Release -DKUBETAINT_PGO=GEN \
  -DKUBETAINT_PGO_DIR="$profile" -DKUBETAINT_BUILD_TESTS=OFF >/dev/null
cmake --build build-pgo --target kubetaint api_load scheduler_perf
if [ ! -e "$stamp" ] || [ build-pgo/kubetaint -nt "$stamp" ] ||
  [ build-pgo/bench/scheduler_perf -nt "$stamp" ] || [ build-pgo/bench/api_load -nt "$stamp" ]; then
  rm -rf "$profile" "$stamp"
  bash bench/pgo_train.sh build-pgo
  touch "$stamp"
fi
echo "== profile-guided build, 2 of 2: build/, compiled with the profile"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKUBETAINT_PGO=USE \
  -DKUBETAINT_PGO_DIR="$profile" -DKUBETAINT_PGO_STAMP="$stamp" >/dev/null
cmake --build build
