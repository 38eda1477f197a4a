#!/usr/bin/env bash
# End-to-end: unknown and duplicate fields, as kube-apiserver handles them, with the real
# kubectl (which sends fieldValidation=Strict for create, apply and replace by default):
#   1. a pod with a misspelt toleration field (tolerationSecond) is refused with upstream's
#      message, listing every offending path; nothing is created;
#   2. --validate=warn creates it without the unknown fields and kubectl prints the warnings;
#      --validate=false drops them silently; the stored pod never has them;
#   3. apply and replace refuse them too; patch (no fieldValidation: Warn) drops them with a
#      warning.
# Usage: field_validation_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: field_validation_test.sh KUBETAINT_BINARY}
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
require_kubectl

start_server "$tmp/data" --store memory --nodes 1 || finish

cat >"$tmp/typo.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: typo
  labelz:
    team: a
spec:
  containers:
  - name: c
    image: nginx
  tolerations:
  - key: dedicated
    operator: Exists
    effect: NoExecute
    tolerationSecond: 10
EOF
strict_msg='Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "metadata.labelz", unknown field "spec.tolerations[0].tolerationSecond"'

# --- 1. Strict --------------------------------------------------------------------------------
kc strict create -f "$tmp/typo.yaml"
check strict rc 1 err "Error from server (BadRequest): error when creating \"$tmp/typo.yaml\": $strict_msg"
kc strict_gone get pods -o name
check strict_gone rc 0 out ""

# --- 2. Warn and Ignore -------------------------------------------------------------------------
kc warn create -f "$tmp/typo.yaml" --validate=warn
check warn rc 0 out "pod/typo created" \
  err 'Warning: unknown field "metadata.labelz"
Warning: unknown field "spec.tolerations[0].tolerationSecond"'
kc warn_stored get pod typo -o jsonpath='{.metadata.labelz}|{.spec.tolerations[0]}'
check warn_stored rc 0 out '|{"effect":"NoExecute","key":"dedicated","operator":"Exists"}'
kc delete_typo delete pod typo --grace-period=0 --force
sed 's/name: typo/name: typo2/' "$tmp/typo.yaml" >"$tmp/typo2.yaml"
kc ignore create -f "$tmp/typo2.yaml" --validate=false
check ignore rc 0 out "pod/typo2 created" err ""
kc ignore_stored get pod typo2 -o yaml
check ignore_stored rc 0 lacks 'tolerationSecond:|labelz'

# --- 3. apply, replace, patch -------------------------------------------------------------------
sed 's/name: typo/name: typo3/' "$tmp/typo.yaml" >"$tmp/typo3.yaml"
kc apply apply -f "$tmp/typo3.yaml"
check apply rc 1 err_has "strict decoding error: unknown field \"metadata.labelz\", unknown field \"spec.tolerations\\[0\\].tolerationSecond\""
kc get_for_replace get pod typo2 -o yaml
sed 's/^  tolerations:/  schedulerNamez: x\n  tolerations:/' "$tmp/get_for_replace.out" >"$tmp/replace.yaml"
kc replace replace -f "$tmp/replace.yaml"
check replace rc 1 err_has 'strict decoding error: unknown field "spec.schedulerNamez"'
kc patch patch pod typo2 -p '{"spec":{"tolerationz":[]},"metadata":{"labels":{"a":"b"}}}'
check patch rc 0 out "pod/typo2 patched" err 'Warning: unknown field "spec.tolerationz"'
kc patched get pod typo2 -o jsonpath='{.metadata.labels.a}{.spec.tolerationz}'
check patched rc 0 out "b"

finish
