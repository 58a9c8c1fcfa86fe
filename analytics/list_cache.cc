#include "analytics/list_cache.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <tbb/task_arena.h>

#include "strata/analytics.h"
#include "util/memory_info.h"

namespace strata::analytics {

size_t AutoCacheBytes() {
  constexpr size_t kFloor = size_t{256} << 20;
  return std::max<size_t>(kFloor, static_cast<size_t>(AvailableMemoryBytes() / 4));
}

size_t ResolveCacheBytes(size_t cache_bytes) {
  return cache_bytes == kAutoCacheBytes ? AutoCacheBytes() : cache_bytes;
}

ListCache::ListCache(const Snapshot& snap, Direction d, size_t max_bytes, bool keep_weights,
                     ListPacking packing)
    : d_(d),
      bound_(snap.VertexIdBound()),
      narrow_(bound_ <= (VertexId{1} << 32)),
      weights_(keep_weights && snap.weighted()),
      packing_(narrow_ && !weights_ ? packing : ListPacking::kNever),
      id24_(packing_ != ListPacking::kNever && bound_ <= (VertexId{1} << 24)),
      max_bytes_(ResolveCacheBytes(max_bytes)),
      blocks_(static_cast<size_t>((bound_ + kLayoutBlock - 1) / kLayoutBlock)) {
  set_long_lists(LongLists::kAuto);
  if (max_bytes_ != 0) {
    num_stages_ = static_cast<size_t>(std::max(1, tbb::this_task_arena::max_concurrency()));
    stages_ = std::make_unique<Stage[]>(num_stages_);
  }
}

namespace {
thread_local char stage_token;  // its address names this thread to ListCache::Stage::owner

// Bytes of n 3-byte IDs and the zero pad byte after them (Id24's 4-byte load of the last ID
// reads it).
size_t Id24Bytes(size_t n) { return 3 * n + 1; }

// Writes ids[0, n) (each < 2^24) as 3-byte IDs at base + 3 o: where ID o of an array at
// `base` (8-aligned) goes. IDs one at a time until o is a multiple of eight, then eight at a
// time into three 8-byte words (aligned so), written with non-temporal stores as in StreamInto
// (the block is not read again before the kernel's first pass), then the rest one at a time.
// The caller fences (_mm_sfence) before the bytes are handed on. Share of a 2-iteration
// PageRank's CPU samples on a 2^20-vertex memgraph: 7.0% with a store per byte, 9.4% with
// plain 8-byte stores (they wait for the fresh lines to be read in), 5.8-6.3% so
// (docs/benchmarks.md, "Issue 28: an AMD machine again; PageRank's first pass and sweep, two
// writers' batches").
void Put24(const uint32_t* ids, size_t n, uint8_t* base, size_t o) {
  uint8_t* d = base + 3 * o;
  size_t i = 0;
  auto one = [&] {
    d[0] = static_cast<uint8_t>(ids[i]);
    d[1] = static_cast<uint8_t>(ids[i] >> 8);
    d[2] = static_cast<uint8_t>(ids[i] >> 16);
    ++i;
    d += 3;
  };
  while (i < n && (o + i) % 8 != 0) one();
  constexpr uint64_t kLow24 = (uint64_t{1} << 24) - 1;
  static_assert(std::endian::native == std::endian::little);
  assert((reinterpret_cast<uintptr_t>(d) & 7) == 0 || i == n);
  for (; i + 8 <= n; i += 8, d += 24) {
    uint64_t pair[4];  // two IDs in each, the first in the low half
    std::memcpy(pair, ids + i, sizeof(pair));
    uint64_t a[8];
    for (int k = 0; k < 4; ++k) {
      a[2 * k] = pair[k] & kLow24;
      a[2 * k + 1] = (pair[k] >> 32) & kLow24;
    }
    const uint64_t w[3] = {a[0] | a[1] << 24 | a[2] << 48,
                           a[2] >> 16 | a[3] << 8 | a[4] << 32 | a[5] << 56,
                           a[5] >> 8 | a[6] << 16 | a[7] << 40};
    // Little-endian: the IDs' bytes in order.
#if defined(__SSE2__) && defined(__x86_64__)
    for (int k = 0; k < 3; ++k) {
      _mm_stream_si64(reinterpret_cast<long long*>(d + 8 * k), static_cast<long long>(w[k]));
    }
#else
    std::memcpy(d, w, sizeof(w));
#endif
  }
  while (i < n) one();
}

// Makes *to exactly Id24Bytes(n) bytes (uninitialized) with the pad byte set; the caller fills
// the IDs (Put24).
void Size24(size_t n, UninitVector<uint8_t>* to) {
  to->clear();
  to->resize(Id24Bytes(n));  // uninitialized (UninitVector): written by Put24
  // malloc's alignment (16 bytes) keeps every group's three words 8-byte aligned.
  assert((reinterpret_cast<uintptr_t>(to->data()) & 7) == 0);
  (*to)[3 * n] = 0;  // the pad byte
}

inline void FenceStreamed() {
#if defined(__SSE2__) && defined(__x86_64__)
  _mm_sfence();
#endif
}

// *to = ids[0, n) as 3-byte IDs and the pad byte, in a vector of exactly Id24Bytes(n).
void Into24(const uint32_t* ids, size_t n, UninitVector<uint8_t>* to) {
  Size24(n, to);
  Put24(ids, n, to->data(), 0);
  FenceStreamed();
}

// *to = from, of from's exact size, written with non-temporal stores: the block's fresh memory
// is not read again until the kernel's first pass, long after the layout has evicted it, so
// the stores need not read its lines in first (a layout on a 2^20-vertex memgraph took about
// 4 ms of 110 less than with assign's element copy: docs/benchmarks.md).
template <class T>
void StreamInto(const UninitVector<T>& from, size_t count, UninitVector<T>* to) {
  to->clear();
  to->resize(count);  // uninitialized (UninitVector): written below
  const size_t n = count * sizeof(T);
  const char* s = reinterpret_cast<const char*>(from.data());
  char* d = reinterpret_cast<char*>(to->data());
  size_t i = 0;
#if defined(__SSE2__)
  while (i < n && (reinterpret_cast<uintptr_t>(d + i) & 15) != 0) {
    d[i] = s[i];
    ++i;
  }
  for (; i + 64 <= n; i += 64) {
    for (size_t q = 0; q < 64; q += 16) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + q),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + q)));
    }
  }
  _mm_sfence();
