#include "compaction/compactor.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <system_error>
#include <thread>
#include <utility>

#include "compaction/flush.h"
#include "segment/segment_format.h"
#include "segment/segment_writer.h"

namespace strata::compaction {

namespace {

// One input of the merge: a run of consecutive inputs (newest first) whose vertex ranges
// ascend without overlap, such as the files of one level, scanned one file after another. The
// merge's passes per vertex then go over one input per level rather than one per file (a full
// compaction at scale 23 has ~50 files on three levels). Chaining such inputs changes no
// outcome: at most one file of a chain holds a vertex, and no input ranks between them.
struct Input {
  std::vector<const SegmentReader*> files;
  size_t next = 0;  // files[next] is opened when the current scan ends
  std::unique_ptr<SegmentScanner> scan;
  VertexEntry v;
  bool valid = false;

  // Moves to the next vertex in [so.min_src, so.max_src]; false at the end or on an error
  // (then status() says which). Files wholly outside the range are never opened.
  bool Advance(const ScanOptions& so) {
    for (;;) {
      if (scan != nullptr) {
        valid = scan->NextVertex(&v);
        if (valid || !scan->status().ok()) return valid;
      }
      while (next < files.size() && !Overlaps(*files[next], so)) ++next;
      if (next == files.size()) return valid = false;
      scan = files[next++]->NewScanner(so);
    }
  }
  Status status() const { return scan != nullptr ? scan->status() : Status::OK(); }

  static bool Overlaps(const SegmentReader& r, const ScanOptions& so) {
    const SegmentHeader& h = r.header();
    return h.num_vertices > 0 && h.max_src >= so.min_src && h.min_src <= so.max_src;
  }
};

// Groups the inputs (newest first) into chains of consecutive ascending disjoint files.
std::vector<Input> ChainInputs(const std::vector<const SegmentReader*>& inputs) {
  std::vector<Input> in;
  for (const SegmentReader* r : inputs) {
    const SegmentHeader& h = r->header();
    if (!in.empty() && h.num_vertices > 0) {
      const SegmentHeader& last = in.back().files.back()->header();
      if (last.num_vertices > 0 && h.min_src > last.max_src) {
        in.back().files.push_back(r);
        continue;
      }
    }
    in.emplace_back();
    in.back().files.push_back(r);
  }
  return in;
}

class OutputSet {
 public:
  OutputSet(const CompactionOptions& o, io::Env* env, std::atomic<uint64_t>* next,
            CompactionResult* r)
      : o_(o), env_(env), next_(next), r_(r) {}

  Status AddVertex(VertexId v, uint8_t flags) {
    if (w_ != nullptr && w_->EstimatedFileSize() >= o_.target_file_bytes) {
      Status s = Close();
      if (!s.ok()) return s;
    }
    if (w_ == nullptr) {
      Status s = Open();
      if (!s.ok()) return s;
    }
    if (meta_.num_vertices++ == 0) meta_.min_src = v;
    meta_.max_src = v;
    return w_->AddVertex(v, flags);
  }
  Status AddEdges(const VertexId* dst, const double* w, const uint8_t* tomb, size_t n) {
    return w_->AddEdges(dst, w, tomb, n);
  }

  Status Close() {
    if (w_ == nullptr) return Status::OK();
    SegmentWriteStats st;
    Status s = w_->Finish(&st);
    if (!s.ok()) return s;
    meta_.size_bytes = st.file_size;
    meta_.num_edges = st.num_edges;
    meta_.tail_checksum = st.tail_checksum;
    r_->bytes_written += st.file_size;
    r_->entries_out += st.num_edges;
    r_->outputs.push_back(meta_);
    w_.reset();
    return Status::OK();
  }
  void Abandon() {
    if (w_) w_->Abandon();
    w_.reset();
    for (const auto& f : r_->outputs) env_->RemoveFile(o_.dir + "/" + SegmentFileName(f.number));
    r_->outputs.clear();
  }

