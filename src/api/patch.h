// PATCH bodies applied to a stored object: JSON patch (RFC 6902), JSON merge patch (RFC 7386) and
// strategic merge patch, as the upstream API server applies them (apiserver
// endpoints/handlers/patch.go, apimachinery util/strategicpatch, evanphx/json-patch v4).
//
//   Result<PatchType> type = ParsePatchType(request.content_type);      // 415 when unknown
//   Result<rapidjson::Document> patched =
//       ApplyPatch(*type, "Node", stored_node, request.body, &cause);
//   if (!patched) return patched.error();  // 400, 413 or 422 with upstream's message
//
// Contract:
// * `original` is never modified; the result is a new document whose unchanged members keep
//   their order and bytes, with new members appended in patch order. The caller decodes and
//   validates the result as for an update (name, kind and resourceVersion checks included).
// * Any input is handled: malformed JSON, wrong types, deep nesting, huge lists. Errors carry
//   upstream's text. Where upstream answers 422 with the generic message "the server rejected our
//   request due to an error in our request" (a JSON patch that does not apply, a strategic list of
//   lists), the status is kInvalid with that message and `*cause`, when given, receives the
//   specific reason (upstream's details.causes[0].message).
// * Where upstream answers 500 for what is plainly a bad patch (a strategic list element without
//   its merge key, an unknown `$patch` value), we answer 400 with upstream's message: bad input is
//   a client error here (DESIGN.md invariant 5).
// * Strategic merge patch knows the merge keys of the kinds Node, Pod, Namespace, Event, Lease,
//   PriorityClass and DaemonSet (from the upstream `patchStrategy`/`patchMergeKey` tags). Other
//   kinds get 415, as upstream does for types without strategic merge metadata.
// * Cost: one copy of `original`; patch values are moved, never copied. Lookups are linear in
//   the small case and indexed when a list or map is large.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "core/status.h"

namespace kt::api {

enum class PatchType : uint8_t {
  kJsonPatch,            // application/json-patch+json
  kMergePatch,           // application/merge-patch+json
  kStrategicMergePatch,  // application/strategic-merge-patch+json
  kApplyPatch,           // application/apply-patch+yaml (server-side apply; not applied here)
};

// Upstream's generic 422 message for a patch that cannot be applied.
inline constexpr std::string_view kPatchRejectedMessage =
    "the server rejected our request due to an error in our request";

// The most operations a JSON patch may have (upstream maxJSONPatchOperations).
inline constexpr size_t kMaxJsonPatchOperations = 10000;

// The PATCH Content-Type (parameters such as "; charset=utf-8" ignored) → patch type; anything
// else is kUnsupportedMediaType with upstream's message.
Result<PatchType> ParsePatchType(std::string_view content_type);

// Dispatches on `type`; `kind` is needed only by the strategic merge patch. kApplyPatch is the
// server's business (create-or-merge with field management) and gets kUnsupportedMediaType here.
Result<rapidjson::Document> ApplyPatch(PatchType type, std::string_view kind,
                                       const rapidjson::Value& original, std::string_view patch,
                                       std::string* cause = nullptr);

// RFC 6902. Pointers are evaluated as upstream's json-patch v4: `~1`/`~0` escapes, `-` appends,
// negative array indexes count from the end, `replace` of a missing object member adds it, and
// the first segment before a `/` is ignored. At most kMaxJsonPatchOperations operations (413).
Result<rapidjson::Document> ApplyJsonPatch(const rapidjson::Value& original, std::string_view patch,
                                           std::string* cause = nullptr);

// RFC 7386 for an object: the patch must be a JSON object (400 "error decoding patch: …").
Result<rapidjson::Document> ApplyMergePatch(const rapidjson::Value& original,
                                            std::string_view patch);

// Strategic merge patch for `kind`: maps merge recursively, `null` deletes, lists replace unless
// the field has a merge strategy (by merge key, or a set of primitives), and the directives
// `$patch` (replace / delete / merge), `$retainKeys`, `$setElementOrder/<list>` and
// `$deleteFromPrimitiveList/<list>` are applied and never stored.
Result<rapidjson::Document> ApplyStrategicMergePatch(std::string_view kind,
                                                     const rapidjson::Value& original,
                                                     std::string_view patch,
                                                     std::string* cause = nullptr);

// Whether ApplyStrategicMergePatch knows `kind`.
// Go encoding/json's error for malformed `text` ("invalid character '}' looking for beginning of
// value", "unexpected end of JSON input"); "" when `text` is valid JSON.
std::string GoJsonSyntaxError(std::string_view text);
// Go encoding/json's name of a value's type in its UnmarshalTypeError ("cannot unmarshal
// object into Go value of type …"): object, array, string, number, bool, null.
std::string_view GoJsonTypeName(const rapidjson::Value& v);

bool SupportsStrategicMergePatch(std::string_view kind);

// RFC 7386 MergePatch(target, patch) on DOM values of any type: `patch` is consumed (moved from)
// and both must use `allocator`.
void MergePatchValue(rapidjson::Value& target, rapidjson::Value& patch,
                     rapidjson::Document::AllocatorType& allocator);

}  // namespace kt::api
