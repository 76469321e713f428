// latlab capture [--out R.json] [--frames-csv F.csv] [--submits-csv S.csv]
//                [--presentmon-csv P.csv] [--report R.html]
//                [--frames N | --seconds S] [--terminate] [--gpu-spans all|PERCENT]
//                [--input key:NAME|button:N|motion [--input-interval 8-12ms]
//                 [--input-seed N] [--inputs N] [--input-reaction [--input-region X,Y,W,H]]
//                 [--inputs-csv I.csv]] -- PROGRAM ARGS...
// Runs PROGRAM with latlab's frame sources attached (the Vulkan layer
// VK_LAYER_LATLAB_capture, enabled for the child only) and writes a result
// of kind "capture" (docs/capture.md, docs/result-schema.md). The program's
// standard streams are its own; latlab's messages go to stderr. The session
// (child, socket, stop rules, result) is run_capture's
// (latlab/bench/capture_session.hpp); this file parses the options and hands
// the result to the reporters.
//
// Stopping: --frames N / --seconds S (counted from the first frame) stop the
// recording; the result is written then, and the program goes on untouched
// until it exits (as PresentMon's --timed and MangoHud's log duration do);
// with --terminate latlab sends it SIGTERM instead. The first SIGINT or
// SIGTERM to latlab stops the recording and is passed on to the program
// (unless the terminal sent it to the program too); latlab waits up to 5 s
// for it, then writes what was captured, partial; a second one kills it.
//
// Input (docs/capture.md, "Input"): --input sends the program that event
// through XTest on the seeded absolute-deadline schedule of `latlab run`'s
// signal and follows each to its frame (and, with --input-reaction, to the
// window's first change); --inputs N stops the recording after N of them.
//
// Exit code: the program's (128 + signal when a signal ended it, e.g. 130
// after Ctrl-C, 137 after a second; 127 when it could not be started); 2 bad
// usage, 3 the layer is not found; 4 the result could not be written (when
// the program itself exited 0), or a CSV file could not be opened (before
// the program starts: the CSVs are written as the capture runs).
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cli_app.hpp"
#include "cli_options.hpp"
#include "cli_values.hpp"
#include "command.hpp"
#include "latlab/bench/capture_session.hpp"
#include "latlab/bench/latency_report.hpp"
#include "latlab/bench/run_result.hpp"
#include "report/reporters/reporters.hpp"

