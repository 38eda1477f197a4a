#!/usr/bin/env bash
# End-to-end: the DaemonSet controller (upstream `daemonset-controller`) with the real kubectl
# against `kubetaint serve --nodes N` on 127.0.0.1:0. Nothing sleeps: every wait polls a kubectl
# query until a deadline (wait_for in lib.sh).
#   1. `kubectl apply` a DaemonSet: one pod per node, bound by the scheduler through the node
#      affinity the controller gives it, with the daemon tolerations, owner reference and labels;
#      SuccessfulCreate events; `kubectl get ds` counts
#   2. `kubectl rollout status`: waits while no pod is Ready, succeeds once all are
#   3. a rolling update (`kubectl set image`): every pod replaced, rollout status succeeds
#   4. a NoSchedule taint: the daemon pod stays (misscheduled); `kubectl drain
#      --ignore-daemonsets` leaves it too; a cordoned node still gets a new DaemonSet's pod
#   5. an untolerated NoExecute taint: the controller deletes the pod (taint eviction controller
#      off, so the delete is the DaemonSet controller's), SuccessfulDelete event
#   6. --controllers=*,-daemonset-controller: no daemon pods
# The nodes here have no kubelet (serve's simulated kubelets would run the pods at once): they
# are created with kubectl, Ready, and the test marks pods Running and Ready through the
# pods/status subresource with kubectl, as a kubelet would, to see rollout status wait first.
# The node lifecycle controller is off (these nodes never heartbeat), and with it
# TaintNodesByCondition (nothing would lift its not-ready taint); the daemon pods have no grace
# period (nothing would end a graceful deletion).
# Usage: daemonset_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: daemonset_test.sh KUBETAINT_BINARY}
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"

require_kubectl

limit=20  # seconds any one wait may take

# out_is NAME WANT KUBECTL_ARGS...: runs the kubectl as NAME; true when its stdout is WANT.
out_is() {
  local name=$1 want=$2
  shift 2
  kc "$name" "$@"
  [ "$(cat "$tmp/$name.out")" = "$want" ]
}
await() {  # WHAT COMMAND...: wait_for $limit; a timeout is one failure
  local what=$1
  shift
  wait_for $limit "$@" || fail "waited ${limit}s: $what"
}

# The daemon pods' nodes, sorted, one a line ("<none>" for an unbound pod).
nodes_cols='custom-columns=NODE:.spec.nodeName'
pod_nodes() {  # NAME [SELECTOR]
  kc "$1" get pods -l "${2:-app=agent}" -o "$nodes_cols" --no-headers --sort-by=.spec.nodeName
}
nodes_are() {  # NAME WANT: pod_nodes NAME is WANT
  pod_nodes "$1"
  [ "$(cat "$tmp/$1.out")" = "$2" ]
}
pod_on() {  # NODE: the name of the agent pod bound to NODE
  kubectl --cache-dir "$tmp/kubectl-cache" get pods -l app=agent \
    --field-selector "spec.nodeName=$1" -o jsonpath='{.items[0].metadata.name}' 2>/dev/null
}

# mark_ready: a kubelet's part for every bound agent pod that is not Ready yet: phase Running and
# the Ready condition, through pods/status (a strategic merge patch: conditions merge by type).
mark_ready() {
  local now pod
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  for pod in $(kubectl --cache-dir "$tmp/kubectl-cache" get pods -l app=agent \
    -o jsonpath='{range .items[?(@.spec.nodeName)]}{.metadata.name}{" "}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
    awk '$2 != "True" {print $1}'); do
    kubectl --cache-dir "$tmp/kubectl-cache" patch pod "$pod" --subresource=status -p \
      "{\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":\"$now\"}]}}" \
      >/dev/null
  done
}
# rolled_out: marks the pods Ready, then asks rollout status (2 s).
rolled_out() {
  mark_ready
  kc rollout_poll rollout status daemonset/agent --timeout=2s
  [ "$(cat "$tmp/rollout_poll.rc")" = 0 ]
}
ds_status_is() {  # WANT: "desired current ready updated available misscheduled"
  out_is ds_counts "$1" get ds agent -o \
    jsonpath='{.status.desiredNumberScheduled} {.status.currentNumberScheduled} {.status.numberReady} {.status.updatedNumberScheduled} {.status.numberAvailable} {.status.numberMisscheduled}'
}

