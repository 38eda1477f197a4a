#!/usr/bin/env bash
# End-to-end: the admission chain as kubectl sees it, against `kubetaint serve` on 127.0.0.1:0.
#   1. DefaultTolerationSeconds adds the not-ready and unreachable tolerations (300 s) to a new
#      pod, only the one a pod lacks, to server-side dry runs too; its flags change the seconds;
#      --disable-admission-plugins turns it off.
#   2. NamespaceLifecycle: a namespace held by a metadata finalizer stays Terminating after
#      `kubectl delete ns --wait=false`, refuses new pods with upstream's message, and goes once
#      `kubectl patch` removes the finalizer.
#   3. An unknown plugin name stops serve with kube-apiserver's message.
# Each block runs its own server (no scheduler); nothing sleeps to wait: waits poll kubectl until a deadline.
# Usage: admission_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: admission_test.sh KUBETAINT_BINARY}
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"

require_kubectl

# tolerations NAME FROM: NAME is the spec.tolerations block of FROM's `-o yaml` output.
tolerations() {
  derive "$1" "$2" awk '/^  tolerations:/ { on = 1; print; next }
    on && /^  (- |  )/ { print; next }
    on { exit }'
}

defaults="  tolerations:
  - effect: NoExecute
    key: node.kubernetes.io/not-ready
    operator: Exists
    tolerationSeconds: 300
  - effect: NoExecute
    key: node.kubernetes.io/unreachable
    operator: Exists
    tolerationSeconds: 300"

# --- 1. DefaultTolerationSeconds -----------------------------------------------------------
server defaults --disable-scheduler

kc run_plain run plain --image=nginx
check run_plain rc 0 out "pod/plain created"
kc plain_yaml get pod plain -o yaml
tolerations plain_tols plain_yaml
check plain_tols rc 0 out "$defaults"

# A pod that tolerates not-ready keeps its own toleration and gets only unreachable (§11.10 A2).
kc run_own run own --image=nginx \
  --overrides='{"spec":{"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":60}]}}'
check run_own rc 0 out "pod/own created"
kc own_yaml get pod own -o yaml
tolerations own_tols own_yaml
check own_tols rc 0 out "  tolerations:
  - effect: NoExecute
    key: node.kubernetes.io/not-ready
    operator: Exists
    tolerationSeconds: 60
  - effect: NoExecute
    key: node.kubernetes.io/unreachable
    operator: Exists
    tolerationSeconds: 300"

# A server-side dry run shows what the plugins did, and stores nothing.
cat >"$tmp/dry.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: dry}
spec:
  containers: [{name: app, image: nginx}]
EOF
kc dry_yaml create -f "$tmp/dry.yaml" --dry-run=server -o yaml
check dry_yaml rc 0
tolerations dry_tols dry_yaml
check dry_tols out "$defaults"
kc dry_gone get pod dry
check dry_gone rc 1 err 'Error from server (NotFound): pods "dry" not found'

# The seconds come from the flags.
server seconds --disable-scheduler --default-not-ready-toleration-seconds=60
kc run_sixty run sixty --image=nginx
check run_sixty rc 0
kc sixty_tols get pod sixty -o jsonpath='{range .spec.tolerations[*]}{.key}={.tolerationSeconds}{"\n"}{end}'
check sixty_tols out "node.kubernetes.io/not-ready=60
node.kubernetes.io/unreachable=300"

# Disabled, the plugin adds nothing.
server disabled --disable-scheduler --disable-admission-plugins=DefaultTolerationSeconds
kc run_bare run bare --image=nginx
check run_bare rc 0
kc bare_tols get pod bare -o jsonpath='{.spec.tolerations}'
check bare_tols rc 0 out ""

# --- 2. NamespaceLifecycle -------------------------------------------------------------------
server lifecycle --disable-scheduler
printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: held\n  finalizers: [kubetaint.io/hold]\n' \
  >"$tmp/held.yaml"
kc held_create create -f "$tmp/held.yaml"
check held_create rc 0 out "namespace/held created"
kc held_pod run inside --image=nginx -n held
check held_pod rc 0
kc held_delete delete ns held --wait=false
check held_delete rc 0 out 'namespace "held" deleted'
kc held_get get ns held
check held_get rc 0 table "NAME STATUS AGE
held Terminating 0s"
# The namespace's contents go; the namespace stays for its finalizer.
pods_gone() {
  kc held_pods get pods -n held -o name
  [ "$(cat "$tmp/held_pods.rc")" = 0 ] && [ ! -s "$tmp/held_pods.out" ]
}
if wait_for 20 pods_gone; then ok; else fail "the pods of the terminating namespace stayed"; fi
kc held_still get ns held -o jsonpath='{.status.phase} {.metadata.finalizers}'
check held_still rc 0 out 'Terminating ["kubetaint.io/hold"]'
kc held_refused run late --image=nginx -n held
check held_refused rc 1 out "" \
  err 'Error from server (Forbidden): pods "late" is forbidden: unable to create new content in namespace held because it is being terminated'
# Removing the finalizer deletes it.
kc held_release patch ns held --type=merge -p '{"metadata":{"finalizers":null}}'
check held_release rc 0 out "namespace/held patched"
ns_gone() {
  kc held_gone get ns held
  grep -q 'NotFound' "$tmp/held_gone.err"
}
if wait_for 20 ns_gone; then ok; else fail "the namespace stayed after its finalizer went"; fi
check held_gone rc 1 err 'Error from server (NotFound): namespaces "held" not found'

# --- 3. Bad flags ------------------------------------------------------------------------------
stop_server
if [ "$srv_rc" = 0 ]; then ok; else fail "server $srv_n: exit status $srv_rc on SIGTERM"; fi
timeout 10 "$bin" serve --listen 127.0.0.1:0 --data-dir "$tmp/bad" --enable-admission-plugins=NamespaceLifecycle,Bogus \
  >"$tmp/bad.out" 2>"$tmp/bad.err"
echo $? >"$tmp/bad.rc"
echo "kubetaint serve --enable-admission-plugins=NamespaceLifecycle,Bogus" >"$tmp/bad.cmd"
check bad rc 2 out "" err 'error: enable-admission-plugins plugin "Bogus" is unknown'

finish
