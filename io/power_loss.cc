// Testing: a power loss, simulated from a journal of what the Envs of a process did
// (StartPowerLossJournalForTesting, SimulatePowerLossForTesting in io/env.h).
//
// The journal is a text file of one record per line, each written by one write(2) to a
// descriptor opened with O_APPEND after the operation it records succeeded (so a process killed
// between the two leaves the operation unrecorded, and a torn last line is ignored):
//   C <existed> <path>        a file created (opened with O_CREAT|O_TRUNC); existed: 0 or 1
//   S <bytes> <path>          a sync of the file at <path> succeeded: its first <bytes> are durable
//   D <dir>                   a sync of the directory succeeded: every earlier entry change in it
//                             is durable
//   R <from> <to> <kept>      a rename; <kept> is a hard link of the file it replaced at <to>,
//                             made before it ("-": <to> did not exist; "?": the link failed)
//   U <path> <kept>           a removal; <kept> as for R
// Fields are separated by tabs. The simulation replays the records to know, for each file the
// journal created, where it is now and how many of its bytes are durable, and which entry
// changes of each directory no sync of that directory followed; it undoes those (newest first),
// then cuts each created file to its durable bytes. What was done outside the Env (a raw
// unlink, a directory's removal) is durable: a change whose file or directory it removed since
// is not undone.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "io/env.h"

