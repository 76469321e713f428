// Injected inputs to frames and to the screen, as both come
// (docs/capture.md, "Input"): each input (an XTest event latlab sent, its
// marker) is assigned to the first frame whose frame_start is after the
// time it was sent (PresentMon's rule), takes that frame's present, GPU end,
// completion and screen update, and, in reaction mode, the first change of
// the program's window after it (Typometer's). The XInput2 recorder's raw
// event of each input (the k-th XTest event of its kind is input k's) gives
// sent_to_seen and the X server's time.
//
// An input's row is final once it has its frame (or gave up on one), its
// reaction (or gave up) and its raw event (or gave up); rows are released in input order, to the
// caller's callback and into the figures, and dropped: what stays is bounded by the waits (Limits)
// however long the capture.
//
// Threads: not thread-safe; the session's thread drives it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capture/capture_figures.hpp"
#include "core/streaming_distribution.hpp"
#include "latlab/bench/capture_input.hpp"

namespace latlab::capture {

// One injected event: its id (0, 1, ... in schedule order) and host times.
struct InputMarker {
  uint64_t id = 0;
  int64_t scheduled = 0;  // its deadline on the schedule
  int64_t woke = 0;       // the injector's timer returned
  int64_t sent = 0;  // XTest's request was about to be written to the server (before the flush)
};

// A raw input event the XInput2 recorder read.
struct RawInputEvent {
  int64_t host_ns = 0;     // the recorder's thread read it (CLOCK_MONOTONIC)
  uint32_t server_ms = 0;  // the X server's time of the event (ms, 32 bits)
  InputKind kind = InputKind::key;
  bool from_xtest = false;  // XTest's virtual device sent it (latlab's, or another tool's)
};

// The frame an input was assigned to.
struct InputFrame {
  uint32_t pid = 0;
  uint64_t source = 0, swapchain = 0, frame = 0;
  // The source's index in the result's `sources` (as the frames CSV's
  // `source`); nullopt when it is not known.
  std::optional<uint64_t> source_index;
  int64_t frame_start = 0, present_start = 0, present_end = 0;
  std::optional<int64_t> gpu_end, present_complete, screen_updated;
};

// An input's row once final.
struct InputRow {
  InputMarker marker;
  std::optional<RawInputEvent> seen;  // its raw event; nullopt: not seen
  std::optional<InputFrame> frame;    // nullopt: `no_frame` says why
  std::string no_frame;
  std::optional<int64_t> reaction;  // reaction mode: the window's first change after it
  std::string no_reaction;          // reaction mode without one: why ("" otherwise)
};

// Where inputs' rows go once final (the per-input CSV of src/report).
// Threads: the session's thread only.
class InputRowSink {
 public:
  virtual ~InputRowSink() = default;
  // Each input once final, in input order; `reaction`: reaction mode.
  virtual void input(const InputRow& row, bool reaction) = 0;
};

// The input figures, per input (ns; nullopt = not measured).
enum class InputFigure : uint8_t {
  input_to_frame_start,       // frame_start - sent
  input_to_present,           // present_start - sent
  input_to_gpu_end,           // gpu_end - sent
  input_to_screen_updated,    // the damage observer's update of the frame - sent
  input_to_present_complete,  // present_complete - sent
  input_to_reaction,          // reaction mode: the window's first change - sent
  sent_to_seen,               // the recorder read the raw event - sent
  count_,
};
inline constexpr size_t kInputFigureCount = static_cast<size_t>(InputFigure::count_);
const char* to_string(InputFigure f);
// Input `row`'s figures.
std::array<std::optional<int64_t>, kInputFigureCount> input_figures(const InputRow& row,
                                                                    bool reaction);

// Whether the change `e` (its rectangle) overlaps `r`; a change of
// unknown extent (width 0) does.
bool overlaps(const ScreenEvent& e, const InputRegion& r);

// Why an input has no frame or no reaction (the result's counts).
inline constexpr const char* kNoFrameSource = "no_frame_source";  // the program sent no frame (yet)
inline constexpr const char* kNoFrameYet =
    "capture_ended_first";  // none started after it before the end
inline constexpr const char* kNoFrameInTime = "none_within_wait";   // none within Limits::wait_ns
inline constexpr const char* kTooManyWaiting = "too_many_waiting";  // Limits::max_waiting reached

// What the released rows add up to.
struct InputTotals {
  uint64_t released = 0, seen = 0, other_events = 0, assigned = 0, reactions = 0;
  std::vector<std::pair<std::string, uint64_t>> not_assigned, no_reaction;
  Distribution injector_lateness, timer_lateness;
  std::vector<std::pair<std::string, Distribution>> figures;
  std::optional<int64_t> server_offset_min_us, server_offset_max_us;
};

class InputAssigner {
 public:
  struct Limits {
    // An input gives up on a frame, or a reaction, this long after it was
    // sent (ns).
    int64_t wait_ns = 10'000'000'000;
    // An input waits this long for its raw event (ns): the recorder's thread
    // may read it after the input's frame came, on a busy machine.
    int64_t seen_wait_ns = 250'000'000;
    // Window changes kept this long for inputs whose marker comes after
    // them (ns): the injector publishes a marker just after sending.
    int64_t damage_keep_ns = 1'000'000'000;
    // At most this many inputs wait; the oldest gives up beyond.
    size_t max_waiting = 65536;
  };
  using Release = std::function<void(const InputRow&)>;

