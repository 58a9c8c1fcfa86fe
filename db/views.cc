#include "db/views.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <utility>

#include "db/filename.h"
#include "db/record_log.h"
#include "util/coding.h"

namespace strata {

namespace {

constexpr char kMagic[] = "SGVIEWS1";
constexpr uint32_t kChecksumKind = 0x56;  // 'V'
// 2: the first record is the file's as-of timestamp (fixed 64-bit; ViewCatalog::as_of_).
// 3: that record also holds the store ID (fixed 64-bit) after it. Versions 1 (no such record)
// and 2 (no store ID) are read; every write is version 3.
constexpr uint32_t kViewsVersion = 3;
constexpr size_t kAsOfRecordBytes[] = {0, 0, 8, 16};  // by version
constexpr int kMaxDepth = 64;  // operand nesting; a closed history cannot be deeper than its views
constexpr size_t kMaxNameBytes = 128;

std::string FormatReal(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", x);
  return buf;
}

void PutString(std::string* out, const std::string& s) {
  PutVarint64(out, s.size());
  out->append(s);
}

class Reader {
 public:
  explicit Reader(std::string_view in) : p_(in.data()), end_(in.data() + in.size()) {}
  bool Varint(uint64_t* v) {
    const char* q = DecodeVarint64(p_, end_, v);
    if (q == nullptr) return false;
    p_ = q;
    return true;
  }
  bool Fixed64(uint64_t* v) {
    if (end_ - p_ < 8) return false;
    *v = DecodeFixed64(p_);
    p_ += 8;
    return true;
  }
  bool Byte(uint8_t* b) {
    if (p_ >= end_) return false;
    *b = static_cast<uint8_t>(*p_++);
    return true;
  }
  bool Real(double* d) {
    uint64_t v;
    if (!Fixed64(&v)) return false;
    std::memcpy(d, &v, 8);
    return true;
  }
  bool String(std::string* s) {
    uint64_t n;
    if (!Varint(&n) || n > static_cast<uint64_t>(end_ - p_)) return false;
    s->assign(p_, n);
    p_ += n;
    return true;
  }
  bool done() const { return p_ == end_; }

 private:
  const char* p_;
  const char* end_;
};

void PutReal(std::string* out, double d) {
  uint64_t v;
  std::memcpy(&v, &d, 8);
  PutFixed64(out, v);
}

std::pair<VertexId, VertexId> Normalize(std::pair<VertexId, VertexId> e, bool undirected) {
  if (undirected && e.first > e.second) std::swap(e.first, e.second);
  return e;
}

}  // namespace

bool IsValidViewName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameBytes) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string ViewDefinition::Describe() const {
  auto list = [&](const char* op) {
    std::string s = std::string(op) + "(";
    for (size_t i = 0; i < operands.size(); ++i) s += (i ? ", " : "") + operands[i];
    return s + ")";
  };
  switch (kind) {
    case Kind::kUnion: return list("union");
    case Kind::kIntersection: return list("intersect");
    case Kind::kDifference: return list("minus");
    case Kind::kFilter: break;
  }
  std::vector<std::string> parts;
  if (has_vertices) parts.push_back("vertices " + std::to_string(vertices.size()));
  if (edge_mode == EdgeMode::kInclude) parts.push_back("include " + std::to_string(edges.size()) + " edges");
  if (edge_mode == EdgeMode::kExclude) parts.push_back("exclude " + std::to_string(edges.size()) + " edges");
  if (has_weight_range) {
    parts.push_back("weight [" + FormatReal(weight_min) + ", " + FormatReal(weight_max) + "]");
  }
  if (parts.empty()) return "all";
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? "; " : "") + parts[i];
  return s;
}

// ---- Record encoding: ts (fixed64) | op (byte) | name (varint length + bytes) | for kCreate:
// kind (byte) | flags (byte: 1 vertices, 2 weight range) | edge mode (byte) |
// vertices (varint count, then ascending as varint deltas) | edges (varint count, then varint
// pairs) | weight_min, weight_max (fixed64 doubles, when flagged) | operands (varint count,
// strings).

