#include "capture/gl_interposer/gl_context_timing.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>

#include "backends/opengl/gl_calibration_pair.hpp"
#include "capture/frame_assembly.hpp"
#include "latlab/calibrator.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/opengl.hpp"
#include "latlab/version.hpp"

namespace latlab::capture::glcap {
namespace {

// GL_EXT_disjoint_timer_query and GL_ARB_query_buffer_object use the core
// enum values (GL_TIMESTAMP_EXT == GL_TIMESTAMP, ...).
bool has_token(const char* list, const char* name) {
  const size_t n = std::strlen(name);
  for (const char* p = list; p != nullptr && (p = std::strstr(p, name)) != nullptr; p += n) {
    const bool starts = p == list || p[-1] == ' ';
    if (starts && (p[n] == ' ' || p[n] == '\0')) return true;
  }
  return false;
}

// Loads `first`, else `second`, into `fn`; true when one was found.
template <class Fn>
bool load_fn(GlLoader load, Fn& fn, const char* first, const char* second = nullptr) {
  fn = reinterpret_cast<Fn>(load(first));
  if (fn == nullptr && second != nullptr) fn = reinterpret_cast<Fn>(load(second));
  return fn != nullptr;
}

}  // namespace

GlContextTiming::GlContextTiming(uint64_t source, const char* window_system, GlLoader load,
                                 RecordSink sink)
    : source_(source), window_system_(window_system), sink_(std::move(sink)) {
  probe(load);
}

GlContextTiming::~GlContextTiming() = default;

void GlContextTiming::unavailable(const char* name, const std::string& reason) {
  UnavailableRecord r;
  set_text(r.name, name);
  set_text(r.reason, reason);
  sink_(source_, r);
}

bool GlContextTiming::first_swap_of(uint64_t drawable) {
  if (std::find(drawables_swapped_.begin(), drawables_swapped_.end(), drawable) !=
      drawables_swapped_.end())
    return false;
  drawables_swapped_.push_back(drawable);
  return true;
}

void GlContextTiming::name_x11_window(uint64_t drawable, uint64_t window) {
  WindowRecord w;
  w.swapchain = drawable;  // as the frames' FrameRecord::swapchain
  w.window = window;
  w.system = WindowSystem::x11;
  const char* display = std::getenv("DISPLAY");
  set_text(w.display, display != nullptr ? display : "");
  sink_(source_, w);
}

uint64_t GlContextTiming::read_timestamp() {
  GLint64 v = 0;
  gl_.GetInteger64v(GL_TIMESTAMP, &v);
  return static_cast<uint64_t>(v);
}

void GlContextTiming::calibrate(uint32_t brackets) {
  const CalibrationPair pair =
      gl::narrowest_bracket([this] { return read_timestamp(); }, ticks_.mask(), brackets);
  model_->add_pair(pair);
  fit_ = model_->fit();
  next_calibration_ns_ = host_now_ns() + CalibratorDesc{}.refresh_interval_ns;
}

bool GlContextTiming::GlExtensions::has(const char* name) const {
  for (const auto& e : list) {
    if (e == name) return true;
  }
  return has_token(string, name);
}

GlContextTiming::GlExtensions GlContextTiming::extensions(GlLoader load, int major) {
  // glGetStringi from GL 3.0 / GLES 3.0 (glGetString(GL_EXTENSIONS) is an
  // error in a core profile), the one string before.
  GlExtensions exts;
  if (major >= 3 && load_fn(load, gl_.GetStringi, "glGetStringi")) {
    GLint n = 0;
    gl_.GetIntegerv(GL_NUM_EXTENSIONS, &n);
    for (GLint i = 0; i < n; ++i) {
      if (const auto* e = reinterpret_cast<const char*>(gl_.GetStringi(GL_EXTENSIONS, i)))
        exts.list.emplace_back(e);
    }
  } else {
    exts.string = reinterpret_cast<const char*>(gl_.GetString(GL_EXTENSIONS));
  }
  return exts;
}

bool GlContextTiming::load_query_fns(GlLoader load) {
  auto get = [load](auto& fn, const char* first, const char* second = nullptr) {
    return load_fn(load, fn, first, second);
  };
  // GLES: the extension's EXT names first (core in GLES 3.0 for some).
  return gles_ ? get(gl_.GenQueries, "glGenQueriesEXT", "glGenQueries") &&
                     get(gl_.QueryCounter, "glQueryCounterEXT") &&
                     get(gl_.GetQueryiv, "glGetQueryivEXT", "glGetQueryiv") &&
                     get(gl_.GetQueryObjectuiv, "glGetQueryObjectuivEXT", "glGetQueryObjectuiv") &&
                     get(gl_.GetQueryObjectui64v, "glGetQueryObjectui64vEXT") &&
                     get(gl_.GetInteger64v, "glGetInteger64vEXT", "glGetInteger64v")
               : get(gl_.GenQueries, "glGenQueries") && get(gl_.QueryCounter, "glQueryCounter") &&
                     get(gl_.GetQueryiv, "glGetQueryiv") &&
                     get(gl_.GetQueryObjectuiv, "glGetQueryObjectuiv") &&
                     get(gl_.GetQueryObjectui64v, "glGetQueryObjectui64v") &&
                     get(gl_.GetInteger64v, "glGetInteger64v");
}

std::string GlContextTiming::start_clock() {
  GLint bits = 0;
  gl_.GetQueryiv(GL_TIMESTAMP, GL_QUERY_COUNTER_BITS, &bits);
  if (bits <= 0)
    return "GL_QUERY_COUNTER_BITS of GL_TIMESTAMP is 0 on '" + renderer_ + "' (no GPU timestamps)";
  ticks_ = TickFormat{1, 1, static_cast<uint32_t>(bits > 64 ? 64 : bits)};
  model_ = std::make_unique<ClockModel>(ticks_, CalibratorDesc{}.model);
  calibrate(CalibratorDesc{}.samples_per_refresh);
  if (fit_ == nullptr) return "the clock model accepted no calibration pair";
  return {};
}

std::string GlContextTiming::probe_timing(GlLoader load, const char* version) {
  if (const auto* r = reinterpret_cast<const char*>(gl_.GetString(GL_RENDERER))) renderer_ = r;
  int major = 0;
  int minor = 0;
  gles_ = std::strncmp(version, "OpenGL ES", 9) == 0;
  std::sscanf(gles_ ? version + 9 : version, " %d.%d", &major, &minor);
  const GlExtensions exts = extensions(load, major);
  const int v = major * 10 + minor;
  const bool timer =
      gles_ ? exts.has("GL_EXT_disjoint_timer_query") : v >= 33 || exts.has("GL_ARB_timer_query");
  query_buffer_ = (!gles_ && (v >= 44 || exts.has("GL_ARB_query_buffer_object"))) ||
                  exts.has("GL_AMD_query_buffer_object");
  const bool loaded = load_query_fns(load);
  if (query_buffer_ && !load_fn(load, gl_.BindBuffer, "glBindBuffer")) query_buffer_ = false;
  if (!timer) {
    return std::string("no timer queries on '") + version + "' (needs GL 3.3, " +
           "GL_ARB_timer_query or, on GLES, GL_EXT_disjoint_timer_query)";
  }
  if (!loaded) return "the GL driver has timer queries but not all their entry points";
  return start_clock();
}

void GlContextTiming::send_limits(const std::string& why) {
  if (!can_time_) {
    unavailable("gpu_span", why + "; frames keep their CPU and present times");
  } else {
    unavailable("gpu_span",
                "frame 0 of each GL context: its GL commands began before the interposer first "
                "saw the context (at its first swap), so it has no begin timestamp");
  }
  unavailable("gpu_busy",
              "GL: one span per frame (a timestamp after the previous swap to one before this "
              "one); the GPU's idle gaps inside it are not seen, so gpu_busy and gpu_wait are "
              "not measured");
  unavailable("acquire_wait",
              "GL has no image acquire: a wait for a free back buffer is inside the swap call "
              "(in_present_api) or the next frame's first GL call");
  if (gles_ && can_time_) {
    unavailable("disjoint_detection",
                "GLES: GL_GPU_DISJOINT_EXT is the program's to read (reading it clears it), so "
                "timestamps spanning a disjoint event are not detected");
  }
}

void GlContextTiming::probe(GlLoader load) {
  std::string why;  // why GPU spans cannot be timed
  const char* version = nullptr;
  if (load_fn(load, gl_.GetString, "glGetString") &&
      load_fn(load, gl_.GetIntegerv, "glGetIntegerv"))
    version = reinterpret_cast<const char*>(gl_.GetString(GL_VERSION));
  if (version == nullptr) {
    why = "glGetString(GL_VERSION) gave nothing on the current context";
  } else {
    why = probe_timing(load, version);
  }
  can_time_ = why.empty();
  if (can_time_) {
    queries_.assign(2 * kGlQueryPairs, 0);
    gl_.GenQueries(static_cast<GLsizei>(queries_.size()), queries_.data());
    for (uint32_t i = kGlQueryPairs; i-- > 0;) free_.push_back(i);
  }
  HelloRecord hello;
  hello.api = SourceApi::opengl;
  set_text(hello.source_name,
           "latlab GL interposer " + std::string(kVersion) + " (" + window_system_ + ")");
  set_text(hello.device_name, renderer_);
  set_text(hello.clock_method, can_time_ ? kGlCalibrationDomain : "");
  sink_(source_, hello);
  send_limits(why);
}

void GlContextTiming::before_swap(int64_t /*enter*/) {
  // The end of the frame's GL commands: executed once everything issued
  // before it is done.
  if (open_pair_ >= 0) gl_.QueryCounter(queries_[2 * open_pair_ + 1], GL_TIMESTAMP);
}

void GlContextTiming::say_no_complete(const DisplayAsk& ask) {
  if (complete_said_) return;
  complete_said_ = true;
  unavailable("present_complete",
              ask.no_way.empty()
                  ? "the GL interposer learns when a swap was shown only on Wayland "
                    "(wp_presentation); GLX_OML_sync_control and EGL presentation timing are "
                    "not used"
                  : "on Wayland: " + ask.no_way);
}

void GlContextTiming::display_outcome(const DisplayOutcome& o) {
  if (!finished_) outcomes_[o.frame] = o;
}

bool GlContextTiming::take_outcome(Pending& p, int64_t now, bool final) {
  auto it = outcomes_.find(p.frame.frame);
  if (it != outcomes_.end()) {
    apply_outcome(it->second, p.frame);
    outcomes_.erase(it);
  } else if (final) {
    p.frame.no_complete = NoComplete::retired;
  } else if (now - p.frame.present_end > kGlCompleteTimeoutNs) {
    p.frame.no_complete = NoComplete::late;
  } else {
    return false;
  }
  p.awaiting = false;
  return true;
}

void GlContextTiming::after_swap(int64_t enter, int64_t call_start, int64_t returned,
                                 uint64_t drawable, int32_t result, const DisplayAsk& ask) {
  collect();
  Pending p;
  p.frame.frame = frame_index_++;
  p.frame.swapchain = drawable;
  p.frame.frame_start = last_present_end_;
  p.frame.present_start = enter;
  p.frame.present_end = returned;
  p.frame.acquire_wait_ns = kNoTime;
  p.frame.present_result = result;
  p.frame.complete_method = ask.method;
  // A failed swap made no commit: the feedback asked answers a later one.
  p.frame.no_complete = ask.why == NoComplete::none && result != 0 ? NoComplete::failed : ask.why;
  p.awaiting = p.frame.no_complete == NoComplete::none;
  if (ask.why == NoComplete::unavailable) say_no_complete(ask);
  p.submit.frame = p.frame.frame;
  p.submit.cpu_start = open_cpu_start_;
  p.submit.cpu_end = enter;
  p.submit.result = result;
  p.submit.no_span = open_pair_ >= 0 ? NoSpan::none : open_no_span_;
  p.pair = open_pair_;
  // The next frame begins: its first GL commands follow this timestamp.
  if (!can_time_) {
    open_pair_ = -1;
    open_no_span_ = NoSpan::cannot_time;
  } else if (free_.empty() && !grow_pairs()) {
    open_pair_ = -1;
    open_no_span_ = NoSpan::ring_full;
  } else {
    open_pair_ = static_cast<int>(free_.back());
    free_.pop_back();
    gl_.QueryCounter(queries_[2 * open_pair_], GL_TIMESTAMP);
  }
  if (can_time_ && returned >= next_calibration_ns_)
    calibrate(CalibratorDesc{}.samples_per_refresh);
  const int64_t now = host_now_ns();
  open_cpu_start_ = now;
  last_present_end_ = now;
  p.frame.source_present_ns = (call_start - enter) + (now - returned);
  pending_.push_back(p);
}

bool GlContextTiming::grow_pairs() {
  const auto pairs = static_cast<uint32_t>(queries_.size() / 2);
  if (pairs >= kGlMaxQueryPairs) return false;
  const uint32_t added = std::min(pairs, kGlMaxQueryPairs - pairs);
  queries_.resize(2 * size_t{pairs + added}, 0);
  gl_.GenQueries(static_cast<GLsizei>(2 * added), queries_.data() + 2 * size_t{pairs});
  for (uint32_t i = pairs + added; i-- > pairs;) free_.push_back(i);
  return true;
}

void GlContextTiming::collect() { collect_spans(false); }

void GlContextTiming::collect_spans(bool wait) {
  GLint bound = 0;
  bool checked = false;
  while (!pending_.empty()) {
    Pending& p = pending_.front();
    if (p.pair >= 0) {
      // Results are written into a buffer bound to GL_QUERY_BUFFER instead of
      // to the pointer: unbind the program's around the reads.
      if (query_buffer_ && !checked) {
        gl_.GetIntegerv(GL_QUERY_BUFFER_BINDING, &bound);
        if (bound != 0) gl_.BindBuffer(GL_QUERY_BUFFER, 0);
        checked = true;
      }
      const GLuint begin_q = queries_[2 * p.pair];
      const GLuint end_q = queries_[2 * p.pair + 1];
      auto available = [&](GLuint q) {
        GLuint ready = 0;
        gl_.GetQueryObjectuiv(q, GL_QUERY_RESULT_AVAILABLE, &ready);
        return ready != 0;
      };
      // Not ready: later swaps read it (finish waits for it instead).
      if (!wait && !(available(end_q) && available(begin_q))) break;
      GLuint64 b = 0;
      GLuint64 e = 0;
      gl_.GetQueryObjectui64v(begin_q, GL_QUERY_RESULT, &b);
      gl_.GetQueryObjectui64v(end_q, GL_QUERY_RESULT, &e);
      p.submit.gpu_begin = fit_->map(b & ticks_.mask()).host_ns;
      p.submit.gpu_end = fit_->map(e & ticks_.mask()).host_ns;
      free_.push_back(static_cast<uint32_t>(p.pair));
      p.pair = -1;
    }
    if (p.awaiting && !take_outcome(p, host_now_ns(), wait)) break;
    emit(p);
    pending_.pop_front();
  }
  if (bound != 0) gl_.BindBuffer(GL_QUERY_BUFFER, static_cast<GLuint>(bound));
  // Outcomes of frames sent already (late) have no use.
  const uint64_t oldest = pending_.empty() ? frame_index_ : pending_.front().frame.frame;
  while (!outcomes_.empty() && outcomes_.begin()->first < oldest)
    outcomes_.erase(outcomes_.begin());
}

void GlContextTiming::emit(Pending& p) {
  fill_gpu_figures(p.frame, std::span<const SubmitRecord>(&p.submit, 1));
  p.frame.gpu_busy_ns = kNoTime;  // not measured on GL (see probe's gpu_busy)
  sink_(source_, p.submit);
  sink_(source_, p.frame);
  ++submits_sent_;
  ++frames_sent_;
}

void GlContextTiming::finish(bool current) {
  if (finished_) return;
  finished_ = true;
  // The program is done with the context: waiting for its last spans costs
  // it nothing now, and a fast program has many in flight.
  if (current && can_time_) collect_spans(true);
  for (auto& p : pending_) {
    if (p.pair >= 0) {
      p.submit.no_span = NoSpan::not_read;
      free_.push_back(static_cast<uint32_t>(p.pair));
      p.pair = -1;
    }
    if (p.awaiting) take_outcome(p, host_now_ns(), true);
    emit(p);
  }
  outcomes_.clear();
  pending_.clear();
  EndRecord end;
  end.frames = frames_sent_;
  end.submits = submits_sent_;
  sink_(source_, end);
}

}  // namespace latlab::capture::glcap
