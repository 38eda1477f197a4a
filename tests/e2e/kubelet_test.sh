#!/usr/bin/env bash
# End-to-end: simulated kubelets, in `kubetaint serve --nodes N` and as a separate
# `kubetaint kubelet` process, with the real kubectl.
#   1. serve's nodes are Ready, with leases in kube-node-lease, and lose the not-ready taint
#      TaintNodesByCondition gave them at registration; a pod bound to one runs (IP,
#      Ready) and `kubectl delete pod` shows it Terminating until its grace period ends.
#   2. failure injection: the kubetaint.io/simulate annotation sets node conditions, and
#      `unreachable` silences the kubelet (a deleted pod stays Terminating) until it is removed.
#   3. `kubetaint kubelet` joins the running server: its nodes register with zones, capacity and
#      registration taints, and take pods the scheduler places there; SIGTERM stops it.
#   4. bad flags: exit status 2 and a message naming the flag.
# Nothing sleeps to wait for the kubelets: waits poll kubectl until a deadline.
# Usage: kubelet_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: kubelet_test.sh KUBETAINT_BINARY}
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"

require_kubectl
limit=20


# --- 1. serve's kubelets ------------------------------------------------------------------------
server one --nodes 2 --store memory
kc nodes get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status} {.status.nodeInfo.bootID}{"\n"}{end}'
check nodes rc 0 has '^node1 True [0-9a-f-]{36}$' has '^node2 True [0-9a-f-]{36}$'
kc leases get leases -n kube-node-lease -o jsonpath='{range .items[*]}{.metadata.name}={.spec.holderIdentity},{.metadata.ownerReferences[0].kind} {end}'
check leases rc 0 out "node1=node1,Node node2=node2,Node "
# TaintNodesByCondition gave each node node.kubernetes.io/not-ready:NoSchedule as it registered;
# the node lifecycle controller lifts it once the node is Ready.
await_kc "the not-ready taint lifted" lifted "" get nodes -o jsonpath='{.items[*].spec.taints}'

kc run run web --image=nginx \
  --overrides='{"spec":{"nodeName":"node2","terminationGracePeriodSeconds":3}}'
check run rc 0 out "pod/web created"
await_kc "web Running and Ready" web_ready "Running True 10.64.2.2 172.16.0.2" get pod web \
  -o jsonpath='{.status.phase} {.status.conditions[?(@.type=="Ready")].status} {.status.podIP} {.status.hostIP}'
kc web_cs get pod web -o jsonpath='{.status.containerStatuses[0].name} {.status.containerStatuses[0].ready} {.status.containerStatuses[0].state.running.startedAt}'
check web_cs rc 0 has '^web true [0-9T:-]+Z$'
kc delete delete pod web --wait=false
check delete rc 0 out 'pod "web" deleted'
t_delete=$(_now_ms)
kc terminating get pod web
check terminating rc 0 has '^web +1/1 +Terminating '
gone() {
  kc "$1" get pod "$2" -o name
  [ "$(cat "$tmp/$1.rc")" = 1 ] && grep -q NotFound "$tmp/$1.err"
}
if wait_for 10 gone web_gone web; then
  if [ $(($(_now_ms) - t_delete)) -ge 2000 ]; then ok; else
    fail "web gone $(($(_now_ms) - t_delete)) ms after the delete, before its 3 s grace period"
  fi
else
  fail "waited 10s: web gone after its grace period"
fi

# --- 2. failure injection --------------------------------------------------------------------
conds='{range .status.conditions[*]}{.type}={.status} {end}'
kc annotate annotate node node1 kubetaint.io/simulate=memory-pressure,disk-pressure
check annotate rc 0 out "node/node1 annotated"
await_kc "node1 reports memory and disk pressure" pressure \
  "MemoryPressure=True DiskPressure=True PIDPressure=False Ready=True " get node node1 -o jsonpath="$conds"
kc not_ready annotate node node1 kubetaint.io/simulate=not-ready --overwrite
await_kc "node1 NotReady" not_ready_conds \
  "MemoryPressure=False DiskPressure=False PIDPressure=False Ready=False " get node node1 -o jsonpath="$conds"
kc not_ready_reason get node node1 -o jsonpath='{.status.conditions[?(@.type=="Ready")].reason}'
check not_ready_reason out KubeletNotReady
kc nodes_table get nodes
check nodes_table has '^node1 +NotReady ' has '^node2 +Ready '

kc cut_off annotate node node1 kubetaint.io/simulate=unreachable --overwrite
check cut_off rc 0
kc run_cut run cut --image=nginx \
  --overrides='{"spec":{"nodeName":"node1","terminationGracePeriodSeconds":1}}'
