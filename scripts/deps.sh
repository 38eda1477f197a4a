#!/usr/bin/env bash
# Installs the Debian packages kubetaint builds and tests with, when any is missing.
# Safe to run repeatedly: it does nothing when everything is present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache
  libboost-dev libssl-dev rapidjson-dev libyaml-cpp-dev libcli11-dev libexpected-dev
  libsqlite3-dev libgtest-dev libgmock-dev libbenchmark-dev libjemalloc-dev
  python3
)
if [ "${KUBETAINT_WITH_KUBECTL:-0}" = 1 ]; then
  # The end-to-end tests' clients: kubectl (when none is on PATH), Debian's Python client, and
  # Node.js with npm for the JavaScript client (which npm installs from the registry): Debian's
  # nodejs and npm when no node or npm is on PATH, so that a Node.js installed otherwise (one
  # whose package bundles npm) is left alone.
  command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)
  packages+=(python3-kubernetes)
  command -v node >/dev/null 2>&1 || packages+=(nodejs)
  command -v npm >/dev/null 2>&1 || packages+=(npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
  echo "error: missing Debian packages (${missing[*]}); run as root or install them" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
