// AtomicFile: a file written under a temporary name in the target's directory
// and renamed over the target on commit(); abandoned (temp removed, target
// untouched) on destruction without commit. Not thread-safe.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "latlab/result.hpp"

namespace latlab {

class AtomicFile {
 public:
  AtomicFile() = default;
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  Result<void> open(const std::string& path);
  Result<void> write(std::string_view data);
  // fflush + fsync + rename + directory fsync.
  Result<void> commit();
  void abandon();

 private:
  std::string path_;
  std::string temp_;
  std::FILE* file_ = nullptr;
  bool failed_ = false;
};

}  // namespace latlab
