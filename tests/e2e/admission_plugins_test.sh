#!/usr/bin/env bash
# End-to-end: the admission plugins kube-apiserver leaves off by default, TaintNodesByCondition
# and the system PriorityClasses, as the real kubectl sees them against `kubetaint serve` on
# 127.0.0.1:0 with
#   --enable-admission-plugins=PodTolerationRestriction,ExtendedResourceToleration
#   --admission-control-config-file (the cluster's default tolerations and whitelist)
#   1. PodTolerationRestriction: a namespace whitelist refuses a pod tolerating a dedicated taint
#      it is not allowed (upstream's message, 500 with no reason: `Error from server: ...`) and
#      admits an allowed one; namespace default tolerations are merged in; namespaces without
#      annotations get the cluster's default and whitelist; a Burstable pod gets the
#      memory-pressure toleration; a malformed annotation fails with Go's JSON error.
#   2. ExtendedResourceToleration: a pod requesting example.com/gpu tolerates example.com/gpu.
#   3. TaintNodesByCondition (on by default): `kubectl create` of a node shows
#      node.kubernetes.io/not-ready:NoSchedule.
#   4. The system PriorityClasses exist, give pods their values and cannot be deleted.
#   5. Bad admission configuration files stop serve with exit status 2 and say where.
# No scheduler runs; nothing waits for a controller.
# Usage: admission_plugins_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: admission_plugins_test.sh KUBETAINT_BINARY}
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"

require_kubectl

# keys NAME POD [NAMESPACE]: NAME is the pod's toleration keys, one "key:effect" a line.
keys() {
  kc "$1" get pod "$2" -n "${3:-default}" \
    -o jsonpath='{range .spec.tolerations[*]}{.key}:{.effect}{"\n"}{end}'
}

# The cluster's default tolerations and whitelist, in a file of the plugin's own (a path
# relative to the AdmissionConfiguration). DefaultTolerationSeconds runs first, so the whitelist
# allows its NoExecute tolerations; ExtendedResourceToleration's and the memory-pressure one too.
mkdir -p "$tmp/config"
cat >"$tmp/config/admission.yaml" <<'YAML'
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodTolerationRestriction
  path: pod-toleration-restriction.yaml
YAML
cat >"$tmp/config/pod-toleration-restriction.yaml" <<'YAML'
apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1
kind: Configuration
default:
- {key: example.com/pool, operator: Equal, value: general, effect: NoSchedule}
whitelist:
- {operator: Exists, effect: NoExecute}
- {key: example.com/pool, operator: Exists}
- {key: example.com/gpu, operator: Exists, effect: NoSchedule}
- {key: node.kubernetes.io/memory-pressure, operator: Exists, effect: NoSchedule}
YAML

# The node lifecycle controller is off: it would remove node.kubernetes.io/not-ready:NoSchedule
# from the kubelet-less node created below (no Ready condition yet), as upstream's does.
server plugins --disable-scheduler '--controllers=*,-node-lifecycle-controller' \
  --enable-admission-plugins=PodTolerationRestriction,ExtendedResourceToleration \
  --admission-control-config-file "$tmp/config/admission.yaml"

conflict='pod tolerations (possibly merged with namespace default tolerations) conflict with its'

# --- 1. PodTolerationRestriction ---------------------------------------------------------------
kc team_ns create namespace team
check team_ns rc 0 out "namespace/team created"
# The whitelist allows team's dedicated nodes (and DefaultTolerationSeconds' NoExecute
# tolerations); the empty defaultTolerations keeps the cluster's default out of this namespace.
kc team_wl annotate namespace team \
  'scheduler.alpha.kubernetes.io/tolerationsWhitelist=[{"key":"dedicated","operator":"Equal","value":"team","effect":"NoSchedule"},{"operator":"Exists","effect":"NoExecute"}]' \
  'scheduler.alpha.kubernetes.io/defaultTolerations='
