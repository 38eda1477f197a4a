// Predecoder: objects decoded while the SQLite store loads are exactly what the watch caches
// would decode themselves, and only the rows handed over are used.
#include "server/predecode.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <initializer_list>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "server/resources.h"
#include "server/watch_cache.h"
#include "store/sqlite_store.h"

namespace kt::server {
namespace {

// Concatenates with append (string operator+ chains trip GCC 12's -Wrestrict).
std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p);
  return out;
}

std::string PodJson(const std::string& name, int generation) {
  const std::string g = std::to_string(generation);
  return Cat({R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
              R"(","namespace":"default","uid":"uid-)", name, "-", g,
              R"("},"spec":{"containers":[{"name":"c","image":"nginx"}],"tolerations":[)",
              R"({"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":)", g,
              "}]}}"});
}

std::string NodeJson(const std::string& name, int generation) {
  return Cat({R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")", name, R"(","uid":"uid-)",
              name, R"("},"spec":{"taints":[{"key":"burst","value":"v)", std::to_string(generation),
              R"(","effect":"NoSchedule"}]}})"});
}

class PredecoderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           Cat({"kubetaint-predecode-", std::to_string(::getpid()), "-",
                ::testing::UnitTest::GetInstance()->current_test_info()->name()});
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "kubetaint.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<store::Store> Open(Predecoder* pre) {
    store::SqliteOptions o;
    o.path = path_;
    if (pre) o.on_load = [pre](const store::LoadedRow& row) { pre->Loaded(row); };
    auto s = store::OpenSqliteStore(o);
    EXPECT_TRUE(s) << s.error().ToString();
    return s ? std::move(*s) : nullptr;
  }

  // Creates, a burst of updates, deletes and re-creations, a compaction in the middle (so that
  // rows below the compacted revision load too), and a key no cache loads.
  void WriteHistory() {
    auto s = Open(nullptr);
    ASSERT_TRUE(s);
    std::mt19937 rng(7);
    const std::string pods = Cat({Info(Resource::kPods).key_prefix, "default/"});
    const std::string nodes(Info(Resource::kNodes).key_prefix);
    for (int i = 0; i < 60; ++i) {
      const std::string p = Cat({"p", std::to_string(i)});
      Record(Cat({pods, p}), s->Create(Cat({pods, p}), store::MakeBytes(PodJson(p, 0))));
    }
    for (int i = 0; i < 20; ++i) {
      const std::string n = Cat({"n", std::to_string(i)});
      Record(Cat({nodes, n}), s->Create(Cat({nodes, n}), store::MakeBytes(NodeJson(n, 0))));
    }
    ASSERT_TRUE(s->Create("/registry/unserved/x", store::MakeBytes("not json")));
    for (int round = 1; round <= 2; ++round) {
      for (int i = 0; i < 150; ++i) {
        const std::string n = Cat({"n", std::to_string(rng() % 20)});
        Record(Cat({nodes, n}),
               s->Update(Cat({nodes, n}), store::MakeBytes(NodeJson(n, round * 1000 + i)), 0));
      }
      for (int i = 0; i < 10; ++i) {
        const std::string p = Cat({"p", std::to_string(rng() % 60)});
        if (s->Get(Cat({pods, p}))) {
          ASSERT_TRUE(s->Delete(Cat({pods, p}), 0));
        } else {
          Record(Cat({pods, p}), s->Create(Cat({pods, p}), store::MakeBytes(PodJson(p, round))));
        }
      }
      if (round == 1) {
        ASSERT_TRUE(s->Compact(s->CurrentRevision() - 100).ok());
      }
    }
  }

  void Record(const std::string& key, const Result<store::WriteResult>& w) {
    ASSERT_TRUE(w) << key;
    written_.emplace_back(w->revision, key);
  }

  std::filesystem::path dir_;
  std::string path_;
  std::vector<std::pair<store::Revision, std::string>> written_;  // every put: revision, key
};

