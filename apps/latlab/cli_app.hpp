// The latlab command line: every registered subcommand (command.hpp) on one
// CLI::App, in two steps so that the parsing can be called without running
// anything (bench/fuzz/fuzz_cli_args.cpp does, on random argv):
// parse_and_check() parses argv and checks the chosen subcommand's options
// into its plan, opening no device and creating no file; run() runs it.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "command.hpp"

namespace latlab::cli {

class Cli {
 public:
  Cli();
  Cli(const Cli&) = delete;
  Cli& operator=(const Cli&) = delete;

  // nullopt: a subcommand is checked and ready to run(). Otherwise the exit
  // code to end with, after printing why: kExitOk after --help or
  // --version, kExitUsage for bad usage (unknown command or option, with
  // the nearest known name when one is close; a malformed value; options
  // that contradict each other).
  std::optional<int> parse_and_check(int argc, const char* const* argv);

  // Runs the subcommand parse_and_check() made ready; its exit code
  // (command.hpp). An exception is a failed run (exit 1) with its message.
  int run();

 private:
  CLI::App app_;
  std::vector<std::pair<CLI::App*, CommandRunner>> runners_;
  CommandRunner* chosen_ = nullptr;
};

// This process's argv as the kernel holds it (/proc/self/cmdline; main
// owns argv), joined with spaces: a result's `command_line`, latlab's own
// options and a `--` included. "" when it cannot be read.
std::string own_command_line();

// The known name nearest to `typed` (edit distance, a swap of two
// neighbouring letters counting as one edit), when it is close enough to be
// a typo: at most 2 edits and fewer than half of `typed`'s length. "" when
// none is, or two are equally near.
std::string nearest_name(const std::string& typed, const std::vector<std::string>& known);

}  // namespace latlab::cli
