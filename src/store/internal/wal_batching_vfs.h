// WalBatchingVfs: an SQLite VFS over another that gathers a transaction's writes to the WAL file
// in memory and hands them to the file in one write, when SQLite syncs the WAL.
//
// SQLite writes each WAL frame in two writes, its 24-byte header and then its page, so a commit
// of a few pages costs a dozen pwrite calls, all on the committer's critical path (on the
// 2-core machine of README "Benchmarks", each cost 3-5 µs). Gathered, a commit costs one.
//
// Nothing changes for durability: the bytes reach the file before the sync that makes them
// durable, and a write is acknowledged only after that sync. A process that dies with bytes
// still gathered loses frames that were never synced, which SQLite's recovery ignores anyway
// (like frames a crash cut short). Gathered bytes go to the file first whenever SQLite does
// anything else with the WAL that could see them: reads, maps, size, truncation, file controls,
// close. A write that does not continue or overwrite the gathered run sends the run first. An
// error writing them is reported by the call that sent them (a sync, a read...), so a commit
// whose frames could not be written fails.
//
// Only files opened as WAL are gathered; every other file and call goes straight to the base.
#pragma once

#include <string>

#include "core/status.h"

namespace kt::store::internal {

// Registers (once per base, for the life of the process) a batching VFS over the VFS named
// `base` ("" = SQLite's default) and returns its name, for sqlite3_open_v2. kInternal if `base`
// is not a registered VFS.
Result<std::string> WalBatchingVfs(const std::string& base);

}  // namespace kt::store::internal
