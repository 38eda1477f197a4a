#!/usr/bin/env python3
"""Trims upstream Kubernetes' OpenAPI v2 document to the kinds kubetaint serves.

    python3 third_party/kubernetes-openapi/generate.py SWAGGER_JSON [OUTPUT]

reads SWAGGER_JSON (the `swagger.json` of a Kubernetes release), keeps the definitions of the
kinds in SERVED_KINDS and of everything they reference, and writes them to OUTPUT
(default: served-schema.json beside this script). Per definition and per property only the
facts the API server and `kubectl explain` use are kept (KEPT_KEYS); `paths`, `parameters` and
the rest of the document are dropped, `info` and `swagger` are kept.

The output is deterministic (sorted keys, fixed indentation, trailing newline), so regenerating
from the same input gives the same bytes and a newer Kubernetes diffs cleanly. Python 3
standard library only.
"""

import json
import os
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


def refs(node):
    """Every definition name that `node` references, at any depth."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                if not value.startswith(REF_PREFIX):
                    raise SystemExit("unsupported $ref %r" % value)
                yield value[len(REF_PREFIX):]
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def served_definitions(definitions):
    """The names of the served kinds' definitions and of everything they reference."""
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
    kept = served_definitions(definitions)
    return {
        "definitions": {name: trim(definitions[name]) for name in kept},
        "info": swagger["info"],
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
