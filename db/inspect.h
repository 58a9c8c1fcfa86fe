// What the maintenance commands (strata inspect, verify; tools/) read from a store directory
// without opening the store: the manifest, the files, one segment's header and checksums, the
// size the multi-level vertex index would have. Nothing here takes the store's lock or changes
// a file; a store open elsewhere may change the directory meanwhile.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "db/filename.h"
#include "db/manifest.h"
#include "db/views.h"
#include "segment/segment_format.h"
#include "strata/status.h"

namespace strata {

// The live manifest of the store in `dir` (Manifest::ReadOnly through the POSIX Env).
Status ReadManifest(const std::string& dir, StoreState* state, RecordLogTail* tail,
                    std::string* manifest_path);

// The files of a store directory the commands report, by name (db/filename.h).
struct StoreFiles {
  uint64_t manifest_bytes = 0;  // the file at manifest_path (0 when gone)
  std::vector<std::pair<std::string, uint64_t>> wals;  // <n>.wal, with sizes, sorted by name
  bool has_id_dictionary = false;
  uint64_t id_dictionary_bytes = 0;
  bool has_views = false;  // VIEWS (db/views.h)
  uint64_t views_bytes = 0;
};
// Regular files only; a directory that cannot be read lists nothing.
StoreFiles ListStoreFiles(const std::string& dir, const std::string& manifest_path);

// The multi-level vertex index an open store keeps in memory (index/), built from the segments
// `state` names the same way an open builds it.
struct VertexIndexSize {
  uint64_t vertices = 0;  // summed over stored directions
  uint64_t bytes = 0;
  uint64_t range_pages = 0;
  uint64_t overflow_pages = 0;
  double PerVertex() const { return vertices ? static_cast<double>(bytes) / vertices : 0.0; }
};
Status MeasureVertexIndex(const std::string& dir, const StoreState& state, VertexIndexSize* out);

// One segment file, opened on its own (not as part of a store).
struct SegmentInspection {
  uint64_t file_bytes = 0;
  SegmentHeader header;
  uint64_t edge_blocks = 0;
  uint64_t weight_blocks = 0;
  uint64_t vertex_blocks = 0;
  uint64_t bloom_partitions = 0;
  uint64_t reader_memory_bytes = 0;  // what an open reader keeps resident
  Status verify;                     // SegmentReader::Verify: every block checksum and invariant
  double verify_seconds = 0;
};
// Opens `path` and verifies it; the status is the open's (a failed verify is in out->verify).
Status InspectSegmentFile(const std::string& path, SegmentInspection* out);

// View `name` as currently defined in <dir>/VIEWS, compiled for a store of `shape`: for
// filtering the log records of a store another process writes (strata watch --view). NotFound
// when there is no such view; Corruption naming the file and offset when VIEWS is damaged or
// belongs to a store other than `store_id`.
Status CompileStoredView(const std::string& dir, uint64_t store_id, const std::string& name,
                         const ViewShape& shape, std::shared_ptr<const CompiledView>* out);

}  // namespace strata
