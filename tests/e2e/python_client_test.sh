#!/usr/bin/env bash
# End-to-end: Debian's python3-kubernetes (the official Python client, which nobody here wrote)
# against `kubetaint serve --nodes 2` on 127.0.0.1:0, through the kubeconfig serve writes:
#   1. list_node: both nodes, each with a complete nodeInfo (the client refuses a missing
#      bootID) and Ready True;
#   2. create a pod and watch (the client sends watch=True): ADDED, then MODIFIED to Running as
#      the scheduler binds it and its kubelet runs it;
#   3. taint a node with patch_node and read the taint back;
#   4. delete the pod: gracefully, with a deletionTimestamp.
# Skips (passing) when /usr/bin/python3 cannot import kubernetes (scripts/deps.sh installs it).
# Usage: python_client_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: python_client_test.sh KUBETAINT_BINARY}
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"

py=/usr/bin/python3
if ! "$py" -c 'import kubernetes' 2>/dev/null; then
  echo "SKIP: $py cannot import kubernetes (KUBETAINT_WITH_KUBECTL=1 scripts/deps.sh installs python3-kubernetes)"
  echo "0 passed, 0 failed"
  exit 0
fi

start_server "$tmp/data" --store memory --nodes 2 || finish

# pyk NAME: runs the Python on stdin with the client configured from $KUBECONFIG, keeping its
# output as NAME (for check).
pyk() {
  local name=$1
  printf '%s (python3-kubernetes)\n' "$name" >"$tmp/$name.cmd"
  timeout 60 "$py" -c "
from kubernetes import client, config, watch
config.load_kube_config()
v1 = client.CoreV1Api()
$(cat)
" >"$tmp/$name.out" 2>"$tmp/$name.err"
  echo $? >"$tmp/$name.rc"
}

pyk nodes <<'PY'
for n in v1.list_node().items:
    ready = [c.status for c in n.status.conditions if c.type == "Ready"]
    print(n.metadata.name, len(n.status.node_info.boot_id), n.status.node_info.kubelet_version.startswith("v1.35"), ready)
PY
check nodes rc 0 out "node1 36 True ['True']
node2 36 True ['True']"

pyk watch <<'PY'
import threading, time
def create():
    time.sleep(0.5)
    v1.create_namespaced_pod("default", client.V1Pod(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1PodSpec(containers=[client.V1Container(name="web", image="nginx")])))
threading.Thread(target=create).start()
w = watch.Watch()
for ev in w.stream(v1.list_namespaced_pod, "default", timeout_seconds=20):
    o = ev["object"]
    print(ev["type"], o.metadata.name, o.status.phase)
    if o.status.phase == "Running":
        w.stop()
PY
check watch rc 0 has '^ADDED web Pending$' has '^MODIFIED web Running$'

pyk taint <<'PY'
v1.patch_node("node2", {"spec": {"taints": [{"key": "dedicated", "value": "py", "effect": "NoSchedule"}]}})
print([(t.key, t.value, t.effect) for t in v1.read_node("node2").spec.taints])
PY
check taint rc 0 out "[('dedicated', 'py', 'NoSchedule')]"

pyk delete <<'PY'
v1.delete_namespaced_pod("web", "default")
p = v1.read_namespaced_pod("web", "default")
print(p.metadata.deletion_timestamp is not None, p.metadata.deletion_grace_period_seconds)
PY
check delete rc 0 out "True 30"

stop_server
if [ "$srv_rc" = 0 ]; then ok; else fail "SIGTERM: exit status $srv_rc"; fi
finish
