// What the CLI's outputs do to what is already there (docs/faults.md,
// "Outputs"): device nodes and FIFOs are written through, a symlink is kept,
// the store is never overwritten by another output, every output path is
// checked before the run, a refused command creates nothing, a replaced file
// keeps its mode and owner, and an interrupt while writing says what was
// kept.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "e2e/cli_run_helpers.hpp"

namespace latlab::e2e {
namespace {

namespace fs = std::filesystem;

// A short sim run writing its result to `out`.
std::string sim_run(const std::string& out) {
  return "run --backend sim --mode baseline --frames 5 --blocks 1 --warmup 0 --interval-ms 1-2 "
         "--out '" +
         out + "'";
}

bool started(const CliResult& r) { return r.output.find("latlab run: mode") != std::string::npos; }

size_t entries(const fs::path& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}));
}

TEST(OutputsCli, ADeviceNodeStaysADevice) {
  TempDir dir;
  const fs::path n = dir.path / "n";
  if (mknod(n.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
    GTEST_SKIP() << "mknod needs root (CAP_MKNOD): " << std::strerror(errno);
  // Never the machine's /dev/null: a latlab with the bug would replace it.
  // Both outputs on one character device: allowed, nothing is lost.
  const CliResult r = run_cli(sim_run(n.string()) + " --frames-csv " + n.string());
  EXPECT_EQ(r.rc, 0) << r.output;
  struct stat st {};
  ASSERT_EQ(lstat(n.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "--out replaced the device node with a file";
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
  EXPECT_EQ(entries(dir.path), 1u);
}

TEST(OutputsCli, DashWritesTheResultToStdoutAndTheTableToStderr) {
  TempDir dir;
  std::string out;
  const fs::path err = dir.path / "err.txt";
  const int rc = run_shell("cd '" + dir.path.string() + "' && " + latlab_binary() + " " +
                               sim_run("-") + " 2>'" + err.string() + "'",
                           out);
  EXPECT_EQ(rc, 0) << slurp(err);
  const nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << "stdout is not the result alone:\n" << out;
  EXPECT_TRUE(j.contains("schema_version"));
  EXPECT_NE(slurp(err).find("core_latency"), std::string::npos) << "the table is on stderr";
  EXPECT_FALSE(fs::exists(dir.path / "-"));
  // --json and --out - would both print the document: refused.
  const CliResult both =
      run_cli(sim_run("-") + " --json", {.env = "cd '" + dir.path.string() + "' && "});
  EXPECT_EQ(both.rc, 2) << both.output;
  EXPECT_NE(both.output.find("same descriptor"), std::string::npos) << both.output;
  EXPECT_FALSE(started(both));
}

TEST(OutputsCli, ASymlinkedOutputIsFollowedAndTheLinkKept) {
  TempDir dir;
  const fs::path target = dir.path / "real.json";
  std::ofstream(target) << "{}";
  const fs::path link = dir.path / "link.json";
  fs::create_symlink("real.json", link);
  const CliResult r = run_cli(sim_run(link.string()));
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(nlohmann::json::parse(slurp(target)).contains("schema_version"));
}

TEST(OutputsCli, AnOutputThatIsTheStoreIsRefusedAndTheStoreKept) {
  TempDir dir;
  const std::string db = (dir.path / "s.db").string();
  const fs::path a = dir.path / "a.json";
  ASSERT_EQ(run_cli(sim_run(a.string()) + " --store " + db).rc, 0);
  const std::string before = slurp(db);
  fs::create_symlink("s.db", dir.path / "alias.db");
  fs::create_hard_link(db, dir.path / "hard.db");
  for (const std::string& out :
       {db, (dir.path / "alias.db").string(), (dir.path / "hard.db").string()}) {
    for (const char* opt : {"--out", "--frames-csv", "--report"}) {
      const std::string args =
          opt == std::string("--out")
              ? sim_run(out) + " --store " + db
              : sim_run((dir.path / "b.json").string()) + " " + opt + " " + out + " --store " + db;
      const CliResult r = run_cli(args);
      EXPECT_EQ(r.rc, 2) << args << "\n" << r.output;
      EXPECT_NE(r.output.find("same file"), std::string::npos) << r.output;
      EXPECT_NE(r.output.find("--store"), std::string::npos) << r.output;
      EXPECT_FALSE(started(r)) << "the run started: " << args;
    }
  }
  EXPECT_EQ(slurp(db), before);
  EXPECT_FALSE(fs::exists(dir.path / "b.json"));
  // store add of the store itself, too.
  const CliResult add = run_cli("store add " + db + " --store " + db);
  EXPECT_EQ(add.rc, 2) << add.output;
  EXPECT_EQ(slurp(db), before);
}

TEST(OutputsCli, TwoOutputsOrAnInputAndAnOutputOnOneFileAreRefused) {
  TempDir dir;
  const fs::path x = dir.path / "x.json";
  CliResult r = run_cli(sim_run(x.string()) + " --frames-csv " + x.string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("--out and --frames-csv name the same file"), std::string::npos)
      << r.output;
  EXPECT_FALSE(started(r));
  EXPECT_FALSE(fs::exists(x));
  // Not yet there, spelled two ways.
  r = run_cli(sim_run(x.string()) + " --report " + (dir.path / "." / "x.json").string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_FALSE(fs::exists(x));

  ASSERT_EQ(run_cli(sim_run(x.string())).rc, 0);
  const std::string result = slurp(x);
  r = run_cli("report " + x.string() + " -o " + x.string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("same file"), std::string::npos) << r.output;
  EXPECT_EQ(slurp(x), result) << "the input was overwritten";
}

TEST(OutputsCli, ALongNameThatFitsIsWrittenAndOneTooLongIsRefusedBeforeTheRun) {
  TempDir dir;
  const fs::path fits = dir.path / (std::string(240, 'a') + ".json");  // 245 bytes
  CliResult r = run_cli(sim_run(fits.string()));
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_TRUE(fs::exists(fits));
  const long name_max = pathconf(dir.path.c_str(), _PC_NAME_MAX);
  for (const char* opt : {"--out", "--frames-csv", "--report"}) {
    const std::string too_long =
        (dir.path / std::string(static_cast<size_t>(name_max) + 1, 'b')).string();
    r = run_cli(opt == std::string("--out")
                    ? sim_run(too_long)
                    : sim_run((dir.path / "ok.json").string()) + " " + opt + " " + too_long);
    EXPECT_EQ(r.rc, 2) << opt << "\n" << r.output;
    EXPECT_NE(r.output.find("file name is"), std::string::npos) << r.output;
    EXPECT_FALSE(started(r)) << opt;
  }
  EXPECT_EQ(entries(dir.path), 1u);
}

TEST(OutputsCli, ProfileChecksItsTraceBeforeOpeningADevice) {
  TempDir dir;
  const std::string missing = (dir.path / "no" / "t.json").string();
  for (const char* backend : {"vulkan", "gl", "cuda"}) {
    const CliResult r =
        run_cli(std::string("profile --frames 3 --backend ") + backend + " --trace " + missing);
    EXPECT_EQ(r.rc, 2) << backend << "\n" << r.output;
    EXPECT_NE(r.output.find("does not exist or is not writable"), std::string::npos) << r.output;
  }
  // In `dir`: a latlab that took "-" for a file name would leave it there.
  const CliResult dash =
      run_cli("profile --frames 3 --trace -", {.env = "cd '" + dir.path.string() + "' && "});
  EXPECT_FALSE(fs::exists(dir.path / "-"));
  EXPECT_EQ(dash.rc, 2) << dash.output;
}

TEST(OutputsCli, ARefusedCommandCreatesNoStore) {
  TempDir dir;
  const fs::path db = dir.path / "x.db";
  CliResult r = run_cli(sim_run((dir.path / "a.json").string()) +
                        " --device all --mode all --store " + db.string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_FALSE(fs::exists(db)) << "a refused run created the store";
  r = run_cli("run --backend vulkan --device no-such-gpu --frames 5 --out " +
              (dir.path / "a.json").string() + " --store " + db.string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_FALSE(fs::exists(db));
  // A bad result file: store add refuses and creates nothing.
  const fs::path bad = dir.path / "bad.json";
  std::ofstream(bad) << "{\"schema_version\": 99}";
  r = run_cli("store add " + bad.string() + " --store " + db.string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_FALSE(fs::exists(db));
  r = run_cli("store migrate --store " + db.string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_FALSE(fs::exists(db));
  EXPECT_EQ(entries(dir.path), 1u);  // bad.json only: no a.json either
  // A good one creates the store on its first append.
  ASSERT_EQ(run_cli(sim_run((dir.path / "a.json").string()) + " --store " + db.string()).rc, 0);
  EXPECT_TRUE(fs::exists(db));
}

// A new store on a file system too small for its schema: the append fails
// (exit 4) and leaves no empty store file behind.
TEST(OutputsCli, AStoreThatCannotBeCreatedLeavesNoEmptyFile) {
  if (geteuid() != 0) GTEST_SKIP() << "not root: cannot mount a tmpfs";
  TempDir dir;
  const fs::path result = dir.path / "a.json";
  ASSERT_EQ(run_cli(sim_run(result.string())).rc, 0);
  const fs::path tiny = dir.path / "tiny";
  fs::create_directory(tiny);
  if (mount("tmpfs", tiny.c_str(), "tmpfs", 0, "size=8k") != 0)
    GTEST_SKIP() << "mount tmpfs failed: " << std::strerror(errno);
  const CliResult r =
      run_cli("store add " + result.string() + " --store " + (tiny / "x.db").string());
  const bool left = fs::exists(tiny / "x.db");
  umount2(tiny.c_str(), MNT_DETACH);
  EXPECT_EQ(r.rc, 4) << r.output;
  EXPECT_NE(r.output.find("disk is full"), std::string::npos) << r.output;
  EXPECT_FALSE(left) << "an empty store file was left";
}

TEST(OutputsCli, AStoreThatIsASymlinkLoopSaysSo) {
  TempDir dir;
  fs::create_symlink("b.db", dir.path / "a.db");
  fs::create_symlink("a.db", dir.path / "b.db");
  const std::string loop = (dir.path / "a.db").string();
  for (const std::string& args :
       {"history --store " + loop, sim_run((dir.path / "r.json").string()) + " --store " + loop}) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.rc, 2) << r.output;
    EXPECT_NE(r.output.find("loop of symbolic links"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("nothing stored there yet"), std::string::npos) << r.output;
  }
}

TEST(OutputsCli, AReplacedResultKeepsItsModeAndOwner) {
  if (geteuid() != 0) GTEST_SKIP() << "not root: needs a file owned by another user";
  TempDir dir;
  const fs::path out = dir.path / "r.json";
  std::ofstream(out) << "{}";
  ASSERT_EQ(chown(out.c_str(), 12345, 23456), 0) << std::strerror(errno);
  ASSERT_EQ(chmod(out.c_str(), 0600), 0);
  const CliResult r = run_cli(sim_run(out.string()));
  ASSERT_EQ(r.rc, 0) << r.output;
  struct stat st {};
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, 12345u);
  EXPECT_EQ(st.st_gid, 23456u);
  EXPECT_TRUE(nlohmann::json::parse(slurp(out)).contains("schema_version"));
}

// Holds the SQLite store's write lock until destroyed, so latlab's append
// waits (its busy timeout is 60 s).
struct StoreLock {
  sqlite3* h = nullptr;
  explicit StoreLock(const std::string& db) {
    if (sqlite3_open(db.c_str(), &h) == SQLITE_OK)
      sqlite3_exec(h, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
  }
  ~StoreLock() {
    sqlite3_exec(h, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(h);
  }
};

TEST(OutputsCli, AnInterruptDuringTheStoreAppendSaysWhatWasKept) {
  TempDir dir;
  const std::string db = (dir.path / "s.db").string();
  const fs::path a = dir.path / "a.json";
  ASSERT_EQ(run_cli(sim_run(a.string()) + " --store " + db).rc, 0);
  const std::string before = slurp(db);
  const fs::path b = dir.path / "b.json";
  const fs::path err = dir.path / "err.txt";
  std::vector<std::string> args{
      latlab_binary(), "run", "--backend", "sim", "--mode", "baseline", "--frames", "5",
      "--blocks",      "1",   "--warmup",  "0",   "--out",  b.string(), "--store",  db};
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  {
    StoreLock lock(db);
    ASSERT_NE(lock.h, nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT, 0644);
    ASSERT_EQ(posix_spawn(&pid, args[0].c_str(), &fa, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    // The result is written before the append, which then waits on the lock.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!fs::exists(b) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!fs::exists(b)) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      FAIL() << "no result written within 30 s (the store lock held the run?)\n" << slurp(err);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << status;
  }
  const std::string said = slurp(err);
  EXPECT_NE(said.find("interrupted while writing the run into the store"), std::string::npos)
      << said;
  EXPECT_NE(said.find("rolled back"), std::string::npos) << said;
  EXPECT_NE(said.find("the result '" + b.string() + "'"), std::string::npos) << said;
  EXPECT_TRUE(nlohmann::json::parse(slurp(b)).contains("schema_version"));
  const CliSplitResult h = run_cli_split("history --json --store " + db);
  ASSERT_EQ(h.rc, 0) << h.err;
  EXPECT_EQ(nlohmann::json::parse(h.out)["runs"].size(), 1u) << "the interrupted append was kept";
}

}  // namespace
}  // namespace latlab::e2e
