#include "api/selector.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace kt::api {
namespace {

StringMap Labels(std::initializer_list<std::pair<const char*, const char*>> kv) {
  StringMap m;
  for (const auto& [k, v] : kv) m.Set(k, v);
  return m;
}

std::string WithoutSpaces(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
  return s;
}

// ---- Label selectors -------------------------------------------------------------------------

// Upstream TestSelectorParse: good strings parse and print back without their spaces.
TEST(SelectorLabels, UpstreamGoodStringsRoundTrip) {
  for (const char* text :
       {"x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ", "!x", "x>1", "x>1,z<5"}) {
    Result<labels::Selector> s = labels::Parse(text);
    ASSERT_TRUE(s) << text << ": " << s.error().message();
    EXPECT_EQ(s->String(), WithoutSpaces(text)) << text;
  }
}

TEST(SelectorLabels, UpstreamBadStrings) {
  for (const char* text : {"x=a||y=b", "x==a==b", "!x=a", "x<a"}) {
    Result<labels::Selector> s = labels::Parse(text);
    ASSERT_FALSE(s) << text;
    EXPECT_EQ(s.error().code(), StatusCode::kBadRequest);
  }
}

TEST(SelectorLabels, DeterministicOrder) {
  EXPECT_EQ(labels::Parse("x=a,a=x")->String(), labels::Parse("a=x,x=a")->String());
}

// Upstream TestSetSelectorParser: validity and the parsed requirements (sorted by key).
TEST(SelectorLabels, UpstreamSetSelectorParser) {
  using labels::Operator;
  struct Row {
    const char* in;
    bool valid;
    std::string out;  // String() of the parse, when valid
  };
  const Row rows[] = {
      {"", true, ""},
      {"\rx", true, "x"},
      {"this-is-a-dns.domain.com/key-with-dash", true, "this-is-a-dns.domain.com/key-with-dash"},
      {"this-is-another-dns.domain.com/key-with-dash in (so,what)", true,
       "this-is-another-dns.domain.com/key-with-dash in (so,what)"},
      {"0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)", true,
       "0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)"},
      {"foo  in\t (abc)", true, "foo in (abc)"},
      {"x notin\n (abc)", true, "x notin (abc)"},
      {"x  notin\t\t\t(abc,def)", true, "x notin (abc,def)"},
      {"x in (abc,def)", true, "x in (abc,def)"},
      {"x in (abc,)", true, "x in (,abc)"},
      {"x in ()", true, "x in ()"},
      {"x notin (abc,def),bar,z in (),w", true, "bar,w,x notin (abc,def),z in ()"},
      {"x,y in (a)", true, "x,y in (a)"},
      {"x=a", true, "x=a"},
      {"x>1", true, "x>1"},
      {"x<7", true, "x<7"},
      {"x=a,y!=b", true, "x=a,y!=b"},
      {"x=a,y!=b,z in (h,i,j)", true, "x=a,y!=b,z in (h,i,j)"},
      {"x=a||y=b", false, ""},
      {"x,y", true, "x,y"},
      {",x,y", false, ""},
      {"x nott in (y)", false, ""},
      {"x notin ( )", true, "x notin ()"},
      {"x notin (, a)", true, "x notin (,a)"},
      {"a in (xyz),", false, ""},
      {"a in (xyz)b notin ()", false, ""},
      {"a ", true, "a"},
      {"a in (x,y,notin, z,in)", true, "a in (in,notin,x,y,z)"},
      {"a in (xyz abc)", false, ""},
      {"a notin(", false, ""},
      {"a (", false, ""},
      {"(", false, ""},
  };
  for (const Row& row : rows) {
    Result<labels::Selector> s = labels::Parse(row.in);
    EXPECT_EQ(static_cast<bool>(s), row.valid) << row.in;
    if (s && row.valid) {
      EXPECT_EQ(s->String(), row.out) << row.in;
    }
  }
}

TEST(SelectorLabels, ErrorMessagesAsUpstream) {
  struct Row {
    const char* in;
    std::string message;
  };
  const Row rows[] = {
      {"x=a,", "found '', expected: identifier after ','"},
      {",x", "found ',', expected: !, identifier, or 'end of string'"},
      {"a in (xyz)b notin ()", "found 'b', expected: ',' or 'end of string'"},
      {"x nott in (y)",
       "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt"},
      {"a notin(", "unable to parse requirement: found '', expected: ',', ')' or identifier"},
      {"a in (xyz abc)", "unable to parse requirement: found 'abc', expected: ',' or ')'"},
      {"a (", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"},
      {"a in b", "unable to parse requirement: found 'b' expected: '('"},
      {"x<a",
       "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, "
       "the value must be an integer"},
      {"!", "unable to parse requirement: found '', expected: identifier"},
  };
  for (const Row& row : rows) {
    Result<labels::Selector> s = labels::Parse(row.in);
    ASSERT_FALSE(s) << row.in;
    EXPECT_EQ(s.error().message(), row.message) << row.in;
  }
}

TEST(SelectorLabels, KeyAndValueValidationMessages) {
  Result<labels::Selector> bad_key = labels::Parse("-x=1");
  ASSERT_FALSE(bad_key);
  EXPECT_TRUE(bad_key.error().message().starts_with(
      "unable to parse requirement: <nil>: Invalid value: \"-x\": name part "))
      << bad_key.error().message();

  Result<labels::Selector> bad_value = labels::Parse("x=a||y=b");
  ASSERT_FALSE(bad_value);
  EXPECT_TRUE(bad_value.error().message().starts_with(
      "unable to parse requirement: values[0][x]: Invalid value: \"a||y\": "))
      << bad_value.error().message();

  EXPECT_FALSE(labels::Parse(std::string(254, 'a')));        // key too long
  EXPECT_FALSE(labels::Parse("x=" + std::string(64, 'a')));  // value too long
  EXPECT_TRUE(labels::Parse("1234 in (bar)"));
}

// Upstream TestSelectorMatches and TestRequirementSelectorMatching.
TEST(SelectorLabels, UpstreamMatches) {
  struct Row {
    const char* selector;
    StringMap labels;
    bool match;
  };
  const StringMap fb = Labels({{"foo", "bar"}, {"baz", "blah"}});
  const Row rows[] = {
      {"", Labels({{"x", "y"}}), true},
      {"x=y", Labels({{"x", "y"}}), true},
      {"x=y,z=w", Labels({{"x", "y"}, {"z", "w"}}), true},
      {"x!=y,z!=w", Labels({{"x", "z"}, {"z", "a"}}), true},
      {"notin=in", Labels({{"notin", "in"}}), true},
      {"x", Labels({{"x", "z"}}), true},
      {"!x", Labels({{"y", "z"}}), true},
      {"x>1", Labels({{"x", "2"}}), true},
      {"x<1", Labels({{"x", "0"}}), true},
      {"x=z", Labels({}), false},
      {"x=y", Labels({{"x", "z"}}), false},
      {"x=y,z=w", Labels({{"x", "w"}, {"z", "w"}}), false},
      {"x!=y,z!=w", Labels({{"x", "z"}, {"z", "w"}}), false},
      {"x", Labels({{"y", "z"}}), false},
      {"!x", Labels({{"x", "z"}}), false},
      {"x>1", Labels({{"x", "0"}}), false},
      {"x<1", Labels({{"x", "2"}}), false},
      {"foo=bar", fb, true},
      {"baz=blah", fb, true},
      {"foo=bar,baz=blah", fb, true},
      {"foo=blah", fb, false},
      {"baz=bar", fb, false},
      {"foo=bar,foobar=bar,baz=blah", fb, false},
      {"x in (foo),y notin (alpha)", Labels({{"x", "foo"}, {"y", "baz"}}), true},
      {"x in (foo),y in (alpha)", Labels({{"x", "foo"}, {"y", "baz"}}), false},
      {"x notin (),y", Labels({{"y", ""}}), true},
      {"!x,y", Labels({{"y", ""}}), true},
      {"x notin (),!y", Labels({{"y", ""}}), false},
      {"x in ()", Labels({{"y", "baz"}}), false},
      {"z>1", Labels({{"z", "2"}}), true},
      {"z>1", Labels({{"z", "v2"}}), false},
      {"app in (web, api), tier!=db", Labels({{"app", "api"}, {"tier", "fe"}}), true},
  };
  for (const Row& row : rows) {
    Result<labels::Selector> s = labels::Parse(row.selector);
    ASSERT_TRUE(s) << row.selector << ": " << s.error().message();
    EXPECT_EQ(s->Matches(row.labels), row.match) << row.selector;
  }
}

TEST(SelectorLabels, RequiresExactMatch) {
  EXPECT_EQ(labels::Parse("app=web,zone in (a)")->RequiresExactMatch("app"), "web");
  EXPECT_EQ(labels::Parse("app=web,zone in (a)")->RequiresExactMatch("zone"), "a");
  EXPECT_EQ(labels::Parse("zone in (a,b)")->RequiresExactMatch("zone"), std::nullopt);
  EXPECT_EQ(labels::Parse("app!=web")->RequiresExactMatch("app"), std::nullopt);
  EXPECT_TRUE(labels::Parse("")->Empty());
}

TEST(SelectorLabels, NulByteEndsTheSelectorAsUpstream) {
  // Upstream's lexer reads 0 at the end of input, so a NUL byte reads as the end of a token.
  EXPECT_EQ(labels::Parse(std::string("x\0", 2))->String(), "x");
  EXPECT_EQ(labels::Parse(std::string("x,\0", 3)).error().message(),
            "found '', expected: identifier after ','");
  EXPECT_FALSE(labels::Parse(std::string("a\0b", 3)));
}

// ---- Field selectors -------------------------------------------------------------------------

// Upstream TestSplitTerms / TestSplitTerm, through the parser.
TEST(SelectorFields, UpstreamTermsAndEscapes) {
  using fields::Term;
  auto terms = [](std::string_view text) { return fields::ParseTerms(text); };
  EXPECT_EQ(*terms(""), std::vector<Term>{});
  EXPECT_EQ(
      *terms("a=avalue,b==bvalue,c!=cvalue"),
      (std::vector<Term>{{"a", true, "avalue"}, {"b", true, "bvalue"}, {"c", false, "cvalue"}}));
  EXPECT_EQ(*terms("a=a,"), (std::vector<Term>{{"a", true, "a"}}));
  EXPECT_EQ(*terms(",a=a"), (std::vector<Term>{{"a", true, "a"}}));
  // Terms are sorted as text: "k2=…" sorts before "k=…".
  EXPECT_EQ(*terms(R"(k=\,,k2=v2)"), (std::vector<Term>{{"k2", true, "v2"}, {"k", true, ","}}));
  EXPECT_EQ(*terms(R"(k=\\,k2=v2)"), (std::vector<Term>{{"k2", true, "v2"}, {"k", true, "\\"}}));
  EXPECT_EQ(*terms(R"(k=\\\,,k2=v2)"), (std::vector<Term>{{"k2", true, "v2"}, {"k", true, "\\,"}}));
  EXPECT_EQ(*terms("함=수,목=록"), (std::vector<Term>{{"목", true, "록"}, {"함", true, "수"}}));
  EXPECT_EQ(*terms(R"(k=\=)"), (std::vector<Term>{{"k", true, "="}}));
  EXPECT_EQ(*terms("involvedObject.namespace="),
            (std::vector<Term>{{"involvedObject.namespace", true, ""}}));

  EXPECT_EQ(terms(R"(k=\a\b\)").error().message(),
            "invalid field selector: invalid escape sequence: \\a");
  EXPECT_EQ(terms(R"(k=\)").error().message(),
            "invalid field selector: invalid escape sequence: \\");
  EXPECT_EQ(terms("x==a==b").error().message(),
            "invalid field selector: unescaped character in value: 61");
}

// Upstream fields TestSelectorParse: good strings round-trip, bad strings fail.
TEST(SelectorFields, UpstreamParse) {
  for (const char* text : {"x=a,y=b,z=c", "", "x!=a,y=b", R"(x=a||y\=b)", R"(x=a\=\=b)"}) {
    Result<std::vector<fields::Term>> t = fields::ParseTerms(text);
    ASSERT_TRUE(t) << text;
    std::string s;
    for (const fields::Term& term : *t) {
      if (!s.empty()) s += ',';
      s += term.field + (term.equals ? "=" : "!=") + fields::EscapeValue(term.value);
    }
    EXPECT_EQ(s, text);
  }
  for (const char* text : {"x=a||y=b", "x==a==b", "x=a,b", "x in (a)", "x in (a,b,c)", "x"}) {
    EXPECT_FALSE(fields::ParseTerms(text)) << text;
  }
  EXPECT_EQ(fields::ParseTerms("x=a,b").error().message(),
            "invalid selector: 'x=a,b'; can't understand 'b'");
}

TEST(SelectorFields, KindSupportAndErrors) {
  struct Row {
    const char* kind;
    const char* selector;
    std::string error;  // empty: accepted
  };
  const Row rows[] = {
      {"Pod", "spec.nodeName=node-1,status.phase!=Succeeded,status.phase!=Failed", ""},
      {"Pod",
       "metadata.name=a,metadata.namespace=b,spec.restartPolicy=Always,spec.schedulerName=x,"
       "spec.serviceAccountName=y,spec.hostNetwork=true,status.podIP=1.2.3.4,"
       "status.nominatedNodeName=n,status.podIPs=z",
       ""},
      {"Pod", "spec.host=node-1", ""},
      {"Pod", "spec.bogus=x", "field label not supported: spec.bogus"},
      {"Node", "metadata.name=node-1,spec.unschedulable=true", ""},
      {"Node", "metadata.namespace=", "field label not supported: metadata.namespace"},
      {"Node", "spec.nodeName=x", "field label not supported: spec.nodeName"},
      {"Event",
       "involvedObject.name=node-1,involvedObject.namespace=,involvedObject.kind=Node,"
       "involvedObject.uid=abc,involvedObject.apiVersion=v1,involvedObject.resourceVersion=1,"
       "involvedObject.fieldPath=x,reason=r,reportingComponent=c,source=s,type=Normal,"
       "metadata.name=e,metadata.namespace=default",
       ""},
      {"Event", "spec.nodeName=x", "field label not supported: spec.nodeName"},
      {"Namespace", "metadata.name=a,status.phase=Active", ""},
      {"Namespace", "metadata.namespace=a", "field label not supported: metadata.namespace"},
      {"Lease", "metadata.name=node-1,metadata.namespace=kube-node-lease", ""},
      {"PriorityClass", "metadata.name=high", ""},
      {"DaemonSet", "spec.nodeName=x", "field label not supported: spec.nodeName"},
      // Parse errors come before label checks.
      {"Pod", "spec.bogus", "invalid selector: 'spec.bogus'; can't understand 'spec.bogus'"},
  };
  for (const Row& row : rows) {
    Result<fields::Selector> s = fields::ParseSelector(row.selector, row.kind);
    if (row.error.empty()) {
      EXPECT_TRUE(s) << row.kind << " " << row.selector << ": " << s.error().message();
    } else {
      ASSERT_FALSE(s) << row.kind << " " << row.selector;
      EXPECT_EQ(s.error().code(), StatusCode::kBadRequest);
      EXPECT_EQ(s.error().message(), row.error);
    }
  }
}

TEST(SelectorFields, MatchesPodJsonAndExposesIndexableTerms) {
  rapidjson::Document pod;
  pod.Parse(R"({"metadata":{"name":"w1","namespace":"default"},
                "spec":{"nodeName":"node-2","restartPolicy":"Always"},
                "status":{"phase":"Running","podIPs":[{"ip":"10.0.0.7"}]}})");
  auto get = [&](fields::Field f) { return fields::FieldValue(pod, f); };
  struct Row {
    const char* selector;
    bool match;
  };
  const Row rows[] = {
      {"spec.nodeName=node-2", true},
      {"spec.nodeName==node-2,metadata.namespace=default", true},
      {"spec.nodeName=node-1", false},
      {"spec.nodeName=node-2,status.phase!=Succeeded,status.phase!=Failed", true},
      {"status.phase!=Running", false},
      {"spec.hostNetwork=false", true},
      {"status.podIP=10.0.0.7", true},
      {"spec.schedulerName=", true},
      {"status.podIPs=", true},
      {"spec.host=node-2", true},
      {"", true},
  };
  for (const Row& row : rows) {
    Result<fields::Selector> s = fields::ParseSelector(row.selector, "Pod");
    ASSERT_TRUE(s) << row.selector;
    EXPECT_EQ(s->Matches(get), row.match) << row.selector;
  }
  Result<fields::Selector> s =
      fields::ParseSelector("status.phase!=Failed,spec.nodeName=node-2", "Pod");
  EXPECT_EQ(s->RequiresExactMatch(fields::Field::kSpecNodeName), "node-2");
  EXPECT_EQ(s->RequiresExactMatch(fields::Field::kStatusPhase), std::nullopt);
  EXPECT_EQ(s->RequiresExactMatch(fields::Field::kMetadataName), std::nullopt);
  EXPECT_EQ(fields::ParseSelector("metadata.name=x", "Pod")
                ->RequiresExactMatch(fields::Field::kMetadataName),
            "x");
  EXPECT_EQ(s->String(), "spec.nodeName=node-2,status.phase!=Failed");
}

TEST(SelectorFields, EventAndNodeFieldValues) {
  rapidjson::Document event;
  event.Parse(R"({"metadata":{"name":"e1","namespace":"default"},
                  "involvedObject":{"kind":"Node","name":"node-1","uid":"node-1"},
                  "reason":"NodeNotReady","type":"Normal","reportingComponent":"kubelet"})");
  using F = fields::Field;
  EXPECT_EQ(fields::FieldValue(event, F::kSource), "kubelet");  // falls back to reportingComponent
  EXPECT_EQ(fields::FieldValue(event, F::kInvolvedObjectNamespace), "");
  Result<fields::Selector> describe = fields::ParseSelector(
      "involvedObject.name=node-1,involvedObject.namespace=,involvedObject.kind=Node,"
      "involvedObject.uid=node-1",
      "Event");
  ASSERT_TRUE(describe);
  EXPECT_TRUE(describe->Matches([&](F f) { return fields::FieldValue(event, f); }));

  rapidjson::Document node;
  node.Parse(R"({"metadata":{"name":"node-1"},"spec":{"unschedulable":true}})");
  EXPECT_EQ(fields::FieldValue(node, F::kSpecUnschedulable), "true");
  EXPECT_EQ(fields::FieldValue(node, F::kMetadataNamespace), "");
}

}  // namespace
}  // namespace kt::api
