#include "graphio/graphalytics_io.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace strata::graphio {

namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f'; }

std::string_view Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && IsBlank(s[b])) b++;
  while (e > b && IsBlank(s[e - 1])) e--;
  return s.substr(b, e - b);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The whole of s is an unsigned decimal that fits in 64 bits.
bool ParseU64(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  uint64_t v = 0;
  for (char ch : s) {
    unsigned d = static_cast<unsigned>(ch - '0');
    if (d > 9) return false;
    if (__builtin_mul_overflow(v, uint64_t{10}, &v) || __builtin_add_overflow(v, d, &v)) {
      return false;
    }
  }
  *out = v;
  return true;
}

// The whole of s is a double (a leading '+' allowed; "Infinity" and "inf" in any case).
bool ParseDouble(std::string_view s, double* out) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

std::vector<std::string> SplitList(std::string_view s) {
  std::vector<std::string> out;
  while (true) {
    size_t comma = s.find(',');
    std::string_view item = Trim(s.substr(0, comma));
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

std::string Excerpt(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < 100; i++) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out.push_back(c == '\t' || (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?');
  }
  if (s.size() > 100) out += "...";
  return out;
}

std::string LineError(const std::string& path, uint64_t line, const std::string& what) {
  return path + ": line " + std::to_string(line) + ": " + what;
}

Status OpenLines(const std::string& path, std::unique_ptr<LineReader>* lines) {
  std::unique_ptr<ByteSource> src;
  Status s = NewFileSource(path, &src);
  if (!s.ok()) return s;
  *lines = std::make_unique<LineReader>(std::move(src));
  return Status::OK();
}

std::string Resolve(const std::string& dir, const std::string& file) {
  if (file.empty() || file[0] == '/') return file;
  return dir + "/" + file;
}

}  // namespace

bool GraphalyticsProperties::HasAlgorithm(std::string_view algorithm) const {
  const std::string a = Lower(algorithm);
  return std::find(algorithms.begin(), algorithms.end(), a) != algorithms.end();
}

std::string GraphalyticsProperties::Cite(const std::string& key) const {
  std::string c = "graph." + name + "." + key;
  auto it = line.find(key);
  if (it != line.end()) c += " (" + path + " line " + std::to_string(it->second) + ")";
  return c;
}

int GraphalyticsProperties::WeightColumn() const {
  const std::string wanted = sssp_weight_property.value_or("weight");
  for (size_t i = 0; i < edge_property_names.size(); i++) {
    if (edge_property_names[i] == wanted) return static_cast<int>(i);
  }
  return -1;
}

Status ReadGraphalyticsProperties(const std::string& path, GraphalyticsProperties* props) {
  std::unique_ptr<LineReader> lines;
  Status s = OpenLines(path, &lines);
  if (!s.ok()) return s;

  struct Entry {
    std::string key, value;
    uint64_t line;
  };
  std::vector<Entry> entries;
  std::string logical;  // a line with its '\' continuations joined
  uint64_t logical_start = 0;
  bool continued = false;
  auto finish_logical = [&]() -> Status {
    std::string_view l = logical;
    size_t sep = l.find_first_of("=:");
    if (sep == std::string_view::npos) sep = l.find_first_of(" \t");
    std::string_view key = Trim(l.substr(0, sep));
    std::string_view value = sep == std::string_view::npos ? "" : Trim(l.substr(sep + 1));
    if (key.empty()) {
      return Status::InvalidArgument(
          LineError(path, logical_start, "expected 'key = value', got: '" + Excerpt(l) + "'"));
    }
    entries.push_back({std::string(key), std::string(value), logical_start});
    return Status::OK();
  };
  while (true) {
    std::string_view line;
    bool eof = false;
    s = lines->Next(&line, &eof);
    if (!s.ok()) return s;
    if (eof) break;
    std::string_view t = Trim(line);
    if (!continued) {
      if (t.empty() || t[0] == '#' || t[0] == '!') continue;
      logical.clear();
      logical_start = lines->line_number();
    }
    continued = !t.empty() && t.back() == '\\';
    if (continued) t.remove_suffix(1);
    logical.append(t);
    if (continued) continue;
    s = finish_logical();
    if (!s.ok()) return s;
  }
  if (continued) {  // the file ended in a continuation
    s = finish_logical();
    if (!s.ok()) return s;
  }

  GraphalyticsProperties p;
  p.path = path;
  const size_t slash = path.rfind('/');
  p.directory = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.size() > 11 && base.compare(base.size() - 11, 11, ".properties") == 0) {
    base.resize(base.size() - 11);
  }

  // The dataset name: the file's base name if keys use it, else the one the keys agree on.
  auto uses = [&](const std::string& name) {
    const std::string prefix = "graph." + name + ".";
    return std::any_of(entries.begin(), entries.end(),
                       [&](const Entry& e) { return e.key.rfind(prefix, 0) == 0; });
  };
  if (uses(base)) {
    p.name = base;
  } else {
    for (const char* suffix : {".vertex-file", ".edge-file", ".directed"}) {
      const std::string_view sfx(suffix);
      for (const Entry& e : entries) {
        if (e.key.rfind("graph.", 0) == 0 && e.key.size() > 6 + sfx.size() &&
            e.key.compare(e.key.size() - sfx.size(), sfx.size(), sfx) == 0) {
          p.name = e.key.substr(6, e.key.size() - 6 - sfx.size());
          break;
        }
      }
      if (!p.name.empty()) break;
    }
    if (p.name.empty()) {
      return Status::InvalidArgument(path + ": no 'graph.<name>.*' keys found");
    }
  }

  const std::string prefix = "graph." + p.name + ".";
  std::map<std::string, uint64_t> line_of;
  for (const Entry& e : entries) {
    if (e.key.rfind(prefix, 0) != 0) continue;
    std::string k = e.key.substr(prefix.size());
    line_of[k] = e.line;
    p.line[k] = e.line;
    p.raw[k] = e.value;  // a repeated key: the last one wins, as in java.util.Properties
  }

  auto bad = [&](const std::string& k, const char* expected) {
    const std::string& v = p.raw[k];
    return Status::InvalidArgument(LineError(path, line_of[k],
                                             prefix + k + ": expected " + expected + ", got '" +
                                                 Excerpt(v) + "'"));
  };
  auto get_u64 = [&](const std::string& k, std::optional<uint64_t>* out) -> Status {
    auto it = p.raw.find(k);
    if (it == p.raw.end()) return Status::OK();
    uint64_t v;
    if (!ParseU64(it->second, &v)) return bad(k, "an unsigned integer");
    *out = v;
    return Status::OK();
  };

  if (auto it = p.raw.find("directed"); it != p.raw.end()) {
    const std::string v = Lower(it->second);
    if (v == "true") {
      p.directed = true;
    } else if (v == "false") {
      p.directed = false;
    } else {
      return bad("directed", "true or false");
    }
  }
  if (auto it = p.raw.find("vertex-file"); it != p.raw.end()) p.vertex_file = it->second;
  if (auto it = p.raw.find("edge-file"); it != p.raw.end()) p.edge_file = it->second;
  p.vertex_path = Resolve(p.directory, p.vertex_file.empty() ? p.name + ".v" : p.vertex_file);
  p.edge_path = Resolve(p.directory, p.edge_file.empty() ? p.name + ".e" : p.edge_file);
  if (auto it = p.raw.find("edge-properties.names"); it != p.raw.end()) {
    p.edge_property_names = SplitList(it->second);
  }
  if (auto it = p.raw.find("edge-properties.types"); it != p.raw.end()) {
    p.edge_property_types = SplitList(it->second);
  }
  if (auto it = p.raw.find("algorithms"); it != p.raw.end()) {
    for (const std::string& a : SplitList(it->second)) p.algorithms.push_back(Lower(a));
  }
  for (auto [key, field] : {std::pair{"meta.vertices", &p.meta_vertices},
                            std::pair{"meta.edges", &p.meta_edges},
                            std::pair{"bfs.source-vertex", &p.bfs_source_vertex},
                            std::pair{"cdlp.max-iterations", &p.cdlp_max_iterations},
                            std::pair{"pr.num-iterations", &p.pr_num_iterations},
                            std::pair{"sssp.source-vertex", &p.sssp_source_vertex}}) {
    s = get_u64(key, field);
    if (!s.ok()) return s;
  }
  if (auto it = p.raw.find("pr.damping-factor"); it != p.raw.end()) {
    double d;
    if (!ParseDouble(it->second, &d) || !(d >= 0.0 && d <= 1.0)) {
      return bad("pr.damping-factor", "a number in [0, 1]");
    }
    p.pr_damping_factor = d;
  }
  if (auto it = p.raw.find("sssp.weight-property"); it != p.raw.end()) {
    p.sssp_weight_property = it->second;
    if (std::find(p.edge_property_names.begin(), p.edge_property_names.end(), it->second) ==
        p.edge_property_names.end()) {
      return bad("sssp.weight-property", "one of edge-properties.names");
    }
  }
  *props = std::move(p);
  return Status::OK();
}

