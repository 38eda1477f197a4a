#!/usr/bin/env bash
# End-to-end: `kubectl explain` and the OpenAPI documents it reads, against `kubetaint serve`
# with the real kubectl:
#   1. explain (OpenAPI v3) prints upstream's text for fields of every served kind, --recursive
#      included, and kubectl's error for a field that does not exist;
#   2. every served resource explains, alone and --recursive;
#   3. --output=plaintext-openapiv2 reads /openapi/v2 in protobuf;
#   4. create and apply still hand validation to the server (fieldValidation=Strict), and apply
#      computes its patch from the v3 schemas without a warning;
#   5. the HTTP answers as kube-apiserver gives them: the index, ?hash= caching and redirect,
#      the v2 media types and 406.
# Usage: explain_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: explain_test.sh KUBETAINT_BINARY}
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"

require_kubectl
server explain --store memory

# --- 1. explain, v3 ------------------------------------------------------------------------------
kc tolerations explain pod.spec.tolerations
check tolerations rc 0 out "KIND:       Pod
VERSION:    v1

FIELD: tolerations <[]Toleration>


DESCRIPTION:
    If specified, the pod's tolerations.
    The pod this Toleration is attached to tolerates any taint that matches the
    triple <key,value,effect> using the matching operator <operator>.
    
FIELDS:
  effect	<string>
    Effect indicates the taint effect to match. Empty means match all taint
    effects. When specified, allowed values are NoSchedule, PreferNoSchedule and
    NoExecute.

  key	<string>
    Key is the taint key that the toleration applies to. Empty means match all
    taint keys. If the key is empty, operator must be Exists; this combination
    means to match all values and all keys.

  operator	<string>
    Operator represents a key's relationship to the value. Valid operators are
    Exists, Equal, Lt, and Gt. Defaults to Equal. Exists is equivalent to
    wildcard for value, so that a pod can tolerate all taints of a particular
    category. Lt and Gt perform numeric comparisons (requires feature gate
    TaintTolerationComparisonOperators).

  tolerationSeconds	<integer>
    TolerationSeconds represents the period of time the toleration (which must
    be of effect NoExecute, otherwise this field is ignored) tolerates the
    taint. By default, it is not set, which means tolerate the taint forever (do
    not evict). Zero and negative values will be treated as 0 (evict
    immediately) by the system.

  value	<string>
    Value is the taint value the toleration matches to. If the operator is
    Exists, the value should be empty, otherwise just a regular string."

kc taints explain nodes.spec.taints --recursive
check taints rc 0 out "KIND:       Node
VERSION:    v1

FIELD: taints <[]Taint>


DESCRIPTION:
    If specified, the node's taints.
    The node this Taint is attached to has the \"effect\" on any pod that does not
    tolerate the Taint.
    
FIELDS:
  effect	<string> -required-
  key	<string> -required-
  timeAdded	<string>
  value	<string>"

kc ports explain daemonsets.spec.template.spec.containers.ports
check ports rc 0 has '^GROUP:      apps$' has '^KIND:       DaemonSet$' \
  has '^FIELD: ports <\[\]ContainerPort>$' \
  has '^    List of ports to expose from the container\. Not specifying a port here DOES$' \
  has '^    ContainerPort represents a network port in a single container\.$' \
  has '^  containerPort	<integer> -required-$' has '^  protocol	<string>$'

kc leases explain leases
check leases rc 0 has '^GROUP:      coordination\.k8s\.io$' has '^KIND:       Lease$' \
  has '^VERSION:    v1$' has '^    Lease defines a lease concept\.$' has '^  spec	<LeaseSpec>$'

kc pc explain priorityclass
check pc rc 0 has '^GROUP:      scheduling\.k8s\.io$' has '^KIND:       PriorityClass$' \
  has '^  value	<integer>$' has '^  preemptionPolicy	<string>$'

kc unknown explain pod.spec.tolerationz
check unknown rc 1 err 'error: field "tolerationz" does not exist'

kc pods_recursive explain pods --recursive
check pods_recursive rc 0 has '^    tolerations	<\[\]Toleration>$' \
  has '^      tolerationSeconds	<integer>$' has '^    managedFields	<\[\]ManagedFieldsEntry>$'

# --- 2. every served resource ------------------------------------------------------------------
kc resources api-resources -o name
check resources rc 0
while read -r r; do
  kc "explain_$r" explain "$r"
  check "explain_$r" rc 0 has '^KIND: ' has '^DESCRIPTION:$' has '^FIELDS:$'
  kc "recursive_$r" explain "$r" --recursive
  check "recursive_$r" rc 0 has '^  metadata	<ObjectMeta>( -required-)?$' has '^    name	<string>$'