cat >"$tmp/agent.yaml" <<'EOF'
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - {name: agent, image: "agent:v1"}
EOF

# nodes N: node1..nodeN, Ready, 4 cpu, 16Gi, 110 pods, with no kubelet behind them.
nodes() {
  local i
  : >"$tmp/nodes.yaml"
  for i in $(seq 1 "$1"); do
    cat >>"$tmp/nodes.yaml" <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: node$i
  labels: {kubernetes.io/hostname: node$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64}
status:
  capacity: {cpu: "4", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: kubelet is posting ready status}
EOF
  done
  kc "nodes_$srv_n" create -f "$tmp/nodes.yaml"
  check "nodes_$srv_n" rc 0
}

# --- 1. one pod per node ------------------------------------------------------------------------
server one --store memory '--controllers=*,-node-lifecycle-controller' --disable-admission-plugins=TaintNodesByCondition
nodes 3
kc apply apply -f "$tmp/agent.yaml"
check apply rc 0 out "daemonset.apps/agent created"
await "a bound agent pod on each node" nodes_are pods_bound "node1
node2
node3"
check pods_bound out "node1
node2
node3"
kc wide get pods -l app=agent -o wide
check wide rc 0 has '^agent-[a-z0-9]{5} +0/1 +Pending +0 +[0-9a-z]+ +<none> +node1 ' \
  has '^agent-[a-z0-9]{5} +0/1 +Pending +0 +[0-9a-z]+ +<none> +node2 ' \
  has '^agent-[a-z0-9]{5} +0/1 +Pending +0 +[0-9a-z]+ +<none> +node3 '

pod1=$(pod_on node1)
kc pod_yaml get pod "$pod1" -o yaml
# The six daemon tolerations, in upstream's order, without tolerationSeconds.
check pod_yaml rc 0 has '^  tolerations:$' \
  has '^  - effect: NoExecute$' has '^    key: node.kubernetes.io/not-ready$' \
  has '^    key: node.kubernetes.io/unreachable$' \
  has '^    key: node.kubernetes.io/disk-pressure$' \
  has '^    key: node.kubernetes.io/memory-pressure$' \
  has '^    key: node.kubernetes.io/pid-pressure$' \
  has '^    key: node.kubernetes.io/unschedulable$' \
  lacks 'tolerationSeconds' lacks 'network-unavailable'
kc pod_json get pod "$pod1" -o json
kc ds_json get ds agent -o json
cp "$tmp/ds_json.out" "$tmp/ds.json"
check_py pod_json "daemon pod as upstream's controller creates it" <<'PY'
ds = json.load(open(os.path.join(tmp, "ds.json")))
m = doc["metadata"]
assert m["generateName"] == "agent-", m
assert m["name"].startswith("agent-"), m
assert m["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                                 "uid": ds["metadata"]["uid"], "controller": True,
                                 "blockOwnerDeletion": True}], m["ownerReferences"]
labels = m["labels"]
assert labels["app"] == "agent" and labels["pod-template-generation"] == "1", labels
assert len(labels["controller-revision-hash"]) > 0, labels
tol = [(t.get("key"), t.get("operator"), t.get("effect"), t.get("tolerationSeconds"))
       for t in doc["spec"]["tolerations"]]
want = [("node.kubernetes.io/" + k, "Exists", e, None) for k, e in [
    ("not-ready", "NoExecute"), ("unreachable", "NoExecute"), ("disk-pressure", "NoSchedule"),
    ("memory-pressure", "NoSchedule"), ("pid-pressure", "NoSchedule"),
    ("unschedulable", "NoSchedule")]]
