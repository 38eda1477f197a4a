#!/usr/bin/env bash
# End-to-end: the official JavaScript client, @kubernetes/client-node from npm (the version
# js_client/package-lock.json pins), against `kubetaint serve --nodes 2` on 127.0.0.1:0 over
# TLS, through the kubeconfig serve writes and a --token-auth-file token. js_client/client_test.mjs
# lists nodes, runs an informer and a raw watch, patches taints (strategic merge and JSON patch),
# is refused an invalid toleration (422), deletes a pod, and tries a right and a wrong token; it
# prints one "PASS|FAIL name: detail" line per check, and each becomes a check here.
# npm ci installs the client into $tmp from npm's cache (~/.npm), or the registry when the cache
# lacks it. Skips (passing) without node and npm, or when neither the cache nor the registry has
# the client (KUBETAINT_WITH_KUBECTL=1 scripts/deps.sh installs Debian's nodejs and npm).
# Usage: js_client_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: js_client_test.sh KUBETAINT_BINARY}
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"

skip() {
  echo "SKIP: $*"
  echo "0 passed, 0 failed"
  exit 0
}
for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 ||
    skip "$tool is not on PATH (KUBETAINT_WITH_KUBECTL=1 scripts/deps.sh installs Debian's nodejs and npm)"
done

# The checks client_test.mjs reports, in its order.
checks=(list_nodes informer_start create_pod informer_add informer_update_bound
  watch_nodes_start patch_strategic_merge patch_content_types watch_sees_taint patch_json
  patch_json_test_fails
  invalid_toleration_422 delete_pod informer_delete token_lists_pods token_wrong_401
  token_without_ca_refused)

# --- the client, from the lockfile ----------------------------------------------------------------
work=$tmp/js_client
mkdir -p "$work"
src=$(dirname "$0")/js_client
cp "$src/package.json" "$src/package-lock.json" "$src/client_test.mjs" "$work/"
# npm_ci SECONDS [NPM_ARGS...]: npm ci in $work, its output in $tmp/npm.out. (The deadlines of
# npm and of the client add up to 270 s, within ctest's 300 s for an e2e test.)
npm_ci() {
  local limit=$1
  shift
  (cd "$work" && timeout "$limit" npm ci --no-audit --no-fund --ignore-scripts --loglevel=error \
    "$@") >"$tmp/npm.out" 2>&1
}
# From npm's cache alone first (no network, and quick to fail when the cache lacks a package);
# else from the registry. Only an unreachable registry skips: any other failure is the test's.
if ! npm_ci 30 --offline; then
  if ! timeout 30 npm ping --fetch-retries=0 --fetch-timeout=10000 >"$tmp/ping.out" 2>&1; then
    skip "npm's cache lacks the client and the npm registry does not answer npm ping" \
      "($(grep -m1 -i 'error' "$tmp/ping.out" || echo "no answer in 30s"))"
  fi
  if ! npm_ci 90 --prefer-offline; then
    fail "npm ci in a copy of tests/e2e/js_client"
    sed 's/^/    /' "$tmp/npm.out" | tail -20
    finish
  fi
fi
version=$(node -p 'require(process.argv[1]).version' \
  "$work/node_modules/@kubernetes/client-node/package.json")
echo "node $(node --version), npm $(npm --version), @kubernetes/client-node $version"

# --- the server and the client's checks -----------------------------------------------------------
token=js-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
printf '%s,js-user,u-js,"dev,js"\n' "$token" >"$tmp/tokens.csv"
start_server "$tmp/data" --store memory --nodes 2 --token-auth-file "$tmp/tokens.csv" || finish

start=$(_now_ms)
timeout 120 node "$work/client_test.mjs" "$KUBECONFIG" "$token" >"$tmp/js.out" 2>"$tmp/js.err"
rc=$?
ms=$(($(_now_ms) - start))
echo "client_test.mjs: exit $rc after $((ms / 1000)).$((ms % 1000 / 100))s"
sed 's/^/  /' "$tmp/js.out"
[ "$rc" = 0 ] || sed 's/^/  stderr: /' "$tmp/js.err" | tail -20

for name in "${checks[@]}"; do
  line=$(grep -m1 -E "^(PASS|FAIL) $name: " "$tmp/js.out")
  case $line in
    PASS*) ok ;;
    FAIL*) fail "${line#FAIL }" ;;
    *) fail "$name: client_test.mjs did not report it" ;;
  esac
done
# Every line is a known check, and the script ran to its end (not killed by timeout).
known=$(IFS='|' && echo "${checks[*]}")
if grep -Eq -v -e "^(PASS|FAIL) ($known): " -e '^DONE [0-9]+ failed$' "$tmp/js.out"; then
  fail "client_test.mjs printed lines that are no known check"
fi
if grep -q '^DONE ' "$tmp/js.out"; then ok; else fail "client_test.mjs did not finish (exit $rc)"; fi

stop_server
if [ "$srv_rc" = 0 ]; then ok; else fail "SIGTERM: exit status $srv_rc"; fi
finish
