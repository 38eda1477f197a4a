#!/usr/bin/env bash
# End-to-end: the scheduler, driven by the real kubectl against `kubetaint serve` on
# 127.0.0.1:0, as a user would type the commands. Every block asserts results (where pods land,
# their PodScheduled condition, the scheduler's messages and events), worded as upstream
# kube-scheduler 1.35 words them. Each block runs its own server (own data directory under
# $tmp), so the blocks stay independent. Nothing sleeps to wait for the scheduler: every wait
# polls a kubectl query until a deadline (wait_for in lib.sh).
#   1. the seed example (node1 with three taints, a pod with two tolerations)
#   2. dedicated nodes (taint + label + required node affinity)
#   3. GPU nodes (extended resource nvidia.com/gpu in the node status, plus a taint)
#   4. PreferNoSchedule
#   5. cordon / uncordon
#   6. preemption (PriorityClasses low and high)
#   7. `kubetaint check` against the live cluster agrees with the scheduler
#   8. --disable-scheduler
#   9. --background-nice: the scheduler's threads yield to the threads that answer requests
# Usage: scheduler_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: scheduler_test.sh KUBETAINT_BINARY}
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"

require_kubectl

limit=20  # seconds any one wait for the scheduler may take

# Every block's server runs without the node lifecycle controller: nodes the blocks create with
# kubectl have no kubelet and would turn NotReady and tainted node.kubernetes.io/unreachable,
# cordons would get node.kubernetes.io/unschedulable, and its events would show in the blocks
# that list events; what is checked here is the scheduler's work alone. Without the controller
# nothing lifts TaintNodesByCondition's not-ready taint, so that plugin is off too.
nlc_off='--controllers=*,-node-lifecycle-controller'

# out_is NAME WANT KUBECTL_ARGS...: runs the kubectl as NAME; true when its stdout is WANT.
out_is() {
  local name=$1 want=$2
  shift 2
  kc "$name" "$@"
  [ "$(cat "$tmp/$name.out")" = "$want" ]
}
# out_has NAME REGEX KUBECTL_ARGS...: true when a stdout line matches REGEX.
out_has() {
  local name=$1 re=$2
  shift 2
  kc "$name" "$@"
  grep -Eq -- "$re" "$tmp/$name.out"
}
# await WHAT COMMAND...: wait_for $limit on COMMAND (out_is, out_has, settled, ...); a timeout is
# one failure (the check on the last output that follows says what was seen instead).
await() {
  local what=$1
  shift
  wait_for $limit "$@" || fail "waited ${limit}s: $what"
}

# bin_run NAME ARGS...: the kubetaint binary, kept like kc keeps a kubectl (for check).
bin_run() {
  local name=$1
  shift
  printf 'kubetaint %s\n' "$*" >"$tmp/$name.cmd"
  timeout 60 "$bin" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  echo $? >"$tmp/$name.rc"
}

# re TEXT: TEXT as an extended regular expression that matches it literally.
re() { printf '%s' "$1" | sed 's/[][\.*^$()+?{}|]/\\&/g'; }

