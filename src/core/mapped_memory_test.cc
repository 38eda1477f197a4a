#include "core/mapped_memory.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kt::core {
namespace {

TEST(MappedMemoryTest, IsZeroedWritableAndMovesItsMapping) {
  MappedMemory memory(10000, /*huge=*/true);
  ASSERT_NE(memory.data(), nullptr);
  EXPECT_GE(memory.size(), 10000u);
  EXPECT_EQ(memory.size() % 4096, 0u);
  for (std::size_t i = 0; i < memory.size(); ++i) ASSERT_EQ(memory.data()[i], 0) << i;
  std::memset(memory.data(), 'x', memory.size());
  char* const data = memory.data();
  MappedMemory moved(std::move(memory));
  EXPECT_EQ(moved.data(), data);
  EXPECT_EQ(memory.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state
  EXPECT_EQ(moved.data()[moved.size() - 1], 'x');
}

TEST(MappedArenaTest, CopiesStayValidAcrossChunksAndLongStringsGetTheirOwn) {
  MappedArena arena(/*chunk_bytes=*/4096);
  std::vector<std::pair<std::string, std::string_view>> copies;
  for (int i = 0; i < 500; ++i) {
    std::string s(static_cast<std::size_t>(i % 37), static_cast<char>('a' + i % 26));
    s.append(std::to_string(i));
    copies.emplace_back(s, arena.Copy(s));
  }
  // Longer than a chunk: a mapping of its own.
  const std::string long_one(10000, 'L');
  const std::string_view long_copy = arena.Copy(long_one);
  const std::string_view after = arena.Copy("after");
  for (const auto& [original, copy] : copies) {
    EXPECT_EQ(copy, original);
    EXPECT_NE(copy.data(), original.data());
  }
  EXPECT_EQ(long_copy, long_one);
  EXPECT_EQ(after, "after");
  EXPECT_EQ(arena.Copy(""), "");
  // Moving the arena keeps every copy where it is.
  MappedArena moved = std::move(arena);
  EXPECT_EQ(copies.front().second, copies.front().first);
  EXPECT_EQ(moved.Copy("more"), "more");
}

}  // namespace
}  // namespace kt::core
