#!/usr/bin/env bash
# End-to-end: `kubetaint check --server --taint NODE KEY=VAL:NoExecute` previews what the taint
# eviction controller does, and `kubectl taint` of the same taint then evicts exactly that set
# of pods at those times.
# Usage: eviction_preview_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: eviction_preview_test.sh KUBETAINT_BINARY}
src=${KUBETAINT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}

# Without the node lifecycle controller, so that the only taints on the nodes are the ones this
# test adds (a slow run could otherwise see a node's condition taints, which `check` reports),
# and so without TaintNodesByCondition, whose not-ready taint nothing would then lift.
start_server "$tmp/data" --nodes 2 --disable-scheduler '--controllers=*,-node-lifecycle-controller' --disable-admission-plugins=TaintNodesByCondition || finish

pod() {  # NAME NODE TOLERATIONS-JSON
  kc "run_$1" run "$1" --image=nginx --overrides="{\"spec\":{\"nodeName\":\"$2\",\"tolerations\":$3}}"
  check "run_$1" rc 0
}
pod plain node1 '[]'
pod other-key node1 '[{"key":"other","operator":"Exists","effect":"NoExecute"}]'
pod zero node1 '[{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":0}]'
pod three node1 '[{"key":"k","operator":"Equal","value":"v","effect":"NoExecute","tolerationSeconds":3}]'
pod forever node1 '[{"key":"k","operator":"Exists","effect":"NoExecute"}]'
pod all node1 '[{"operator":"Exists"}]'
pod elsewhere node2 '[]'
# The seeds' pod (tolerations of key1=value1 NoSchedule and NoExecute) does not tolerate k=v.
sed 's/^spec:/spec:\n  nodeName: node1/' "$src/examples/seed-two-tolerations-pod.yaml" >"$tmp/seed.yaml"
kc create_seed create -f "$tmp/seed.yaml"
check create_seed rc 0
seed=$(sed -n 's/^  name: //p' "$tmp/seed.yaml" | head -1)

# The preview: node1's pods, each with what the taint would do.
"$bin" check --kubeconfig "$KUBECONFIG" --taint node1 k=v:NoExecute -o json >"$tmp/preview.json" 2>"$tmp/preview.err"
echo $? >"$tmp/preview.rc"
/usr/bin/python3 - "$tmp/preview.json" >"$tmp/preview.out" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
for node in doc["evictions"]:
    for p in node["pods"]:
        secs = p["evictAfterSeconds"]
        print(node["node"], p["name"], p["eviction"], "" if secs is None else secs)
EOF
printf 'kubetaint check --kubeconfig ... --taint node1 k=v:NoExecute -o json\n' >"$tmp/preview.cmd"
check preview rc 0 out "node1 all stays 
node1 forever stays 
node1 other-key now 
node1 plain now 
node1 three after 3
node1 $seed now 
node1 zero now "

"$bin" check --kubeconfig "$KUBECONFIG" --taint node1 k=v:NoExecute >"$tmp/preview_text.out" 2>&1
echo $? >"$tmp/preview_text.rc"
printf 'kubetaint check --kubeconfig ... --taint node1 k=v:NoExecute\n' >"$tmp/preview_text.cmd"
: >"$tmp/preview_text.err"
check preview_text rc 0 has '^node node1 after the change: NoExecute taint\(s\) k=v:NoExecute$' \
  has '^  default/three +evict after 3s$' has '^  default/plain +evict now$' \
  has '^  default/forever +stays$' has '7 pod\(s\): 4 evicted now, 1 after a countdown, 2 stay'

# The preview changed nothing.
kc still get pods -o name
check still out "pod/all
pod/elsewhere
pod/forever
pod/other-key
pod/plain
pod/three
pod/$seed
pod/zero"

# Now the real taint; record when each pod is evicted, for 7 s: when it is gone or its (graceful)
# deletion has begun, as the pods here have the default 30 s grace period.
kc taint taint nodes node1 k=v:NoExecute
check taint rc 0 out "node/node1 tainted"
t0=$(_now_ms)
declare -A gone_at
while [ $(($(_now_ms) - t0)) -lt 7000 ]; do
  # The pods still there and not being deleted, one name per line.
  names=$(timeout 10 kubectl --cache-dir "$tmp/kubectl-cache" get pods -o \
    jsonpath='{range .items[*]}{.metadata.name} {.metadata.deletionTimestamp}{"\n"}{end}' \
    2>/dev/null | awk 'NF == 1 { print $1 }')
  now=$(($(_now_ms) - t0))
  for p in all elsewhere forever other-key plain "$seed" three zero; do
    if [ -z "${gone_at[$p]:-}" ] && ! grep -qx "$p" <<<"$names"; then gone_at[$p]=$now; fi
  done
  sleep 0.05
done
actual=""
for p in all elsewhere forever other-key plain "$seed" three zero; do
  actual+="$p ${gone_at[$p]:-stayed}"$'\n'
done
printf '%s' "$actual" >"$tmp/timeline.out"
echo 0 >"$tmp/timeline.rc"
: >"$tmp/timeline.err"
echo "(when each pod was gone, ms after kubectl taint returned)" >"$tmp/timeline.cmd"
# "now": gone within 2 s; "after 3": not before 2.5 s (the countdown starts when the controller
# sees the taint, just after the PATCH's answer), gone by 5 s; the others stay.
verdicts=$(/usr/bin/python3 - "$seed" <<EOF
import sys
seed = sys.argv[1]
want = {"all": "stays", "elsewhere": "stays", "forever": "stays", "other-key": "now",
        "plain": "now", seed: "now", "three": "after", "zero": "now"}
for line in open("$tmp/timeline.out"):
    name, when = line.split()
    w = want[name]
    if w == "stays":
        ok = when == "stayed"
    elif w == "now":
        ok = when != "stayed" and int(when) <= 2000
    else:
        ok = when != "stayed" and 2500 <= int(when) <= 5000
    print(name, "ok" if ok else "WRONG (" + w + ")")
EOF
)
printf '%s\n' "$verdicts" >"$tmp/verdicts.out"
cp "$tmp/timeline.out" "$tmp/verdicts.err"
echo 0 >"$tmp/verdicts.rc"
cp "$tmp/timeline.cmd" "$tmp/verdicts.cmd"
check verdicts lacks WRONG has "^three ok$" has "^plain ok$" has "^forever ok$"

finish
