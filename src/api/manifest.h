// Loading manifests — the YAML or JSON files users give `kubectl apply -f` and `kubetaint check`
// — into JSON documents, the way kubectl reads them.
//
//   - A YAML stream is split into documents at lines starting with "---", as kubectl's
//     YAMLReader does ("--- text" other than a comment is an error). Documents holding only
//     blank lines and comments, and documents that are null, are skipped; the others are
//     numbered from 1.
//   - YAML becomes JSON as sigs.k8s.io/yaml converts it (go-yaml v2 resolution of plain
//     scalars): 3600 → integer, 1.5 → number, true/false/yes/no/on/off → boolean,
//     null/~/empty → null, quoted scalars always strings; map keys sorted, the last duplicate
//     wins, "<<" merge keys applied, non-string keys turned into strings. Anchors and aliases
//     work; excessive aliasing is refused.
//   - A stream whose first non-space byte is '{' is JSON: one or more concatenated objects.
//   - kind "List", and kinds ending in "List" with an "items" array, expand into their items.
//   - Every object must have a kind and an apiVersion.
//
// Errors are kBadRequest (kNotFound for a missing file) and name the file and document:
//   pods.yaml: document 2: yaml: line 14, column 3: illegal map value
//   pods.yaml: document 2, item 3: Object 'Kind' is missing
// Line numbers count from the start of the file.
//
// Thread safety: functions are reentrant; a Manifest is a plain value (move-only).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "core/status.h"

namespace kt::api {

struct Manifest {
  std::string source;          // the file name (or the name given to LoadManifests)
  int document = 0;            // 1-based index of the document in the source
  int item = 0;                // 1-based index in a List's items; 0 when not from a List
  rapidjson::Document object;  // the object, owned
  std::string kind;
  std::string api_version;
  std::string name;        // metadata.name; may be empty (generateName)
  std::string namespace_;  // metadata.namespace; may be empty

  // "pods.yaml: document 2" or "pods.yaml: document 2, item 3": the prefix of errors about
  // this object.
  std::string Location() const;
};

Result<std::vector<Manifest>> LoadManifestFile(const std::string& path);
Result<std::vector<Manifest>> LoadManifests(std::string_view text, std::string_view source_name);

// Converts one YAML document to JSON as sigs.k8s.io/yaml.YAMLToJSON does; an empty document
// converts to null, and a repeated key takes its last value. Errors carry no file or document
// prefix ("yaml: line 3, column 5: ...").
//
// `duplicate_keys`, when given, gets the repeated map keys as sigs.k8s.io/yaml.UnmarshalStrict
// (goyaml v2) reports them: `line 5: key "name" already set in map`, with the 1-based line of
// the repeat's value, depth first (a value's own repeats before its key's), every repeat after
// the first. Keys are compared as goyaml resolves them: a quoted "1" and a plain 1 differ, a
// quoted "a" and a plain a do not.
Result<rapidjson::Document> YamlToJson(std::string_view yaml,
                                       std::vector<std::string>* duplicate_keys = nullptr);

}  // namespace kt::api
