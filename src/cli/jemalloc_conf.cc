// jemalloc's options, for every program linked with jemalloc (kubetaint_link_jemalloc in
// CMakeLists.txt: `kubetaint`, and scheduler_perf, which measures the scheduler under the
// allocator it ships with). MALLOC_CONF in the environment overrides them.
//
// percpu_arena:percpu: one arena per CPU instead of one per thread (of four per CPU). A pod's
// versions are written by one thread (the HTTP thread, a controller, the store's watch thread)
// and freed by another; with an arena per thread the freed memory stayed in the arena of a
// thread that no longer allocated, was purged (madvise, with a TLB shootdown on the other core),
// and the writing thread's arena took fresh pages one fault at a time: in the mass eviction,
// 240,000 page faults and a fifth of the server's CPU in the kernel. With the threads that share
// a core sharing its arena, the faults halve and the server's CPU falls by a quarter (README
// "Allocator").
//
// No thp: the heap's page size is chosen at run time (ChooseHeapPages, below; README "Heap
// pages"), as what it pays off depends on the machine.
//
// background_thread:true: jemalloc's own threads return freed memory to the system as its decay
// allows, instead of the threads that allocate; and a thread's exit that leaves an arena with no
// thread no longer forces a purge of all its freed memory (jemalloc's tcache_destroy). Purges
// (madvise(MADV_DONTNEED)) split the huge pages they fall in, whose pages then come back 4 KB
// fault by 4 KB fault. In scheduler_perf, whose runs each start and stop a cluster's threads,
// runs with 7,800-17,000 such faults made 18,000-23,000 pods/s against 24,000-41,000 for the
// others; with background threads no run of six alternated invocations had more than 1,600
// faults, and their medians were 39,300-43,200 pods/s against 33,600-42,200 (README "Allocator").
#include <jemalloc/jemalloc.h>
#include <sys/mman.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "cli/heap_pages.h"

extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's.
const char* malloc_conf = "percpu_arena:percpu,background_thread:true";
}

namespace kt::cli {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kHugePage = size_t{2} << 20;

double ThreadCpuMicros() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

// What a fault of a fresh 4 KB page costs, in microseconds of this thread's CPU: 512 of them, in
// 2 MB that the kernel is told not to back with a huge page. -1 when the memory cannot be mapped.
double MicrosPerFault() {
  void* p = mmap(nullptr, kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return -1;
  madvise(p, kHugePage, MADV_NOHUGEPAGE);
  volatile char* bytes = static_cast<char*>(p);
  const double t0 = ThreadCpuMicros();
  for (size_t i = 0; i < kHugePage; i += kPage) bytes[i] = 1;
  const double t1 = ThreadCpuMicros();
  munmap(p, kHugePage);
  return (t1 - t0) / static_cast<double>(kHugePage / kPage);
}

// jemalloc's own extent hooks (those of arena 0), and a copy whose alloc then asks for huge pages.
extent_hooks_t* g_jemalloc_hooks = nullptr;
extent_hooks_t g_huge_hooks;

void* AllocHuge(extent_hooks_t*, void* new_addr, size_t size, size_t alignment, bool* zero,
                bool* commit, unsigned arena) {
  void* p =
      g_jemalloc_hooks->alloc(g_jemalloc_hooks, new_addr, size, alignment, zero, commit, arena);
  if (p != nullptr) madvise(p, size, MADV_HUGEPAGE);  // extents are page aligned
  return p;
}

// Installs the huge-page hooks on every arena that has jemalloc's own; an automatic arena not
// made yet (one per CPU, made as a thread first runs there) is made with them. The arena of
// allocations of 8 MB and more is made with jemalloc's hooks when first used, and keeps them.
bool InstallHugeHooks() {
  size_t len = sizeof(g_jemalloc_hooks);
  if (mallctl("arena.0.extent_hooks", &g_jemalloc_hooks, &len, nullptr, 0) != 0 ||
      g_jemalloc_hooks == nullptr || g_jemalloc_hooks->alloc == nullptr) {
    return false;
  }
  g_huge_hooks = *g_jemalloc_hooks;
  g_huge_hooks.alloc = AllocHuge;
  unsigned narenas = 0;
  len = sizeof(narenas);
  if (mallctl("arenas.narenas", &narenas, &len, nullptr, 0) != 0) return false;
  bool any = false;
  for (unsigned i = 0; i < narenas; ++i) {
    const std::string name = "arena." + std::to_string(i) + ".extent_hooks";
    extent_hooks_t* old = nullptr;
    len = sizeof(old);
    if (mallctl(name.c_str(), &old, &len, nullptr, 0) != 0 || old != g_jemalloc_hooks) continue;
    extent_hooks_t* ours = &g_huge_hooks;
    if (mallctl(name.c_str(), nullptr, nullptr, &ours, sizeof(ours)) == 0) any = true;
  }
  return any;
}

}  // namespace

std::string ChooseHeapPages(std::string_view mode) {
  if (const char* conf = std::getenv("MALLOC_CONF");
      conf != nullptr && std::strstr(conf, "thp:") != nullptr) {
    return "heap pages as MALLOC_CONF says";
  }
  if (mode == "4k") return "heap on 4 KB pages (--heap-pages=4k)";
  std::string measured = " (--heap-pages=2m)";
  if (mode == "auto") {
    const double micros = MicrosPerFault();
    char line[96];
    std::snprintf(line, sizeof(line), ": a 4 KB page fault costs %.1f us (--heap-pages=auto)",
                  micros);
    measured = line;
    if (micros < kHugePagesFromMicrosPerFault) return "heap on 4 KB pages" + measured;
  }
  if (!InstallHugeHooks()) return "heap on 4 KB pages: jemalloc's extent hooks could not be set";
  return "heap on 2 MB pages" + measured;
}

}  // namespace kt::cli
