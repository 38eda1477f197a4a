// RapidJSON's configuration, read before any of its headers: CMakeLists.txt passes it to every
// compilation with -include.
//
// The memory pool of a Document that brings its own (every `rapidjson::Document doc;`) takes its
// memory in chunks of kJsonPoolChunk bytes instead of RapidJSON's 64 KiB. The documents parsed
// per request are small (a pod is 1-2 KB of JSON, a binding a few hundred bytes), yet each took
// an 80 KiB block: beyond the allocator's thread caches, so every parse locked an arena and
// carved an extent, whose fresh pages the kernel then zeroed. Chunks of 4 KiB (header included)
// come from the thread caches and are reused warm; a larger document takes more of them. A pool
// built with its own chunk size or buffer is unchanged.
#pragma once

#include <cstddef>
#include <type_traits>

namespace rapidjson {
class CrtAllocator;
template <typename BaseAllocator>
class MemoryPoolAllocator;
}  // namespace rapidjson

namespace kt::api {

// The pool's chunk capacity: 4 KiB with its header (three words).
inline constexpr size_t kJsonPoolChunk = 4096 - 3 * sizeof(void*);

// What RAPIDJSON_NEW(T()) makes: a T, or a memory pool with kJsonPoolChunk chunks.
template <class T>
T* NewRapidJsonObject() {
  if constexpr (std::is_same_v<T, rapidjson::MemoryPoolAllocator<rapidjson::CrtAllocator>>) {
    return new T(kJsonPoolChunk);
  } else {
    return new T();
  }
}

}  // namespace kt::api

#define RAPIDJSON_NEW(x) ::kt::api::NewRapidJsonObject<decltype(x)>()