 private:
  Status Open() {
    meta_ = FileMeta();
    meta_.number = next_->fetch_add(1);
    meta_.level = o_.output_level;
    meta_.tag = o_.tag;
    meta_.max_ts = o_.max_ts;
    SegmentWriterOptions wo;
    wo.weighted = o_.weighted;
    wo.block_size = o_.block_size;
    wo.extent_bytes = o_.extent_bytes;
    wo.level = o_.output_level;
    wo.file_number = meta_.number;
    wo.timestamp = o_.max_ts;
    wo.user_tag = o_.tag;
    wo.store_id = o_.store_id;
    wo.drop_page_cache = o_.drop_page_cache;
    w_ = std::make_unique<SegmentWriter>(env_);
    return w_->Open(o_.dir + "/" + SegmentFileName(meta_.number), wo);
  }

  const CompactionOptions& o_;
  io::Env* env_;
  std::atomic<uint64_t>* next_;
  CompactionResult* r_;
  std::unique_ptr<SegmentWriter> w_;
  FileMeta meta_;
};

// One taken input's edge records of the current vertex, a batch at a time: the merge holds one
// batch per input, never a whole run (a vertex's list can be millions of edges).
class RunCursor {
 public:
  explicit RunCursor(SegmentScanner* scan) : scan_(scan) {}
  // Loads the first batch; false when the run is empty or on error (see status()).
  bool Start() { return Refill(); }
  const EdgeBatch& batch() const { return b_; }
  size_t i() const { return i_; }
  VertexId dst() const { return b_.dst[i_]; }
  // Records of the batch from the current one on.
  size_t left() const { return b_.size - i_; }
  // Records after the current one in its batch with dst < bound (a merge copies the current
  // record and these as one range: no other run holds a destination below `bound`).
  size_t Below(VertexId bound) const {
    const VertexId* d = b_.dst;
    const size_t from = i_ + 1, end = b_.size;
    size_t k = from;
    while (k < end && k < from + 8 && d[k] < bound) ++k;  // short ranges: no search
    if (k == from + 8) k = static_cast<size_t>(std::lower_bound(d + k, d + end, bound) - d);
    return k - from;
  }
  // Moves past the current record; false when the run is exhausted or on error.
  bool Next() { return ++i_ < b_.size || Refill(); }
  // Moves past n (<= left()) records.
  bool Skip(size_t n) { return (i_ += n) < b_.size || Refill(); }
  Status status() const { return scan_->status(); }

 private:
  bool Refill() {
    i_ = 0;
    while (scan_->NextEdges(&b_)) {
      if (b_.size > 0) return true;
    }
    return false;
  }
  SegmentScanner* scan_;
  EdgeBatch b_;
  size_t i_ = 0;
};

// Runs merged through a heap rather than by scanning every run per record: a level-0 merge
// at scale 23 has 14-23 inputs, most of which hold a hub's list, and the two scans over the
// runs per record emitted were about two thirds of the merge's own samples. Up to this many
// runs the scans stay (no heap to build for a vertex on a few levels).
constexpr size_t kScanMergeMax = 4;

struct HeapItem {
  VertexId dst;
  uint32_t run;  // index into the runs, newest first
};
// Min-heap order by (dst, run): of equal destinations the newest run comes out first.
inline bool After(const HeapItem& a, const HeapItem& b) {
  return a.dst != b.dst ? a.dst > b.dst : a.run > b.run;
}
void SiftDown(std::vector<HeapItem>* h, size_t i) {
  HeapItem* a = h->data();
  const size_t n = h->size();
  const HeapItem x = a[i];
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && After(a[c], a[c + 1])) ++c;
    if (!After(x, a[c])) break;
    a[i] = a[c];
    i = c;
  }
  a[i] = x;
}

