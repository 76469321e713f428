// Subcommand registry: each apps/latlab/<name>.cpp registers itself, so
// adding a subcommand touches one file.
//
// Exit codes (documented in docs/usage.md):
//   0 success, 1 run failed (device/driver error), 2 bad usage or input,
//   3 a required capability is missing, 4 result could not be written.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "latlab/bench/device_list.hpp"
#include "latlab/result.hpp"

namespace latlab::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitRunFailed = 1,
  kExitUsage = 2,
  kExitMissingCapability = 3,
  kExitWriteFailed = 4,
  kExitRegression = 5,  // latlab compare --fail-on-regression: a regression beyond the gate
};

// The exit code when a device cannot be opened: one asked for with --device
// (by index or name) is bad input; without --device the backend itself is
// unavailable. The same in every command.
inline int device_open_exit_code(const std::string& device_flag) {
  return device_flag.empty() ? kExitMissingCapability : kExitUsage;
}

// kExitOk when `r` holds, else `code` after "<command>: why" on stderr.
inline int exit_code(const char* command, const Result<void>& r, int code) {
  if (r) return kExitOk;
  std::fprintf(stderr, "%s: %s\n", command, r.error().message.c_str());
  return code;
}

// resolve_device_list for a command: kExitOk and `out`, else kExitUsage
// for a bad list or kExitMissingCapability when the backend lists no device,
// after "latlab <command>: why".
inline int resolve_devices(const char* command, Backend backend, const std::string& text,
                           std::vector<ListedDevice>& out) {
  bool no_device = false;
  Result<std::vector<ListedDevice>> listed = resolve_device_list(backend, text, no_device);
  if (!listed) {
    std::fprintf(stderr, "latlab %s: %s\n", command, listed.error().message.c_str());
    return no_device ? kExitMissingCapability : kExitUsage;
  }
  out = std::move(listed.value());
  return kExitOk;
}

// What a subcommand's setup returns, called after parsing (cli_app.hpp).
// `check` turns the parsed options into the command's checked plan, opening
// no device and creating no file: kExitOk, or the exit code of bad input
// after saying why. `run` runs that plan and gives the exit code. A command
// whose options CLI11's checks cover entirely returns only its run.
struct CommandRunner {
  CommandRunner(std::function<int()> run_only) : run(std::move(run_only)) {}  // NOLINT: implicit
  CommandRunner(std::function<int()> check_step, std::function<int()> run_step)
      : check(std::move(check_step)), run(std::move(run_step)) {}
  std::function<int()> check;  // empty: nothing left to check
  std::function<int()> run;
};

struct Command {
  std::string name;
  // Adds the subcommand to `app`; returns its check and run.
  std::function<CommandRunner(CLI::App& app)> setup;
  int order = 100;  // position in --help
};

std::vector<Command>& command_registry();

struct RegisterCommand {
  explicit RegisterCommand(Command c) { command_registry().push_back(std::move(c)); }
};

}  // namespace latlab::cli
