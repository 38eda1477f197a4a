#include "api/protobuf.h"

#include <cstdint>
#include <random>
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace kt::api {
namespace {

std::string Json(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return buf.GetString();
}

std::string Canon(std::string_view text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  EXPECT_FALSE(d.HasParseError()) << text;
  return Json(d);
}

std::string Hex(std::string_view hex) {
  std::string out;
  std::string digits;
  for (char c : hex) {
    if (std::isxdigit(static_cast<unsigned char>(c))) digits += c;
  }
  for (size_t i = 0; i + 1 < digits.size(); i += 2) {
    out += static_cast<char>(std::stoi(digits.substr(i, 2), nullptr, 16));
  }
  return out;
}

// A tiny protobuf writer for building bodies in tests.
std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}
std::string Bytes(uint32_t field, std::string_view b) {
  return Varint(field << 3 | 2) + Varint(b.size()) + std::string(b);
}
std::string Int(uint32_t field, uint64_t v) { return Varint(field << 3) + Varint(v); }
std::string Envelope(std::string_view api_version, std::string_view kind, std::string_view raw) {
  return std::string(kProtobufMagic) + Bytes(1, Bytes(1, api_version) + Bytes(2, kind)) +
         Bytes(2, raw) + Bytes(3, "") + Bytes(4, "");
}

std::string Decode(std::string_view body) {
  Result<rapidjson::Document> d = DecodeProtobufBody(body);
  if (!d) return "error: " + d.error().message();
  return Json(*d);
}

// kubectl create namespace team-b (kubectl-protocol.md §5, observed bytes).
const std::string kCreateNamespace = Hex(R"(
  6b 38 73 00
  0a 0f 0a 02 76 31 12 09 4e 61 6d 65 73 70 61 63 65
  12 1e
     0a 16 0a 06 74 65 61 6d 2d 62 12 00 1a 00 22 00 2a 00 32 00 38 00 42 00
     12 00
     1a 02 0a 00
  1a 00 22 00)");

// drain --grace-period=7, DELETE fallback (observed bytes).
const std::string kDrainDelete =
    Hex("6b3873000a130a027631120d44656c6574654f7074696f6e73 1202 0807 1a00 2200");

TEST(ProtobufDecode, CreateNamespaceObservedBytes) {
  EXPECT_EQ(Decode(kCreateNamespace), Canon(R"({"kind":"Namespace","apiVersion":"v1",
                      "metadata":{"name":"team-b","creationTimestamp":null},
                      "spec":{},"status":{}})"));
}

TEST(ProtobufDecode, DrainDeleteOptionsObservedBytes) {
  EXPECT_EQ(Decode(kDrainDelete),
            Canon(R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":7})"));
  // Without --grace-period the raw object is empty.
  EXPECT_EQ(Decode(Envelope("v1", "DeleteOptions", "")),
            Canon(R"({"kind":"DeleteOptions","apiVersion":"v1"})"));
}

TEST(ProtobufDecode, DeleteOptionsPointersArePresentWhenOnTheWire) {
  std::string raw = Int(1, 0) + Bytes(2, Bytes(1, "u-1") + Bytes(2, "")) + Int(3, 0) +
                    Bytes(4, "Foreground") + Bytes(5, "All");
  EXPECT_EQ(Decode(Envelope("v1", "DeleteOptions", raw)),
            Canon(R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,
                      "preconditions":{"uid":"u-1","resourceVersion":""},
                      "orphanDependents":false,"propagationPolicy":"Foreground",
                      "dryRun":["All"]})"));
  // Negative grace periods are two's complement varints.
  EXPECT_EQ(Decode(Envelope("v1", "DeleteOptions", Int(1, static_cast<uint64_t>(-1)))),
            Canon(R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":-1})"));
}

TEST(ProtobufDecode, ObjectMetaInFull) {
  std::string owner = Bytes(1, "DaemonSet") + Bytes(3, "agent") + Bytes(4, "uid-9") +
                      Bytes(5, "apps/v1") + Int(6, 1);
  std::string meta = Bytes(1, "ns-1") + Bytes(5, "u-1") + Bytes(6, "42") + Int(7, 3) +
                     Bytes(8, Int(1, 1700000000) + Int(2, 5)) + Bytes(9, Int(1, 0)) + Int(10, 30) +
                     Bytes(11, Bytes(1, "zone") + Bytes(2, "a")) +
                     Bytes(11, Bytes(1, "app") + Bytes(2, "x")) +
                     Bytes(11, Bytes(1, "zone") + Bytes(2, "b")) +  // the last entry wins
                     Bytes(12, Bytes(1, "note") + Bytes(2, "")) + Bytes(13, owner) +
                     Bytes(14, "kubernetes") + Bytes(14, "other") + Bytes(17, "ignored");
  std::string raw =
      Bytes(1, meta) + Bytes(2, Bytes(1, "kubernetes")) + Bytes(3, Bytes(1, "Active"));
  EXPECT_EQ(Decode(Envelope("v1", "Namespace", raw)),
            Canon(R"({"kind":"Namespace","apiVersion":"v1",
                      "metadata":{"name":"ns-1","uid":"u-1","resourceVersion":"42","generation":3,
                        "creationTimestamp":"2023-11-14T22:13:20Z",
                        "deletionTimestamp":"1970-01-01T00:00:00Z",
                        "deletionGracePeriodSeconds":30,
                        "labels":{"app":"x","zone":"b"},"annotations":{"note":""},
                        "ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet",
                          "name":"agent","uid":"uid-9","controller":true}],
                        "finalizers":["kubernetes","other"]},
                      "spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}})"));
}

