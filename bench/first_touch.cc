// first_touch: what the machine charges for memory a process writes for the first time, the cost
// that dominates kubetaint's start-up (it holds ~800 MB at 150,000 pods, nearly all of it new).
// Maps fresh anonymous memory and writes one byte per 4 KB page, with and without transparent
// huge pages, from one thread and from two; then writes the same memory again. Each case maps
// its own memory and waits `--pause` seconds first, so that a hypervisor that takes freed memory
// back (free page reporting) has done so, as between two runs of a server.
//
//   build/bench/first_touch [--mb 400] [--runs 3] [--pause 3]
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

double Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

void Touch(char* p, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += 4096) p[i] = 1;
}

// Milliseconds to first-touch `mb` MB split over `threads` threads; `again`: the second pass.
double Run(std::size_t mb, bool huge, int threads, double* again) {
  const std::size_t bytes = mb << 20;
  void* mapped = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  char* p = static_cast<char*>(mapped);
  (void)::madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  const std::size_t share = bytes / static_cast<std::size_t>(threads);
  auto pass = [&] {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int t = 1; t < threads; ++t) {
      workers.emplace_back(Touch, p + static_cast<std::size_t>(t) * share, share);
    }
    Touch(p, share);
    for (std::thread& w : workers) w.join();
    return Ms(std::chrono::steady_clock::now() - start);
  };
  const double first = pass();
  *again = pass();
  ::munmap(p, bytes);
  return first;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t mb = 400;
  int runs = 3;
  double pause = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--mb") {
      mb = std::strtoul(argv[i + 1], nullptr, 10);
    } else if (flag == "--runs") {
      runs = std::atoi(argv[i + 1]);
    } else if (flag == "--pause") {
      pause = std::atof(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: first_touch [--mb 400] [--runs 3] [--pause 3]\n");
      return 2;
    }
  }
  if (mb == 0 || runs < 1 || pause < 0) {
    std::fprintf(stderr, "first_touch: --mb and --runs must be positive, --pause not negative\n");
    return 2;
  }
  std::printf("first touch of %zu MB of fresh anonymous memory, median of %d runs\n", mb, runs);
  for (const bool huge : {false, true}) {
    for (const int threads : {1, 2}) {
      std::vector<double> first, again;
      for (int r = 0; r < runs; ++r) {
        std::this_thread::sleep_for(std::chrono::duration<double>(pause));
        double a = 0;
        first.push_back(Run(mb, huge, threads, &a));
        again.push_back(a);
      }
      std::sort(first.begin(), first.end());
      std::sort(again.begin(), again.end());
      const double f = first[first.size() / 2];
      std::printf("%s, %d thread%s: %.0f ms (%.2f ms per MB); written again: %.0f ms\n",
                  huge ? "2 MB pages" : "4 KB pages", threads, threads == 1 ? "" : "s", f,
                  f / static_cast<double>(mb), again[again.size() / 2]);
    }
  }
  return 0;
}
