#include "core/output_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "core/splitmix64.hpp"

namespace latlab {

namespace {

// Symbolic links followed before a path counts as a loop (Linux's own limit).
constexpr int kMaxSymlinkHops = 40;
// Bytes buffered before a write(2).
constexpr size_t kWriteChunk = size_t{1} << 16;

std::string errno_text(int e) { return std::strerror(e); }

std::string dir_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string dev_ino(const struct stat& st) {
  return std::to_string(static_cast<unsigned long long>(st.st_dev)) + ":" +
         std::to_string(static_cast<unsigned long long>(st.st_ino));
}

std::string normalised(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(path, ec);
  if (ec) return path;
  const std::filesystem::path canon = std::filesystem::weakly_canonical(abs, ec);
  return ec ? abs.lexically_normal().string() : canon.string();
}

// N of "/dev/fd/N", "/proc/self/fd/N", "/proc/thread-self/fd/N" or
// "/proc/<this pid>/fd/N"; -1 for any other path.
int descriptor_of(const std::string& p) {
  const std::string pid_fd = "/proc/" + std::to_string(getpid()) + "/fd/";
  for (const std::string& prefix : {std::string("/dev/fd/"), std::string("/proc/self/fd/"),
                                    std::string("/proc/thread-self/fd/"), pid_fd}) {
    if (p.size() <= prefix.size() || p.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string n = p.substr(prefix.size());
    if (n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoi(n);
  }
  return -1;
}

std::string descriptor_name(int fd) {
  if (fd == STDOUT_FILENO) return "standard output";
  if (fd == STDERR_FILENO) return "standard error";
  return "descriptor " + std::to_string(fd);
}

Result<OutputTarget> check_descriptor(OutputTarget t, int fd) {
  t.kind = OutputTarget::Kind::descriptor;
  t.fd = fd;
  t.identity = "fd:" + std::to_string(fd);
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0) {
    return make_error("cannot write '" + t.path + "': " + descriptor_name(fd) + " is not open");
  }
  if ((flags & O_ACCMODE) == O_RDONLY) {
    return make_error("cannot write '" + t.path + "': " + descriptor_name(fd) +
                      " is open for reading only");
  }
  return t;
}

// A new file at `t.resolved`: its directory must exist and be writable, its
// name must fit.
Result<OutputTarget> check_new_file(OutputTarget t) {
  const std::string dir = dir_of(t.resolved);
  const std::string name = base_of(t.resolved);
  struct stat ds {};
  if (::stat(dir.c_str(), &ds) != 0 && errno == ENAMETOOLONG) {
    return make_error("cannot write '" + t.path + "': " + errno_text(ENAMETOOLONG));
  }
  if (!S_ISDIR(ds.st_mode) || access(dir.c_str(), W_OK | X_OK) != 0) {
    return make_error("cannot write '" + t.path + "': directory '" + dir +
                      "' does not exist or is not writable");
  }
  long name_max = pathconf(dir.c_str(), _PC_NAME_MAX);
  if (name_max <= 0) name_max = NAME_MAX;
  if (name.size() > static_cast<size_t>(name_max)) {
    return make_error("cannot write '" + t.path + "': its file name is " +
                      std::to_string(name.size()) + " bytes long; the file system of '" + dir +
                      "' allows " + std::to_string(name_max));
  }
  if (dir.size() + 1 + kOutputTempPrefix.size() + 6 >= PATH_MAX || t.resolved.size() >= PATH_MAX) {
    return make_error("cannot write '" + t.path + "': the path is longer than " +
                      std::to_string(PATH_MAX - 1) + " bytes");
  }
  t.identity = normalised(t.resolved);
  return t;
}

// Blocks SIGPIPE on this thread while writing to a pipe whose reader may
// have gone: the write fails with EPIPE instead of the process dying. A
// SIGPIPE raised meanwhile is taken off the thread before unblocking.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlock() {
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      const timespec zero{};
      (void)sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t pipe_{};
  sigset_t old_{};
  bool was_pending_ = false;
};

// write(2) of all of `data`; errno of the failure, 0 on success.
int write_all(int fd, std::string_view data) {
  SigpipeBlock block;
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

// Creates ".latlab-XXXXXX" in `dir` (O_EXCL, mode 0666 less the umask); its
// descriptor, or -1 with errno set.
int create_temp(const std::string& dir, std::string& temp) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  uint64_t state = static_cast<uint64_t>(now.tv_nsec) ^ (static_cast<uint64_t>(getpid()) << 32) ^
                   reinterpret_cast<uintptr_t>(&temp);
  for (int attempt = 0; attempt < 100; ++attempt) {
    uint64_t r = splitmix64_next(state);
    std::string name(kOutputTempPrefix);
    for (int i = 0; i < 6; ++i, r /= 62) name += kChars[r % 62];
    temp = (dir == "/" ? std::string() : dir) + "/" + name;
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) {
      if (fd < 0) temp.clear();
      return fd;
    }
  }
  temp.clear();
  errno = EEXIST;
  return -1;
}

// The temporary file takes the replaced file's owner (where permitted: root,
// or a group this process belongs to) and then its mode (chown clears
// set-id bits, so the mode goes second).
void copy_owner_and_mode(int fd, const struct stat& old) {
  struct stat now {};
  if (fstat(fd, &now) == 0 && (now.st_uid != old.st_uid || now.st_gid != old.st_gid)) {
    if (fchown(fd, old.st_uid, old.st_gid) != 0)
      (void)fchown(fd, static_cast<uid_t>(-1), old.st_gid);
  }
  (void)fchmod(fd, old.st_mode & 07777);
}

// `t` resolved to an existing file `st`: writable as what it is, or why not.
Result<OutputTarget> check_existing(OutputTarget& t, const std::string& path,
                                    const struct stat& st) {
  const std::string& p = t.resolved;
  const std::string via = p == path ? "" : " (via '" + p + "')";
  if (S_ISDIR(st.st_mode))
    return make_error("'" + path + "'" + via + " is a directory, not a file");
  if (S_ISREG(st.st_mode)) {
    const std::string dir = dir_of(p);
    if (access(dir.c_str(), W_OK | X_OK) != 0) {
      return make_error("cannot write '" + path + "'" + via + ": directory '" + dir +
                        "' is not writable (the file is replaced through a temporary file there)");
    }
    return t;
  }
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
    t.kind = OutputTarget::Kind::stream;
    t.char_device = S_ISCHR(st.st_mode);
    if (access(p.c_str(), W_OK) != 0) {
      return make_error("cannot write '" + path + "'" + via + ": " + errno_text(errno));
    }
    return t;
  }
  const char* what = S_ISBLK(st.st_mode)    ? "a block device"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "not a file";
  return make_error("'" + path + "'" + via + " is " + what +
                    ": latlab writes regular files, FIFOs, character devices and '-' (standard "
                    "output) only");
}

}  // namespace

