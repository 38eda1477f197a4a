// JsonWriter: RapidJSON's compact Writer appending to a std::string, byte for byte the same JSON,
// at a fraction of the cost: the string is grown once per token rather than checked per
// character, and a string's characters that need no escape are copied in runs, not one by one.
//
//   std::string out;
//   {
//     api::JsonWriter w(&out);
//     value.Accept(w);      // or w.StartObject(); w.Key(...); ...
//   }                       // `out` holds the JSON once the writer is gone (or after Finish)
//
// While the writer lives, `out` is longer than what was written (the space being filled):
// read it only after Finish() or the writer's destruction.
// Thread safety: one writer at a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <rapidjson/writer.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace kt::api {

// The output stream under JsonWriter: writes into the string's own storage, which it resizes
// ahead of the writer and trims to what was written at the end.
class JsonOut {
 public:
  using Ch = char;
  // Room the string has reserved is used before it grows.
  explicit JsonOut(std::string* out) : out_(out), len_(out->size()) {
    out->resize(out->capacity());
  }
  ~JsonOut() { Finish(); }
  JsonOut(const JsonOut&) = delete;
  JsonOut& operator=(const JsonOut&) = delete;

  // Makes room for `n` more bytes. The check is inline; growing (rare) is not.
  void Reserve(size_t n) {
    if (out_->size() - len_ < n) [[unlikely]]
      Grow(n);
  }
  // Writes into the room made by Reserve.
  void PutUnsafe(char c) { (*out_)[len_++] = c; }
  void AppendUnsafe(const char* s, size_t n) {
    if (n == 0) return;
    std::memcpy(out_->data() + len_, s, n);
    len_ += n;
  }
  void Put(char c) {
    Reserve(1);
    PutUnsafe(c);
  }
  void Flush() {}
  [[gnu::noinline]] void Grow(size_t n) {
    out_->resize(std::max(2 * out_->size(), len_ + n + 256));
  }
  // Trims the string to what was written.
  void Finish() { out_->resize(len_); }

 private:
  std::string* out_;
  size_t len_;  // bytes written; the string is longer while writing
};

}  // namespace kt::api

namespace rapidjson {
template <>
inline void PutReserve(kt::api::JsonOut& stream, size_t count) {
  stream.Reserve(count);
}
template <>
inline void PutUnsafe(kt::api::JsonOut& stream, char c) {
  stream.PutUnsafe(c);
}
}  // namespace rapidjson

namespace kt::api {

namespace internal {
// Holds the stream so that it is built before the Writer that refers to it.
struct JsonOutHolder {
  explicit JsonOutHolder(std::string* out) : out_stream(out) {}
  JsonOut out_stream;
};
}  // namespace internal

class JsonWriter : private internal::JsonOutHolder, public rapidjson::Writer<JsonOut> {
 public:
  using Base = rapidjson::Writer<JsonOut>;
  using Ch = char;
  using SizeType = rapidjson::SizeType;

  explicit JsonWriter(std::string* out) : JsonOutHolder(out), Base(out_stream) {}

  // These hide the Writer's own (Value::Accept and every caller reach them through this type).
  bool String(const Ch* s, SizeType n, bool copy = false) {
    (void)copy;
    Prefix(rapidjson::kStringType);
    WriteQuoted(s, n);
    return EndValue(true);
  }
  bool String(std::string_view s) { return String(s.data(), static_cast<SizeType>(s.size())); }
  bool Key(const Ch* s, SizeType n, bool copy = false) { return String(s, n, copy); }
  bool Key(std::string_view s) { return String(s.data(), static_cast<SizeType>(s.size())); }
  bool Key(const Ch* s) { return Key(std::string_view(s)); }
  bool String(const Ch* s) { return String(std::string_view(s)); }

  // Trims the string to what was written (the destructor does it too).
  void Finish() { out_stream.Finish(); }

 private:
  static bool NeedsEscape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