  // `reaction`: rows wait for their reaction too. `release` gets each row
  // once final (may be empty).
  InputAssigner(bool reaction, Release release, Limits limits);
  InputAssigner(bool reaction, Release release) : InputAssigner(reaction, std::move(release), {}) {}

  // Markers in id order (ids consecutive from 0).
  void add_input(const InputMarker& m);
  // Raw events in the order the recorder read them; `kind`: the kind the
  // injector sends (the k-th XTest event of that kind is input k's).
  void add_raw(const RawInputEvent& e, InputKind kind);
  // Frame rows in release order (present order).
  void add_frame(const CaptureFrameRow& row, std::optional<uint64_t> source_index = std::nullopt);
  // Changes of the program's window, in arrival order.
  void add_damage(const ScreenEvent& e);
  // Gives up on waits older than the limits at host time `now`; releases.
  void release(int64_t now);
  // The capture ended: every row is released; those without a frame get
  // kNoFrameSource when no frame came at all (`frames_seen` false), else
  // kNoFrameYet.
  void finish(bool frames_seen);

  InputTotals totals() const;
  size_t waiting() const { return rows_.size(); }
  size_t peak_waiting() const { return peak_waiting_; }

 private:
  struct Pending {
    InputRow row;
    bool frame_done = false, reaction_done = false, seen_done = false;
  };
  void pair_reactions();
  void release_done();
  void count_reason(std::vector<std::pair<std::string, uint64_t>>& counts, const std::string& r);

  bool reaction_;
  Release release_;
  Limits limits_;
  std::deque<Pending> rows_;  // in id order; rows_[0].row.marker.id == first_id_
  uint64_t first_id_ = 0;
  uint64_t next_frame_ = 0;     // the first id without a frame decision
  uint64_t next_reaction_ = 0;  // the first id without a reaction decision
  uint64_t xtest_seen_ = 0;     // XTest events of the kind read so far
  // XTest events read before their input's marker came (at most
  // kMaxEarlyRaw): the k-th is input first_early_ + k's.
  static constexpr size_t kMaxEarlyRaw = 1024;
  std::deque<RawInputEvent> early_raw_;
  uint64_t first_early_ = 0;
  bool frames_seen_ = false;  // a frame row came
  std::deque<ScreenEvent> damage_;
  size_t peak_waiting_ = 0;

  // Totals of the released rows.
  uint64_t released_ = 0, seen_ = 0, other_events_ = 0, assigned_ = 0, reactions_ = 0;
  std::vector<std::pair<std::string, uint64_t>> not_assigned_, no_reaction_;
  StreamingDistribution injector_lateness_, timer_lateness_;
  StreamingDistribution figures_[kInputFigureCount];
  std::optional<int64_t> offset_min_us_, offset_max_us_;
};

}  // namespace latlab::capture