Result<OutputTarget> check_output_path(const std::string& path) {
  OutputTarget t;
  t.path = path;
  if (path.empty()) return make_error("no output path given");
  if (path == "-") return check_descriptor(t, STDOUT_FILENO);
  if (path.back() == '/') return make_error("'" + path + "' names a directory, not a file");
  std::string p = path;
  struct stat st {};
  for (int hops = 0;; ++hops) {
    if (const int fd = descriptor_of(p); fd >= 0) return check_descriptor(t, fd);
    if (::lstat(p.c_str(), &st) != 0) {
      const int e = errno;
      t.resolved = p;
      if (e == ENOENT || e == ENAMETOOLONG) return check_new_file(t);
      if (e == ELOOP) {
        return make_error("cannot write '" + path +
                          "': its directories form a loop of symbolic links");
      }
      return make_error("cannot write '" + path + "': " + errno_text(e));
    }
    if (!S_ISLNK(st.st_mode)) break;
    if (hops == kMaxSymlinkHops) {
      return make_error("cannot write '" + path + "': a loop of symbolic links (more than " +
                        std::to_string(kMaxSymlinkHops) + " followed)");
    }
    std::string target(PATH_MAX, '\0');
    const ssize_t n = ::readlink(p.c_str(), target.data(), target.size());
    if (n < 0) return make_error("cannot read the symbolic link '" + p + "': " + errno_text(errno));
    target.resize(static_cast<size_t>(n));
    p = !target.empty() && target[0] == '/' ? target : dir_of(p) + "/" + target;
  }
  t.resolved = p;
  t.exists = true;
  t.identity = dev_ino(st);
  return check_existing(t, path, st);
}

