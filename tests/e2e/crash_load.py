"""Write load and verification for crash_test.sh (standard library only).

  crash_load.py seed     URL SNAPSHOT            objects that must survive every crash unchanged
  crash_load.py load     URL LOGDIR ROUND CLIENTS MAX_OPS SECONDS
  crash_load.py verify   URL SNAPSHOT LOGDIR     after the restart: acknowledged = durable

`load` runs CLIENTS threads, each with its own keep-alive connection, doing creates, label
patches and deletes of its own pods in namespace "load" (bounded by MAX_OPS and SECONDS). Every
operation is logged before it is sent and again with its outcome: "ack" with the response's
resourceVersion for a 2xx, "http" for any other status, "lost" when the connection failed (the
server was killed while the request was in flight, so it may or may not have been applied).
A client stops at its first lost operation.

`verify` replays every log: each object must be exactly where the acknowledged operations left
it (same resourceVersion, same label; LIST and GET agree), except that an object whose last operation was lost may
also show that operation's effect, with a newer resourceVersion. Nothing outside the logs may
have changed: the seeded objects compare equal field by field.
"""
import http.client
import json
import os
import ssl
import sys
import threading
import time
import urllib.parse

NS = "load"


def tls_context():
    # The server's CA and the admin client certificate, from the data dir (lib.sh exports them).
    ctx = ssl.create_default_context(cafile=os.environ["KT_CA"])
    ctx.load_cert_chain(os.environ["KT_CERT"], os.environ["KT_KEY"])
    return ctx


def connect(url):
    u = urllib.parse.urlsplit(url)
    assert u.hostname == "127.0.0.1", url  # loopback only
    if u.scheme == "https":
        return http.client.HTTPSConnection(u.hostname, u.port, timeout=15, context=tls_context())
    return http.client.HTTPConnection(u.hostname, u.port, timeout=15)


def call(conn, method, path, body=None, ctype="application/json"):
    headers = {"Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = ctype
    conn.request(method, path, body=data, headers=headers)
    resp = conn.getresponse()
    raw = resp.read()
    return resp.status, (json.loads(raw) if raw else None)


def must(conn, method, path, body=None, ctype="application/json", want=(200, 201)):
    status, doc = call(conn, method, path, body, ctype)
    if status not in want:
        raise SystemExit(f"{method} {path}: HTTP {status}: {doc}")
    return doc


def pod(name, labels):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": labels},
            "spec": {"containers": [{"name": "c", "image": "registry.example/app:1"}]}}


def snapshot(conn):
    """Every node, namespace and pod, keyed by kind/namespace/name. A node's status and
    resourceVersion are left out: its simulated kubelet posts status when it starts again."""
    objs = {}
    for path, kind in (("/api/v1/nodes", "Node"), ("/api/v1/namespaces", "Namespace"),
                       ("/api/v1/pods", "Pod")):
        for item in must(conn, "GET", path)["items"]:
            m = item["metadata"]
            if kind == "Node":
                item.pop("status", None)
                m.pop("resourceVersion", None)
            objs[f'{kind}/{m.get("namespace", "")}/{m["name"]}'] = item
    return objs


