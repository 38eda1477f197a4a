#!/usr/bin/env bash
# End-to-end: the real kubectl against `kubetaint serve` on 127.0.0.1:0, one block per command
# of kubectl-protocol.md §7, with the output asserted exactly where it is deterministic
# (tables are compared with ages masked, see lib.sh). Ends with a clean restart on the same
# data directory: every object and resourceVersion is back, and new writes go on counting up.
# The server runs without its scheduler (--disable-scheduler) and without the DaemonSet controller
# (its DaemonSet has one hand-made pod), so that pods stay as created and the output stays exact;
# scheduler_test.sh drives the scheduler, daemonset_test.sh the DaemonSet controller.
# Usage: kubectl_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: kubectl_test.sh KUBETAINT_BINARY}
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"

require_kubectl

# The server's gitVersion, e.g. v1.35.0+kubetaint.0.1.0, from `kubetaint version`.
gv=$("$bin" version | sed -nE 's/^kubetaint ([0-9.]+) \(Kubernetes (v[0-9.]+) semantics\)$/\2+kubetaint.\1/p')
gv_re=$(printf '%s' "$gv" | sed 's/[.+]/\\&/g')
data=$tmp/data
# -v 2: the access log tells when a kubectl has listed and is about to watch (see wait below).
# The node lifecycle controller is off (cordons would get node.kubernetes.io/unschedulable and
# its events would be listed), and so is the DaemonSet controller (the DaemonSet here has one
# hand-made pod): the tables here are exact. TaintNodesByCondition is off with it, since nothing
# would lift its not-ready taint.
ctl_off='--controllers=*,-node-lifecycle-controller,-daemonset-controller'
start_server "$data" --nodes 3 -v 2 --disable-scheduler "$ctl_off" --disable-admission-plugins=TaintNodesByCondition || finish

# logged REGEX: the server's access log has a line matching REGEX (written once a response is sent).
logged() { grep -Eq -- "$1" "$srv_err"; }
# lines_at_least FILE N
lines_at_least() { [ "$(cat "$1" 2>/dev/null | wc -l)" -ge "$2" ]; }
taints_of() {  # NAME NODE: the node's spec.taints as kubectl's jsonpath prints it
  kc "$1" get node "$2" -o jsonpath='{.spec.taints}'
}
describe_section() {  # NAME FROM FIRST_LINE_RE LAST_LINE_RE
  derive "$1" "$2" sed -n "/$3/,/$4/p"
}

# --- version, api-resources (7.1, 7.2) -----------------------------------------------------
kc version version
check version rc 0 has "^Server Version: $gv_re\$"

kc api_resources api-resources
check api_resources rc 0 out "NAME              SHORTNAMES   APIVERSION               NAMESPACED   KIND
events            ev           v1                       true         Event
namespaces        ns           v1                       false        Namespace
nodes             no           v1                       false        Node
pods              po           v1                       true         Pod
daemonsets        ds           apps/v1                  true         DaemonSet
leases                         coordination.k8s.io/v1   true         Lease
priorityclasses   pc           scheduling.k8s.io/v1     false        PriorityClass"

# --- get nodes (7.3 - 7.5) ------------------------------------------------------------------
kc nodes get nodes
check nodes rc 0 table "NAME STATUS ROLES AGE VERSION
node1 Ready <none> 1s $gv
node2 Ready <none> 1s $gv
node3 Ready <none> 1s $gv"

kc nodes_wide get nodes -o wide
check nodes_wide rc 0 table \
  "NAME STATUS ROLES AGE VERSION INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME
node1 Ready <none> 1s $gv 172.16.0.1 <none> kubetaint simulated node 6.1.0-kubetaint kubetaint://${gv#*kubetaint.}
node2 Ready <none> 1s $gv 172.16.0.2 <none> kubetaint simulated node 6.1.0-kubetaint kubetaint://${gv#*kubetaint.}
node3 Ready <none> 1s $gv 172.16.0.3 <none> kubetaint simulated node 6.1.0-kubetaint kubetaint://${gv#*kubetaint.}"

kc nodes_labels get nodes --show-labels
check nodes_labels rc 0 table "NAME STATUS ROLES AGE VERSION LABELS
node1 Ready <none> 1s $gv beta.kubernetes.io/arch=amd64,beta.kubernetes.io/os=linux,kubernetes.io/arch=amd64,kubernetes.io/hostname=node1,kubernetes.io/os=linux
node2 Ready <none> 1s $gv beta.kubernetes.io/arch=amd64,beta.kubernetes.io/os=linux,kubernetes.io/arch=amd64,kubernetes.io/hostname=node2,kubernetes.io/os=linux
node3 Ready <none> 1s $gv beta.kubernetes.io/arch=amd64,beta.kubernetes.io/os=linux,kubernetes.io/arch=amd64,kubernetes.io/hostname=node3,kubernetes.io/os=linux"

kc nodes_L get nodes -L kubernetes.io/hostname --no-headers
check nodes_L rc 0 table "node1 Ready <none> 1s $gv node1
node2 Ready <none> 1s $gv node2
node3 Ready <none> 1s $gv node3"

kc nodes_name get nodes -o name
check nodes_name rc 0 out "node/node1
node/node2
node/node3"

