#!/usr/bin/env bash
# End-to-end: the node lifecycle controller of `kubetaint serve`, seen through the real kubectl,
# with short flags (--node-monitor-period 500ms --node-monitor-grace-period 10s). The nodes are
# serve's simulated kubelets, whose leases then last 10 s (renewed every 2.5 s); node4 is cut off
# with the kubetaint.io/simulate=unreachable annotation, and heals when it is removed. A small
# heartbeat loop (python3, standard library) also renews the Leases of the nodes named in
# $tmp/alive every 500 ms, so that on a loaded 2-core machine a live node never looks silent.
#   1. bad flag values: pflag's messages, exit status 2
#   2. node4 is silent: Ready Unknown with upstream's reason and message, the unreachable
#      taints (NoSchedule and, its zone being healthy, NoExecute), the events; the others stay
#   3. cordon adds node.kubernetes.io/unschedulable:NoSchedule, uncordon removes it
#   4. node4 back (Lease renewed, Ready posted): its taints go
#   5. --controllers=*,-node-lifecycle-controller: a silent node stays as it is
# Usage: nodelifecycle_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: nodelifecycle_test.sh KUBETAINT_BINARY}
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"

require_kubectl

# The server's gitVersion, e.g. v1.35.0+kubetaint.0.1.0, from `kubetaint version`.
gv=$("$bin" version | sed -nE 's/^kubetaint ([0-9.]+) \(Kubernetes (v[0-9.]+) semantics\)$/\2+kubetaint.\1/p')

# --- 1. bad flag values ----------------------------------------------------------------------
bad_flag() {  # NAME WANT_STDERR ARGS...
  local name=$1 want=$2
  shift 2
  printf 'kubetaint serve %s\n' "$*" >"$tmp/$name.cmd"
  "$bin" serve --listen 127.0.0.1:0 --data-dir "$tmp/never" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  echo $? >"$tmp/$name.rc"
  check "$name" rc 2 err "$want"
}
bad_flag bad_duration \
  'error: invalid argument "5" for "--node-monitor-grace-period" flag: time: missing unit in duration "5"' \
  --node-monitor-grace-period 5
bad_flag bad_unit \
  'error: invalid argument "1d" for "--node-startup-grace-period" flag: time: unknown unit "d" in duration "1d"' \
  --node-startup-grace-period 1d
bad_flag bad_rate \
  'error: invalid argument "fast" for "--node-eviction-rate" flag: strconv.ParseFloat: parsing "fast": invalid syntax' \
  --node-eviction-rate fast
bad_flag bad_threshold \
  'error: invalid argument "5e9" for "--large-cluster-size-threshold" flag: strconv.ParseInt: parsing "5e9": invalid syntax' \
  --large-cluster-size-threshold 5e9
bad_flag bad_period 'error: --node-monitor-period: must be greater than 0, not 0s' \
  --node-monitor-period 0s

# --- the heartbeats --------------------------------------------------------------------------
alive=$tmp/alive
heartbeats() {  # renews the Leases of the nodes listed in $alive every 500 ms, until killed
  python3 - "$srv_url" "$alive" <<'PY' &
import datetime, json, os, ssl, sys, time, urllib.error, urllib.request
url, alive = sys.argv[1], sys.argv[2]
tls = ssl.create_default_context(cafile=os.environ["KT_CA"])
tls.load_cert_chain(os.environ["KT_CERT"], os.environ["KT_KEY"])
base = url + "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
def send(method, path, body, ctype):
    r = urllib.request.Request(base + path, data=json.dumps(body).encode(), method=method,
                               headers={"Content-Type": ctype})
    try:
        urllib.request.urlopen(r, timeout=5, context=tls).read()
        return 200
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return 0
while True:
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    for n in open(alive).read().split():
        if send("PATCH", "/" + n, {"spec": {"renewTime": now}},
                "application/merge-patch+json") == 404:
            send("POST", "", {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                              "metadata": {"name": n, "namespace": "kube-node-lease"},
                              "spec": {"holderIdentity": n, "leaseDurationSeconds": 40,
                                       "renewTime": now}}, "application/json")
    time.sleep(0.5)
PY
  hb_pid=$!
  track $hb_pid
}

# field_is NAME WANT NODE JSONPATH: kubectl get node NODE -o jsonpath prints WANT.
field_is() {
  kc "$1" get node "$3" -o jsonpath="$4"
  [ "$(cat "$tmp/$1.out")" = "$2" ]
}
ready_of='{.status.conditions[?(@.type=="Ready")].status}'
# taint keys:effects of a node, sorted, one line
taints_of() {
  kc "$1" get node "$2" -o jsonpath='{range .spec.taints[*]}{.key}:{.effect}{"\n"}{end}'
  sort "$tmp/$1.out" | tr '\n' ' ' | sed 's/ $//' >"$tmp/$1.sorted"
}
taints_are() {  # NAME NODE WANT
  taints_of "$1" "$2"
  [ "$(cat "$tmp/$1.sorted")" = "$3" ]
}

