// Clang thread-safety annotations (as in leveldb's port/thread_annotations.h). They document
// which mutex guards which member; under clang with an annotated standard library,
// -Wthread-safety checks them. Under g++ they expand to nothing.
//
// Internal to src/store: other modules must not include this header (it may move to src/core).
#pragma once

#if defined(__clang__)
#define KT_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define KT_THREAD_ANNOTATION(x)
#endif

// The member is read and written only with `mu` held.
#define KT_GUARDED_BY(mu) KT_THREAD_ANNOTATION(guarded_by(mu))
// The function must be called with `mu` held (exclusively).
#define KT_EXCLUSIVE_LOCKS_REQUIRED(...) KT_THREAD_ANNOTATION(exclusive_locks_required(__VA_ARGS__))
// The function must be called with `mu` held, shared or exclusive.
#define KT_SHARED_LOCKS_REQUIRED(...) KT_THREAD_ANNOTATION(shared_locks_required(__VA_ARGS__))
// The function acquires `mu` itself, so it must be called without it.
#define KT_LOCKS_EXCLUDED(...) KT_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