kc nodes_json get nodes -o json
check nodes_json rc 0
check_py nodes_json "NodeList with three Ready nodes and resourceVersions" <<'PY'
assert doc["kind"] == "List" or doc["kind"] == "NodeList", doc["kind"]
names = [i["metadata"]["name"] for i in doc["items"]]
assert names == ["node1", "node2", "node3"], names
for i in doc["items"]:
    assert i["kind"] == "Node" and i["apiVersion"] == "v1", i
    assert int(i["metadata"]["resourceVersion"]) > 0, i["metadata"]
    assert i["metadata"]["uid"], i["metadata"]
    ready = [c for c in i["status"]["conditions"] if c["type"] == "Ready"]
    assert ready and ready[0]["status"] == "True", i["status"]
    assert "taints" not in i.get("spec", {}), i["spec"]
PY

kc nodes_yaml get nodes -o yaml
check nodes_yaml rc 0 has '^kind: List$' has '^- apiVersion: v1$' has '^  kind: Node$' \
  has '^    name: node2$' has '^      kubernetes.io/hostname: node3$'

kc node1_yaml get node node1 -o yaml
check node1_yaml rc 0 has '^kind: Node$' has '^  name: node1$' has '^spec: \{\}$' \
  has '^    type: Ready$'

taints_of taints_none node1
check taints_none rc 0 out ""

# --- taint (7.7) ----------------------------------------------------------------------------
kc taint_add taint nodes node1 key1=value1:NoSchedule
check taint_add rc 0 out "node/node1 tainted" err ""
taints_of taints_1 node1
check taints_1 out '[{"effect":"NoSchedule","key":"key1","value":"value1"}]'

kc taint_several taint nodes node1 key1=value1:NoExecute key2=value2:NoSchedule
check taint_several rc 0 out "node/node1 tainted"
taints_of taints_3 node1  # new ones first, in command-line order
check taints_3 out '[{"effect":"NoExecute","key":"key1","value":"value1"},{"effect":"NoSchedule","key":"key2","value":"value2"},{"effect":"NoSchedule","key":"key1","value":"value1"}]'

kc describe_tainted describe node node1
check describe_tainted rc 0
describe_section describe_taints describe_tainted '^Taints:' '^Unschedulable:'
# describe sorts taints by effect, then key (kubectl's printTaintsMultilineWithIndent).
check describe_taints out "Taints:             key1=value1:NoExecute
                    key1=value1:NoSchedule
                    key2=value2:NoSchedule
Unschedulable:      false"

kc taint_dup taint nodes node1 key2=value2:NoSchedule
check taint_dup rc 1 out "" \
  err "error: node node1 already has key2 taint(s) with same effect(s) and --overwrite is false"

kc taint_overwrite taint nodes node1 key2=other:NoSchedule --overwrite
check taint_overwrite rc 0 out "node/node1 modified"
taints_of taints_ow node1  # the overwritten taint moves to the front
check taints_ow out '[{"effect":"NoSchedule","key":"key2","value":"other"},{"effect":"NoExecute","key":"key1","value":"value1"},{"effect":"NoSchedule","key":"key1","value":"value1"}]'

kc untaint_effect taint nodes node1 key1:NoSchedule-
check untaint_effect rc 0 out "node/node1 untainted"
taints_of taints_ke node1
check taints_ke out '[{"effect":"NoSchedule","key":"key2","value":"other"},{"effect":"NoExecute","key":"key1","value":"value1"}]'

kc untaint_key taint nodes node1 key1-
check untaint_key rc 0 out "node/node1 untainted"
taints_of taints_k node1
check taints_k out '[{"effect":"NoSchedule","key":"key2","value":"other"}]'

kc untaint_last taint nodes node1 key2-
check untaint_last rc 0 out "node/node1 untainted"
taints_of taints_empty node1
check taints_empty rc 0 out ""
kc node1_json get node node1 -o json
check_py node1_json "no spec.taints once the last taint is gone" <<'PY'
assert "taints" not in doc.get("spec", {}), doc["spec"]
PY

kc untaint_absent taint nodes node1 key2-
check untaint_absent rc 1 out "" err 'error: taint "key2" not found'

kc taint_bad_effect taint nodes node1 foo=bar:Bogus
check taint_bad_effect rc 1 err "error: invalid taint effect: Bogus, unsupported taint effect
See 'kubectl taint -h' for help and examples"

kc taint_all taint nodes --all team=x:NoExecute
check taint_all rc 0 out "node/node1 tainted
node/node2 tainted
node/node3 tainted"

kc taint_selector taint nodes -l kubernetes.io/hostname=node2 spot=true:PreferNoSchedule
check taint_selector rc 0 out "node/node2 tainted"

taint_cols='-o=custom-columns=NAME:.metadata.name,KEYS:.spec.taints[*].key,EFFECTS:.spec.taints[*].effect'
kc taints_cols get nodes "$taint_cols"
check taints_cols rc 0 out "NAME    KEYS        EFFECTS
node1   team        NoExecute
node2   spot,team   PreferNoSchedule,NoExecute
node3   team        NoExecute"

kc node3_rv get node node3 -o jsonpath='{.metadata.resourceVersion}'
node3_rv=$(cat "$tmp/node3_rv.out")
kc taint_dry taint nodes node3 dry=run:NoSchedule --dry-run=server
check taint_dry rc 0 has '^node/node3 tainted'
taints_of taints_dry node3  # nothing persisted
check taints_dry out '[{"effect":"NoExecute","key":"team","value":"x"}]'
kc node3_rv_dry get node node3 -o jsonpath='{.metadata.resourceVersion}'
check node3_rv_dry out "$node3_rv"