# The PodScheduled condition's reason ("" while the scheduler has not looked at the pod, and
# for PodScheduled=True, which has none) and the node, one "POD NODE REASON" line per pod.
cols='custom-columns=POD:.metadata.name,NODE:.spec.nodeName,REASON:.status.conditions[?(@.type=="PodScheduled")].reason'
placement() {  # NAME [GET_ARGS...]: kc NAME get pods ... sorted by name, no headers
  local name=$1
  shift
  kc "$name" get pods "$@" -o "$cols" --no-headers --sort-by=.metadata.name
}
# settled NAME N [GET_ARGS...]: N pods listed, each bound or marked Unschedulable.
settled() {
  local name=$1 n=$2
  shift 2
  placement "$name" "$@"
  [ "$(grep -c . "$tmp/$name.out")" -eq "$n" ] && ! grep -Eq '^[^ ]+ +<none> +<none>$' "$tmp/$name.out"
}
cond_of() {  # NAME POD: the pod's conditions as JSON
  kc "$1" get pod "$2" -o jsonpath='{.status.conditions}'
}
reason_of() {  # NAME POD WANT: out_is on the PodScheduled reason
  out_is "$1" "$3" get pod "$2" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}'
}
# unschedulable NAME POD MESSAGE: the pod is unbound, with exactly one condition,
# PodScheduled=False, reason Unschedulable, and MESSAGE.
unschedulable() {
  cond_of "$1" "$2"
  printf '%s' "$3" >"$tmp/$1.want"
  check_py "$1" "$2: PodScheduled False / Unschedulable with the upstream message" <<PY
want = open(os.path.join(tmp, "$1.want")).read()
assert isinstance(doc, list) and len(doc) == 1, doc
c = doc[0]
assert (c["type"], c["status"], c.get("reason")) == ("PodScheduled", "False", "Unschedulable"), c
assert c.get("message") == want, (c.get("message"), want)
PY
  kc "$1_node" get pod "$2" -o jsonpath='{.spec.nodeName}'
  check "$1_node" out ""
}
# scheduled NAME POD: PodScheduled=True (no reason, no message) is the pod's only condition.
scheduled() {
  cond_of "$1" "$2"
  check_py "$1" "$2: PodScheduled True" <<'PY'
# Its kubelet adds the running pod's own conditions (Ready, ...) beside it.
mine = [c for c in doc if c["type"] == "PodScheduled"] if isinstance(doc, list) else []
assert len(mine) == 1, doc
c = mine[0]
assert c["status"] == "True", c
assert not c.get("reason") and not c.get("message"), c
PY
}
# event_row NAME POD TYPE REASON MESSAGE: `kubectl get events` for POD has that row.
event_row() {
  local name=$1 pod=$2 type=$3 reason=$4 msg=$5
  await "event $reason for $pod" out_has "$name" " $reason " \
    get events --field-selector "involvedObject.name=$pod"
  check "$name" rc 0 has "^[0-9a-z<>]+ +$type +$reason +pod/$pod +$(re "$msg")\$"
}
# described NAME POD TYPE REASON MESSAGE: `kubectl describe pod` lists the event, from
# default-scheduler.
described() {
  local name=$1 pod=$2 type=$3 reason=$4 msg=$5
  await "describe pod $pod: $reason" out_has "$name" "^  $type +$reason " describe pod "$pod"
  check "$name" rc 0 has "^  $type +$reason +[0-9a-z<>]+ +default-scheduler +$(re "$msg")\$"
}

# --- 1. the seed example -------------------------------------------------------------------
# Seeds 000 and 001 (the Kubernetes "Taints and Tolerations" page): node1 carries
#   key1=value1:NoSchedule, key1=value1:NoExecute, key2=value2:NoSchedule
# and a pod with the two key1 tolerations "will not be able to schedule onto the node, because
# there is no toleration matching the third taint". Once the third taint is removed, the same
# pod (not a new one) is bound to node1.
server seed --nodes 1 "$nlc_off" --disable-admission-plugins=TaintNodesByCondition
kc s1_node get node node1 -o \
  jsonpath='{.status.allocatable.cpu} {.status.allocatable.memory} {.status.allocatable.pods} {.status.conditions[?(@.type=="Ready")].status}'
check s1_node rc 0 out "4 16Gi 110 True"
kc s1_taint1 taint nodes node1 key1=value1:NoSchedule
kc s1_taint2 taint nodes node1 key1=value1:NoExecute
kc s1_taint3 taint nodes node1 key2=value2:NoSchedule
check s1_taint1 rc 0 out "node/node1 tainted"
check s1_taint2 rc 0 out "node/node1 tainted"
check s1_taint3 rc 0 out "node/node1 tainted"
cat >"$tmp/seed-pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: two-tolerations
spec:
  containers:
  - name: nginx
    image: nginx
  tolerations:
  - key: "key1"
    operator: "Equal"
    value: "value1"
    effect: "NoSchedule"
  - key: "key1"
    operator: "Equal"
    value: "value1"
    effect: "NoExecute"
