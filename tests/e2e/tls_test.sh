#!/usr/bin/env bash
# End-to-end: secure serving and authentication as kube-apiserver's, against `kubetaint serve`
# on 127.0.0.1:0:
#   1. first start makes DATA_DIR/pki (CA, serving and admin certificates; keys 0600) and a
#      kubeconfig with the CA and the admin client certificate; kubectl works with it as it is;
#   2. who may do what: the admin certificate everything; no credentials: /healthz and /version
#      only (403 with upstream's message elsewhere), or 401 with --anonymous-auth=false; a
#      --token-auth-file token works, a wrong one is 401 (kubectl: "You must be logged in");
#      a certificate of another CA is 401;
#   3. plain HTTP on the TLS port gets Go's 400 answer; --insecure-port serves plain HTTP;
#   4. a restart keeps the CA, so the old kubeconfig's credentials still work; --tls-san adds a name the
#      serving certificate then answers for; --tls-cert-file/--tls-private-key-file serve a
#      certificate of one's own; bad flags are refused with a message naming them.
# Raw requests are made with python3's standard library (ssl, http.client).
# Usage: tls_test.sh path/to/kubetaint
set -uo pipefail
bin=${1:?usage: tls_test.sh KUBETAINT_BINARY}
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
require_kubectl

# req NAME URL [ca=FILE] [cert=FILE key=FILE] [token=T] [host=NAME]: one GET; NAME.out gets
# "STATUS BODY" (the body's first line).
req() {
  local name=$1 url=$2
  shift 2
  printf 'GET %s %s\n' "$url" "$*" >"$tmp/$name.cmd"
  timeout 20 python3 - "$url" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" <<'PY'
import http.client, ssl, sys, urllib.parse
url = urllib.parse.urlsplit(sys.argv[1])
opts = dict(a.split("=", 1) for a in sys.argv[2:])
headers = {"Accept": "application/json"}
if "token" in opts:
    headers["Authorization"] = "Bearer " + opts["token"]
if url.scheme == "https":
    ctx = ssl.create_default_context(cafile=opts.get("ca"))
    if "cert" in opts:
        ctx.load_cert_chain(opts["cert"], opts["key"])
    conn = http.client.HTTPSConnection(url.hostname, url.port, timeout=10, context=ctx)
    if "host" in opts:  # connect to 127.0.0.1 but check the certificate for another name
        import socket
        sock = socket.create_connection((url.hostname, url.port), timeout=10)
        conn.sock = ctx.wrap_socket(sock, server_hostname=opts["host"])
else:
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
conn.request("GET", url.path or "/", headers=headers)
r = conn.getresponse()
print(r.status, r.read().decode().splitlines()[0] if r.length != 0 else "")
PY
  echo $? >"$tmp/$name.rc"
}

# --- 1. first start: the PKI and the kubeconfig ------------------------------------------------
printf 'sekret,alice,u-1,"dev,ops"\n' >"$tmp/tokens.csv"
start_server "$tmp/data" --store memory --nodes 1 --token-auth-file "$tmp/tokens.csv" \
  --tls-san kubetaint.example,10.9.8.7 --insecure-port 0 || finish
