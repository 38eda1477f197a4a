#!/usr/bin/env bash
# End-to-end: the NoExecute taint eviction controller (upstream `taint-eviction-controller`,
# semantics.md §6), driven by the real kubectl against `kubetaint serve --nodes 3` on
# 127.0.0.1:0, as a user would type the commands. Pods are pinned to their node with
# spec.nodeName, so nothing depends on the scheduler's choices. Each block runs its own server
# (own data directory under $tmp; sqlite and memory stores alternate).
#   1. an untolerating pod on the tainted node is deleted, one on another node stays
#   2. before the delete the pod gets DisruptionTarget=True / DeletionByTaintManager (watched)
#   3. the TaintManagerEviction events, as `kubectl get events` and its JSON show them
#   4. tolerationSeconds: 5 — still there 4 s after the taint, gone by 8 s
#   5. the taint removed within those 5 s — the pod stays, `Cancelling deletion` event
#   6. the seeds' pod (examples/seed-two-tolerations-pod.yaml) on node1 stays, a plain pod goes
#   7. seed 002's flapping sequence (cordon + taint, uncordon + untaint, the pod re-created
#      under the same name): the re-created pod is evicted every time (upstream #107543)
#   8. --controllers=*,-taint-eviction-controller: nothing is evicted
#   9. tolerationSeconds 0 (and negative) evict at once; no tolerationSeconds keeps the pod, so
#      do 3600 and 10^10 (at least for the test's 3 s)
# Waits for things to happen poll kubectl until a deadline (wait_for). Where real time IS what is
# tested ("still there N s after the taint"), the pod is looked at repeatedly until N s have
# passed since `kubectl taint` returned, and every look must find the same pod (same UID).
# Usage: eviction_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: eviction_test.sh KUBETAINT_BINARY}
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
src=${KUBETAINT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}

if ! command -v kubectl >/dev/null 2>&1; then
  echo "SKIP: kubectl is not on PATH (KUBETAINT_WITH_KUBECTL=1 scripts/deps.sh installs one)"
  echo "0 passed, 0 failed"
  exit 0
fi

gone_limit=10  # seconds an eviction that should happen at once may take (slow machines)

# server NAME [SERVE_ARGS...]: stops the previous block's server (it must exit 0 on SIGTERM),
# then starts a fresh one with three simulated nodes on $tmp/NAME. The node lifecycle controller
# is off: the cordons here would get the unschedulable taint (which the blocks add by hand); this
# test is about the taints it sets itself. TaintNodesByCondition is off with it: nothing would
# lift its not-ready taint.
server() {
  local name=$1
  shift
  if [ -n "$srv_pid" ]; then
    stop_server
    if [ "$srv_rc" = 0 ]; then ok; else fail "server $srv_n: exit status $srv_rc on SIGTERM"; fi
  fi
  start_server "$tmp/$name" --nodes 3 '--controllers=*,-node-lifecycle-controller' --disable-admission-plugins=TaintNodesByCondition "$@" || finish
}

# re TEXT: TEXT as an extended regular expression that matches it literally.
re() { printf '%s' "$1" | sed 's/[][\.*^$()+?{}|]/\\&/g'; }

# out_has NAME REGEX KUBECTL_ARGS...: runs the kubectl as NAME; true when a stdout line matches.
out_has() {
  local name=$1 want=$2
  shift 2
  kc "$name" "$@"
  grep -Eq -- "$want" "$tmp/$name.out"
}

# run_on NAME POD NODE: `kubectl run` a pod without tolerations, bound to NODE by spec.nodeName.
# Its terminationGracePeriodSeconds is 0, so an eviction removes it at once (the scenario with a
# grace period is at the end).
run_on() {
  kc "$1" run "$2" --image=nginx \
    --overrides="{\"spec\":{\"nodeName\":\"$3\",\"terminationGracePeriodSeconds\":0}}"
  check "$1" rc 0 out "pod/$2 created"
}

# create NAME FILE: `kubectl create -f FILE`; stdout must be "pod/<each name> created".
create() {
  local want
  want=$(sed -n 's/^  name: \(.*\)/pod\/\1 created/p' "$2")
  kc "$1" create -f "$2"
  check "$1" rc 0 out "$want"
}

# uid_of NAME POD: sets uid to the pod's UID (and checks it has one).
uid_of() {
  kc "$1" get pod "$2" -o jsonpath='{.metadata.uid}'
  check "$1" rc 0 has '^[0-9a-f-]{36}$'
  uid=$(cat "$tmp/$1.out")
}