assert tol == want, tol
terms = doc["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
assert terms == {"nodeSelectorTerms": [{"matchFields": [
    {"key": "metadata.name", "operator": "In", "values": ["node1"]}]}]}, terms
assert doc["spec"]["nodeName"] == "node1"
PY
check_py ds_json "the API server's DaemonSet defaults and template generation" <<'PY'
s = doc["spec"]
assert s["updateStrategy"] == {"type": "RollingUpdate",
                               "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}, s
assert s["revisionHistoryLimit"] == 10, s
assert doc["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "1"
assert doc["metadata"]["generation"] == 1
PY
kc created_events get events --field-selector reason=SuccessfulCreate -o json
check_py created_events "three SuccessfulCreate events about the DaemonSet" <<'PY'
items = doc["items"]
assert len(items) == 3, [e["message"] for e in items]
for e in items:
    assert e["involvedObject"]["kind"] == "DaemonSet" and e["involvedObject"]["name"] == "agent", e
    assert e["source"] == {"component": "daemonset-controller"}, e["source"]
    assert e["type"] == "Normal" and e["message"].startswith("Created pod: agent-"), e
PY
await "status 3 desired, 3 current, 0 ready" ds_status_is "3 3 0 3  0"
check ds_counts out "3 3 0 3  0"
kc get_ds get ds agent
check get_ds rc 0 table "NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE
agent 3 3 0 3 0 <none> 1s"

# --- 2. rollout status --------------------------------------------------------------------------
kc rollout_waiting rollout status daemonset/agent --timeout=2s
check rollout_waiting rc 1 \
  has '^Waiting for daemon set "agent" rollout to finish: 0 of 3 updated pods are available\.\.\.$' \
  err_has 'timed out waiting for the condition'
await "rollout status to succeed once the pods are Ready" rolled_out
check rollout_poll rc 0 has '^daemon set "agent" successfully rolled out$'
await "status 3 ready and available" ds_status_is "3 3 3 3 3 0"
check ds_counts out "3 3 3 3 3 0"

# --- 3. rolling update --------------------------------------------------------------------------
old_hash=$(kubectl --cache-dir "$tmp/kubectl-cache" get pod "$pod1" \
  -o jsonpath='{.metadata.labels.controller-revision-hash}')
kc set_image set image daemonset/agent agent=agent:v2
check set_image rc 0 out "daemonset.apps/agent image updated"
# Each round marks the newest pod Ready and lets the controller replace the next: allow more time.
wait_for 60 rolled_out || fail "waited 60s: the rolling update to finish"
check rollout_poll rc 0 has '^daemon set "agent" successfully rolled out$'
kc rolled get pods -l app=agent -o json
check_py rolled "every pod replaced by one of the new template" <<PY
items = doc["items"]
assert len(items) == 3, [p["metadata"]["name"] for p in items]
assert sorted(p["spec"]["nodeName"] for p in items) == ["node1", "node2", "node3"]
for p in items:
    assert p["spec"]["containers"][0]["image"] == "agent:v2", p["spec"]["containers"]
    assert p["metadata"]["labels"]["controller-revision-hash"] != "$old_hash", p["metadata"]
    assert p["metadata"]["labels"]["pod-template-generation"] == "2", p["metadata"]
PY
kc deleted_events get events --field-selector reason=SuccessfulDelete -o jsonpath='{range .items[*]}{.message}{"\n"}{end}'
check deleted_events rc 0 has "^Deleted pod: $pod1\$"
kc ds_gen get ds agent -o jsonpath='{.metadata.generation} {.status.observedGeneration}'
check ds_gen out "2 2"

# --- 4. NoSchedule taint, drain -----------------------------------------------------------------
pod2=$(pod_on node2)
kc taint_ns taint nodes node2 dedicated=x:NoSchedule
check taint_ns rc 0 out "node/node2 tainted"
# A change of the DaemonSet makes it sync (upstream does not sync it for a node change that
# neither creates nor deletes a pod): its status then counts the pod as misscheduled.
kc touch annotate ds agent touched=1
await "node2 counted as misscheduled" ds_status_is "2 2 2 2 2 1"
check ds_counts out "2 2 2 2 2 1"
kc still_there get pod "$pod2" -o jsonpath='{.spec.nodeName}'
check still_there rc 0 out "node2"

pod3=$(pod_on node3)
kc drain drain node3 --ignore-daemonsets
check drain rc 0 has '^node/node3 cordoned$' has '^node/node3 drained$' \
  err_has "ignoring DaemonSet-managed Pods: default/$pod3"
kc drained_pod get pod "$pod3" -o jsonpath='{.spec.nodeName}'
check drained_pod rc 0 out "node3"
# A cordoned node still gets a daemon pod (it tolerates the unschedulable taint, which the node
# lifecycle controller would add; added here by hand): a second DaemonSet lands on node1 and the
# cordoned node3, not on node2 (NoSchedule).
kc cordoned_taint taint nodes node3 node.kubernetes.io/unschedulable:NoSchedule
check cordoned_taint rc 0 out "node/node3 tainted"
sed 's/agent/late/g' "$tmp/agent.yaml" >"$tmp/late.yaml"
kc apply_late apply -f "$tmp/late.yaml"
check apply_late rc 0 out "daemonset.apps/late created"
late_nodes() {
  kc late_nodes get pods -l app=late -o "$nodes_cols" --no-headers --sort-by=.spec.nodeName
  [ "$(cat "$tmp/late_nodes.out")" = "node1
node3" ]
}
await "late's pods bound on node1 and the cordoned node3" late_nodes
check late_nodes out "node1
node3"
kc still_cordoned get pod "$pod3" -o jsonpath='{.spec.nodeName}'
check still_cordoned rc 0 out "node3"

# --- 5. NoExecute: the controller deletes the pod ----------------------------------------------
server two --store memory --controllers='*,-taint-eviction-controller,-node-lifecycle-controller' --disable-admission-plugins=TaintNodesByCondition
nodes 2
kc apply2 apply -f "$tmp/agent.yaml"
check apply2 rc 0 out "daemonset.apps/agent created"
await "a bound agent pod on each node" nodes_are pods2 "node1
node2"
victim=$(pod_on node2)
kc taint_ne taint nodes node2 evict=now:NoExecute
check taint_ne rc 0 out "node/node2 tainted"
await "the node2 pod deleted, none created there" nodes_are pods2_after "node1"
check pods2_after out "node1"
kc victim_gone get pod "$victim"
check victim_gone rc 1 err "Error from server (NotFound): pods \"$victim\" not found"
kc deleted2 get events --field-selector reason=SuccessfulDelete -o jsonpath='{range .items[*]}{.source.component}: {.message}{"\n"}{end}'
check deleted2 rc 0 out "daemonset-controller: Deleted pod: $victim"
await "status 1 desired" ds_status_is "1 1 0 1  0"
# The taint goes: a pod comes back.
kc untaint taint nodes node2 evict=now:NoExecute-
await "a pod on node2 again" nodes_are pods2_back "node1
node2"

# --- 6. --controllers=*,-daemonset-controller --------------------------------------------------
server off --store memory --controllers='*,-daemonset-controller,-node-lifecycle-controller' --disable-admission-plugins=TaintNodesByCondition
nodes 1
kc apply3 apply -f "$tmp/agent.yaml"
check apply3 rc 0 out "daemonset.apps/agent created"
# A plain pod the scheduler binds shows that the components run; the DaemonSet has no pod.
kc plain run plain --image=nginx --restart=Never
await "the plain pod bound" out_is plain_node node1 get pod plain -o jsonpath='{.spec.nodeName}'
kc no_pods get pods -l app=agent
check no_pods rc 0 err "No resources found in default namespace."
kc off_status get ds agent -o jsonpath='{.status.desiredNumberScheduled} {.status.observedGeneration}'
check off_status out "0 "

stop_server
if [ "$srv_rc" = 0 ]; then ok; else fail "server: exit status $srv_rc on SIGTERM"; fi
finish
