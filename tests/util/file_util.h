// Whole-file reads and writes for tests that inspect or damage a store's files.
#pragma once

#include <fstream>
#include <iterator>
#include <string>

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

}  // namespace strata::testing
