#!/usr/bin/env bash
# End-to-end: nodes failing as a user drives them with kubectl, and what the node lifecycle
# controller, the taint eviction controller and the DaemonSet controller make of it, with the
# short flags --node-monitor-grace-period 3s --default-unreachable-toleration-seconds 2 (and
# --node-monitor-period 500ms). The nodes are serve's simulated kubelets (leases of 3 s,
# renewed every 750 ms).
#   1. a DaemonSet rolls out on the three nodes; on node2 run a pod with the default tolerations
#      and one that tolerates node.kubernetes.io/unreachable for ever.
#   2. node2 annotated kubetaint.io/simulate=unreachable: `kubectl describe node` shows
#      node.kubernetes.io/unreachable NoSchedule and NoExecute; 2 s later the default pod is
#      evicted (DisruptionTarget, "Marking for deletion" event; Terminating, its kubelet being
#      silent) while the DaemonSet's pod and the pod tolerating for ever stay.
#   3. node3 annotated memory-pressure: node.kubernetes.io/memory-pressure:NoSchedule, which
#      goes with the annotation.
#   4. node2 heals: its taints go.
# Nothing sleeps to wait for a controller: waits poll kubectl until a deadline.
# Usage: node_failure_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: node_failure_test.sh KUBETAINT_BINARY}
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"

require_kubectl
limit=30

taints='{range .spec.taints[*]}{.key}:{.effect} {end}'

server fail --store memory --nodes 3 --node-monitor-grace-period 3s --node-monitor-period 500ms \
  --default-unreachable-toleration-seconds 2

# --- 1. workloads ------------------------------------------------------------------------------
kc ds apply -f "$(dirname "$0")/../../examples/daemonset.yaml"
check ds rc 0 out "daemonset.apps/node-agent created"
kc rollout rollout status daemonset/node-agent --timeout=${limit}s
check rollout rc 0 has 'successfully rolled out'
kc web run web --image=nginx --overrides='{"spec":{"nodeName":"node2"}}'
check web rc 0 out "pod/web created"
kc web_tols get pod web -o jsonpath='{range .spec.tolerations[*]}{.key}:{.effect}:{.tolerationSeconds} {end}'
check web_tols rc 0 out "node.kubernetes.io/not-ready:NoExecute:300 node.kubernetes.io/unreachable:NoExecute:2 "
kc stay run stay --image=nginx --overrides='{"spec":{"nodeName":"node2","tolerations":[{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute"}]}}'
check stay rc 0 out "pod/stay created"
await_kc "web and stay Running" running "Running Running" get pod web stay \
  -o jsonpath='{.items[0].status.phase} {.items[1].status.phase}'
agent=$(kubectl get pods -l app=node-agent --field-selector spec.nodeName=node2 -o jsonpath='{.items[0].metadata.name}')
if [ -n "$agent" ]; then ok; else fail "no node-agent pod on node2"; fi

# --- 2. node2 unreachable ----------------------------------------------------------------------
kc cut annotate node node2 kubetaint.io/simulate=unreachable
check cut rc 0 out "node/node2 annotated"
t_cut=$(_now_ms)
await_kc "node2 tainted unreachable" cut_taints \
  "node.kubernetes.io/unreachable:NoSchedule node.kubernetes.io/unreachable:NoExecute " \
  get node node2 -o jsonpath="$taints"
kc describe describe node node2
check describe rc 0 \
  has '^Taints: +node.kubernetes.io/unreachable:NoExecute$' \
  has '^ +node.kubernetes.io/unreachable:NoSchedule$' \
  has '^ +Ready +Unknown .* NodeStatusUnknown +Kubelet stopped posting node status\.$'
evicted() {
  kc evicted get pod web -o jsonpath='{.metadata.deletionTimestamp}'
  [ -n "$(cat "$tmp/evicted.out")" ]
}
if wait_for $limit evicted; then ok; else fail "waited ${limit}s: web evicted"; _show evicted; fi
t_evicted=$(_now_ms)
# Not before the grace period (3 s) and the toleration (2 s) have passed.
if [ $((t_evicted - t_cut)) -ge 4000 ]; then ok; else
  fail "web evicted $((t_evicted - t_cut)) ms after node2 went silent, before 3 s + 2 s"
fi
kc web_cond get pod web -o jsonpath='{.status.conditions[?(@.type=="DisruptionTarget")].reason}'
check web_cond rc 0 out "DeletionByTaintManager"
kc web_events get events --field-selector involvedObject.name=web,reason=TaintManagerEviction \
  -o jsonpath='{.items[*].message}'
check web_events rc 0 out "Marking for deletion Pod default/web"
kc web_get get pod web
check web_get rc 0 has '^web +1/1 +Terminating '
kc stay_get get pod stay "$agent" -o jsonpath='{range .items[*]}{.metadata.name}:{.metadata.deletionTimestamp}:{.spec.nodeName} {end}'
check stay_get rc 0 out "stay::node2 $agent::node2 "

# --- 3. memory pressure ------------------------------------------------------------------------
kc pressure annotate node node3 kubetaint.io/simulate=memory-pressure
check pressure rc 0 out "node/node3 annotated"
await_kc "node3 tainted memory-pressure" pressure_taints "node.kubernetes.io/memory-pressure:NoSchedule " \
  get node node3 -o jsonpath="$taints"
kc relief annotate node node3 kubetaint.io/simulate-
check relief rc 0 out "node/node3 annotated"
await_kc "node3's memory-pressure taint gone" relief_taints "" get node node3 -o jsonpath="$taints"

# --- 4. node2 heals ------------------------------------------------------------------------------
kc heal annotate node node2 kubetaint.io/simulate-
check heal rc 0 out "node/node2 annotated"
await_kc "node2's taints gone" heal_taints "" get node node2 -o jsonpath="$taints"
await_kc "node2 Ready" heal_ready "True" get node node2 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'

stop_server
if [ "$srv_rc" = 0 ]; then ok; else fail "SIGTERM: exit status $srv_rc"; fi
finish