# taint NAME NODE SPEC: `kubectl taint nodes NODE SPEC`, checked; sets t_taint (ms, when it
# returned) and t_taint_start (when it started: the controller cannot have seen it before).
taint() {
  local name=$1 node=$2 spec=$3 want="node/$2 tainted"
  [ "${spec: -1}" = - ] && want="node/$2 untainted"
  t_taint_start=$(_now_ms)
  kc "$name" taint nodes "$node" "$spec"
  t_taint=$(_now_ms)
  check "$name" rc 0 out "$want"
}

# absent NAME POD: `kubectl get pod POD` says NotFound.
absent() {
  kc "$1" get pod "$2" -o name
  [ "$(cat "$tmp/$1.rc")" = 1 ] && grep -q NotFound "$tmp/$1.err"
}
# evicted NAME POD [SECONDS]: polls until POD is gone (default deadline $gone_limit s); one
# check. Returns 1 on a timeout; else sets gone_ms (when a look first found it gone).
evicted() {
  local name=$1 pod=$2 limit=${3:-$gone_limit}
  if ! wait_for "$limit" absent "$name" "$pod"; then
    fail "waited ${limit}s: $pod evicted"
    _show "$name"
    return 1
  fi
  gone_ms=$(_now_ms)
  check "$name" rc 1 out "" err "Error from server (NotFound): pods \"$pod\" not found"
}

# stays NAME POD UID UNTIL_MS: looks at POD every 0.2 s until UNTIL_MS (a _now_ms time) has
# passed, the last look starting at or after it (and no later than the look before it ends); every look must find the same pod (UID),
# without a DisruptionTarget condition. One check.
stays() {
  local name=$1 pod=$2 uid=$3 until=$4 looks=0 t what
  while :; do
    t=$(_now_ms)
    kc "$name" get pod "$pod" \
      -o jsonpath='{.metadata.uid} [{.status.conditions[?(@.type=="DisruptionTarget")].reason}]'
    looks=$((looks + 1))
    if [ "$(cat "$tmp/$name.out")" != "$uid []" ]; then
      what="look $looks ran from $((t - t_taint)) to $(($(_now_ms) - t_taint)) ms after the taint"
      fail "$name: $pod gone or marked ($what; wanted UID $uid, no DisruptionTarget," \
        "until $((until - t_taint)) ms)"
      _show "$name"
      return
    fi
    [ "$t" -ge "$until" ] && break
    # The next look starts 0.2 s later, or at UNTIL_MS if that comes first (on a loaded machine a
    # look can take long, and the last one must not start later than it needs to).
    local wait_ms=$((until - $(_now_ms)))
    [ "$wait_ms" -gt 200 ] && wait_ms=200
    [ "$wait_ms" -gt 0 ] && sleep "$(printf '0.%03d' "$wait_ms")"
  done
  ok
}

# event_row NAME POD MESSAGE: `kubectl get events` (as typed, all of them) comes to show the
# controller's row for POD: type Normal, reason TaintManagerEviction, MESSAGE.
event_row() {
  local name=$1 pod=$2 msg=$3 row
  row="^[0-9a-z<>]+ +Normal +TaintManagerEviction +pod/$pod +$(re "$msg")\$"
  wait_for $gone_limit out_has "$name" "$row" get events ||
    fail "waited ${gone_limit}s: event \"$msg\""
  check "$name" rc 0 has "$row"
}

# events_json NAME POD: the events about POD as JSON (for check_py).
events_json() {
  kc "$1" get events --field-selector "involvedObject.name=$2" -o json
}

