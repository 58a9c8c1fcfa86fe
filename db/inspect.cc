#include "db/inspect.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <memory>

#include "index/index_build.h"
#include "io/env.h"
#include "segment/segment_reader.h"
#include "util/clock.h"

namespace strata {

namespace {

uint64_t CeilDiv(uint64_t a, uint64_t b) { return b == 0 ? 0 : (a + b - 1) / b; }

std::string Basename(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

}  // namespace

Status ReadManifest(const std::string& dir, StoreState* state, RecordLogTail* tail,
                    std::string* manifest_path) {
  std::unique_ptr<io::Env> env;
  Status s = io::Env::Open(IoBackend::kPosix, &env);
  if (!s.ok()) return s;
  return Manifest::ReadOnly(env.get(), dir, state, tail, manifest_path);
}

StoreFiles ListStoreFiles(const std::string& dir, const std::string& manifest_path) {
  StoreFiles out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  const std::string manifest = Basename(manifest_path);
  while (struct dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    struct stat st;
    if (::stat(StoreFilePath(dir, name).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (name == manifest) out.manifest_bytes = size;
    FileType type;
    uint64_t number;
    if (!ParseFileName(name, &type, &number)) continue;
    if (type == FileType::kWal) out.wals.push_back({name, size});
    if (type == FileType::kIdDictionary) {
      out.has_id_dictionary = true;
      out.id_dictionary_bytes = size;
    }
    if (type == FileType::kViews) {
      out.has_views = true;
      out.views_bytes = size;
    }
  }
  ::closedir(d);
  std::sort(out.wals.begin(), out.wals.end());
  return out;
}

Status MeasureVertexIndex(const std::string& dir, const StoreState& st, VertexIndexSize* out) {
  std::unique_ptr<io::Env> env;
  Status s = io::Env::Open(IoBackend::kPosix, &env);
  if (!s.ok()) return s;
  for (uint32_t tag = 0; tag < 2; ++tag) {
    std::vector<std::unique_ptr<SegmentReader>> readers;
    std::vector<index::IndexedFile> files;
    for (const auto& [num, f] : st.files) {
      if (f.tag != tag || f.level == 0) continue;  // level-0 files: not in the index
      std::unique_ptr<SegmentReader> r;
      s = SegmentReader::Open(env.get(), SegmentFilePath(dir, num), SegmentReaderOptions(), &r);
      if (!s.ok()) return s;
      files.push_back({r.get(), f.level});
      readers.push_back(std::move(r));
    }
    index::VertexIndex idx;
    s = index::Build(files, &idx);
    if (!s.ok()) return s;
    out->vertices += idx.vertices();
    out->bytes += idx.bytes();
    out->range_pages += idx.range_pages();
    out->overflow_pages += idx.overflow_pages();
  }
  return Status::OK();
}

Status InspectSegmentFile(const std::string& path, SegmentInspection* out) {
  std::unique_ptr<io::Env> env;
  Status s = io::Env::Open(IoBackend::kPosix, &env);
  if (!s.ok()) return s;
  std::unique_ptr<SegmentReader> r;
  s = SegmentReader::Open(env.get(), path, SegmentReaderOptions(), &r);
  if (!s.ok()) return s;
  const SegmentHeader& h = r->header();
  out->file_bytes = r->file_size();
  out->header = h;
  const uint64_t t0 = NowMicros();
  out->verify = r->Verify();
  out->verify_seconds = static_cast<double>(NowMicros() - t0) / 1e6;
  const uint64_t payload = h.block_size > kBlockTrailerSize ? h.payload_per_block() : 0;
  out->edge_blocks = CeilDiv(h.edge_stream_bytes, payload);
  out->weight_blocks = h.weighted() ? CeilDiv(8 * h.num_edges, payload) : 0;
  out->vertex_blocks = CeilDiv(h.num_vertices, h.vertex_group);
  out->bloom_partitions =
      h.bloom_bits_per_key ? CeilDiv(h.num_edges, h.bloom_keys_per_partition) : 0;
  out->reader_memory_bytes = r->MemoryUsage();
  return Status::OK();
}

Status CompileStoredView(const std::string& dir, uint64_t store_id, const std::string& name,
                         const ViewShape& shape, std::shared_ptr<const CompiledView>* out) {
  std::unique_ptr<io::Env> env;
  Status s = io::Env::Open(IoBackend::kPosix, &env);
  if (!s.ok()) return s;
  ViewCatalog catalog;
  Timestamp newest = 0;
  s = catalog.Load(env.get(), dir, store_id, &newest);
  if (!s.ok()) return s;
  return catalog.CompileAt(name, kMaxTimestamp, shape, out);
}

}  // namespace strata
