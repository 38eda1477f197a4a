#include "api/interned.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "api/codec.h"
#include "api/types.h"

namespace kt::api {
namespace {

// A pod of one workload: replicas differ in name, uid and node only.
std::string ReplicaJson(int i, std::string_view cpu = "100m") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-)" + std::to_string(i) +
         R"(","namespace":"default","uid":"u-)" + std::to_string(i) +
         R"(","labels":{"app":"web","tier":"front"},"annotations":{"a":"1"},)"
         R"("ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-1",)"
         R"("uid":"rs-1","controller":true}],"finalizers":["example.com/f"]},)"
         R"("spec":{"nodeName":"node-)" +
         std::to_string(i) + R"(","containers":[{"name":"app","resources":{"requests":{"cpu":")" +
         std::string(cpu) +
         R"("}}}],"tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute",)"
         R"("tolerationSeconds":300}],"nodeSelector":{"disk":"ssd"}}})";
}

Pod DecodeReplica(int i, std::string_view cpu = "100m") {
  Result<rapidjson::Document> doc = ParseJson(ReplicaJson(i, cpu));
  EXPECT_TRUE(doc.has_value());
  Result<Pod> pod = DecodePod(*doc);
  EXPECT_TRUE(pod.has_value()) << (pod ? "" : pod.error().message());
  return pod ? std::move(*pod) : Pod();
}

TEST(InternedTest, ReplicasShareTheirListsOnceDecoded) {
  const Pod a = DecodeReplica(1);
  const Pod b = DecodeReplica(2);
  EXPECT_NE(a.meta.name, b.meta.name);
  EXPECT_TRUE(a.spec.tolerations.SharesWith(b.spec.tolerations));
  EXPECT_TRUE(a.spec.containers.SharesWith(b.spec.containers));
  EXPECT_TRUE(a.meta.owner_references.SharesWith(b.meta.owner_references));
  EXPECT_TRUE(a.meta.finalizers.SharesWith(b.meta.finalizers));
  EXPECT_EQ(&a.meta.labels.entries(), &b.meta.labels.entries());
  EXPECT_EQ(&a.meta.annotations.entries(), &b.meta.annotations.entries());
  EXPECT_EQ(&a.spec.node_selector.entries(), &b.spec.node_selector.entries());
  // The shared values are the decoded ones.
  ASSERT_EQ(a.spec.tolerations.size(), 1u);
  EXPECT_EQ(b.spec.tolerations[0].key, "k");
  EXPECT_EQ(b.spec.tolerations[0].toleration_seconds, 300);
  EXPECT_EQ(*b.meta.labels.Get("tier"), "front");
  EXPECT_EQ(b.meta.owner_references[0].uid, "rs-1");
  EXPECT_EQ(b.spec.containers[0].requests.Get("cpu")->MilliValue(), 100);
}

TEST(InternedTest, QuantitiesInAnotherFormatAreNotShared) {
  // 1Ki and 1024 are equal quantities, but each pod keeps the format it was written in.
  const Pod a = DecodeReplica(1, "1Ki");
  const Pod b = DecodeReplica(2, "1024");
  EXPECT_EQ(a.spec.containers, b.spec.containers);  // equal as values
  EXPECT_FALSE(a.spec.containers.SharesWith(b.spec.containers));
  EXPECT_EQ(a.spec.containers[0].requests.Get("cpu")->ToString(), "1Ki");
  EXPECT_EQ(b.spec.containers[0].requests.Get("cpu")->ToString(), "1024");
}

TEST(InternedTest, DifferentListsAreNotShared) {
  Result<rapidjson::Document> doc = ParseJson(
      R"({"metadata":{"name":"x","labels":{"app":"web","tier":"back"}},"spec":{"tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":301}]}})");
  ASSERT_TRUE(doc.has_value());
  Result<Pod> c = DecodePod(*doc);
  ASSERT_TRUE(c.has_value());
  const Pod a = DecodeReplica(1);
  EXPECT_FALSE(a.spec.tolerations.SharesWith(c->spec.tolerations));
  EXPECT_NE(a.spec.tolerations, c->spec.tolerations);
  EXPECT_NE(a.meta.labels, c->meta.labels);
  EXPECT_EQ(*c->meta.labels.Get("tier"), "back");
}

TEST(InternedTest, WritesCopyASharedListFirst) {
  Pod a = DecodeReplica(1);
  const Pod b = DecodeReplica(2);
  Toleration extra;
  extra.key = "extra";
  extra.op = "Exists";
  a.spec.tolerations.push_back(extra);
  a.meta.labels.Set("tier", "changed");
  EXPECT_EQ(a.spec.tolerations.size(), 2u);
  EXPECT_EQ(b.spec.tolerations.size(), 1u);
  EXPECT_EQ(*a.meta.labels.Get("tier"), "changed");
  EXPECT_EQ(*b.meta.labels.Get("tier"), "front");
  // A third replica still gets the pool's unchanged lists.
  const Pod c = DecodeReplica(3);
  EXPECT_TRUE(c.spec.tolerations.SharesWith(b.spec.tolerations));
  EXPECT_EQ(*c.meta.labels.Get("tier"), "front");
}

TEST(InternedTest, ListsReadLikeVectors) {
  SharedList<std::string> list = {"a", "b"};
  EXPECT_EQ(list.size(), 2u);
  EXPECT_EQ(list.front(), "a");
  EXPECT_EQ(list.back(), "b");
  const std::vector<std::string>& v = list;
  EXPECT_EQ(v, (std::vector<std::string>{"a", "b"}));
  std::span<const std::string> s = list;
  EXPECT_EQ(s.size(), 2u);
  list.clear();
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.begin(), list.end());
  SharedList<std::string> empty = std::vector<std::string>{};
  empty.Intern();
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty, list);
}

TEST(InternedTest, PoolForgetsListsNoObjectHolds) {
  // 5,000 distinct lists, each dropped at once: the pool sweeps them rather than growing.
  const size_t before = SharedList<std::string>::PoolSize();
  for (int i = 0; i < 5000; ++i) {
    SharedList<std::string> list = {"sweep-" + std::to_string(i)};
    list.Intern();
  }
  EXPECT_LT(SharedList<std::string>::PoolSize(), before + 2100);
  // A list still held survives every sweep and is still shared.
  SharedList<std::string> kept = {"kept"};
  kept.Intern();
  for (int i = 0; i < 5000; ++i) {
    SharedList<std::string> list = {"sweep2-" + std::to_string(i)};
    list.Intern();
  }
  SharedList<std::string> again = {"kept"};
  again.Intern();
  EXPECT_TRUE(again.SharesWith(kept));
}

}  // namespace
}  // namespace kt::api