# watch_events(text): the JSON objects of a `kubectl get -w --output-watch-events -o json`, as a
# Python list (for check_py code: `events = watch_events(text)`).
watch_py='
def watch_events(text):
    dec, out, i = json.JSONDecoder(), [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        e, i = dec.raw_decode(text, i)
        out.append(e)
'

# --- 1-3. an untolerating pod is evicted, with its condition and event ------------------------
# victim on node1, bystander on node2; node1 gets k=v:NoExecute. A watch started before the
# taint records what happens to the pods.
server evict
run_on s1_victim victim node1
uid_of s1_uid_victim victim
uid_victim=$uid
run_on s1_bystander bystander node2
uid_of s1_uid_bystander bystander
uid_bystander=$uid
printf 'kubectl get pods -w --output-watch-events -o json\n' >"$tmp/s1_watch.cmd"
timeout 90 kubectl --cache-dir "$tmp/kubectl-cache" get pods -w --output-watch-events -o json \
  >"$tmp/s1_watch.out" 2>"$tmp/s1_watch.err" &
s1_wp=$!
track $s1_wp
# kubectl prints one compact JSON object per line: {"type":"ADDED","object":{...}}
watch_count() { [ "$(grep -c "^{\"type\":\"$1\"" "$tmp/s1_watch.out" 2>/dev/null)" -ge "$2" ]; }
wait_for 20 watch_count ADDED 2 || fail "s1_watch: the two initial ADDED events never came"

taint s1_taint node1 k=v:NoExecute
evicted s1_gone victim
kc s1_left get pods -o wide
check s1_left rc 0 table "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES
bystander 1/1 Running 0 1s 10.64.2.2 node2 <none> <none>"
kc s1_bystander_json get pod bystander -o json
check_py s1_bystander_json "bystander on node2: same pod, untouched" <<PY
assert doc["metadata"]["uid"] == "$uid_bystander", doc["metadata"]
assert doc["spec"]["nodeName"] == "node2", doc["spec"]
assert "deletionTimestamp" not in doc["metadata"], doc["metadata"]
conds = doc["status"].get("conditions", [])
assert not [c for c in conds if c["type"] == "DisruptionTarget"], doc["status"]
PY

# 2. The watch: victim MODIFIED with DisruptionTarget, then DELETED; nothing for bystander.
wait_for 20 watch_count DELETED 1 || fail "s1_watch: victim's DELETED never seen"
kill -TERM $s1_wp 2>/dev/null
reap $s1_wp
echo 0 >"$tmp/s1_watch.rc"
check_py s1_watch "victim: MODIFIED with DisruptionTarget before DELETED; bystander untouched" <<PY
$watch_py
events = watch_events(text)
seen = [(e["type"], e["object"]["metadata"]["name"]) for e in events]
v = [e for e in events if e["object"]["metadata"]["name"] == "victim"]
b = [e for e in events if e["object"]["metadata"]["name"] == "bystander"]
assert [e["type"] for e in b] == ["ADDED"], seen
assert v[0]["type"] == "ADDED" and v[-1]["type"] == "DELETED", seen
assert [e["type"] for e in v].count("DELETED") == 1, seen
def dt(e):
    conds = e["object"]["status"].get("conditions", [])
    return [c for c in conds if c["type"] == "DisruptionTarget"]
assert not dt(v[0]), v[0]["object"]["status"]
marked = [i for i, e in enumerate(v) if e["type"] == "MODIFIED" and dt(e)]
assert marked and marked[0] < len(v) - 1, seen
c = dt(v[marked[0]])[0]
want = ("True", "DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")
assert (c["status"], c.get("reason"), c.get("message")) == want, c
assert c.get("lastTransitionTime"), c
# The object of the DELETED event is the pod as it was deleted: still carrying the condition.
last = dt(v[-1])
assert last and (last[0]["status"], last[0].get("reason")) == want[:2], v[-1]["object"]["status"]
PY

# 3. The event: `kubectl get events` shows it; its JSON has what upstream's core/v1 recorder
# writes, except that the involved object carries the pod's uid (upstream leaves it out, which
# hides the events from `kubectl describe pod`).
event_row s1_events victim "Marking for deletion Pod default/victim"
check s1_events lacks 'bystander'
events_json s1_events_json victim
check_py s1_events_json "one TaintManagerEviction event from taint-eviction-controller" <<PY
items = doc["items"]
assert len(items) == 1, items
e = items[0]
assert (e["type"], e["reason"], e["message"]) == (
    "Normal", "TaintManagerEviction", "Marking for deletion Pod default/victim"), e
# upstream: record.NewBroadcaster().NewRecorder(scheme, EventSource{Component: controllerName}),
# no host; reportingController/Instance are the source's component and (empty) host.
assert e["source"] == {"component": "taint-eviction-controller"}, e.get("source")
assert e.get("reportingComponent") == "taint-eviction-controller", e
assert not e.get("reportingInstance"), e
assert e["involvedObject"] == {"apiVersion": "v1", "kind": "Pod", "namespace": "default",
                               "name": "victim", "uid": "$uid_victim"}, e["involvedObject"]
assert e["metadata"]["namespace"] == "default", e["metadata"]
assert e.get("count") == 1, e
assert e.get("firstTimestamp") and e.get("lastTimestamp"), e
PY

# --- 4. tolerationSeconds: 5 ----------------------------------------------------------------
# The countdown starts when the controller sees the taint (at most a few ms before `kubectl
# taint` returns): the pod must be there at every look until 4 s after, and gone by 8 s.
server seconds --store memory
cat >"$tmp/tol5.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: tol5
spec:
  nodeName: node1
  terminationGracePeriodSeconds: 0
  containers: [{name: app, image: nginx}]
  tolerations:
  - {key: k, operator: Equal, value: v, effect: NoExecute, tolerationSeconds: 5}
EOF
create s4_create "$tmp/tol5.yaml"
uid_of s4_uid tol5
uid_tol5=$uid
taint s4_taint node1 k=v:NoExecute
# (If `kubectl taint` itself took over 0.5 s, "4 s after it returned" could be past the earliest
# time the pod may go, 5 s after it started: then look until 4.5 s after it started.)
until=$((t_taint + 4000))
if [ $until -gt $((t_taint_start + 4500)) ]; then
  until=$((t_taint_start + 4500))
  echo "    (kubectl taint took $((t_taint - t_taint_start)) ms:" \
    "tol5 looked at until $((until - t_taint)) ms after it returned)"
fi
stays s4_stays tol5 "$uid_tol5" $until
if evicted s4_gone tol5 $(((t_taint + 8000 - $(_now_ms) + 999) / 1000)); then
  echo "    (tol5 seen gone $((gone_ms - t_taint)) ms after the taint)"
  if [ $((gone_ms - t_taint)) -le 8000 ]; then ok; else
    fail "s4: tol5 seen gone only $((gone_ms - t_taint)) ms after the taint (deadline 8000)"
  fi
fi
event_row s4_events tol5 "Marking for deletion Pod default/tol5"
check s4_events lacks 'Cancelling'

# --- 5. the taint removed within the 5 s ----------------------------------------------------
# Same pod; the taint is removed while the countdown runs: the pod is still there 7 s after
# the taint was added, and the cancellation is an event, which `kubectl describe pod` lists.
server cancel
create s5_create "$tmp/tol5.yaml"
uid_of s5_uid tol5
uid_tol5=$uid
taint s5_taint node1 k=v:NoExecute
t_added=$t_taint
kc s5_describe describe pod tol5
check s5_describe rc 0 has '^Node: +node1/172\.16\.0\.1$' has '^Status: +Running$' \
  has '^Tolerations: +k=v:NoExecute for 5s$'
taint s5_untaint node1 k=v:NoExecute-
t_taint=$t_added
if [ $(($(_now_ms) - t_added)) -lt 4000 ]; then ok; else
  fail "s5: the untaint came $(($(_now_ms) - t_added)) ms after the taint: too late to test"
fi
event_row s5_events tol5 "Cancelling deletion of Pod default/tol5"
stays s5_stays tol5 "$uid_tol5" $((t_added + 7000))
events_json s5_events_json tol5
check_py s5_events_json "only the Cancelling event for tol5" <<'PY'
got = [(e["type"], e["reason"], e["message"], e["source"].get("component"), e.get("count"))
       for e in doc["items"]]
assert got == [("Normal", "TaintManagerEviction", "Cancelling deletion of Pod default/tol5",
                "taint-eviction-controller", 1)], got
PY
kc s5_describe2 describe pod tol5
check s5_describe2 rc 0 has '^Tolerations: +k=v:NoExecute for 5s$' \
  has '^  Normal +TaintManagerEviction +[0-9a-z]+ +taint-eviction-controller +Cancelling deletion of Pod default/tol5$'

# --- 6. the seeds' pod ----------------------------------------------------------------------
# examples/seed-two-tolerations-pod.yaml (seeds 000/001: tolerations key1=value1 NoSchedule and
# NoExecute), put on node1; node1 then gets the seed's three taints. Its only NoExecute taint
# is tolerated for ever: it stays. A plain pod on node1 is evicted.
server seed
kc s6_local patch --local -f "$src/examples/seed-two-tolerations-pod.yaml" --type=merge \
  -p '{"spec":{"nodeName":"node1"}}' -o yaml
check s6_local rc 0 has '^  nodeName: node1$'
cp "$tmp/s6_local.out" "$tmp/seed-on-node1.yaml"
create s6_create "$tmp/seed-on-node1.yaml"
run_on s6_plain plain node1
uid_of s6_uid two-tolerations
uid_seed=$uid
taint s6_taint1 node1 key1=value1:NoExecute
t_added=$t_taint
taint s6_taint2 node1 key1=value1:NoSchedule
taint s6_taint3 node1 key2=value2:NoSchedule
t_taint=$t_added
evicted s6_gone plain
stays s6_stays two-tolerations "$uid_seed" $((t_added + 3000))
event_row s6_events plain "Marking for deletion Pod default/plain"
check s6_events lacks 'two-tolerations'
kc s6_seed_events get events --field-selector involvedObject.name=two-tolerations
check s6_seed_events rc 0 out "" err "No resources found in default namespace."
kc s6_taints get node node1 -o jsonpath='{.spec.taints}'
# (kubectl puts the taints it adds first.)
check s6_taints out '[{"effect":"NoSchedule","key":"key2","value":"value2"},{"effect":"NoSchedule","key":"key1","value":"value1"},{"effect":"NoExecute","key":"key1","value":"value1"}]'

# --- 7. seed 002: the taint flaps, the pod is re-created under the same name ---------------
# Seed 002's sequence on node1 (cordon + unschedulable:NoExecute + :NoSchedule, then uncordon +
# `taint ... node.kubernetes.io/unschedulable-`), with the pod web-0 re-created under the same
# name each time, as a StatefulSet would. Upstream ≤1.32 could keep a stale queue key for
# default/web-0 and never evict the re-created pod (#107543); here every incarnation goes.
server flap --store memory
prev_uid=""
for cycle in 1 2; do
  run_on "s7_run_$cycle" web-0 node1
  uid_of "s7_uid_$cycle" web-0
  if [ "$uid" != "$prev_uid" ]; then ok; else fail "s7: cycle $cycle: web-0 has the old UID"; fi
  prev_uid=$uid
  kc "s7_cordon_$cycle" cordon node1
  check "s7_cordon_$cycle" rc 0 out "node/node1 cordoned"
  kc "s7_taint_ne_$cycle" taint node node1 node.kubernetes.io/unschedulable:NoExecute
  check "s7_taint_ne_$cycle" rc 0 out "node/node1 tainted"
  kc "s7_taint_ns_$cycle" taint node node1 node.kubernetes.io/unschedulable:NoSchedule
  check "s7_taint_ns_$cycle" rc 0 out "node/node1 tainted"
  evicted "s7_gone_$cycle" web-0
  kc "s7_uncordon_$cycle" uncordon node1
  check "s7_uncordon_$cycle" rc 0 out "node/node1 uncordoned"
  kc "s7_untaint_$cycle" taint node node1 node.kubernetes.io/unschedulable-
  check "s7_untaint_$cycle" rc 0 out "node/node1 untainted"
done
# A third web-0, created after the last untaint, is left alone (nothing stale acts on it).
run_on s7_run_3 web-0 node1
uid_of s7_uid_3 web-0
if [ "$uid" != "$prev_uid" ]; then ok; else fail "s7: the third web-0 has the old UID"; fi
t_taint=$(_now_ms)
stays s7_stays_3 web-0 "$uid" $((t_taint + 1500))
# One "Marking for deletion" per evicted incarnation (the recorder may fold them into one event
# with a count, as upstream's does), and no cancellation: nothing was pending when the taint went.
marked2() {
  events_json s7_events web-0
  python3 -c '
import json, sys
items = json.load(open(sys.argv[1]))["items"]
sys.exit(0 if sum(e.get("count", 1) for e in items
                  if e["message"] == "Marking for deletion Pod default/web-0") >= 2 else 1)
' "$tmp/s7_events.out" 2>/dev/null
}
wait_for $gone_limit marked2 || fail "waited ${gone_limit}s: two Marking events for web-0"
check_py s7_events "2 x Marking for deletion Pod default/web-0, no Cancelling" <<'PY'
got = {}
for e in doc["items"]:
    assert (e["type"], e["reason"]) == ("Normal", "TaintManagerEviction"), e
    assert e["source"].get("component") == "taint-eviction-controller", e
    got[e["message"]] = got.get(e["message"], 0) + e.get("count", 1)
assert got == {"Marking for deletion Pod default/web-0": 2}, got
PY

# --- 8. --controllers=*,-taint-eviction-controller ------------------------------------------
# The controller is off: the untolerating pod on the tainted node stays (every look for 3 s),
# no TaintManagerEviction event. `*` keeps the scheduler on.
server off '--controllers=*,-taint-eviction-controller'
run_on s8_run untouched node1
uid_of s8_uid untouched
uid_untouched=$uid
kc s8_run2 run floating --image=nginx
check s8_run2 rc 0 out "pod/floating created"
wait_for 20 out_has s8_bound '^node[1-3]$' get pod floating -o jsonpath='{.spec.nodeName}' ||
  fail "waited 20s: floating bound (the scheduler should still run)"
taint s8_taint node1 k=v:NoExecute
stays s8_stays untouched "$uid_untouched" $((t_taint + 3000))
kc s8_events get events --field-selector reason=TaintManagerEviction
check s8_events rc 0 out "" err "No resources found in default namespace."

# --- 9. tolerationSeconds 0 / negative / unset / 3600 / huge ---------------------------------
# tolerationSeconds <= 0 means at once; no tolerationSeconds means for ever; 3600 (the seeds'
# "tolerates for an hour") and 10^10 keep the pod for the test's 3 s. (For 10^10 upstream's
# nanosecond conversion overflows to a negative duration, i.e. for ever; kubetaint clamps it to
# 9*10^9 s; either way the pod stays.)
server zero --store memory
: >"$tmp/tols.yaml"
for p in "zero 0" "negative -5" "forever" "hour 3600" "huge 10000000000"; do
  read -r pod secs <<<"$p"
  cat >>"$tmp/tols.yaml" <<EOF
---
apiVersion: v1
kind: Pod
metadata:
  name: $pod
spec:
  nodeName: node1
  terminationGracePeriodSeconds: 0
  containers: [{name: app, image: nginx}]
  tolerations:
  - {key: k, operator: Equal, value: v, effect: NoExecute${secs:+, tolerationSeconds: $secs}}
EOF
done
create s9_create "$tmp/tols.yaml"
uid_of s9_uid_forever forever
uid_forever=$uid
uid_of s9_uid_hour hour
uid_hour=$uid
uid_of s9_uid_huge huge
uid_huge=$uid
taint s9_taint node1 k=v:NoExecute
evicted s9_gone_zero zero && echo "    (zero seen gone $((gone_ms - t_taint)) ms after the taint)"
evicted s9_gone_negative negative
stays s9_stays_forever forever "$uid_forever" $((t_taint + 3000))
stays s9_stays_hour hour "$uid_hour" $((t_taint + 3000))
stays s9_stays_huge huge "$uid_huge" $((t_taint + 3000))
event_row s9_events_zero zero "Marking for deletion Pod default/zero"
event_row s9_events negative "Marking for deletion Pod default/negative"
check s9_events lacks 'pod/forever' lacks 'pod/hour' lacks 'pod/huge'
kc s9_left get pods -o name
check s9_left rc 0 out "pod/forever
pod/hour
pod/huge"

# --- 10. graceful deletion ---------------------------------------------------------------------
# A pod with a grace period is evicted gracefully: Terminating (deletionTimestamp set) at once,
# gone when its simulated kubelet ends the deletion after terminationGracePeriodSeconds. The same
# for `kubectl delete pod` of a running pod.
taint s10_untaint node1 k=v:NoExecute-
for p in graceful deleted; do
  kc "s10_run_$p" run "$p" --image=nginx \
    --overrides='{"spec":{"nodeName":"node1","terminationGracePeriodSeconds":3}}'
  check "s10_run_$p" rc 0 out "pod/$p created"
done
wait_for $gone_limit out_has s10_running '^Running Running$' get pods graceful deleted \
  -o jsonpath='{.items[0].status.phase} {.items[1].status.phase}' ||
  fail "waited ${gone_limit}s: graceful and deleted Running"
kc s10_delete delete pod deleted --wait=false
check s10_delete rc 0 out 'pod "deleted" deleted'
taint s10_taint node1 k=v:NoExecute
t10=$(_now_ms)
terminating() {
  kc "$1" get pod "$2" -o jsonpath='{.metadata.deletionGracePeriodSeconds}'
  [ "$(cat "$tmp/$1.out")" = 3 ]
}
wait_for $gone_limit terminating s10_marked graceful || fail "waited ${gone_limit}s: graceful Terminating"
kc s10_table get pods graceful deleted
check s10_table rc 0 has '^graceful +1/1 +Terminating ' has '^deleted +1/1 +Terminating '
if evicted s10_gone graceful 10; then
  if [ $((gone_ms - t10)) -ge 2000 ]; then ok; else
    fail "s10: graceful gone $((gone_ms - t10)) ms after the taint, before its 3 s grace period"
  fi
fi
evicted s10_gone_deleted deleted 10

stop_server
if [ "$srv_rc" = 0 ]; then ok; else fail "server $srv_n: exit status $srv_rc on SIGTERM"; fi
finish