// Calls fn(trimmed, line, line_number) for each line of `path` that is neither blank nor a
// '#' comment; a non-OK status from fn stops the read and is returned.
template <typename Fn>
Status ForEachDataLine(const std::string& path, Fn&& fn) {
  std::unique_ptr<LineReader> lines;
  Status s = OpenLines(path, &lines);
  if (!s.ok()) return s;
  while (true) {
    std::string_view line;
    bool eof = false;
    s = lines->Next(&line, &eof);
    if (!s.ok()) return s;
    if (eof) return Status::OK();
    std::string_view t = Trim(line);
    if (t.empty() || t[0] == '#') continue;
    s = fn(t, line, lines->line_number());
    if (!s.ok()) return s;
  }
}

// Calls fn(record) for each record `reader` reads, to the end of its file; a read error, or a
// non-OK status from fn, stops the read and is returned.
template <typename Fn>
Status ForEachEdgeRecord(EdgeReader* reader, Fn&& fn) {
  while (true) {
    EdgeRecord r;
    bool eof = false;
    Status s = reader->Next(&r, &eof);
    if (!s.ok()) return s;
    if (eof) return Status::OK();
    s = fn(r);
    if (!s.ok()) return s;
  }
}

Status CheckGraphalyticsDataset(const GraphalyticsProperties& props, uint64_t vertices) {
  if (props.meta_vertices && *props.meta_vertices != vertices) {
    return Status::InvalidArgument(props.vertex_path + " holds " + std::to_string(vertices) +
                                   " vertices but " + props.Cite("meta.vertices") + " says " +
                                   std::to_string(*props.meta_vertices));
  }
  const int weight_column = props.WeightColumn();
  if (!props.meta_edges && props.directed && weight_column < 0) return Status::OK();
  std::unique_ptr<EdgeReader> reader;
  Status s = OpenGraphalyticsEdges(props, &reader);
  if (!s.ok()) return s;
  std::string weight_key = "edge-properties.names";
  if (props.sssp_weight_property) weight_key = "sssp.weight-property";
  uint64_t records = 0, inserts = 0;
  s = ForEachEdgeRecord(reader.get(), [&](const EdgeRecord& r) {
    ++records;
    if (r.op == EdgeOp::kInsert) ++inserts;
    const std::string at = props.edge_path + ": line " + std::to_string(reader->line_number());
    if (!props.directed && r.op == EdgeOp::kInsert && r.src > r.dst) {
      return Status::InvalidArgument(
          at + ": edge (" + std::to_string(r.src) + ", " + std::to_string(r.dst) +
          ") lists the larger ID first, but " + props.Cite("directed") +
          " says false (an undirected edge file lists each edge once, smaller ID first)");
    }
    if (weight_column >= 0 && r.op == EdgeOp::kInsert && reader->records_with_weight() != inserts) {
      return Status::InvalidArgument(
          at + ": no weight (edge property column " + std::to_string(weight_column + 1) +
          ", '" + props.edge_property_names[weight_column] + "'), but " + props.Cite(weight_key) +
          " declares it");
    }
    return Status::OK();
  });
  if (!s.ok()) return s;
  if (props.meta_edges && *props.meta_edges != records) {
    return Status::InvalidArgument(props.edge_path + " holds " + std::to_string(records) +
                                   " edges but " + props.Cite("meta.edges") + " says " +
                                   std::to_string(*props.meta_edges));
  }
  return Status::OK();
}