EOF
kc s1_apply apply -f "$tmp/seed-pod.yaml"
check s1_apply rc 0 out "pod/two-tolerations created"
seed_msg="0/1 nodes are available: 1 node(s) had untolerated taint(s). preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
await "two-tolerations marked Unschedulable" reason_of s1_reason two-tolerations Unschedulable
unschedulable s1_cond two-tolerations "$seed_msg"
# The condition as the scheduler writes it (schedule_one.go handleSchedulingFailure): every
# PodCondition carries lastProbeTime (null), and with PodObservedGenerationTracking (GA in 1.35)
# observedGeneration is the pod's metadata.generation.
kc s1_cond_full get pod two-tolerations -o json
check_py s1_cond_full "PodScheduled=False has lastProbeTime: null" <<'PY'
c = [c for c in doc["status"]["conditions"] if c["type"] == "PodScheduled"][0]
assert "lastProbeTime" in c and c["lastProbeTime"] is None, c
PY
check_py s1_cond_full "PodScheduled=False has observedGeneration = metadata.generation" <<'PY'
c = [c for c in doc["status"]["conditions"] if c["type"] == "PodScheduled"][0]
assert c.get("observedGeneration") == doc["metadata"]["generation"], (c, doc["metadata"])
PY
kc s1_wide get pod two-tolerations -o wide
check s1_wide rc 0 table "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES
two-tolerations 0/1 Pending 0 1s <none> <none> <none> <none>"
event_row s1_events two-tolerations Warning FailedScheduling "$seed_msg"
described s1_describe two-tolerations Warning FailedScheduling "$seed_msg"
kc s1_uid get pod two-tolerations -o jsonpath='{.metadata.uid}'
check s1_uid rc 0 has '^[0-9a-f-]{36}$'
uid1=$(cat "$tmp/s1_uid.out")

kc s1_untaint taint nodes node1 key2=value2:NoSchedule-
check s1_untaint rc 0 out "node/node1 untainted"
await "two-tolerations bound once key2 is gone" out_is s1_bound node1 \
  get pod two-tolerations -o jsonpath='{.spec.nodeName}'
check s1_bound out node1
kc s1_uid2 get pod two-tolerations -o jsonpath='{.metadata.uid}'
check s1_uid2 out "$uid1"
scheduled s1_cond2 two-tolerations
described s1_describe2 two-tolerations Normal Scheduled \
  "Successfully assigned default/two-tolerations to node1"
# The earlier failure is still listed, before the success.
derive s1_describe2_events s1_describe2 sed -n '/^Events:/,$p'
check s1_describe2_events has '^  Warning +FailedScheduling ' \
  has '^  Normal +Scheduled +[0-9a-z<>]+ +default-scheduler +Successfully assigned default/two-tolerations to node1$'
event_row s1_events2 two-tolerations Normal Scheduled \
  "Successfully assigned default/two-tolerations to node1"
kc s1_taints get node node1 -o jsonpath='{.spec.taints}'
check s1_taints out '[{"effect":"NoExecute","key":"key1","value":"value1"},{"effect":"NoSchedule","key":"key1","value":"value1"}]'

# --- 2. dedicated nodes ----------------------------------------------------------------------
# node1 and node2 are team a's: tainted dedicated=team-a:NoSchedule and labelled team=a. Team a's
# pods tolerate the taint and require team In [a]; nobody else tolerates it. A pod that asks for
# team=a without the toleration fits nowhere.
server dedicated --nodes 4 "$nlc_off" --disable-admission-plugins=TaintNodesByCondition
for n in node1 node2; do
  kc "s2_taint_$n" taint nodes $n dedicated=team-a:NoSchedule
  check "s2_taint_$n" rc 0 out "node/$n tainted"
  kc "s2_label_$n" label nodes $n team=a
  check "s2_label_$n" rc 0 out "node/$n labeled"
done
: >"$tmp/team-a.yaml"
for i in 1 2 3 4 5 6; do
  cat >>"$tmp/team-a.yaml" <<EOF
---
apiVersion: v1
kind: Pod
metadata:
  name: team-a-$i
  labels: {team: a}
spec:
  containers:
  - name: app
    image: nginx
    resources: {requests: {cpu: 100m}}
  tolerations:
  - {key: dedicated, operator: Equal, value: team-a, effect: NoSchedule}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: team, operator: In, values: [a]}
EOF
done
kc s2_create create -f "$tmp/team-a.yaml"
check s2_create rc 0 out "pod/team-a-1 created
pod/team-a-2 created
pod/team-a-3 created
pod/team-a-4 created
pod/team-a-5 created
pod/team-a-6 created"
for i in 1 2 3 4 5 6; do
  kc "s2_run_$i" run "other-$i" --image=nginx
  check "s2_run_$i" rc 0 out "pod/other-$i created"
done
cat >"$tmp/wants-team-a.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: wants-team-a}
spec:
  nodeSelector: {team: a}
  containers: [{name: app, image: nginx}]
