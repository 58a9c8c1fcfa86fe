#include "db/filename.h"

#include <cstdio>
#include <string_view>

namespace strata {

namespace {

constexpr std::string_view kManifestPrefix = "MANIFEST-";

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// `digits` is one or more decimal digits whose value fits 64 bits.
bool ParseNumber(std::string_view digits, uint64_t* n) {
  if (digits.empty()) return false;
  uint64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (~uint64_t{0} - d) / 10) return false;
    v = v * 10 + d;
  }
  *n = v;
  return true;
}

}  // namespace

std::string ManifestFileName(uint64_t number) {
  char name[32];
  snprintf(name, sizeof(name), "MANIFEST-%06llu", static_cast<unsigned long long>(number));
  return name;
}

std::string WalFileName(uint64_t number) {
  char name[32];
  snprintf(name, sizeof(name), "%06llu.wal", static_cast<unsigned long long>(number));
  return name;
}

uint64_t WalNumberOfPath(const std::string& path) {
  const size_t slash = path.rfind('/');
  FileType type;
  uint64_t num = 0;
  if (!ParseFileName(slash == std::string::npos ? path : path.substr(slash + 1), &type, &num) ||
      type != FileType::kWal) {
    return 0;
  }
  return num;
}

bool ParseFileName(const std::string& name, FileType* type, uint64_t* number) {
  uint64_t n = 0;
  if (EndsWith(name, kTempSuffix)) {
    *type = FileType::kTemp;
  } else if (name == kCurrentFile) {
    *type = FileType::kCurrent;
  } else if (name == kLockFile) {
    *type = FileType::kLock;
  } else if (name == kEventLogFile) {
    *type = FileType::kEventLog;
  } else if (name == kOldEventLogFile) {
    *type = FileType::kOldEventLog;
  } else if (name == kIdModeFile) {
    *type = FileType::kIdMode;
  } else if (name == kIdDictionaryFile) {
    *type = FileType::kIdDictionary;
  } else if (name == kSubscriptionsFile) {
    *type = FileType::kSubscriptions;
  } else if (name == kViewsFile) {
    *type = FileType::kViews;
  } else if (name.size() > kManifestPrefix.size() && name.starts_with(kManifestPrefix)) {
    *type = FileType::kManifest;
    if (!ParseNumber(std::string_view(name).substr(kManifestPrefix.size()), &n)) n = 0;
  } else if (EndsWith(name, ".wal") &&
             ParseNumber(std::string_view(name).substr(0, name.size() - 4), &n)) {
    *type = FileType::kWal;
  } else if (EndsWith(name, ".seg") &&
             ParseNumber(std::string_view(name).substr(0, name.size() - 4), &n)) {
    *type = FileType::kSegment;
  } else {
    return false;
  }
  *number = n;
  return true;
}

bool RemovedOnCreate(const std::string& name) {
  FileType type;
  uint64_t number;
  return ParseFileName(name, &type, &number) &&
         (type == FileType::kTemp || type == FileType::kManifest);
}

FileWithoutCurrent ClassifyFileWithoutCurrent(const std::string& name) {
  FileType type;
  uint64_t number;
  if (!ParseFileName(name, &type, &number)) return FileWithoutCurrent::kOther;
  switch (type) {
    case FileType::kWal:
    case FileType::kSegment:
    case FileType::kViews:
      return FileWithoutCurrent::kStoreData;
    case FileType::kManifest:
    case FileType::kTemp:
    case FileType::kLock:
    case FileType::kEventLog:
    case FileType::kOldEventLog:
      return FileWithoutCurrent::kCreationLeftover;
    case FileType::kCurrent:  // callers ask only when there is none
    case FileType::kIdMode:   // the CLI's files: strata ingest decides about them itself
    case FileType::kIdDictionary:
      return FileWithoutCurrent::kOther;
    case FileType::kSubscriptions:  // written only after CURRENT
      return FileWithoutCurrent::kStoreData;
  }
  return FileWithoutCurrent::kOther;
}

}  // namespace strata
