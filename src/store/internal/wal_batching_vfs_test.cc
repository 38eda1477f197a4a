// WalBatchingVfs over the hooked VFS, which records every write that reaches the disk: a WAL
// file's writes wait in memory until something could see them, then go out as one contiguous
// write (in pieces under SQLite's 128 KB bound); other files are untouched; the bytes on disk
// are exactly what was written; a write that fails on the way out fails the call that sent it.
#include "store/internal/wal_batching_vfs.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "store/internal/hooked_vfs_test_util.h"
#include "store/store_test_util.h"

namespace kt::store::internal {
namespace {

using testing::Hooks;
using testing::TempDir;
using testing::VfsWrite;

std::string Bytes(size_t n, char seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + static_cast<char>(i % 251));
  return s;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// One file opened through the batching VFS over the hooked one, as SQLite opens a WAL (or, with
// `wal` false, a main database). Records the writes that reach the disk from the open on.
class VfsFile {
 public:
  VfsFile(const TempDir& dir, bool wal) {
    const Result<std::string> name = WalBatchingVfs(testing::RegisterHookedVfs());
    EXPECT_TRUE(name) << name.error().ToString();
    vfs_ = sqlite3_vfs_find(name->c_str());
    db_path_ = dir.File("t.db");
    std::ofstream(db_path_).put('\0');  // SQLite takes a WAL's mode from its database file
    filename_ = sqlite3_create_filename(db_path_.c_str(), (db_path_ + "-journal").c_str(),
                                        (db_path_ + "-wal").c_str(), 0, nullptr);
    path_ = wal ? db_path_ + "-wal" : db_path_;
    file_.reset(static_cast<sqlite3_file*>(sqlite3_malloc(vfs_->szOsFile)));
    std::memset(file_.get(), 0, static_cast<size_t>(vfs_->szOsFile));
    const int flags =
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | (wal ? SQLITE_OPEN_WAL : SQLITE_OPEN_MAIN_DB);
    const char* open_name = wal ? sqlite3_filename_wal(filename_) : filename_;
    int out = 0;
    Hooks().TakeWrites();
    Hooks().record = true;
    open_rc_ = vfs_->xOpen(vfs_, open_name, file_.get(), flags, &out);
  }
  ~VfsFile() {
    if (file_->pMethods != nullptr) file_->pMethods->xClose(file_.get());
    sqlite3_free_filename(filename_);
    Hooks().record = false;
    Hooks().fail_wal_writes = false;
  }

  int open_rc() const { return open_rc_; }
  int Write(const std::string& data, sqlite3_int64 offset) {
    return file_->pMethods->xWrite(file_.get(), data.data(), static_cast<int>(data.size()), offset);
  }
  int Read(std::string* data, size_t n, sqlite3_int64 offset) {
    data->assign(n, '\0');
    return file_->pMethods->xRead(file_.get(), data->data(), static_cast<int>(n), offset);
  }
  int Sync() { return file_->pMethods->xSync(file_.get(), SQLITE_SYNC_NORMAL); }
  std::string OnDisk() const { return ReadAll(path_); }

 private:
  struct Free {
    void operator()(sqlite3_file* f) const { sqlite3_free(f); }
  };
  sqlite3_vfs* vfs_ = nullptr;
  std::string db_path_;
  std::string path_;
  sqlite3_filename filename_ = nullptr;
  std::unique_ptr<sqlite3_file, Free> file_;
  int open_rc_ = SQLITE_ERROR;
};

TEST(WalBatchingVfsTest, ContiguousWalWritesReachTheDiskAsOneWriteAtTheSync) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  VfsFile f(dir, /*wal=*/true);
  ASSERT_EQ(f.open_rc(), SQLITE_OK);
  // What SQLite writes for two frames: the WAL header, then each frame's header and page.
  const std::string header = Bytes(32, 'h'), fh1 = Bytes(24, 'a'), page1 = Bytes(4096, 'b'),
                    fh2 = Bytes(24, 'c'), page2 = Bytes(4096, 'd');
  ASSERT_EQ(f.Write(header, 0), SQLITE_OK);
  ASSERT_EQ(f.Write(fh1, 32), SQLITE_OK);
  ASSERT_EQ(f.Write(page1, 56), SQLITE_OK);
  ASSERT_EQ(f.Write(fh2, 4152), SQLITE_OK);
  ASSERT_EQ(f.Write(page2, 4176), SQLITE_OK);
  EXPECT_TRUE(Hooks().TakeWrites().empty()) << "nothing reaches the disk before the sync";
  EXPECT_EQ(f.OnDisk(), "");

