// One GL context's frames, as the capture interposer sees them (docs/capture.md,
// "OpenGL"): at each swap a GL_TIMESTAMP query ends the frame's GL commands
// (put just before the swap) and another begins the next frame's (just after
// it); results are read on later swaps, only once GL_QUERY_RESULT_AVAILABLE
// says so, from a ring of query objects; GL times reach the host clock
// through latlab's bracketed GL calibration (gl_calibration_pair.hpp) and
// ClockModel, on the program's own context.
//
// What it leaves as it was on the program's context: every GL error flag (it
// never calls glGetError and makes only calls that cannot fail: each one's
// preconditions are checked once, at probe()), the GL_QUERY_BUFFER binding
// (unbound around its reads and bound again), every query the program has
// active (timestamp queries bind no target). It never waits for the GPU
// (no glFinish, no GL_QUERY_RESULT before availability), except for its
// last spans when the program destroys the context while current.
//
// Threads: not thread-safe. Every call with the context current on the
// calling thread (GL's own rule), except finish(false); the interposer holds
// a lock per context around each.
#pragma once

#include <GL/glcorearb.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "capture/capture_record.hpp"
#include "capture/presentation_feedback.hpp"
#include "latlab/clock_model.hpp"

namespace latlab::capture::glcap {

// A record for the interposer's outbox; the sink queues it (never blocks
// for long) and a thread of the interposer's sends it.
using OutRecord = std::variant<HelloRecord, UnavailableRecord, SubmitRecord, FrameRecord, EndRecord,
                               WindowRecord>;
using RecordSink = std::function<void(uint64_t source, OutRecord&& record)>;

// The GL entry points used on the program's context. Loaded through the GL
// window system's own GetProcAddress (GLX or EGL) for the context's kind.
struct GlFns {
  PFNGLGETSTRINGPROC GetString = nullptr;
  PFNGLGETSTRINGIPROC GetStringi = nullptr;
  PFNGLGETINTEGERVPROC GetIntegerv = nullptr;
  PFNGLGETINTEGER64VPROC GetInteger64v = nullptr;
  PFNGLGENQUERIESPROC GenQueries = nullptr;
  PFNGLQUERYCOUNTERPROC QueryCounter = nullptr;
  PFNGLGETQUERYIVPROC GetQueryiv = nullptr;
  PFNGLGETQUERYOBJECTUIVPROC GetQueryObjectuiv = nullptr;
  PFNGLGETQUERYOBJECTUI64VPROC GetQueryObjectui64v = nullptr;
  PFNGLBINDBUFFERPROC BindBuffer = nullptr;
};

// A GetProcAddress: the entry point named, or null.
using GlLoader = void* (*)(const char* name);

// How a swap's present_complete will be learnt: the interposer asked the
// compositor for the frame's feedback (wp_presentation: its outcome comes
// through display_outcome), or there is no way (and why).
struct DisplayAsk {
  PresentMethod method = PresentMethod::none;
  NoComplete why = NoComplete::unavailable;  // none: the outcome is awaited
  std::string no_way;                        // method none on a Wayland surface: why ("" elsewhere)
};

// Query pairs per context: a frame in flight whose timestamps are not read
// yet holds one, and so does the open frame. A context starts with
// kGlQueryPairs and doubles them, in the swap that finds none free, up to
// kGlMaxQueryPairs; a frame beyond that is not timed (NoSpan::ring_full).
inline constexpr uint32_t kGlQueryPairs = 16;
inline constexpr uint32_t kGlMaxQueryPairs = 1024;
// How long a frame's record waits for the compositor's outcome.
inline constexpr int64_t kGlCompleteTimeoutNs = 1'000'000'000;

class GlContextTiming {
 public:
  // Probes the context current on the calling thread (GL version, timer
  // queries, GL_QUERY_COUNTER_BITS, query buffers), calibrates, and sends
  // the source's hello and unavailable records. `window_system`: "GLX" or
  // "EGL"; `source`: the context's handle.
  GlContextTiming(uint64_t source, const char* window_system, GlLoader load, RecordSink sink);
  ~GlContextTiming();
  GlContextTiming(const GlContextTiming&) = delete;
  GlContextTiming& operator=(const GlContextTiming&) = delete;

