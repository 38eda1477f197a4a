#!/usr/bin/env bash
# End-to-end: the garbage collector and kubectl's --cascade, against `kubetaint serve --nodes 2`
# (simulated kubelets) with the real kubectl:
#   1. `kubectl delete daemonset` (background): its pods are deleted (Terminating, their grace
#      period running);
#   2. --cascade=orphan: the DaemonSet goes, its pods stay without ownerReferences;
#   3. --cascade=foreground: the DaemonSet stays, with the foregroundDeletion finalizer, while
#      its pods are deleted;
#   4. `kubectl delete node`: the node's Lease (owned by it) goes;
#   5. a bad propagation policy is refused with upstream's message.
# Nothing sleeps to wait for a controller: waits poll kubectl until a deadline.
# Usage: gc_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: gc_test.sh KUBETAINT_BINARY}
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"

require_kubectl
limit=30
ds_yaml="$(dirname "$0")/../../examples/daemonset.yaml"

rollout() {  # NAME: applies the example DaemonSet and waits for its two pods
  kc "$1" apply -f "$ds_yaml"
  check "$1" rc 0
  kc "$1_rollout" rollout status daemonset/node-agent --timeout=${limit}s
  check "$1_rollout" rc 0 has 'successfully rolled out'
}

server gc --store memory --nodes 2

# --- 1. background ------------------------------------------------------------------------------
rollout bg
kc bg_names get pods -l app=node-agent -o jsonpath='{.items[*].metadata.name}'
bg_pods=$(cat "$tmp/bg_names.out")
kc bg_delete delete daemonset node-agent --wait=false
check bg_delete rc 0 out 'daemonset.apps "node-agent" deleted'
terminating() {  # every pod of $bg_pods has a deletionTimestamp
  kc bg_ts get pods $bg_pods -o jsonpath='{range .items[*]}{.metadata.deletionTimestamp}{"\n"}{end}'
  [ "$(grep -c . "$tmp/bg_ts.out")" = 2 ]
}
if wait_for $limit terminating; then ok; else fail "waited ${limit}s: the DaemonSet's pods deleted"; _show bg_ts; fi
kc bg_get get pods $bg_pods
check bg_get rc 0 has 'Terminating'
kc bg_cleanup delete pods $bg_pods --grace-period=0 --force
check bg_cleanup rc 0

# --- 2. orphan ----------------------------------------------------------------------------------
rollout orphan
kc orphan_names get pods -l app=node-agent -o jsonpath='{.items[*].metadata.name}'
orphan_pods=$(cat "$tmp/orphan_names.out")
kc orphan_delete delete daemonset node-agent --cascade=orphan
check orphan_delete rc 0 out 'daemonset.apps "node-agent" deleted'
await_kc "orphaned pods without owners" orphan_owners "" get pods $orphan_pods \
  -o jsonpath='{.items[*].metadata.ownerReferences}'
kc orphan_ds get daemonset node-agent
check orphan_ds rc 1 err_has 'NotFound'
kc orphan_alive get pods $orphan_pods -o jsonpath='{range .items[*]}{.metadata.deletionTimestamp}{end}'
check orphan_alive rc 0 out ""
kc orphan_cleanup delete pods $orphan_pods --grace-period=0 --force
check orphan_cleanup rc 0

# --- 3. foreground ------------------------------------------------------------------------------
rollout fg
kc fg_delete delete daemonset node-agent --cascade=foreground --wait=false
check fg_delete rc 0 out 'daemonset.apps "node-agent" deleted'
kc fg_ds get daemonset node-agent -o jsonpath='{.metadata.finalizers} {.metadata.deletionTimestamp!=""}'
check fg_ds rc 0 has '^\["foregroundDeletion"\] '
fg_terminating() {
  kc fg_ts get pods -l app=node-agent -o jsonpath='{range .items[?(@.metadata.ownerReferences)]}{.metadata.deletionTimestamp}{"\n"}{end}'
  [ "$(grep -c . "$tmp/fg_ts.out")" -ge 2 ] && ! grep -q '^$' "$tmp/fg_ts.out"
}
if wait_for $limit fg_terminating; then ok; else fail "waited ${limit}s: foreground dependents deleted"; _show fg_ts; fi

# --- 4. a node's lease ----------------------------------------------------------------------------
kc lease get lease -n kube-node-lease node2 -o jsonpath='{.metadata.ownerReferences[0].kind}'
check lease rc 0 out "Node"
kc node_delete delete node node2
check node_delete rc 0 out 'node "node2" deleted'
gone() {
  kc lease_gone get lease -n kube-node-lease node2
  [ "$(cat "$tmp/lease_gone.rc")" = 1 ] && grep -q NotFound "$tmp/lease_gone.err"
}
if wait_for $limit gone; then ok; else fail "waited ${limit}s: node2's lease gone"; _show lease_gone; fi

# --- 5. bad policy ------------------------------------------------------------------------------
kc bad_policy delete --raw '/api/v1/nodes/node1?propagationPolicy=Sometimes'
check bad_policy rc 1 err_has 'propagationPolicy: Unsupported value: "Sometimes": supported values: "Foreground", "Background", "Orphan", "nil"'

stop_server
if [ "$srv_rc" = 0 ]; then ok; else fail "SIGTERM: exit status $srv_rc"; fi
finish
