# Server handling shared by the benchmark scripts (sourced, not run): start `kubetaint serve` on
# 127.0.0.1:0 with its state in a directory, wait for its "serving on" line, and stop it. Only
# the PID started here is ever signalled.
#
#   source bench/server.sh
#   bench_setup NAME                       # BIN, LOAD built; TMP made; both cleaned up on exit
#   start_server "$BIN" DATA_DIR LOG_PREFIX [serve flags...]   # sets SERVER_PID and URL
#   stop_server

SERVER_PID=""
URL=""
# Serve flags for servers whose nodes api_load creates itself, without kubelets: no node lifecycle
# controller (it would find them silent after its grace period, taint them and mark their pods
# not Ready in the middle of a measurement) and so no TaintNodesByCondition (nothing would lift
# its not-ready taint).
NO_KUBELETS=("--controllers=*,-node-lifecycle-controller" "--disable-admission-plugins=TaintNodesByCondition")

stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 300); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$SERVER_PID" 2>/dev/null && kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

start_server() {
  local bin=$1 data=$2 log=$3
  shift 3
  : >"$log.out"
  # The load drivers speak plain HTTP: --insecure-port serves it besides TLS (kubectl, given
  # the kubeconfig, uses TLS).
  "$bin" serve --listen 127.0.0.1:0 --insecure-port 0 --data-dir "$data" --store sqlite "$@" \
    >"$log.out" 2>>"$log.err" &
  SERVER_PID=$!
  for _ in $(seq 1 1200); do
    grep -q "serving on" "$log.out" && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$log.err" >&2; exit 1; }
    sleep 0.05
  done
  URL=$(grep -o 'http://127.0.0.1:[0-9]*' "$log.out" | head -1)
  [ -n "$URL" ] || { echo "server did not start" >&2; exit 1; }
  echo "server pid $SERVER_PID${*:+ ($*)}: $(cat "$log.out")"
}

# The common start of a load script, once BUILD is set: builds kubetaint and api_load (unless
# SKIP_BUILD=1), sets BIN (unless given) and LOAD, makes TMP, and on exit stops the server and
# removes TMP.
bench_setup() {
  BIN=${BIN:-$BUILD/kubetaint}
  LOAD=$BUILD/bench/api_load
  if [ "${SKIP_BUILD:-0}" != 1 ]; then
    cmake --build "$BUILD" --target kubetaint api_load >/dev/null
  fi
  [ -x "$BIN" ] && [ -x "$LOAD" ] || { echo "missing $BIN or $LOAD" >&2; exit 1; }
  TMP=$(mktemp -d "${TMPDIR:-/tmp}/kubetaint-$1.XXXXXX")
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

bench_cleanup() {
  stop_server
  rm -rf "$TMP"
}