kc taint_yaml taint nodes node3 y=1:NoSchedule -o yaml  # prints the PATCH response
check taint_yaml rc 0 has '^kind: Node$' has '^  name: node3$' has '^  taints:$' \
  has '^  - effect: NoSchedule$' has '^    key: "y"$' has '^    value: "1"$' \
  has '^    key: team$' lacks 'tainted'
taints_of taints_yaml node3
check taints_yaml out '[{"effect":"NoSchedule","key":"y","value":"1"},{"effect":"NoExecute","key":"team","value":"x"}]'

kc untaint_all taint nodes --all team-
check untaint_all rc 0 out "node/node1 untainted
node/node2 untainted
node/node3 untainted"
kc untaint_spot taint nodes node2 spot:PreferNoSchedule-
kc untaint_y taint nodes node3 y-
kc taints_clean get nodes "$taint_cols" --no-headers
check untaint_spot rc 0 && check untaint_y rc 0
check taints_clean out "node1   <none>   <none>
node2   <none>   <none>
node3   <none>   <none>"

# --- cordon / uncordon (7.8) ----------------------------------------------------------------
kc cordon cordon node2
check cordon rc 0 out "node/node2 cordoned"
kc cordon_again cordon node2
check cordon_again rc 0 out "node/node2 already cordoned"
kc nodes_cordoned get nodes
check nodes_cordoned table "NAME STATUS ROLES AGE VERSION
node1 Ready <none> 1s $gv
node2 Ready,SchedulingDisabled <none> 1s $gv
node3 Ready <none> 1s $gv"
kc describe_cordoned describe node node2
describe_section describe_unsched describe_cordoned '^Taints:' '^Unschedulable:'
check describe_unsched out "Taints:             <none>
Unschedulable:      true"
kc nodes_unsched get nodes --field-selector spec.unschedulable=true -o name
check nodes_unsched rc 0 out "node/node2"
kc cordon_dry cordon node3 --dry-run=server
check cordon_dry rc 0 out "node/node3 cordoned (server dry run)"
kc cordon_dry_check get node node3 -o jsonpath='{.spec.unschedulable}'
check cordon_dry_check out ""
kc cordon_missing cordon node9
check cordon_missing rc 1 err 'Error from server (NotFound): nodes "node9" not found'
kc taint_missing taint nodes node9 a=b:NoSchedule
check taint_missing rc 1 err 'Error from server (NotFound): nodes "node9" not found'
kc uncordon uncordon node2
check uncordon rc 0 out "node/node2 uncordoned"
kc uncordon_again uncordon node2
check uncordon_again rc 0 out "node/node2 already uncordoned"
kc unsched_gone get node node2 -o jsonpath='{.spec.unschedulable}'
check unsched_gone out ""

# --- label (7.10) ---------------------------------------------------------------------------
kc label label node node3 disk=ssd
check label rc 0 out "node/node3 labeled"
kc label_again label node node3 disk=hdd
check label_again rc 1 out "" err "error: 'disk' already has a value (ssd), and --overwrite is false"
kc label_ow label node node3 disk=hdd --overwrite
check label_ow rc 0 out "node/node3 labeled"
kc label_col get nodes -L disk --no-headers
check label_col table "node1 Ready <none> 1s $gv
node2 Ready <none> 1s $gv
node3 Ready <none> 1s $gv hdd"
kc label_sel get nodes -l disk=hdd -o name
check label_sel out "node/node3"
kc unlabel label node node3 disk-
check unlabel rc 0 out "node/node3 unlabeled"
kc unlabel_check get node node3 -o jsonpath='{.metadata.labels.disk}'
check unlabel_check rc 0 out ""

# --- create -f (7.11): the pods of the Kubernetes "Taints and Tolerations" page -------------
cat >"$tmp/nginx.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: nginx
  labels:
    env: test
spec:
  containers:
  - name: nginx
    image: nginx
    imagePullPolicy: IfNotPresent
  tolerations:
  - key: "example-key"
    operator: "Exists"
    effect: "NoSchedule"
EOF
cat >"$tmp/hour.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: tolerates-for-an-hour
  labels:
    app: web
spec:
  nodeName: node1
  containers:
  - name: nginx
    image: nginx
  tolerations:
  - key: "key1"
    operator: "Equal"
    value: "value1"
    effect: "NoExecute"
    tolerationSeconds: 3600
EOF
kc create_nginx create -f "$tmp/nginx.yaml"
check create_nginx rc 0 out "pod/nginx created" err ""
kc create_nginx_again create -f "$tmp/nginx.yaml"
check create_nginx_again rc 1 out "" \
  err "Error from server (AlreadyExists): error when creating \"$tmp/nginx.yaml\": pods \"nginx\" already exists"
kc nginx_tol get pod nginx -o jsonpath='{.spec.tolerations}'
check nginx_tol rc 0 has '\{"effect":"NoSchedule","key":"example-key","operator":"Exists"\}'
kc nginx_wide get pod nginx -o wide
check nginx_wide rc 0 table "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES
nginx 0/1 Pending 0 1s <none> <none> <none> <none>"