EOF
kc s2_wants create -f "$tmp/wants-team-a.yaml"
check s2_wants rc 0 out "pod/wants-team-a created"
await "13 pods placed" settled s2_place 13
check_py s2_place "team a on node1/node2 (both used), everybody else off them" <<'PY'
place = {l.split()[0]: l.split()[1] for l in text.splitlines()}
team = {p: n for p, n in place.items() if p.startswith("team-a-")}
other = {p: n for p, n in place.items() if p.startswith("other-")}
assert len(team) == 6 and set(team.values()) == {"node1", "node2"}, team
assert len(other) == 6 and set(other.values()) <= {"node3", "node4"}, other
assert place["wants-team-a"] == "<none>", place
PY
s2_msg="0/4 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 2 node(s) had untolerated taint(s). preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
unschedulable s2_wants_cond wants-team-a "$s2_msg"
event_row s2_wants_event wants-team-a Warning FailedScheduling "$s2_msg"
kc s2_node1_pods get pods --field-selector spec.nodeName=node1 -o name
check s2_node1_pods rc 0 lacks '^pod/other-' has '^pod/team-a-'

# --- 3. GPU nodes ----------------------------------------------------------------------------
# node3 and node4 have two GPUs each (nvidia.com/gpu in status.capacity and .allocatable, set
# through the status subresource) and the taint nvidia.com/gpu=present:NoSchedule. Five pods
# with a GPU limit and the toleration compete for the four GPUs: four are bound, two per GPU
# node, the fifth waits. Pods without the toleration stay off the GPU nodes.
server gpu --nodes 4 "$nlc_off" --disable-admission-plugins=TaintNodesByCondition
for n in node3 node4; do
  kc "s3_patch_$n" patch node $n --subresource=status --type=merge \
    -p '{"status":{"capacity":{"nvidia.com/gpu":"2"},"allocatable":{"nvidia.com/gpu":"2"}}}'
  check "s3_patch_$n" rc 0 out "node/$n patched"
  kc "s3_alloc_$n" get node $n \
    -o jsonpath='{.status.capacity.nvidia\.com/gpu} {.status.allocatable.nvidia\.com/gpu} {.status.allocatable.cpu}'
  check "s3_alloc_$n" out "2 2 4"
done
kc s3_taint taint nodes node3 node4 nvidia.com/gpu=present:NoSchedule
check s3_taint rc 0 out "node/node3 tainted
node/node4 tainted"
: >"$tmp/cuda.yaml"
for i in 1 2 3 4 5; do
  cat >>"$tmp/cuda.yaml" <<EOF
---
apiVersion: v1
kind: Pod
metadata:
  name: cuda-$i
spec:
  containers:
  - name: cuda
    image: nvidia/cuda
    resources:
      limits:
        nvidia.com/gpu: 1
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
EOF
done
kc s3_create create -f "$tmp/cuda.yaml"
check s3_create rc 0 has '^pod/cuda-5 created$'
for i in 1 2 3 4; do
  kc "s3_run_$i" run "web-$i" --image=nginx
  check "s3_run_$i" rc 0 out "pod/web-$i created"
done
cat >"$tmp/gpu-no-tol.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: gpu-no-toleration}
spec:
  containers:
  - name: cuda
    image: nvidia/cuda
    resources:
      limits: {nvidia.com/gpu: 1}
EOF
kc s3_notol create -f "$tmp/gpu-no-tol.yaml"
check s3_notol rc 0 out "pod/gpu-no-toleration created"
await "10 pods placed" settled s3_place 10
check_py s3_place "4 of 5 GPU pods bound, 2 per GPU node; the rest off the GPU nodes" <<'PY'
place = {l.split()[0]: l.split()[1] for l in text.splitlines()}
cuda = {p: n for p, n in place.items() if p.startswith("cuda-")}
bound = sorted(n for n in cuda.values() if n != "<none>")
assert bound == ["node3", "node3", "node4", "node4"], cuda
web = {p: n for p, n in place.items() if p.startswith("web-")}
assert len(web) == 4 and set(web.values()) <= {"node1", "node2"}, web
assert place["gpu-no-toleration"] == "<none>", place
PY
pending_gpu=$(awk '$1 ~ /^cuda-/ && $2 == "<none>" {print $1}' "$tmp/s3_place.out" | head -1)
pending_gpu=${pending_gpu:-cuda-5}
# node1/node2 have no GPU at all (request > allocatable: UnschedulableAndUnresolvable, so
# preemption is not helpful there); node3/node4 are full of equal-priority pods.
s3_msg="0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: 2 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
unschedulable s3_pending "$pending_gpu" "$s3_msg"
event_row s3_pending_event "$pending_gpu" Warning FailedScheduling "$s3_msg"
s3_notol_msg="0/4 nodes are available: 2 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint(s). preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
unschedulable s3_notol_cond gpu-no-toleration "$s3_notol_msg"
# A quantity is a string on the wire: limits as written, requests defaulted from them.
kc s3_limits get pod cuda-1 -o jsonpath='{.spec.containers[0].resources}'
check s3_limits out '{"limits":{"nvidia.com/gpu":"1"},"requests":{"nvidia.com/gpu":"1"}}'
kc s3_describe_node describe node node3
derive s3_allocated s3_describe_node sed -n '/^Allocated resources:/,/^Events:/p'
check s3_allocated has '^  nvidia\.com/gpu +2 +2$'