check team_wl rc 0 out "namespace/team annotated"

kc intruder run intruder -n team --image=nginx \
  --overrides='{"spec":{"tolerations":[{"key":"dedicated","operator":"Equal","value":"other","effect":"NoSchedule"}]}}'
check intruder rc 1 out "" err "Error from server: $conflict namespace whitelist"
kc intruder_gone get pod intruder -n team
check intruder_gone rc 1 err 'Error from server (NotFound): pods "intruder" not found'

kc member run member -n team --image=nginx \
  --overrides='{"spec":{"tolerations":[{"key":"dedicated","operator":"Equal","value":"team","effect":"NoSchedule"}]}}'
check member rc 0 out "pod/member created"
keys member_tols member team
check member_tols out "dedicated:NoSchedule
node.kubernetes.io/not-ready:NoExecute
node.kubernetes.io/unreachable:NoExecute"

# Namespace default tolerations are merged after the pod's own; the namespace has no whitelist
# annotation, so the cluster's applies.
kc dflt_ns create namespace defaults
check dflt_ns rc 0
kc dflt_annotate annotate namespace defaults \
  'scheduler.alpha.kubernetes.io/defaultTolerations=[{"key":"example.com/pool","operator":"Equal","value":"team-a","effect":"NoSchedule"}]'
check dflt_annotate rc 0 out "namespace/defaults annotated"
kc merged run merged -n defaults --image=nginx \
  --overrides='{"spec":{"tolerations":[{"key":"example.com/pool","operator":"Exists","effect":"NoExecute","tolerationSeconds":60}]}}'
check merged rc 0 out "pod/merged created"
kc merged_tols get pod merged -n defaults \
  -o jsonpath='{range .spec.tolerations[*]}{.key}={.value}:{.effect}{"\n"}{end}'
check merged_tols out "example.com/pool=:NoExecute
node.kubernetes.io/not-ready=:NoExecute
node.kubernetes.io/unreachable=:NoExecute
example.com/pool=team-a:NoSchedule"

# A Burstable pod also tolerates memory pressure.
kc burstable run burstable -n defaults --image=nginx \
  --overrides='{"spec":{"containers":[{"name":"burstable","image":"nginx","resources":{"requests":{"cpu":"100m"}}}]}}'
check burstable rc 0 out "pod/burstable created"
keys burstable_tols burstable defaults
check burstable_tols out "node.kubernetes.io/not-ready:NoExecute
node.kubernetes.io/unreachable:NoExecute
example.com/pool:NoSchedule
node.kubernetes.io/memory-pressure:NoSchedule"

# The default namespace has no annotations: the cluster's default is merged in and the
# cluster's whitelist refuses what it does not allow.
kc plain run plain --image=nginx
check plain rc 0 out "pod/plain created"
kc plain_tols get pod plain -o jsonpath='{.spec.tolerations[?(@.key=="example.com/pool")].value}'
check plain_tols out "general"
kc outsider run outsider --image=nginx \
  --overrides='{"spec":{"tolerations":[{"key":"dedicated","operator":"Exists"}]}}'
check outsider rc 1 err "Error from server: $conflict cluster whitelist"

# A malformed annotation fails the create with Go's JSON error.
kc broken_ns create namespace broken
kc broken_annotate annotate namespace broken \
  'scheduler.alpha.kubernetes.io/defaultTolerations=[{"key":'
check broken_annotate rc 0
kc broken run broken -n broken --image=nginx
check broken rc 1 err "Error from server: unexpected end of JSON input"

# --- 2. ExtendedResourceToleration ------------------------------------------------------------
cat >"$tmp/gpu.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: gpu}
spec:
  containers:
  - name: cuda
    image: nginx
    resources:
      limits: {example.com/gpu: 1}
