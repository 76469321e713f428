// Input to photon for a captured program (docs/capture.md, "Input"): what
// `latlab capture --input ...` sends the program, and what the result holds
// of it. latlab injects X input events through XTest on the seeded,
// absolute-deadline schedule of `latlab run`'s signal (schedule.hpp),
// records the X server's raw input events (XInput2) on the host clock, and
// assigns each injected event to the first frame that started after it
// (PresentMon's rule) and, in reaction mode, to the first change of the
// program's window after it (Typometer's measurement).
//
// All times are int64 ns on the host clock (CLOCK_MONOTONIC); the result's
// distributions are in microseconds, and a figure that could not be
// measured for an input is left out of its distribution (counted missing),
// never 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "latlab/bench/schedule.hpp"
#include "latlab/result.hpp"
#include "latlab/stats.hpp"

namespace latlab {

enum class InputKind : uint8_t {
  key,     // a key press and release (XTestFakeKeyEvent)
  button,  // a pointer button press and release (XTestFakeButtonEvent)
  motion,  // the pointer moves inside the window (XTestFakeMotionEvent)
};

// What `--input SPEC` asks for: "key:NAME" (an X keysym name: space, a,
// Return), "button:N" (1..5) or "motion".
struct CaptureInputSpec {
  InputKind kind = InputKind::key;
  std::string key = "space";  // kind == key: the keysym's name
  uint32_t button = 1;        // kind == button: 1..5
  bool operator==(const CaptureInputSpec&) const = default;
};

// Parses SPEC; error with what is wrong ("key:" without a name, a button
// outside 1..5, an unknown kind).
Result<CaptureInputSpec> parse_input_spec(std::string_view spec);
// "key:space", "button:1", "motion": the spec as the result names it.
std::string to_string(const CaptureInputSpec& spec);
// Parses an interval range "8-12ms", "10ms", "500us-1ms", "0.5-1s" into
// ns (min <= max, both > 0).
Result<std::pair<int64_t, int64_t>> parse_interval_range(std::string_view text);

// A rectangle of the program's window, in its coordinates (pixels).
struct InputRegion {
  int32_t x = 0, y = 0;
  uint32_t width = 0, height = 0;  // > 0
  bool operator==(const InputRegion&) const = default;
};
// Parses "X,Y,W,H" (W, H > 0); error with what is wrong.
Result<InputRegion> parse_input_region(std::string_view text);
// "X,Y,W,H".
std::string to_string(const InputRegion& r);

struct CaptureInputPlan {
  CaptureInputSpec spec;
  // The schedule: seed and interval range (default 8-12 ms, seed 1), the
  // same generator as `latlab run`'s signal: the same seed sends the same
  // intervals.
  ScheduleDesc schedule;
  // Stop recording once this many inputs were sent and their frames had
  // time to come (0: no limit; --seconds and the program's end still stop).
  uint64_t count = 0;
  // The first deadline comes this long after the program's window was
  // found (ns, default 500 ms: the program draws its first frames first).
  int64_t start_delay_ns = 500'000'000;
  // Reaction mode: the first change of the window after each input is its
  // reaction (input_to_reaction), for programs that draw only when
  // something happens.
  bool reaction = false;
  // Reaction mode: only a change that overlaps this rectangle is a
  // reaction (nullopt: any change of the window).
  std::optional<InputRegion> region;
  // The injector thread's timer slack (ns; per thread, nothing
  // machine-wide; 0 leaves it as it is). Default 1 ns.
  int64_t timer_slack_ns = 1;
  bool operator==(const CaptureInputPlan&) const = default;
};

// The per-input deadlines of `desc` from `start` (host ns): deadline k =
// start + interval_0 + ... + interval_k (schedule.hpp), `count` of them.
std::vector<int64_t> input_deadlines(const ScheduleDesc& desc, int64_t start, size_t count);

// The input section of a capture result (`input`, docs/capture.md "Input").
struct CaptureInput {
  std::string spec;  // "key:space"
  uint64_t seed = 0;
  int64_t min_interval_ns = 0, max_interval_ns = 0;
  bool reaction = false;
  std::string region;   // reaction mode's region "X,Y,W,H"; "" none (the whole window)
  std::string display;  // "" unknown
  uint64_t window = 0;  // the window the inputs went to; 0: none was found
  // How it was found: "frame source" (the layer or interposer reported it),
  // "_NET_WM_PID" (a window the program mapped names its pid), "first
  // window mapped" (the first top-level window mapped after the program
  // started); "" when none was.
  std::string window_found_by;
  int64_t timer_slack_ns = -1;  // the injector thread's, read back (-1 unknown)
  uint64_t scheduled = 0;       // deadlines reached while recording
  uint64_t sent = 0;            // events XTest was asked to send
  uint64_t seen = 0;            // of those, seen by the XInput2 recorder
  uint64_t other_events = 0;    // raw events of other devices (a person, another tool)
  uint64_t assigned = 0;        // inputs assigned to a frame
  // Inputs assigned to no frame, by reason (docs/capture.md lists them).
  std::vector<std::pair<std::string, uint64_t>> not_assigned;
  uint64_t reactions = 0;  // reaction mode: inputs with a reaction
  std::vector<std::pair<std::string, uint64_t>> no_reaction;
  // sent - scheduled: the injector's lateness, and woke - scheduled: its
  // timer's (the reference, as `latlab run`'s timer_lateness).
  Distribution injector_lateness, timer_lateness;
  // input_to_frame_start, input_to_present, input_to_gpu_end,
  // input_to_screen_updated, input_to_present_complete, input_to_reaction,
  // sent_to_seen (us, from the input's sent time).
  std::vector<std::pair<std::string, Distribution>> figures;
  // The X server's event time (ms, CLOCK_MONOTONIC cut to 32 bits on
  // Xorg/Xvfb) against the host clock: the smallest host - server over the
  // seen events (ms), and the largest; nullopt without a seen event.
  std::optional<double> server_offset_min_ms, server_offset_max_ms;
  // The distribution named `name`, or null.
  const Distribution* figure(std::string_view name) const;
  bool operator==(const CaptureInput&) const = default;
};

}  // namespace latlab
