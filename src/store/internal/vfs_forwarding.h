// Building blocks for an SQLite VFS that wraps another (WalBatchingVfs, the tests' hooked VFS):
// the file methods and VFS functions that only forward to the base.
//
// The wrapper's sqlite3_file is its own struct followed by the base's file in one allocation;
// `Real` maps the one to the other. The VFS's pAppData is the base sqlite3_vfs.
#pragma once

#include <sqlite3.h>

namespace kt::store::internal {

template <sqlite3_file* (*Real)(sqlite3_file*)>
struct ForwardFile {
  static int Close(sqlite3_file* f) { return Real(f)->pMethods->xClose(Real(f)); }
  static int Read(sqlite3_file* f, void* buf, int n, sqlite3_int64 off) {
    return Real(f)->pMethods->xRead(Real(f), buf, n, off);
  }
  static int Write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 off) {
    return Real(f)->pMethods->xWrite(Real(f), buf, n, off);
  }
  static int Truncate(sqlite3_file* f, sqlite3_int64 size) {
    return Real(f)->pMethods->xTruncate(Real(f), size);
  }
  static int Sync(sqlite3_file* f, int flags) { return Real(f)->pMethods->xSync(Real(f), flags); }
  static int FileSize(sqlite3_file* f, sqlite3_int64* size) {
    return Real(f)->pMethods->xFileSize(Real(f), size);
  }
  static int Lock(sqlite3_file* f, int lock) { return Real(f)->pMethods->xLock(Real(f), lock); }
  static int Unlock(sqlite3_file* f, int lock) { return Real(f)->pMethods->xUnlock(Real(f), lock); }
  static int CheckReservedLock(sqlite3_file* f, int* out) {
    return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
  }
  static int FileControl(sqlite3_file* f, int op, void* arg) {
    return Real(f)->pMethods->xFileControl(Real(f), op, arg);
  }
  static int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
  static int DeviceCharacteristics(sqlite3_file* f) {
    return Real(f)->pMethods->xDeviceCharacteristics(Real(f));
  }
  static int ShmMap(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
    return Real(f)->pMethods->xShmMap(Real(f), page, size, extend, out);
  }
  static int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
    return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
  }
  static void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
  static int ShmUnmap(sqlite3_file* f, int del) {
    return Real(f)->pMethods->xShmUnmap(Real(f), del);
  }
  static int Fetch(sqlite3_file* f, sqlite3_int64 off, int n, void** out) {
    return Real(f)->pMethods->xFetch(Real(f), off, n, out);
  }
  static int Unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
    return Real(f)->pMethods->xUnfetch(Real(f), off, p);
  }

  // Every method forwarding: a wrapper starts from this and replaces what it changes.
  static constexpr sqlite3_io_methods Methods() {
    return sqlite3_io_methods{3,
                              Close,
                              Read,
                              Write,
                              Truncate,
                              Sync,
                              FileSize,
                              Lock,
                              Unlock,
                              CheckReservedLock,
                              FileControl,
                              SectorSize,
                              DeviceCharacteristics,
                              ShmMap,
                              ShmLock,
                              ShmBarrier,
                              ShmUnmap,
                              Fetch,
                              Unfetch};
  }
};

// A copy of `base` named `name`, whose files are `file_size` bytes of the wrapper's own followed
// by the base's, opened by `open`. The functions that take no file (dlopen, randomness, sleep,
// time, system calls) stay the base's own; those that take a name forward to the base.
inline sqlite3_vfs WrappingVfs(sqlite3_vfs* base, const char* name, int file_size,
                               int (*open)(sqlite3_vfs*, const char*, sqlite3_file*, int, int*)) {
  sqlite3_vfs vfs = *base;
  vfs.pNext = nullptr;
  vfs.zName = name;
  vfs.szOsFile = file_size + base->szOsFile;
  vfs.pAppData = base;
  vfs.xOpen = open;
  vfs.xDelete = [](sqlite3_vfs* v, const char* path, int sync) {
    sqlite3_vfs* b = static_cast<sqlite3_vfs*>(v->pAppData);
    return b->xDelete(b, path, sync);
  };
  vfs.xAccess = [](sqlite3_vfs* v, const char* path, int flags, int* out) {
    sqlite3_vfs* b = static_cast<sqlite3_vfs*>(v->pAppData);
    return b->xAccess(b, path, flags, out);
  };
  vfs.xFullPathname = [](sqlite3_vfs* v, const char* path, int n, char* out) {
    sqlite3_vfs* b = static_cast<sqlite3_vfs*>(v->pAppData);
    return b->xFullPathname(b, path, n, out);
  };
  return vfs;
}

}  // namespace kt::store::internal
