#include "core/lru.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace kt {
namespace {

std::vector<std::string> Keys(Lru<int>& lru) {
  std::vector<std::string> out;
  lru.ForEach([&](const std::string& k, int) { out.push_back(k); });
  return out;
}

TEST(LruTest, ForgetsTheLeastRecentlyUsedPastCapacity) {
  Lru<int> lru(3);
  lru.Put("a", 1);
  lru.Put("b", 2);
  lru.Put("c", 3);
  EXPECT_EQ(Keys(lru), (std::vector<std::string>{"c", "b", "a"}));
  ASSERT_NE(lru.Get("a"), nullptr);  // "a" is now the most recently used; "b" the least
  lru.Put("d", 4);
  EXPECT_EQ(lru.Get("b"), nullptr);
  EXPECT_EQ(Keys(lru), (std::vector<std::string>{"d", "a", "c"}));
  EXPECT_EQ(*lru.Get("c"), 3);
  EXPECT_EQ(*lru.Get("a"), 1);
  EXPECT_EQ(*lru.Get("d"), 4);
  EXPECT_EQ(lru.size(), 3u);
}

TEST(LruTest, PutReplacesTheValueOfAKeyItHas) {
  Lru<int> lru(2);
  lru.Put("a", 1);
  lru.Put("b", 2);
  lru.Put("a", 10);  // "a" most recent again: "b" goes next
  lru.Put("c", 3);
  EXPECT_EQ(lru.Get("b"), nullptr);
  EXPECT_EQ(*lru.Get("a"), 10);
  EXPECT_EQ(lru.size(), 2u);
}

TEST(LruTest, AddWithAPrecomputedHash) {
  Lru<int> lru(2);
  const uint64_t h = Lru<int>::Hash("key");
  EXPECT_EQ(lru.Get("key", h), nullptr);
  lru.Add("key", h, 7);
  ASSERT_NE(lru.Get("key", h), nullptr);
  EXPECT_EQ(*lru.Get("key"), 7);
}

TEST(LruTest, ErasedEntriesAreGoneAndTheirPlacesReused) {
  Lru<std::shared_ptr<int>> lru(3);
  auto held = std::make_shared<int>(1);
  lru.Put("a", held);
  lru.Put("b", std::make_shared<int>(2));
  EXPECT_EQ(held.use_count(), 2);
  lru.Erase("a");
  EXPECT_EQ(held.use_count(), 1);  // released at the erase
  EXPECT_EQ(lru.Get("a"), nullptr);
  lru.Erase("missing");
  EXPECT_EQ(lru.size(), 1u);
  lru.Put("c", std::make_shared<int>(3));
  lru.Put("d", std::make_shared<int>(4));  // three entries: nothing forgotten yet
  EXPECT_EQ(lru.size(), 3u);
  EXPECT_EQ(**lru.Get("b"), 2);
  lru.Put("e", std::make_shared<int>(5));  // "c" is the least recently used
  EXPECT_EQ(lru.Get("c"), nullptr);
  EXPECT_EQ(**lru.Get("d"), 4);
  EXPECT_EQ(**lru.Get("e"), 5);
}

// Random gets, puts and erasures against a model that keeps a recency counter per key.
TEST(LruTest, AgreesWithAModelUnderChurn) {
  constexpr size_t kCapacity = 8;
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    Lru<int> lru(kCapacity);
    std::map<std::string, std::pair<int, long>> model;  // key -> value, last use
    long clock = 0;
    for (int step = 0; step < 20000; ++step) {
      std::string key = "k";
      key += std::to_string(rng() % 24);
      const unsigned op = rng() % 3;
      if (op == 0) {
        int* got = lru.Get(key);
        auto it = model.find(key);
        ASSERT_EQ(got != nullptr, it != model.end()) << "step " << step << " " << key;
        if (got) {
          ASSERT_EQ(*got, it->second.first);
          it->second.second = ++clock;
        }
      } else if (op == 1) {
        lru.Put(key, step);
        model[key] = {step, ++clock};
        if (model.size() > kCapacity) {
          auto oldest = model.begin();
          for (auto it = model.begin(); it != model.end(); ++it) {
            if (it->second.second < oldest->second.second) oldest = it;
          }
          model.erase(oldest);
        }
      } else {
        lru.Erase(key);
        model.erase(key);
      }
      ASSERT_EQ(lru.size(), model.size());
    }
  }
}

}  // namespace
}  // namespace kt