#endif
  if (i < n) std::memcpy(d + i, s + i, n - i);
}

// The k in [1, n) where ids[k]'s bits above the low 16 differ from ids[k - 1]'s, in order:
// fn(k) for each. Sixteen IDs at a time are compared with the current run's high part, so a
// group inside one run costs one branch (a long list's runs are few and long: at most 16 in an
// ascending list at 2^20 vertices; four IDs compared pairwise per branch were a quarter of
// Keep24's samples: docs/benchmarks.md, "Issue 28: the runs' encoding in one pass").
template <typename Fn>
void ForEachHighChange(const uint32_t* ids, size_t n, Fn&& fn) {
  size_t k = 1;
#if defined(__SSE2__)
  if (n != 0) {
    uint32_t cur = ids[0] >> 16;  // the high part of ids[k - 1]
    while (k + 16 <= n) {
      const __m128i h = _mm_set1_epi32(static_cast<int>(cur));
      auto same = [&](size_t at) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ids + at));
        return _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(_mm_srli_epi32(x, 16), h)));
      };
      const int m = same(k) | same(k + 4) << 4 | same(k + 8) << 8 | same(k + 12) << 12;
      if (m == 0xFFFF) {
        k += 16;
        continue;
      }
      k += static_cast<size_t>(__builtin_ctz(~m & 0xFFFF));  // the first of another part
      fn(k);
      cur = ids[k] >> 16;
      ++k;
    }
  }
#endif
  for (; k < n; ++k) {
    if ((ids[k] >> 16) != (ids[k - 1] >> 16)) fn(k);
  }
}

// The runs of ids[0, n) as the k where each run after the first starts (ForEachHighChange),
// appended to *cuts; returns the bytes of its runs record (Block::long_recs), or 0 when the
// list stays in 3-byte IDs (then *cuts is as it was): shorter than kRunList, too long for a run's
// 24-bit count, or no saving once its index entries are counted. (Runs keep the list's order
// whatever it is: IDs need not ascend.)
// Bytes of the runs record of an n-ID list in `runs` runs (Block::long_recs: the count, a header
// per run, a 16-bit low part per ID), and its inverse.
constexpr size_t RunsRecordBytes(size_t n, size_t runs) { return 4 + 4 * runs + 2 * n; }
constexpr size_t RunsOfRecord(size_t n, size_t bytes) { return (bytes - 4 - 2 * n) / 4; }

