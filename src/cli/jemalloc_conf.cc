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
// thp:always,metadata_thp:always: jemalloc asks for transparent huge pages
// (madvise(MADV_HUGEPAGE)) for its heap and its metadata, so that where the kernel allows them
// (transparent_hugepage "madvise" or "always"), memory that grows comes in 2 MB faults instead of
// 4 KB ones. Start-up fills most of the server's memory at once: on copies of one data dir
// (150,000 pods after a burst), alternated, it took a third less CPU.
//
// background_thread:true: jemalloc's own threads return freed memory to the system as its decay
// allows, instead of the threads that allocate; and a thread's exit that leaves an arena with no
// thread no longer forces a purge of all its freed memory (jemalloc's tcache_destroy). Purges
// (madvise(MADV_DONTNEED)) split the huge pages they fall in, whose pages then come back 4 KB
// fault by 4 KB fault. In scheduler_perf, whose runs each start and stop a cluster's threads,
// runs with 7,800-17,000 such faults made 18,000-23,000 pods/s against 24,000-41,000 for the
// others; with background threads no run of six alternated invocations had more than 1,600
// faults, and their medians were 39,300-43,200 pods/s against 33,600-42,200 (README "Allocator").
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's.
const char* malloc_conf =
    "percpu_arena:percpu,thp:always,metadata_thp:always,background_thread:true";
}
