#include "store/internal/wal_batching_vfs.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "store/internal/vfs_forwarding.h"

namespace kt::store::internal {

namespace {

// A run of bytes gathered for the WAL: the file's bytes [start, start + bytes.size()) once sent.
struct Gathered {
  sqlite3_int64 start = 0;
  std::string bytes;
};

// Past this, a run is sent at once (a huge transaction need not be held in memory whole).
constexpr size_t kMaxGathered = 8 << 20;
// The most one write hands the base: SQLite's unix VFS takes writes under 128 KB only (it masks
// a write's length to 17 bits), as SQLite itself never writes more than a page at once.
constexpr size_t kMaxWrite = 120 << 10;

// Our sqlite3_file; the base VFS's file follows it in the same allocation (szOsFile covers
// both).
struct File {
  sqlite3_file base;
  Gathered* gathered;  // null: not a WAL file, everything goes straight through
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};
static_assert(sizeof(File) % 8 == 0, "the base's file must stay 8-byte aligned");

File* Of(sqlite3_file* f) { return reinterpret_cast<File*>(f); }
sqlite3_file* Real(sqlite3_file* f) { return Of(f)->real(); }
using Forward = ForwardFile<Real>;

// Sends the gathered run, if any, to the file. The run is dropped either way: after an error
// SQLite abandons the transaction and writes its frames again if it retries.
int Send(sqlite3_file* f) {
  Gathered* g = Of(f)->gathered;
  if (g == nullptr || g->bytes.empty()) return SQLITE_OK;
  sqlite3_file* real = Real(f);
  int rc = SQLITE_OK;
  for (size_t at = 0; at < g->bytes.size() && rc == SQLITE_OK; at += kMaxWrite) {
    const size_t n = std::min(kMaxWrite, g->bytes.size() - at);
    rc = real->pMethods->xWrite(real, g->bytes.data() + at, static_cast<int>(n),
                                g->start + static_cast<sqlite3_int64>(at));
  }
  g->bytes.clear();
  return rc;
}

int Write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 offset) {
  Gathered* g = Of(f)->gathered;
  if (g == nullptr) return Forward::Write(f, buf, n, offset);
  const auto* data = static_cast<const char*>(buf);
  const sqlite3_int64 end = g->start + static_cast<sqlite3_int64>(g->bytes.size());
  try {
    if (g->bytes.empty() || offset < g->start || offset > end) {
      // Neither continues nor overwrites the run: the run goes first, then a new one starts.
      if (int rc = Send(f); rc != SQLITE_OK) return rc;
      g->start = offset;
      g->bytes.assign(data, static_cast<size_t>(n));
    } else {
      // Within or right after the run (SQLite rewrites a frame of the same transaction).
      const size_t at = static_cast<size_t>(offset - g->start);
      const size_t overlap = std::min(g->bytes.size() - at, static_cast<size_t>(n));
      std::memcpy(g->bytes.data() + at, data, overlap);
      g->bytes.append(data + overlap, static_cast<size_t>(n) - overlap);
    }
  } catch (const std::bad_alloc&) {
    // No memory to gather into (nothing may throw through SQLite): the run as it stands, then
    // this write, straight to the file.
    if (int rc = Send(f); rc != SQLITE_OK) return rc;
    return Forward::Write(f, buf, n, offset);
  }
  return g->bytes.size() >= kMaxGathered ? Send(f) : SQLITE_OK;
}

// Sends the run first, then does what the base does.
template <auto Method, typename... Args>
int AfterSending(sqlite3_file* f, Args... args) {
  if (int rc = Send(f); rc != SQLITE_OK) return rc;
  return Method(f, args...);
}

int Close(sqlite3_file* f) {
  const int sent = Send(f);
  delete Of(f)->gathered;
  Of(f)->gathered = nullptr;
  const int rc = Forward::Close(f);
  return sent != SQLITE_OK ? sent : rc;
}

constexpr sqlite3_io_methods MakeMethods() {
  sqlite3_io_methods m = Forward::Methods();
  m.xClose = Close;
  m.xRead = AfterSending<Forward::Read, void*, int, sqlite3_int64>;
  m.xWrite = Write;
  m.xTruncate = AfterSending<Forward::Truncate, sqlite3_int64>;
  m.xSync = AfterSending<Forward::Sync, int>;
  m.xFileSize = AfterSending<Forward::FileSize, sqlite3_int64*>;
  m.xFileControl = AfterSending<Forward::FileControl, int, void*>;
  m.xFetch = AfterSending<Forward::Fetch, sqlite3_int64, int, void**>;
  return m;
}
constexpr sqlite3_io_methods kMethods = MakeMethods();

// One registered VFS per base; registrations live as long as the process.
struct Registered {
  sqlite3_vfs vfs;
  std::string name;
};

int Open(sqlite3_vfs* vfs, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  sqlite3_vfs* base = static_cast<sqlite3_vfs*>(vfs->pAppData);
  Of(f)->gathered = nullptr;
  const int rc = base->xOpen(base, name, Real(f), flags, out_flags);
  if (Real(f)->pMethods == nullptr) {
    f->pMethods = nullptr;  // nothing to close
    return rc;
  }
  if ((flags & SQLITE_OPEN_WAL) != 0) Of(f)->gathered = new (std::nothrow) Gathered;
  // Without memory for the run, the file is used as the base's, write by write.
  f->pMethods = &kMethods;
  return rc;
}

}  // namespace

Result<std::string> WalBatchingVfs(const std::string& base_name) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Registered>> registered;
  std::lock_guard lock(mu);
  if (auto it = registered.find(base_name); it != registered.end()) return it->second->name;
  sqlite3_vfs* base = sqlite3_vfs_find(base_name.empty() ? nullptr : base_name.c_str());
  if (base == nullptr) return Err(Internal("sqlite: no VFS named \"" + base_name + "\""));
  auto r = std::make_unique<Registered>();
  r->name = "kt-wal-batching:" + std::string(base->zName);
  r->vfs = WrappingVfs(base, r->name.c_str(), static_cast<int>(sizeof(File)), Open);
  if (int rc = sqlite3_vfs_register(&r->vfs, /*makeDflt=*/0); rc != SQLITE_OK) {
    return Err(Internal("sqlite: cannot register the VFS " + r->name + ": " + sqlite3_errstr(rc)));
  }
  std::string name = r->name;
  registered.emplace(base_name, std::move(r));
  return name;
}

}  // namespace kt::store::internal
