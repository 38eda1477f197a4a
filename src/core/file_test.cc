#include "core/file.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace kt {
namespace {

class ReadFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "kt-file-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
};

TEST_F(ReadFileTest, ReadsEveryByte) {
  // A NUL and CR/LF kept as they are, and more than one read's worth.
  const std::string bytes = std::string("a\0b\r\n", 5) + std::string(40000, 'x');
  std::ofstream(dir_ / "f", std::ios::binary) << bytes;
  Result<std::string> got = ReadFile(dir_ / "f");
  ASSERT_TRUE(got) << got.error().ToString();
  EXPECT_EQ(*got, bytes);
}

// Go's os.ReadFile errors, which upstream messages quote.
TEST_F(ReadFileTest, ErrorsReadAsGosOsPackage) {
  Result<std::string> missing = ReadFile(dir_ / "nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.error().message(),
            "open " + (dir_ / "nope").string() + ": no such file or directory");

  Result<std::string> directory = ReadFile(dir_);
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().code(), StatusCode::kInternal);
  EXPECT_EQ(directory.error().message(), "read " + dir_.string() + ": is a directory");
}

}  // namespace
}  // namespace kt
