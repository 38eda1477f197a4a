#!/usr/bin/env python3
"""Trims upstream Kubernetes' OpenAPI v2 document to the kinds kubetaint serves.

    python3 third_party/kubernetes-openapi/generate.py SWAGGER_JSON [OUTPUT]

reads SWAGGER_JSON (the `swagger.json` of a Kubernetes release) and writes to OUTPUT (default:
served-schema.json beside this script) the part of it that describes what kubetaint serves:

* `paths`: the operations of the resources and subresources in SERVED_RESOURCES, as upstream
  has them, except the request body types the server does not take (UNSERVED_CONSUMES);
* `parameters`: the shared parameters those operations reference;
* `definitions`: the kinds in SERVED_KINDS, every definition an operation names, and everything
  those reference. Per definition and per property only the facts the API server and
  `kubectl explain` use are kept (KEPT_KEYS);
* `info`, `security`, `securityDefinitions` and `swagger` as upstream has them.

The output is deterministic (sorted keys, fixed indentation, trailing newline), so regenerating
from the same input gives the same bytes and a newer Kubernetes diffs cleanly. Python 3
standard library only.
"""

import json
import os
import re
import sys

# The kinds the API server serves (src/server/resources.cc), their lists, and the request
# bodies it decodes, as (group, version, kind) of x-kubernetes-group-version-kind.
SERVED_KINDS = [
    ("", "v1", "Namespace"),
    ("", "v1", "NamespaceList"),
    ("", "v1", "Node"),
    ("", "v1", "NodeList"),
    ("", "v1", "Pod"),
    ("", "v1", "PodList"),
    ("", "v1", "Event"),
    ("", "v1", "EventList"),
    ("coordination.k8s.io", "v1", "Lease"),
    ("coordination.k8s.io", "v1", "LeaseList"),
    ("scheduling.k8s.io", "v1", "PriorityClass"),
    ("scheduling.k8s.io", "v1", "PriorityClassList"),
    ("apps", "v1", "DaemonSet"),
    ("apps", "v1", "DaemonSetList"),
    # Request bodies: pods/binding, pods/eviction, DELETE.
    ("", "v1", "Binding"),
    ("policy", "v1", "Eviction"),
    ("", "v1", "DeleteOptions"),
]

# The resources the API server routes (src/server/resources.cc) and their subresources
# (src/server/discovery.cc kResources), as (group, version, plural, subresources). Every upstream
# path of these is kept: collection, item, the all-namespaces list and the `watch/` forms, and
# the group version's own discovery path (`/api/v1/`).
SERVED_RESOURCES = [
    ("", "v1", "events", []),
    ("", "v1", "namespaces", ["status"]),
    ("", "v1", "nodes", ["status"]),
    ("", "v1", "pods", ["binding", "eviction", "status"]),
    ("apps", "v1", "daemonsets", ["status"]),
    ("coordination.k8s.io", "v1", "leases", []),
    ("scheduling.k8s.io", "v1", "priorityclasses", []),
]

# Request body types upstream lists that kubetaint does not take: server-side apply in CBOR.
UNSERVED_CONSUMES = frozenset(["application/apply-patch+cbor"])

# What a kept schema (a definition, a property, an `items` or `additionalProperties`) carries.
KEPT_KEYS = frozenset([
    "$ref",
    "additionalProperties",
    "description",
    "format",
    "items",
    "properties",
    "required",
    "type",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-group-version-kind",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-patch-merge-key",
    "x-kubernetes-patch-strategy",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-unions",
])

REF_PREFIX = "#/definitions/"
PARAMETER_PREFIX = "#/parameters/"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch")


def trim(schema):
    """The schema with only KEPT_KEYS, nested schemas trimmed the same way."""
    out = {}
    for key, value in schema.items():
        if key not in KEPT_KEYS:
            continue
        if key == "properties":
            value = {name: trim(prop) for name, prop in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            value = trim(value)
        out[key] = value
    return out


def refs(node, prefix=REF_PREFIX):
    """Every name under `prefix` that `node` references, at any depth."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                if not value.startswith((REF_PREFIX, PARAMETER_PREFIX)):
                    raise SystemExit("unsupported $ref %r" % value)
                if value.startswith(prefix):
                    yield value[len(prefix):]
            else:
                yield from refs(value, prefix)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value, prefix)


def served_path(path):
    """Whether `path` is an upstream path of a resource in SERVED_RESOURCES."""
    for group, version, plural, subresources in SERVED_RESOURCES:
        prefix = "/api/" + version if not group else "/apis/%s/%s" % (group, version)
        if path == prefix + "/":
            return True
        # [/watch][/namespaces/{namespace}]/<plural>[/{name}[/<subresource>]]
        match = re.fullmatch(
            re.escape(prefix) + r"(?:/watch)?(?:/namespaces/\{namespace\})?"
            r"/([^/]+)(?:/\{name\}(?:/(.+))?)?", path)
        if match and match.group(1) == plural and match.group(2) in [None] + subresources:
            return True
    return False


def served_paths(paths):
    """The served paths, request body types the server does not take left out."""
    kept = {}
    for path, item in paths.items():
        if not served_path(path):
            continue
        item = dict(item)
        for method in METHODS:
            if method in item and "consumes" in item[method]:
                operation = dict(item[method])
                operation["consumes"] = [
                    c for c in operation["consumes"] if c not in UNSERVED_CONSUMES]
                item[method] = operation
        kept[path] = item
    for group, version, plural, subresources in SERVED_RESOURCES:
        for name in [plural] + ["%s/{name}/%s" % (plural, s) for s in subresources]:
            if not any(p.endswith("/" + name) for p in kept):
                raise SystemExit("upstream has no path for %s/%s %s" % (group, version, name))
    return kept


def served_definitions(definitions, paths):
    """The names of the served kinds' definitions, of those the paths name, and of everything
    they reference."""
    by_gvk = {}
    for name, schema in definitions.items():
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            by_gvk.setdefault((gvk["group"], gvk["version"], gvk["kind"]), []).append(name)
    pending = []
    for gvk in SERVED_KINDS:
        names = by_gvk.get(gvk)
        if not names:
            raise SystemExit("no definition has x-kubernetes-group-version-kind %s/%s %s" % gvk)
        if len(names) > 1:
            raise SystemExit("several definitions have %s/%s %s: %s" % (gvk + (names,)))
        pending.extend(names)
    pending.extend(refs(paths))
    seen = set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        if name not in definitions:
            raise SystemExit("dangling $ref to %s" % name)
        seen.add(name)
        pending.extend(r for r in refs(definitions[name]) if r not in seen)
    return seen


def generate(swagger):
    definitions = swagger["definitions"]
    paths = served_paths(swagger["paths"])
    parameters = {}
    for name in refs(paths, PARAMETER_PREFIX):
        if name not in swagger["parameters"]:
            raise SystemExit("dangling $ref to parameter %s" % name)
        parameters[name] = swagger["parameters"][name]
    kept = served_definitions(definitions, [paths, parameters])
    return {
        "definitions": {name: trim(definitions[name]) for name in kept},
        "info": swagger["info"],
        "parameters": parameters,
        "paths": paths,
        "security": swagger["security"],
        "securityDefinitions": swagger["securityDefinitions"],
        "swagger": swagger["swagger"],
    }


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 2
    output = argv[2] if len(argv) == 3 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "served-schema.json")
    with open(argv[1], encoding="utf-8") as f:
        swagger = json.load(f)
    text = json.dumps(generate(swagger), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    with open(output, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