kc create_hour create -f "$tmp/hour.yaml"
check create_hour rc 0 out "pod/tolerates-for-an-hour created"
kc hour_tol get pod tolerates-for-an-hour -o jsonpath='{.spec.tolerations[0]}'
check hour_tol rc 0 out '{"effect":"NoExecute","key":"key1","operator":"Equal","tolerationSeconds":3600,"value":"value1"}'
kc hour_node get pod tolerates-for-an-hour -o jsonpath='{.spec.nodeName}'
check hour_node out "node1"

# --- get pods (7.15) ------------------------------------------------------------------------
kc pods get pods
# (the scheduler is off: nginx stays Pending; the other is bound by spec.nodeName and its
# simulated kubelet runs it)
check pods rc 0 table "NAME READY STATUS RESTARTS AGE
nginx 0/1 Pending 0 1s
tolerates-for-an-hour 1/1 Running 0 1s"
kc pods_sel get pods -l app=web
check pods_sel rc 0 table "NAME READY STATUS RESTARTS AGE
tolerates-for-an-hour 1/1 Running 0 1s"
kc pods_field get pods -A --field-selector spec.nodeName=node1 -o wide
check pods_field rc 0 table "NAMESPACE NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES
default tolerates-for-an-hour 1/1 Running 0 1s 10.64.1.2 node1 <none> <none>"
kc pods_field_none get pods --field-selector spec.nodeName=node2
check pods_field_none rc 0 out "" err "No resources found in default namespace."
kc pods_bogus get pods --field-selector spec.bogus=x
check pods_bogus rc 1 out "" \
  err 'Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "", field selector "spec.bogus=x": field label not supported: spec.bogus'
kc sel_in get pods -l 'app in (web,demo)' -o name
check sel_in rc 0 out "pod/tolerates-for-an-hour"
kc sel_not get pods -l '!app' -o name
check sel_not rc 0 out "pod/nginx"
kc sel_ne get pods -l 'env!=test' -o name
check sel_ne rc 0 out "pod/tolerates-for-an-hour"
kc field_multi get pods --field-selector 'status.phase=Pending,spec.nodeName!=node1' -o name
check field_multi rc 0 out "pod/nginx"
kc field_eqeq get pods --field-selector 'metadata.name==tolerates-for-an-hour' -o name
check field_eqeq rc 0 out "pod/tolerates-for-an-hour"
kc describe_pod describe pod tolerates-for-an-hour
describe_section describe_tols describe_pod '^Tolerations:' '^Events:'
# DefaultTolerationSeconds adds the two 300 s tolerations after the pod's own.
check describe_tols rc 0 out "Tolerations:                  key1=value1:NoExecute for 3600s
                              node.kubernetes.io/not-ready:NoExecute op=Exists for 300s
                              node.kubernetes.io/unreachable:NoExecute op=Exists for 300s
Events:                       <none>"

# A DaemonSet in kube-system with one pod on node1, for -A and drain.
cat >"$tmp/ds.yaml" <<'EOF'
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: agent}]}
EOF
kc create_ds create -f "$tmp/ds.yaml"
check create_ds rc 0 out "daemonset.apps/agent created"
kc ds_uid get ds agent -n kube-system -o jsonpath='{.metadata.uid}'
cat >"$tmp/agent.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: agent-node1
  namespace: kube-system
  labels: {app: agent}
  ownerReferences:
  - {apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: "$(cat "$tmp/ds_uid.out")", controller: true}
spec:
  nodeName: node1
  containers: [{name: agent, image: agent}]
EOF
kc create_agent create -f "$tmp/agent.yaml"
check create_agent rc 0 out "pod/agent-node1 created"
kc pods_all get pods -A
check pods_all rc 0 table "NAMESPACE NAME READY STATUS RESTARTS AGE
default nginx 0/1 Pending 0 1s
default tolerates-for-an-hour 1/1 Running 0 1s
kube-system agent-node1 1/1 Running 0 1s"
kc pods_sorted get pods -A --sort-by=.metadata.name  # needs the full objects in the rows
check pods_sorted rc 0 table "NAMESPACE NAME READY STATUS RESTARTS AGE
kube-system agent-node1 1/1 Running 0 1s
default nginx 0/1 Pending 0 1s
default tolerates-for-an-hour 1/1 Running 0 1s"