  ASSERT_EQ(f.Sync(), SQLITE_OK);
  const std::vector<VfsWrite> writes = Hooks().TakeWrites();
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_TRUE(writes[0].wal);
  EXPECT_EQ(writes[0].offset, 0);
  EXPECT_EQ(writes[0].size, 8272);
  EXPECT_EQ(f.OnDisk(), header + fh1 + page1 + fh2 + page2);
}

TEST(WalBatchingVfsTest, AWriteWithinTheRunOverwritesItAndOneBeyondExtendsIt) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  VfsFile f(dir, /*wal=*/true);
  ASSERT_EQ(f.open_rc(), SQLITE_OK);
  std::string expected = Bytes(1000, 'a');
  ASSERT_EQ(f.Write(expected, 0), SQLITE_OK);
  const std::string inside = Bytes(100, 'x');  // a frame rewritten in place
  ASSERT_EQ(f.Write(inside, 200), SQLITE_OK);
  expected.replace(200, 100, inside);
  const std::string across = Bytes(300, 'y');  // from inside the run past its end
  ASSERT_EQ(f.Write(across, 900), SQLITE_OK);
  expected.replace(900, 100, across.substr(0, 100));
  expected += across.substr(100);
  ASSERT_EQ(f.Sync(), SQLITE_OK);
  const std::vector<VfsWrite> writes = Hooks().TakeWrites();
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].size, 1200);
  EXPECT_EQ(f.OnDisk(), expected);
}

TEST(WalBatchingVfsTest, AWriteElsewhereSendsTheRunFirst) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  VfsFile f(dir, /*wal=*/true);
  ASSERT_EQ(f.open_rc(), SQLITE_OK);
  const std::string a = Bytes(5000, 'a'), b = Bytes(3000, 'b'), c = Bytes(100, 'c');
  ASSERT_EQ(f.Write(a, 0), SQLITE_OK);
  ASSERT_EQ(f.Write(b, 10000), SQLITE_OK);  // a gap: the first run goes out now
  std::vector<VfsWrite> writes = Hooks().TakeWrites();
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].offset, 0);
  EXPECT_EQ(writes[0].size, 5000);
  ASSERT_EQ(f.Write(c, 2000), SQLITE_OK);  // before the second run: it goes out now
  writes = Hooks().TakeWrites();
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].offset, 10000);
  ASSERT_EQ(f.Sync(), SQLITE_OK);
  writes = Hooks().TakeWrites();
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].offset, 2000);
  std::string expected = a;
  expected.replace(2000, 100, c);
  expected += std::string(5000, '\0') + b;
  EXPECT_EQ(f.OnDisk(), expected);
}

TEST(WalBatchingVfsTest, AReadSeesTheGatheredBytes) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  VfsFile f(dir, /*wal=*/true);
  ASSERT_EQ(f.open_rc(), SQLITE_OK);
  const std::string a = Bytes(6000, 'a');
  ASSERT_EQ(f.Write(a, 0), SQLITE_OK);
  std::string got;
  ASSERT_EQ(f.Read(&got, 1000, 4000), SQLITE_OK);
  EXPECT_EQ(got, a.substr(4000, 1000));
  EXPECT_EQ(Hooks().TakeWrites().size(), 1u);
  ASSERT_EQ(f.Sync(), SQLITE_OK);
  EXPECT_TRUE(Hooks().TakeWrites().empty()) << "the read sent everything";
}

