// Small string helpers shared across modules, with Go's semantics where upstream messages or
// parsing depend on them.
//
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace kt {

// parts[0] + sep + parts[1] + ... (Go strings.Join).
std::string Join(std::span<const std::string> parts, std::string_view sep);

// Go strconv.ParseInt(s, 10, 64): an optional sign, then one or more decimal digits (leading
// zeros allowed), within int64. False on any other input; `*out` is untouched then.
bool ParseDecimalInt64(std::string_view s, int64_t* out);

// Go time.ParseDuration: a signed sequence of decimal numbers, each with an optional fraction
// and a unit ("300ms", "-1.5h", "2h45m"; units ns, us, µs, μs, ms, s, m, h; "0" alone needs
// none). On failure returns false and sets `*error` to Go's message, e.g.
// `time: invalid duration "x"`, `time: missing unit in duration "5"`,
// `time: unknown unit "d" in duration "1d"`; `*out` is untouched then.
bool ParseGoDuration(std::string_view s, std::chrono::nanoseconds* out, std::string* error);

// Go strconv.ParseFloat(s, 32), as pflag's Float32Var reads a flag: decimal or hexadecimal
// floating point, "inf", "nan"; no surrounding spaces. False on bad syntax and on values beyond
// float32's range (Go's ErrRange; then `*out_of_range`, when given, is set); `*out` is untouched
// on failure.
bool ParseFloat32(std::string_view s, float* out, bool* out_of_range = nullptr);

// Appends `s` as a JSON string, quotes included: `"`, `\` and control characters escaped
// (the rest, UTF-8 included, as it is). For JSON built by hand, such as small patches.
void AppendJsonString(std::string& out, std::string_view s);

// Whether `a` and `b` are equal ignoring ASCII case (Go strings.EqualFold for ASCII text): HTTP
// auth schemes, DNS names.
bool EqualFoldAscii(std::string_view a, std::string_view b);

// Writes `v` as `width` lowercase hex digits (the low 4 * width bits, zero-padded) at `out`;
// returns the end.
char* PutHex(char* out, uint64_t v, int width);

// Writes `v` in lowercase hex with no leading zeros ("0" for 0), as printf's "%llx" does, at
// `out` (room for 16 digits); returns the end.
char* PutHexMinimal(char* out, uint64_t v);

// Standard base64 (RFC 4648 §4, with padding), as Go's base64.StdEncoding writes it: the form
// of a kubeconfig's `*-data` fields.
std::string EncodeBase64(std::string_view bytes);

}  // namespace kt