# --- 4. PreferNoSchedule ---------------------------------------------------------------------
# spot=true:PreferNoSchedule on node1 and node2: pods without a toleration go to node3/node4
# while those have room, and to a spot node only when they no longer fit elsewhere.
server prefer --nodes 4 "$nlc_off" --disable-admission-plugins=TaintNodesByCondition
kc s4_taint taint nodes node1 node2 spot=true:PreferNoSchedule
check s4_taint rc 0 out "node/node1 tainted
node/node2 tainted"
: >"$tmp/small.yaml"
for i in 1 2 3 4 5 6; do
  cat >>"$tmp/small.yaml" <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: small-$i}
spec:
  containers: [{name: app, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}]
EOF
done
kc s4_create create -f "$tmp/small.yaml"
check s4_create rc 0 has '^pod/small-6 created$'
await "6 small pods placed" settled s4_place 6
check_py s4_place "small pods on the untainted node3 and node4 (both used)" <<'PY'
place = {l.split()[0]: l.split()[1] for l in text.splitlines()}
assert set(place.values()) == {"node3", "node4"}, place
PY
# node3 and node4 have at most 3900m cpu left now; 3950m fits only on a spot node.
cat >"$tmp/big.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  containers: [{name: app, image: nginx, resources: {requests: {cpu: 3950m}}}]
EOF
kc s4_big create -f "$tmp/big.yaml"
check s4_big rc 0 out "pod/big created"
await "big bound" out_has s4_big_node '^node[0-9]$' get pod big -o jsonpath='{.spec.nodeName}'
check s4_big_node has '^node(1|2)$'

# --- 5. cordon -------------------------------------------------------------------------------
# A cordoned node takes no new pods; a pod that only fits there waits with "node(s) were
# unschedulable" and is bound as soon as the node is uncordoned.
server cordon --nodes 4 "$nlc_off" --disable-admission-plugins=TaintNodesByCondition
kc s5_cordon cordon node2
check s5_cordon rc 0 out "node/node2 cordoned"
for i in 1 2 3 4 5 6; do
  kc "s5_run_$i" run "c-$i" --image=nginx
  check "s5_run_$i" rc 0 out "pod/c-$i created"
done
cat >"$tmp/pinned.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: pinned}
spec:
  nodeSelector: {kubernetes.io/hostname: node2}
  containers: [{name: app, image: nginx}]
EOF
kc s5_pinned create -f "$tmp/pinned.yaml"
check s5_pinned rc 0 out "pod/pinned created"
await "7 pods placed" settled s5_place 7
check s5_place lacks ' node2 ' has '^pinned +<none> +Unschedulable$'
kc s5_node2_pods get pods --field-selector spec.nodeName=node2 -o name
check s5_node2_pods rc 0 out ""
s5_msg="0/4 nodes are available: 1 node(s) were unschedulable, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
unschedulable s5_cond pinned "$s5_msg"
event_row s5_event pinned Warning FailedScheduling "$s5_msg"
kc s5_uncordon uncordon node2
check s5_uncordon rc 0 out "node/node2 uncordoned"
await "pinned bound after uncordon" out_is s5_bound node2 get pod pinned -o jsonpath='{.spec.nodeName}'
check s5_bound out node2
scheduled s5_cond2 pinned
described s5_describe pinned Normal Scheduled "Successfully assigned default/pinned to node2"

# --- 6. preemption ---------------------------------------------------------------------------
# One node with 4 cpu. A low-priority pod takes 3 of them; a high-priority pod asking for 3
# preempts it: the victim gets the DisruptionTarget condition, is deleted, a Preempted event
# names the preemptor, and the preemptor is bound to node1.
server preempt --nodes 1 "$nlc_off" --disable-admission-plugins=TaintNodesByCondition
kc s6_pc_low create priorityclass low --value=100
kc s6_pc_high create priorityclass high --value=1000 --description="preempts low"
check s6_pc_low rc 0 out "priorityclass.scheduling.k8s.io/low created"
check s6_pc_high rc 0 out "priorityclass.scheduling.k8s.io/high created"
if [ "$(cat "$tmp/s6_pc_low.rc")" != 0 ] || [ "$(cat "$tmp/s6_pc_high.rc")" != 0 ]; then
  # (reported by the checks above) The same objects from a file, as kubectl create
  # priorityclass would have sent them, so that preemption is still tested.
  cat >"$tmp/pcs.yaml" <<'EOF'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 100