# --- events (7.18) --------------------------------------------------------------------------
cat >"$tmp/events.yaml" <<'EOF'
apiVersion: v1
kind: Event
metadata: {name: node1.taint, namespace: default}
involvedObject: {kind: Node, name: node1, uid: node1, apiVersion: v1}
reason: TaintManagerEviction
message: Marking for deletion Pod default/x
type: Normal
source: {component: taint-eviction-controller}
count: 1
---
apiVersion: v1
kind: Event
metadata: {name: agent.scheduled, namespace: kube-system}
involvedObject: {kind: Pod, name: agent-node1, namespace: kube-system, apiVersion: v1}
reason: Scheduled
message: Successfully assigned kube-system/agent-node1 to node1
type: Normal
EOF
kc create_events create -f "$tmp/events.yaml"
check create_events rc 0 out "event/node1.taint created
event/agent.scheduled created"
kc events get events
check events rc 0 table "LAST SEEN TYPE REASON OBJECT MESSAGE
<unknown> Normal TaintManagerEviction node/node1 Marking for deletion Pod default/x"
kc events_all get events -A
check events_all rc 0 table "NAMESPACE LAST SEEN TYPE REASON OBJECT MESSAGE
default <unknown> Normal TaintManagerEviction node/node1 Marking for deletion Pod default/x
kube-system <unknown> Normal Scheduled pod/agent-node1 Successfully assigned kube-system/agent-node1 to node1"
kc events_for events --for node/node1
check events_for rc 0 table "LAST SEEN TYPE REASON OBJECT MESSAGE
<unknown> Normal TaintManagerEviction Node/node1 Marking for deletion Pod default/x"
kc describe_events describe node node1
describe_section describe_ev describe_events '^Events:' '^zzz'
check describe_ev table "Events:
  Type Reason Age From Message
  ---- ------ ---- ---- -------
  Normal TaintManagerEviction <unknown> taint-eviction-controller Marking for deletion Pod default/x"

# --- apply -f (7.12) ------------------------------------------------------------------------
cat >"$tmp/demo.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: demo
  labels: {app: demo}
spec:
  containers: [{name: app, image: "nginx:1.27"}]
  tolerations:
  - {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}
