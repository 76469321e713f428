// The one writer of latlab's output files (result JSON, per-frame CSV, HTML
// report, Chrome trace) and the check of an output path before any work.
// What the path names decides how it is written:
//
//   a regular file, or a name that does not exist yet: atomically (a
//     temporary ".latlab-XXXXXX" in the same directory, fsync, rename over
//     the name, fsync of the directory). A replaced file keeps its mode, and
//     its owner and group where this process may set them; other hard links
//     to it keep the old contents (the name gets a new inode).
//   a symbolic link: followed to its end; the file there is written as above
//     (created if absent) and the link is kept.
//   a FIFO or a character device (/dev/null, a terminal): written through,
//     in place; not atomic. A FIFO's open waits for a reader.
//   "-" (standard output), /dev/stdout, /dev/stderr, /dev/fd/N,
//     /proc/self/fd/N: written through to that open descriptor.
//   anything else (a directory, a block device, a socket): refused.
//
// Not thread-safe; one OutputFile per file.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "latlab/result.hpp"

namespace latlab {

// What an output path names, checked; nothing is created or changed.
struct OutputTarget {
  enum class Kind {
    file,        // regular file or a new name: replaced atomically
    stream,      // FIFO or character device: written through
    descriptor,  // an open descriptor of this process (fd): written through
  };
  Kind kind = Kind::file;
  std::string path;      // as given
  std::string resolved;  // file/stream: the path after symbolic links
  int fd = -1;           // descriptor: the descriptor written to
  bool exists = false;   // file: replaces an existing file
  bool char_device = false;
  // "dev:ino" of what exists (fd: "fd:N"), else the normalised absolute path:
  // two paths with the same identity name the same file.
  std::string identity;
};

// Temporary names are this prefix and 6 characters, in the target's
// directory: any name the file system allows fits beside them.
inline constexpr std::string_view kOutputTempPrefix = ".latlab-";

// Checks `path` as an output without creating or changing anything: the
// directory exists and is writable, the name fits the file system (NAME_MAX),
// the path is not a directory, a block device, a socket or a loop of
// symbolic links. The error says which and what to do.
Result<OutputTarget> check_output_path(const std::string& path);

// The identity (as OutputTarget::identity) of an input path: "dev:ino" when
// it exists, else the normalised absolute path.
std::string file_identity(const std::string& path);

class OutputFile {
 public:
  OutputFile() = default;
  ~OutputFile();  // abandon() unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Checks `path` (check_output_path) and opens it: a temporary file for a
  // file, the stream itself, or the descriptor.
  Result<void> open(const std::string& path);
  Result<void> write(std::string_view data);
  // file: flush, fsync, rename over the target, fsync of the directory;
  // stream/descriptor: flush (a stream is closed).
  Result<void> commit();
  // file: removes the temporary file, the target is untouched; a stream
  // keeps what was written to it.
  void abandon();

 private:
  Result<void> flush();

  OutputTarget target_;
  std::string temp_;  // file: the temporary file's path
  std::string buffer_;
  int fd_ = -1;
  bool owns_fd_ = false;
  bool failed_ = false;
};

// Writes `content` to `path` through OutputFile.
Result<void> write_output_file(const std::string& path, std::string_view content);

}  // namespace latlab
