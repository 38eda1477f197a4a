// Store micro-benchmarks: durable creates/s on SQLite with 1 vs 16 writer threads (the effect
// of group commit), pipelined async creates, Get latency, and start-up with 150,000 objects
// of 2 KB on disk.
//
//   build/bench/store_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// The SQLite files live in a fresh directory under $TMPDIR (or /tmp), removed afterwards.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "store/sqlite_store.h"
#include "store/store.h"

namespace kt::store {
namespace {

std::string MakeTempDir() {
  const char* base = getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/kt-store-bench-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  return pattern;
}

// A ~2 KB pod-like JSON value, different per `seed`.
Bytes PodValue(std::uint64_t seed, std::size_t size = 2048) {
  std::string v = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p)" +
                  std::to_string(seed) + R"(","namespace":"default"},"spec":{"x":")";
  std::mt19937_64 rng(seed);
  while (v.size() < size - 4) v += static_cast<char>('a' + rng() % 26);
  v += "\"}}";
  return MakeBytes(std::move(v));
}

std::unique_ptr<Store> OpenOrDie(const std::string& path) {
  SqliteOptions options;
  options.path = path;
  options.compaction.interval = std::chrono::milliseconds(0);
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(options);
  if (!store) {
    std::fprintf(stderr, "open %s: %s\n", path.c_str(), store.error().ToString().c_str());
    std::abort();
  }
  return std::move(*store);
}

// The directory of BM_SqliteOpen150k's database, built once per process; removed by main.
std::string g_open_dir;

// Shared by the threads of one run of a multi-threaded benchmark.
std::string g_dir;
std::unique_ptr<Store> g_store;

void SetUpSqlite(const benchmark::State&) {
  g_dir = MakeTempDir();
  g_store = OpenOrDie(g_dir + "/store.db");
}
void SetUpMemory(const benchmark::State&) { g_store = NewMemoryStore(); }
void TearDown(const benchmark::State&) {
  g_store.reset();
  if (!g_dir.empty()) std::filesystem::remove_all(g_dir);
  g_dir.clear();
}

// Synchronous creates: each thread waits for its write to be durable before the next, as an
// API server request handler would. With N threads, up to N writes share one fsync.
void BM_Create(benchmark::State& state) {
  const Bytes value = PodValue(state.thread_index());
  const std::string prefix = "/registry/pods/default/t" + std::to_string(state.thread_index());
  std::uint64_t i = 0;
  for (auto _ : state) {
    Result<WriteResult> w = g_store->Create(prefix + "-" + std::to_string(i++), value);
    if (!w) state.SkipWithError(w.error().ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Create)
    ->Name("BM_SqliteCreate")
    ->Setup(SetUpSqlite)
    ->Teardown(TearDown)
    ->Threads(1)
    ->Threads(16)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Create)
    ->Name("BM_MemoryCreate")
    ->Setup(SetUpMemory)
    ->Teardown(TearDown)
    ->Threads(1)
    ->Threads(16)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// One thread keeping `window` asynchronous creates in flight: the event-loop style of use.
void BM_SqliteCreatePipelined(benchmark::State& state) {
  const auto window = static_cast<int>(state.range(0));
  const Bytes value = PodValue(1);
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  std::atomic<bool> failed{false};
  std::uint64_t i = 0;
  for (auto _ : state) {
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return in_flight < window; });
      ++in_flight;
    }
    g_store->CreateAsync("/registry/pods/default/p" + std::to_string(i++), value,
                         [&](Result<WriteResult> w) {
                           if (!w) failed = true;
                           std::lock_guard lock(mu);
                           --in_flight;
                           cv.notify_one();
                         });
  }
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return in_flight == 0; });
  if (failed) state.SkipWithError("a write failed");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SqliteCreatePipelined)
    ->Setup(SetUpSqlite)
    ->Teardown(TearDown)
    ->Arg(256)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// Get of a random key among 150,000: served from memory by both backends.
void BM_Get(benchmark::State& state) {
  constexpr int kKeys = 150'000;
  static std::unique_ptr<Store> store = [] {
    std::unique_ptr<Store> s = NewMemoryStore();
    const Bytes value = PodValue(1);
    for (int i = 0; i < kKeys; ++i) {
      (void)s->Create("/registry/pods/ns" + std::to_string(i % 100) + "/pod-" + std::to_string(i),
                      value);
    }
    return s;
  }();
  std::vector<std::string> keys;
  std::mt19937 rng(42);
  for (int i = 0; i < 4096; ++i) {
    const int k = static_cast<int>(rng() % kKeys);
    keys.push_back("/registry/pods/ns" + std::to_string(k % 100) + "/pod-" + std::to_string(k));
  }
  std::size_t i = 0;
  for (auto _ : state) {
    Result<KeyValue> kv = store->Get(keys[i++ & 4095]);
    benchmark::DoNotOptimize(kv);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Get)->Threads(1)->Threads(2)->UseRealTime();

// Start-up: open a SQLite store holding 150,000 objects of 2 KB (300 MB), i.e. load every row
// into memory. The file is written once per process, with pipelined creates.
// Heap bytes in use (glibc): what the loaded store holds, unlike RSS, which keeps memory a
// previous run freed.
double HeapMb() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<double>(m.uordblks + m.hblkhd) / (1024.0 * 1024.0);
}

void BM_SqliteOpen150k(benchmark::State& state) {
  constexpr int kObjects = 150'000;
  static const std::string path = [] {
    g_open_dir = MakeTempDir();
    const std::string p = g_open_dir + "/store.db";
    std::unique_ptr<Store> store = OpenOrDie(p);
    std::mutex mu;
    std::condition_variable cv;
    int in_flight = 0;
    for (int i = 0; i < kObjects; ++i) {
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return in_flight < 1024; });
        ++in_flight;
      }
      store->CreateAsync(
          "/registry/pods/ns" + std::to_string(i % 100) + "/pod-" + std::to_string(i), PodValue(i),
          [&](Result<WriteResult> w) {
            if (!w) std::abort();
            std::lock_guard lock(mu);
            --in_flight;
            cv.notify_one();
          });
    }
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return in_flight == 0; });
    return p;
  }();
  for (auto _ : state) {
    const double heap_before = HeapMb();
    const auto start = std::chrono::steady_clock::now();
    std::unique_ptr<Store> store = OpenOrDie(path);
    const auto end = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
    state.counters["objects"] = static_cast<double>(store->CurrentRevision());
    state.counters["heap_MB"] = HeapMb() - heap_before;
    state.PauseTiming();
    store.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_SqliteOpen150k)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kt::store

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // The 150k-object database, if it was built.
  if (!kt::store::g_open_dir.empty()) std::filesystem::remove_all(kt::store::g_open_dir);
  return 0;
}