std::string file_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return dev_ino(st);
  return normalised(path);
}

OutputFile::~OutputFile() { abandon(); }

Result<void> OutputFile::open(const std::string& path) {
  abandon();
  failed_ = false;
  buffer_.clear();
  Result<OutputTarget> checked = check_output_path(path);
  if (!checked) return checked.error();
  target_ = std::move(checked.value());
  switch (target_.kind) {
    case OutputTarget::Kind::descriptor:
      // What was printed before goes first.
      if (target_.fd == STDOUT_FILENO) std::fflush(stdout);
      if (target_.fd == STDERR_FILENO) std::fflush(stderr);
      fd_ = target_.fd;
      owns_fd_ = false;
      return {};
    case OutputTarget::Kind::stream:
      fd_ = ::open(target_.resolved.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
      if (fd_ < 0)
        return make_error("cannot open '" + path + "' for writing: " + errno_text(errno));
      owns_fd_ = true;
      return {};
    case OutputTarget::Kind::file:
      break;
  }
  // Stat again just before: the file may have been replaced since the check.
  struct stat old {};
  const bool exists = ::stat(target_.resolved.c_str(), &old) == 0 && S_ISREG(old.st_mode);
  fd_ = create_temp(dir_of(target_.resolved), temp_);
  if (fd_ < 0) {
    return make_error("cannot create a temporary file next to '" + path + "' (" +
                      errno_text(errno) + "); check that the directory exists and is writable");
  }
  owns_fd_ = true;
  if (exists) copy_owner_and_mode(fd_, old);
  return {};
}

Result<void> OutputFile::flush() {
  if (buffer_.empty()) return {};
  const int e = write_all(fd_, buffer_);
  buffer_.clear();
  if (e != 0) {
    failed_ = true;
    return make_error("writing '" + target_.path + "' failed: " + errno_text(e) +
                      (e == EPIPE ? " (its reader went away)" : ""));
  }
  return {};
}

Result<void> OutputFile::write(std::string_view data) {
  if (fd_ < 0) return make_error("writing to '" + target_.path + "' after it was closed");
  if (failed_) return make_error("'" + target_.path + "' was not written: an earlier write failed");
  buffer_.append(data);
  if (buffer_.size() >= kWriteChunk) return flush();
  return {};
}

Result<void> OutputFile::commit() {
  if (fd_ < 0) return make_error("'" + target_.path + "' is not open");
  if (failed_) {
    abandon();
    return make_error("'" + target_.path + "' was not written: an earlier write failed");
  }
  if (Result<void> r = flush(); !r) {
    abandon();
    return r;
  }
  if (target_.kind != OutputTarget::Kind::file) {
    const bool owned = owns_fd_;
    const int fd = fd_;
    fd_ = -1;
    if (owned && ::close(fd) != 0) {
      return make_error("closing '" + target_.path + "' failed: " + errno_text(errno));
    }
    return {};
  }
  if (fsync(fd_) != 0) {
    const std::string why = errno_text(errno);
    abandon();
    return make_error("flushing '" + target_.path + "' failed: " + why);
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const std::string why = errno_text(errno);
    abandon();
    return make_error("closing '" + target_.path + "' failed: " + why);
  }
  if (std::rename(temp_.c_str(), target_.resolved.c_str()) != 0) {
    const std::string why = errno_text(errno);
    abandon();
    return make_error("cannot replace '" + target_.path + "': " + why);
  }
  temp_.clear();
  // Make the rename itself durable.
  const int dfd = ::open(dir_of(target_.resolved).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    ::close(dfd);
  }
  return {};
}

void OutputFile::abandon() {
  if (fd_ >= 0 && owns_fd_) ::close(fd_);
  fd_ = -1;
  buffer_.clear();
  if (!temp_.empty()) {
    ::unlink(temp_.c_str());
    temp_.clear();
  }
}

Result<void> write_output_file(const std::string& path, std::string_view content) {
  OutputFile f;
  if (Result<void> r = f.open(path); !r) return r;
  if (Result<void> r = f.write(content); !r) return r;
  return f.commit();
}

}  // namespace latlab
