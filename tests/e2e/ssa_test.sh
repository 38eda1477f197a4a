#!/usr/bin/env bash
# End-to-end: server-side apply and metadata.managedFields with the real kubectl, as against
# kube-apiserver:
#   1. `apply --server-side` creates (201) then updates a pod; the `kubectl` Apply entry shows
#      with --show-managed-fields; a label the next apply omits is removed;
#   2. `kubectl taint` records kubectl-taint as the owner of .spec.taints (an atomic list): an
#      apply of other taints is refused with kubectl's conflict error, --force-conflicts takes
#      them and the taints are exactly the applied ones;
#   3. a client-side `kubectl apply` then `kubectl apply --server-side` of the same object works
#      (kubectl migrates the kubectl-client-side-apply entry to its own Apply entry), and a
#      later server-side apply with a change succeeds;
#   4. create, label and client-side apply record their managers (Update entries).
# Node1 is created with kubectl, with a label: nodes the simulated kubelets register are
# untracked, and so (upstream's skipnonapplied.go) is an object whose creator owned no field.
# `spec: {}`: kube-apiserver stores the empty Go struct, this server stores what was sent; without
# it kubectl-taint would also own the `spec` it created and keep an entry after the force.
# Usage: ssa_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: ssa_test.sh KUBETAINT_BINARY}
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
require_kubectl

# --managed-fields-on-create: managers recorded from creation, as kube-apiserver does (serve's
# default starts at an object's first server-side apply; see the unit test
# ApiServerTest.ManagedFieldsStartAtTheFirstApply).
start_server "$tmp/data" --store memory --nodes 0 --disable-scheduler --managed-fields-on-create \
  '--controllers=*,-node-lifecycle-controller' --disable-admission-plugins=TaintNodesByCondition ||
  finish

# managers FROM: "manager operation" per managedFields entry of a `get -o yaml`, in order.
managers() { awk '/^    manager:/{m=$2} /^    operation:/{print m, $2}'; }
# Update entries are ordered by time (seconds), then manager: compare them sorted.
sorted_managers() { managers | sort; }

# --- 1. apply creates, then updates ------------------------------------------------------------
cat >"$tmp/pod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: x
  labels:
    app: a
    tier: web
spec:
  containers:
  - name: c
    image: nginx
YAML
kc create_apply apply --server-side -f "$tmp/pod.yaml"
check create_apply rc 0 out "pod/x serverside-applied"
sed 's/app: a/app: b/; /tier: web/d' "$tmp/pod.yaml" >"$tmp/pod2.yaml"
kc update_apply apply --server-side -f "$tmp/pod2.yaml"
check update_apply rc 0 out "pod/x serverside-applied"
kc labels get pod x -o jsonpath='{.metadata.labels}'
check labels rc 0 out '{"app":"b"}'
kc show get pod x -o yaml --show-managed-fields
derive show_managers show managers
check show_managers out "kubectl Apply"
check show has '^    manager: kubectl$' has '^          f:app: \{\}$' lacks 'f:tier'
kc dry apply --server-side -f "$tmp/pod.yaml" --dry-run=server
check dry rc 0 out "pod/x serverside-applied (server dry run)"
kc dry_labels get pod x -o jsonpath='{.metadata.labels}'
check dry_labels rc 0 out '{"app":"b"}'

# --- 2. conflicts with kubectl-taint ---------------------------------------------------------------
cat >"$tmp/node1.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: node1
  labels:
    kubernetes.io/hostname: node1
spec: {}
YAML
kc create_node create -f "$tmp/node1.yaml"
check create_node rc 0 out "node/node1 created"
kc taint taint nodes node1 a=b:NoSchedule
check taint rc 0 out "node/node1 tainted"
cat >"$tmp/node_apply.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: node1
spec:
  taints:
  - key: c
    value: d
    effect: NoExecute
YAML
kc conflict apply --server-side -f "$tmp/node_apply.yaml"
check conflict rc 1
derive conflict_first conflict true
head -1 "$tmp/conflict.err" >"$tmp/conflict_first.err"  # kubectl's advice lines follow
check conflict_first err 'error: Apply failed with 1 conflict: conflict with "kubectl-taint" using v1: .spec.taints'
check conflict err_has '^\* If you intend to manage all of these fields, please re-run the apply$'
kc force apply --server-side --force-conflicts -f "$tmp/node_apply.yaml"
check force rc 0 out "node/node1 serverside-applied"
kc taints get node node1 -o jsonpath='{.spec.taints}'
check taints rc 0 out '[{"effect":"NoExecute","key":"c","value":"d"}]'
kc node_managers get node node1 -o yaml --show-managed-fields
derive node_managers_list node_managers managers
check node_managers_list out "kubectl Apply
kubectl-create Update"

# --- 3. client-side apply, then server-side apply -------------------------------------------------
sed 's/name: x/name: csa/' "$tmp/pod.yaml" >"$tmp/csa.yaml"
kc csa apply -f "$tmp/csa.yaml"
check csa rc 0 out "pod/csa created"
kc csa_managers get pod csa -o yaml --show-managed-fields
derive csa_managers_list csa_managers managers
check csa_managers_list out "kubectl-client-side-apply Update"
kc csa_ssa apply --server-side -f "$tmp/csa.yaml"
check csa_ssa rc 0 out "pod/csa serverside-applied" err ""
kc csa_ssa_managers get pod csa -o yaml --show-managed-fields
derive csa_ssa_managers_list csa_ssa_managers managers
check csa_ssa_managers_list out "kubectl-last-applied Apply
kubectl Apply"
sed -i 's/app: a/app: z/' "$tmp/csa.yaml"
kc csa_ssa2 apply --server-side -f "$tmp/csa.yaml"
check csa_ssa2 rc 0 out "pod/csa serverside-applied"
kc csa_labels get pod csa -o jsonpath='{.metadata.labels.app}'
check csa_labels rc 0 out "z"

# --- 4. Update managers ---------------------------------------------------------------------------
kc run run r --image=nginx
check run rc 0 out "pod/r created"
kc label label pod r team=blue
check label rc 0 out "pod/r labeled"
kc r_managers get pod r -o yaml --show-managed-fields
derive r_managers_list r_managers sorted_managers
check r_managers_list out "kubectl-label Update
kubectl-run Update"

finish
