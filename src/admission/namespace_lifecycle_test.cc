// NamespaceLifecycle (upstream k8s.io/apiserver pkg/admission/plugin/namespace/lifecycle
// admission.go and admission_test.go): one row per request kind, against a lister with an Active
// and a Terminating namespace.
#include "admission/namespace_lifecycle.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

namespace kt::admission {
namespace {

Listers TwoNamespaces() {
  static const std::map<std::string, std::string, std::less<>> phases = {
      {"active", "Active"}, {"leaving", "Terminating"}, {"default", "Active"}};
  Listers l;
  l.namespaces.phase = [](std::string_view name) -> std::optional<std::string> {
    auto it = phases.find(name);
    if (it == phases.end()) return std::nullopt;
    return it->second;
  };
  return l;
}

TEST(NamespaceLifecycleTest, UpstreamCases) {
  struct Row {
    const char* why;
    Operation op;
    std::string_view group, resource, subresource, namespace_, name;
    // Empty: admitted. Else "Forbidden: <why>" or "NotFound: <resource>/<name>".
    std::string want;
  };
  const std::string terminating =
      "Forbidden: unable to create new content in namespace leaving because it is being "
      "terminated";
  const Row rows[] = {
      {"create in an active namespace", Operation::kCreate, "", "pods", "", "active", "p", ""},
      {"create in a missing namespace", Operation::kCreate, "", "pods", "", "missing", "p",
       "NotFound: namespaces/missing"},
      {"update in a missing namespace", Operation::kUpdate, "", "pods", "status", "missing", "p",
       "NotFound: namespaces/missing"},
      {"create in a terminating namespace", Operation::kCreate, "", "pods", "", "leaving", "p",
       terminating},
      {"events too", Operation::kCreate, "", "events", "", "leaving", "e", terminating},
      {"a binding is new content", Operation::kCreate, "", "pods", "binding", "leaving", "p",
       terminating},
      {"an eviction is new content", Operation::kCreate, "", "pods", "eviction", "leaving", "p",
       terminating},
      {"update in a terminating namespace", Operation::kUpdate, "", "pods", "", "leaving", "p", ""},
      {"delete in a terminating namespace", Operation::kDelete, "", "pods", "", "leaving", "p", ""},
      {"delete in a missing namespace", Operation::kDelete, "", "pods", "", "missing", "p", ""},
      {"cluster-scoped resources", Operation::kCreate, "", "nodes", "", "", "n", ""},
      {"a namespace itself", Operation::kCreate, "", "namespaces", "", "", "missing", ""},
      {"a terminating namespace's own update", Operation::kUpdate, "", "namespaces", "", "",
       "leaving", ""},
      {"delete default", Operation::kDelete, "", "namespaces", "", "", "default",
       "Forbidden: this namespace may not be deleted"},
      {"delete kube-system", Operation::kDelete, "", "namespaces", "", "", "kube-system",
       "Forbidden: this namespace may not be deleted"},
      {"delete kube-public", Operation::kDelete, "", "namespaces", "", "", "kube-public",
       "Forbidden: this namespace may not be deleted"},
      {"kube-node-lease is not immortal", Operation::kDelete, "", "namespaces", "", "",
       "kube-node-lease", ""},
      {"delete another namespace", Operation::kDelete, "", "namespaces", "", "", "active", ""},
  };
  NamespaceLifecycle plugin;
  const Listers listers = TwoNamespaces();
  for (const Row& row : rows) {
    Attributes a{.operation = row.op,
                 .group = row.group,
                 .resource = row.resource,
                 .subresource = row.subresource,
                 .namespace_ = row.namespace_,
                 .name = row.name};
    Verdict v = plugin.Admit(a, listers);
    std::string got;
    if (!v) {
      const Rejection& r = v.error();
      got = r.code == StatusCode::kNotFound ? "NotFound: " + r.resource + "/" + r.name
                                            : "Forbidden: " + r.message;
    }
    EXPECT_EQ(got, row.want) << row.why;
    EXPECT_TRUE(plugin.Validate(a, listers)) << row.why << ": the plugin only admits";
  }
}

TEST(NamespaceLifecycleTest, TerminatingCreateNamesTheCause) {
  NamespaceLifecycle plugin;
  Attributes a{
      .operation = Operation::kCreate, .resource = "pods", .namespace_ = "leaving", .name = "p"};
  Verdict v = plugin.Admit(a, TwoNamespaces());
  ASSERT_FALSE(v);
  ASSERT_EQ(v.error().causes.size(), 1u);
  EXPECT_EQ(v.error().causes[0].type, "NamespaceTerminating");
  EXPECT_EQ(v.error().causes[0].message, "namespace leaving is being terminated");
  EXPECT_EQ(v.error().causes[0].field, "metadata.namespace");
}

}  // namespace
}  // namespace kt::admission