check run_cut rc 0 out "pod/cut created"
kc delete_cut delete pod cut --wait=false
check delete_cut rc 0
# Nobody ends the deletion while the node's kubelet is cut off (3 s: its grace period is 1 s).
t_cut=$(_now_ms)
still() { gone "$@" && return $never; [ $(($(_now_ms) - t_cut)) -ge 3000 ]; }
if wait_for 10 still cut_still cut; then ok; else fail "cut: gone while its kubelet was unreachable"; fi
kc heal annotate node node1 kubetaint.io/simulate-
check heal rc 0 out "node/node1 annotated"
if wait_for $limit gone cut_gone cut; then ok; else fail "waited ${limit}s: cut gone once node1 healed"; fi
await_kc "node1 Ready again" healed_conds \
  "MemoryPressure=False DiskPressure=False PIDPressure=False Ready=True " get node node1 -o jsonpath="$conds"

# --- 3. a separate kubelet process -------------------------------------------------------------
"$bin" kubelet --kubeconfig "$KUBECONFIG" --nodes 2 --prefix edge- --zones zone-a,zone-b \
  --capacity cpu=8,example.com/gpu=2 --taints gpu=yes:NoSchedule --node-lease-duration-seconds 20 \
  >"$tmp/kubelet.out" 2>"$tmp/kubelet.err" &
kubelet_pid=$!
track $kubelet_pid
registered() { grep -q 'registered with' "$tmp/kubelet.out"; }
if wait_for 30 registered; then ok; else fail "kubetaint kubelet: no registration line"; cat "$tmp/kubelet.err"; fi
kc edge get nodes edge-1 edge-2 -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.labels.topology\.kubernetes\.io/zone} {.status.capacity.cpu} {.status.capacity.example\.com/gpu} {.spec.taints[0].key}={.spec.taints[0].value}:{.spec.taints[0].effect} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}'
check edge rc 0 out "edge-1 zone-a 8 2 gpu=yes:NoSchedule True
edge-2 zone-b 8 2 gpu=yes:NoSchedule True"
kc edge_lease get lease -n kube-node-lease edge-1 -o jsonpath='{.spec.leaseDurationSeconds}'
check edge_lease rc 0 out 20
await_kc "edge nodes keep only their registration taint" edge_taints \
  "gpu=yes:NoSchedule gpu=yes:NoSchedule " get nodes edge-1 edge-2 \
  -o jsonpath='{range .items[*].spec.taints[*]}{.key}={.value}:{.effect} {end}'
cat >"$tmp/gpu.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  nodeSelector: {kubernetes.io/hostname: edge-2}
  tolerations: [{key: gpu, operator: Equal, value: "yes", effect: NoSchedule}]
  containers:
  - name: train
    image: trainer
    resources: {requests: {example.com/gpu: 1}, limits: {example.com/gpu: 1}}
YAML
kc gpu create -f "$tmp/gpu.yaml"
check gpu rc 0 out "pod/trainer created"
await_kc "trainer runs on edge-2" trainer "edge-2 Running True" get pod trainer \
  -o jsonpath='{.spec.nodeName} {.status.phase} {.status.conditions[?(@.type=="Ready")].status}'
kill -TERM $kubelet_pid
if wait_for 10 _gone $kubelet_pid; then
  wait $kubelet_pid
  rc=$?
  if [ $rc = 0 ]; then ok; else fail "kubetaint kubelet: exit status $rc on SIGTERM"; fi
else
  fail "kubetaint kubelet did not stop on SIGTERM"
fi

# --- 4. bad flags ------------------------------------------------------------------------------
bad() {  # NAME WANT ARGS...
  local name=$1 want=$2
  shift 2
  printf 'kubetaint %s\n' "$*" >"$tmp/$name.cmd"
  timeout 20 "$bin" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  echo $? >"$tmp/$name.rc"
  check "$name" rc 2 err "$want"
}
bad bad_capacity 'error: --capacity: cpu: "lots" is not a quantity' \
  kubelet --kubeconfig "$KUBECONFIG" --capacity cpu=lots
bad bad_taint_flag 'error: --taints: invalid taint effect: Sometimes, unsupported taint effect' \
  kubelet --kubeconfig "$KUBECONFIG" --taints a=b:Sometimes
bad bad_lease 'error: --node-lease-duration-seconds: must be greater than 0' \
  kubelet --kubeconfig "$KUBECONFIG" --node-lease-duration-seconds 0
bad bad_frequency 'error: invalid argument "10" for "--node-status-update-frequency" flag: time: missing unit in duration "10"' \
  serve --node-status-update-frequency 10

stop_server
if [ "$srv_rc" = 0 ]; then ok; else fail "server $srv_n: exit status $srv_rc on SIGTERM"; fi
finish
