// Helpers for the e2e tests: run the CLI, read its files.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "temp_dir.hpp"

namespace latlab::e2e {

struct CliResult {
  int rc = -1;
  std::string output;  // stdout and stderr together
};

// LATLAB_BINARY when set; else the build tree's apps/latlab/latlab next to
// this test executable (build/<preset>/tests/..).
inline std::string latlab_binary() {
  const char* b = std::getenv("LATLAB_BINARY");
  if (b != nullptr && *b != '\0') return b;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path guess =
        self.parent_path().parent_path() / "apps" / "latlab" / "latlab";
    if (std::filesystem::exists(guess, ec)) return guess.string();
  }
  return "latlab";
}

struct CliOptions {
  std::string env{};       // "VAR=value ..." put in front of the command
  bool stderr_too = true;  // fold stderr into output (else it is dropped)
};

// Runs the shell command `cmd`, appends its stdout to `out`; its exit code,
// or -1 when it could not run or did not exit.
inline int run_shell(const std::string& cmd, std::string& out) {
  std::FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline CliResult run_cli(const std::string& args, const CliOptions& options = {}) {
  CliResult r;
  r.rc = run_shell(options.env + " " + latlab_binary() + " " + args +
                       (options.stderr_too ? " 2>&1" : " 2>/dev/null"),
                   r.output);
  return r;
}

using test::slurp;  // temp_dir.hpp

// Each e2e test's own directory (temp_dir.hpp).
struct TempDir : test::TempDir {
  TempDir() : test::TempDir("latlab-e2e") {}
};

// stdout and stderr apart (for commands whose stdout is a JSON document).
struct CliSplitResult {
  int rc = -1;
  std::string out;
  std::string err;
};

inline CliSplitResult run_cli_split(const std::string& args) {
  CliSplitResult r;
  TempDir dir;
  const std::filesystem::path err = dir.path / "stderr.txt";
  r.rc = run_shell(latlab_binary() + " " + args + " 2>'" + err.string() + "'", r.out);
  r.err = slurp(err);
  return r;
}

}  // namespace latlab::e2e
