#!/usr/bin/env bash
# The main job: build kubetaint and check every shipped example, printing for each pod which
# nodes it can run on and what NoExecute taints mean for it.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh || exit 1
status=0
for f in examples/*.yaml; do
  echo "== build/kubetaint check -f $f"
  build/kubetaint check -f "$f"
  rc=$?
  # 1 means a pod has no feasible node: an answer, not a failure. 2 is bad input.
  [ $rc -ge 2 ] && status=$rc
  echo
done
exit $status
