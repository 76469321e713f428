// The capture session: runs a program with latlab's frame sources attached
// (the Vulkan layer, the GL interposer), receives their records, applies the
// stop rules and assembles the typed capture result (docs/capture.md).
//
// The session owns the child, its environment, the record socket and the
// poll loop; the caller owns the outputs: its row sinks get each frame's and
// submission's row as the capture runs (a frame's once final: the session
// keeps no row longer than that, so memory stays bounded over hours), and
// it gets the result through CaptureHooks::report once the recording
// stopped (the program may still be running then) and the program's end
// from run_capture().
//
// Interrupts: while run_capture() runs, SIGINT and SIGTERM to this process
// stop the recording and are passed on to the program (unless the terminal
// sent them to it too); the result is reported once the program ended or
// 5 s later; a second one kills the program. The previous handlers are back
// when it returns.
//
// Threads: one session at a time per process (it handles the process's
// signals); run_capture() blocks until the program ended (and the frame
// sources of processes it left running, docs/capture.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "latlab/bench/capture_input.hpp"
#include "latlab/bench/capture_result.hpp"

namespace latlab {

namespace capture {
struct CaptureRecords;  // the sources' records and the figures (src/capture)
class CaptureRowSink;   // a writer of per-frame and per-submission rows (src/capture)
class InputRowSink;     // a writer of per-input rows (src/capture/input_assignment.hpp)
}  // namespace capture

// The Vulkan layer's own default span budget (percent of the program's time).
inline constexpr double kDefaultGpuSpanBudgetPercent = 2.0;

struct CapturePlan {
  // The program and its arguments (argv[0] is looked up in $PATH). Required.
  std::vector<std::string> program;
  // Stop recording after this many frames; 0: no frame limit.
  uint64_t frames = 0;
  // Stop recording this long after the first frame (s); 0: no time limit.
  double seconds = 0.0;
  // Send the program SIGTERM once a limit stopped the recording (default:
  // let it run to its end).
  bool terminate = false;
  // The program's stdout goes to this process's stderr (latlab's stdout
  // carries a document).
  bool program_stdout_to_stderr = false;
  // The share of the program's time, in percent (0, 100), that the Vulkan
  // layer's GPU spans may cost it: past it the layer times fewer frames
  // (docs/capture.md, "The span budget"); nullopt: every submission is
  // timed, whatever it costs (--gpu-spans all).
  std::optional<double> gpu_span_budget_percent = kDefaultGpuSpanBudgetPercent;
  // Inject input into the program and follow it to its frames
  // (capture_input.hpp); nullopt: no input.
  std::optional<CaptureInputPlan> input;
};

// What the session hands to the reporters once the recording stopped.
struct CaptureOutcome {
  CaptureResult capture;
  // The sources' records and the figures (no rows: those went to the row
  // sinks); never null.
  std::shared_ptr<const capture::CaptureRecords> records;
};

struct CaptureHooks {
  // latlab's messages to the user (one line each, no newline); may be empty.
  std::function<void(const std::string&)> info;
  // The writers of rows (not owned; alive until run_capture() returns):
  // each gets every row before `report` is called (capture_row_sink.hpp).
  std::vector<capture::CaptureRowSink*> row_sinks;
  // The writers of per-input rows (not owned, as row_sinks), with --input.
  std::vector<capture::InputRowSink*> input_sinks;
  // Called once, when the recording stopped and every row went to the row
  // sinks; returns 0, or a non-zero status when an output could not be
  // written (CaptureEnd::report_status).
  std::function<int(const CaptureOutcome&)> report;
  // Tests: run this in the forked child, with the child's environment set,
  // instead of executing the program; its return value is the exit status.
  std::function<int()> child_main;
};

enum class CaptureStart {
  started,            // the program ran (or exec failed: exit code 127)
  nothing_to_attach,  // neither the Vulkan layer nor the GL interposer was found
  failed,             // socket or fork failed (why)
};

struct CaptureEnd {
  CaptureStart start = CaptureStart::started;
  std::string why;  // start != started: what failed
  // The program's exit status, 128 + signal when a signal ended it, 127
  // when it could not be started.
  int exit_code = 0;
  int report_status = 0;  // what CaptureHooks::report returned
};

// Runs `plan` to the program's end (see the header comment). The exit code
// is the program's even when the session followed processes it left.
CaptureEnd run_capture(const CapturePlan& plan, const CaptureHooks& hooks);

}  // namespace latlab