size_t RunCuts(const uint32_t* ids, size_t n, std::vector<uint32_t>* cuts) {
  if (n < ListCache::kRunList || n >= (size_t{1} << 24)) return 0;
  const size_t before = cuts->size();
  ForEachHighChange(ids, n, [&](size_t k) { cuts->push_back(static_cast<uint32_t>(k)); });
  const size_t runs = cuts->size() - before + 1;
  const size_t bytes = RunsRecordBytes(n, runs);
  // Its index entries (long_j, long_off) count against the saving too.
  if (bytes + sizeof(uint16_t) + sizeof(uint32_t) < 3 * n) return bytes;
  cuts->resize(before);
  return 0;
}

// Writes the runs record of ids[0, n), whose runs start after the first at cuts[0, ncuts)
// (RunCuts), at `out`.
void WriteRunsRecord(const uint32_t* ids, size_t n, const uint32_t* cuts, size_t ncuts,
                     uint8_t* out) {
  const uint32_t runs = static_cast<uint32_t>(ncuts + 1);
  std::memcpy(out, &runs, 4);
  uint8_t* const headers = out + 4;
  for (size_t r = 0; r < runs; ++r) {
    const size_t start = r == 0 ? 0 : cuts[r - 1], end = r < ncuts ? cuts[r] : n;
    const uint32_t h = (ids[start] >> 16) << 24 | static_cast<uint32_t>(end - start);
    std::memcpy(headers + 4 * r, &h, 4);
  }
  // 2-aligned: Block::long_recs.
  auto* low = reinterpret_cast<uint16_t*>(headers + 4 * size_t{runs});
  size_t i = 0;
#if defined(__SSE2__)
  // Low halves, eight at a time: biased into int16's range for the signed saturating pack.
  const __m128i mask = _mm_set1_epi32(0xFFFF), bias32 = _mm_set1_epi32(0x8000);
  const __m128i bias16 = _mm_set1_epi16(static_cast<int16_t>(0x8000));
  for (; i + 8 <= n; i += 8) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ids + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ids + i + 4));
    const __m128i p = _mm_packs_epi32(_mm_sub_epi32(_mm_and_si128(a, mask), bias32),
                                      _mm_sub_epi32(_mm_and_si128(b, mask), bias32));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(low + i), _mm_xor_si128(p, bias16));
  }
#endif
  for (; i < n; ++i) low[i] = static_cast<uint16_t>(ids[i]);
}

// The bytes of the Elias-Fano record of ids[0, n) (IdEliasFano, "Gap lists"), or 0 when the
// list stays in 3-byte IDs: shorter than kGapList, an ID below the one before it (Bytes is
// then 0), or no saving once its index entries are counted.
size_t EliasFanoBytes(const uint32_t* ids, size_t n) {
  if (n < ListCache::kGapList) return 0;
  const size_t bytes = IdEliasFano::Bytes(ids, n);
  // Its index entries (long_j, long_off) count against the saving too.
  if (bytes != 0 && bytes + sizeof(uint16_t) + sizeof(uint32_t) < 3 * n) return bytes;
  return 0;
}

}  // namespace

