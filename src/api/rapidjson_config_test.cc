#include "api/rapidjson_config.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "api/codec.h"

namespace kt::api {
namespace {

TEST(RapidJsonConfigTest, ADocumentsOwnPoolTakesSmallChunks) {
  rapidjson::Document doc;
  doc.Parse(R"({"kind":"Binding","metadata":{"name":"p"},"target":{"name":"node-1"}})");
  ASSERT_FALSE(doc.HasParseError());
  EXPECT_EQ(doc.GetAllocator().Capacity(), kJsonPoolChunk);

  Result<rapidjson::Document> parsed = ParseJson(R"({"a":[1,2,3]})");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->GetAllocator().Capacity(), kJsonPoolChunk);
}

TEST(RapidJsonConfigTest, ALargeDocumentTakesMoreChunksAndParsesTheSame) {
  std::string json = "{";
  for (int i = 0; i < 2000; ++i) {
    if (i) json += ",";
    json += "\"key-" + std::to_string(i) + "\":\"value-" + std::to_string(i) + "\"";
  }
  json += "}";
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  ASSERT_FALSE(doc.HasParseError());
  EXPECT_GT(doc.GetAllocator().Capacity(), 4 * kJsonPoolChunk);
  ASSERT_EQ(doc.MemberCount(), 2000u);
  EXPECT_STREQ(doc["key-1999"].GetString(), "value-1999");
  EXPECT_EQ(EncodeJson(doc), json);
}

TEST(RapidJsonConfigTest, APoolWithItsOwnChunkSizeKeepsIt) {
  rapidjson::MemoryPoolAllocator<> pool(64 * 1024);
  rapidjson::Document doc(&pool);
  doc.Parse(R"({"a":1})");
  EXPECT_EQ(pool.Capacity(), 64u * 1024);
}

}  // namespace
}  // namespace kt::api
