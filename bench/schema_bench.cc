// Field validation on the API write path (src/api/schema.h): PruneUnknownFields over the ~2.6 KB
// pod of api_load (bench/api_workload.h), clean and with problems; the schema's first-use parse
// and its memory.
//
//   build/bench/schema_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>
#include <string>

#include "api/codec.h"
#include "api/schema.h"
#include "api_workload.h"

namespace kt {
namespace {

rapidjson::Document ParsedPod(const std::string& json) {
  Result<rapidjson::Document> doc = api::ParseJson(json);
  if (!doc) std::abort();
  return std::move(*doc);
}

// The common case: nothing unknown, nothing twice; the body is walked and left as it is.
void BM_PruneUnknownFields_CleanPod(benchmark::State& state) {
  const std::string json = bench::ApiPodJson("ns-0", "pod-0", "node-1", 0);
  rapidjson::Document doc = ParsedPod(json);
  api::TypeRef pod = api::ServedSchema().FindKind("", "v1", "Pod");
  api::FieldProblems problems;
  for (auto _ : state) {
    api::PruneUnknownFields(doc, pod, doc.GetAllocator(), &problems);
    benchmark::DoNotOptimize(problems.messages.data());
  }
  if (!problems.messages.empty()) state.SkipWithError("the pod has problems");
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(json.size()));
  state.counters["pod_bytes"] = static_cast<double>(json.size());
  state.counters["schema_bytes"] = static_cast<double>(api::ServedSchema().MemoryBytes());
}
BENCHMARK(BM_PruneUnknownFields_CleanPod);

// A copy of the parsed pod: the baseline of the next benchmark, which must prune a fresh copy.
void BM_CopyPod(benchmark::State& state) {
  const rapidjson::Document doc = ParsedPod(bench::ApiPodJson("ns-0", "pod-0", "node-1", 0));
  for (auto _ : state) {
    rapidjson::Document copy;
    copy.CopyFrom(doc, copy.GetAllocator());
    benchmark::DoNotOptimize(copy.MemberCount());
  }
}
BENCHMARK(BM_CopyPod);

// Three unknown fields (root, spec, a toleration) and a label given twice: messages built,
// members erased, the duplicate merged. Includes a copy of the pod (BM_CopyPod).
void BM_PruneUnknownFields_PodWithProblems(benchmark::State& state) {
  std::string json = bench::ApiPodJson("ns-0", "pod-0", "node-1", 0);
  json.replace(json.find(R"("kind":"Pod",)"), 13, R"("kind":"Pod","extra":1,)");
  json.replace(json.find(R"("nodeName")"), 10, R"("nodeNam":1,"nodeName")");
  json.replace(json.find(R"("tolerationSeconds")"), 19,
               R"("tolerationSecond":1,"tolerationSeconds")");
  json.replace(json.find(R"("tier":)"), 7, R"("app":"x","tier":)");
  const rapidjson::Document doc = ParsedPod(json);
  api::TypeRef pod = api::ServedSchema().FindKind("", "v1", "Pod");
  for (auto _ : state) {
    rapidjson::Document copy;
    copy.CopyFrom(doc, copy.GetAllocator());
    api::FieldProblems problems;
    api::PruneUnknownFields(copy, pod, copy.GetAllocator(), &problems);
    if (problems.messages.size() != 4) state.SkipWithError("expected 4 problems");
    benchmark::DoNotOptimize(problems.messages.data());
  }
}
BENCHMARK(BM_PruneUnknownFields_PodWithProblems);

// What the first ServedSchema() call costs: parsing served-schema.json into the compact form.
void BM_ParseServedSchema(benchmark::State& state) {
  std::ifstream in(std::string(KUBETAINT_SOURCE_DIR) +
                   "/third_party/kubernetes-openapi/served-schema.json");
  std::stringstream text;
  text << in.rdbuf();
  const std::string json = text.str();
  size_t bytes = 0;
  for (auto _ : state) {
    Result<std::unique_ptr<const api::Schema>> schema = api::Schema::Parse(json);
    if (!schema) {
      state.SkipWithError(schema.error().message().c_str());
      break;
    }
    bytes = (*schema)->MemoryBytes();
  }
  state.counters["json_bytes"] = static_cast<double>(json.size());
  state.counters["schema_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_ParseServedSchema)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kt

BENCHMARK_MAIN();