void ListCache::Keep24(Block& b, const uint32_t* ids, size_t count, size_t lists) {
  // Long lists first: which, their records' bytes, and where their runs start (one pass over
  // each list; WriteRunsRecord reuses the starts), or their gaps' units (gap_lists_).
  thread_local std::vector<uint32_t> cuts;  // the long lists' run starts, list after list
  cuts.clear();
  uint64_t long_entries = 0, run_bytes = 0;
  size_t longs = 0;
  auto end_of = [&](size_t j) -> size_t { return j + 1 < lists ? b.off[j + 1] : count; };
  uint32_t record[kLayoutBlock];  // each list's record bytes, 0: kept in 3-byte IDs
  assert(lists <= kLayoutBlock);
  for (size_t j = 0; j < lists; ++j) {
    const size_t e0 = b.off[j], e1 = end_of(j);
    const size_t r =
        gap_lists_ ? EliasFanoBytes(ids + e0, e1 - e0) : RunCuts(ids + e0, e1 - e0, &cuts);
    // < 2^27 as runs (RunCuts takes lists under 2^24 IDs); a gaps record's bytes are cut only
    // when run_bytes passes UINT32_MAX, and then record[] is not read.
    record[j] = static_cast<uint32_t>(r);
    if (r == 0) continue;
    ++longs;
    long_entries += e1 - e0;
    run_bytes += r;
  }
  b.coded_count = static_cast<uint32_t>(count);
  b.form = Block::kId24;
  if (longs == 0 || run_bytes > UINT32_MAX) {
    Into24(ids, count, &b.bytes);
    return;
  }
  b.long_j.resize(longs);
  b.long_off.resize(longs);
  // The Elias-Fano decoders load past a record's bytes: the 8 readable bytes elias_fano.h
  // promises after the last one.
  const size_t tail = gap_lists_ ? 8 : 0;
  b.long_recs.resize(static_cast<size_t>(run_bytes) + tail);
  std::memset(b.long_recs.data() + run_bytes, 0, tail);
  // The other lists go into the 3-byte array from where they are: each stretch of them
  // between two long lists at once (moving them together first, a memmove, took 14-15% of
  // the encoding's samples).
  Size24(count - long_entries, &b.bytes);
  size_t n_short = 0, k = 0, at = 0, c = 0;  // c: the next list's first entry in `cuts`
  size_t stretch = 0;                          // where the short lists not yet written begin
  auto put_stretch = [&](size_t end) {
    Put24(ids + stretch, end - stretch, b.bytes.data(), n_short);
    n_short += end - stretch;
  };
  for (size_t j = 0; j < lists; ++j) {
    const size_t e0 = b.off[j], e1 = end_of(j);
    const size_t r = record[j];
    if (r == 0) continue;
    put_stretch(e0);
    stretch = e1;
    b.long_j[k] = static_cast<uint16_t>(j);
    b.long_off[k] = static_cast<uint32_t>(at);
    if (gap_lists_) {
      IdEliasFano::Write(ids + e0, e1 - e0, r, b.long_recs.data() + at);
    } else {
      // All the list's runs but the first start in `cuts`.
      const size_t ncuts = RunsOfRecord(e1 - e0, r) - 1;
      WriteRunsRecord(ids + e0, e1 - e0, cuts.data() + c, ncuts, b.long_recs.data() + at);
      c += ncuts;
    }
    at += r;
    ++k;
  }
  put_stretch(count);
  FenceStreamed();
  assert(n_short == count - long_entries && at == run_bytes && c == cuts.size());
}

ListCache::Stage* ListCache::ClaimStage() {
  if (!reserve_.empty()) return nullptr;
  const int i = tbb::this_task_arena::current_thread_index();
  if (i < 0 || static_cast<size_t>(i) >= num_stages_) return nullptr;
  Stage& st = stages_[static_cast<size_t>(i)];
  const void* me = &stage_token;
  const void* expected = nullptr;
  if (st.owner.load(std::memory_order_relaxed) != me &&
      !st.owner.compare_exchange_strong(expected, me, std::memory_order_acquire)) {
    return nullptr;  // another thread (another arena's, same index) is using it
  }
  if (st.block != SIZE_MAX) Unstage(st);  // this thread has moved on from that block
  st.owner.store(me, std::memory_order_relaxed);
  return &st;
}

bool ListCache::ShouldPack(size_t count) {
  if (packing_ != ListPacking::kAuto) return packing_ == ListPacking::kAlways;
  if (packing_started_.load(std::memory_order_relaxed)) return true;
  const uint64_t entries = seen_entries_.fetch_add(count, std::memory_order_relaxed) + count;
  const uint64_t blocks = seen_blocks_.fetch_add(1, std::memory_order_relaxed) + 1;
  const double plain = id24_ ? 3 : 4;  // bytes of an entry not packed
  const double projected = (static_cast<double>(entries) * plain / static_cast<double>(blocks) +
                            (kLayoutBlock + 1) * 4.0) * static_cast<double>(blocks_.size());
  if (projected <= 0.9 * static_cast<double>(max_bytes_)) return false;
  packing_started_.store(true, std::memory_order_relaxed);
  return true;
}

