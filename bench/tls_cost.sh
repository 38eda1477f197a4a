#!/usr/bin/env bash
# What TLS costs the API server: the same load over HTTPS (the kubeconfig's way in: TLS 1.3,
# ECDSA P-256, the admin client certificate) and over plain HTTP (--insecure-port), against ONE
# server on SQLite, alternating plain and TLS runs so that machine noise hits both alike:
#   (tls-f) pod creates/s from 16 keep-alive connections (~2.6 KB pods, strict field validation
#           on, as kubectl sends it)
#   (tls-c) single GET p99, 1 and 16 connections
#   (tls-e) node taint PATCH (strategic merge) p99, 1 and 16 connections
# Target: TLS costs <= 15 % of the create rate.
#
#   bench/tls_cost.sh [BUILD_DIR]     NODES=500 PODS=20000 PER_RUN=20000 RUNS=4 SECS=3
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${1:-build}
NODES=${NODES:-500}
PODS=${PODS:-20000}
RUNS=${RUNS:-4}  # even: each mode runs first as often as second
PER_RUN=${PER_RUN:-20000}  # per create run: long enough that one noisy second does not decide it
SECS=${SECS:-3}

# shellcheck source=bench/server.sh
source bench/server.sh
bench_setup tls-cost
DATA=$TMP/data

start_server "$BIN" "$DATA" "$TMP/server" "${NO_KUBELETS[@]}"
PLAIN=$URL
TLS=$(grep -o 'https://127.0.0.1:[0-9]*' "$TMP/server.out" | head -1)
PKI=$DATA/pki
load() {  # URL ARGS...
  local url=$1
  shift
  timeout 600 "$LOAD" "$@" --url "$url" --pki "$PKI" --nodes "$NODES" --pid "$SERVER_PID"
}
echo "== one server, SQLite, $(nproc) cores; plain $PLAIN, TLS $TLS"
load "$PLAIN" populate --pods "$PODS" --conns 16 --segments 4 | tail -1

tag() { sed "s/^/[$1] /"; }
CREATES=$TMP/creates.txt
# Each create run adds PER_RUN pods, and a larger store writes a little slower: the order
# alternates (plain, TLS; TLS, plain; ...) so that neither mode always runs on the larger one.
for run in $(seq 1 "$RUNS"); do
  order="plain tls"
  [ $((run % 2)) = 0 ] && order="tls plain"
  for mode in $order; do
    url=$PLAIN
    [ "$mode" = tls ] && url=$TLS
    load "$url" create --pods "$PER_RUN" --runs 1 --ns-prefix "$mode-$run" | grep '^(f)' | tag "$mode" |
      tee -a "$CREATES"
  done
done
# The medians of the create runs, and what TLS costs of the plain rate.
awk '/\(f\) pod creates conns=16/ {
       for (i = 1; i <= NF; i++) if ($i == "=" && $(i + 1) ~ /\/s;?$/) { v = $(i + 1); sub("/s;?", "", v) }
       for (i = 1; i <= NF; i++) if ($i == "us/op;") c = $(i - 1)
       if ($1 == "[plain]") { p[++np] = v + 0; pc[np] = c + 0 } else { t[++nt] = v + 0; tc[nt] = c + 0 }
     }
     function median(a, n,   i, j, x) {
       for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
       return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
     }
     END {
       if (np == 0 || nt == 0) exit
       mp = median(p, np); mt = median(t, nt); cost = 100 * (1 - mt / mp)
       printf "(tls) pod creates/s, median of %d runs each: plain %.0f, TLS %.0f: TLS costs %.1f %% of the rate; target <= 15 %%: %s\n",
              np, mp, mt, cost, cost <= 15 ? "MET" : "MISSED"
       printf "(tls) server CPU per create, median: plain %.0f us, TLS %.0f us\n", median(pc, np), median(tc, nt)
     }' "$CREATES"
for mode in plain tls; do
  url=$PLAIN
  [ "$mode" = tls ] && url=$TLS
  load "$url" get --pods "$PODS" --conns 1,16 --seconds "$SECS" --runs "$RUNS" | grep 'median' | tag "$mode"
  load "$url" patch --conns 1,16 --seconds "$SECS" --runs "$RUNS" | grep 'median' | tag "$mode"
done