preemptionPolicy: PreemptLowerPriority
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
description: preempts low
preemptionPolicy: PreemptLowerPriority
EOF
  kc s6_pc_file create -f "$tmp/pcs.yaml"
fi
kc s6_pc get priorityclass low high -o \
  'custom-columns=NAME:.metadata.name,VALUE:.value,DEFAULT:.globalDefault,POLICY:.preemptionPolicy'
check s6_pc rc 0 table "NAME VALUE DEFAULT POLICY
low 100 <none> PreemptLowerPriority
high 1000 <none> PreemptLowerPriority"
# kubectl create priorityclass sends preemptionPolicy itself; from a manifest without it, the
# server defaults it (upstream SetDefaults_PriorityClass).
cat >"$tmp/pc-batch.yaml" <<'EOF'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch}
value: 50
EOF
kc s6_pc_batch create -f "$tmp/pc-batch.yaml"
check s6_pc_batch rc 0 out "priorityclass.scheduling.k8s.io/batch created"
kc s6_pc_batch_policy get priorityclass batch -o jsonpath='{.preemptionPolicy}'
check s6_pc_batch_policy out PreemptLowerPriority
for p in low high; do
  cat >"$tmp/$p.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $p-pod}
spec:
  priorityClassName: $p
  # The victim is deleted gracefully: Terminating for this long, then its kubelet ends it.
  terminationGracePeriodSeconds: 3
  containers:
  - name: app
    image: nginx
    resources: {requests: {cpu: "3"}}
EOF
done
kc s6_low create -f "$tmp/low.yaml"
check s6_low rc 0 out "pod/low-pod created"
await "low-pod bound" out_is s6_low_node node1 get pod low-pod -o jsonpath='{.spec.nodeName}'
check s6_low_node out node1
kc s6_low_prio get pod low-pod -o jsonpath='{.spec.priority} {.spec.preemptionPolicy}'
check s6_low_prio out "100 PreemptLowerPriority"
# Watch the victim from here on, to see what happens to it before it goes.
printf 'kubectl get pod low-pod -w --output-watch-events -o json\n' >"$tmp/s6_watch.cmd"
timeout 90 kubectl --cache-dir "$tmp/kubectl-cache" get pod low-pod -w --output-watch-events \
  -o json >"$tmp/s6_watch.out" 2>"$tmp/s6_watch.err" &
s6_wp=$!
track $s6_wp
watch_saw() { grep -q "\"type\":\"$1\"" "$tmp/s6_watch.out" 2>/dev/null; }
wait_for $limit watch_saw ADDED || fail "s6_watch: no initial ADDED for low-pod"
kc s6_high create -f "$tmp/high.yaml"
check s6_high rc 0 out "pod/high-pod created"
await "low-pod Terminating" out_is s6_low_grace 3 get pod low-pod \
  -o jsonpath='{.metadata.deletionGracePeriodSeconds}'
check s6_low_grace out 3
await "high-pod bound" out_is s6_high_node node1 get pod high-pod -o jsonpath='{.spec.nodeName}'
check s6_high_node out node1
kc s6_low_gone get pod low-pod
check s6_low_gone rc 1 out "" err 'Error from server (NotFound): pods "low-pod" not found'
scheduled s6_high_cond high-pod
kc s6_high_uid get pod high-pod -o jsonpath='{.metadata.uid}'
event_row s6_preempted low-pod Normal Preempted \
  "Preempted by pod $(cat "$tmp/s6_high_uid.out") on node node1"
kc s6_preempted_src get events --field-selector involvedObject.name=low-pod,reason=Preempted \
  -o jsonpath='{.items[0].reportingComponent}'
check s6_preempted_src out default-scheduler
# The preemptor's failed first attempt: preemption found a node, so no "preemption:" part.
event_row s6_high_failed high-pod Warning FailedScheduling "0/1 nodes are available: 1 Insufficient cpu."
event_row s6_high_sched high-pod Normal Scheduled "Successfully assigned default/high-pod to node1"
wait_for $limit watch_saw DELETED || fail "s6_watch: low-pod's deletion never seen"
kill -TERM $s6_wp 2>/dev/null
reap $s6_wp
echo 0 >"$tmp/s6_watch.rc"
check_py s6_watch "the victim: DisruptionTarget (PreemptionByScheduler) before DELETED" <<'PY'
dec = json.JSONDecoder()
events, i = [], 0
while True:
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    e, i = dec.raw_decode(text, i)
    events.append(e)