done <"$tmp/resources.out"

# --- 3. explain, v2 (protobuf) -----------------------------------------------------------------
kc v2 explain --output=plaintext-openapiv2 pod.spec.tolerations
check v2 rc 0 has '^RESOURCE: tolerations <\[\]Object>$' \
  has "^     If specified, the pod's tolerations\.$" has '^   tolerationSeconds	<integer>$'
kc v2_node explain --output=plaintext-openapiv2 node.spec
check v2_node rc 0 has '^   taints	<\[\]Object>$'

# --- 4. create and apply ---------------------------------------------------------------------------
cat >"$tmp/pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: c
    image: nginx
  tolerations:
  - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}
EOF
kc create create -f "$tmp/pod.yaml" -v=6
check create rc 0 has '^pod/web created$' \
  err_has 'POST https://127\.0\.0\.1:[0-9]+/api/v1/namespaces/default/pods\?fieldManager=kubectl-create&fieldValidation=Strict 201'
kc apply1 apply -f "$tmp/pod.yaml"
check apply1 rc 0 has '^pod/web configured$'
sed -i 's/app: web/app: web2/' "$tmp/pod.yaml"
kc apply2 apply -f "$tmp/pod.yaml" -v=6
check apply2 rc 0 has '^pod/web configured$' \
  err_has 'PATCH https://127\.0\.0\.1:[0-9]+/api/v1/namespaces/default/pods/web\?fieldManager=kubectl-client-side-apply&fieldValidation=Strict 200'
if grep -q 'error calculating patch from openapi' "$tmp/apply2.err"; then
  fail "apply: kubectl could not use the v3 schemas"
  _show apply2
else ok; fi
kc labels get pod web -o jsonpath='{.metadata.labels.app} {.spec.tolerations[0].key}'
check labels rc 0 out 'web2 dedicated'

# --- 5. HTTP -------------------------------------------------------------------------------------
# get NAME PATH [CURL_ARGS...]: the response head and body of GET PATH as the admin, in NAME.
get() {
  local name=$1 path=$2
  shift 2
  printf 'GET %s %s\n' "$path" "$*" >"$tmp/$name.cmd"
  curl -s -D "$tmp/$name.head" -o "$tmp/$name.body" --cacert "$KT_CA" --cert "$KT_CERT" \
    --key "$KT_KEY" "$@" "$srv_url$path" 2>"$tmp/$name.err"
  echo $? >"$tmp/$name.rc"
  tr -d '\r' <"$tmp/$name.head" >"$tmp/$name.out"
}

get index /openapi/v3
check index rc 0 has '^HTTP/1\.1 200 ' has '^Content-Type: text/plain; charset=utf-8$'
url=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paths"]["api/v1"]["serverRelativeURL"])' "$tmp/index.body")
hash=${url##*hash=}
case $url in "/openapi/v3/api/v1?hash="*) ok ;; *) fail "index: api/v1 URL $url" ;; esac
if [ ${#hash} = 128 ]; then ok; else fail "hash is not a SHA-512: $hash"; fi

get core "$url"
check core rc 0 has '^HTTP/1\.1 200 ' has '^Content-Type: application/json$' \
  has "^Etag: \"$hash\"$" has '^Cache-Control: public, immutable$' has '^Expires: ' \
  has '^Vary: Accept$'
if [ "$(sha512sum <"$tmp/core.body" | cut -d' ' -f1 | tr a-f A-F)" = "$hash" ]; then ok; else
  fail "the hash is not the SHA-512 of the document"
fi
get stale "/openapi/v3/api/v1?hash=0123"
check stale has '^HTTP/1\.1 301 ' has "^Location: /openapi/v3/api/v1\?hash=$hash$"
get revalidate /openapi/v3/api/v1 -H "If-None-Match: \"$hash\""
check revalidate has '^HTTP/1\.1 304 '
get missing /openapi/v3/apis/policy/v1
check missing has '^HTTP/1\.1 404 '

get v2_proto /openapi/v2 -H 'Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf'
check v2_proto has '^HTTP/1\.1 200 ' \
  has '^Content-Type: application/com\.github\.proto-openapi\.spec\.v2\.v1\.0\+protobuf$'
get v2_json /openapi/v2 -H 'Accept: application/json'
check v2_json has '^HTTP/1\.1 200 ' has '^Content-Type: application/json$'
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["swagger"] == "2.0" and "io.k8s.api.core.v1.Pod" in d["definitions"]' "$tmp/v2_json.body"; then ok; else
  fail "/openapi/v2 JSON is not the swagger document"
fi
get v2_html /openapi/v2 -H 'Accept: text/html'
check v2_html has '^HTTP/1\.1 406 '

finish