bool ListCache::Pack(size_t bi, const uint32_t* ids, size_t count) {
  Block& b = blocks_[bi];
  const size_t len = static_cast<size_t>(
      std::min<VertexId>(kLayoutBlock, bound_ - static_cast<VertexId>(bi) * kLayoutBlock));
  while (b.next <= len) b.off[b.next++] = static_cast<uint32_t>(count);
  // Two passes: the records' widths and sizes, then the records, written into a vector of the
  // exact size (no scratch buffer to keep).
  int8_t width[kLayoutBlock];
  uint64_t total = 0;
  for (size_t j = 0; j < len; ++j) {
    const uint32_t e0 = b.off[j], e1 = b.off[j + 1];
    if (e0 == e1) continue;
    width[j] = static_cast<int8_t>(PackedWidth(ids + e0, e1 - e0));
    if (width[j] < 0) return false;
    total += PackedRecordSize(e1 - e0, ids[e0], width[j]);
  }
  // Not packed unless smaller (a block of single-entry lists takes more as records).
  if (total + kPackedPad >= uint64_t{count} * 4 || total + kPackedPad > UINT32_MAX) return false;
  UninitVector<uint8_t> bytes;
  bytes.resize(static_cast<size_t>(total) + kPackedPad);  // uninitialized: written below
  size_t pos = 0;
  for (size_t j = 0; j < len; ++j) {
    const uint32_t e0 = b.off[j], e1 = b.off[j + 1];
    b.off[j] = static_cast<uint32_t>(pos);  // e1 is read before off[j + 1] is rewritten
    if (e0 != e1) pos += PackList(ids + e0, e1 - e0, width[j], bytes.data() + pos);
  }
  assert(pos == total);
  std::memset(bytes.data() + pos, 0, kPackedPad);
  for (size_t j = len; j < b.off.size(); ++j) b.off[j] = static_cast<uint32_t>(pos);
  b.bytes = std::move(bytes);
  b.form = Block::kPacked;
  return true;
}

void ListCache::Unstage(Stage& st) {
  assert(st.block != SIZE_MAX);
  Block& b = blocks_[st.block];
  assert(b.stage == &st && Held(b) == 0);
  b.stage = nullptr;
  // The block is complete (its thread moved on, or Complete closes it): pack it from the
  // stage, counting the packed bytes; a block that cannot be packed goes on as below.
  // Renumbered and ordered first (Pack and Keep24's long lists need them ascending).
  if (groups_ != nullptr && st.n != 0) {
    groups_->Renumber(st.ids32.data(), st.n, st.ids32.data());
    OrderLists(st.ids32.data(), b.off.data(), std::min<size_t>(b.next, kLayoutBlock), st.n);
  }
  if (ShouldPack(st.n) && Pack(st.block, st.ids32.data(), st.n)) {
    const size_t bytes = Held(b);
    // Drop gives back what the block holds, these bytes included: not taken back here too.
    if (used_.fetch_add(bytes, std::memory_order_relaxed) + bytes > max_bytes_) Drop(b);
    ReleaseStage(st);
    return;
  }
  b.form = id24_ ? Block::kId24 : Block::kPlain;
  const size_t bytes = id24_ ? Id24Bytes(st.n) : st.n * PerEdge();
  if (used_.fetch_add(bytes, std::memory_order_relaxed) + bytes > max_bytes_) {
    used_.fetch_sub(bytes, std::memory_order_relaxed);
    Drop(b);
  } else {
    if (id24_) {
      // Counted at 3 bytes an entry; the long lists' records take less (Keep24).
      // (A Pack that declined has set every offset: next is then past the last vertex.)
      Keep24(b, st.ids32.data(), st.n, std::min<size_t>(b.next, kLayoutBlock));
      used_.fetch_sub(bytes - Held(b), std::memory_order_relaxed);
    } else if (narrow_) {
      StreamInto(st.ids32, st.n, &b.ids32);
    } else {
      StreamInto(st.ids64, st.n, &b.ids64);
    }
    if (weights_) StreamInto(st.w, st.n, &b.w);
  }
  ReleaseStage(st);
}

void ListCache::ReleaseStage(Stage& st) {
  st.block = SIZE_MAX;
  // st.n only grows while a block is staged: here it is the most the stage held for it.
  const size_t held = st.n * PerEdge();
  size_t peak = staged_peak_.load(std::memory_order_relaxed);
  while (held > peak &&
         !staged_peak_.compare_exchange_weak(peak, held, std::memory_order_relaxed)) {
  }
  st.n = 0;
  st.room = 0;
  st.owner.store(nullptr, std::memory_order_release);
}

void ListCache::PutAt(const NeighborChunk& c, size_t at, size_t size,
                      UninitVector<uint32_t>* ids32, UninitVector<VertexId>* ids64,
                      UninitVector<double>* w) const {
  auto fit = [size](auto* v) {
    if (v->size() < size) v->resize(size);  // uninitialized (UninitVector): written below
  };
  if (narrow_) {
    fit(ids32);
    Narrow(c.dst, c.size, ids32->data() + at);
  } else {
    fit(ids64);
    std::copy(c.dst, c.dst + c.size, ids64->data() + at);
  }
  if (weights_) {
    // Keeping weights needs a scan that reads them (BuildLayout(..., weights = true)).
    assert(c.weight != nullptr);
    fit(w);
    std::copy(c.weight, c.weight + c.size, w->data() + at);
  }
}

