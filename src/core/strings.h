// Small string helpers shared across modules, with Go's semantics where upstream messages or
// parsing depend on them.
//
// Thread safety: pure functions.
#pragma once

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

}  // namespace kt
