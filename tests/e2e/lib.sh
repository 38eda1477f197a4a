# shellcheck shell=bash disable=SC2034,SC2154  # (shares variables with the scripts that source it)
# Shared helpers for the end-to-end tests: assertions, polling with a deadline, and a
# `kubetaint serve` started on 127.0.0.1:0 and stopped by its PID.
#
#   bin=${1:?}; source "$(dirname "$0")/lib.sh"
#   require_kubectl                   # skip (passing) without kubectl
#   start_server "$tmp/data" --nodes 3 || finish   # or `server NAME ARGS...` per block
#   kc get_nodes get nodes            # kubectl, output kept in $tmp/get_nodes.{out,err,rc}
#   check get_nodes rc 0 table "NAME STATUS ..."
#   stop_server
#   finish                            # prints "N passed, N failed", exits non-zero on failure
#
# The EXIT trap kills only the processes this script started (the server and the background
# helpers registered with track) and removes $tmp. Nothing here sleeps to wait for the server:
# every wait polls a condition until a deadline.

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kubetaint-e2e.XXXXXX")
passed=0
failed=0
srv_pid=""
srv_n=0
bg_pids=()

ok() { passed=$((passed + 1)); }
fail() {
  failed=$((failed + 1))
  echo "FAIL: $*"
}

# track PID: a background helper (a kubectl watch, a load generator) the EXIT trap must end.
track() { bg_pids+=("$1"); }
# reap PID: waits for a tracked helper that has ended or been told to end, sets reaped_rc to its
# exit status and forgets it, so the EXIT trap never signals a PID that may have been reused.
reap() {
  local p kept=()
  { wait "$1"; } 2>/dev/null
  reaped_rc=$?
  for p in "${bg_pids[@]}"; do [ "$p" = "$1" ] || kept+=("$p"); done
  bg_pids=("${kept[@]}")
}

_cleanup() {
  local p
  for p in "${bg_pids[@]}"; do
    kill -0 "$p" 2>/dev/null && kill -TERM "$p" 2>/dev/null
  done
  if [ -n "$srv_pid" ] && kill -0 "$srv_pid" 2>/dev/null; then
    kill -TERM "$srv_pid" 2>/dev/null
    wait_for 10 _gone "$srv_pid" || kill -KILL "$srv_pid" 2>/dev/null
  fi
  for p in "${bg_pids[@]}"; do
    wait_for 5 _gone "$p" || kill -KILL "$p" 2>/dev/null
  done
  rm -rf "$tmp"
}
trap _cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

_gone() { ! kill -0 "$1" 2>/dev/null; }

_now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

# wait_for SECONDS COMMAND...: runs COMMAND until it succeeds (0), gives up at once when it
# returns $never ("will never happen"), or fails after SECONDS. Polls every 20 ms. (Not 2 for
# "never": that is what `[` and grep return when the file they look at does not exist yet.)
never=99
wait_for() {
  local limit=$1
  shift
  local deadline=$(($(_now_ms) + limit * 1000)) rc
  while :; do
    "$@"
    rc=$?
    [ $rc -eq 0 ] && return 0
    [ $rc -eq $never ] && return 1
    [ "$(_now_ms)" -ge $deadline ] && return 1
    sleep 0.02
  done
}

# --- the server ---------------------------------------------------------------------------

_server_up() {
  grep -q '^kubetaint serving on ' "$srv_out" 2>/dev/null && return 0
  kill -0 "$srv_pid" 2>/dev/null || return $never
  return 1
}

# start_server DATA_DIR [SERVE_ARGS...]: starts `kubetaint serve` on port 0 and waits for its
# start-up line. Sets srv_pid, srv_url (https), srv_out, srv_err and exports KUBECONFIG, and for
# clients that do not read kubeconfigs KT_CA, KT_CERT and KT_KEY: the server's CA and the admin
# client certificate and key (PEM files).
start_server() {
  local dir=$1
  shift
  srv_n=$((srv_n + 1))
  srv_out=$tmp/server.$srv_n.out
  srv_err=$tmp/server.$srv_n.err
  "$bin" serve --listen 127.0.0.1:0 --data-dir "$dir" "$@" >"$srv_out" 2>"$srv_err" &
  srv_pid=$!
  if ! wait_for 30 _server_up; then
    fail "server $srv_n did not print its start-up line"
    sed 's/^/    /' "$srv_out" "$srv_err" | tail -20
    return 1
  fi
  srv_url=$(sed -n 's/^kubetaint serving on \(https:\/\/127\.0\.0\.1:[0-9]*\) .*/\1/p' "$srv_out")
  export KUBECONFIG=$dir/kubeconfig KT_CA=$dir/pki/ca.crt KT_CERT=$dir/pki/admin.crt \
    KT_KEY=$dir/pki/admin.key
  [ -n "$srv_url" ] && [ -f "$KUBECONFIG" ]
}

# stop_server: SIGTERM to our server, waits up to 30 s; sets srv_rc to its exit status.
stop_server() {
  kill -TERM "$srv_pid"
  if ! wait_for 30 _gone "$srv_pid"; then
    kill -KILL "$srv_pid"
    { wait "$srv_pid"; } 2>/dev/null
    srv_rc=timeout
    srv_pid=""
    return 1
  fi
  wait "$srv_pid"
  srv_rc=$?
  srv_pid=""
}

# server NAME [SERVE_ARGS...]: for scripts with one server per block: stops the previous
# block's server (it must exit 0 on SIGTERM, counted as a check), then starts a fresh one on
# $tmp/NAME; gives up the script if it does not start.
server() {
  local name=$1
  shift
  if [ -n "$srv_pid" ]; then
    stop_server
    if [ "$srv_rc" = 0 ]; then ok; else fail "server $srv_n: exit status $srv_rc on SIGTERM"; fi
  fi
  start_server "$tmp/$name" "$@" || finish
}

