#include "core/mapped_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <new>

namespace kt::core {

MappedMemory::MappedMemory(std::size_t bytes, bool huge) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  bytes_ = bytes == 0 ? page : (bytes + page - 1) / page * page;
  void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<char*>(p);
  if (huge) (void)::madvise(data_, bytes_, MADV_HUGEPAGE);  // refused where THP is off: fine
}

MappedMemory::~MappedMemory() {
  if (data_ != nullptr) ::munmap(data_, bytes_);
}

std::string_view MappedArena::Copy(std::string_view bytes) {
  if (chunks_.empty() || used_ + bytes.size() > chunks_.back().size()) {
    chunks_.emplace_back(std::max(chunk_bytes_, bytes.size()), huge_);
    used_ = 0;
  }
  char* to = chunks_.back().data() + used_;
  bytes.copy(to, bytes.size());
  used_ += bytes.size();
  return std::string_view(to, bytes.size());
}

}  // namespace kt::core
