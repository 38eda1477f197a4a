// StringOutput: a RapidJSON output stream that appends to a std::string, so JSON is written
// straight into a response body or storage buffer without an intermediate StringBuffer copy.
//
//   std::string out;
//   StringOutput os(&out);
//   rapidjson::Writer<StringOutput> w(os);
//   value.Accept(w);  // `out` holds the JSON
//
// The string may be read or appended to between writes: every character is in it at once.
// Thread safety: one writer at a time.
#pragma once

#include <algorithm>
#include <string>

namespace kt::api {

class StringOutput {
 public:
  using Ch = char;
  explicit StringOutput(std::string* s) : s_(s) {}
  void Put(char c) { s_->push_back(c); }
  void Flush() {}
  std::string* str() { return s_; }

 private:
  std::string* s_;
};

// Found by argument-dependent lookup from inside rapidjson::Writer: the writer reserves once per
// token instead of growing the string one character at a time.
inline void PutReserve(StringOutput& stream, size_t count) {
  std::string* s = stream.str();
  if (s->capacity() - s->size() < count) s->reserve(std::max(s->size() + count, s->size() * 2));
}
inline void PutUnsafe(StringOutput& stream, char c) { stream.Put(c); }

}  // namespace kt::api
