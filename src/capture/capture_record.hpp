// The capture record stream: what a frame source inside a captured program
// (the Vulkan layer, the GL interposer) sends to `latlab capture`. API-neutral
// and versioned; docs/capture.md ("The record stream") describes it for the
// writers of new sources.
//
// Transport: an AF_UNIX SOCK_SEQPACKET socket whose descriptor number the
// child finds in the environment variable LATLAB_CAPTURE_FD. One record is
// one datagram (boundaries kept, each send atomic); sends use MSG_DONTWAIT |
// MSG_NOSIGNAL, so a source never blocks and never gets SIGPIPE: a record
// that does not fit is dropped and counted (RecordHead::seq has a gap). A
// child that dies leaves every record it sent readable by the parent.
//
// Layout: native byte order, fixed-size structs (static_asserts below); every
// record begins with RecordHead. A reader skips record types it does not
// know and reads the first `size` bytes it knows of a longer record of a
// newer minor revision (fields are only ever appended).
//
// Clock: every time is int64 ns on CLOCK_MONOTONIC (latlab's host clock);
// GPU times are already mapped onto it by the source with latlab's
// calibration. kNoTime marks a value the source could not measure; why is
// said once per source by an Unavailable record (never a 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string_view>

namespace latlab::capture {

inline constexpr uint32_t kRecordMagic = 0x5243'4c4c;  // "LLCR" in memory on little-endian
inline constexpr uint16_t kRecordVersion = 1;
inline constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min();
inline constexpr const char* kCaptureFdEnv = "LATLAB_CAPTURE_FD";

enum class RecordType : uint16_t {
  hello = 1,        // a source started (one per device or context)
  unavailable = 2,  // a value this source cannot give, and why
  submit = 3,       // one queue submission (Vulkan) or one GL frame's GPU span
  frame = 4,        // one frame, present to present
  end = 5,          // the source ended cleanly (device destroyed, exit)
  window = 6,       // a swapchain / drawable presents to this window (screen observers)
  cost = 7,         // what the source's process spends on latlab beyond its timed calls
  bracket = 8,      // what the source's own bracketing adds to a span, measured on one queue
};

enum class SourceApi : uint32_t { vulkan = 1, opengl = 2 };

struct RecordHead {
  uint32_t magic = kRecordMagic;
  uint16_t version = kRecordVersion;
  RecordType type{};
  uint32_t size = 0;  // bytes of the whole record, head included
  uint32_t pid = 0;   // the sending process
  // Per process and lane, counting every record the lane's sender tried to
  // send from 0: a gap is records dropped (the socket was full). The top
  // byte is the lane (kSeqLaneShift): each frame-source library in a process
  // (the Vulkan layer, the GL interposer) has its own sender and numbers.
  uint64_t seq = 0;
  // The source within the process (a VkDevice, a GL context): any number
  // that stays the same for the source's life.
  uint64_t source = 0;
};
static_assert(sizeof(RecordHead) == 32);

// RecordHead::seq >> kSeqLaneShift: which sender of the process sent it.
inline constexpr uint32_t kSeqLaneShift = 56;
inline constexpr uint8_t kSeqLaneVulkanLayer = 0;
inline constexpr uint8_t kSeqLaneGlInterposer = 1;

struct HelloRecord {
  RecordHead head;
  SourceApi api{};
  uint32_t reserved = 0;
  char device_name[256] = {};   // "llvmpipe (LLVM 15.0.6, 256 bits)"
  char clock_method[128] = {};  // how GPU times reach the host clock ("" when they cannot)
  char source_name[64] = {};    // "VK_LAYER_LATLAB_capture 0.1.0"
  // How FrameRecord::present_complete is measured on the device's
  // swapchains ("" when it is not; docs/capture.md): present_method_name().
  // A frame on a Wayland surface uses wp_presentation instead
  // (FrameRecord::complete_method).
  char present_method[64] = {};
};
static_assert(sizeof(HelloRecord) == 32 + 8 + 256 + 128 + 64 + 64);

struct UnavailableRecord {
  RecordHead head;
  char name[64] = {};     // the value: "present_complete", "gpu_span", ...
  char reason[512] = {};  // what a user can act on
};
static_assert(sizeof(UnavailableRecord) == 32 + 64 + 512);

// Why a submission has no GPU span (SubmitRecord::no_span).
enum class NoSpan : uint32_t {
  none = 0,             // the span was measured
  no_work = 1,          // no command buffers: nothing to time (not missing)
  cannot_time = 2,      // the queue family cannot write timestamps / no calibration
  ring_full = 3,        // every timestamp slot of the family was in flight
  not_bracketable = 4,  // protected or device-group batch: left as the program made it
  not_read = 5,         // the source ended before the timestamps were available
  failed = 6,           // the submission itself failed (its VkResult in `result`)
  budget = 7,           // not timed: the spans' cost was at its budget (span_budget.hpp)
};

struct SubmitRecord {
  RecordHead head;
  uint64_t frame = 0;     // index of the frame the submission belongs to (0-based)
  int64_t cpu_start = 0;  // the program called the submit
  int64_t cpu_end = 0;    // the submit returned to the program
  int64_t gpu_begin = kNoTime;
  int64_t gpu_end = kNoTime;
  int64_t source_cpu_ns = 0;  // CPU time the source itself added to this call
  uint32_t queue_family = 0;
  uint32_t batches = 0;          // VkSubmitInfo count (GL: 0)
  uint32_t command_buffers = 0;  // the program's command buffers in them
  NoSpan no_span = NoSpan::none;
  int32_t result = 0;  // VkResult of the call (GL: 0)
  uint32_t reserved = 0;
};
static_assert(sizeof(SubmitRecord) == 32 + 8 * 6 + 4 * 6);

// Why a frame has no present_complete (FrameRecord::no_complete).
enum class NoComplete : uint32_t {
  none = 0,         // present_complete was measured
  unavailable = 1,  // the source has no way to learn it (its Unavailable record says why)
  dropped = 2,      // the source's waiter queue for the swapchain was full
  failed = 3,       // the wait or timing query returned an error
  retired = 4,      // the swapchain was retired or destroyed before it was known
  late = 5,         // not known within a second of the present (or the source ended first)
  not_tagged = 6,   // the program gave this present no id of its own (present id 0)
  discarded = 7,    // the compositor replaced the frame before showing it (wp_presentation)
};
inline constexpr size_t kNoCompleteCount = 8;

// How a frame's present_complete is learnt (HelloRecord::present_method names
// the device's plan; FrameRecord::complete_method what each frame used).
enum class PresentMethod : uint32_t {
  none = 0,
  present_wait = 1,     // VK_KHR_present_wait: the host time the wait returned
  display_timing = 2,   // VK_GOOGLE_display_timing: the driver's actualPresentTime
  wp_presentation = 3,  // the Wayland compositor's presentation feedback
};

// "VK_KHR_present_wait", "VK_GOOGLE_display_timing", "wp_presentation", "".
inline const char* present_method_name(PresentMethod m) {
  return m == PresentMethod::present_wait      ? "VK_KHR_present_wait"
         : m == PresentMethod::display_timing  ? "VK_GOOGLE_display_timing"
         : m == PresentMethod::wp_presentation ? "wp_presentation"
                                               : "";
}

// FrameRecord::display_flags: wp_presentation_feedback's kind bits.
inline constexpr uint32_t kDisplayVsync = 0x1;         // shown at a vertical retrace
inline constexpr uint32_t kDisplayHwClock = 0x2;       // the time is the display hardware's
inline constexpr uint32_t kDisplayHwCompletion = 0x4;  // the hardware signalled completion
inline constexpr uint32_t kDisplayZeroCopy = 0x8;      // the client's buffer was scanned out

struct FrameRecord {
  RecordHead head;
  uint64_t frame = 0;             // 0-based per source
  uint64_t swapchain = 0;         // the swapchain / drawable presented (first of a multi-present)
  int64_t frame_start = kNoTime;  // the previous present returned (kNoTime: first frame)
  int64_t present_start = 0;      // the program called present
  int64_t present_end = 0;        // present returned
  int64_t gpu_begin = kNoTime;    // first GPU work of the frame began
  int64_t gpu_end = kNoTime;      // last GPU work of the frame ended
  int64_t gpu_busy_ns = kNoTime;  // union of the frame's GPU spans
  int64_t acquire_wait_ns = 0;    // time in the frame blocked acquiring an image (GL: kNoTime)
  // The present was done: when vkWaitForPresentKHR returned, the display
  // timing's actual present time, or the time the compositor showed the
  // frame (complete_method says which).
  int64_t present_complete = kNoTime;
  int64_t source_present_ns = 0;   // CPU time the source added to the present call
  int64_t source_submit_ns = 0;    // the same, summed over the frame's submits
  uint32_t submits = 0;            // submissions in the frame
  uint32_t gpu_spans_missing = 0;  // submissions with work whose span is missing
  uint32_t swapchains = 1;         // swapchains in the present call
  int32_t present_result = 0;      // VkResult of the present (GL: 0, EGL_FALSE: -1)
  NoComplete no_complete = NoComplete::unavailable;  // why present_complete is kNoTime
  uint32_t reserved = 0;
  // Appended (revision 1.1): how present_complete was learnt for this frame
  // and, with wp_presentation, what the compositor said of the display.
  PresentMethod complete_method = PresentMethod::none;
  uint32_t display_flags = 0;    // kDisplay* bits
  int64_t refresh_ns = kNoTime;  // the output's refresh period (kNoTime: none given)
  uint64_t display_seq = 0;      // the output's vblank counter at display (0: none)
};
static_assert(sizeof(FrameRecord) == 32 + 8 * 12 + 4 * 6 + 8 * 3);

struct EndRecord {
  RecordHead head;
  uint64_t frames = 0;
  uint64_t submits = 0;
  uint64_t dropped = 0;  // records this process could not send so far
};
static_assert(sizeof(EndRecord) == 32 + 24);

// The window a swapchain (GL: a drawable) presents to, sent when the source
// learns it (vkCreateSwapchainKHR on an X11 surface), so that a screen
// observer outside the program can watch the window.
enum class WindowSystem : uint32_t { x11 = 1 };

struct WindowRecord {
  RecordHead head;
  uint64_t swapchain = 0;  // as FrameRecord::swapchain
  uint64_t window = 0;     // X11: the window's XID
  WindowSystem system = WindowSystem::x11;
  uint32_t reserved = 0;
  char display[128] = {};  // the program's $DISPLAY ("" when unset)
};
static_assert(sizeof(WindowRecord) == 32 + 8 + 8 + 8 + 128);

// Cumulative, sent about once a second and when the source ends; a newer
// one replaces the older. The CPU of latlab's threads is the process's (every
// thread named latlab-*), the same figure from each source of the process.
struct CostRecord {
  RecordHead head;
  int64_t threads_cpu_ns = 0;  // CPU time of the process's latlab-* threads so far
  // What the span budget prices a GPU span at now (ns; 0: no budget, every
  // submission timed), and where that price came from: the bracketing
  // probe (0), or learnt from the program's own frames (1) or submissions
  // (2): SpanPriceFrom.
  int64_t span_price_ns = 0;
  uint64_t bracketed = 0;  // submissions the source added its command buffers to
  uint32_t threads = 0;    // latlab-* threads seen so far
  uint32_t span_price_from = 0;
  // Appended in revision 1.2: what the source added to the program's
  // vkCreateDevice, once (ns; kNoTime: not a Vulkan device, or not yet).
  int64_t setup_ns = kNoTime;
};
static_assert(sizeof(CostRecord) == 32 + 8 * 4 + 4 * 2);

// The bracketing probe, once per queue at device creation (docs/capture.md,
// "What a span includes"): `rounds` submissions of the source's begin
// command buffer, a stand-in for the program's work (a top-of-pipe and a
// bottom-of-pipe timestamp, the program's own first and last marker) and
// its end command buffer, each waited for, alternating with submissions of
// the stand-in alone. before: begin -> the stand-in's first timestamp;
// after: its last -> end. The process CPU time (CLOCK_PROCESS_CPUTIME_ID,
// every thread: the driver's included) of a submission and its wait, with
// and without the source's command buffers: their difference is what the
// bracketing costs the driver per submission.
struct BracketRecord {
  RecordHead head;
  uint32_t queue_family = 0;
  uint32_t queue_index = 0;
  uint32_t rounds = 0;  // of each kind
  uint32_t reserved = 0;
  int64_t before_p50_ns = kNoTime, before_min_ns = kNoTime, before_max_ns = kNoTime;
  int64_t after_p50_ns = kNoTime, after_min_ns = kNoTime, after_max_ns = kNoTime;
  int64_t cpu_plain_p50_ns = kNoTime;      // the stand-in alone
  int64_t cpu_bracketed_p50_ns = kNoTime;  // with the source's command buffers
};
static_assert(sizeof(BracketRecord) == 32 + 16 + 8 * 8);

// Largest record; a datagram longer than this is from a newer source and is
// read up to what this reader knows.
inline constexpr size_t kMaxRecordSize = 1024;
static_assert(sizeof(UnavailableRecord) <= kMaxRecordSize);

// Copies `text` into a fixed field, cut to fit, always 0-terminated.
template <size_t N>
void set_text(char (&field)[N], std::string_view text) {
  // snprintf, not memcpy: GCC 12 at -O2 takes a temporary std::string's
  // data for its small buffer and warns (-Warray-bounds) on longer copies.
  const size_t n = text.size() < N - 1 ? text.size() : N - 1;
  std::snprintf(field, N, "%.*s", static_cast<int>(n), text.data());
}

// The text of a fixed field (up to its first 0 or its end).
template <size_t N>
std::string_view text_of(const char (&field)[N]) {
  return {field, strnlen(field, N)};
}

}  // namespace latlab::capture