void ViewCatalog::EncodeRecord(Timestamp ts, Op op, const std::string& name,
                               const ViewDefinition* def, std::string* out) {
  out->clear();
  PutFixed64(out, ts);
  out->push_back(static_cast<char>(op));
  PutString(out, name);
  if (op != Op::kCreate) return;
  out->push_back(static_cast<char>(def->kind));
  out->push_back(static_cast<char>((def->has_vertices ? 1 : 0) | (def->has_weight_range ? 2 : 0)));
  out->push_back(static_cast<char>(def->edge_mode));
  std::vector<VertexId> vs = def->vertices;
  std::sort(vs.begin(), vs.end());
  vs.erase(std::unique(vs.begin(), vs.end()), vs.end());
  PutVarint64(out, vs.size());
  VertexId prev = 0;
  for (VertexId v : vs) {
    PutVarint64(out, v - prev);
    prev = v;
  }
  PutVarint64(out, def->edges.size());
  for (const auto& [u, v] : def->edges) {
    PutVarint64(out, u);
    PutVarint64(out, v);
  }
  if (def->has_weight_range) {
    PutReal(out, def->weight_min);
    PutReal(out, def->weight_max);
  }
  PutVarint64(out, def->operands.size());
  for (const std::string& o : def->operands) PutString(out, o);
}

Status ViewCatalog::DecodeRecord(std::string_view in, Timestamp* ts, Op* op, std::string* name,
                                 ViewDefinition* def) {
  Reader r(in);
  auto bad = [](const std::string& what) { return Status::Corruption("view record: " + what); };
  uint8_t b;
  if (!r.Fixed64(ts) || !r.Byte(&b)) return bad("short header");
  if (b != static_cast<uint8_t>(Op::kCreate) && b != static_cast<uint8_t>(Op::kDrop)) {
    return bad("unknown op " + std::to_string(b));
  }
  *op = static_cast<Op>(b);
  if (!r.String(name) || !IsValidViewName(*name)) return bad("bad view name");
  *def = ViewDefinition();
  if (*op == Op::kDrop) return r.done() ? Status::OK() : bad("trailing bytes");
  uint8_t kind, flags, mode;
  if (!r.Byte(&kind) || !r.Byte(&flags) || !r.Byte(&mode)) return bad("short definition");
  if (kind > 3 || mode > 2 || (flags & ~3) != 0) return bad("bad definition header");
  def->kind = static_cast<ViewDefinition::Kind>(kind);
  def->has_vertices = (flags & 1) != 0;
  def->has_weight_range = (flags & 2) != 0;
  def->edge_mode = static_cast<ViewDefinition::EdgeMode>(mode);
  uint64_t n;
  if (!r.Varint(&n) || n > in.size()) return bad("bad vertex count");
  def->vertices.reserve(n);
  VertexId prev = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t d;
    if (!r.Varint(&d)) return bad("short vertex list");
    prev += d;
    def->vertices.push_back(prev);
  }
  if (!r.Varint(&n) || n > in.size()) return bad("bad edge count");
  def->edges.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t u, v;
    if (!r.Varint(&u) || !r.Varint(&v)) return bad("short edge list");
    def->edges.emplace_back(u, v);
  }
  if (def->has_weight_range && (!r.Real(&def->weight_min) || !r.Real(&def->weight_max))) {
    return bad("short weight range");
  }
  if (!r.Varint(&n) || n > in.size()) return bad("bad operand count");
  for (uint64_t i = 0; i < n; ++i) {
    std::string o;
    if (!r.String(&o)) return bad("short operand");
    def->operands.push_back(std::move(o));
  }
  return r.done() ? Status::OK() : bad("trailing bytes");
}

// ---- Persistence