  // Before the program's swap (enter: when the program called it): ends the
  // open frame's GL commands with a timestamp query, refreshes the
  // calibration when it is due.
  void before_swap(int64_t enter);
  // After the swap returned (`call_start`..`returned`: the real call):
  // queues the frame, reads every earlier frame whose timestamps are
  // available (sending its submit and frame records), and begins the next
  // frame with a timestamp query. `drawable`: the swapped window/surface;
  // `result`: 0, or -1 when an EGL swap returned EGL_FALSE.
  // `ask`: how its present_complete comes.
  void after_swap(int64_t enter, int64_t call_start, int64_t returned, uint64_t drawable,
                  int32_t result, const DisplayAsk& ask);
  // The compositor's outcome for one of this context's frames (any thread
  // holding the interposer's lock of the context; the context need not be
  // current). A frame's record waits for it, at most kGlCompleteTimeoutNs.
  void display_outcome(const DisplayOutcome& o);
  // Whether this is the context's first swap of `drawable` (then noted).
  bool first_swap_of(uint64_t drawable);
  // `drawable` (the frames' swapchain) shows in X window `window`: a
  // WindowRecord names it to the screen observer. GLX: the drawable itself
  // (a GLXWindow made by glXCreateWindow is not the X window: the observer
  // then says it could not watch it); EGL: the window its surface was made on.
  void name_x11_window(uint64_t drawable, uint64_t window);
  // The index the next swap's frame will have.
  uint64_t next_frame() const { return frame_index_; }
  // The context goes away (destroyed, its display terminated, the process
  // exits). `current`: on this thread, so what is available is read first;
  // the rest is sent without GPU span (NoSpan::not_read). Then the end
  // record (its `dropped` is the outbox's to fill). Once; later calls do nothing.
  void finish(bool current);

  bool can_time() const { return can_time_; }

 private:
  struct Pending {
    FrameRecord frame;
    SubmitRecord submit;
    int pair = -1;          // query pair, -1: not timed (submit.no_span says why)
    bool awaiting = false;  // its display outcome is still to come
  };
  // The context's extension list: GL 3.0+ one name each, else one string.
  struct GlExtensions {
    std::vector<std::string> list;
    const char* string = nullptr;  // null when listed one by one
    bool has(const char* name) const;
  };
  // Loads the GL entry points and the clock; sends Hello and the
  // Unavailable records of what this context cannot time.
  void probe(GlLoader load);
  // Why GPU spans cannot be timed on a context of `version`; empty if they can.
  std::string probe_timing(GlLoader load, const char* version);
  GlExtensions extensions(GlLoader load, int major);
  // Loads the timer query entry points; false when one is missing.
  bool load_query_fns(GlLoader load);
  // Sets up ticks_, model_ and the first fit; why not, or empty.
  std::string start_clock();
  void send_limits(const std::string& why);
  void calibrate(uint32_t brackets);
  // Reads the front of `pending_` while available; sends each frame done.
  void collect();
  // collect(), or with `wait` every pending span read, blocking (finish).
  void collect_spans(bool wait);
  // Doubles the query pairs (the context is current); false at
  // kGlMaxQueryPairs.
  bool grow_pairs();
  void emit(Pending& p);
  // Fills an awaited frame's present_complete from its outcome; false while
  // it is still to come (within kGlCompleteTimeoutNs, unless `final`).
  bool take_outcome(Pending& p, int64_t now, bool final);
  // present_complete's Unavailable record, once per context.
  void say_no_complete(const DisplayAsk& ask);
  void unavailable(const char* name, const std::string& reason);
  uint64_t read_timestamp();

  uint64_t source_ = 0;
  std::string window_system_;
  std::vector<uint64_t> drawables_swapped_;  // first_swap_of's
  RecordSink sink_;
  GlFns gl_;
  bool gles_ = false;
  bool can_time_ = false;
  bool query_buffer_ = false;  // GL_QUERY_BUFFER exists: unbind it around reads
  std::string renderer_;
  TickFormat ticks_;
  std::unique_ptr<ClockModel> model_;
  std::shared_ptr<const ClockFit> fit_;
  int64_t next_calibration_ns_ = 0;
  std::vector<GLuint> queries_;  // 2 per pair: begin, end
  std::vector<uint32_t> free_;   // free pairs
  std::deque<Pending> pending_;  // swapped, in swap order, not sent yet
  int open_pair_ = -1;           // the open frame's pair (-1: not timed)
  NoSpan open_no_span_ = NoSpan::cannot_time;
  int64_t open_cpu_start_ = kNoTime;  // its begin query was issued
  int64_t last_present_end_ = kNoTime;
  uint64_t frame_index_ = 0;
  uint64_t frames_sent_ = 0;
  uint64_t submits_sent_ = 0;
  bool finished_ = false;
  std::map<uint64_t, DisplayOutcome> outcomes_;  // by frame, until the frame is sent
  bool complete_said_ = false;
};

}  // namespace latlab::capture::glcap