// kubectl create priorityclass high --value=1000 --description=urgent --preemption-policy=Never
TEST(ProtobufDecode, PriorityClass) {
  std::string meta = Bytes(1, "high") + Bytes(8, "");
  EXPECT_EQ(Decode(Envelope("scheduling.k8s.io/v1", "PriorityClass",
                            Bytes(1, meta) + Int(2, 1000) + Int(3, 0) + Bytes(4, "urgent") +
                                Bytes(5, "Never"))),
            Canon(R"({"kind":"PriorityClass","apiVersion":"scheduling.k8s.io/v1",
                      "metadata":{"name":"high","creationTimestamp":null},"value":1000,
                      "description":"urgent","preemptionPolicy":"Never"})"));
  // Without a policy on the wire there is none in the JSON (the server defaults it); a
  // negative value is a sign-extended varint; value 0 is still written.
  EXPECT_EQ(Decode(Envelope("scheduling.k8s.io/v1", "PriorityClass",
                            Bytes(1, meta) + Int(2, static_cast<uint64_t>(-5)) + Int(3, 1))),
            Canon(R"({"kind":"PriorityClass","apiVersion":"scheduling.k8s.io/v1",
                      "metadata":{"name":"high","creationTimestamp":null},"value":-5,
                      "globalDefault":true})"));
  EXPECT_EQ(Decode(Envelope("scheduling.k8s.io/v1", "PriorityClass", Bytes(1, meta))),
            Canon(R"({"kind":"PriorityClass","apiVersion":"scheduling.k8s.io/v1",
                      "metadata":{"name":"high","creationTimestamp":null},"value":0})"));
}