Status ViewCatalog::Load(io::Env* env, const std::string& dir, uint64_t store_id,
                         Timestamp* max_ts) {
  env_ = env;
  dir_ = dir;
  store_id_ = store_id;
  file_version_ = 0;
  *max_ts = 0;
  const std::string path = ViewsFilePath(dir);
  if (!env->FileExists(path)) return Status::OK();
  std::map<std::string, std::vector<Entry>> h;
  RecordLogTail tail;
  uint32_t version = 0;
  auto known_version = [&] {
    return version >= 1 && version <= kViewsVersion
               ? Status::OK()
               : io::CorruptionAt(path, 8, "unsupported format version " + std::to_string(version));
  };
  bool first = true;
  Timestamp as_of = 0;  // version 1: the newest entry's timestamp
  Status s = ReadRecordLog(
      env, path, kMagic, &version, kChecksumKind,
      [&](std::string_view rec, uint64_t off) -> Status {
        if (Status v = known_version(); !v.ok()) return v;
        if (std::exchange(first, false) && version >= 2) {
          if (rec.size() != kAsOfRecordBytes[version]) {
            return io::CorruptionAt(path, off, "the first record is not the as-of timestamp");
          }
          as_of = DecodeFixed64(rec.data());
          const uint64_t owner = version >= 3 ? DecodeFixed64(rec.data() + 8) : store_id;
          if (store_id != 0 && owner != store_id) {
            // Another store's definitions name its vertices and its commit timestamps.
            return io::CorruptionAt(path, off, io::AnotherStore("VIEWS", owner, store_id));
          }
          return Status::OK();
        }
        Entry e;
        Op op;
        std::string name;
        Status d = DecodeRecord(rec, &e.ts, &op, &name, &e.def);
        if (!d.ok()) return io::CorruptionAt(path, off, d.message());
        std::vector<Entry>& list = h[name];
        if (!list.empty() && list.back().ts >= e.ts) {
          return io::CorruptionAt(path, off, "view '" + name + "': timestamps out of order");
        }
        e.dropped = op == Op::kDrop;
        if (version == 1) {
          as_of = std::max(as_of, e.ts);
        } else if (e.ts > as_of) {
          return io::CorruptionAt(path, off, "view '" + name + "': change at ts " +
                                                 std::to_string(e.ts) +
                                                 " after the file's as-of ts " +
                                                 std::to_string(as_of));
        }
        list.push_back(std::move(e));
        return Status::OK();
      },
      &tail);
  if (s.ok()) s = known_version();  // a file with no record
  if (!s.ok()) return s;
  if (tail.cut_bytes != 0) {
    // The file is replaced by rename, never appended to: a cut tail is damage.
    return io::CorruptionAt(path, tail.valid_bytes, "damaged record: " + tail.reason);
  }
  if (version >= 2 && first) {
    return io::CorruptionAt(path, kRecordLogHeaderSize, "no as-of record");
  }
  *max_ts = as_of;
  std::lock_guard<std::mutex> g(mu_);
  file_version_ = version;
  as_of_ = as_of;
  history_.clear();
  for (auto& [name, list] : h) {
    if (!list.back().dropped) history_[name].push_back(std::move(list.back()));
  }
  return Status::OK();
}

Status ViewCatalog::WriteFile() {
  const std::string path = ViewsFilePath(dir_);
  const std::string tmp = TempFilePath(path);
  std::unique_ptr<io::WritableFile> f;
  Status s = env_->NewWritableFile(tmp, &f);
  if (!s.ok()) return s;
  std::unique_ptr<RecordWriter> w;
  s = RecordWriter::Create(f.get(), kMagic, kViewsVersion, kChecksumKind, &w);
  std::string as_of;
  PutFixed64(&as_of, as_of_);
  PutFixed64(&as_of, store_id_);
  if (s.ok()) s = w->Add(as_of);
  // Records in timestamp order, so a reader replays them as they were committed.
  std::vector<std::pair<Timestamp, std::string>> recs;
  std::string rec;
  for (const auto& [name, list] : history_) {
    for (const Entry& e : list) {
      EncodeRecord(e.ts, e.dropped ? Op::kDrop : Op::kCreate, name, &e.def, &rec);
      recs.emplace_back(e.ts, rec);
    }
  }
  std::sort(recs.begin(), recs.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [ts, r] : recs) {
    if (s.ok()) s = w->Add(r);
  }
  if (s.ok()) s = f->Sync();
  if (s.ok()) s = f->Close();
  if (s.ok()) s = env_->RenameFile(tmp, path);
  if (s.ok()) s = env_->SyncDir(dir_);
  if (s.ok()) file_version_ = kViewsVersion;
  return s;
}