TEST_F(PredecoderTest, CachesLoadTheSameObjectsAndTakeThemFromThePredecoder) {
  WriteHistory();
  if (HasFatalFailure()) return;
  // Handed over row by row, in short batches, and in serve's.
  for (size_t batch : {size_t{1}, size_t{16}, Predecoder::kBatch}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    // Without the predecoder: the reference.
    std::map<std::string, std::pair<std::string, store::Revision>> want;
    {
      auto s = Open(nullptr);
      ASSERT_TRUE(s);
      for (Resource r : {Resource::kPods, Resource::kNodes}) {
        WatchCache cache(Info(r), s.get());
        ASSERT_TRUE(cache.Start().ok());
        auto range = s->Range(store::RangeRequest::Prefix(Info(r).key_prefix));
        ASSERT_TRUE(range);
        for (const store::KeyValue& kv : range->kvs) {
          const std::string name = kv.key.substr(kv.key.rfind('/') + 1);
          ObjectPtr o = cache.Get(r == Resource::kPods ? "default" : "", name);
          ASSERT_TRUE(o) << kv.key;
          want[kv.key] = {*o->json, o->revision};
        }
      }
    }
    ASSERT_GT(want.size(), 60u);
    Predecoder pre(batch);
    auto s = Open(&pre);
    ASSERT_TRUE(s);
    pre.Finish();
    // The store hands over current values only (it reads the file newest first, and history
    // stays on disk): each current object is decoded once.
    EXPECT_EQ(pre.decoded(), want.size());
    size_t checked = 0;
    for (Resource r : {Resource::kPods, Resource::kNodes}) {
      WatchCache cache(Info(r), s.get());
      ASSERT_TRUE(cache.Start(&pre).ok());
      auto range = s->Range(store::RangeRequest::Prefix(Info(r).key_prefix));
      ASSERT_TRUE(range);
      EXPECT_EQ(cache.size(), range->kvs.size());
      for (const store::KeyValue& kv : range->kvs) {
        const std::string name = kv.key.substr(kv.key.rfind('/') + 1);
        ObjectPtr o = cache.Get(r == Resource::kPods ? "default" : "", name);
        ASSERT_TRUE(o) << kv.key;
        EXPECT_EQ(*o->json, want[kv.key].first) << kv.key;
        EXPECT_EQ(o->revision, want[kv.key].second) << kv.key;
        // The cache holds the predecoder's object, not a second decoding.
        EXPECT_EQ(pre.Take(kv.mod_revision, kv.key), o) << kv.key;
        EXPECT_EQ(pre.Take(kv.mod_revision, Cat({kv.key, "x"})), nullptr);
        ++checked;
      }
    }
    EXPECT_EQ(checked, want.size());
    // Rows that are no longer current (superseded, deleted) give nothing, though most of them
    // were loaded with a value.
    size_t old_rows = 0;
    for (const auto& [rev, key] : written_) {
      if (want.count(key) && want[key].second == rev) continue;
      EXPECT_EQ(pre.Take(rev, key), nullptr) << key << " at " << rev;
      ++old_rows;
    }
    EXPECT_GT(old_rows, 250u);
  }
}

// The decoder gives a key to the one resource whose prefix it starts with: no prefix may be the
// prefix of another.
TEST(PredecoderKeysTest, NoResourceKeyPrefixIsThePrefixOfAnother) {
  for (const ResourceInfo& a : AllResources()) {
    EXPECT_TRUE(a.key_prefix.ends_with('/')) << a.key_prefix;
    for (const ResourceInfo& b : AllResources()) {
      if (&a != &b) {
        EXPECT_FALSE(b.key_prefix.starts_with(a.key_prefix)) << a.key_prefix;
      }
    }
  }
}

TEST_F(PredecoderTest, TakesOnlyWhatWasHandedOverUnderItsRevisionAndKey) {
  Predecoder pre(/*batch=*/2);
  const std::string nodes(Info(Resource::kNodes).key_prefix);
  const std::string pods = Cat({Info(Resource::kPods).key_prefix, "default/"});
  std::vector<store::Bytes> values;
  values.reserve(8);
  auto hand = [&](const std::string& key, store::Revision rev, std::string json) {
    values.push_back(store::MakeBytes(std::move(json)));
    pre.Loaded(store::LoadedRow{key, rev, rev, &values.back()});
  };
  hand(Cat({nodes, "n3"}), 30, NodeJson("n3", 3));
  hand(Cat({pods, "p2"}), 20, PodJson("p2", 2));
  hand("/registry/unserved/x", 15, "not json");     // no cache loads it
  hand(Cat({nodes, "n9"}), 25, NodeJson("n9", 9));  // out of order: left to the cache
  hand(Cat({nodes, "bad"}), 12, "{");               // does not decode: left to the cache
  hand(Cat({nodes, "n1"}), 10, NodeJson("n1", 1));
  pre.Finish();
  EXPECT_EQ(pre.decoded(), 3u);
  for (auto [key, rev] :
       {std::pair{Cat({nodes, "n3"}), 30}, {Cat({pods, "p2"}), 20}, {Cat({nodes, "n1"}), 10}}) {
    ObjectPtr o = pre.Take(rev, key);
    ASSERT_NE(o, nullptr) << key;
    EXPECT_EQ(o->key, key);
    EXPECT_EQ(o->revision, rev);
    EXPECT_EQ(pre.Take(rev, Cat({key, "x"})), nullptr) << key;
    EXPECT_EQ(pre.Take(rev + 1, key), nullptr) << key;
  }
  EXPECT_EQ(pre.Take(15, "/registry/unserved/x"), nullptr);
  EXPECT_EQ(pre.Take(25, Cat({nodes, "n9"})), nullptr);
  EXPECT_EQ(pre.Take(12, Cat({nodes, "bad"})), nullptr);
  EXPECT_EQ(pre.Take(9, Cat({nodes, "n1"})), nullptr);
  EXPECT_EQ(pre.Take(31, Cat({nodes, "n3"})), nullptr);
}

}  // namespace
}  // namespace kt::server
