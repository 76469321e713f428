// The one writer of output files (core/output_file.hpp, through the public
// write_file_atomic): what each kind of target becomes, and the check of a
// path before any work.
#include "core/output_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "fifo_reader.hpp"
#include "latlab/bench/latency_report.hpp"
#include "temp_dir.hpp"

namespace latlab {
namespace {

namespace fs = std::filesystem;

using test::FifoReader;  // fifo_reader.hpp
using test::slurp;       // temp_dir.hpp

struct TempDir : test::TempDir {
  TempDir() : test::TempDir("latlab-output-test") {}
};

size_t entries(const fs::path& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}));
}

// A character device node of /dev/null's numbers (1, 3) in `dir`; empty with
// the reason in `why` where this process may not create one.
fs::path make_null_node(const fs::path& dir, std::string& why) {
  const fs::path n = dir / "n";
  if (mknod(n.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    why = std::string("mknod needs root (CAP_MKNOD): ") + std::strerror(errno);
    return {};
  }
  return n;
}

TEST(OutputFile, ACharacterDeviceIsWrittenThroughNotReplaced) {
  TempDir dir;
  std::string why;
  const fs::path n = make_null_node(dir.path, why);
  if (n.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(write_file_atomic(n, "a result nobody keeps").ok());
  struct stat st {};
  ASSERT_EQ(lstat(n.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device node became a file";
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
  EXPECT_EQ(entries(dir.path), 1u);  // no temporary file left
}

TEST(OutputFile, AFifoIsWrittenThroughToItsReader) {
  TempDir dir;
  const fs::path fifo = dir.path / "pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  FifoReader reader(fifo, 0);
  const std::string text(100'000, 'x');  // more than a pipe holds at once
  const Result<void> w = write_file_atomic(fifo, text);
  const std::string got = reader.finish();
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(got, text);
  struct stat st {};
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced by a file";
  EXPECT_EQ(entries(dir.path), 1u);
}

TEST(OutputFile, AFifoWhoseReaderLeftFailsWithoutKillingTheProcess) {
  TempDir dir;
  const fs::path fifo = dir.path / "pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  FifoReader reader(fifo, 1);  // leaves after the first bytes
  const Result<void> w = write_file_atomic(fifo, std::string(1 << 20, 'x'));
  reader.finish();
  ASSERT_FALSE(w.ok());  // SIGPIPE did not end the test process
  EXPECT_NE(w.error().message.find("reader went away"), std::string::npos) << w.error().message;
}

// Standard output as "-", /dev/fd/1 and a link to /proc/self/fd/1 (what
// /dev/stdout is). Never the machine's /dev/stdout or /dev/null: a writer with
// the old bug would replace them for every process.
TEST(OutputFile, StandardOutputIsWrittenThrough) {
  TempDir dir;
  const fs::path captured = dir.path / "stdout.txt";
  const fs::path link = dir.path / "my-stdout";
  fs::create_symlink("/proc/self/fd/1", link);
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path);  // a file named "-" would land here
  std::fflush(stdout);
  const int saved = dup(STDOUT_FILENO);
  const int fd = ::open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(fd, STDOUT_FILENO);
  ::close(fd);
  const Result<void> dash = write_file_atomic("-", "one\n");
  const Result<void> dev_fd = write_file_atomic("/dev/fd/1", "two\n");
  const Result<void> linked = write_file_atomic(link, "three\n");
  dup2(saved, STDOUT_FILENO);
  ::close(saved);
  fs::current_path(cwd);
  ASSERT_TRUE(dash.ok()) << dash.error().message;
  ASSERT_TRUE(dev_fd.ok()) << dev_fd.error().message;
  ASSERT_TRUE(linked.ok()) << linked.error().message;
  EXPECT_EQ(slurp(captured), "one\ntwo\nthree\n");
  EXPECT_FALSE(fs::exists(dir.path / "-"));
  EXPECT_TRUE(fs::is_symlink(link));
}

TEST(OutputFile, ASymlinkIsFollowedAndKept) {
  TempDir dir;
  fs::create_directory(dir.path / "real");
  const fs::path target = dir.path / "real" / "r.json";
  std::ofstream(target) << "old";
  const fs::path link = dir.path / "link.json";
  fs::create_symlink("real/r.json", link);
  ASSERT_TRUE(write_file_atomic(link, "new").ok());
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link), fs::path("real/r.json"));
  EXPECT_EQ(slurp(target), "new");
  // A link to a file not there yet: the file is created where it points.
  const fs::path dangling = dir.path / "later.json";
  fs::create_symlink("real/later.json", dangling);
  ASSERT_TRUE(write_file_atomic(dangling, "first").ok());
  EXPECT_TRUE(fs::is_symlink(dangling));
  EXPECT_EQ(slurp(dir.path / "real" / "later.json"), "first");
  EXPECT_EQ(entries(dir.path / "real"), 2u);
}

TEST(OutputFile, ASymlinkLoopIsRefusedAndNothingIsCreated) {
  TempDir dir;
  fs::create_symlink("b", dir.path / "a");
  fs::create_symlink("a", dir.path / "b");
  const Result<void> w = write_file_atomic(dir.path / "a", "x");
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("loop of symbolic links"), std::string::npos)
      << w.error().message;
  EXPECT_EQ(entries(dir.path), 2u);
}

TEST(OutputFile, AReplacedFileKeepsItsModeAndOwner) {
  TempDir dir;
  const fs::path p = dir.path / "r.json";
  std::ofstream(p) << "old";
  ASSERT_EQ(chmod(p.c_str(), 0600), 0);
  const bool root = geteuid() == 0;
  const uid_t other = 12345;  // any uid but ours: root may give the file away
  if (root) {
    ASSERT_EQ(chown(p.c_str(), other, other), 0) << std::strerror(errno);
  }
  ASSERT_TRUE(write_file_atomic(p, "new").ok());
  struct stat st {};
  ASSERT_EQ(stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(slurp(p), "new");
  if (!root) GTEST_SKIP() << "not root: the owner part needs a file of another user";
  EXPECT_EQ(st.st_uid, other);
  EXPECT_EQ(st.st_gid, other);
}

TEST(OutputFile, ANewFileTakesTheUmask) {
  TempDir dir;
  const mode_t old = umask(027);
  const Result<void> w = write_file_atomic(dir.path / "r.json", "x");
  umask(old);
  ASSERT_TRUE(w.ok());
  struct stat st {};
  ASSERT_EQ(stat((dir.path / "r.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

// Documented (docs/usage.md): the name gets a new file; another hard link to
// the old one keeps the old contents.
TEST(OutputFile, AnotherHardLinkKeepsTheOldContents) {
  TempDir dir;
  const fs::path p = dir.path / "r.json";
  std::ofstream(p) << "old";
  fs::create_hard_link(p, dir.path / "copy.json");
  ASSERT_TRUE(write_file_atomic(p, "new").ok());
  EXPECT_EQ(slurp(p), "new");
  EXPECT_EQ(slurp(dir.path / "copy.json"), "old");
  EXPECT_EQ(fs::hard_link_count(p), 1u);
}

TEST(OutputFile, TheLongestNameTheFileSystemAllowsIsWritten) {
  TempDir dir;
  const long name_max = pathconf(dir.path.c_str(), _PC_NAME_MAX);
  ASSERT_GT(name_max, 14);
  const fs::path longest = dir.path / std::string(static_cast<size_t>(name_max), 'a');
  const Result<void> w = write_file_atomic(longest, "x");
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(slurp(longest), "x");
  EXPECT_EQ(entries(dir.path), 1u);
  // One more is refused by the check, before anything is created.
  const fs::path too_long = dir.path / std::string(static_cast<size_t>(name_max) + 1, 'b');
  const Result<OutputTarget> t = check_output_path(too_long);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("file name is"), std::string::npos) << t.error().message;
  EXPECT_FALSE(write_file_atomic(too_long, "x").ok());
  EXPECT_EQ(entries(dir.path), 1u);
}

TEST(OutputFile, DirectoriesBlockDevicesAndSocketsAreRefused) {
  TempDir dir;
  EXPECT_FALSE(check_output_path(dir.path.string()).ok());
  EXPECT_FALSE(check_output_path(dir.path.string() + "/").ok());
  const fs::path blk = dir.path / "blk";
  if (mknod(blk.c_str(), S_IFBLK | 0600, makedev(7, 0)) == 0) {
    const Result<OutputTarget> t = check_output_path(blk);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().message.find("block device"), std::string::npos) << t.error().message;
    EXPECT_FALSE(write_file_atomic(blk, "x").ok());
    struct stat st {};
    ASSERT_EQ(lstat(blk.c_str(), &st), 0);
    EXPECT_TRUE(S_ISBLK(st.st_mode));
  }
}

TEST(OutputFile, IdentitiesMatchForTheSameFileByAnyName) {
  TempDir dir;
  const fs::path p = dir.path / "r.json";
  std::ofstream(p) << "x";
  fs::create_symlink("r.json", dir.path / "link");
  fs::create_hard_link(p, dir.path / "hard");
  const Result<OutputTarget> t = check_output_path(p);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->identity, file_identity(dir.path / "link"));
  EXPECT_EQ(t->identity, file_identity(dir.path / "hard"));
  // A file not there yet: by normalised path.
  const Result<OutputTarget> n = check_output_path(dir.path / "sub" / ".." / "new.json");
  EXPECT_FALSE(n.ok());  // "sub" does not exist
  const Result<OutputTarget> m = check_output_path(dir.path / "." / "new.json");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->identity, file_identity(dir.path / "new.json"));
  EXPECT_NE(m->identity, t->identity);
}

}  // namespace
}  // namespace latlab
