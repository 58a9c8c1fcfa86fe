// A fresh directory under /tmp, removed with everything in it when the object dies.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace strata::testing {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/strata-test-XXXXXX";
    const char* p = mkdtemp(tmpl);
    path_ = p ? p : "";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace strata::testing
