#!/usr/bin/env bash
# Configures and builds kubetaint into build/ (Release, Ninja), installing missing Debian
# packages first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
