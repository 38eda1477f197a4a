// The SQLite Store: kubetaint's default, durable, single-server backend.
//
// All data is also held in memory (the same MVCC index as the memory store), so reads and
// watches never touch the database; the database is the durable log. One committer thread
// takes every pending write, checks each in order against the current state (so batching
// never changes the outcome), writes the batch in one transaction, syncs it
// (journal_mode=WAL, synchronous=FULL), applies it to memory, then acknowledges each write.
// An acknowledged write survives kill -9 and power loss; a crash loses at most the batch
// being committed, which nobody was told about. The layout of the database is documented in
// src/store/README.md.
//
// The database file is locked for the life of the store (locking_mode=EXCLUSIVE): a second
// process opening the same file gets kUnavailable instead of silently diverging.
//
// Thread safety, ownership and callbacks: as for every Store (store.h). Write callbacks run on
// the committer thread.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "core/status.h"
#include "store/store.h"

namespace kt::store {

struct SqliteOptions {
  // The database file; created (with its schema) if it does not exist.
  std::string path;
  CompactionOptions compaction;
  // Upper bound on writes committed in one transaction, which bounds a batch's latency.
  std::size_t max_batch = 10000;
  // Superseded rows deleted per transaction after a compaction, so that a large compaction
  // never holds up writers for long.
  std::size_t compaction_rows_per_txn = 2000;
  // The page size of a new file (an existing file keeps its own). 16 KB rather than SQLite's
  // 4 KB: objects of 2-10 KB then pack several to a page instead of one per page with the
  // rest wasted or spilled to overflow pages (150,000 pods of 2 KB: 350 MB on disk, not 615).
  int page_size = 16384;
  // The SQLite VFS to use; empty = the default. Tests inject I/O faults through one.
  std::string vfs;
  // Gathers each commit's writes to the WAL into one write at its sync (WalBatchingVfs, over
  // `vfs`): a commit of a few pages then costs one pwrite instead of two per page.
  bool batch_wal_writes = true;
  // Sees each current row (a live key's latest version) as start-up reads the file, newest
  // first, on the loading thread and before the rows load into memory: so that work on the
  // values (decoding them for the caches) can begin while the rest is still read. Must not call
  // into the store. A file that turns out to be corrupt later in the load fails the open.
  std::function<void(const LoadedRow&)> on_load;
};

// Opens (or creates) the store at options.path and loads it into memory. Revisions continue
// from the last one written. kUnavailable if another process holds the file; kInternal if the
// file cannot be opened or is corrupt.
Result<std::unique_ptr<Store>> OpenSqliteStore(const SqliteOptions& options);

}  // namespace kt::store
