// Decodes the objects the watch caches will hold while the store is still loading, so that
// start-up decodes on one core while it reads the file on the other, rather than one after the
// other.
//
//   auto pre = std::make_unique<Predecoder>();
//   sqlite.on_load = [p = pre.get()](const store::LoadedRow& row) { p->Loaded(row); };
//   auto store = store::OpenSqliteStore(sqlite);     // rows are decoded as they are read
//   pre->Finish();                                   // decodes what is left, on every core
//   registry.Start(pre.get());                       // the caches take what was decoded
//   pre.reset();
//
// The SQLite store reads its file newest first and hands over each current row (a live key's
// latest version) as it reads it, before the index is built; history stays on disk and is never
// handed over. So the worker decodes from the first row read, and decodes nothing twice. Take()
// is by revision and checks the key, so an object is used only for exactly the row the cache
// loads.
//
// Thread safety: Loaded() on the loading thread only; Finish() once, after the load, on any
// thread; Take() after Finish(), from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/mapped_memory.h"
#include "server/object.h"
#include "store/store.h"

namespace kt::server {

class Predecoder {
 public:
  // Rows handed to the worker at once: one lock and one wake-up per batch, not per row.
  static constexpr size_t kBatch = 1024;

  explicit Predecoder(size_t batch = kBatch);
  ~Predecoder();  // after Finish()
  Predecoder(const Predecoder&) = delete;
  Predecoder& operator=(const Predecoder&) = delete;

  // A current row the store read (store::SqliteOptions::on_load), in descending revision order.
  void Loaded(const store::LoadedRow& row);
  // The load is over: decodes what the worker has not reached, on this thread and the worker,
  // and stops the worker. Idempotent.
  void Finish();
  // The object decoded from the row at `revision` if it was handed over and has this key; null
  // otherwise (the caller decodes it itself).
  ObjectPtr Take(store::Revision revision, std::string_view key) const;

  // Objects decoded (for tests).
  size_t decoded() const { return decoded_.load(); }

 private:
  struct Entry {
    const ResourceInfo* info;
    std::string_view key;  // in keys_ (until Finish)
    store::Bytes value;    // until decoded
    store::Revision revision;
    store::Revision create_revision;
    ObjectPtr object;  // set by whoever claimed it; null if it did not decode
  };

  void Run();
  void Decode(Entry& e);
  // Claims the next published entry below `limit` (called under mu_); null when none is left.
  Entry* Claim(size_t limit);
  // Hands the loader's new entries to the decoders.
  void Publish();
  // The i-th entry's place in the chunks.
  Entry* EntryAt(size_t i) const;

  // Entries and key bytes live in large mappings (core::MappedMemory), allocated as the load
  // goes and freed whole at the end: no allocation per row, and the memory goes back to the
  // system afterwards rather than staying behind as holes among the index's allocations.
  static constexpr size_t kEntriesPerChunk = 8192;
  std::vector<core::MappedMemory> entry_chunks_;  // loader thread only
  size_t entry_count_ = 0;                        // loader thread only; constructed entries
  core::MappedArena keys_;                        // loader thread only

  // The loader thread's until Finish, read-only after: every entry, in descending revision
  // order (Take searches it).
  std::vector<Entry*> entries_;
  std::vector<Entry*> unpublished_;
  const ResourceInfo* last_info_ = nullptr;  // the resource of the last row kept

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Entry*> published_;  // guarded by mu_, in revision order
  size_t next_ = 0;                // guarded by mu_: the next published entry to claim
  bool done_ = false;              // guarded by mu_: the load is over
  bool finished_ = false;
  const size_t batch_;
  std::atomic<size_t> decoded_{0};
  std::thread worker_;
};

}  // namespace kt::server
