// MappedMemory: anonymous memory mapped for itself, for large temporary arrays that are built
// once and dropped whole (start-up's rows and the predecoder's entries). malloc would place them
// in its heap, which keeps freed memory as holes among long-lived allocations; a mapping goes back
// to the system when it is destroyed. Pages are backed only as they are first written.
//
// Thread safety: none of its own; the memory is the owner's to share.
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

namespace kt::core {

class MappedMemory {
 public:
  // Maps `bytes` (rounded up to whole pages). With `huge`, asks for transparent huge pages
  // (advice only), so that a large array is faulted in 2 MB at a time rather than 4 KB: fewer,
  // cheaper page faults. Throws std::bad_alloc if the mapping fails.
  explicit MappedMemory(std::size_t bytes, bool huge = false);
  ~MappedMemory();
  MappedMemory(MappedMemory&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  MappedMemory& operator=(MappedMemory&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }
  MappedMemory(const MappedMemory&) = delete;
  MappedMemory& operator=(const MappedMemory&) = delete;

  char* data() const { return data_; }
  std::size_t size() const { return bytes_; }

 private:
  char* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// Byte strings copied into mapped chunks and kept until the arena is destroyed: no allocation
// per string, and the memory goes back to the system whole.
class MappedArena {
 public:
  explicit MappedArena(std::size_t chunk_bytes = std::size_t{1} << 20, bool huge = false)
      : chunk_bytes_(chunk_bytes), huge_(huge) {}

  // A copy of `bytes` that lives as long as the arena. A string longer than a chunk gets a
  // mapping of its own.
  std::string_view Copy(std::string_view bytes);

 private:
  std::size_t chunk_bytes_;
  bool huge_;
  std::vector<MappedMemory> chunks_;
  std::size_t used_ = 0;  // in the last chunk
};

}  // namespace kt::core