Status ViewCatalog::AddOwner() {
  std::lock_guard<std::mutex> g(mu_);
  if (env_ == nullptr || file_version_ == 0 || file_version_ >= kViewsVersion) {
    return Status::OK();
  }
  return WriteFile();
}

// ---- The history

const ViewCatalog::Entry* ViewCatalog::Find(const std::string& name, Timestamp ts) const {
  auto it = history_.find(name);
  if (it == history_.end()) return nullptr;
  const Entry* found = nullptr;
  for (const Entry& e : it->second) {
    if (e.ts > ts) break;
    found = &e;
  }
  return found != nullptr && !found->dropped ? found : nullptr;
}

Status ViewCatalog::Check(Op op, const std::string& name, const ViewDefinition* def, bool replace,
                          VertexId vertex_limit) const {
  if (!IsValidViewName(name)) {
    return Status::InvalidArgument("bad view name '" + name +
                                   "': 1 to 128 characters of A-Z a-z 0-9 _ . -");
  }
  std::lock_guard<std::mutex> g(mu_);
  const Timestamp now = kMaxTimestamp;
  const Entry* cur = Find(name, now);
  // Live views that name `target` as an operand.
  auto users = [&](const std::string& target) {
    std::string u;
    for (const auto& [n, list] : history_) {
      const Entry* e = Find(n, now);
      if (e == nullptr || n == name) continue;
      for (const std::string& o : e->def.operands) {
        if (o == target) u += (u.empty() ? "" : ", ") + n;
      }
    }
    return u;
  };
  if (op == Op::kDrop) {
    if (cur == nullptr) return Status::NotFound("no view '" + name + "'");
    const std::string u = users(name);
    if (!u.empty()) return Status::InvalidArgument("view '" + name + "' is used by " + u);
    return Status::OK();
  }
  if (cur != nullptr && !replace) return Status::InvalidArgument("view '" + name + "' exists");
  const ViewDefinition& d = *def;
  if (d.kind == ViewDefinition::Kind::kFilter) {
    if (!d.operands.empty()) return Status::InvalidArgument("a filter view takes no operands");
    if (d.edge_mode == ViewDefinition::EdgeMode::kNone && !d.edges.empty()) {
      return Status::InvalidArgument("edges given without an edge mode");
    }
    if (d.has_weight_range && !(d.weight_min <= d.weight_max)) {
      return Status::InvalidArgument("weight range: min must be <= max");
    }
    for (VertexId v : d.vertices) {
      if (v >= vertex_limit) return Status::InvalidArgument("vertex " + std::to_string(v) + " out of range");
    }
    for (const auto& [u, v] : d.edges) {
      if (u >= vertex_limit || v >= vertex_limit) {
        return Status::InvalidArgument("edge (" + std::to_string(u) + ", " + std::to_string(v) +
                                       ") out of range");
      }
    }
    return Status::OK();
  }
  if (d.has_vertices || d.has_weight_range || d.edge_mode != ViewDefinition::EdgeMode::kNone ||
      !d.vertices.empty() || !d.edges.empty()) {
    return Status::InvalidArgument("a set operation takes operands only");
  }
  if (d.operands.size() < 2) return Status::InvalidArgument("a set operation needs two views at least");
  for (const std::string& o : d.operands) {
    if (o == name) return Status::InvalidArgument("view '" + name + "' cannot use itself");
    if (Find(o, now) == nullptr) return Status::NotFound("no view '" + o + "'");
  }
  // Replacing `name`: no operand may reach `name` (a cycle through the new definition).
  if (cur != nullptr) {
    std::set<std::string> seen;
    std::vector<std::string> stack(d.operands.begin(), d.operands.end());
    while (!stack.empty()) {
      const std::string n = stack.back();
      stack.pop_back();
      if (n == name) return Status::InvalidArgument("view '" + name + "' would use itself");
      if (!seen.insert(n).second) continue;
      const Entry* e = Find(n, now);
      if (e != nullptr) stack.insert(stack.end(), e->def.operands.begin(), e->def.operands.end());
    }
  }
  return Status::OK();
}