// Merges the runs (each started, newest first): emit(run, n) for the newest record of every
// destination, in destination order, n records of one run at a time (a range no other run
// interleaves); the older records of a destination are skipped. Returns the first error of
// emit or of a run.
template <class Emit>
Status HeapMerge(std::vector<RunCursor>* runs, std::vector<HeapItem>* heap, Emit& emit) {
  std::vector<RunCursor>& r = *runs;
  std::vector<HeapItem>& h = *heap;
  h.clear();
  for (uint32_t k = 0; k < r.size(); ++k) h.push_back({r[k].dst(), k});
  for (size_t i = h.size() / 2; i-- > 0;) SiftDown(&h, i);
  bool emitted = false;
  VertexId last = 0;
  while (!h.empty()) {
    const HeapItem top = h[0];
    RunCursor& c = r[top.run];
    size_t n = 1;
    if (!emitted || top.dst != last) {
      // The smallest destination of the other runs is one of the root's children.
      VertexId bound = ~VertexId{0};
      if (h.size() > 1) bound = h[1].dst;
      if (h.size() > 2) bound = std::min(bound, h[2].dst);
      n += c.Below(bound);
      last = c.batch().dst[c.i() + n - 1];
      Status s = emit(c, n);
      if (!s.ok()) return s;
      emitted = true;
    }
    if (c.Skip(n)) {
      h[0].dst = c.dst();
    } else {
      if (!c.status().ok()) return c.status();
      h[0] = h.back();
      h.pop_back();
      if (h.empty()) break;
    }
    SiftDown(&h, 0);
  }
  return Status::OK();
}

}  // namespace

std::vector<size_t> InputChains(const std::vector<const SegmentReader*>& inputs) {
  std::vector<size_t> n;
  for (const Input& x : ChainInputs(inputs)) n.push_back(x.files.size());
  return n;
}