YAML
kc gpu create -f "$tmp/gpu.yaml"
check gpu rc 0 out "pod/gpu created"
kc gpu_tol get pod gpu \
  -o jsonpath='{range .spec.tolerations[?(@.key=="example.com/gpu")]}{.key} {.operator} {.effect}{end}'
check gpu_tol out "example.com/gpu Exists NoSchedule"

# --- 3. TaintNodesByCondition -----------------------------------------------------------------
cat >"$tmp/node.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: fresh}
spec:
  taints:
  - {key: dedicated, value: team, effect: NoSchedule}
YAML
kc node create -f "$tmp/node.yaml"
check node rc 0 out "node/fresh created"
kc node_taints get node fresh -o jsonpath='{range .spec.taints[*]}{.key}={.value}:{.effect}{"\n"}{end}'
check node_taints out "dedicated=team:NoSchedule
node.kubernetes.io/not-ready=:NoSchedule"
kc node_describe describe node fresh
check node_describe has '^Taints: +dedicated=team:NoSchedule$' \
  has '^ +node.kubernetes.io/not-ready:NoSchedule$'

# --- 4. The system PriorityClasses ------------------------------------------------------------
kc classes get priorityclasses
check classes rc 0 table "NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY
system-cluster-critical 2000000000 false AGE PreemptLowerPriority
system-node-critical 2000001000 false AGE PreemptLowerPriority"
kc critical run critical -n kube-system --image=nginx \
  --overrides='{"spec":{"priorityClassName":"system-node-critical"}}'
check critical rc 0
kc critical_prio get pod critical -n kube-system -o jsonpath='{.spec.priority} {.spec.preemptionPolicy}'
check critical_prio out "2000001000 PreemptLowerPriority"
kc keep_classes delete priorityclass system-node-critical
check keep_classes rc 1 \
  err 'Error from server (Forbidden): priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted'

# --- 5. Bad configuration files ---------------------------------------------------------------
stop_server
if [ "$srv_rc" = 0 ]; then ok; else fail "server $srv_n: exit status $srv_rc on SIGTERM"; fi

# serve_bad NAME ARGS...: serve with ARGS must refuse to start; output kept as NAME.
serve_bad() {
  local name=$1
  shift
  printf 'kubetaint serve %s\n' "$*" >"$tmp/$name.cmd"
  timeout 10 "$bin" serve --listen 127.0.0.1:0 --data-dir "$tmp/bad" "$@" \
    >"$tmp/$name.out" 2>"$tmp/$name.err"
  echo $? >"$tmp/$name.rc"
}
serve_bad missing --admission-control-config-file "$tmp/config/nope.yaml"
check missing rc 2 out "" \
  err "error: unable to read admission control configuration from \"$tmp/config/nope.yaml\" [open $tmp/config/nope.yaml: no such file or directory]"

cat >"$tmp/config/pod-toleration-restriction.yaml" <<'YAML'
apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1
kind: Configuration
whitelist:
- {key: dedicated, operator: Sometimes}
YAML
serve_bad bad_ptr --enable-admission-plugins=PodTolerationRestriction \
  --admission-control-config-file "$tmp/config/admission.yaml"
check bad_ptr rc 2 out "" \
  err "error: couldn't init admission plugin \"PodTolerationRestriction\": $tmp/config/pod-toleration-restriction.yaml: invalid config: [podtolerationrestriction.whitelist[0].operator: Unsupported value: \"Sometimes\": supported values: \"Equal\", \"Exists\"]"
# As upstream, a disabled plugin's configuration is not read.
start_server "$tmp/unread" --disable-scheduler --admission-control-config-file "$tmp/config/admission.yaml" || finish
ok
stop_server

printf 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: [{path: x.yaml}]\n' \
  >"$tmp/config/unnamed.yaml"
serve_bad unnamed --admission-control-config-file "$tmp/config/unnamed.yaml"
check unnamed rc 2 out "" err "error: $tmp/config/unnamed.yaml: plugins[0].name: Required value"

finish