EOF
kc apply1 apply -f "$tmp/demo.yaml"
check apply1 rc 0 out "pod/demo created" err ""
# The manifest lists tolerations, a list kubectl replaces whole: the live one also holds the two
# DefaultTolerationSeconds added, so the three-way patch carries the list and kubectl says
# "configured" (the server's answer is the same pod), as against kube-apiserver.
kc apply2 apply -f "$tmp/demo.yaml"
check apply2 rc 0 out "pod/demo configured" err ""
kc apply2_same get pod demo -o jsonpath='{.metadata.generation} {.spec.tolerations[*].key}'
check apply2_same out "1 dedicated node.kubernetes.io/not-ready node.kubernetes.io/unreachable"
sed -i 's/nginx:1.27/nginx:1.28/' "$tmp/demo.yaml"
kc apply3 apply -f "$tmp/demo.yaml"
check apply3 rc 0 out "pod/demo configured" err ""
kc apply_image get pod demo -o jsonpath='{.spec.containers[*].image}'
check apply_image out "nginx:1.28"
kc apply_annot get pod demo -o json
check_py apply_annot "last-applied-configuration holds the new manifest" <<'PY'
la = json.loads(doc["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
assert la["spec"]["containers"] == [{"name": "app", "image": "nginx:1.28"}], la
assert [c["name"] for c in doc["spec"]["containers"]] == ["app"], doc["spec"]
PY

# --- delete (7.14) --------------------------------------------------------------------------
kc delete delete pod demo
check delete rc 0 out 'pod "demo" deleted'
kc delete_again delete pod demo
check delete_again rc 1 out "" err 'Error from server (NotFound): pods "demo" not found'
kc delete_ignore delete pod demo --ignore-not-found
check delete_ignore rc 0 out "" err ""
kc get_deleted get pod demo
check get_deleted rc 1 err 'Error from server (NotFound): pods "demo" not found'
kc batch1 run b1 --image=nginx --labels=batch=x
kc batch2 run b2 --image=nginx --labels=batch=x
check batch1 rc 0 && check batch2 rc 0
kc delete_sel delete pods -l batch=x
check delete_sel rc 0 out 'pod "b1" deleted
pod "b2" deleted'
kc delete_sel_gone get pods -l batch=x -o name
check delete_sel_gone rc 0 out ""
kc create_dry create -f "$tmp/demo.yaml" --dry-run=server
check create_dry rc 0 out "pod/demo created (server dry run)"
kc create_dry_gone get pod demo
check create_dry_gone rc 1 err 'Error from server (NotFound): pods "demo" not found'
# Server-side apply (ssa_test.sh has the rest): creates the pod.
kc ssa apply --server-side -f "$tmp/demo.yaml"
check ssa rc 0 out "pod/demo serverside-applied"
kc ssa_cleanup delete pod demo
check ssa_cleanup rc 0
# auth can-i is optional too (§0).
kc can_i auth can-i create pods
if [ "$(cat "$tmp/can_i.rc")" = 0 ]; then check can_i out "yes"; else
  check can_i err 'Error from server (NotFound): the server could not find the requested resource'
fi

# --- wait --for=delete (7.17): deleted by another process while kubectl watches -------------
kc create_waitme run waitme --image=nginx
check create_waitme rc 0 out "pod/waitme created"
printf 'kubectl wait --for=delete pod/waitme --timeout=60s\n' >"$tmp/wait.cmd"
timeout 90 kubectl --cache-dir "$tmp/kubectl-cache" wait --for=delete pod/waitme --timeout=60s \
  >"$tmp/wait.out" 2>"$tmp/wait.err" &
wait_pid=$!
track $wait_pid
# Once kubectl's list is answered it watches from that list's resourceVersion, so a delete
# after this line must reach it through the watch.
if wait_for 30 logged '"GET /api/v1/namespaces/default/pods\?fieldSelector=metadata\.name%3Dwaitme&limit=500&resourceVersion=0"'; then
  ok
else
  fail "wait: kubectl never listed pod waitme"
fi
kc delete_waitme delete pod waitme --wait=false
check delete_waitme rc 0
if wait_for 60 _gone $wait_pid; then ok; else fail "wait: kubectl wait did not end"; fi
reap $wait_pid
echo "$reaped_rc" >"$tmp/wait.rc"
check wait rc 0 out "pod/waitme condition met"
kc wait_absent wait --for=delete pod/never-existed --timeout=10s
check wait_absent rc 0

# --- watch (7.16): rows streamed while another client makes changes --------------------------
printf 'kubectl get pods -w\n' >"$tmp/watch_pods.cmd"
timeout 90 kubectl --cache-dir "$tmp/kubectl-cache" get pods -w \
  >"$tmp/watch_pods.out" 2>"$tmp/watch_pods.err" &
wp=$!
track $wp
printf 'kubectl get nodes -w --output-watch-events\n' >"$tmp/watch_nodes.cmd"
timeout 90 kubectl --cache-dir "$tmp/kubectl-cache" get nodes -w --output-watch-events \
  >"$tmp/watch_nodes.out" 2>"$tmp/watch_nodes.err" &
wn=$!
track $wn
# The initial lists are printed; what changes from here on arrives through the watches.
if wait_for 30 lines_at_least "$tmp/watch_pods.out" 3; then ok; else fail "watch: no initial pod list"; fi
if wait_for 30 lines_at_least "$tmp/watch_nodes.out" 4; then ok; else fail "watch: no initial node list"; fi
kc w_create run w1 --image=nginx --labels=app=w
kc w_label label pod w1 step=two
kc w_delete delete pod w1
kc w_node_label label node node2 watched=yes
kc w_cordon cordon node3
kc w_uncordon uncordon node3
check w_create rc 0 && check w_label rc 0 && check w_delete rc 0
check w_node_label rc 0 && check w_cordon rc 0 && check w_uncordon rc 0
if wait_for 30 lines_at_least "$tmp/watch_pods.out" 6; then ok; else fail "watch: pod events missing"; fi
if wait_for 30 lines_at_least "$tmp/watch_nodes.out" 7; then ok; else fail "watch: node events missing"; fi
kill -TERM $wp $wn 2>/dev/null
reap $wp
reap $wn
echo 0 >"$tmp/watch_pods.rc"
echo 0 >"$tmp/watch_nodes.rc"
check watch_pods table "NAME READY STATUS RESTARTS AGE
nginx 0/1 Pending 0 1s
tolerates-for-an-hour 1/1 Running 0 1s
w1 0/1 Pending 0 0s
w1 0/1 Pending 0 0s
w1 0/1 Pending 0 0s"
check watch_nodes table "EVENT NAME STATUS ROLES AGE VERSION
ADDED node1 Ready <none> 1s $gv
ADDED node2 Ready <none> 1s $gv
ADDED node3 Ready <none> 1s $gv
MODIFIED node2 Ready <none> 1s $gv
MODIFIED node3 Ready,SchedulingDisabled <none> 1s $gv
MODIFIED node3 Ready <none> 1s $gv"

# A single object's watch (resourceVersion=0) must begin with a synthetic ADDED: kubectl drops
# that first event, having printed the GET already (§6). Asked directly, with timeoutSeconds so
# the server ends the stream:
kc raw_watch get --raw '/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dnginx&resourceVersion=0&watch=true&timeoutSeconds=1'
check raw_watch rc 0
check_py raw_watch "one synthetic ADDED for the current object, then the end of the stream" <<'PY'
events = [json.loads(l) for l in text.splitlines() if l.strip()]
assert [e["type"] for e in events] == ["ADDED"], events
assert events[0]["object"]["metadata"]["name"] == "nginx", events[0]
PY
# Through kubectl: every change after the watch started gets a row. When the watch starts is
# not observable, so change the label until a change shows (bounded), then two more.
printf 'kubectl get pod nginx -w -o custom-columns=NAME:.metadata.name,STEP:.metadata.labels.step\n' \
  >"$tmp/watch_one.cmd"
timeout 90 kubectl --cache-dir "$tmp/kubectl-cache" get pod nginx -w \
  -o custom-columns=NAME:.metadata.name,STEP:.metadata.labels.step \
  >"$tmp/watch_one.out" 2>"$tmp/watch_one.err" &
wo=$!
track $wo
if wait_for 30 lines_at_least "$tmp/watch_one.out" 2; then ok; else fail "watch one: no initial row"; fi
has_row() { grep -Eq "^nginx +$1\$" "$tmp/watch_one.out"; }
step=0
while [ $step -lt 10 ]; do
  step=$((step + 1))
  kc watch_one_label label pod nginx step=$step --overwrite
  wait_for 3 has_row $step && break
done
last=$((step + 2))
for step in $((last - 1)) $last; do
  kc watch_one_label label pod nginx step=$step --overwrite
done
if wait_for 30 has_row $last; then ok; else fail "watch one: change $last never shown"; fi
kill -TERM $wo 2>/dev/null
reap $wo
echo 0 >"$tmp/watch_one.rc"
# From the first change shown on, one row per change, in order.
first=$(sed -n '3s/^nginx *//p' "$tmp/watch_one.out")
want_rows=$(printf 'NAME    STEP\nnginx   <none>\n'; seq -f 'nginx   %g' "${first:-1}" $last)
check watch_one out "$want_rows"
kc watch_one_unlabel label pod nginx step-
check watch_one_unlabel rc 0

# --- drain (7.9) ----------------------------------------------------------------------------
kc drain drain node1 --ignore-daemonsets --force
check drain rc 0 out "node/node1 cordoned
evicting pod default/tolerates-for-an-hour
pod/tolerates-for-an-hour evicted
node/node1 drained" \
  err_has '^Warning: .*ignoring DaemonSet-managed Pods: kube-system/agent-node1' \
  err_has '^Warning: .*deleting Pods that declare no controller: default/tolerates-for-an-hour'
# (kubectl joins the two warnings in map order, so their order varies.)
kc drained_pod get pod tolerates-for-an-hour
check drained_pod rc 1 err 'Error from server (NotFound): pods "tolerates-for-an-hour" not found'
kc drained_ds get pods -n kube-system -o name
check drained_ds rc 0 out "pod/agent-node1"
kc drained_node get node node1
check drained_node rc 0 table "NAME STATUS ROLES AGE VERSION
node1 Ready,SchedulingDisabled <none> 1s $gv"
kc undrain uncordon node1
check undrain rc 0 out "node/node1 uncordoned"

# --- namespaces (7.20) ----------------------------------------------------------------------
kc ns_create create namespace team-b
check ns_create rc 0 out "namespace/team-b created"
printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n' >"$tmp/ns.yaml"
kc ns_create_f create -f "$tmp/ns.yaml"
check ns_create_f rc 0 out "namespace/team-a created"
kc ns_list get ns
check ns_list rc 0 table "NAME STATUS AGE
default Active 1s
kube-node-lease Active 1s
kube-public Active 1s
kube-system Active 1s
team-a Active 1s
team-b Active 1s"
kc ns_pod run p1 --image=nginx -n team-b
check ns_pod rc 0 out "pod/p1 created"
kc ns_missing_run run x --image=nginx -n missing
check ns_missing_run rc 1 out "" err 'Error from server (NotFound): namespaces "missing" not found'
kc ns_missing_create create -f "$tmp/nginx.yaml" -n missing
check ns_missing_create rc 1 out "" \
  err "Error from server (NotFound): error when creating \"$tmp/nginx.yaml\": namespaces \"missing\" not found"
kc ns_delete delete namespace team-b
check ns_delete rc 0 out 'namespace "team-b" deleted'
kc ns_gone get ns team-b
check ns_gone rc 1 err 'Error from server (NotFound): namespaces "team-b" not found'
kc ns_pods_gone get pods -n team-b
check ns_pods_gone rc 0 out "" err "No resources found in team-b namespace."
kc ns_delete_default delete namespace default
check ns_delete_default rc 1 \
  err 'Error from server (Forbidden): namespaces "default" is forbidden: this namespace may not be deleted'
kc ns_exists create namespace team-a
check ns_exists rc 1 err 'Error from server (AlreadyExists): namespaces "team-a" already exists'

# --- errors (8): 422 with causes, printed by kubectl -----------------------------------------
cat >"$tmp/badtol.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: bad}
spec:
  containers: [{name: a, image: nginx}]
  tolerations:
  - {key: foo, operator: Exists, value: bar}
  - {key: foo, operator: Bogus, effect: NoExecute}
EOF
kc bad_tol create -f "$tmp/badtol.yaml"
check bad_tol rc 1 out "" err "The Pod \"bad\" is invalid: 
* spec.tolerations[0].operator: Invalid value: \"bar\": value must be empty when \`operator\` is 'Exists'
* spec.tolerations[1].operator: Unsupported value: \"Bogus\": supported values: \"Equal\", \"Exists\""
cat >"$tmp/badsecs.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: bad2}
spec:
  containers: [{name: a, image: nginx}]
  tolerations:
  - {key: key1, operator: Equal, value: value1, effect: NoSchedule, tolerationSeconds: 3600}
EOF
kc bad_secs create -f "$tmp/badsecs.yaml"
check bad_secs rc 1 out "" \
  err "The Pod \"bad2\" is invalid: spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when \`tolerationSeconds\` is set"
cat >"$tmp/badtols.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: badtols}
spec:
  containers: [{name: a, image: nginx}]
  tolerations:
  - {operator: Equal, value: x}
  - {key: "a b", operator: Exists}
  - {key: k, operator: Exists, effect: Bogus}
  - {key: k, operator: Equal, value: "bad value"}
  - {key: k, operator: Exists, effect: NoExecute, tolerationSeconds: -5}
EOF
# (upstream reports a bad Equal value under .operator, and accepts negative tolerationSeconds)
kc bad_tols create -f "$tmp/badtols.yaml"
check bad_tols rc 1 out "" err "The Pod \"badtols\" is invalid: 
* spec.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when \`key\` is empty, which means \"match all values and all keys\"
* spec.tolerations[1].key: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')
* spec.tolerations[2].effect: Unsupported value: \"Bogus\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"
* spec.tolerations[3].operator: Invalid value: \"bad value\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
# A running pod may only gain tolerations (ValidatePodUpdate).
kc tol_remove patch pod nginx -p '{"spec":{"tolerations":[]}}'
check tol_remove rc 1 out "" \
  err 'The Pod "nginx" is invalid: spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds'
kc tol_add patch pod nginx --type=json \
  -p '[{"op":"add","path":"/spec/tolerations/-","value":{"key":"k2","operator":"Exists","effect":"NoExecute","tolerationSeconds":60}}]'
check tol_add rc 0 out "pod/nginx patched"
kc tol_added get pod nginx -o jsonpath='{.spec.tolerations}'
check tol_added out '[{"effect":"NoSchedule","key":"example-key","operator":"Exists"},{"effect":"NoExecute","key":"node.kubernetes.io/not-ready","operator":"Exists","tolerationSeconds":300},{"effect":"NoExecute","key":"node.kubernetes.io/unreachable","operator":"Exists","tolerationSeconds":300},{"effect":"NoExecute","key":"k2","operator":"Exists","tolerationSeconds":60}]'
kc bad_pods get pods -o name
check bad_pods out "pod/nginx"
kc bad_taint patch node node1 --type=merge -p '{"spec":{"taints":[{"key":"a","effect":"Bogus"}]}}'
check bad_taint rc 1 out "" \
  err 'The Node "node1" is invalid: metadata.taints[0].effect: Unsupported value: "Bogus": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'
kc bad_dup patch node node1 --type=merge \
  -p '{"spec":{"taints":[{"key":"a","value":"1","effect":"NoSchedule"},{"key":"a","value":"2","effect":"NoSchedule"}]}}'
# Since 1.34 apimachinery renders non-string values in field errors as JSON (the internal
# core.Taint has no json tags, hence the Go field names).
check bad_dup rc 1 out "" \
  err 'The Node "node1" is invalid: metadata.taints[1]: Duplicate value: {"Key":"a","Value":"2","Effect":"NoSchedule","TimeAdded":null}: taints must be unique by key and effect pair'
taints_of bad_taint_none node1
check bad_taint_none out ""

# --- restart: SIGTERM, then the same data directory again -----------------------------------
kc node1_final taint nodes node1 final=yes:PreferNoSchedule
check node1_final rc 0
snapshot() {  # NAME: every object we made, as JSON
  kc "$1" get nodes,namespaces,pods,events,daemonsets -A -o json
}
snapshot before
check before rc 0
stop_server
if [ "$srv_rc" = 0 ]; then ok; else fail "SIGTERM: server exit status $srv_rc, want 0"; fi
if grep -q 'SIGTERM received, stopping' "$srv_err"; then ok; else fail "SIGTERM: no stopping line"; fi
start_server "$data" --nodes 3 -v 2 --disable-scheduler "$ctl_off" --disable-admission-plugins=TaintNodesByCondition || finish
snapshot after
check after rc 0
check_py after "every object back, field for field, with its resourceVersion" <<'PY'
before = json.load(open(os.path.join(tmp, "before.out")))["items"]
key = lambda o: (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])
b = {key(o): o for o in before}
a = {key(o): o for o in doc["items"]}
assert sorted(b) == sorted(a), sorted(set(b) ^ set(a))
for k in b:
    if k[0] == "Node":
        # A node's simulated kubelet posts its status when it starts again, as a kubelet does.
        for o in (a[k], b[k]):
            o.pop("status", None)
            o["metadata"].pop("resourceVersion", None)
        assert b[k] == a[k], (k, b[k], a[k])
        continue
    assert b[k]["metadata"]["resourceVersion"] == a[k]["metadata"]["resourceVersion"], (k, b[k]["metadata"], a[k]["metadata"])
    assert b[k] == a[k], (k, b[k], a[k])
assert ("Node", "", "node1") in b and ("Pod", "default", "nginx") in b and ("Namespace", "", "team-a") in b
PY
kc restart_taints get node node1 -o jsonpath='{.spec.taints}'
check restart_taints out '[{"effect":"PreferNoSchedule","key":"final","value":"yes"}]'
max_rv=$(python3 -c '
import json, sys
print(max(int(o["metadata"]["resourceVersion"]) for o in json.load(open(sys.argv[1]))["items"]))
' "$tmp/before.out")
kc restart_label label node node2 after=restart
check restart_label rc 0 out "node/node2 labeled"
# (not `label -o jsonpath`: kubectl label prints the object it read, not the PATCH response)
kc restart_label_rv get node node2 -o jsonpath='{.metadata.resourceVersion}'
label_rv=$(cat "$tmp/restart_label_rv.out")
if [ "${label_rv:-0}" -gt "$max_rv" ] 2>/dev/null; then ok; else
  fail "restart: a new write got resourceVersion '$label_rv', not above $max_rv"
fi
kc restart_create run after-restart --image=nginx
check restart_create rc 0 out "pod/after-restart created"
kc restart_create_rv get pod after-restart -o jsonpath='{.metadata.resourceVersion}'
create_rv=$(cat "$tmp/restart_create_rv.out")
if [ "${create_rv:-0}" -gt "${label_rv:-0}" ] 2>/dev/null; then ok; else
  fail "restart: create got resourceVersion '$create_rv', not above the label's $label_rv"
fi
kc restart_list get --raw /api/v1/namespaces/default/pods
check_py restart_list "list resourceVersion is the newest write" <<EOF
assert int(doc["metadata"]["resourceVersion"]) >= int("$create_rv"), doc["metadata"]
EOF
stop_server
if [ "$srv_rc" = 0 ]; then ok; else fail "second SIGTERM: server exit status $srv_rc, want 0"; fi

finish