TEST(WalBatchingVfsTest, ALongRunGoesOutInContiguousPiecesUnder128KB) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  VfsFile f(dir, /*wal=*/true);
  ASSERT_EQ(f.open_rc(), SQLITE_OK);
  std::string expected;
  for (int i = 0; i < 40; ++i) {  // 40 pages of 16 KB, each behind its frame header
    const std::string frame = Bytes(24, static_cast<char>('a' + i)) + Bytes(16384, 'p');
    ASSERT_EQ(f.Write(frame, static_cast<sqlite3_int64>(expected.size())), SQLITE_OK);
    expected += frame;
  }
  ASSERT_EQ(f.Sync(), SQLITE_OK);
  const std::vector<VfsWrite> writes = Hooks().TakeWrites();
  ASSERT_EQ(writes.size(), 6u);  // 656,320 bytes in pieces of 122,880
  sqlite3_int64 at = 0;
  for (const VfsWrite& w : writes) {
    EXPECT_EQ(w.offset, at);
    EXPECT_LT(w.size, 128 << 10);
    at += w.size;
  }
  EXPECT_EQ(at, static_cast<sqlite3_int64>(expected.size()));
  EXPECT_EQ(f.OnDisk(), expected);
}

TEST(WalBatchingVfsTest, AWriteThatFailsOnTheWayOutFailsTheSync) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  VfsFile f(dir, /*wal=*/true);
  ASSERT_EQ(f.open_rc(), SQLITE_OK);
  ASSERT_EQ(f.Write(Bytes(100, 'a'), 0), SQLITE_OK);
  Hooks().fail_wal_writes = true;
  EXPECT_EQ(f.Sync(), SQLITE_IOERR_WRITE);
  Hooks().fail_wal_writes = false;
  EXPECT_EQ(f.OnDisk(), "");
  // The failed run is not sent again: SQLite writes its frames anew if it retries.
  ASSERT_EQ(f.Sync(), SQLITE_OK);
  EXPECT_EQ(f.OnDisk(), "");
}

TEST(WalBatchingVfsTest, OtherFilesAreWrittenAtOnce) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  VfsFile f(dir, /*wal=*/false);
  ASSERT_EQ(f.open_rc(), SQLITE_OK);
  ASSERT_EQ(f.Write(Bytes(4096, 'a'), 0), SQLITE_OK);
  ASSERT_EQ(f.Write(Bytes(4096, 'b'), 4096), SQLITE_OK);
  const std::vector<VfsWrite> writes = Hooks().TakeWrites();
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_FALSE(writes[0].wal);
}

TEST(WalBatchingVfsTest, ABaseThatIsNotRegisteredIsAnError) {
  const Result<std::string> name = WalBatchingVfs("no-such-vfs");
  ASSERT_FALSE(name);
  EXPECT_NE(name.error().message().find("no-such-vfs"), std::string::npos);
}

// Through SQLite itself: a WAL-mode commit of many rows reaches the WAL in one write, and the
// database reads back whole through the plain VFS.
TEST(WalBatchingVfsTest, ACommitOfManyPagesIsOneWalWriteAndReadsBack) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.File("sql.db");
  const Result<std::string> vfs = WalBatchingVfs(testing::RegisterHookedVfs());
  ASSERT_TRUE(vfs);
  auto exec = [](sqlite3* db, const std::string& sql) {
    char* error = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
    EXPECT_EQ(rc, SQLITE_OK) << (error ? error : "") << " in " << sql;
    sqlite3_free(error);
  };
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                              vfs->c_str()),
              SQLITE_OK);
    exec(db,
         "PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
         "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)");
    Hooks().TakeWrites();
    Hooks().record = true;
    exec(db, "BEGIN");
    for (int i = 0; i < 20; ++i) {
      exec(db, "INSERT INTO t VALUES(" + std::to_string(i) + ", zeroblob(2000))");
    }
    exec(db, "COMMIT");
    Hooks().record = false;
    int wal_writes = 0;
    for (const VfsWrite& w : Hooks().TakeWrites()) wal_writes += w.wal ? 1 : 0;
    EXPECT_EQ(wal_writes, 1) << "frames of about 10 pages, one write";
    sqlite3_close(db);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*), sum(length(v)) FROM t", -1, &stmt, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), 20);
  EXPECT_EQ(sqlite3_column_int(stmt, 1), 40000);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

}  // namespace
}  // namespace kt::store::internal