def cmd_seed(url, snap_path):
    conn = connect(url)
    for ns in ("pre", NS):
        must(conn, "POST", "/api/v1/namespaces",
             {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for i in range(20):
        p = pod(f"pre-{i}", {"set": "pre", "i": str(i)})
        p["spec"]["tolerations"] = [{"key": "key1", "operator": "Equal", "value": "value1",
                                     "effect": "NoExecute", "tolerationSeconds": 3600}]
        must(conn, "POST", "/api/v1/namespaces/default/pods", p)
    must(conn, "PATCH", "/api/v1/nodes/node1",
         {"spec": {"taints": [{"key": "key1", "value": "value1", "effect": "NoExecute"}]}},
         "application/merge-patch+json")
    # Objects from earlier rounds are checked from their logs; the snapshot is what no client
    # of any round touches.
    snap = {k: v for k, v in snapshot(conn).items() if f"/{NS}/" not in k}
    json.dump(snap, open(snap_path, "w"))


def client(url, logdir, rnd, cid, max_ops, deadline):
    log = open(os.path.join(logdir, f"r{rnd}-c{cid}.jsonl"), "w")

    def record(**rec):
        log.write(json.dumps(rec) + "\n")
        log.flush()

    conn = connect(url)
    live = []  # names of this client's pods that exist, as far as it knows
    for j in range(max_ops):
        if time.monotonic() > deadline:
            break
        if live and j % 7 == 6:
            op, name = "delete", live.pop(0)
            method, path, body, ctype = "DELETE", f"/api/v1/namespaces/{NS}/pods/{name}", {}, \
                "application/json"
        elif live and j % 3 == 2:
            op, name = "patch", live[j % len(live)]
            method, path, ctype = "PATCH", f"/api/v1/namespaces/{NS}/pods/{name}", \
                "application/merge-patch+json"
            body = {"metadata": {"labels": {"gen": str(j)}}}
        else:
            op, name = "create", f"r{rnd}-c{cid}-{j}"
            method, path, ctype = "POST", f"/api/v1/namespaces/{NS}/pods", "application/json"
            body = pod(name, {"client": str(cid), "gen": str(j)})
        record(op=op, name=name, gen=str(j), state="sent")
        try:
            status, doc = call(conn, method, path, body, ctype)
        except (OSError, http.client.HTTPException) as e:
            record(op=op, name=name, gen=str(j), state="lost", error=repr(e))
            return
        if 200 <= status < 300:
            rv = doc["metadata"]["resourceVersion"] if doc and "metadata" in doc else None
            record(op=op, name=name, gen=str(j), state="ack", status=status, rv=rv)
            if op == "create":
                live.append(name)
        else:
            record(op=op, name=name, gen=str(j), state="http", status=status, body=doc)
            return


def cmd_load(url, logdir, rnd, clients, max_ops, seconds):
    deadline = time.monotonic() + float(seconds)
    threads = [threading.Thread(target=client,
                                args=(url, logdir, int(rnd), c, int(max_ops), deadline))
               for c in range(int(clients))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def replay(logdir):
    """Per object: acknowledged state, and the lost operation if its last one was lost."""
    objs = {}   # name -> {"present": bool, "rv": int, "gen": str, "lost": op or None}
    acks = []   # (rv, file, line) of every acknowledged create and patch
    problems = []
    for fname in sorted(os.listdir(logdir)):
        last_rv = 0
        for n, line in enumerate(open(os.path.join(logdir, fname)), 1):
            rec = json.loads(line)
            if rec["state"] == "sent":
                continue
            o = objs.setdefault(rec["name"], {"present": False, "rv": 0, "gen": None,
                                              "lost": None})
            where = f"{fname}:{n}"
            if rec["state"] == "http":
                problems.append(f"{where}: {rec['op']} {rec['name']} got HTTP {rec['status']}: "
                                f"{rec.get('body')}")
            elif rec["state"] == "lost":
                o["lost"] = rec
            elif rec["op"] == "delete":
                o["present"] = False
            else:
                rv = int(rec["rv"])
                if rv <= last_rv:
                    problems.append(f"{where}: resourceVersion {rv} not above this client's "
                                    f"previous {last_rv}")
                last_rv = rv
                acks.append((rv, where))
                o.update(present=True, rv=rv, gen=rec["gen"])
    return objs, acks, problems


def cmd_verify(url, snap_path, logdir):
    conn = connect(url)
    problems = []
    before = json.load(open(snap_path))
    now = snapshot(conn)
    for key, obj in before.items():
        if key not in now:
            problems.append(f"{key}: gone after the crash")
        elif now[key] != obj:
            problems.append(f"{key}: changed after the crash:\n  before {obj}\n  after  {now[key]}")
    for key in now:
        if key not in before and f"/{NS}/" not in key:
            problems.append(f"{key}: appeared after the crash")

    objs, acks, log_problems = replay(logdir)
    problems += log_problems
    seen = {}
    for rv, where in acks:
        if rv in seen:
            problems.append(f"resourceVersion {rv} acknowledged twice: {seen[rv]} and {where}")
        seen[rv] = where

    live = {k.split("/")[2]: v for k, v in now.items() if f"Pod/{NS}/" in k}
    # A GET of each object must agree with the list.
    for name in objs:
        status, got = call(conn, "GET", f"/api/v1/namespaces/{NS}/pods/{name}")
        if (status == 200) != (name in live) or (status == 200 and got != live[name]):
            problems.append(f"pod {NS}/{name}: GET answers {status} "
                            f"{got['metadata'] if status == 200 else ''}, the list "
                            f"{live[name]['metadata'] if name in live else 'lacks it'}")
        elif status not in (200, 404):
            problems.append(f"pod {NS}/{name}: GET answers {status}: {got}")
    for name in live:
        if name not in objs:
            problems.append(f"pod {NS}/{name}: exists but no client ever wrote it")
    checked = lost_applied = 0
    for name, want in objs.items():
        got = live.get(name)
        got_rv = int(got["metadata"]["resourceVersion"]) if got else None
        got_gen = got["metadata"].get("labels", {}).get("gen") if got else None
        acked = (got is not None) == want["present"] and (
            not want["present"] or (got_rv == want["rv"] and got_gen == want["gen"]))
        lost = want["lost"]
        if acked:
            checked += 1
            continue
        # Not the acknowledged state: only the lost operation, applied, can explain it.
        applied = False
        if lost is not None:
            if lost["op"] == "delete":
                applied = got is None
            else:
                applied = got is not None and got_gen == lost["gen"] and got_rv > want["rv"]
        if applied:
            lost_applied += 1
            continue
        problems.append(f"pod {NS}/{name}: want {want}, got "
                        f"{'absent' if got is None else f'rv {got_rv} gen {got_gen}'}")

    # The counter goes on from the newest acknowledged write.
    newest = max([rv for rv, _ in acks] + [0])
    listed = must(conn, "GET", f"/api/v1/namespaces/{NS}/pods")
    if int(listed["metadata"]["resourceVersion"]) < newest:
        problems.append(f"list resourceVersion {listed['metadata']['resourceVersion']} is below "
                        f"the newest acknowledged write {newest}")
    probe = must(conn, "POST", "/api/v1/namespaces/default/pods",
                 pod(f"probe-{len(os.listdir(logdir))}", {"set": "probe"}))
    must(conn, "DELETE", f"/api/v1/namespaces/default/pods/{probe['metadata']['name']}", {})
    if int(probe["metadata"]["resourceVersion"]) <= newest:
        problems.append(f"a write after the restart got resourceVersion "
                        f"{probe['metadata']['resourceVersion']}, not above {newest}")

    print(f"{len(acks)} acknowledged creates and patches, {checked} objects as acknowledged, "
          f"{lost_applied} showing a lost write applied, {len(problems)} problem(s)")
    for p in problems[:20]:
        print("  " + p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"seed": cmd_seed, "load": cmd_load, "verify": cmd_verify}[cmd](*args)
