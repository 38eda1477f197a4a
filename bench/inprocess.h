// Helpers of the in-process benchmark drivers (scheduler_perf, eviction_timers): flags, order
// statistics, the heap in use, CPU time by thread, and bulk pod creation through a Client.
#pragma once

#include <malloc.h>
#ifdef KUBETAINT_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"

namespace kt::bench {

// --name value pairs.
struct Flags {
  std::map<std::string, std::string> v;
  std::string Get(const std::string& k, const std::string& d) const {
    auto it = v.find(k);
    return it == v.end() ? d : it->second;
  }
  long Int(const std::string& k, long d) const {
    auto it = v.find(k);
    return it == v.end() ? d : std::strtol(it->second.c_str(), nullptr, 10);
  }
  static Flags Parse(int argc, char** argv) {
    Flags flags;
    for (int i = 1; i + 1 < argc; i += 2) {
      std::string k = argv[i];
      if (k.rfind("--", 0) == 0) k = k.substr(2);
      flags.v[k] = argv[i + 1];
    }
    return flags;
  }
};

inline double Median(std::vector<double> xs) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  return xs[xs.size() / 2];
}

inline double Percentile(std::vector<double>& xs, double p) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(xs.size() - 1) + 0.5);
  return xs[std::min(i, xs.size() - 1)];
}

// Heap bytes in use: jemalloc's allocated bytes in a program linked with it
// (kubetaint_link_jemalloc), else glibc's, every arena.
inline size_t HeapInUse() {
#ifdef KUBETAINT_JEMALLOC
  uint64_t epoch = 1;
  size_t len = sizeof(epoch);
  mallctl("epoch", &epoch, &len, &epoch, len);  // refreshes the statistics
  size_t allocated = 0;
  len = sizeof(allocated);
  if (mallctl("stats.allocated", &allocated, &len, nullptr, 0) != 0) return 0;
  return allocated;
#else
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
#endif
}

// As kubetaint's main does (src/cli/main.cc): keep freed heap memory rather than handing it back
// to the kernel page by page.
inline void TuneMalloc() {
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  mallopt(M_TOP_PAD, 16 << 20);
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
}

// CPU seconds used so far by this process's threads, summed by thread name.
inline std::map<std::string, double> ThreadCpu() {
  std::map<std::string, double> out;
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    std::FILE* f = std::fopen((e.path() / "stat").c_str(), "r");
    if (f == nullptr) continue;
    char buf[1024];
    const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    // pid (comm) state ... field 14 utime, 15 stime
    const char* open = std::strchr(buf, '(');
    const char* close = std::strrchr(buf, ')');
    if (open == nullptr || close == nullptr) continue;
    std::string comm(open + 1, close);
    unsigned long utime = 0, stime = 0;
    if (std::sscanf(close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
                    &stime) == 2) {
      out[comm] += static_cast<double>(utime + stime) / tick;
    }
  }
  return out;
}

// Context switches so far (voluntary and involuntary) of this process's threads, summed by
// thread name.
inline std::map<std::string, long> ThreadSwitches() {
  std::map<std::string, long> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    std::FILE* f = std::fopen((e.path() / "status").c_str(), "r");
    if (f == nullptr) continue;
    char line[256];
    std::string name;
    long switches = 0;
    while (std::fgets(line, sizeof(line), f) != nullptr) {
      long n = 0;
      if (std::strncmp(line, "Name:\t", 6) == 0) {
        name.assign(line + 6, std::strcspn(line + 6, "\n"));
      } else if (std::sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1 ||
                 std::sscanf(line, "nonvoluntary_ctxt_switches: %ld", &n) == 1) {
        switches += n;
      }
    }
    std::fclose(f);
    out[name] += switches;
  }
  return out;
}

// "name value, name value, ..." of the threads whose value grew by at least `min` between two
// samples, each growth written by `append(&out, growth)`.
template <class T, class Append>
std::string DeltaByThread(const std::map<std::string, T>& before,
                          const std::map<std::string, T>& after, T min, Append append) {
  std::string s;
  for (const auto& [name, v] : after) {
    auto b = before.find(name);
    const T d = v - (b == before.end() ? T{} : b->second);
    if (d < min) continue;
    s.append(s.empty() ? "" : ", ").append(name).append(" ");
    append(&s, d);
  }
  return s;
}

inline std::string CpuDelta(const std::map<std::string, double>& before,
                            const std::map<std::string, double>& after) {
  return DeltaByThread(before, after, 0.005, [](std::string* s, double d) {
    char part[32];
    std::snprintf(part, sizeof(part), "%.2f s", d);
    s->append(part);
  });
}

inline std::string SwitchDelta(const std::map<std::string, long>& before,
                               const std::map<std::string, long>& after) {
  return DeltaByThread(before, after, 10L,
                       [](std::string* s, long d) { s->append(std::to_string(d)); });
}

// Creates the pods `bodies` in `namespace_` through `client`, at most 64 in flight (SQLite
// completes asynchronously: like 64 connections); `created` gets each create's start time.
inline void CreatePods(client::Client& client, const std::string& namespace_,
                       const std::vector<std::string>& bodies,
                       std::vector<std::chrono::steady_clock::time_point>* created) {
  created->resize(bodies.size());
  std::atomic<size_t> pending{0};
  std::mutex mu;
  std::condition_variable cv;
  for (size_t i = 0; i < bodies.size(); ++i) {
    (*created)[i] = std::chrono::steady_clock::now();
    pending.fetch_add(1);
    client.Create(server::Resource::kPods, namespace_, bodies[i],
                  [&](server::ApiResult<store::Bytes> r) {
                    if (!r) std::fprintf(stderr, "create: %s\n", r.error().message.c_str());
                    if (pending.fetch_sub(1) == 1) {
                      std::lock_guard<std::mutex> lock(mu);
                      cv.notify_all();
                    }
                  });
    while (pending.load() > 64) std::this_thread::yield();
  }
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return pending.load() == 0; });
}

// Profiles of the measured window only: with KT_PERF_CTL naming the control FIFO of
// `perf record --control fifo:FIFO -D -1`, Enable and Disable start and stop its recording.
class PerfControl {
 public:
  PerfControl() {
    const char* path = std::getenv("KT_PERF_CTL");
    if (path != nullptr && *path != '\0') f_ = std::fopen(path, "w");
  }
  ~PerfControl() {
    if (f_ != nullptr) std::fclose(f_);
  }
  PerfControl(const PerfControl&) = delete;
  PerfControl& operator=(const PerfControl&) = delete;
  void Enable() { Send("enable\n"); }
  void Disable() { Send("disable\n"); }

 private:
  void Send(const char* command) {
    if (f_ == nullptr) return;
    std::fputs(command, f_);
    std::fflush(f_);
  }
  std::FILE* f_ = nullptr;
};

}  // namespace kt::bench