namespace latlab::cli {
namespace {

struct CaptureOptions {
  CapturePlan plan;
  CaptureOutputs outputs;
  // --input and its settings, before the checked plan.
  std::string input_spec;
  std::string input_interval = "8-12ms";
  uint64_t input_seed = 1;
  uint64_t inputs = 0;
  bool input_reaction = false;
  std::string input_region;
  std::string gpu_spans;  // --gpu-spans, before the checked plan
};

// --gpu-spans: "all", or the percent of the program's time the spans may
// cost ("2", "0.5%"), in (0, 100]; 100 is "all". False (said why) otherwise.
bool plan_gpu_spans(CaptureOptions& o) {
  if (o.gpu_spans.empty()) return true;
  if (o.gpu_spans == "all") {
    o.plan.gpu_span_budget_percent = std::nullopt;
    return true;
  }
  std::string number = o.gpu_spans;
  if (number.back() == '%') number.pop_back();
  const std::optional<double> p = parse_real(number, 0.0, 100.0);
  if (!p || *p <= 0.0) {
    std::fprintf(stderr,
                 "latlab capture: --gpu-spans: '%s' is neither 'all' nor a percent in (0, 100]\n",
                 o.gpu_spans.c_str());
    return false;
  }
  o.plan.gpu_span_budget_percent = *p < 100.0 ? std::optional<double>(*p) : std::nullopt;
  return true;
}

int capture_main(const CaptureOptions& o) {
  CaptureReporters reporters(o.outputs);
  if (!reporters.open()) return kExitWriteFailed;
  CaptureHooks hooks;
  hooks.info = [](const std::string& line) {
    std::fprintf(stderr, "latlab capture: %s\n", line.c_str());
  };
  reporters.attach(hooks);
  hooks.report = [&reporters](const CaptureOutcome& out) {
    return reporters.report(out) ? kExitOk : kExitWriteFailed;
  };
  const CaptureEnd end = run_capture(o.plan, hooks);
  switch (end.start) {
    case CaptureStart::nothing_to_attach:
      std::fprintf(stderr, "latlab capture: %s\n", end.why.c_str());
      return kExitMissingCapability;
    case CaptureStart::failed:
      std::fprintf(stderr, "latlab capture: %s\n", end.why.c_str());
      return kExitRunFailed;
    case CaptureStart::started:
      break;
  }
  if (end.exit_code == 0 && end.report_status != kExitOk) return end.report_status;
  return end.exit_code;
}

// --seconds: from 1 ms to 1e6 s (11.6 days).
constexpr double kMinSeconds = 1e-3;
constexpr double kMaxSeconds = 1e6;

// --input and the options that need it (docs/capture.md, "Input to photon").
void add_input_options(CLI::App& sub, CaptureOptions& o) {
  auto* input = sub.add_option("--input", o.input_spec,
                               "Inject this input through XTest and follow it to the frames: "
                               "key:NAME (an X keysym: space, a), button:N (1-5) or motion");
  sub.add_option("--input-interval", o.input_interval,
                 "Interval between inputs, drawn per input from MIN-MAX on the seeded schedule "
                 "of `latlab run` (absolute deadlines)")
      ->capture_default_str()
      ->needs(input);
  sub.add_option("--input-seed", o.input_seed,
                 "Seed of the input schedule (same seed: same "
                 "intervals)")
      ->capture_default_str()
      ->transform(unsigned_in(0, UINT64_MAX))
      ->needs(input);
  sub.add_option("--inputs", o.inputs, "Stop recording after N inputs (and 0.5 s for their frames)")
      ->transform(unsigned_in(1, 1'000'000'000))
      ->needs(input);
  sub.add_flag("--input-reaction", o.input_reaction,
               "Reaction mode: the window's first change after each input is its reaction "
               "(input_to_reaction), for programs that draw only when something happens")
      ->needs(input);
  sub.add_option("--input-region", o.input_region,
                 "Reaction mode: only a change overlapping X,Y,W,H (the window's pixels) is a "
                 "reaction")
      ->needs("--input-reaction");
  sub.add_option("--inputs-csv", o.outputs.inputs_csv, "Per-input CSV (ns on CLOCK_MONOTONIC)")
      ->needs(input);
}

// --input's plan from its options; false (said why) on a bad value.
bool plan_input(CaptureOptions& o) {
  auto spec = parse_input_spec(o.input_spec);
  auto interval = parse_interval_range(o.input_interval);
  if (!spec || !interval) {
    std::fprintf(stderr, "latlab capture: %s\n",
                 (!spec ? spec.error() : interval.error()).message.c_str());
    return false;
  }
  CaptureInputPlan in;
  in.spec = *spec;
  in.schedule = {o.input_seed, interval->first, interval->second};
  in.count = o.inputs;
  in.reaction = o.input_reaction;
  if (!o.input_region.empty()) {
    auto region = parse_input_region(o.input_region);
    if (!region) {
      std::fprintf(stderr, "latlab capture: %s\n", region.error().message.c_str());
      return false;
    }
    in.region = *region;
  }
  o.plan.input = in;
  return true;
}

CommandRunner setup(CLI::App& app) {
  auto o = std::make_shared<CaptureOptions>();
  CLI::App* sub = app.add_subcommand(
      "capture", "Run a program with latlab attached and capture its frames (docs/capture.md)");
  sub->add_option("--out", o->outputs.out, "Result JSON (kind \"capture\"); '-' for stdout");
  sub->add_option("--report", o->outputs.report,
                  "Self-contained HTML report of the capture (FPS, figures, sources)");
  sub->add_option("--presentmon-csv", o->outputs.presentmon_csv,
                  "Per-frame CSV in PresentMon 2.x's columns and units (ms; NA: not measured)");
  sub->add_option("--frames-csv", o->outputs.frames_csv, "Per-frame CSV (ns on CLOCK_MONOTONIC)");
  sub->add_option("--submits-csv", o->outputs.submits_csv,
                  "Per-submission CSV (ns on CLOCK_MONOTONIC; no_span: docs/capture.md)");
  auto* frames = sub->add_option("--frames", o->plan.frames, "Stop recording after N frames");
  auto* seconds = sub->add_option("--seconds", o->plan.seconds,
                                  "Stop recording S seconds after the first frame");
  frames->excludes(seconds);
  frames->transform(unsigned_in(1, 1'000'000'000));
  seconds->check(real_in(kMinSeconds, kMaxSeconds));
  sub->add_flag("--terminate", o->plan.terminate,
                "Send the program SIGTERM once --frames/--seconds stopped the recording "
                "(default: let it run to its end)");
  sub->add_option("--gpu-spans", o->gpu_spans,
                  "Vulkan GPU spans: 'all' times every submission; a percent (default 2) is what "
                  "timing may cost the program's time, past which frames go untimed (reason "
                  "'budget')");
  add_input_options(*sub, *o);
  sub->add_option("program", o->plan.program, "-- PROGRAM ARGS...")->required()->expected(-1);
  return {[o, sub] {
            if (!o->input_spec.empty() && !plan_input(*o)) return static_cast<int>(kExitUsage);
            if (!plan_gpu_spans(*o)) return static_cast<int>(kExitUsage);
            const Result<void> files = check_capture_files(o->outputs);
            if (const int rc = exit_code("latlab capture", files, kExitUsage); rc != kExitOk)
              return rc;
            (void)sub;
            // --out -: the result is latlab's stdout; the program's goes to stderr.
            o->plan.program_stdout_to_stderr = o->outputs.out == "-";
            o->outputs.command_line = own_command_line();
            return static_cast<int>(kExitOk);
          },
          [o] { return capture_main(*o); }};
}

const RegisterCommand kRegister{{"capture", setup, 15}};

}  // namespace
}  // namespace latlab::cli