types = [e["type"] for e in events]
assert types[0] == "ADDED" and types[-1] == "DELETED", types
dt = [c for e in events for c in e["object"]["status"].get("conditions", [])
      if c["type"] == "DisruptionTarget"]
assert dt, types
c = dt[-1]
assert (c["status"], c["reason"], c["message"]) == (
    "True", "PreemptionByScheduler",
    "default-scheduler: preempting to accommodate a higher priority pod"), c
PY

# --- 7. kubetaint check against the live cluster ---------------------------------------------
# `kubetaint check --server URL` (and --kubeconfig) reads the live nodes and pods, reports the
# node the scheduler would pick and creates nothing; the same pod, created, lands there. For a
# pod that fits nowhere it reports the message the scheduler then writes.
server check --nodes 3 "$nlc_off" --disable-admission-plugins=TaintNodesByCondition
kc s7_taint1 taint nodes node1 dedicated=x:NoSchedule
kc s7_taint2 taint nodes node2 spot=true:PreferNoSchedule
check s7_taint1 rc 0 && check s7_taint2 rc 0
cat >"$tmp/probe.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: probe}
spec:
  containers: [{name: app, image: nginx, resources: {requests: {cpu: 100m}}}]
EOF
bin_run s7_check check --server "$srv_url" -f "$tmp/probe.yaml"
check s7_check rc 0 \
  has '^pod default/probe: feasible on 2 of 3 node\(s\); the scheduler picks node3$' \
  has '^  node1 +no +- .*TaintToleration: untolerated taint dedicated=x:NoSchedule$'
bin_run s7_check_json check --kubeconfig "$KUBECONFIG" -f "$tmp/probe.yaml" -o json
check s7_check_json rc 0
check_py s7_check_json "--kubeconfig: the same pick" <<'PY'
p = doc["pods"][0]
assert (p["name"], p["selectedNode"]) == ("probe", "node3"), p
feasible = sorted(n["name"] for n in p["nodes"] if n["feasible"])
assert feasible == ["node2", "node3"], feasible
PY
kc s7_nothing get pods
check s7_nothing rc 0 out "" err "No resources found in default namespace."
kc s7_create create -f "$tmp/probe.yaml"
check s7_create rc 0 out "pod/probe created"
await "probe bound" out_has s7_node '^node[0-9]$' get pod probe -o jsonpath='{.spec.nodeName}'
check s7_node out node3
cat >"$tmp/probe2.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: probe2}
spec:
  nodeSelector: {kubernetes.io/hostname: node1}
  containers: [{name: app, image: nginx}]
EOF
s7_msg="0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
bin_run s7_check2 check --server "$srv_url" -f "$tmp/probe2.yaml" -o json
check s7_check2 rc 1
printf '%s' "$s7_msg" >"$tmp/s7_check2.want"
check_py s7_check2 "no feasible node, with the scheduler's message" <<'PY'
p = doc["pods"][0]
assert p["selectedNode"] is None, p
assert p["message"] == open(os.path.join(tmp, "s7_check2.want")).read(), p["message"]
PY
kc s7_nothing2 get pods -o name
check s7_nothing2 out "pod/probe"
kc s7_create2 create -f "$tmp/probe2.yaml"
check s7_create2 rc 0 out "pod/probe2 created"
await "probe2 marked Unschedulable" reason_of s7_reason2 probe2 Unschedulable
unschedulable s7_cond2 probe2 "$s7_msg"

# --- 8. --disable-scheduler ------------------------------------------------------------------
# With the scheduler on, `kubectl run idle` is bound at once; with --disable-scheduler the same
# pod stays Pending: no node, no PodScheduled condition, no events.
server on --nodes 1 "$nlc_off" --disable-admission-plugins=TaintNodesByCondition
kc s8_run_on run idle --image=nginx
check s8_run_on rc 0 out "pod/idle created"
t0=$(_now_ms)
await "idle bound with the scheduler on" out_is s8_on_node node1 get pod idle -o jsonpath='{.spec.nodeName}'
t_on=$(($(_now_ms) - t0))
check s8_on_node out node1
scheduled s8_on_cond idle

