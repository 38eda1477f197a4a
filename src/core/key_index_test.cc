#include "core/key_index.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <string_view>

namespace kt {
namespace {

using Map = std::map<std::string, int, std::less<>>;

// Every key collides: lookups and erasures must tell keys apart by the map's keys.
struct OneBucket {
  size_t operator()(std::string_view) const { return 7; }
};

template <class Index>
void Exercise() {
  Map map;
  Index index;
  for (int i = 0; i < 100; ++i) index.Insert(map.emplace("/k" + std::to_string(i), i).first);
  EXPECT_EQ(index.size(), 100u);
  for (int i = 0; i < 100; ++i) {
    auto it = index.Find(map, "/k" + std::to_string(i));
    ASSERT_NE(it, map.end());
    EXPECT_EQ(it->second, i);
  }
  EXPECT_EQ(index.Find(map, "/k100"), map.end());
  EXPECT_EQ(index.Find(map, "/k"), map.end());
  // Erase every other key; the rest stay found, the erased ones are gone.
  for (int i = 0; i < 100; i += 2) {
    auto it = index.Find(map, "/k" + std::to_string(i));
    index.Erase(it);
    map.erase(it);
  }
  EXPECT_EQ(index.size(), 50u);
  for (int i = 0; i < 100; ++i) {
    auto it = index.Find(map, "/k" + std::to_string(i));
    if (i % 2 == 0) {
      EXPECT_EQ(it, map.end()) << i;
    } else {
      ASSERT_NE(it, map.end()) << i;
      EXPECT_EQ(it->second, i);
    }
  }
  // A re-keyed entry (extracted and inserted again) is found at its new place.
  auto it = index.Find(map, "/k1");
  index.Erase(it);
  auto node = map.extract(it);
  node.key() = "/k1-renamed";
  index.Insert(map.insert(std::move(node)).position);
  EXPECT_EQ(index.Find(map, "/k1"), map.end());
  ASSERT_NE(index.Find(map, "/k1-renamed"), map.end());
  EXPECT_EQ(index.Find(map, "/k1-renamed")->second, 1);
  const Map& cmap = map;
  EXPECT_EQ(index.Find(cmap, "/k3")->second, 3);
}

TEST(KeyIndexTest, FindsInsertedKeysAndForgetsErasedOnes) { Exercise<KeyIndex<Map>>(); }

TEST(KeyIndexTest, KeysThatShareAHashAreToldApart) { Exercise<KeyIndex<Map, OneBucket>>(); }

// Few distinct hashes, some at the end of the slots: runs of probes collide, wrap around the
// array and are cut by erasures in the middle.
struct FewHashes {
  size_t operator()(std::string_view key) const {
    size_t h = 0;
    for (char c : key) h = h * 31 + static_cast<unsigned char>(c);
    return (h % 5) * 3 + 13;  // 13, 16, 19, 22, 25: slots near the end of a 16-slot array
  }
};

template <class Index>
void Churn(uint32_t seed) {
  Map map;
  Index index;
  std::mt19937 rng(seed);
  for (int step = 0; step < 20000; ++step) {
    const std::string key = "/k" + std::to_string(rng() % 64);
    auto found = index.Find(map, key);
    ASSERT_EQ(found, map.find(key)) << "step " << step << " key " << key;
    if (found == map.end()) {
      index.Insert(map.emplace(key, step).first);
    } else if (rng() % 2 == 0) {
      index.Erase(found);
      map.erase(found);
    }
    ASSERT_EQ(index.size(), map.size());
  }
  // Every key the map holds is found, and nothing else.
  for (int i = 0; i < 64; ++i) {
    const std::string key = "/k" + std::to_string(i);
    EXPECT_EQ(index.Find(map, key), map.find(key)) << key;
  }
  index.Clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.Find(map, "/k1"), map.end());
}

TEST(KeyIndexTest, InsertsAndErasuresInAnyOrderKeepEveryKeyFound) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE(seed);
    Churn<KeyIndex<Map>>(seed);
    Churn<KeyIndex<Map, FewHashes>>(seed);
    Churn<KeyIndex<Map, OneBucket>>(seed);
  }
}

TEST(KeyIndexTest, ReservedRoomHoldsTheKeysWithoutLosingAny) {
  Map map;
  KeyIndex<Map> index;
  index.Insert(map.emplace("/before", 0).first);
  index.Reserve(10000);
  for (int i = 0; i < 10000; ++i) index.Insert(map.emplace("/k" + std::to_string(i), i).first);
  EXPECT_EQ(index.size(), 10001u);
  EXPECT_EQ(index.Find(map, "/before")->second, 0);
  for (int i = 0; i < 10000; i += 97)
    EXPECT_EQ(index.Find(map, "/k" + std::to_string(i))->second, i);
}

}  // namespace
}  // namespace kt
