#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "atomic_file.hpp"
#include "latlab/latency_report.hpp"

namespace latlab {

namespace {

std::string errno_text() { return std::strerror(errno); }

std::string dir_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

AtomicFile::~AtomicFile() { abandon(); }

Result<void> AtomicFile::open(const std::string& path) {
  path_ = path;
  if (path.empty()) return make_error("no output path given");
  if (!path.empty() && path.back() == '/')
    return make_error("'" + path + "' names a directory, not a file");
  temp_ = path + ".tmp.XXXXXX";
  const int fd = mkstemp(temp_.data());
  if (fd < 0) {
    const std::string why = errno_text();
    temp_.clear();
    return make_error("cannot create a temporary file next to '" + path + "' (" + why +
                      "); check that the directory exists and is writable");
  }
  fchmod(fd, 0644);
  file_ = fdopen(fd, "w");
  if (file_ == nullptr) {
    const std::string why = errno_text();
    ::close(fd);
    abandon();
    return make_error("cannot open the temporary file for '" + path + "': " + why);
  }
  return {};
}

Result<void> AtomicFile::write(std::string_view data) {
  if (file_ == nullptr) return make_error("writing to '" + path_ + "' after it was closed");
  if (!data.empty() && std::fwrite(data.data(), 1, data.size(), file_) != data.size()) {
    failed_ = true;
    return make_error("writing '" + path_ + "' failed: " + errno_text());
  }
  return {};
}

Result<void> AtomicFile::commit() {
  if (file_ == nullptr) return make_error("'" + path_ + "' is not open");
  if (failed_) {
    abandon();
    return make_error("'" + path_ + "' was not written: an earlier write failed");
  }
  if (std::fflush(file_) != 0 || fsync(fileno(file_)) != 0) {
    const std::string why = errno_text();
    abandon();
    return make_error("flushing '" + path_ + "' failed: " + why);
  }
  if (std::fclose(file_) != 0) {
    file_ = nullptr;
    const std::string why = errno_text();
    abandon();
    return make_error("closing '" + path_ + "' failed: " + why);
  }
  file_ = nullptr;
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) {
    const std::string why = errno_text();
    abandon();
    return make_error("cannot replace '" + path_ + "': " + why);
  }
  temp_.clear();
  // Make the rename itself durable.
  const int dfd = ::open(dir_of(path_).c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    fsync(dfd);
    ::close(dfd);
  }
  return {};
}

void AtomicFile::abandon() {
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
  if (!temp_.empty()) {
    ::unlink(temp_.c_str());
    temp_.clear();
  }
}

Result<void> write_file_atomic(const std::string& path, std::string_view content) {
  AtomicFile f;
  if (Result<void> r = f.open(path); !r) return r;
  if (Result<void> r = f.write(content); !r) return r;
  return f.commit();
}

}  // namespace latlab