void ListCache::StageAppend(const NeighborChunk& c, Stage* st) {
  const size_t n = st->n, need = n + c.size;
  // The stage's vectors only grow, doubling: no copy per chunk.
  const size_t have = narrow_ ? st->ids32.size() : st->ids64.size();
  PutAt(c, n, have < need ? std::max({need, 2 * have, size_t{1024}}) : need, &st->ids32,
        &st->ids64, &st->w);
  st->n = need;
  st->room = 0;
  if (narrow_ && !weights_) {
    // What Collect's inline path may append before CollectSlow's next check against
    // max_bytes_: used_ only grows meanwhile (other threads' blocks), and Unstage checks the
    // total again.
    const size_t used = used_.load(std::memory_order_relaxed);
    const size_t allowed = used < max_bytes_ ? (max_bytes_ - used) / PerEdge() : 0;
    const size_t limit = std::min(st->ids32.size(), allowed);
    if (limit > need) st->room = limit - need;
  }
}

void ListCache::Append(const NeighborChunk& c, UninitVector<uint32_t>* ids32,
                       UninitVector<VertexId>* ids64, UninitVector<double>* w) const {
  const size_t at = narrow_ ? ids32->size() : ids64->size();  // grows geometrically
  PutAt(c, at, at + c.size, ids32, ids64, w);
  // A block's own vectors are not renumbered as a whole (a stage is, when it moves).
  if (groups_ != nullptr) groups_->Renumber(ids32->data() + at, c.size, ids32->data() + at);
}

size_t ListCache::Entries(const Block& b) const {
  if (b.stage != nullptr) return b.stage->n;
  return narrow_ ? b.ids32.size() : b.ids64.size();
}

size_t ListCache::Held(const Block& b) const {
  return b.ids32.capacity() * 4 + b.ids64.capacity() * 8 + b.w.capacity() * 8 +
         b.skip.capacity() * 8 + b.bytes.capacity() + b.long_recs.capacity() +
         b.long_j.capacity() * sizeof(uint16_t) + b.long_off.capacity() * sizeof(uint32_t);
}

uint64_t ListCache::LimitDegree(const Layout& estimate) {
  assert(!collected_.load() && estimate.bound == bound_);
  const size_t per_edge = PerEdge();
  const size_t head = (kLayoutBlock + 1) * sizeof(uint32_t) + kLayoutBlock / 8;  // off + skip
  // Entries of the vertices of each degree; degrees past kCap are never kept (a list that long
  // is one lookup among thousands of entries: caching it saves little per byte).
  constexpr uint64_t kCap = uint64_t{1} << 16;
  // Heads: every block with an existing vertex may be kept.
  std::vector<uint64_t> vertices(kCap + 1, 0);
  size_t heads = 0;
  for (size_t bi = 0; bi < blocks_.size(); ++bi) {
    const VertexId lo = bi * kLayoutBlock, hi = std::min<VertexId>(bound_, lo + kLayoutBlock);
    bool any = false;
    for (VertexId v = lo; v < hi; ++v) {
      if (!estimate.exists[v]) continue;
      any = true;
      ++vertices[std::min(estimate.out_degree[v], kCap)];
    }
    if (any) heads += head;
  }
  uint64_t cutoff = 0;
  if (max_bytes_ > heads) {
    const uint64_t room = (max_bytes_ - heads) / per_edge;  // entries that fit
    uint64_t used = 0;
    for (uint64_t d = 1; d < kCap; ++d) {
      if (used + vertices[d] * d > room) break;
      used += vertices[d] * d;
      cutoff = d;
    }
    if (cutoff == kCap - 1 && vertices[kCap] == 0) cutoff = UINT64_MAX;
  }
  if (cutoff == 0) {  // not even the heads fit: keep nothing, as with max_bytes = 0
    max_bytes_ = 0;
    return 0;
  }
  // Per block: the entries of its kept lists (degree bounds, so they cannot outgrow it), and
  // the vertices left out, marked now so that Collect never starts their lists.
  reserve_.assign(blocks_.size(), 0);
  for (VertexId v = 0; v < bound_; ++v) {
    if (!estimate.exists[v]) continue;
    Block& b = blocks_[static_cast<size_t>(v / kLayoutBlock)];
    if (estimate.out_degree[v] <= cutoff) {
      reserve_[static_cast<size_t>(v / kLayoutBlock)] += estimate.out_degree[v];
      continue;
    }
    if (b.skip.empty()) {
      b.skip.assign(kLayoutBlock / 64, 0);
      used_.fetch_add(b.skip.capacity() * 8, std::memory_order_relaxed);
    }
    const size_t j = static_cast<size_t>(v % kLayoutBlock);
    b.skip[j / 64] |= uint64_t{1} << (j % 64);
  }
  return cutoff;
}