Status ViewCatalog::Commit(Timestamp ts, Op op, const std::string& name,
                           const ViewDefinition* def, Timestamp min_active, bool write_file) {
  std::lock_guard<std::mutex> g(mu_);
  for (auto it = history_.begin(); it != history_.end();) {
    std::vector<Entry>& l = it->second;
    size_t keep = 0;  // the newest entry at or before min_active
    while (keep + 1 < l.size() && l[keep + 1].ts <= min_active) ++keep;
    l.erase(l.begin(), l.begin() + static_cast<ptrdiff_t>(keep));
    if (l.size() == 1 && l[0].dropped && l[0].ts <= min_active) {
      it = history_.erase(it);
    } else {
      ++it;
    }
  }
  std::vector<Entry>& list = history_[name];
  Entry e;
  e.ts = ts;
  e.dropped = op == Op::kDrop;
  if (def != nullptr) e.def = *def;
  list.push_back(std::move(e));
  const Timestamp old_as_of = std::exchange(as_of_, std::max(as_of_, ts));
  if (env_ == nullptr || !write_file) return Status::OK();
  Status s = WriteFile();
  if (!s.ok()) {
    list.pop_back();  // not durable: not visible either
    if (list.empty()) history_.erase(name);
    as_of_ = old_as_of;
  }
  return s;
}


Status ViewCatalog::Get(const std::string& name, Timestamp ts, ViewInfo* info) const {
  std::lock_guard<std::mutex> g(mu_);
  const Entry* e = Find(name, ts);
  if (e == nullptr) return Status::NotFound("no view '" + name + "'");
  info->name = name;
  info->created = e->ts;
  info->definition = e->def;
  return Status::OK();
}

std::vector<ViewInfo> ViewCatalog::List(Timestamp ts) const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<ViewInfo> out;
  for (const auto& [name, list] : history_) {
    const Entry* e = Find(name, ts);
    if (e != nullptr) out.push_back({name, e->ts, e->def});
  }
  return out;
}

// ---- Compilation

bool CompiledView::Eval(const Expr& e, VertexId u, VertexId v, double w) const {
  using Op = Expr::Op;
  switch (e.op) {
    case Op::kAnd:
      for (const auto& k : e.kids) {
        if (!Eval(*k, u, v, w)) return false;
      }
      return true;
    case Op::kOr:
      for (const auto& k : e.kids) {
        if (Eval(*k, u, v, w)) return true;
      }
      return false;
    case Op::kNot:
      return !Eval(*e.kids[0], u, v, w);
    case Op::kInside: {
      const std::vector<uint64_t>& b = *e.inside;
      auto in = [&](VertexId x) { return (x >> 6) < b.size() && ((b[x >> 6] >> (x & 63)) & 1); };
      return in(u) && in(v);
    }
    case Op::kWeightRange:
      return std::isnan(w) || (w >= e.lo && w <= e.hi);
    case Op::kInSet:
    case Op::kNotInSet: {
      const bool found = std::binary_search(e.set->begin(), e.set->end(),
                                            Normalize({u, v}, undirected_));
      return found == (e.op == Op::kInSet);
    }
  }
  return false;
}

struct ViewCatalog::Node {
  std::shared_ptr<std::vector<uint64_t>> bits;
  std::unique_ptr<CompiledView::Expr> pred;  // null: induced by bits
  bool weights = false;
};

