// Reading a whole file, with errors worded as Go's os package words them, because upstream
// messages that quote a file's error ("open tokens.csv: no such file or directory") are what
// users of kube-apiserver flags know:
//
//   Result<std::string> text = ReadFile("/etc/kubetaint/tokens.csv");
//   if (!text) return text.error();  // NotFound "open /etc/...: no such file or directory"
//
// Errors: kNotFound when the file does not exist, kInternal for every other failure (a
// directory reads as "read <path>: is a directory", as Go's os.ReadFile).
//
// Thread safety: a pure function of the file system.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/status.h"

namespace kt {

Result<std::string> ReadFile(const std::filesystem::path& path);

// Writes `contents` to `path` so that a reader (or a crash) sees the old file or the new one,
// never a mix: a temporary file in the same directory, mode `mode` from its creation (a key is
// never readable by others, not even for a moment), synced, renamed over `path`, and the
// directory synced. Errors: kInternal naming the step and the path.
Status WriteFileAtomic(const std::filesystem::path& path, std::string_view contents, unsigned mode);

}  // namespace kt
