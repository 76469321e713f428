// The typed capture result (include/latlab/bench/capture_result.hpp) from
// what the session saw: the program's end, how the recording stopped, the
// records and the screen observer. No I/O here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capture/capture_stream.hpp"
#include "capture/capture_summary.hpp"
#include "capture/screen_observer.hpp"
#include "latlab/bench/capture_result.hpp"
#include "latlab/bench/capture_session.hpp"

namespace latlab::capture {

struct ProgramEnd {
  bool exited = false;  // waitpid saw it end
  int exit_code = 0;    // exit status, or 128 + signal
  int signal = 0;       // the signal that ended it (0: it exited)
  bool not_started = false;
};

// The session's facts when the result is assembled.
struct SessionFacts {
  const CapturePlan* plan = nullptr;
  int64_t pid = -1;
  ProgramEnd end;
  bool recording = true;                    // no stop rule fired yet
  std::string stopped_by = "program_exit";  // "frames", "seconds", "inputs", "signal"
  int interrupt = 0;                        // the signal that interrupted latlab (0: none)
  std::optional<int> signal_sent;           // the last signal latlab sent the program
  std::vector<std::pair<std::string, std::string>> not_attached;  // {name, why}
  // The X11 screen observer: why it saw nothing ("" when it saw), its
  // display and the windows it watched.
  std::string screen_why;
  std::string screen_display;
  std::vector<WatchedWindow> watched;
};

// Why what was captured is partial; "" when it is whole.
std::string partial_reason(const SessionFacts& facts, const CaptureStream& stream);

CaptureResult assemble_capture(const SessionFacts& facts, const CaptureStream& stream,
                               const CaptureSummary& summary, const ScreenSummary& screen);

const char* signal_name(int sig);

}  // namespace latlab::capture
