#!/usr/bin/env bash
# End-to-end: `kubetaint check` on the shipped examples and on bad input, through the real binary.
# Usage: check_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: check_test.sh KUBETAINT_BINARY}
src=${KUBETAINT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
ex=$src/examples
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

# run NAME EXPECTED_EXIT ARGS...: runs the binary, keeps stdout/stderr in $tmp/NAME.{out,err}.
run() {
  local name=$1 want=$2
  shift 2
  "$bin" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    fail "$name: exit $got, want $want"
    sed 's/^/    /' "$tmp/$name.out" "$tmp/$name.err"
    return 1
  fi
  ok
}
expect_out() {  # NAME REGEX: stdout matches
  if grep -Eq -- "$2" "$tmp/$1.out"; then ok; else
    fail "$1: stdout lacks /$2/"
    sed 's/^/    /' "$tmp/$1.out"
  fi
}
expect_err_line() {  # NAME REGEX: stderr is one line matching
  local lines
  lines=$(wc -l <"$tmp/$1.err")
  if [ "$lines" -eq 1 ] && grep -Eq -- "$2" "$tmp/$1.err"; then ok; else
    fail "$1: stderr is not one line matching /$2/"
    sed 's/^/    /' "$tmp/$1.err"
  fi
}

# The seed example: the two-toleration pod cannot go to node1 because of key2=value2:NoSchedule,
# and if it already ran there it would stay.
run seed 1 check -f "$ex/seed-two-tolerations.yaml"
expect_out seed '^pod default/two-tolerations: no feasible node'
expect_out seed '^  0/1 nodes are available: 1 node\(s\) had untolerated taint\(s\)\. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling\.$'
expect_out seed '^  node1 +no +- +stays +TaintToleration: untolerated taint key2=value2:NoSchedule$'
expect_out seed '^pod default/two-tolerations-running \(bound to node1\)'
expect_out seed '^  node1 \(bound\) +no +- +stays +TaintToleration: untolerated taint key2=value2:NoSchedule$'

run seed_json 1 check -f "$ex/seed-two-tolerations.yaml" -o json
python3 - "$tmp/seed_json.out" <<'PY' && ok || fail "seed_json: JSON report"
import json, sys
r = json.load(open(sys.argv[1]))
pods = {p["name"]: p for p in r["pods"]}
n = pods["two-tolerations"]["nodes"][0]
filters = {f["plugin"]: f["status"] for f in n.pop("filters")}
assert filters["TaintToleration"] == "UnschedulableAndUnresolvable", filters
assert all(v in ("Success", "Skip") for k, v in filters.items() if k != "TaintToleration"), filters
assert n == {"name": "node1", "feasible": False,
             "reasons": ["TaintToleration: untolerated taint key2=value2:NoSchedule"],
             "untoleratedTaint": {"key": "key2", "value": "value2", "effect": "NoSchedule"},
             "preferNoScheduleUntolerated": 0, "score": None, "scores": [],
             "eviction": None, "evictAfterSeconds": None}, n
p = pods["two-tolerations"]
assert p["selectedNode"] is None and p["preemption"] is None, p
assert p["message"].startswith("0/1 nodes are available: 1 node(s) had untolerated taint(s)."), p
b = pods["two-tolerations-running"]["nodes"][0]
assert b["eviction"] == "stays" and b["evictAfterSeconds"] is None, b
assert pods["two-tolerations-running"]["namespace"] == "default"
PY

run seconds 0 check -f "$ex/seed-toleration-seconds.yaml" -o json
python3 - "$tmp/seconds.out" <<'PY' && ok || fail "seconds: eviction times"
import json, sys
r = json.load(open(sys.argv[1]))
ev = {p["name"]: (p["nodes"][0]["eviction"], p["nodes"][0]["evictAfterSeconds"]) for p in r["pods"]}
assert ev == {"tolerates-for-an-hour": ("after", 3600), "tolerates-forever": ("stays", None),
              "no-toleration": ("now", None)}, ev
PY
run seconds_text 0 check -f "$ex/seed-toleration-seconds.yaml"
expect_out seconds_text 'evict after 3600s'

run dedicated 0 check -f "$ex/dedicated-nodes.yaml" -o json
python3 - "$tmp/dedicated.out" <<'PY' && ok || fail "dedicated: feasibility"
import json, sys
r = json.load(open(sys.argv[1]))
feas = {p["name"]: sorted(n["name"] for n in p["nodes"] if n["feasible"]) for p in r["pods"]}
assert feas == {"devs-app": ["host1", "host2"], "other-team-app": ["shared"]}, feas
shared = [n for p in r["pods"] if p["name"] == "devs-app" for n in p["nodes"] if n["name"] == "shared"][0]
assert shared["reasons"] == ["NodeAffinity: node(s) didn't match Pod's node affinity/selector"], shared
picks = {p["name"]: p["selectedNode"] for p in r["pods"]}
assert picks["devs-app"] in ("host1", "host2") and picks["other-team-app"] == "shared", picks
PY

run gpu 0 check -f "$ex/gpu-nodes.yaml" -o json
python3 - "$tmp/gpu.out" <<'PY' && ok || fail "gpu: feasibility"
import json, sys
r = json.load(open(sys.argv[1]))
feas = {p["name"]: sorted(n["name"] for n in p["nodes"] if n["feasible"]) for p in r["pods"]}
assert feas == {"cuda-training": ["gpu-node-1", "gpu-node-2"], "web": ["cpu-node", "gpu-node-2"]}, feas
web = {n["name"]: n["preferNoScheduleUntolerated"] for p in r["pods"] if p["name"] == "web" for n in p["nodes"]}
assert web == {"gpu-node-1": 0, "gpu-node-2": 1, "cpu-node": 0}, web
picks = {p["name"]: p["selectedNode"] for p in r["pods"]}
# The GPU pod prefers the node without the PreferNoSchedule taint; the web pod keeps off both.
assert picks == {"cuda-training": "gpu-node-1", "web": "cpu-node"}, picks
PY

run seed_pod 0 check -f "$ex/seed-pod-with-toleration.yaml"
expect_out seed_pod '^pod default/nginx: feasible on 2 of 2 node'

# Several files at once.
# Several files at once: the seed pod now has the untainted node "shared" to go to.
run multi 0 check -f "$ex/seed-two-tolerations.yaml" -f "$ex/dedicated-nodes.yaml"
expect_out multi '^4 pod\(s\), 4 node\(s\): every unbound pod has a feasible node$'
expect_out multi '^pod default/two-tolerations: feasible on 1 of 4 node\(s\); the scheduler picks shared$'

# What-if taint changes in the kubectl taint grammar.
run whatif 0 check -f "$ex/seed-two-tolerations.yaml" --taint 'node1=key2:NoSchedule-'
expect_out whatif '^pod default/two-tolerations: feasible on 1 of 1 node'
run whatif_two 0 check -f "$ex/seed-two-tolerations.yaml" --taint node1 key2:NoSchedule-
expect_out whatif_two '^pod default/two-tolerations: feasible on 1 of 1 node'
run whatif_exec 0 check -f "$ex/seed-toleration-seconds.yaml" --taint 'node1=key1-' -o json
python3 - "$tmp/whatif_exec.out" <<'PY' && ok || fail "whatif_exec: all stay once the taint is gone"
import json, sys
r = json.load(open(sys.argv[1]))
assert all(p["nodes"][0]["eviction"] == "stays" for p in r["pods"]), r
PY

# Bad input: one clear line on stderr, exit 2.
run bad_spec 2 check -f "$ex/seed-two-tolerations.yaml" --taint 'node1=foo=bar:NoExcute'
expect_err_line bad_spec 'invalid taint effect: NoExcute, unsupported taint effect'
run bad_spec_node 2 check -f "$ex/seed-two-tolerations.yaml" --taint 'nodeX=a:NoSchedule'
expect_err_line bad_spec_node 'nodeX'
run bad_spec_form 2 check -f "$ex/seed-two-tolerations.yaml" --taint 'a:NoSchedule'
expect_err_line bad_spec_form 'NODE=SPEC'
run missing_file 2 check -f "$tmp/nope.yaml"
expect_err_line missing_file 'nope.yaml'
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers: [ {name: a\n' >"$tmp/bad.yaml"
run bad_yaml 2 check -f "$tmp/bad.yaml"
expect_err_line bad_yaml 'bad.yaml: document 1'
cat >"$tmp/badtol.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: a, image: nginx}]
  tolerations:
  - key: foo
    operator: Exists
    value: bar
Y
run bad_toleration 2 check -f "$tmp/badtol.yaml"
expect_err_line bad_toleration "badtol.yaml: document 2 \(Pod p\): spec.tolerations\[0\].operator: Invalid value: \"bar\": value must be empty when \`operator\` is 'Exists'"
cat >"$tmp/badtaint.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata: {name: n1}
spec:
  taints:
  - {key: dedicated, value: a, effect: NoSchedule}
  - {key: dedicated, value: b, effect: Bogus}
Y
run bad_taint 2 check -f "$tmp/badtaint.yaml"
expect_err_line bad_taint 'badtaint.yaml: document 1 \(Node n1\): metadata.taints\[1\].effect: Unsupported value: "Bogus"'
cat >"$tmp/badtype.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  tolerations:
  - key: foo
    operator: Exists
    effect: NoExecute
    tolerationSeconds: soon
Y
run bad_type 2 check -f "$tmp/badtype.yaml"
expect_err_line bad_type 'badtype.yaml: document 1.*spec.tolerations\[0\].tolerationSeconds'
run bad_flag 2 check -f "$ex/seed-two-tolerations.yaml" --bogus
expect_err_line bad_flag 'bogus'
run bad_output 2 check -f "$ex/seed-two-tolerations.yaml" -o xml
expect_err_line bad_output 'xml'
run bad_gate 2 check -f "$ex/seed-two-tolerations.yaml" --feature-gates Bogus=true
expect_err_line bad_gate 'unrecognized feature gate: Bogus'
run no_file 2 check
expect_err_line no_file 'filename'

# Lt/Gt need the feature gate.
cat >"$tmp/sla.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata: {name: n1}
spec:
  taints: [{key: node.kubernetes.io/sla, value: "950", effect: NoSchedule}]
status:
  allocatable: {cpu: "2", memory: 4Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: a, image: nginx}]
  tolerations: [{key: node.kubernetes.io/sla, operator: Gt, value: "750", effect: NoSchedule}]
Y
run gate_off 2 check -f "$tmp/sla.yaml"
expect_err_line gate_off 'Unsupported value: "Gt"'
run gate_on 0 check -f "$tmp/sla.yaml" --feature-gates TaintTolerationComparisonOperators=true
expect_out gate_on 'feasible on 1 of 1'

# A node without status.allocatable fits no pod, as the scheduler sees it; check says why.
cat >"$tmp/bare.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata: {name: bare}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: a, image: nginx}]
Y
run bare 1 check -f "$tmp/bare.yaml"
expect_out bare '^note: node bare has no status.allocatable'
expect_out bare '^  bare +no +- +stays +NodeResourcesFit: Too many pods$'

run version 0 version
expect_out version '^kubetaint [0-9]+\.[0-9]+\.[0-9]+ \(Kubernetes v1\.35\.0 semantics\)$'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
