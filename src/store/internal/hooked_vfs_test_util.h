// For the store's tests: an SQLite VFS that forwards to the default one, with hooks to see and
// fail what reaches the disk. Its syncs fail (as fsync does on an I/O error) while `fail_sync`
// is set, its writes to WAL files while `fail_wal_writes` is; every write is recorded while
// `record` is set.
//
//   const char* vfs = testing::RegisterHookedVfs();   // then SqliteOptions::vfs = vfs, or
//   testing::Hooks().fail_sync = true;                // sqlite3_vfs_find(vfs)
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "store/internal/vfs_forwarding.h"

namespace kt::store::testing {

struct VfsWrite {
  bool wal;  // to a file opened as a WAL
  sqlite3_int64 offset;
  int size;
};

struct VfsHooks {
  std::atomic<bool> fail_sync{false};
  std::atomic<bool> fail_wal_writes{false};
  std::atomic<bool> record{false};
  std::mutex mu;
  std::vector<VfsWrite> writes;  // guarded by mu

  std::vector<VfsWrite> TakeWrites() {
    std::lock_guard lock(mu);
    return std::exchange(writes, {});
  }
};

inline VfsHooks& Hooks() {
  static VfsHooks hooks;
  return hooks;
}

namespace hooked_vfs {

struct File {
  sqlite3_file base;
  bool wal;
  // The default VFS's file follows this struct (szOsFile covers both).
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};
static_assert(sizeof(File) % 8 == 0);

inline sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<File*>(f)->real(); }

using Forward = internal::ForwardFile<Real>;

inline int Write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 off) {
  const bool wal = reinterpret_cast<File*>(f)->wal;
  if (Hooks().record) {
    std::lock_guard lock(Hooks().mu);
    Hooks().writes.push_back(VfsWrite{wal, off, n});
  }
  if (wal && Hooks().fail_wal_writes) return SQLITE_IOERR_WRITE;
  return Forward::Write(f, buf, n, off);
}

inline int Sync(sqlite3_file* f, int flags) {
  if (Hooks().fail_sync) return SQLITE_IOERR_FSYNC;
  return Forward::Sync(f, flags);
}

constexpr sqlite3_io_methods MakeMethods() {
  sqlite3_io_methods m = Forward::Methods();
  m.xWrite = Write;
  m.xSync = Sync;
  return m;
}
inline constexpr sqlite3_io_methods kMethods = MakeMethods();

inline int Open(sqlite3_vfs* v, const char* name, sqlite3_file* f, int flags, int* out) {
  sqlite3_vfs* r = static_cast<sqlite3_vfs*>(v->pAppData);
  reinterpret_cast<File*>(f)->wal = (flags & SQLITE_OPEN_WAL) != 0;
  const int rc = r->xOpen(r, name, Real(f), flags, out);
  f->pMethods = Real(f)->pMethods != nullptr ? &kMethods : nullptr;
  return rc;
}

}  // namespace hooked_vfs

inline constexpr const char* kHookedVfs = "kt-hooked";

// Registers the VFS (once) and returns its name.
inline const char* RegisterHookedVfs() {
  static sqlite3_vfs vfs;
  static std::once_flag once;
  std::call_once(once, [] {
    vfs = internal::WrappingVfs(sqlite3_vfs_find(nullptr), kHookedVfs,
                                static_cast<int>(sizeof(hooked_vfs::File)), hooked_vfs::Open);
    sqlite3_vfs_register(&vfs, 0);
  });
  return kHookedVfs;
}

}  // namespace kt::store::testing