pki=$tmp/data/pki
modes=$(cd "$pki" && stat -c '%n %a' ca.crt ca.key apiserver.crt apiserver.key admin.crt admin.key)
if [ "$modes" = "ca.crt 644
ca.key 600
apiserver.crt 644
apiserver.key 600
admin.crt 644
admin.key 600" ]; then ok; else fail "pki files and modes: $modes"; fi
if [ "$(stat -c %a "$KUBECONFIG")" = 600 ]; then ok; else fail "kubeconfig mode"; fi
if grep -q '^    certificate-authority-data: ' "$KUBECONFIG" &&
  grep -q '^    client-certificate-data: ' "$KUBECONFIG" &&
  grep -q '^    client-key-data: ' "$KUBECONFIG" &&
  grep -q "^    server: https://127.0.0.1:" "$KUBECONFIG"; then ok; else
  fail "kubeconfig lacks the CA, the client certificate or the https server"
  sed 's/^/    /' "$KUBECONFIG"
fi
case $srv_url in https://127.0.0.1:*) ok ;; *) fail "serve's URL is not https: $srv_url" ;; esac
kc nodes get nodes -o name
check nodes rc 0 out "node/node1"
kc run run p1 --image=nginx
check run rc 0 out "pod/p1 created"
plain=$(sed -n 's/^kubetaint also serving plain HTTP without authentication on \(http:[^ ]*\) .*/\1/p' "$srv_out")

# --- 2. who may do what ------------------------------------------------------------------------
req admin "$srv_url/api/v1/nodes" ca="$KT_CA" cert="$KT_CERT" key="$KT_KEY"
check admin rc 0 has '^200 \{"kind":"NodeList"'
req anon_healthz "$srv_url/healthz" ca="$KT_CA"
check anon_healthz out "200 ok"
req anon_version "$srv_url/version" ca="$KT_CA"
check anon_version has '^200 \{'
req anon_pods "$srv_url/api/v1/pods" ca="$KT_CA"
check anon_pods out '403 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" at the cluster scope","reason":"Forbidden","details":{"kind":"pods"},"code":403}'
req anon_api "$srv_url/api" ca="$KT_CA"
check anon_api has 'forbidden: User \\"system:anonymous\\" cannot get path \\"/api\\"'
req token "$srv_url/api/v1/namespaces/default/pods" ca="$KT_CA" token=sekret
check token has '^200 \{"kind":"PodList"'
req bad_token "$srv_url/healthz" ca="$KT_CA" token=wrong
check bad_token out '401 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}'
# kubectl with a token instead of the certificate.
sed '/client-certificate-data\|client-key-data/d; s/^  user:$/  user:\n    token: sekret/' \
  "$KUBECONFIG" >"$tmp/token.kubeconfig"
kc kc_token --kubeconfig "$tmp/token.kubeconfig" get pods -o name
check kc_token rc 0 out "pod/p1"
sed 's/token: sekret/token: wrong/' "$tmp/token.kubeconfig" >"$tmp/wrong.kubeconfig"
kc kc_wrong --kubeconfig "$tmp/wrong.kubeconfig" get pods
check kc_wrong rc 1 err "error: You must be logged in to the server (Unauthorized)"
# A client certificate from another CA (another server's data dir) is refused.
main=("$srv_pid" "$srv_url" "$srv_out")
start_server "$tmp/other" --store memory || finish
other=$tmp/other/pki
stop_server
srv_pid=${main[0]} srv_url=${main[1]} srv_out=${main[2]}
export KUBECONFIG=$tmp/data/kubeconfig KT_CA=$pki/ca.crt KT_CERT=$pki/admin.crt \
  KT_KEY=$pki/admin.key
req foreign "$srv_url/api/v1/nodes" ca="$KT_CA" cert="$other/admin.crt" key="$other/admin.key"
check foreign has '^401 '

# --- 3. plain HTTP ------------------------------------------------------------------------------
req plain_to_tls "http://${srv_url#https://}/healthz"
check plain_to_tls out "400 Client sent an HTTP request to an HTTPS server."
python3 - "${srv_url#https://}" >"$tmp/raw.out" 2>&1 <<'PY'
import socket, sys
host, port = sys.argv[1].split(":")
s = socket.create_connection((host, int(port)), timeout=10)
s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
data = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    data += d
sys.stdout.write(data.decode())
PY
if [ "$(cat "$tmp/raw.out")" = "$(printf 'HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.')" ]; then ok; else
  fail "plain HTTP on the TLS port: $(cat "$tmp/raw.out")"
fi
case $plain in http://127.0.0.1:*) ok ;; *) fail "no --insecure-port line: $plain" ;; esac
req insecure "$plain/api/v1/nodes"
check insecure has '^200 \{"kind":"NodeList"'

# --- 4. restarts, SANs, own certificates, bad flags ----------------------------------------------
cp "$KUBECONFIG" "$tmp/first.kubeconfig"
ca_before=$(cat "$pki/ca.crt")
stop_server
if [ "$srv_rc" = 0 ]; then ok; else fail "server exit status $srv_rc"; fi
start_server "$tmp/data" --store memory --nodes 1 \
  --tls-san kubetaint.example,10.9.8.7 --anonymous-auth=false || finish
if [ "$(cat "$pki/ca.crt")" = "$ca_before" ]; then ok; else fail "the CA changed on restart"; fi
# The first start's credentials, at the new port.
kc old_kubeconfig --kubeconfig "$tmp/first.kubeconfig" --server "$srv_url" get nodes -o name
check old_kubeconfig rc 0 out "node/node1"
req san "$srv_url/healthz" ca="$KT_CA" cert="$KT_CERT" key="$KT_KEY" host=kubetaint.example
check san out "200 ok"
req no_san "$srv_url/healthz" ca="$KT_CA" host=elsewhere.example
check no_san err_has "CERTIFICATE_VERIFY_FAILED|Hostname mismatch|doesn't match"
req anon_off "$srv_url/healthz" ca="$KT_CA"
check anon_off out '401 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}'
stop_server

# A certificate of one's own: the data dir's CA still signs the kubeconfig's client certificate,
# but the kubeconfig cannot name the serving certificate's CA.
start_server "$tmp/own" --store memory --tls-cert-file "$pki/apiserver.crt" \
  --tls-private-key-file "$pki/apiserver.key" || finish
req own "$srv_url/version" ca="$pki/ca.crt"
check own has '^200 \{'
if grep -q 'certificate-authority-data' "$KUBECONFIG"; then
  fail "a kubeconfig naming a CA for a certificate it did not issue"
else ok; fi
stop_server

bad_flag() {  # NAME WANT SERVE_ARGS...: serve refuses to start with WANT on stderr
  local name=$1 want=$2
  shift 2
  printf 'kubetaint serve %s\n' "$*" >"$tmp/$name.cmd"
  timeout 30 "$bin" serve --listen 127.0.0.1:0 --store memory --data-dir "$tmp/bad" "$@" \
    >"$tmp/$name.out" 2>"$tmp/$name.err"
  echo $? >"$tmp/$name.rc"
  check "$name" rc 1 err "$want"
}
bad_flag half_pair 'error: --tls-cert-file and --tls-private-key-file must be given together' \
  --tls-cert-file "$pki/apiserver.crt"
bad_flag no_tokens "error: --token-auth-file: open $tmp/nope.csv: no such file or directory" \
  --token-auth-file "$tmp/nope.csv"
printf 'a,b\n' >"$tmp/short.csv"
bad_flag short_tokens "error: --token-auth-file: token file '$tmp/short.csv' must have at least 3 columns (token, user name, user uid), found 2" \
  --token-auth-file "$tmp/short.csv"
bad_flag bad_port 'error: --insecure-port: must be -1 (off) or a port from 0 to 65535, not 70000' \
  --insecure-port 70000

finish
