// The checks of every option shared by subcommands: --backend (parsed once,
// here, into a Backend), and every numeric option, in one place, so
// all of them refuse the same text: NaN and infinities, hex and octal, a
// value past the type's range (never clamped), trailing text. A refused value
// is bad usage: exit 2 with "--option: why". The parsing itself is
// cli_values.hpp's (fuzzed by bench/fuzz/fuzz_cli_values.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "latlab/bench/backend.hpp"
#include "latlab/result.hpp"

namespace latlab::cli {

// A load's GPU time per frame that `run --load-target-ms` and
// `calibrate-load --target-ms` accept (ms): from 1 ns to 1000 s; whether the
// device reaches it is the calibration's answer.
inline constexpr double kMinTargetMs = 1e-6;
inline constexpr double kMaxTargetMs = 1e6;

// A finite decimal number in [lo, hi] (cli_values.hpp: parse_real).
CLI::Validator real_in(double lo, double hi);

// A whole number in [lo, hi], decimal digits only; the text is rewritten to
// its plain decimal form before CLI11 converts it (which would read "010"
// as octal).
CLI::Validator whole_in(int64_t lo, int64_t hi);
CLI::Validator unsigned_in(uint64_t lo, uint64_t hi);

// --store: without one (`store` empty) the default results store
// (report/store/results_store.hpp) is used, which needs an absolute
// XDG_DATA_HOME or a HOME that is an existing directory; without either it
// would land under '/'. An error (bad usage: pass --store) then; `store`
// given, or a usable default: ok.
Result<void> check_store_location(const std::string& store);
// The same for a command: kExitOk, or kExitUsage after "<command>: why".
int store_location_exit(const char* command, const std::string& store);

// Which commands accept a backend; the --backend check says which do not.
enum class BackendUse {
  profile,  // the backends with a profiling rig: vulkan, cuda, gl
  any,      // every backend, sim included
};

// Adds --backend (`flags`, CLI11's spelling) to `app`, parsed into `backend`
// (its default shown): an unknown name fails with the backends built into
// this binary, a backend that `use` excludes with the ones it accepts.
CLI::Option* add_backend_option(CLI::App* app, Backend& backend, BackendUse use,
                                const std::string& help, const std::string& flags = "--backend");

}  // namespace latlab::cli