Status ReadGraphalyticsVertices(const std::string& path, std::vector<uint64_t>* vertices) {
  vertices->clear();
  return ForEachDataLine(path, [&](std::string_view t, std::string_view line, uint64_t n) {
    size_t end = 0;
    while (end < t.size() && !IsBlank(t[end])) end++;
    uint64_t v;
    if (!ParseU64(t.substr(0, end), &v)) {
      return Status::InvalidArgument(
          LineError(path, n, "expected a vertex ID, got: '" + Excerpt(line) + "'"));
    }
    vertices->push_back(v);
    return Status::OK();
  });
}

Status OpenGraphalyticsEdges(const GraphalyticsProperties& props,
                             std::unique_ptr<EdgeReader>* reader) {
  EdgeReaderOptions o;
  o.format = EdgeFormat::kText;
  o.weight_column = props.WeightColumn();
  o.allow_extra_columns = true;
  return EdgeReader::Open(props.edge_path, o, reader);
}

Status ReadGraphalyticsEdges(const GraphalyticsProperties& props, std::vector<Edge>* edges) {
  std::unique_ptr<EdgeReader> reader;
  Status s = OpenGraphalyticsEdges(props, &reader);
  if (!s.ok()) return s;
  edges->clear();
  return ForEachEdgeRecord(reader.get(), [&](const EdgeRecord& r) {
    if (r.op != EdgeOp::kInsert) {
      return Status::InvalidArgument(props.edge_path + ": line " +
                                     std::to_string(reader->line_number()) +
                                     ": deletes are not allowed in a Graphalytics edge file");
    }
    edges->push_back(Edge{r.src, r.dst, r.weight});
    return Status::OK();
  });
}

