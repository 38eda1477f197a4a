#include "core/file.h"

#include <fcntl.h>
#include <sys/stat.h>
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

// Rename is atomic only within a file system, hence the temporary file beside the target; the
// directory sync keeps the rename through a crash.
Status WriteFileAtomic(const std::filesystem::path& path, std::string_view contents,
                       unsigned mode) {
  std::string name = ".";
  name.append(path.filename().string()).append(".XXXXXX");
  std::string tmp = (path.parent_path() / name).string();
  int fd = ::mkstemp(tmp.data());  // mode 0600 from the start: a key is never readable by others
  if (fd < 0)
    return Internal("create a temporary file for " + path.string() + ": " + std::strerror(errno));
  auto fail = [&](std::string_view what) {
    int err = errno;
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    return Internal(std::string(what) + " " + path.string() + ": " + std::strerror(err));
  };
  for (size_t done = 0; done < contents.size();) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("write");
    done += static_cast<size_t>(n);
  }
  if (::fchmod(fd, static_cast<mode_t>(mode)) != 0) return fail("chmod");
  if (::fsync(fd) != 0) return fail("sync");
  int closing = fd;
  fd = -1;
  if (::close(closing) != 0) return fail("write");
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail("rename into");
  // Best effort: the file is complete either way; without this a crash may undo the rename.
  if (int dir = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return Status::Ok();
}

}  // namespace kt
