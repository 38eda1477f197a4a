#include "core/file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace kt {

namespace {

// Go's *PathError text: "<op> <path>: <errno text, lower case>".
Status PathError(std::string_view op, const std::filesystem::path& path, int err) {
  std::string text = std::strerror(err);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return Status(err == ENOENT ? StatusCode::kNotFound : StatusCode::kInternal,
                std::string(op) + " " + path.string() + ": " + text);
}

}  // namespace

Result<std::string> ReadFile(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Err(PathError("open", path, errno));
  std::string out;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return Err(PathError("read", path, err));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace kt
