#include "api/uid_key.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

namespace kt::api {
namespace {

TEST(UidKeyTest, ACanonicalUuidIsItsOwnBits) {
  const UidKey k = UidKeyOf("0123abcd-4567-89ef-fedc-ba9876543210");
  EXPECT_EQ(k.hi, 0x0123abcd456789efull);
  EXPECT_EQ(k.lo, 0xfedcba9876543210ull);
  EXPECT_EQ(UidKeyOf("0123ABCD-4567-89EF-FEDC-BA9876543210"), k);  // hex digits of either case
  EXPECT_EQ(UidKeyOf("00000000-0000-0000-0000-000000000000"), (UidKey{0, 0}));
  EXPECT_EQ(UidKeyOf("ffffffff-ffff-ffff-ffff-ffffffffffff"), (UidKey{~0ull, ~0ull}));
}

TEST(UidKeyTest, AnyOtherStringIsHashedToAnOddLowHalf) {
  const std::string not_uuids[] = {
      "",
      "uid-default-p",
      "0123abcd-4567-89ef-fedc-ba987654321",    // 35 bytes
      "0123abcd-4567-89ef-fedc-ba98765432100",  // 37
      "0123abcd+4567-89ef-fedc-ba9876543210",   // no dash at 8
      "0123abcd-4567-89ef-fedc-ba987654321g",   // not a hex digit, last
      "g123abcd-4567-89ef-fedc-ba9876543210",   // not a hex digit, first
      "0123abcd-4567-89ef-fe c-ba9876543210",   // a space
  };
  std::set<std::pair<uint64_t, uint64_t>> seen;
  for (const std::string& s : not_uuids) {
    const UidKey k = UidKeyOf(s);
    EXPECT_EQ(k.lo & 1, 1u) << s;
    EXPECT_EQ(UidKeyOf(s), k) << s;  // stable
    seen.insert({k.hi, k.lo});
  }
  EXPECT_EQ(seen.size(), std::size(not_uuids));  // distinct strings, distinct keys
}

TEST(UidKeyTest, TheHashTellsNeighboursApart) {
  const UidKeyHash hash;
  const UidKey a = UidKeyOf("0123abcd-4567-89ef-fedc-ba9876543210");
  const UidKey b = UidKeyOf("0123abcd-4567-89ef-fedc-ba9876543211");
  const UidKey c = UidKeyOf("1123abcd-4567-89ef-fedc-ba9876543210");
  EXPECT_NE(hash(a), hash(b));
  EXPECT_NE(hash(a), hash(c));
  EXPECT_EQ(hash(a), hash(UidKeyOf("0123ABCD-4567-89EF-FEDC-BA9876543210")));
}

}  // namespace
}  // namespace kt::api
