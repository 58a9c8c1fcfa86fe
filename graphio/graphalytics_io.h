// LDBC Graphalytics datasets: the .properties file, the vertex file (.v), the edge file (.e)
// and the expected-output files ("<vertex-id> <value>" per line) used as test fixtures.
//
// Format (the specification's section Data/Representation, "EVLP"):
//   .v  one vertex ID per line, ascending; optional properties after it (ignored here).
//   .e  "src dst [properties...]" per line. Undirected graphs list each edge once, smaller ID
//       first; the store's undirected kind stores both directions.
//   IDs are unsigned 64-bit, neither dense nor starting at 0: map them with IdDictionary.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/status.h"
#include "graphio/edge_reader.h"

namespace strata::graphio {

// A dataset's .properties file. Keys look like "graph.<name>.<key> = <value>"; <name> is the
// file name without ".properties" when keys use it, else the name the keys agree on.
struct GraphalyticsProperties {
  std::string name;       // e.g. "example-directed"
  std::string directory;  // directory of the .properties file ("." if none)
  // As written in the file, and resolved against `directory` (empty when absent). When the
  // keys are absent the paths default to <directory>/<name>.v and .e.
  std::string vertex_file, edge_file;
  std::string vertex_path, edge_path;
  std::optional<uint64_t> meta_vertices, meta_edges;  // meta.vertices, meta.edges
  bool directed = true;                                // directed (default true)
  std::vector<std::string> edge_property_names;        // edge-properties.names
  std::vector<std::string> edge_property_types;        // edge-properties.types
  std::vector<std::string> algorithms;                 // algorithms, lower-cased

  // Per-algorithm parameters (unset when the file does not give them).
  std::optional<uint64_t> bfs_source_vertex;           // bfs.source-vertex
  std::optional<uint64_t> cdlp_max_iterations;         // cdlp.max-iterations
  std::optional<double> pr_damping_factor;             // pr.damping-factor
  std::optional<uint64_t> pr_num_iterations;           // pr.num-iterations
  std::optional<std::string> sssp_weight_property;     // sssp.weight-property
  std::optional<uint64_t> sssp_source_vertex;          // sssp.source-vertex

  // Every key of the dataset with "graph.<name>." removed, e.g. raw["bfs.source-vertex"],
  // and the line of the .properties file (`path`) that set it.
  std::map<std::string, std::string> raw;
  std::map<std::string, uint64_t> line;
  std::string path;
  // "graph.<name>.<key> (<path> line N)", for messages.
  std::string Cite(const std::string& key) const;

  bool HasAlgorithm(std::string_view algorithm) const;
  // Column index (among the edge properties) of the weight: the SSSP weight property if it is
  // named, else a property named "weight", else -1 (unweighted).
  int WeightColumn() const;
  bool weighted() const { return WeightColumn() >= 0; }
};

// InvalidArgument "<path>: line N: ..." for a malformed line or value; NotFound if missing.
Status ReadGraphalyticsProperties(const std::string& path, GraphalyticsProperties* props);

// Checks a dataset's files against its properties, before anything is loaded from them:
// meta.vertices against `vertices` (the count read from the vertex file), and in one pass over
// the edge file: meta.edges against its records; directed = false against an edge listed with
// the larger ID first (the format lists an undirected edge once, smaller ID first); a weight
// column the properties declare (WeightColumn() >= 0) against every line. InvalidArgument
// naming the file (and line) and the property with the line of the .properties file that
// sets it.
Status CheckGraphalyticsDataset(const GraphalyticsProperties& props, uint64_t vertices);

// Reads a vertex file; blank and '#' lines are skipped, text after the ID is ignored.
// InvalidArgument "<path>: line N: expected a vertex ID, got: '...'".
Status ReadGraphalyticsVertices(const std::string& path, std::vector<uint64_t>* vertices);

// A text EdgeReader over the dataset's edge file, reading the weight column when the dataset
// is weighted (other property columns are ignored).
Status OpenGraphalyticsEdges(const GraphalyticsProperties& props,
                             std::unique_ptr<EdgeReader>* reader);
// All edges of the dataset (for tests and small graphs).
Status ReadGraphalyticsEdges(const GraphalyticsProperties& props, std::vector<Edge>* edges);

// One line of an expected-output file. Values are kept as text and parsed both ways: BFS
// depths and WCC/CDLP labels are integers (exact, up to 2^64 - 1; BFS writes
// 9223372036854775807 for unreachable), PR/LCC/SSSP values reals (SSSP writes "Infinity").
struct GraphalyticsValue {
  uint64_t vertex = 0;
  std::string text;        // as written
  bool is_integer = false; // text is an unsigned decimal integer that fits in 64 bits
  uint64_t integer = 0;    // valid if is_integer
  double real = 0.0;       // the value as a double ("Infinity"/"inf" -> +inf)
};

// InvalidArgument "<path>: line N: expected '<vertex-id> <value>', got: '...'".
Status ReadGraphalyticsOutput(const std::string& path, std::vector<GraphalyticsValue>* values);

// The conventional name of an algorithm's expected output next to a dataset:
// <directory>/<name>-<ALGO> (e.g. example-directed-BFS).
std::string GraphalyticsOutputPath(const GraphalyticsProperties& props, std::string_view algo);

}  // namespace strata::graphio
