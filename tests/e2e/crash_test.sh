#!/usr/bin/env bash
# End-to-end: SIGKILL `kubetaint serve` (SQLite store) in the middle of a write load from 16
# concurrent clients, restart it on the same data directory, and check that every write the
# server acknowledged (2xx) is there with exactly the resourceVersion it answered, that nothing
# else changed, and that resourceVersions go on counting up. Three rounds on one data directory.
# The load and the checks are tests/e2e/crash_load.py (python3 standard library only). The
# scheduler is off (--disable-scheduler): bindings would be writes the load did not make; so is
# the node lifecycle controller, whose node status writes, taints and events (the demo nodes
# post no heartbeats) would be too. Without that controller nothing would lift
# TaintNodesByCondition's not-ready taint, so that plugin is off as well.
# Usage: crash_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: crash_test.sh KUBETAINT_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/lib.sh
source "$here/lib.sh"
load_py=$here/crash_load.py

clients=16
max_ops=400        # per client and round
load_seconds=20    # per round, an upper bound: the kill comes much earlier
kill_after=(150 400 800)  # acknowledged writes before the SIGKILL, per round
rounds=${#kill_after[@]}

data=$tmp/data
logs=$tmp/logs
mkdir -p "$logs"

acks_in_round() { cat "$logs"/r"$1"-c*.jsonl 2>/dev/null | grep -c '"state": "ack"'; }
enough_acks() {
  [ "$(acks_in_round "$1")" -ge "${kill_after[$1 - 1]}" ] && return 0
  kill -0 "$load_pid" 2>/dev/null || return $never  # the load ended first
  return 1
}

start_server "$data" --nodes 3 --disable-scheduler '--controllers=*,-node-lifecycle-controller' --disable-admission-plugins=TaintNodesByCondition || finish
if python3 "$load_py" seed "$srv_url" "$tmp/snapshot.json" >"$tmp/seed.out" 2>&1; then ok; else
  fail "seeding the pre-existing objects"
  sed 's/^/    /' "$tmp/seed.out"
  finish
fi

for round in $(seq 1 $rounds); do
  python3 "$load_py" load "$srv_url" "$logs" "$round" $clients $max_ops $load_seconds \
    >"$tmp/load.$round.out" 2>&1 &
  load_pid=$!
  track $load_pid
  if wait_for 60 enough_acks "$round"; then ok; else
    fail "round $round: the load ended or stalled after $(acks_in_round "$round") acknowledged writes"
    sed 's/^/    /' "$tmp/load.$round.out" | tail -5
  fi
  # The load must still be running: the kill lands among in-flight writes.
  if kill -0 $load_pid 2>/dev/null; then ok; else fail "round $round: load over before the kill"; fi
  kill9_server
  if [ "$srv_rc" = 137 ]; then ok; else fail "round $round: server exit status $srv_rc, want 137"; fi
  if wait_for 60 _gone $load_pid; then ok; else fail "round $round: clients did not stop"; fi
  reap $load_pid
  load_rc=$reaped_rc
  if [ $load_rc = 0 ]; then ok; else
    fail "round $round: load driver exit status $load_rc"
    sed 's/^/    /' "$tmp/load.$round.out" | tail -5
  fi
  lost=$(cat "$logs"/r"$round"-c*.jsonl | grep -c '"state": "lost"')
  echo "round $round: $(acks_in_round "$round") writes acknowledged, $lost left without an answer"

  start_server "$data" --nodes 3 --disable-scheduler '--controllers=*,-node-lifecycle-controller' --disable-admission-plugins=TaintNodesByCondition || finish
  if python3 "$load_py" verify "$srv_url" "$tmp/snapshot.json" "$logs" >"$tmp/verify.$round.out" 2>&1; then
    ok
  else
    fail "round $round: after the restart"
  fi
  sed 's/^/    /' "$tmp/verify.$round.out"
done

stop_server
if [ "$srv_rc" = 0 ]; then ok; else fail "SIGTERM after the last round: exit status $srv_rc"; fi
finish
