// Priority admission (upstream plugin/pkg/admission/priority/admission.go and admission_test.go):
// semantics.md §11.10 rows PC6-PC8, the two system classes, and a second globalDefault class.
// PC1-PC5 are validation, in server/registry_test.cc.
#include "admission/priority.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "api/codec.h"
#include "api/scheduling.h"

namespace kt::admission {
namespace {

api::PriorityClass Class(std::string name, int32_t value, bool global_default = false,
                         std::string policy = "PreemptLowerPriority") {
  api::PriorityClass pc;
  pc.meta.name = std::move(name);
  pc.value = value;
  pc.global_default = global_default;
  pc.preemption_policy = std::move(policy);
  return pc;
}

// The cluster's classes: the system ones plus `more`.
Listers Classes(std::vector<api::PriorityClass> more) {
  std::span<const api::PriorityClass> system = api::SystemPriorityClasses();
  more.insert(more.end(), system.begin(), system.end());
  Listers l;
  l.priority_classes.for_each = [more](const auto& fn) {
    for (const api::PriorityClass& pc : more) fn(pc);
  };
  l.priority_classes.get = [more](std::string_view name) -> std::optional<api::PriorityClass> {
    for (const api::PriorityClass& pc : more) {
      if (pc.meta.name == name) return pc;
    }
    return std::nullopt;
  };
  return l;
}

// "<priority> <priorityClassName> <preemptionPolicy>" of the pod created with `spec`, or
// "Forbidden: <why>".
std::string Created(const Listers& listers, const std::string& spec) {
  Result<rapidjson::Document> pod =
      api::ParseJson(R"({"metadata":{"name":"p"},"spec":)" + spec + "}");
  EXPECT_TRUE(pod);
  Attributes a{.operation = Operation::kCreate,
               .resource = "pods",
               .namespace_ = "default",
               .name = "p",
               .object = &*pod};
  Verdict v = Priority().Admit(a, listers);
  if (!v) return "Forbidden: " + v.error().message;
  const rapidjson::Value& s = (*pod)["spec"];
  auto name = s.FindMember("priorityClassName");
  return std::to_string(s["priority"].GetInt()) + " " +
         (name == s.MemberEnd() ? "-" : name->value.GetString()) + " " +
         s["preemptionPolicy"].GetString();
}

TEST(PriorityTest, SemanticsTable) {
  struct Row {
    const char* id;
    std::vector<api::PriorityClass> classes;
    std::string spec;
    std::string want;
  };
  const Row rows[] = {
      {"PC6 a class that does not exist",
       {},
       R"({"priorityClassName":"nope"})",
       "Forbidden: no PriorityClass with name nope was found"},
      {"PC7 the lowest of two global defaults",
       {Class("a", 100, true), Class("b", 50, true, "Never")},
       "{}",
       "50 b Never"},
      {"PC8 no class, no global default", {Class("a", 100)}, "{}", "0 - PreemptLowerPriority"},
      {"system-node-critical",
       {},
       R"({"priorityClassName":"system-node-critical"})",
       "2000001000 system-node-critical PreemptLowerPriority"},
      {"system-cluster-critical",
       {},
       R"({"priorityClassName":"system-cluster-critical"})",
       "2000000000 system-cluster-critical PreemptLowerPriority"},
      {"a named class wins over the global default",
       {Class("a", 100, true), Class("c", 7)},
       R"({"priorityClassName":"c"})",
       "7 c PreemptLowerPriority"},
      {"the priority the class gives may be repeated",
       {Class("c", 7)},
       R"({"priorityClassName":"c","priority":7})",
       "7 c PreemptLowerPriority"},
      {"but no other",
       {Class("c", 7)},
       R"({"priorityClassName":"c","priority":8})",
       "Forbidden: the integer value of priority (8) must not be provided in pod spec; priority "
       "admission controller computed 7 from the given PriorityClass name"},
  };
  for (const Row& r : rows) EXPECT_EQ(Created(Classes(r.classes), r.spec), r.want) << r.id;
}

TEST(PriorityTest, OnlyOneGlobalDefault) {
  const Listers listers = Classes({Class("a", 100, true)});
  EXPECT_EQ(
      ValidatePriorityClassDefault(Class("b", 5, true), /*create=*/true, listers.priority_classes)
          .message(),
      "PriorityClass a is already marked as default. Only one default can exist");
  EXPECT_TRUE(
      ValidatePriorityClassDefault(Class("a", 100, true), false, listers.priority_classes).ok());
  EXPECT_TRUE(
      ValidatePriorityClassDefault(Class("b", 5, false), true, listers.priority_classes).ok());
}

}  // namespace
}  // namespace kt::admission