# --- 2. a silent node ------------------------------------------------------------------------
printf 'node1\nnode2\nnode3\n' >"$alive"
start_server "$tmp/data" --store memory --nodes 4 --disable-scheduler \
  --node-monitor-period 500ms --node-monitor-grace-period 10s --node-startup-grace-period 10s ||
  finish
heartbeats
kc n4_cut annotate node node4 kubetaint.io/simulate=unreachable
check n4_cut rc 0 out "node/node4 annotated"

unreachable='node.kubernetes.io/unreachable:NoExecute node.kubernetes.io/unreachable:NoSchedule'
if wait_for 30 field_is n4_ready Unknown node4 "$ready_of"; then ok; else
  fail "node4: Ready is not Unknown within 30 s"
  _show n4_ready
fi
if wait_for 30 taints_are n4_taints node4 "$unreachable"; then ok; else
  fail "node4: not tainted unreachable NoSchedule and NoExecute within 30 s"
  _show n4_taints
fi
kc n4_describe describe node node4
check n4_describe rc 0 \
  has '^  Ready +Unknown .* NodeStatusUnknown +Kubelet stopped posting node status\.$' \
  has '^  MemoryPressure +Unknown .* NodeStatusUnknown +Kubelet stopped posting node status\.$' \
  has '^  PIDPressure +Unknown .* NodeStatusUnknown +Kubelet stopped posting node status\.$' \
  has '^Taints: +node\.kubernetes\.io/unreachable:NoExecute$' \
  has '^ +node\.kubernetes\.io/unreachable:NoSchedule$' \
  has '^  Normal +RegisteredNode .* node-controller +Node node4 event: Registered Node node4 in Controller$' \
  has '^  Normal +NodeNotReady .* node-controller +Node node4 status is now: NodeNotReady$'
kc nodes get nodes --no-headers
check nodes rc 0 table "node1 Ready <none> 1s $gv
node2 Ready <none> 1s $gv
node3 Ready <none> 1s $gv
node4 NotReady <none> 1s $gv"
for n in node1 node2 node3; do
  taints_of "${n}_taints" "$n"
  check "${n}_taints" out ""
done

# --- 3. cordon -------------------------------------------------------------------------------
kc cordon cordon node2
check cordon rc 0 out "node/node2 cordoned"
if wait_for 10 taints_are n2_cordoned node2 'node.kubernetes.io/unschedulable:NoSchedule'; then
  ok
else
  fail "node2: no unschedulable taint within 10 s of the cordon"
  _show n2_cordoned
fi
kc uncordon uncordon node2
if wait_for 10 taints_are n2_uncordoned node2 ''; then ok; else
  fail "node2: the unschedulable taint stayed after uncordon"
  _show n2_uncordoned
fi

# --- 4. node4 back ---------------------------------------------------------------------------
kc n4_heal annotate node node4 kubetaint.io/simulate-
check n4_heal rc 0 out "node/node4 annotated"
if wait_for 30 taints_are n4_back node4 ''; then ok; else
  fail "node4: its taints did not go once it was back"
  _show n4_back
fi
if wait_for 10 field_is n4_ready_again True node4 "$ready_of"; then ok; else
  fail "node4: not Ready again"
  _show n4_ready_again
fi
kill $hb_pid
reap $hb_pid
stop_server
if [ "$srv_rc" = 0 ]; then ok; else fail "SIGTERM: exit status $srv_rc"; fi

# --- 5. turned off ---------------------------------------------------------------------------
# A silent node stays Ready and untainted for 3 s, three grace periods (TaintNodesByCondition is
# off too: nothing would lift its not-ready taint).
start_server "$tmp/off" --store memory --nodes 1 --disable-scheduler \
  --node-monitor-period 200ms --node-monitor-grace-period 1s \
  '--controllers=*,-node-lifecycle-controller' --disable-admission-plugins=TaintNodesByCondition ||
  finish
kc off_cut annotate node node1 kubetaint.io/simulate=unreachable
check off_cut rc 0
t_end=$(($(_now_ms) + 3000))
looks=0
while :; do
  looks=$((looks + 1))
  if ! field_is off_ready True node1 "$ready_of" || ! taints_are off_taints node1 ''; then
    fail "off: node1 changed (look $looks)"
    _show off_ready
    _show off_taints
    break
  fi
  [ "$(_now_ms)" -ge $t_end ] && break
  sleep 0.2
done
[ "$(_now_ms)" -ge $t_end ] && ok
kc off_events get events
check off_events rc 0 out "" err "No resources found in default namespace."
stop_server
if [ "$srv_rc" = 0 ]; then ok; else fail "SIGTERM: exit status $srv_rc"; fi
finish