TEST(ProtobufDecode, AuthCanIReviews) {
  std::string attrs = Bytes(1, "default") + Bytes(2, "create") + Bytes(3, "") + Bytes(4, "") +
                      Bytes(5, "pods") + Bytes(6, "") + Bytes(7, "");
  std::string ssar = Bytes(1, Int(7, 0) + Bytes(8, "")) + Bytes(2, Bytes(1, attrs)) +
                     Bytes(3, Int(1, 0) + Bytes(2, "") + Bytes(3, ""));
  EXPECT_EQ(Decode(Envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview", ssar)),
            Canon(R"({"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1",
                      "metadata":{"creationTimestamp":null},
                      "spec":{"resourceAttributes":{"namespace":"default","verb":"create",
                                                    "resource":"pods"}},
                      "status":{"allowed":false}})"));
  std::string non_resource = Bytes(2, Bytes(2, Bytes(1, "/healthz") + Bytes(2, "get")));
  EXPECT_EQ(Decode(Envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview", non_resource)),
            Canon(R"({"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1",
                      "metadata":{"creationTimestamp":null},
                      "spec":{"nonResourceAttributes":{"path":"/healthz","verb":"get"}},
                      "status":{"allowed":false}})"));
  std::string ssrr = Bytes(1, "") + Bytes(2, Bytes(1, "default")) + Bytes(3, "");
  EXPECT_EQ(Decode(Envelope("authorization.k8s.io/v1", "SelfSubjectRulesReview", ssrr)),
            Canon(R"({"kind":"SelfSubjectRulesReview","apiVersion":"authorization.k8s.io/v1",
                      "metadata":{"creationTimestamp":null},"spec":{"namespace":"default"},
                      "status":{"resourceRules":null,"nonResourceRules":null,
                                "incomplete":false}})"));
  EXPECT_EQ(Decode(Envelope("authentication.k8s.io/v1", "SelfSubjectReview", Bytes(1, ""))),
            Canon(R"({"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1",
                      "metadata":{"creationTimestamp":null},"status":{"userInfo":{}}})"));
}

TEST(ProtobufDecode, InvalidUtf8BecomesReplacementCharacter) {
  std::string raw = Bytes(1, Bytes(1,
                                   "a\xff"
                                   "b"));
  EXPECT_EQ(
      Decode(Envelope("v1", "Namespace", raw)),
      Canon("{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\xEF\xBF\xBD"
            "b\",\"creationTimestamp\":null},\"spec\":{},\"status\":{}}"));
}

TEST(ProtobufDecode, MalformedInput) {
  struct Row {
    std::string body;
    StatusCode code;
    std::string message;
  };
  const Row rows[] = {
      {"", StatusCode::kBadRequest,
       "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"},
      {"{\"kind\":\"Namespace\"}", StatusCode::kBadRequest,
       "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"},
      {kCreateNamespace.substr(0, 20), StatusCode::kBadRequest, "unexpected EOF"},
      {std::string(kProtobufMagic) + "\x0a", StatusCode::kBadRequest, "unexpected EOF"},
      {std::string(kProtobufMagic) + std::string(11, '\xff'), StatusCode::kBadRequest,
       "proto: integer overflow"},
      {std::string(kProtobufMagic) + "\x08\x01", StatusCode::kBadRequest,
       "proto: wrong wireType = 0 for field TypeMeta"},
      {std::string(kProtobufMagic) + std::string(1, '\0'), StatusCode::kBadRequest,
       "proto: Unknown: illegal tag 0 (wire type 0)"},
      {std::string(kProtobufMagic) + "\x0c", StatusCode::kBadRequest,
       "proto: Unknown: wiretype end group for non-group"},
      {std::string(kProtobufMagic) + "\x2b", StatusCode::kBadRequest, "proto: illegal wireType 3"},
      {std::string(kProtobufMagic), StatusCode::kBadRequest,
       "Object 'Kind' is missing in protobuf body"},
      {Envelope("v1", "Pod", ""), StatusCode::kUnsupportedMediaType,
       "the body of the request was in an unknown format - accepted media types include: "
       "application/json, application/yaml"},
      {Envelope("v1", "Namespace", Bytes(1, Int(1, 5))), StatusCode::kBadRequest,
       "proto: wrong wireType = 0 for field Name"},
      {Envelope("v1", "Namespace", Bytes(1, Bytes(7, "x"))), StatusCode::kBadRequest,
       "proto: wrong wireType = 2 for field Generation"},
      {Envelope("v1", "Namespace", Bytes(1, Bytes(11, Int(1, 1)))), StatusCode::kBadRequest,
       "proto: wrong wireType = 0 for field key"},
      {Envelope("v1", "Namespace", Bytes(1, Bytes(8, Bytes(1, "x")))), StatusCode::kBadRequest,
       "proto: wrong wireType = 2 for field Seconds"},
      {Envelope("v1", "DeleteOptions", "\x12\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01"),
       StatusCode::kBadRequest, "proto: negative length found during unmarshaling"},
  };
  for (const Row& row : rows) {
    Result<rapidjson::Document> d = DecodeProtobufBody(row.body);
    ASSERT_FALSE(d) << row.message;
    EXPECT_EQ(d.error().code(), row.code) << row.message;
    EXPECT_EQ(d.error().message(), row.message);
  }
}

// Every truncation and thousands of random byte flips of valid bodies: no crash, no hang, and
// every success is a JSON object.
TEST(ProtobufDecode, TruncationsAndByteFlipsNeverCrash) {
  std::string meta = Bytes(1, "x") + Bytes(8, Int(1, 1)) +
                     Bytes(11, Bytes(1, "k") + Bytes(2, "v")) +
                     Bytes(13, Bytes(1, "K") + Int(7, 1)) + Bytes(14, "f");
  const std::string bodies[] = {
      kCreateNamespace,
      kDrainDelete,
      Envelope("v1", "Namespace", Bytes(1, meta) + Bytes(2, Bytes(1, "kubernetes"))),
      Envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview",
               Bytes(2, Bytes(1, Bytes(2, "get") + Bytes(5, "pods") + Bytes(8, Bytes(1, "a=b"))))),
      Envelope("v1", "DeleteOptions", Int(1, 3) + Bytes(2, Bytes(1, "u")) + Bytes(5, "All")),
  };
  int successes = 0;
  for (const std::string& body : bodies) {
    ASSERT_TRUE(DecodeProtobufBody(body)) << Decode(body);
    for (size_t n = 0; n < body.size(); ++n) {
      Result<rapidjson::Document> d = DecodeProtobufBody(std::string_view(body).substr(0, n));
      if (d) {
        ++successes;
        EXPECT_TRUE(d->IsObject());
      }
    }
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    std::string body = bodies[rng() % std::size(bodies)];
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) {
      size_t at = rng() % body.size();
      if (rng() % 2) {
        body[at] = static_cast<char>(rng());
      } else {
        body[at] = static_cast<char>(body[at] ^ (1 << (rng() % 8)));
      }
    }
    Result<rapidjson::Document> d = DecodeProtobufBody(body);
    if (d) {
      ++successes;
      EXPECT_TRUE(d->IsObject());
      Json(*d);
    }
  }
  EXPECT_GT(successes, 0);
}

}  // namespace
}  // namespace kt::api