Status RunCompaction(const std::vector<const SegmentReader*>& inputs,
                     const CompactionOptions& o, io::Env* env,
                     std::atomic<uint64_t>* next_file_number, CompactionResult* result) {
  *result = CompactionResult();
  ScanOptions so;
  so.read.weights = o.weighted;
  so.window = o.read_window_bytes;
  so.min_src = o.min_src;
  so.max_src = o.max_src;
  for (const SegmentReader* r : inputs) {
    result->bytes_read += r->file_size();
    result->entries_in += r->num_edges();
  }
  std::vector<Input> in = ChainInputs(inputs);
  for (Input& x : in) {
    if (!x.Advance(so) && !x.status().ok()) return x.status();
  }
  OutputSet out(o, env, next_file_number, result);
  std::vector<size_t> taken;
  std::vector<RunCursor> cur;  // the live runs of the taken inputs, newest first
  std::vector<HeapItem> heap;
  Status s;
  for (;;) {
    VertexId u = 0;
    bool any = false;
    for (const Input& x : in) {
      if (x.valid && (!any || x.v.src < u)) {
        u = x.v.src;
        any = true;
      }
    }
    if (!any) break;
    // Inputs holding u, newest first, up to the first deletion mark.
    taken.clear();
    bool hidden = false;
    bool exists = false, knows = false, deleted = false;
    for (size_t i = 0; i < in.size(); ++i) {
      if (!in[i].valid || in[i].v.src != u) continue;
      if (!hidden) {
        taken.push_back(i);
        const uint8_t f = in[i].v.flags;
        if (!knows && (f & (kVertexExists | kVertexDeleted))) {
          knows = true;
          exists = (f & kVertexExists) != 0;
        }
        if (f & kVertexDeleted) {
          deleted = true;
          hidden = true;
        }
      }
    }
    // Whether something older than the inputs may hold u: asked at most once per vertex, and
    // only for a vertex with a deletion mark or a tombstone.
    int older = o.bottom ? 0 : -1;  // -1: not asked yet
    auto older_holds_u = [&] {
      if (older < 0) older = !o.older_may_hold_vertex || o.older_may_hold_vertex(u);
      return older == 1;
    };
    uint8_t flags = 0;
    if (knows && exists) flags |= kVertexExists;
    if (deleted && older_holds_u()) flags |= kVertexDeleted;
    // The vertex is written with its first surviving edge, or at the end when it only has marks.
    bool written = false;
    // Writes the n records of c's batch from c.i() on as one range; where this merge drops
    // tombstones (they hide nothing older), the live records between them as ranges.
    auto emit = [&](const RunCursor& c, size_t n) {
      const EdgeBatch& b = c.batch();
      const VertexId* d = b.dst + c.i();
      const double* w = o.weighted && b.weight ? b.weight + c.i() : nullptr;
      const uint8_t* t = b.has_tombstones ? b.tombstone + c.i() : nullptr;
      const bool drop = t != nullptr && (deleted || !older_holds_u());
      for (size_t j = 0, e; j < n; j = e) {
        e = n;
        if (drop) {
          while (j < n && t[j] != 0) ++j;
          for (e = j; e < n && t[e] == 0;) ++e;
          if (j == n) break;
        }
        if (!written) {
          written = true;
          Status st = out.AddVertex(u, flags);
          if (!st.ok()) return st;
        }
        Status st = out.AddEdges(d + j, w != nullptr ? w + j : nullptr,
                                 t != nullptr && !drop ? t + j : nullptr, e - j);
        if (!st.ok()) return st;
      }
      return Status::OK();
    };
    cur.clear();
    for (size_t i : taken) {
      RunCursor c(in[i].scan.get());
      if (c.Start()) {
        cur.push_back(c);
      } else if (!c.status().ok()) {
        s = c.status();
        break;
      }
    }
    // k-way merge by destination; per destination the newest run's record wins (runs are
    // sorted and unique).
    if (s.ok() && cur.size() > kScanMergeMax) {
      s = HeapMerge(&cur, &heap, emit);
      cur.clear();
    }
    // Few runs: cur stays newest first, so the first holder of the minimum wins.
    while (s.ok() && !cur.empty()) {
      if (cur.size() == 1) {  // the common case: one run left, copied through a batch at a time
        RunCursor& c = cur[0];
        size_t n;
        do {
          n = c.left();
          s = emit(c, n);
        } while (s.ok() && c.Skip(n));
        if (s.ok()) s = c.status();
        break;
      }
      // best: the smallest destination (its first holder wins); bound: the other runs' smallest.
      VertexId best = cur[0].dst(), bound = ~VertexId{0};
      size_t win = 0;
      for (size_t k = 1; k < cur.size(); ++k) {
        const VertexId d = cur[k].dst();
        if (d < best) {
          bound = best;
          best = d;
          win = k;
        } else if (d < bound) {
          bound = d;
        }
      }
      const size_t n = 1 + cur[win].Below(bound);
      s = emit(cur[win], n);
      if (!s.ok()) break;
      // The winner moves past its range, an older run at `best` past its shadowed record;
      // exhausted runs leave, the rest keep their order (newest first).
      size_t kept = 0;
      for (size_t k = 0; k < cur.size() && s.ok(); ++k) {
        if (k == win ? cur[k].Skip(n) : cur[k].dst() != best || cur[k].Next()) {
          cur[kept++] = cur[k];
        } else {
          s = cur[k].status();
        }
      }
      cur.erase(cur.begin() + static_cast<std::ptrdiff_t>(kept), cur.end());
    }
    if (!s.ok()) break;
    if (!written && flags != 0) {
      s = out.AddVertex(u, flags);
      if (!s.ok()) break;
    }
    // Advance every input positioned at u (hidden ones too: their data for u is dead).
    for (Input& x : in) {
      if (x.valid && x.v.src == u && !x.Advance(so) && !x.status().ok()) {
        s = x.status();
        break;
      }
    }
    if (!s.ok()) break;
  }
  if (s.ok()) s = out.Close();
  if (s.ok()) s = env->SyncDir(o.dir);
  if (!s.ok()) out.Abandon();
  return s;
}

namespace {
std::atomic<uint64_t> min_part_edges{kMinPartEdges};
}  // namespace

uint64_t MinPartEdges() { return min_part_edges.load(std::memory_order_relaxed); }
void SetMinPartEdges(uint64_t n) { min_part_edges.store(n, std::memory_order_relaxed); }