namespace {

using Expr = CompiledView::Expr;

std::unique_ptr<Expr> MakeExpr(Expr::Op op) {
  auto e = std::make_unique<Expr>();
  e->op = op;
  return e;
}

// pred AND more (either may be null = true).
std::unique_ptr<Expr> And(std::unique_ptr<Expr> a, std::unique_ptr<Expr> b) {
  if (a == nullptr) return b;
  if (b == nullptr) return a;
  auto e = MakeExpr(Expr::Op::kAnd);
  e->kids.push_back(std::move(a));
  e->kids.push_back(std::move(b));
  return e;
}

// The membership of an edge in an operand's E: both endpoints in its V and its predicate.
std::unique_ptr<Expr> Member(std::shared_ptr<const std::vector<uint64_t>> bits,
                             std::unique_ptr<Expr> pred) {
  auto in = MakeExpr(Expr::Op::kInside);
  in->inside = std::move(bits);
  return And(std::move(in), std::move(pred));
}

Status CompileFilterNode(const ViewDefinition& def, const ViewShape& shape, size_t words,
                         std::shared_ptr<std::vector<uint64_t>>* bits,
                         std::unique_ptr<Expr>* pred, bool* weights) {
  const VertexId bound = shape.bound;
  const bool undirected = shape.kind == GraphKind::kUndirected;
  auto b = std::make_shared<std::vector<uint64_t>>(words, 0);
  auto set_bit = [&](VertexId v) {
    if (v < bound) (*b)[v >> 6] |= uint64_t{1} << (v & 63);
  };
  if (def.has_vertices) {
    for (VertexId v : def.vertices) set_bit(v);
  } else {
    for (VertexId v = 0; v < bound; v += 64) {
      const VertexId n = std::min<VertexId>(64, bound - v);
      (*b)[v >> 6] = n == 64 ? ~uint64_t{0} : ((uint64_t{1} << n) - 1);
    }
  }
  std::unique_ptr<Expr> p;
  if (def.edge_mode != ViewDefinition::EdgeMode::kNone) {
    auto set = std::make_shared<std::vector<std::pair<VertexId, VertexId>>>();
    for (const auto& e : def.edges) set->push_back(Normalize(e, undirected));
    std::sort(set->begin(), set->end());
    set->erase(std::unique(set->begin(), set->end()), set->end());
    if (def.edge_mode == ViewDefinition::EdgeMode::kInclude) {
      // V is limited to the listed edges' endpoints.
      std::vector<uint64_t> ends(words, 0);
      for (const auto& [u, v] : *set) {
        if (u < bound) ends[u >> 6] |= uint64_t{1} << (u & 63);
        if (v < bound) ends[v >> 6] |= uint64_t{1} << (v & 63);
      }
      for (size_t i = 0; i < words; ++i) (*b)[i] &= ends[i];
    }
    auto e = MakeExpr(def.edge_mode == ViewDefinition::EdgeMode::kInclude ? Expr::Op::kInSet
                                                                          : Expr::Op::kNotInSet);
    e->set = std::move(set);
    p = std::move(e);
  }
  if (def.has_weight_range) {
    auto e = MakeExpr(Expr::Op::kWeightRange);
    e->lo = def.weight_min;
    e->hi = def.weight_max;
    p = And(std::move(e), std::move(p));
    *weights = true;
  }
  *bits = std::move(b);
  *pred = std::move(p);
  return Status::OK();
}

size_t WordsFor(const ViewShape& shape) { return static_cast<size_t>(shape.bound / 64 + 1); }

ViewShape ShapeOf(const Snapshot& base) { return ViewShape{base.VertexIdBound(), base.kind()}; }

}  // namespace

