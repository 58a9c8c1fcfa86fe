#include "db/version_set.h"

#include <algorithm>

#include "util/clock.h"

namespace strata {

namespace {

// Whether levels k+1.. (indexes k..) of direction dir hold nothing.
bool DeeperEmpty(const Version& v, int dir, size_t k) {
  for (size_t i = k; i < v.levels[dir].size(); ++i) {
    if (!v.levels[dir][i].empty()) return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// VersionSet

std::shared_ptr<const Version> VersionSet::CurrentWithRetired(uint64_t* reclaimed,
                                                              uint64_t* rebuilt) const {
  std::lock_guard<std::mutex> g(version_mu_);
  *reclaimed = retired_reclaimed_;
  *rebuilt = retired_rebuilt_;
  return current_;
}

void VersionSet::SetCurrent(std::shared_ptr<const Version> v) {
  active_.store(v->memgraphs.empty() ? nullptr : v->memgraphs[0].get(), std::memory_order_release);
  l0_files_.store(v->l0[0].size(), std::memory_order_relaxed);
  current_ = std::move(v);
}

void VersionSet::Reset(std::shared_ptr<const Version> v) {
  std::lock_guard<std::mutex> g(version_mu_);
  SetCurrent(std::move(v));
}

void VersionSet::PushActiveMemGraph(std::shared_ptr<mem::MemGraph> active) {
  std::lock_guard<std::mutex> g(version_mu_);
  auto nv = std::make_shared<Version>(*current_);
  nv->memgraphs.insert(nv->memgraphs.begin(), std::move(active));
  SetCurrent(std::move(nv));
}

Status VersionSet::LogAndApply(Manifest* manifest, const ManifestEdit& edit,
                               const std::function<Status()>& precheck,
                               const VersionChange& change, uint64_t* index_micros) {
  std::lock_guard<std::mutex> install(install_mu_);
  // Under install_mu_ no other install changes the files, so the index computed from
  // current() is the one the new Version must hold. A flush adds level-0 files only, which
  // the index does not hold: the new Version shares the old index whole.
  index::VertexIndex new_index;
  const uint64_t index_t0 = NowMicros();
  Status s;
  if (change.kind != VersionChange::kFlush) {
    std::shared_ptr<const Version> base = current();
    s = IndexAfterCompaction(*base, change.dir, change.removed, change.added, change.level,
                             &new_index);
  }
  if (index_micros != nullptr) *index_micros = NowMicros() - index_t0;
  if (!s.ok()) return s;
  s = manifest->LogAndApply(edit, precheck);
  if (!s.ok()) return s;

  std::lock_guard<std::mutex> g(version_mu_);
  auto nv = std::make_shared<Version>(*current_);
  if (change.kind == VersionChange::kFlush) {
    const std::shared_ptr<mem::MemGraph>& mg = change.flushed;
    nv->memgraphs.erase(std::find(nv->memgraphs.begin(), nv->memgraphs.end(), mg));
    retired_reclaimed_ += mg->reclaimed_versions();  // sealed: its counts are final
    retired_rebuilt_ += mg->rebuilt_versions();
    for (const auto& h : change.added) nv->l0[h->meta.tag].insert(nv->l0[h->meta.tag].begin(), h);
  } else {
    const int dir = change.dir;
    nv->index[dir] = std::move(new_index);
    auto gone = [&](const std::shared_ptr<SegmentHandle>& h) {
      return std::find(change.removed.begin(), change.removed.end(), h) != change.removed.end();
    };
    auto& l0 = nv->l0[dir];
    l0.erase(std::remove_if(l0.begin(), l0.end(), gone), l0.end());
    auto& levels = nv->levels[dir];
    for (auto& l : levels) l.erase(std::remove_if(l.begin(), l.end(), gone), l.end());
    if (levels.size() < change.level) levels.resize(change.level);
    auto& out = levels[change.level - 1];
    out.insert(out.end(), change.added.begin(), change.added.end());
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return a->meta.min_src < b->meta.min_src;
    });
  }
  SetCurrent(std::move(nv));
  return Status::OK();
}

// ---------------------------------------------------------------------------------------------
// CompactionPicker

uint64_t CompactionPicker::LevelTarget(size_t k) const {
  uint64_t t = options_.level1_bytes;
  for (size_t i = 0; i < k; ++i) t *= static_cast<uint64_t>(options_.level_fanout);
  return t;
}

int CompactionPicker::Directions() const {
  return options_.graph_kind == GraphKind::kDirectedWithInEdges ? 2 : 1;
}

void CompactionPicker::L0Job(const Version& v, int dir, CompactionJob* job) const {
  VertexId lo = ~VertexId{0}, hi = 0;
  for (const auto& h : v.l0[dir]) {
    if (h->meta.num_vertices == 0) continue;
    lo = std::min(lo, h->meta.min_src);
    hi = std::max(hi, h->meta.max_src);
  }
  *job = CompactionJob();
  job->dir = dir;
  job->output_level = 1;
  job->inputs = v.l0[dir];
  if (!v.levels[dir].empty()) {
    for (const auto& h : v.levels[dir][0]) {
      if (h->meta.max_src >= lo && h->meta.min_src <= hi) job->inputs.push_back(h);
    }
  }
  job->bottom = DeeperEmpty(v, dir, 1);
  job->why = std::to_string(v.l0[dir].size()) + " L0 files";
}

bool CompactionPicker::PickIdle(const Version& v, CompactionJob* job) const {
  for (int dir = 0; dir < Directions(); ++dir) {
    if (v.l0[dir].empty()) continue;
    L0Job(v, dir, job);
    job->why = "idle, " + job->why;
    return true;
  }
  return false;
}

bool CompactionPicker::Pick(const Version& v, CompactionJob* job) {
  for (int dir = 0; dir < Directions(); ++dir) {
    // Scores: L0 files / l0_compaction_trigger, and each level's bytes / its target. The
    // highest score of at least 1 runs. (Always preferring L0 -> L1 while L0 refills faster
    // than it drains never moves L1 down: every L0 -> L1 then rewrites all of a growing L1.)
    double best = 1.0;
    size_t pick = 0;
    for (size_t k = 0; k + 1 < static_cast<size_t>(options_.max_levels) && k < v.levels[dir].size(); ++k) {
      uint64_t bytes = 0;
      for (const auto& h : v.levels[dir][k]) bytes += h->meta.size_bytes;
      double score = static_cast<double>(bytes) / static_cast<double>(LevelTarget(k));
      if (score > best) {
        best = score;
        pick = k + 1;
      }
    }
    const double l0_score = static_cast<double>(v.l0[dir].size()) /
                            static_cast<double>(std::max(1, options_.l0_compaction_trigger));
    if (v.l0[dir].size() >= static_cast<size_t>(options_.l0_compaction_trigger) &&
        (pick == 0 || l0_score >= best)) {
      L0Job(v, dir, job);
      return true;
    }
    // Li -> Li+1: one file of the fullest level over its target, round-robin by vertex range.
    if (pick == 0) continue;
    const size_t k = pick - 1;
    const auto& level = v.levels[dir][k];
    auto& cursor = cursor_[dir];
    if (cursor.size() <= k) cursor.resize(k + 1, 0);
    size_t i = 0;
    while (i < level.size() && level[i]->meta.min_src < cursor[k]) ++i;
    if (i == level.size()) i = 0;
    const auto& h = level[i];
    cursor[k] = h->meta.max_src + 1;
    *job = CompactionJob();
    job->dir = dir;
    job->output_level = static_cast<uint32_t>(k + 2);
    job->inputs.push_back(h);
    if (v.levels[dir].size() > k + 1) {
      for (const auto& o : v.levels[dir][k + 1]) {
        if (o->meta.max_src >= h->meta.min_src && o->meta.min_src <= h->meta.max_src) {
          job->inputs.push_back(o);
        }
      }
    }
    job->bottom = DeeperEmpty(v, dir, k + 2);
    job->move = options_.compaction_moves && job->inputs.size() == 1;
    job->why = "level " + std::to_string(k + 1) + " at " + std::to_string(best).substr(0, 4) +
               "x its target";
    return true;
  }
  return false;
}

bool CompactionPicker::PickFull(const Version& v, int dir, CompactionJob* job) const {
  *job = CompactionJob();
  job->dir = dir;
  job->bottom = true;
  job->why = "full";
  size_t deepest = 0;
  for (size_t k = 0; k < v.levels[dir].size(); ++k) {
    if (!v.levels[dir][k].empty()) deepest = k + 1;
  }
  job->output_level = static_cast<uint32_t>(std::max<size_t>(1, deepest));
  job->inputs = v.l0[dir];
  for (const auto& l : v.levels[dir]) job->inputs.insert(job->inputs.end(), l.begin(), l.end());
  return !job->inputs.empty();
}

}  // namespace strata
