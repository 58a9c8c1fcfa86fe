// Kept files: the store files outside the manifest that readers depend on — VIEWS (the view
// definitions) and SUBSCRIPTIONS (the durable subscriptions' positions). Each is rewritten
// whole (temporary, fsync, rename) and records a stamp that only grows with what it holds:
// VIEWS the commit timestamp of its newest definition change (ViewCatalog::as_of_),
// SUBSCRIPTIONS its set generation (ChangeFeed::generation). Once a file is written the
// manifest records that the store keeps it (StoreState::kept_files) and, after each rewrite
// that raises the stamp, the stamp (StoreState::kept_stamps). So a kept file that is gone, or
// whose own stamp is below the manifest's (an older copy put back), is told from the current
// one: Open refuses the store (DBImpl::CheckKeptFiles, CheckKeptStamp), Verify and
// `strata inspect` report it (KeptFileProblems). docs/file-format.md, "Manifest".
//
// The CLI's IDMODE and IDDICT are kept files too, without stamps: the engine records them
// once they exist and refuses the store when one is gone, even under Options::repair (going on
// without them would read a mapped store as dense: every answer for another vertex). What
// they hold is checked by the CLI (graphio/id_dictionary.h), which does read them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "db/manifest.h"
#include "io/env.h"

namespace strata {

// The kept files, by bit.
inline constexpr uint32_t kKeptFileBits[] = {kKeptViews, kKeptSubscriptions, kKeptIdMode,
                                             kKeptIdDictionary};

// Whether Options::repair may go on without kept file `bit` (VIEWS, SUBSCRIPTIONS: yes; the
// ID files: no).
inline constexpr bool KeptFileRepairable(uint32_t bit) { return KeptFileHasStamp(bit); }

// The file's name in the store directory.
const char* KeptFileName(uint32_t bit);
// What the store loses without it, for messages ("its view definitions").
const char* KeptFileContents(uint32_t bit);
// "<dir>/<name>: missing; the manifest records that the store keeps <contents> there; <what
// to do>": one wording for Open, Verify and inspect.
std::string KeptFileMissing(const std::string& dir, uint32_t bit);
// "<dir>/<name> holds <contents> as of <stamp kind> `loaded`, but the manifest records
// `recorded`: an older copy of it": one wording for Open, Verify and inspect.
std::string KeptFileOlder(const std::string& dir, uint32_t bit, uint64_t loaded,
                          uint64_t recorded);

// One line per problem of the store in `dir` against `state`: a kept file missing, unreadable
// (its Corruption), or older than the manifest records (the files with stamps). Empty when
// all is well.
std::vector<std::string> KeptFileProblems(io::Env* env, const std::string& dir,
                                          const StoreState& state);
// The same through the POSIX Env.
std::vector<std::string> KeptFileProblems(const std::string& dir, const StoreState& state);

}  // namespace strata
