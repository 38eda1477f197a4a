#include "core/key_index.h"

#include <gtest/gtest.h>

#include <map>
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

}  // namespace
}  // namespace kt
