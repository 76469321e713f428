// A scratch directory for one test, removed with everything in it, and a
// file read whole: shared by the unit and e2e tests.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace latlab::test {

struct TempDir {
  std::filesystem::path path;
  // mkdtemp under /tmp: "/tmp/<prefix>-XXXXXX".
  explicit TempDir(const std::string& prefix = "latlab-test") {
    std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    // A test may have made it read-only: give it back before removing.
    std::filesystem::permissions(path, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace latlab::test