void ListCache::Drop(Block& b) {
  if (b.stage != nullptr) {  // its staged entries were never counted in used_
    ReleaseStage(*b.stage);
    b.stage = nullptr;
  }
  const size_t held = b.off.size() * sizeof(uint32_t) + Held(b);
  if (held) used_.fetch_sub(held, std::memory_order_relaxed);
  b = Block();
  b.state = Block::kDropped;
}

void ListCache::CollectSlow(VertexId u, const NeighborChunk& c) {
  if (u >= bound_ || c.size == 0) return;
  // Read first: a store on every chunk kept the line bouncing between the scanning threads.
  if (!collected_.load(std::memory_order_relaxed)) {
    collected_.store(true, std::memory_order_relaxed);
  }
  Block& b = blocks_[static_cast<size_t>(u / kLayoutBlock)];
  if (b.state == Block::kDropped) return;
  // A damaged list, or more of a block already packed or in 3-byte IDs (no appends to those):
  // Pass streams it.
  if (max_bytes_ == 0 || c.dst[c.size - 1] >= bound_ || b.coded()) {
    Drop(b);
    return;
  }
  const size_t j = static_cast<size_t>(u % kLayoutBlock);
  if (b.Skipped(j)) return;  // bound over LimitDegree's cutoff: read from the store
  if (b.state == Block::kEmpty) {
    b.state = Block::kFilling;
    b.off.assign(kLayoutBlock + 1, 0);
    const size_t head = b.off.size() * sizeof(uint32_t);
    if (used_.fetch_add(head, std::memory_order_relaxed) + head > max_bytes_) {
      Drop(b);  // gives the head back
      return;
    }
    // The block's lists at once, no doubling copies: LimitDegree's sum of kept bounds, else
    // gathered in this thread's stage and moved at the block's end (Stage).
    size_t want = 0;
    if (!reserve_.empty()) {
      want = static_cast<size_t>(reserve_[static_cast<size_t>(u / kLayoutBlock)]);
    } else if (Stage* st = ClaimStage(); st != nullptr) {
      st->block = static_cast<size_t>(u / kLayoutBlock);
      b.stage = st;
    }
    if (want > 0) {
      const size_t before = Held(b);
      if (narrow_) {
        b.ids32.reserve(want);
      } else {
        b.ids64.reserve(want);
      }
      if (weights_) b.w.reserve(want);
      const size_t after = Held(b);
      if (used_.fetch_add(after - before, std::memory_order_relaxed) + (after - before) > max_bytes_) {
        Drop(b);
        return;
      }
    }
  }
  const size_t count = Entries(b);
  if (count + c.size > UINT32_MAX) {  // past what off[] can say
    Drop(b);
    return;
  }
  while (b.next <= j) b.off[b.next++] = static_cast<uint32_t>(count);
  if (Stage* st = b.stage; st != nullptr) {
    // Counted in used_ when moved; checked here against what is counted already, so a block
    // that cannot fit is dropped before its stage grows past the budget.
    if (used_.load(std::memory_order_relaxed) + (count + c.size) * PerEdge() > max_bytes_) {
      Drop(b);
      return;
    }
    StageAppend(c, st);
    return;
  }
  const size_t before = Held(b);
  Append(c, &b.ids32, &b.ids64, &b.w);
  const size_t after = Held(b);
  if (after > before &&
      used_.fetch_add(after - before, std::memory_order_relaxed) + (after - before) > max_bytes_) {
    Drop(b);  // gives back all the block held
  }
}

void ListCache::OrderLists(uint32_t* ids, const uint32_t* off, size_t lists, size_t count) const {
  thread_local std::vector<uint32_t> scratch;
  for (size_t j = 0; j < lists; ++j) {
    const size_t e0 = off[j], e1 = j + 1 < lists ? off[j + 1] : count;
    groups_->OrderList(ids + e0, e1 - e0, &scratch);
  }
}

