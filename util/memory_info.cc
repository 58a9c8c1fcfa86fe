#include "util/memory_info.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <system_error>

namespace strata {

namespace {

constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();

// The whole file (they are small: /proc and cgroup files), or empty when it cannot be read.
std::string ReadSmallFile(const std::string& path) {
  std::string text;
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
  std::fclose(f);
  return text;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

// A decimal number filling all of s, or false (empty, a sign or other character, overflow).
bool ParseU64(std::string_view s, uint64_t* out) {
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, *out);
  return ec == std::errc() && ptr == end;  // an empty s is invalid_argument
}

}  // namespace

uint64_t ParseMemAvailable(std::string_view meminfo) {
  constexpr std::string_view kKey = "MemAvailable:";
  for (size_t at = 0; at < meminfo.size();) {
    size_t end = meminfo.find('\n', at);
    if (end == std::string_view::npos) end = meminfo.size();
    std::string_view line = meminfo.substr(at, end - at);
    at = end + 1;
    if (line.substr(0, kKey.size()) != kKey) continue;
    line = Trim(line.substr(kKey.size()));
    // "<number> kB"
    const size_t space = line.find(' ');
    if (space == std::string_view::npos || Trim(line.substr(space)) != "kB") return 0;
    uint64_t kib = 0;
    if (!ParseU64(line.substr(0, space), &kib) || kib > kNoLimit / 1024) return 0;
    return kib * 1024;
  }
  return 0;
}

uint64_t CgroupHeadroom(std::string_view limit_text, std::string_view usage_text) {
  uint64_t limit = 0, usage = 0;
  if (!ParseU64(Trim(limit_text), &limit) || !ParseU64(Trim(usage_text), &usage)) return kNoLimit;
  return limit > usage ? limit - usage : 0;
}

std::string_view CgroupPath(std::string_view text, std::string_view controller) {
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    // "<id>:<controllers>:<path>"
    const size_t c1 = line.find(':');
    if (c1 == std::string_view::npos) continue;
    const size_t c2 = line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    const std::string_view list = line.substr(c1 + 1, c2 - c1 - 1);
    const std::string_view path = line.substr(c2 + 1);
    if (path.empty() || path.front() != '/') continue;
    if (controller.empty()) {
      if (line.substr(0, c1) == "0" && list.empty()) return path;
      continue;
    }
    for (size_t p = 0; p <= list.size();) {
      size_t q = list.find(',', p);
      if (q == std::string_view::npos) q = list.size();
      if (list.substr(p, q - p) == controller) return path;
      p = q + 1;
    }
  }
  return {};
}

namespace {

// The smallest headroom over `path` and its ancestors under `root`, each level's limit and
// usage in the files named; UINT64_MAX when no level has a limit (or none can be read).
uint64_t HierarchyHeadroom(const std::string& root, std::string path, const char* limit_file,
                           const char* usage_file) {
  uint64_t room = kNoLimit;
  while (!path.empty()) {
    const std::string dir = root + (path == "/" ? std::string() : path);
    const std::string limit = ReadSmallFile(dir + "/" + limit_file);
    if (!limit.empty()) {
      room = std::min(room, CgroupHeadroom(limit, ReadSmallFile(dir + "/" + usage_file)));
    }
    if (path == "/") break;
    const size_t slash = path.rfind('/');
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
  return room;
}

}  // namespace

uint64_t AvailableMemoryBytes() {
  const uint64_t avail = ParseMemAvailable(ReadSmallFile("/proc/meminfo"));
  if (avail == 0) return 0;
  const std::string cgroup = ReadSmallFile("/proc/self/cgroup");
  // A process in a cgroup namespace sees its own group as "/" (the mount's root); outside one,
  // the full path from the hierarchy's root. Both resolve under the mount.
  const uint64_t v2 = HierarchyHeadroom("/sys/fs/cgroup", std::string(CgroupPath(cgroup, "")),
                                        "memory.max", "memory.current");
  const uint64_t v1 =
      HierarchyHeadroom("/sys/fs/cgroup/memory", std::string(CgroupPath(cgroup, "memory")),
                        "memory.limit_in_bytes", "memory.usage_in_bytes");
  return std::min({avail, v2, v1});
}

}  // namespace strata
