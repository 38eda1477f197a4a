#include "api/json_writer.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

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

// Short strings and the tails of long ones are scanned 16 bytes at a time when those bytes lie
// on one page: strings that end right before an unreadable page, of every length up to 40 with
// a byte to escape at every position (or none), must be written as RapidJSON writes them, and
// nothing past their end read (it would fault).
TEST(JsonWriterTest, StringsEndingAtAnUnreadablePageAreWrittenWithoutReadingPastThem) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* mem = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  char* base = static_cast<char*>(mem);
  ASSERT_EQ(mprotect(base + page, page, PROT_NONE), 0);
  char* const end = base + page;
  for (size_t len = 0; len <= 40; ++len) {
    for (size_t at = 0; at <= len; ++at) {  // at == len: nothing to escape
      for (const char special : {'"', '\\', '\n', '\x1f'}) {
        char* s = end - len;
        for (size_t k = 0; k < len; ++k) s[k] = static_cast<char>('a' + k % 26);
        if (at < len) s[at] = special;
        rapidjson::Value v(rapidjson::StringRef(s, static_cast<rapidjson::SizeType>(len)));
        EXPECT_EQ(Fast(v), Reference(v)) << "length " << len << ", escape at " << at;
      }
    }
  }
  // And starting right at a page's start (a whole 16-byte load lies on the page).
  for (size_t len = 0; len <= 20; ++len) {
    for (size_t k = 0; k < len; ++k) base[k] = k == len / 2 ? '"' : 'x';
    rapidjson::Value v(rapidjson::StringRef(base, static_cast<rapidjson::SizeType>(len)));
    EXPECT_EQ(Fast(v), Reference(v)) << "length " << len;
  }
  munmap(mem, 2 * page);
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
