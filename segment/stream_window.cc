#include "segment/stream_window.h"

#include <algorithm>
#include <atomic>
#include <string>

#include "util/crc.h"

namespace strata {

namespace {
std::atomic<uint64_t> hint_windows{kDefaultStreamHintWindows};
}  // namespace

void SetStreamHintWindows(uint64_t w) { hint_windows.store(std::min(w, kMaxStreamHintWindows)); }
uint64_t GetStreamHintWindows() { return hint_windows.load(std::memory_order_relaxed); }

Status StreamWindow::Load(uint64_t pos, uint64_t n, uint64_t goal, uint64_t ahead) {
  if (ext_ != nullptr) {
    ext_ = nullptr;
    begin_ = end_ = 0;
  }
  if (pos + n > s_->len || pos + n < pos) {
    return r_->StreamCorruption(*s_, std::min(pos, s_->len),
                                "read of " + std::to_string(n) + " bytes at stream offset " +
                                    std::to_string(pos) + " past the end of the " +
                                    s_->name + " stream");
  }
  goal = std::min(std::max(goal, pos + n), s_->len);
  size_t keep = 0;
  if (pos >= begin_ && pos < end_) {
    keep = static_cast<size_t>(end_ - pos);
    std::memmove(buf_.get(), buf_.get() + (pos - begin_), keep);
    begin_ = pos;
  } else {
    begin_ = pos - pos % payload_;
    end_ = begin_;
  }
  const uint64_t first = end_ / payload_;
  const uint64_t last = (goal - 1) / payload_;
  uint64_t phys = 0;
  for (uint64_t k = first; k <= last; k++) phys += r_->BlockPhysicalSize(*s_, k);
  Reserve(keep, keep + phys + kWindowSlack);

  // One read per run of blocks inside one extent (contiguous on disk).
  reqs_.clear();
  char* dst = buf_.get() + keep;
  ForEachExtentRun(first, last, [&](uint64_t offset, uint64_t len) {
    reqs_.push_back(io::ReadRequest{offset, static_cast<size_t>(len), dst, {}});
    dst += len;
  });
  Status st = reqs_.size() == 1 ? r_->file_->Read(reqs_[0].offset, reqs_[0].len, reqs_[0].buf)
                                : r_->file_->MultiRead(reqs_.data(), reqs_.size());
  if (!st.ok()) return Reset(st);
  ahead = std::min(ahead, s_->len);
  const uint64_t windows = GetStreamHintWindows();
  if (windows > 0 && ahead > (last + 1) * payload_) {
    // Each block is named once: the hints start where the previous ones ended.
    const uint64_t from = std::max(last + 1, hinted_);
    const uint64_t to = std::min(last + windows * (last - first + 1), (ahead - 1) / payload_);
    if (from <= to) {
      ForEachExtentRun(from, to, [&](uint64_t offset, uint64_t len) { r_->file_->WillNeed(offset, len); });
      hinted_ = to + 1;
    }
  }

  // Verify each block and squeeze out the checksums.
  char* rp = buf_.get() + keep;
  char* wp = rp;
  for (uint64_t k = first; k <= last; k++) {
    uint64_t psize = r_->BlockPhysicalSize(*s_, k);
    uint64_t plen = psize - kBlockTrailerSize;
    if (DecodeFixed64(rp + plen) != Checksum64(rp, plen, ChecksumSeed(s_->kind, k))) {
      return Reset(io::CorruptionAt(r_->path_, r_->BlockOffset(*s_, k),
                                    std::string(s_->name) + " block " + std::to_string(k) +
                                        " checksum mismatch"));
    }
    std::memmove(wp, rp, plen);
    wp += plen;
    rp += psize;
  }
  std::memset(wp, 0, kWindowSlack);
  end_ = begin_ + static_cast<uint64_t>(wp - buf_.get());
  return Status::OK();
}

template <class F>
void StreamWindow::ForEachExtentRun(uint64_t first, uint64_t last, F&& fn) const {
  const uint64_t per_extent = r_->header_.blocks_per_extent;
  for (uint64_t k = first; k <= last;) {
    const uint64_t end = std::min(last + 1, (k / per_extent + 1) * per_extent);
    // Blocks of one extent are contiguous; only the stream's last block may be short.
    const uint64_t begin = r_->BlockOffset(*s_, k);
    fn(begin, r_->BlockOffset(*s_, end - 1) + r_->BlockPhysicalSize(*s_, end - 1) - begin);
    k = end;
  }
}

void StreamWindow::Reserve(size_t keep, size_t need) {
  if (need <= cap_) return;
  // A scanner's needs stay near its window: grow by a quarter, not double, so the buffer
  // stays within ~1.25x of the largest need.
  size_t cap = std::max(need, cap_ + cap_ / 4);
  std::unique_ptr<char[]> b(new char[cap]);
  if (keep > 0) std::memcpy(b.get(), buf_.get(), keep);
  buf_ = std::move(b);
  cap_ = cap;
}

}  // namespace strata