namespace strata::io {

namespace {

std::atomic<int> journal_fd{-1};
std::atomic<uint64_t> kept_count{0};
std::mutex journal_mu;  // Start/Stop against each other
std::string kept_dir;   // written by Start only, while no record is being written

std::string Normal(const std::string& path) {
  std::string p = std::filesystem::path(path).lexically_normal().string();
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

std::string DirOf(const std::string& normal_path) {
  const size_t slash = normal_path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return normal_path.substr(0, slash);
}

void Record(const std::string& line) {
  const int fd = journal_fd.load(std::memory_order_acquire);
  if (fd < 0) return;
  // One write: a kill tears at most this last line, which the simulation ignores.
  ssize_t r;
  do {
    r = ::write(fd, line.data(), line.size());
  } while (r < 0 && errno == EINTR);
}

// The project's spelling of a file error ("file <path> offset 0: <what> failed: <errno>").
Status ErrnoError(const std::string& path, const char* what) {
  return IOErrorAt(path, 0, std::string(what) + " failed: " + std::strerror(errno));
}

}  // namespace

namespace detail {

bool PowerLossJournalOn() { return journal_fd.load(std::memory_order_relaxed) >= 0; }

void JournalCreate(const std::string& path, bool existed) {
  Record(std::string("C\t") + (existed ? "1" : "0") + "\t" + Normal(path) + "\n");
}

void JournalSync(const std::string& path, uint64_t durable) {
  Record("S\t" + std::to_string(durable) + "\t" + Normal(path) + "\n");
}

void JournalSyncDir(const std::string& dir) { Record("D\t" + Normal(dir) + "\n"); }

std::string JournalKeep(const std::string& path) {
  if (!PowerLossJournalOn()) return "-";
  const std::string kept = kept_dir + "/" + std::to_string(kept_count.fetch_add(1));
  if (::link(path.c_str(), kept.c_str()) == 0) return kept;
  return errno == ENOENT ? "-" : "?";
}

void JournalRename(const std::string& from, const std::string& to, const std::string& kept) {
  Record("R\t" + Normal(from) + "\t" + Normal(to) + "\t" + kept + "\n");
}

void JournalRemove(const std::string& path, const std::string& kept) {
  Record("U\t" + Normal(path) + "\t" + kept + "\n");
}

void JournalDropKept(const std::string& kept) {
  if (kept != "-" && kept != "?") ::unlink(kept.c_str());
}

}  // namespace detail

Status StartPowerLossJournalForTesting(const std::string& journal) {
  std::lock_guard<std::mutex> l(journal_mu);
  if (journal_fd.load() >= 0) return Status::InvalidArgument("a power-loss journal is already on");
  kept_dir = journal + ".kept";
  if (::mkdir(kept_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoError(kept_dir, "mkdir");
  }
  const int fd = ::open(journal.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError(journal, "open");
  journal_fd.store(fd, std::memory_order_release);
  return Status::OK();
}

void StopPowerLossJournalForTesting() {
  std::lock_guard<std::mutex> l(journal_mu);
  const int fd = journal_fd.exchange(-1);
  if (fd >= 0) ::close(fd);
}

namespace {

// An entry change that no sync of its directory followed.
struct EntryChange {
  char kind;             // 'C', 'R' or 'U'
  std::string path;      // C, U: the path; R: `to`
  std::string from;      // R
  std::string kept;      // R, U
  int displaced = -1;    // R, U: the created file the change took off its path (-1: none)
};

std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> f;
  size_t start = 0;
  for (;;) {
    const size_t tab = line.find('\t', start);
    f.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return f;
    start = tab + 1;
  }
}

Status Undo(const EntryChange& c) {
  switch (c.kind) {
    case 'C':
      if (::unlink(c.path.c_str()) != 0 && errno != ENOENT) {
        return ErrnoError(c.path, "unlink");
      }
      return Status::OK();
    case 'R':
      if (::rename(c.path.c_str(), c.from.c_str()) != 0) {
        // Removed outside the Env since (its directory too, perhaps): that removal is durable
        // and took the name, so nothing goes back.
        if (errno == ENOENT) return Status::OK();
        return ErrnoError(c.path, "rename back");
      }
      [[fallthrough]];
    case 'U':
      if (c.kept == "?") return Status::IOError("no link was kept of " + c.path);
      if (c.kept != "-" && ::rename(c.kept.c_str(), c.path.c_str()) != 0) {
        // The directory was removed outside the Env (durable): nothing to put the file back in.
        if (errno == ENOENT && ::access(DirOf(c.path).c_str(), F_OK) != 0) return Status::OK();
        return ErrnoError(c.path, "restore");
      }
      return Status::OK();
  }
  return Status::Corruption("unknown entry change");
}

}  // namespace

Status SimulatePowerLossForTesting(const std::string& journal, PowerLossUndone* undone) {
  std::string text;
  {
    int fd;
    Status s = detail::OpenFd(journal, O_RDONLY, &fd);
    if (!s.ok()) return s;
    struct stat st;
    if (::fstat(fd, &st) != 0) s = ErrnoError(journal, "fstat");
    if (s.ok()) {
      text.resize(static_cast<size_t>(st.st_size));
      s = detail::PosixReadFull(fd, journal, 0, text.size(), text.data());
    }
    ::close(fd);
    if (!s.ok()) return s;
  }

  // Replay: where each created file is, its durable bytes, and each directory's changes since
  // its last sync (indices into `changes`, which is in journal order).
  std::map<std::string, int> file_at;   // path -> created file
  std::vector<uint64_t> durable;         // created file -> bytes a sync made durable
  std::vector<EntryChange> changes;
  std::vector<bool> pending;             // changes[i] not followed by a sync of its directory
  std::map<std::string, std::vector<size_t>> pending_in;  // dir -> indices of pending changes
  auto take = [&](const std::string& path) {
    auto it = file_at.find(path);
    if (it == file_at.end()) return -1;
    const int id = it->second;
    file_at.erase(it);
    return id;
  };
  auto change = [&](EntryChange c) {
    pending_in[DirOf(c.path)].push_back(changes.size());
    changes.push_back(std::move(c));
    pending.push_back(true);
  };
  size_t start = 0;
  for (;;) {
    const size_t nl = text.find('\n', start);
    if (nl == std::string::npos) break;  // a torn last line: never recorded
    const size_t line_start = start;
    const std::vector<std::string> f = Fields(text.substr(start, nl - start));
    start = nl + 1;
    const std::string& kind = f[0];
    if (kind == "C" && f.size() == 3) {
      take(f[2]);
      file_at[f[2]] = static_cast<int>(durable.size());
      durable.push_back(0);
      if (f[1] == "0") change({'C', f[2], "", "", -1});
    } else if (kind == "S" && f.size() == 3) {
      auto it = file_at.find(f[2]);
      if (it != file_at.end()) durable[it->second] = std::stoull(f[1]);
    } else if (kind == "D" && f.size() == 2) {
      for (size_t i : pending_in[f[1]]) pending[i] = false;
      pending_in[f[1]].clear();
    } else if (kind == "R" && f.size() == 4) {
      const int moved = take(f[1]);
      const int displaced = take(f[2]);
      if (moved >= 0) file_at[f[2]] = moved;
      change({'R', f[2], f[1], f[3], displaced});
    } else if (kind == "U" && f.size() == 3) {
      change({'U', f[1], "", f[2], take(f[1])});
    } else {
      return Status::Corruption("power-loss journal " + journal + ": bad record at offset " +
                                std::to_string(line_start));
    }
  }

  // Undo the pending changes, newest first, moving the created files back with them.
  for (size_t i = changes.size(); i-- > 0;) {
    if (!pending[i]) continue;
    const EntryChange& c = changes[i];
    Status s = Undo(c);
    if (!s.ok()) return s;
    ++undone->entries;
    if (c.kind == 'C') {
      take(c.path);
    } else if (c.kind == 'R') {
      const int moved = take(c.path);
      if (moved >= 0) file_at[c.from] = moved;
      if (c.displaced >= 0) file_at[c.path] = c.displaced;
    } else if (c.displaced >= 0) {
      file_at[c.path] = c.displaced;
    }
  }
  // A file a change kept only as a link (its removal durable) is gone with the journal's links.
  for (const auto& [path, id] : file_at) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) continue;  // removed outside the Env (not recorded)
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (size <= durable[id]) continue;
    if (::truncate(path.c_str(), static_cast<off_t>(durable[id])) != 0) {
      return ErrnoError(path, "truncate");
    }
    ++undone->files_cut;
    undone->bytes_cut += size - durable[id];
  }
  std::error_code ec;
  std::filesystem::remove_all(journal + ".kept", ec);
  std::filesystem::remove(journal, ec);
  return Status::OK();
}

}  // namespace strata::io
