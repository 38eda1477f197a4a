#!/usr/bin/env bash
# `kubetaint serve --heap-pages` (src/cli/heap_pages.h), in a build linked with jemalloc: with 2m
# the heap's new memory is marked for transparent huge pages (`hg` in /proc/PID/smaps), with 4k
# none of it is; auto says what it measured; a bad value is refused with the flag's message.
# Usage: heap_pages.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: heap_pages.sh KUBETAINT_BINARY}
# shellcheck source=SCRIPTDIR/e2e/lib.sh
source "$(dirname "$0")/e2e/lib.sh"

# marked: how many of the server's mappings are marked for huge pages.
marked() { grep -c '^VmFlags:.* hg' "/proc/$srv_pid/smaps"; }

start_server "$tmp/2m" --store memory --heap-pages 2m || finish
if grep -qx 'heap on 2 MB pages (--heap-pages=2m)' "$srv_err"; then ok; else fail "2m: $(cat "$srv_err")"; fi
n=$(marked)
if [ "$n" -gt 0 ]; then ok; else fail "2m: no mapping marked hg"; fi
stop_server

start_server "$tmp/4k" --store memory --heap-pages 4k || finish
if grep -qx 'heap on 4 KB pages (--heap-pages=4k)' "$srv_err"; then ok; else fail "4k: $(cat "$srv_err")"; fi
n=$(marked)
if [ "$n" -eq 0 ]; then ok; else fail "4k: $n mappings marked hg"; fi
stop_server

start_server "$tmp/auto" --store memory || finish
if grep -Eqx 'heap on (4 KB|2 MB) pages: a 4 KB page fault costs [0-9]+\.[0-9] us \(--heap-pages=auto\)' "$srv_err"; then
  ok
else
  fail "auto: $(cat "$srv_err")"
fi
n=$(marked)
if grep -q '^heap on 2 MB' "$srv_err"; then want_gt=1; else want_gt=0; fi
if { [ "$want_gt" = 1 ] && [ "$n" -gt 0 ]; } || { [ "$want_gt" = 0 ] && [ "$n" -eq 0 ]; }; then
  ok
else
  fail "auto: $n mappings marked hg after: $(cat "$srv_err")"
fi
stop_server

out=$("$bin" serve --listen 127.0.0.1:0 --data-dir "$tmp/bad" --heap-pages 1g 2>&1)
rc=$?
if [ "$rc" = 2 ] && [ "$out" = 'error: --heap-pages: must be auto, 4k or 2m, not "1g"' ]; then
  ok
else
  fail "bad value: exit $rc, $out"
fi
finish
