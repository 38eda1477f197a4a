// Whether the heap of a long-running program (`kubetaint serve`, scheduler_perf) asks the kernel
// for transparent huge pages. Defined in src/cli/jemalloc_conf.cc, so only in programs linked
// with jemalloc (kubetaint_link_jemalloc in CMakeLists.txt, which defines KUBETAINT_JEMALLOC).
//
// Huge pages pay off where a page fault is dear: memory that grows then comes 2 MB per fault
// instead of 4 KB. Where faults are cheap they cost more than they save: a 2 MB fault zeroes 2 MB
// at once on the faulting thread, and under a hypervisor that takes freed memory back (free page
// reporting takes whole free 2 MB blocks, the ones huge pages come from) that block must be backed
// again first. So the choice is made by measuring: 512 faults of fresh 4 KB pages, timed on the
// thread's CPU clock (README "Heap pages").
#pragma once

#include <string>
#include <string_view>

namespace kt::cli {

// The cost of a 4 KB page fault, in microseconds, from which `auto` takes huge pages.
inline constexpr double kHugePagesFromMicrosPerFault = 6.0;

// "" for a valid `--heap-pages` value, else the flag's error message.
inline std::string HeapPagesModeError(std::string_view mode) {
  if (mode == "auto" || mode == "4k" || mode == "2m") return "";
  return "--heap-pages: must be auto, 4k or 2m, not \"" + std::string(mode) + "\"";
}

// Chooses and applies the page size for memory the heap maps from now on, and returns one line
// for the log saying what was chosen. `mode` is a valid `--heap-pages` value: "auto" measures;
// "4k" and "2m" choose without measuring. With `thp:` in MALLOC_CONF, jemalloc was told already
// and nothing is changed.
std::string ChooseHeapPages(std::string_view mode);

}  // namespace kt::cli
