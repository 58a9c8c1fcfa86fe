#include "bench/report.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <utility>

namespace strata::bench {

std::string JsonEscape(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += "\"";
  return out;
}

std::string JsonNum(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%.0f", v);
    return buf;
  }
  char buf[40];
  snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

JsonObject& JsonObject::Str(std::string_view key, std::string_view value) {
  return Raw(key, JsonEscape(value));
}
JsonObject& JsonObject::Num(std::string_view key, double value) { return Raw(key, JsonNum(value)); }
JsonObject& JsonObject::Int(std::string_view key, int64_t value) {
  return Raw(key, std::to_string(value));
}
JsonObject& JsonObject::Bool(std::string_view key, bool value) {
  return Raw(key, value ? "true" : "false");
}
JsonObject& JsonObject::Raw(std::string_view key, std::string_view json) {
  for (auto& f : fields_) {
    if (f.first == key) {
      f.second = std::string(json);
      return *this;
    }
  }
  fields_.emplace_back(std::string(key), std::string(json));
  return *this;
}

std::string JsonObject::Get(std::string_view key) const {
  for (const auto& f : fields_) {
    if (f.first == key) return f.second;
  }
  return "";
}

std::string JsonObject::ToJson() const {
  std::string out = "{";
  bool first = true;
  for (const auto& f : fields_) {
    if (!first) out += ", ";
    first = false;
    out += JsonEscape(f.first);
    out += ": ";
    out += f.second;
  }
  out += "}";
  return out;
}

std::string Result::ToJson() const {
  JsonObject p = params;
  if (!info.empty()) p.Raw("info", info.ToJson());
  std::string out = "{\"workload\": " + JsonEscape(workload) + ", \"system\": " +
                    JsonEscape(system) + ", \"metric\": " + JsonEscape(metric) +
                    ", \"value\": " + JsonNum(value) + ", \"unit\": " + JsonEscape(unit) +
                    ", \"params\": " + p.ToJson() + "}";
  return out;
}

namespace {

void PutStr(std::string* out, std::string_view s) {
  uint32_t n = static_cast<uint32_t>(s.size());
  out->append(reinterpret_cast<const char*>(&n), 4);
  out->append(s);
}

bool GetStr(std::string_view* in, std::string* s) {
  if (in->size() < 4) return false;
  uint32_t n;
  memcpy(&n, in->data(), 4);
  in->remove_prefix(4);
  if (in->size() < n) return false;
  s->assign(in->data(), n);
  in->remove_prefix(n);
  return true;
}

void PutObject(std::string* out, const JsonObject& o) {
  PutStr(out, std::to_string(o.fields().size()));
  for (const auto& f : o.fields()) {
    PutStr(out, f.first);
    PutStr(out, f.second);
  }
}

bool GetObject(std::string_view* in, JsonObject* o) {
  std::string n;
  if (!GetStr(in, &n)) return false;
  size_t count = std::strtoull(n.c_str(), nullptr, 10);
  for (size_t i = 0; i < count; ++i) {
    std::string k, v;
    if (!GetStr(in, &k) || !GetStr(in, &v)) return false;
    o->Raw(k, v);
  }
  return true;
}

}  // namespace

std::string SerializeResults(const std::vector<Result>& rs) {
  std::string out;
  for (const Result& r : rs) {
    PutStr(&out, r.workload);
    PutStr(&out, r.system);
    PutStr(&out, r.metric);
    char buf[40];
    snprintf(buf, sizeof(buf), "%.17g", r.value);
    PutStr(&out, buf);
    PutStr(&out, r.unit);
    PutObject(&out, r.params);
    PutObject(&out, r.info);
  }
  return out;
}

bool DeserializeResults(std::string_view in, std::vector<Result>* out) {
  while (!in.empty()) {
    Result r;
    std::string v;
    if (!GetStr(&in, &r.workload) || !GetStr(&in, &r.system) || !GetStr(&in, &r.metric) ||
        !GetStr(&in, &v) || !GetStr(&in, &r.unit) || !GetObject(&in, &r.params) ||
        !GetObject(&in, &r.info)) {
      return false;
    }
    r.value = std::strtod(v.c_str(), nullptr);
    out->push_back(std::move(r));
  }
  return true;
}

std::vector<Result> ComputeRatios(const std::vector<Result>& rs) {
  std::vector<Result> out;
  auto is_strata = [](const std::string& s) { return s == "strata" || s == "strata-mem"; };
  auto is_base = [](const std::string& s) { return s == "rocksdb" || s == "csr"; };
  for (const Result& a : rs) {
    if (!is_strata(a.system) || a.metric.find("_ratio") != std::string::npos) continue;
    for (const Result& b : rs) {
      if (!is_base(b.system) || b.workload != a.workload || b.metric != a.metric) continue;
      bool match = true;
      for (const auto& f : b.params.fields()) {
        if (a.params.Get(f.first) != f.second) {
          match = false;
          break;
        }
      }
      if (!match || b.value == 0 || !std::isfinite(b.value) || !std::isfinite(a.value)) continue;
      Result r;
      r.workload = a.workload;
      r.system = a.system;
      r.metric = a.metric + "_ratio";
      r.value = a.value / b.value;
      r.unit = "x";
      r.params = a.params;
      r.params.Str("baseline", b.system);
      r.info.Num("strata_value", a.value);
      r.info.Num("baseline_value", b.value);
      r.info.Str("baseline_unit", b.unit);
      out.push_back(std::move(r));
    }
  }
  return out;
}

bool WriteReport(const std::string& path, const std::string& machine_json,
                 const std::string& commit, const std::string& suite,
                 const std::vector<Result>& rs) {
  std::ofstream f(path);
  if (!f) return false;
  f << "{\n  \"machine\": " << machine_json << ",\n  \"commit\": " << JsonEscape(commit)
    << ",\n  \"suite\": " << JsonEscape(suite) << ",\n  \"results\": [\n";
  for (size_t i = 0; i < rs.size(); ++i) {
    f << "    " << rs[i].ToJson() << (i + 1 < rs.size() ? ",\n" : "\n");
  }
  f << "  ]\n}\n";
  return static_cast<bool>(f);
}

// Results whose info carries a digest: every system must report the same per workload and
// graph (a kernel runs on the main graph and on the ingest_large one, which differ).
void CheckDigests(std::vector<Result>* rs) {
  // (workload, graph as raw JSON, "" without one) -> system -> digest
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> by;
  for (const Result& r : *rs) {
    std::string d = r.info.Get("digest");
    if (d.empty()) continue;
    std::string cache = r.params.Get("cache");
    if (cache == "\"cold\"") continue;  // the same computation as warm
    by[{r.workload, r.params.Get("graph")}][r.system] = d;
  }
  for (const auto& [key, systems] : by) {
    const auto& [w, graph] = key;
    if (systems.size() < 2) continue;
    std::set<std::string> distinct;
    JsonObject info;
    for (const auto& [s, d] : systems) {
      distinct.insert(d);
      info.Raw(s, d);
    }
    Result r;
    r.workload = w;
    r.system = "all";
    r.metric = "results_agree";
    r.value = distinct.size() == 1 ? 1 : 0;
    r.unit = "bool";
    r.info = info;
    if (!graph.empty()) r.params.Raw("graph", graph);
    if (distinct.size() != 1) {
      fprintf(stderr, "WARNING: %s (graph %s): systems disagree: %s\n", w.c_str(),
              graph.empty() ? "-" : graph.c_str(), info.ToJson().c_str());
    }
    rs->push_back(r);
  }
}

}  // namespace strata::bench