void ListCache::Close(Block& b, VertexId len) {
  if (b.stage != nullptr) Unstage(*b.stage);
  if (b.state != Block::kFilling) return;
  const size_t count = b.form == Block::kId24 ? b.coded_count
                       : narrow_              ? b.ids32.size()
                                              : b.ids64.size();
  while (b.next <= len) b.off[b.next++] = static_cast<uint32_t>(count);
  b.state = Block::kKept;
  // Lists appended here rather than staged are ordered now (those staged were by Unstage:
  // ordered lists stay as they are).
  if (groups_ != nullptr && count != 0 && (b.form == Block::kOpen || b.form == Block::kPlain)) {
    OrderLists(b.ids32.data(), b.off.data(), static_cast<size_t>(len), count);
  }
  // Give back what doubling left unused.
  const size_t cap = Held(b);
  auto trim = [](auto& v) {
    if (v.capacity() > v.size() + v.size() / 4) v.shrink_to_fit();
  };
  trim(b.ids32);
  trim(b.ids64);
  trim(b.w);
  // Lists never staged (LimitDegree's reservations, a thread without a stage) are decided
  // here; a packed block is smaller than its plain lists (Pack), so `now` only falls.
  if (b.form == Block::kOpen && count != 0) {
    if (ShouldPack(count) &&
        Pack(static_cast<size_t>(&b - blocks_.data()), b.ids32.data(), count)) {
      b.ids32 = UninitVector<uint32_t>();
    } else if (id24_) {
      Keep24(b, b.ids32.data(), count, len);
      b.ids32 = UninitVector<uint32_t>();
    } else {
      b.form = Block::kPlain;
    }
  }
  const size_t now = Held(b);
  assert(now <= cap);
  used_.fetch_sub(cap - now, std::memory_order_relaxed);
}

void ListCache::CloseBlock(size_t bi, bool offered) {
  Block& b = blocks_[bi];
  Close(b, std::min<VertexId>(kLayoutBlock, bound_ - static_cast<VertexId>(bi) * kLayoutBlock));
  // (A block whose every list LimitDegree left out stays kEmpty: Pass streams it.)
  if (b.state == Block::kEmpty && offered && b.skip.empty()) b.state = Block::kNone;
}

bool ListCache::EndBlock(size_t bi) {
  if (max_bytes_ == 0 || bi >= blocks_.size()) return false;
  CloseBlock(bi, /*offered=*/true);
  const Block& b = blocks_[bi];
  return b.state == Block::kNone || (b.state == Block::kKept && b.skip.empty());
}

Status ListCache::Complete(const Snapshot& snap, const Layout& layout) {
  if (layout.bound != bound_) return Status::Corruption("analytics: VertexIdBound() changed");
  if (max_bytes_ == 0) return Status::OK();
  const bool collected = collected_.load(std::memory_order_relaxed);
  FirstError err;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, blocks_.size()),
                    [&](const tbb::blocked_range<size_t>& r) {
    for (size_t bi = r.begin(); bi < r.end(); ++bi) {
      Block& b = blocks_[bi];
      const VertexId lo = bi * kLayoutBlock, hi = std::min<VertexId>(bound_, lo + kLayoutBlock);
      // Whether every list of the block was offered to Collect: by BuildLayout's visitor, or
      // by the scan below (a block skipped after another's error was not).
      bool read = collected;
      if (!collected && b.state == Block::kEmpty && !err.failed()) {
        // Weights are read only when kept.
        Status s = snap.ScanAdjacency(
            lo, hi, d_, weights_,
            [&](VertexId u) {  // lists LimitDegree left out are not decoded
              return u < lo || u >= hi || (layout.exists[u] && !b.Skipped(static_cast<size_t>(u - lo)));
            },
            [&](VertexId u, const NeighborChunk& c) {
              if (u < lo || u >= hi) return ScanStep::kStop;
              Collect(u, c);
              return b.state != Block::kDropped ? ScanStep::kMore : ScanStep::kStop;
            });
        if (!s.ok()) {
          err.Set(s);
          Drop(b);
        }
        read = s.ok();
      }
      CloseBlock(bi, read);
    }
  });
  // Every block is closed, so every stage moved: its buffers go back now, not with the cache.
  for (size_t i = 0; i < num_stages_; ++i) {
    assert(stages_[i].block == SIZE_MAX);
    stages_[i].ids32 = UninitVector<uint32_t>();
    stages_[i].ids64 = UninitVector<VertexId>();
    stages_[i].w = UninitVector<double>();
  }
  // A block dropped after a read error is streamed (and reports it) by Pass.
  return Status::OK();
}

}  // namespace strata::analytics