Status ReadGraphalyticsOutput(const std::string& path, std::vector<GraphalyticsValue>* values) {
  values->clear();
  return ForEachDataLine(path, [&](std::string_view t, std::string_view line, uint64_t n) {
    size_t a = 0;
    while (a < t.size() && !IsBlank(t[a])) a++;
    size_t b = a;
    while (b < t.size() && IsBlank(t[b])) b++;
    size_t c = b;
    while (c < t.size() && !IsBlank(t[c])) c++;
    GraphalyticsValue v;
    std::string_view value = t.substr(b, c - b);
    bool ok = ParseU64(t.substr(0, a), &v.vertex) && !value.empty() && c == t.size();
    if (ok) {
      v.text = std::string(value);
      v.is_integer = ParseU64(value, &v.integer);
      if (v.is_integer) {
        v.real = static_cast<double>(v.integer);
      } else {
        ok = ParseDouble(value, &v.real);
      }
    }
    if (!ok) {
      return Status::InvalidArgument(
          LineError(path, n, "expected '<vertex-id> <value>', got: '" + Excerpt(line) + "'"));
    }
    values->push_back(std::move(v));
    return Status::OK();
  });
}

std::string GraphalyticsOutputPath(const GraphalyticsProperties& props, std::string_view algo) {
  std::string a(algo);
  for (char& ch : a) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return props.directory + "/" + props.name + "-" + a;
}

}  // namespace strata::graphio
