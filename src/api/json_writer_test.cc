#include "api/json_writer.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <rapidjson/writer.h>

#include "api/string_output.h"

namespace kt::api {
namespace {

// What RapidJSON's own Writer makes of `v`, one character at a time (its 16-byte scan of
// Writer<StringBuffer> under RAPIDJSON_SSE2 leaves 0x1A-0x1F unescaped).
std::string Reference(const rapidjson::Value& v) {
  std::string out;
  StringOutput os(&out);
  rapidjson::Writer<StringOutput> w(os);
  v.Accept(w);
  return out;
}

std::string Fast(const rapidjson::Value& v) {
  std::string out;
  {
    JsonWriter w(&out);
    v.Accept(w);
  }
  return out;
}

TEST(JsonWriterTest, EveryByteInAStringIsWrittenAsRapidJsonWritesIt) {
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  for (int c = 0; c < 256; ++c) {
    const char ch = static_cast<char>(c);
    // The byte alone, inside a run, at the start and at the end of a string, and as a key.
    for (std::string s : {std::string(1, ch), "ab" + std::string(1, ch) + "cd",
                          std::string(1, ch) + "xyz", "xyz" + std::string(1, ch)}) {
      rapidjson::Value str(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
      EXPECT_EQ(Fast(str), Reference(str)) << "byte " << c;
      rapidjson::Value obj(rapidjson::kObjectType);
      obj.AddMember(rapidjson::Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a),
                    rapidjson::Value(1), a);
      EXPECT_EQ(Fast(obj), Reference(obj)) << "key with byte " << c;
    }
  }
}

TEST(JsonWriterTest, ADocumentIsWrittenAsRapidJsonWritesIt) {
  const char* json =
      R"({"kind":"Pod","metadata":{"name":"p\"1\\","labels":{"a/b":"x\ny\tz\u0001"}},)"
      R"("spec":{"containers":[{"name":"c","args":["--x=1","\u00e9t\u00e9 \u65e5"],)"
      R"("ports":[{"containerPort":80}]}],"priority":-5,"big":18446744073709551615,)"
      R"("ratio":0.25,"on":true,"off":false,"none":null,"empty":{},"list":[]}})";
  rapidjson::Document doc;
  doc.Parse(json);
  ASSERT_FALSE(doc.HasParseError());
  EXPECT_EQ(Fast(doc), Reference(doc));
}

TEST(JsonWriterTest, LongStringsWithManyEscapesGrowTheBuffer) {
  // Every character escaped to six: the room made at the start is not enough.
  std::string s(5000, '\x01');
  s += std::string(3000, 'a') + std::string(2000, '"');
  rapidjson::Value v(rapidjson::StringRef(s.data(), s.size()));
  EXPECT_EQ(Fast(v), Reference(v));
}

TEST(JsonWriterTest, ControlCharactersInLongStringsAreEscaped) {
  // Past the first 16 bytes, where the scan goes 16 at a time: every byte below 0x20.
  for (int c = 0; c < 0x20; ++c) {
    const std::string s = std::string(37, 'x') + static_cast<char>(c) + std::string(20, 'y');
    rapidjson::Value v(rapidjson::StringRef(s.data(), s.size()));
    const std::string json = Fast(v);
    EXPECT_EQ(json, Reference(v)) << "byte " << c;
    EXPECT_EQ(json.find(static_cast<char>(c)), std::string::npos) << "byte " << c;
  }
}

TEST(JsonWriterTest, AppendsToWhatTheStringHeldAndTrimsAtFinish) {
  std::string out = "prefix:";
  JsonWriter w(&out);
  w.StartArray();
  w.String(std::string_view("a"));
  w.Int64(-3);
  w.EndArray();
  w.Finish();
  EXPECT_EQ(out, R"(prefix:["a",-3])");
}

}  // namespace
}  // namespace kt::api
