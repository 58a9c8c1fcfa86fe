// Whole-file reads and writes for tests that inspect or damage a store's files.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace strata::testing {

// The file's bytes; empty when it cannot be opened.
inline std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Replaces the file's content with `data`.
inline void WriteAll(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
}

// Pages of the mapped range [p, p + n) (p page-aligned) that are resident, by mincore;
// SIZE_MAX if mincore refuses the range.
inline size_t ResidentPages(const void* p, size_t n) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> vec((n + page - 1) / page);
  if (::mincore(const_cast<void*>(p), n, vec.data()) != 0) return SIZE_MAX;
  size_t resident = 0;
  for (unsigned char c : vec) resident += c & 1;
  return resident;
}

// Pages of [offset, offset + n) of the file at `path` present in the kernel page cache
// (mincore over a read-only mapping); 0 when the file cannot be mapped.
inline size_t ResidentPages(const std::string& path, size_t offset, size_t n) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  void* m = ::mmap(nullptr, offset + n, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) return 0;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t from = offset / page * page;
  const size_t resident = ResidentPages(static_cast<const char*>(m) + from, offset + n - from);
  ::munmap(m, offset + n);
  return resident == SIZE_MAX ? 0 : resident;
}

// Pages of the store's segment files (*.seg in `dir`) and how many of them are in the page
// cache.
struct PageCount {
  size_t resident = 0;
  size_t pages = 0;
};
inline PageCount SegmentPages(const std::string& dir) {
  PageCount c;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".seg") continue;
    const size_t size = static_cast<size_t>(e.file_size());
    c.pages += (size + page - 1) / page;
    c.resident += ResidentPages(e.path().string(), 0, size);
  }
  return c;
}

// True on tmpfs, whose pages are the files themselves: nothing can be dropped there.
inline bool OnTmpfs(const std::string& dir) {
  struct statfs fs;
  return ::statfs(dir.c_str(), &fs) == 0 && fs.f_type == 0x01021994;  // TMPFS_MAGIC
}

}  // namespace strata::testing
