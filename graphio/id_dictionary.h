// IdDictionary: maps sparse external vertex IDs (arbitrary uint64, as in LDBC Graphalytics
// files) to the dense internal IDs 0..size()-1 the store uses, and back.
//
// Mappings are permanent: internal IDs are handed out in order of first appearance and never
// reused, so a vertex that is deleted and later reappears gets its old internal ID back.
//
// Memory: the reverse map is a vector internal -> external (8 B per entry); the forward map
// is an open-addressing table of 32-bit internal IDs (keys are compared through the vector),
// at most 70% full: about 14-20 B per entry in total (MemoryBytes()). Hence at most
// kMaxEntries entries.
//
// Persistence (docs/input-formats.md has the bytes): a header with magic, version and checksum,
// then records appended by Persist(), each holding the external IDs of a run of consecutive
// new internal IDs with two xxHash64 checksums (record header, payload). Persist() writes only
// what is new, so calling it after every ingest batch costs one append (and one fdatasync).
// Reopening verifies every record:
//   - a record cut short by the end of the file (a crash during Persist) is a torn tail: it is
//     truncated away, and IdDictionaryLoadInfo::bytes_cut says how many bytes went;
//   - a tail of zero bytes (a file extended but never written) is cut the same way;
//   - with IdDictionaryOptions::read_only the file is opened O_RDONLY and never changed: a torn
//     tail is only reported (IdDictionaryLoadInfo::torn_bytes / torn_offset, TornTailNote()),
//     the next writable open cuts it; Persist() is NotSupported;
//   - anything else that fails a check is Status::Corruption naming the file and offset.
//
// Durability contract for ingest: Persist() (with sync) the dictionary BEFORE writing the
// batch that uses its new IDs to the store. Then a torn tail can only hold mappings no
// durable batch uses, and dropping it is safe.
//
// Not thread-safe; concurrent const calls are safe when no thread modifies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strata/status.h"
#include "strata/types.h"

namespace strata::graphio {

struct IdDictionaryOptions {
  bool create_if_missing = true;
  bool error_if_exists = false;
  // fdatasync after each Persist(). Needed for the durability contract above.
  bool sync = true;
  // Opens O_RDONLY and changes nothing (for commands that only read a store, which may be on
  // a read-only directory): never creates (create_if_missing is ignored), reports a torn tail
  // instead of cutting it, and Persist() of new entries is NotSupported.
  bool read_only = false;
  // Writable opens: cut a torn tail while loading. With false the tail stays until
  // CutTornTail() or the next Persist() (which cuts first), so a caller can check the
  // dictionary against the store before changing the file.
  bool cut_torn_tail = true;
  // A new file's owner (0: none): an owner record, first after the header, names it — the
  // store ID, for the CLI — so that a dictionary put in another store's place is told from
  // the store's own (IdDictionaryLoadInfo::owner).
  uint64_t owner = 0;
};

struct IdDictionaryLoadInfo {
  bool created = false;     // the file did not exist and was created
  uint64_t entries = 0;     // mappings loaded
  uint64_t records = 0;     // records loaded
  uint64_t file_bytes = 0;  // valid bytes (after any cut): the offset where a torn tail starts
  uint64_t bytes_cut = 0;   // torn tail removed (0 when read_only)
  uint64_t torn_bytes = 0;  // torn tail found (cut, or left in place when read_only)
  uint64_t owner = 0;       // the file's owner record (0: it has none)
};

// <store>/IDMODE, written by `strata ingest` (docs/cli.md "ID modes"): "ids=dense\n" or
// "ids=map\n"; a store without it is dense. Reads the file at `path` (the caller names it,
// db/filename.h IdModeFilePath: graphio does not see db/): *present is false and *mapped false
// when there is no such file; trailing whitespace is ignored; other content is Corruption.
// The CLI (tools/cmd_common.cc ReadIdMode) and the Python package both read it through this.
Status ReadIdModeFile(const std::string& path, bool* mapped, bool* present);
// Writes it, atomically and durably (temporary, fdatasync, rename, fsync of its directory).
Status WriteIdModeFile(const std::string& path, bool mapped);
// Only a mapped store has an ID dictionary: with one at `dictionary_path`, an IDMODE that is
// missing or says dense (ReadIdModeFile's `mapped`, `present`) would have external IDs read as
// internal ones — every answer for another vertex, none refused. Corruption naming the IDMODE
// file and why then; OK otherwise. The CLI (cli::CheckIdMode) and the Python package ask it.
Status CheckIdModeAgainstDictionary(const std::string& id_mode_path,
                                    const std::string& dictionary_path, bool mapped,
                                    bool present);
// A dictionary whose owner record (IdDictionaryLoadInfo::owner) names another store than
// `store_id` maps another store's IDs: Corruption naming `dictionary_path` and both IDs. A
// dictionary without an owner record (written before they existed) passes. The CLI and the
// Python package ask it after every load of a store's dictionary.
Status CheckDictionaryOwner(const std::string& dictionary_path, uint64_t store_id,
                            uint64_t owner);

// "<path>: torn tail of N bytes at offset X (...)": what a read-only open left in place, for a
// command to report; empty when info.torn_bytes == 0 or the tail was cut.
std::string TornTailNote(const std::string& path, const IdDictionaryLoadInfo& info);

class IdDictionary {
 public:
  static constexpr uint64_t kMaxEntries = 0xFFFFFFFEull;

