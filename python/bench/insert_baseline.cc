// The C++ figure python/bench/bench_insert.py compares DB.insert_edges with: the same edges
// (raw little-endian uint64 files written by the Python script) inserted through the C++ API
// in WriteBatches of the same size, into a new store with the same options.
//
//   strata-py-insert-baseline SRC_FILE DST_FILE STORE_DIR BATCH_EDGES
//
// Prints one line: "cxx_insert edges=N seconds=S edges_per_sec=R".
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "strata/db.h"
#include "strata/write_batch.h"

namespace {

bool ReadIds(const char* path, std::vector<uint64_t>* out) {
  FILE* f = std::fopen(path, "rb");
  if (f == nullptr) return false;
  std::fseek(f, 0, SEEK_END);
  const long bytes = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  out->resize(static_cast<size_t>(bytes) / sizeof(uint64_t));
  const size_t got = std::fread(out->data(), sizeof(uint64_t), out->size(), f);
  std::fclose(f);
  return got == out->size();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s SRC_FILE DST_FILE STORE_DIR BATCH_EDGES\n", argv[0]);
    return 2;
  }
  std::vector<uint64_t> src, dst;
  if (!ReadIds(argv[1], &src) || !ReadIds(argv[2], &dst) || src.size() != dst.size()) {
    std::fprintf(stderr, "cannot read the edge files\n");
    return 1;
  }
  const size_t batch = std::strtoull(argv[4], nullptr, 10);
  strata::Options o;
  o.error_if_exists = true;
  std::unique_ptr<strata::DB> db;
  strata::Status s = strata::DB::Open(o, argv[3], &db);
  if (!s.ok()) {
    std::fprintf(stderr, "open: %s\n", s.ToString().c_str());
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  strata::WriteBatch b;
  for (size_t i = 0; i < src.size() && s.ok(); i += batch) {
    const size_t end = std::min(src.size(), i + batch);
    b.Clear();
    for (size_t j = i; j < end; ++j) b.InsertEdge(src[j], dst[j]);
    s = db->Write(b);
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (s.ok()) s = db->Close();
  if (!s.ok()) {
    std::fprintf(stderr, "write: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("cxx_insert edges=%zu seconds=%.3f edges_per_sec=%.0f\n", src.size(), secs,
              src.size() / secs);
  return 0;
}
