// libFuzzer target: the CLI's option parsing, every subcommand, on random
// argv: the input split at '\n' into arguments after "latlab" (the seed
// corpus and bench/fuzz/cli_args.dict give the commands and option names).
// Each argv is parsed and checked into its plan (Cli::parse_and_check,
// apps/latlab/cli_app.hpp); no command runs. Findings: a crash, an uncaught
// exception, an exit code a check cannot end with (1: a check threw; 5: a
// regression; anything outside 0-5), and a file created.
// The target works in one temporary directory (FUZZ_CLI_DIR, else a new
// /tmp/latlab-fuzz-cli-XXXXXX): its working directory while an input is
// parsed, HOME and XDG_DATA_HOME. Every '/' of an argument becomes '_', so
// every path the CLI is given names a file in it; it must stay empty.
// run.sh closes stdout and stderr (every input prints help or an error); a
// finding is written to a copy of stderr taken before libFuzzer closes it.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli_app.hpp"

namespace {

std::filesystem::path g_dir;
int g_report_fd = 2;

[[noreturn]] void finding(const std::string& what) {
  const std::string line = "fuzz_cli_args: " + what + "\n";
  [[maybe_unused]] const ssize_t n = write(g_report_fd, line.data(), line.size());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Called before libFuzzer applies -close_fd_mask.
  if (const int fd = dup(2); fd >= 0) g_report_fd = fd;
  const char* given = std::getenv("FUZZ_CLI_DIR");
  if (given != nullptr && given[0] != '\0') {
    g_dir = given;
    std::filesystem::create_directories(g_dir);
  } else {
    char tmpl[] = "/tmp/latlab-fuzz-cli-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) finding("cannot create the temporary directory");
    g_dir = tmpl;
  }
  g_dir = std::filesystem::canonical(g_dir);
  if (!std::filesystem::is_empty(g_dir)) finding("FUZZ_CLI_DIR must be an empty directory");
  setenv("HOME", g_dir.c_str(), 1);
  setenv("XDG_DATA_HOME", g_dir.c_str(), 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args{"latlab"};
  std::string arg;
  for (size_t i = 0; i < size && args.size() < 64; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\n') {
      args.push_back(arg);
      arg.clear();
    } else if (c == '\0') {
      continue;  // argv strings cannot hold one
    } else {
      arg.push_back(c == '/' ? '_' : c);
    }
  }
  if (size > 0 && args.size() < 64) args.push_back(arg);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);

  // The directory is the working directory only during the call: libFuzzer's
  // own paths (corpus, dictionary, artifacts) stay relative to where it began.
  const int here = open(".", O_RDONLY | O_DIRECTORY);
  if (here < 0 || chdir(g_dir.c_str()) != 0) finding("cannot enter the temporary directory");
  std::optional<int> rc;
  {
    latlab::cli::Cli cli;
    rc = cli.parse_and_check(static_cast<int>(args.size()), argv.data());
  }
  if (fchdir(here) != 0) finding("cannot leave the temporary directory");
  close(here);
  // nullopt (checked, ready to run), 0 (--help, --version), 2 (bad usage),
  // 3 (a backend this build lacks), 4 (an output that cannot be written).
  if (rc && *rc != 0 && *rc != 2 && *rc != 3 && *rc != 4) {
    finding("exit code " + std::to_string(*rc) + " from parsing and checking");
  }
  for (const auto& entry : std::filesystem::directory_iterator(g_dir)) {
    finding("parsing and checking created " + entry.path().filename().string());
  }
  return 0;
}