  // An empty, memory-only dictionary (Persist() is a no-op).
  IdDictionary();
  ~IdDictionary();
  IdDictionary(const IdDictionary&) = delete;
  IdDictionary& operator=(const IdDictionary&) = delete;

  // Loads (or creates, atomically via a renamed temporary) the dictionary file at `path`.
  // NotFound if missing and !create_if_missing; InvalidArgument if it exists and
  // error_if_exists; Corruption naming path and offset; NotSupported for a newer version.
  static Status Open(const std::string& path, const IdDictionaryOptions& options,
                     std::unique_ptr<IdDictionary>* dict, IdDictionaryLoadInfo* info = nullptr);

  // Sets *internal if `external` is mapped.
  bool Find(uint64_t external, VertexId* internal) const;
  // Maps `external`, assigning the next internal ID (== size() before the call) if it is new;
  // *added says whether it was. InvalidArgument once kMaxEntries is reached.
  Status GetOrAdd(uint64_t external, VertexId* internal, bool* added = nullptr);
  // Sets *external if internal < size().
  bool ToExternal(VertexId internal, uint64_t* external) const {
    if (internal >= ext_.size()) return false;
    *external = ext_[internal];
    return true;
  }
  // Requires internal < size().
  uint64_t External(VertexId internal) const { return ext_[internal]; }
  uint64_t size() const { return ext_.size(); }
  // Entries already in the file; size() - persisted() are waiting for Persist().
  uint64_t persisted() const { return persisted_; }

  // Cuts a torn tail left by cut_torn_tail = false (ftruncate, fdatasync); sets *bytes_cut.
  // No-op without one; NotSupported when read-only.
  Status CutTornTail(uint64_t* bytes_cut = nullptr);

  // Gives a file without an owner record (written before they existed) one naming `owner`:
  // rewritten whole with it after the header (temporary, fsync, rename), a torn tail cut
  // first. No-op when the file has an owner, `owner` is 0 or the dictionary is memory-only;
  // NotSupported when read-only. For writers, once the dictionary is known to be the store's.
  Status AddOwner(uint64_t owner);
  // The file's owner record (0: none).
  uint64_t owner() const { return owner_; }

  // Appends the entries [persisted(), size()) to the file and fdatasyncs if options.sync.
  // On error nothing counts as persisted, and a later Persist() rewrites from the same offset.
  Status Persist();

  // Sizes the tables for n entries without rehashing until then.
  void Reserve(uint64_t n);
  // Heap bytes held by the maps (capacities, not sizes) plus the object itself.
  size_t MemoryBytes() const;
  // Empty for a memory-only dictionary.
  const std::string& path() const { return path_; }

 private:
  static constexpr uint32_t kEmptySlot = 0xFFFFFFFFu;
  // Slot of `external`: either holding it or the empty slot where it belongs.
  size_t Probe(uint64_t external) const;
  void Rehash(size_t slots);
  Status Load(IdDictionaryLoadInfo* info);

  std::vector<uint64_t> ext_;     // internal -> external
  std::vector<uint32_t> slots_;   // internal IDs or kEmptySlot; size a power of two
  int slot_shift_ = 64;           // 64 - log2(slots_.size()); hash >> shift is the home slot
  uint64_t persisted_ = 0;

  std::string path_;
  IdDictionaryOptions options_;
  int fd_ = -1;
  uint64_t file_end_ = 0;  // offset of the next record
  uint64_t owner_ = 0;     // the file's owner record (0: none)
  uint64_t torn_bytes_ = 0;  // a torn tail after file_end_ still in the file
};

}  // namespace strata::graphio