# kill9_server: SIGKILL to our server; sets srv_rc to its exit status (137).
kill9_server() {
  kill -KILL "$srv_pid"
  { wait "$srv_pid"; } 2>/dev/null  # no "Killed" job message from bash
  srv_rc=$?
  srv_pid=""
}

# --- kubectl ------------------------------------------------------------------------------

# require_kubectl: ends the script as skipped (passing) when kubectl is not on PATH.
require_kubectl() {
  command -v kubectl >/dev/null 2>&1 && return 0
  echo "SKIP: kubectl is not on PATH (KUBETAINT_WITH_KUBECTL=1 scripts/deps.sh installs one)"
  echo "0 passed, 0 failed"
  exit 0
}

# kc NAME ARGS...: kubectl ARGS with our cache dir and a 60 s bound; keeps stdout, stderr and
# the exit status in $tmp/NAME.{out,err,rc}. Records the command line for failure messages.
kc() {
  local name=$1
  shift
  printf 'kubectl %s\n' "$*" >"$tmp/$name.cmd"
  timeout 60 kubectl --cache-dir "$tmp/kubectl-cache" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  echo $? >"$tmp/$name.rc"
}

# kc_is NAME WANT ARGS...: kubectl ARGS (kept as NAME) prints exactly WANT; for wait_for.
kc_is() {
  local name=$1 want=$2
  shift 2
  kc "$name" "$@"
  [ "$(cat "$tmp/$name.out")" = "$want" ]
}

# await_kc WHAT NAME WANT ARGS...: kc_is polled until $limit seconds; one check, failed with
# WHAT and the last output on timeout.
await_kc() {
  local what=$1
  shift
  if wait_for "$limit" kc_is "$@"; then ok; else
    fail "waited ${limit}s: $what"
    _show "$1"
  fi
}

# derive NEW FROM COMMAND...: NEW is FROM with stdout passed through COMMAND (e.g. a sed that
# cuts out one section of `describe`), so it can be checked on its own.
derive() {
  local new=$1 from=$2
  shift 2
  cp "$tmp/$from.cmd" "$tmp/$new.cmd"
  cp "$tmp/$from.rc" "$tmp/$new.rc"
  cp "$tmp/$from.err" "$tmp/$new.err"
  "$@" <"$tmp/$from.out" >"$tmp/$new.out"
}

# Ages change while the test runs, and with them kubectl's column widths: compare tables with
# every age replaced by AGE and runs of spaces squeezed.
_normalize_table() {
  sed -E 's/(^| )([0-9]+[smhdy]([0-9]+[smh])?|<unknown>)( |$)/\1AGE\4/g; s/ +/ /g; s/ $//'
}

_show() {  # NAME: what a failed check prints
  sed 's/^/    /' "$tmp/$1.cmd"
  echo "    exit $(cat "$tmp/$1.rc")"
  echo "    --- stdout"
  sed 's/^/    | /' "$tmp/$1.out"
  echo "    --- stderr"
  sed 's/^/    | /' "$tmp/$1.err"
}

# check NAME KIND VALUE [KIND VALUE]...: one assertion per pair about the command kept as NAME.
#   rc N          exit status
#   out TEXT      stdout is exactly TEXT (trailing newlines ignored)
#   err TEXT      stderr is exactly TEXT (trailing newlines ignored)
#   table TEXT    stdout equals TEXT after _normalize_table on both
#   has REGEX     some stdout line matches (grep -E)
#   lacks REGEX   no stdout line matches
#   err_has REGEX some stderr line matches
check() {
  local name=$1
  shift
  while [ $# -ge 2 ]; do
    local kind=$1 want=$2 good=0 got
    shift 2
    case $kind in
      rc) [ "$(cat "$tmp/$name.rc")" = "$want" ] && good=1 ;;
      out) [ "$(cat "$tmp/$name.out")" = "$want" ] && good=1 ;;
      err) [ "$(cat "$tmp/$name.err")" = "$want" ] && good=1 ;;
      table)
        got=$(_normalize_table <"$tmp/$name.out")
        [ "$got" = "$(printf '%s\n' "$want" | _normalize_table)" ] && good=1
        ;;
      has) grep -Eq -- "$want" "$tmp/$name.out" && good=1 ;;
      lacks) grep -Eq -- "$want" "$tmp/$name.out" || good=1 ;;
      err_has) grep -Eq -- "$want" "$tmp/$name.err" && good=1 ;;
      *) echo "check: unknown kind $kind" >&2 ;;
    esac
    if [ $good -eq 1 ]; then ok; else
      fail "$name: $kind"
      printf '%s\n' "$want" | sed 's/^/    want: /'
      _show "$name"
    fi
  done
}

# check_py NAME DESCRIPTION: runs the Python on stdin with `doc` = stdout of NAME parsed as JSON
# (or None), `text` = stdout and `tmp` = $tmp; an AssertionError fails the check.
check_py() {
  local name=$1 desc=$2 code
  code=$(cat)
  if python3 -c "
import json, os, sys
tmp = os.path.dirname(sys.argv[1])
text = open(sys.argv[1]).read()
try:
    doc = json.loads(text)
except ValueError:
    doc = None
$code
" "$tmp/$name.out" >"$tmp/$name.py" 2>&1; then ok; else
    fail "$name: $desc"
    sed 's/^/    /' "$tmp/$name.py" | tail -5
    _show "$name"
  fi
}

# finish: the summary line ctest and people read; the exit status says whether all passed.
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
  exit
}