Status ViewCatalog::CompileNode(const ViewDefinition& def, Timestamp ts, const ViewShape& shape,
                                int depth, Node* out) const {
  if (depth > kMaxDepth) return Status::Corruption("views nested too deep (a cycle?)");
  const size_t words = WordsFor(shape);
  if (def.kind == ViewDefinition::Kind::kFilter) {
    return CompileFilterNode(def, shape, words, &out->bits, &out->pred, &out->weights);
  }
  std::vector<Node> ops(def.operands.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const Entry* e = Find(def.operands[i], ts);
    if (e == nullptr) return Status::NotFound("no view '" + def.operands[i] + "'");
    Status s = CompileNode(e->def, ts, shape, depth + 1, &ops[i]);
    if (!s.ok()) return s;
    out->weights |= ops[i].weights;
  }
  auto bits = std::make_shared<std::vector<uint64_t>>(*ops[0].bits);
  switch (def.kind) {
    case ViewDefinition::Kind::kIntersection: {
      // E_A ∩ E_B: endpoints in V_A ∩ V_B (the new V) and every predicate.
      std::unique_ptr<Expr> p = std::move(ops[0].pred);
      for (size_t i = 1; i < ops.size(); ++i) {
        for (size_t w = 0; w < words; ++w) (*bits)[w] &= (*ops[i].bits)[w];
        p = And(std::move(p), std::move(ops[i].pred));
      }
      out->pred = std::move(p);
      break;
    }
    case ViewDefinition::Kind::kUnion: {
      bool all_induced_same = true;  // every operand induced by the same set: E = induced(V)
      for (size_t i = 1; i < ops.size(); ++i) {
        all_induced_same &= ops[i].pred == nullptr && *ops[i].bits == *ops[0].bits;
      }
      all_induced_same &= ops[0].pred == nullptr;
      for (size_t i = 1; i < ops.size(); ++i) {
        for (size_t w = 0; w < words; ++w) (*bits)[w] |= (*ops[i].bits)[w];
      }
      if (!all_induced_same) {
        auto any = MakeExpr(Expr::Op::kOr);
        for (Node& n : ops) any->kids.push_back(Member(n.bits, std::move(n.pred)));
        out->pred = std::move(any);
      }
      break;
    }
    case ViewDefinition::Kind::kDifference: {
      auto any = MakeExpr(Expr::Op::kOr);
      for (size_t i = 1; i < ops.size(); ++i) {
        any->kids.push_back(Member(ops[i].bits, std::move(ops[i].pred)));
      }
      auto none = MakeExpr(Expr::Op::kNot);
      none->kids.push_back(std::move(any));
      out->pred = And(std::move(ops[0].pred), std::move(none));
      break;
    }
    case ViewDefinition::Kind::kFilter:
      break;
  }
  out->bits = std::move(bits);
  return Status::OK();
}

Status ViewCatalog::Compile(const std::string& name, const Snapshot& base,
                            std::shared_ptr<const CompiledView>* out) const {
  return CompileAt(name, base.timestamp(), ShapeOf(base), out);
}

Status ViewCatalog::CompileAt(const std::string& name, Timestamp ts, const ViewShape& shape,
                              std::shared_ptr<const CompiledView>* out) const {
  std::lock_guard<std::mutex> g(mu_);
  const Entry* e = Find(name, ts);
  if (e == nullptr) return Status::NotFound("no view '" + name + "'");
  Node n;
  Status s = CompileNode(e->def, ts, shape, 0, &n);
  if (!s.ok()) return s;
  auto cv = std::make_shared<CompiledView>();
  cv->bound_ = shape.bound;
  cv->undirected_ = shape.kind == GraphKind::kUndirected;
  cv->bits_ = std::move(n.bits);
  cv->pred_ = std::move(n.pred);
  cv->needs_weights_ = cv->pred_ != nullptr && n.weights;
  *out = std::move(cv);
  return Status::OK();
}

Status ViewCatalog::CompileFilter(const ViewDefinition& def, const Snapshot& base,
                                  std::shared_ptr<const CompiledView>* out) {
  if (def.kind != ViewDefinition::Kind::kFilter) {
    return Status::InvalidArgument("an ad-hoc view must be a filter (set operations name views)");
  }
  std::shared_ptr<std::vector<uint64_t>> bits;
  std::unique_ptr<Expr> pred;
  bool weights = false;
  const ViewShape shape = ShapeOf(base);
  Status s = CompileFilterNode(def, shape, WordsFor(shape), &bits, &pred, &weights);
  if (!s.ok()) return s;
  auto cv = std::make_shared<CompiledView>();
  cv->bound_ = shape.bound;
  cv->undirected_ = shape.kind == GraphKind::kUndirected;
  cv->bits_ = std::move(bits);
  cv->pred_ = std::move(pred);
  cv->needs_weights_ = cv->pred_ != nullptr && weights;
  *out = std::move(cv);
  return Status::OK();
}

}  // namespace strata