std::vector<VertexId> PartCuts(const std::vector<const SegmentReader*>& inputs, int max_parts,
                               uint64_t min_part_edges) {
  std::vector<VertexId> cuts;
  if (max_parts <= 1) return cuts;  // the store's usual case: no spread gathered and sorted
  std::vector<std::pair<VertexId, uint64_t>> spread;
  for (const SegmentReader* r : inputs) r->EdgeSpread(&spread);
  std::sort(spread.begin(), spread.end());
  uint64_t total = 0;
  for (const auto& b : spread) total += b.second;
  const uint64_t by_size = total / std::max<uint64_t>(min_part_edges, 1);
  const uint64_t parts = std::min<uint64_t>(static_cast<uint64_t>(max_parts), by_size);
  if (parts <= 1) return cuts;
  // Part k starts at the first block boundary where the records before it reach k/parts of
  // the total; a block's records count as lying at its first source.
  uint64_t before = 0;
  for (const auto& [src, edges] : spread) {
    const uint64_t k = cuts.size() + 1;
    if (k >= parts) break;
    if (before >= total / parts * k && src > 0 && (cuts.empty() || src > cuts.back())) {
      cuts.push_back(src);
    }
    before += edges;
  }
  return cuts;
}

Status RunCompactionParts(const std::vector<const SegmentReader*>& inputs,
                          const CompactionOptions& o, const PartPlan& plan, io::Env* env,
                          std::atomic<uint64_t>* next_file_number, CompactionResult* result,
                          uint64_t min_part_edges) {
  std::vector<VertexId> cuts = PartCuts(inputs, plan.parts, min_part_edges);
  cuts.erase(std::remove_if(cuts.begin(), cuts.end(),
                            [&](VertexId c) { return c <= o.min_src || c > o.max_src; }),
             cuts.end());
  if (cuts.empty()) return RunCompaction(inputs, o, env, next_file_number, result);
  const size_t n = cuts.size() + 1;
  std::vector<CompactionOptions> po(n, o);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) po[i].min_src = cuts[i - 1];
    if (i + 1 < n) po[i].max_src = cuts[i] - 1;
  }
  std::vector<CompactionResult> pr(n);
  std::vector<Status> ps(n);
  // Parts are taken in index order; after a failure none starts.
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    for (size_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < n;) {
      ps[i] = RunCompaction(inputs, po[i], env, next_file_number, &pr[i]);
      if (!ps[i].ok()) failed.store(true, std::memory_order_relaxed);
    }
  };
  auto untaken = [&] { return next.load() < n && !failed.load(std::memory_order_relaxed); };
  std::atomic<bool> joined{false};
  std::vector<std::thread> threads;
  const size_t from_start = std::min(n, static_cast<size_t>(std::max(plan.threads, 1)));
  try {
    for (size_t t = 1; t < from_start; ++t) threads.emplace_back(work);
    if (plan.join_when && from_start < n) {
      threads.emplace_back([&] {
        while (untaken()) {
          if (plan.join_when()) {
            joined.store(true);
            work();
            return;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(kJoinPollMs));
        }
      });
    }
  } catch (const std::system_error&) {
    // No more threads to be had: the ones made and this one take every part.
  }
  work();
  for (std::thread& t : threads) t.join();
  *result = CompactionResult();
  Status first;
  for (size_t i = 0; i < n && first.ok(); ++i) first = ps[i];
  if (!first.ok()) {
    // A failed part removed its own outputs; the finished parts' are removed here.
    for (size_t i = 0; i < n; ++i) {
      if (!ps[i].ok()) continue;
      for (const FileMeta& f : pr[i].outputs) env->RemoveFile(o.dir + "/" + SegmentFileName(f.number));
    }
    return first;
  }
  result->bytes_read = pr[0].bytes_read;
  result->entries_in = pr[0].entries_in;
  result->parts = static_cast<int>(n);
  result->threads = static_cast<int>(std::min(n, from_start + (joined.load() ? 1 : 0)));
  for (CompactionResult& r : pr) {
    result->outputs.insert(result->outputs.end(), r.outputs.begin(), r.outputs.end());
    result->bytes_written += r.bytes_written;
    result->entries_out += r.entries_out;
  }
  return Status::OK();
}

}  // namespace strata::compaction