  // The index of the first byte at or after `i` that needs an escape, or `n`.
  static size_t NextEscape(const char* s, size_t i, size_t n) {
#if defined(__SSE2__)
    // 16 bytes at a time: a quote, a backslash, or a byte below 0x20 (max(b, 0x1F) == 0x1F).
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i below = _mm_set1_epi8(0x1F);
    for (; i + 16 <= n; i += 16) {
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
      const __m128i hit =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(b, quote), _mm_cmpeq_epi8(b, backslash)),
                       _mm_cmpeq_epi8(_mm_max_epu8(b, below), below));
      if (const int mask = _mm_movemask_epi8(hit); mask != 0) {
        return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
      }
    }
    // The rest, under 16 bytes, with one more load when those 16 bytes lie within the page
    // the rest starts on (they can then be read, whatever follows the string), the bytes past
    // the end masked off. Not under AddressSanitizer, which would report the read.
#if !defined(__SANITIZE_ADDRESS__)
    constexpr std::uintptr_t kPage = 4096;
    if (i < n && (reinterpret_cast<std::uintptr_t>(s + i) & (kPage - 1)) <= kPage - 16) {
      // The compiler is not told which object `tail` points into: inlined into a caller that
      // passes a short literal (as a profile-guided build does), it would warn of the read.
      const char* tail = s + i;
      asm("" : "+r"(tail));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tail));
      const __m128i hit =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(b, quote), _mm_cmpeq_epi8(b, backslash)),
                       _mm_cmpeq_epi8(_mm_max_epu8(b, below), below));
      const unsigned mask =
          static_cast<unsigned>(_mm_movemask_epi8(hit)) & ((1u << (n - i)) - 1);  // n - i < 16
      return mask != 0 ? i + static_cast<size_t>(__builtin_ctz(mask)) : n;
    }
#endif
#endif
    for (; i < n; ++i) {
      if (NeedsEscape(static_cast<unsigned char>(s[i]))) return i;
    }
    return n;
  }

  // RapidJSON's escaping for UTF-8 to UTF-8 without validation: `"` and `\` escaped, control
  // characters as \b \t \n \f \r or \u00XX (upper-case hex), every other byte as it is.
  void WriteQuoted(const char* s, size_t n) {
    JsonOut& out = out_stream;
    out.Reserve(n + 2);
    out.PutUnsafe('"');
    size_t run = 0;
    for (size_t i = NextEscape(s, 0, n); i < n; i = NextEscape(s, i + 1, n)) {
      const auto c = static_cast<unsigned char>(s[i]);
      out.AppendUnsafe(s + run, i - run);
      // Room for this escape and for the rest, whatever it holds.
      out.Reserve(6 + (n - i) + 1);
      out.PutUnsafe('\\');
      switch (c) {
        case '"':
        case '\\':
          out.PutUnsafe(static_cast<char>(c));
          break;
        case '\b':
          out.PutUnsafe('b');
          break;
        case '\t':
          out.PutUnsafe('t');
          break;
        case '\n':
          out.PutUnsafe('n');
          break;
        case '\f':
          out.PutUnsafe('f');
          break;
        case '\r':
          out.PutUnsafe('r');
          break;
        default: {
          static constexpr char kHex[] = "0123456789ABCDEF";
          out.PutUnsafe('u');
          out.PutUnsafe('0');
          out.PutUnsafe('0');
          out.PutUnsafe(kHex[c >> 4]);
          out.PutUnsafe(kHex[c & 0xF]);
        }
      }
      run = i + 1;
    }
    out.AppendUnsafe(s + run, n - run);
    out.PutUnsafe('"');
  }
};

// Writes JSON with `write(JsonWriter&)` into a buffer the calling thread keeps, then returns
// `use(std::string_view)` of what was written: the caller copies the bytes once into a string of
// their size, which does not keep the slack of a buffer grown by doubling (stored objects keep
// their bytes for as long as they live). Each call site has its own buffer per thread, sized to
// what that site writes (JsonOut fills a buffer's capacity before writing into it, so a small
// object must not be written into a pod's buffer). A nested call writes into a buffer of its
// own; a buffer past 1 MB is given back after use.
template <class Write, class Use>
auto WriteThroughScratch(Write&& write, Use&& use) {
  struct Scratch {
    std::string bytes;
    bool busy = false;
  };
  thread_local Scratch s;
  if (s.busy) {
    std::string own;
    {
      JsonWriter w(&own);
      write(w);
    }
    return use(std::string_view(own));
  }
  s.busy = true;
  s.bytes.clear();
  {
    JsonWriter w(&s.bytes);
    write(w);
  }
  auto result = use(std::string_view(s.bytes));
  if (s.bytes.capacity() > (size_t{1} << 20)) std::string().swap(s.bytes);
  s.busy = false;
  return result;
}

}  // namespace kt::api
