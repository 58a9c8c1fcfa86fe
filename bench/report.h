// The JSON report of strata-bench:
//
//   {"machine": {...}, "commit": "<git rev-parse HEAD>", "suite": "quick|full",
//    "results": [{"workload": W, "system": S, "metric": M, "value": X, "unit": U,
//                 "params": {...}}]}
//
// params holds the dimensions that identify a measurement (threads, batch, wal, cache, phase...)
// plus one nested object "info" with what describes it without identifying it (runs, sample
// sizes, digests of analytics results, CDF points, time series). Two results are comparable —
// and a ratio between them is printed — when workload, metric and the identifying params agree.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::bench {

// A JSON object under construction: keys in insertion order, values already encoded.
class JsonObject {
 public:
  JsonObject& Str(std::string_view key, std::string_view value);
  JsonObject& Num(std::string_view key, double value);
  JsonObject& Int(std::string_view key, int64_t value);
  JsonObject& Bool(std::string_view key, bool value);
  JsonObject& Raw(std::string_view key, std::string_view json);  // value already JSON
  std::string ToJson() const;
  bool empty() const { return fields_.empty(); }
  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }
  // Value of a key as encoded JSON, or "" when absent.
  std::string Get(std::string_view key) const;

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

std::string JsonEscape(std::string_view s);  // with the quotes
std::string JsonNum(double v);               // finite numbers; NaN/inf become null

struct Result {
  std::string workload;
  std::string system;
  std::string metric;
  double value = 0;
  std::string unit;
  JsonObject params;  // identifying dimensions
  JsonObject info;    // nested as params.info
  std::string ToJson() const;
};

inline Result R(const std::string& workload, const std::string& system, const std::string& metric,
                double value, const std::string& unit, const JsonObject& params) {
  Result r;
  r.workload = workload;
  r.system = system;
  r.metric = metric;
  r.value = value;
  r.unit = unit;
  r.params = params;
  return r;
}

// Collected results of one process; children stream theirs to the parent through a pipe.
class ResultSink {
 public:
  void Add(Result r) { results_.push_back(std::move(r)); }
  std::vector<Result>& results() { return results_; }
  const std::vector<Result>& results() const { return results_; }

 private:
  std::vector<Result> results_;
};

// Appends one "results_agree" result (system "all", value 1 or 0, the digests in info) per
// workload and graph for which two or more systems reported a digest (warm runs; cold ones
// compute the same), and warns on stderr when they differ.
void CheckDigests(std::vector<Result>* rs);

// Length-prefixed serialization of results (child -> parent).
std::string SerializeResults(const std::vector<Result>& rs);
bool DeserializeResults(std::string_view bytes, std::vector<Result>* out);

// For every result of a StrataGraph system ("strata", "strata-mem") and every baseline
// ("rocksdb", "csr") result of the same workload and metric whose identifying params are a
// subset of the StrataGraph result's (same values), a result "<metric>_ratio" = strata / baseline
// with params + {"baseline": B}. Ratios are only formed within one report (one run).
std::vector<Result> ComputeRatios(const std::vector<Result>& rs);

// Writes the report. machine is a JSON object literal.
bool WriteReport(const std::string& path, const std::string& machine_json,
                 const std::string& commit, const std::string& suite,
                 const std::vector<Result>& rs);

}  // namespace strata::bench