server off --nodes 1 --disable-scheduler "$nlc_off" --disable-admission-plugins=TaintNodesByCondition
kc s8_run_off run idle --image=nginx
check s8_run_off rc 0 out "pod/idle created"
# Nothing is expected to happen, so look for a bounded while (10x what the scheduler took
# above, at least 2 s, at most 5 s): the pod must stay unbound and without conditions.
window=$(((t_on * 10 + 999) / 1000))
[ "$window" -lt 2 ] && window=2
[ "$window" -gt 5 ] && window=5
touched() { out_has s8_touched . get pod idle -o jsonpath='{.spec.nodeName}{.status.conditions}'; }
if wait_for $window touched; then fail "s8: the pod was touched with the scheduler disabled"; else ok; fi
kc s8_off get pod idle -o json
check_py s8_off "unbound, Pending, no conditions" <<'PY'
assert "nodeName" not in doc["spec"], doc["spec"]
assert doc["status"].get("phase") == "Pending", doc["status"]
assert "conditions" not in doc["status"], doc["status"]
assert "nominatedNodeName" not in doc["status"], doc["status"]
PY
kc s8_wide get pod idle -o wide
check s8_wide rc 0 table "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES
idle 0/1 Pending 0 1s <none> <none> <none> <none>"
kc s8_events get events
check s8_events rc 0 out "" err "No resources found in default namespace."
kc s8_describe describe pod idle
check s8_describe rc 0 has '^Node: +<none>$' has '^Events: +<none>$' lacks '^Conditions:'

# --- 9. --background-nice ---------------------------------------------------------------------
# The server's threads, as the kernel sees them: by default the scheduler's, the store's watch
# thread and the controllers' run 5 nice levels above the process (its main thread), the HTTP
# threads and the SQLite committer at the process's; with --background-nice 0 all alike.
# thread_nices NAME: "comm nice" per thread of the server, main thread first.
thread_nices() {
  local name=$1 t
  {
    for t in "/proc/$srv_pid/task/$srv_pid" /proc/"$srv_pid"/task/*; do
      # The name is in parentheses and may hold spaces; the nice value is field 19.
      sed -E 's/^[0-9]+ \((.*)\) (.*)$/\1|\2/' "$t/stat" |
        awk -F'|' '{ split($2, f, " "); gsub(/ /, "_", $1); print $1, f[17] }'
    done
  } >"$tmp/$name.out"
}
# nice_is NAME THREAD WANT: every thread called THREAD has nice value WANT.
nice_is() {
  local got
  got=$(awk -v t="$2" '$1 == t { print $2 }' "$tmp/$1.out" | sort -u)
  if [ "$got" = "$3" ]; then ok; else fail "$1: $2 at nice '${got//$'\n'/,}', want $3"; fi
}
server nice5 --nodes 1 "$nlc_off" --disable-admission-plugins=TaintNodesByCondition
kc s9_run run busy --image=nginx
await "busy bound" out_is s9_node node1 get pod busy -o jsonpath='{.spec.nodeName}'
thread_nices s9_threads
base=$(head -1 "$tmp/s9_threads.out" | cut -d' ' -f2)
low=$((base + 5 > 19 ? 19 : base + 5))
for t in kt-scheduler kt-sched-api kt-store-watch kt-taint-evict kt-kubelets kt-clock; do
  nice_is s9_threads "$t" "$low"
done
for t in kt-http kt-sqlite-commi; do nice_is s9_threads "$t" "$base"; done

server nice0 --nodes 1 --background-nice 0 "$nlc_off" --disable-admission-plugins=TaintNodesByCondition
kc s9_run0 run busy --image=nginx
await "busy bound at --background-nice 0" out_is s9_node0 node1 get pod busy -o jsonpath='{.spec.nodeName}'
thread_nices s9_threads0
for t in kt-scheduler kt-sched-api kt-store-watch kt-http kt-sqlite-commi; do
  nice_is s9_threads0 "$t" "$base"
done

# Out of range: refused before anything starts, naming the flag.
bin_run s9_bad serve --listen 127.0.0.1:0 --data-dir "$tmp/nice-bad" --background-nice 20
check s9_bad rc 1 err "error: --background-nice: must be from 0 to 19, not 20"
[ ! -e "$tmp/nice-bad" ] && ok || fail "s9_bad: the data directory was created"

stop_server
if [ "$srv_rc" = 0 ]; then ok; else fail "server $srv_n: exit status $srv_rc on SIGTERM"; fi
finish
