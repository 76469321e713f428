// latlab capture [--out R.json] [--frames-csv F.csv] [--frames N | --seconds S]
//                [--terminate] -- PROGRAM ARGS...
// Runs PROGRAM with latlab's frame sources attached (the Vulkan layer
// VK_LAYER_LATLAB_capture, enabled for the child only) and writes a result
// of kind "capture" (docs/capture.md, docs/result-schema.md). The program's
// standard streams are its own; latlab's messages go to stderr.
//
// Stopping: --frames N / --seconds S (counted from the first frame) stop the
// recording; the result is written then, and the program goes on untouched
// until it exits (as PresentMon's --timed and MangoHud's log duration do);
// with --terminate latlab sends it SIGTERM instead. The first SIGINT or
// SIGTERM to latlab stops the recording and is passed on to the program
// (unless the terminal sent it to the program too); latlab waits up to 5 s
// for it, then writes what was captured, partial; a second one kills it.
//
// Exit code: the program's (128 + signal when a signal ended it, e.g. 130
// after Ctrl-C, 137 after a second; 127 when it could not be started); 2 bad
// usage, 3 the layer is not found; 4 the result could not be written (when
// the program itself exited 0).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "capture/capture_stream.hpp"
#include "capture/screen_observer.hpp"
#include "capture/x11_damage_observer.hpp"
#include "cli_app.hpp"
#include "cli_checks.hpp"
#include "command.hpp"
#include "core/output_file.hpp"
#include "file_plan.hpp"
#include "latlab/bench/latency_report.hpp"
#include "latlab/bench/run_result.hpp"
#include "latlab/host_clock.hpp"
#include "report/capture_overhead.hpp"
#include "report/result_json.hpp"

#ifndef LATLAB_CAPTURE_BUILD_LAYER_DIR
#define LATLAB_CAPTURE_BUILD_LAYER_DIR ""
#endif
#ifndef LATLAB_CAPTURE_BUILD_GL_DIR
#define LATLAB_CAPTURE_BUILD_GL_DIR ""
#endif

namespace latlab::cli {
namespace {

using json = nlohmann::ordered_json;
using capture::kNoTime;

struct CaptureOptions {
  std::string out;
  std::string frames_csv;
  std::string submits_csv;
  uint64_t frames = 0;   // 0: no frame limit
  double seconds = 0.0;  // 0: no time limit
  bool terminate = false;
  std::vector<std::string> program;
  std::string command_line;
};

// SIGINT/SIGTERM to latlab: how many came, the first one, and whether the
// first came from the terminal (the tty sends it to the whole foreground
// process group: the program got it too).
std::atomic<int> g_signals{0};
std::atomic<int> g_first_signal{0};
std::atomic<bool> g_first_from_terminal{false};
extern "C" void on_signal(int sig, siginfo_t* info, void*) {
  int none = 0;
  if (g_first_signal.compare_exchange_strong(none, sig))
    g_first_from_terminal.store(info != nullptr && info->si_code == SI_KERNEL);
  g_signals.fetch_add(1);
}

// After the first interrupt latlab waits this long for the program to end
// before it writes the result (and goes on waiting).
constexpr int64_t kInterruptWaitNs = 5'000'000'000;
// Signals this close to the first are the same interrupt: `timeout` sends
// its signal to latlab and then to its whole process group.
constexpr int64_t kSameInterruptNs = 300'000'000;

const char* kManifest = "VkLayer_latlab_capture.json";

// The folders to search for a capture file: only $env when it is set (an
// explicit choice, e.g. a packed copy, is never overridden), else the
// install tree beside this executable (../share/latlab/layers), then the
// build tree.
std::vector<std::filesystem::path> capture_dirs(const char* env, const char* build_dir) {
  namespace fs = std::filesystem;
  if (const char* e = std::getenv(env); e != nullptr && *e != '\0') return {fs::path(e)};
  std::vector<fs::path> dirs;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().parent_path() / "share" / "latlab" / "layers");
  if (*build_dir != '\0') dirs.emplace_back(build_dir);
  return dirs;
}

// Where the layer's manifest is, "" when no folder has it.
std::string find_layer_dir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto dirs = capture_dirs("LATLAB_CAPTURE_LAYER_DIR", LATLAB_CAPTURE_BUILD_LAYER_DIR);
  for (const auto& d : dirs) {
    if (fs::exists(d / kManifest, ec)) return d.string();
  }
  return {};
}

const char* kGlInterposer = "libLatlabGlCapture.so";

// The GL interposer's path, "" when no folder has it (a build without
// OpenGL).
std::string find_gl_interposer() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto dirs = capture_dirs("LATLAB_CAPTURE_GL_DIR", LATLAB_CAPTURE_BUILD_GL_DIR);
  for (const auto& d : dirs) {
    if (fs::exists(d / kGlInterposer, ec)) return fs::absolute(d / kGlInterposer, ec).string();
  }
  return {};
}

std::string prepend(const char* var, const std::string& value, char sep) {
  const char* old = std::getenv(var);
  return old == nullptr || *old == '\0' ? value : value + sep + old;
}

struct ProgramEnd {
  bool exited = false;  // waitpid saw it end
  int exit_code = 0;    // exit status, or 128 + signal
  int signal = 0;       // the signal that ended it (0: it exited)
  bool not_started = false;
};

struct CaptureRun {
  capture::CaptureStream stream;
  uint64_t frames_seen = 0;
  bool recording = true;
  std::string stopped_by = "program_exit";  // "frames", "seconds", "signal"
  int64_t first_frame_ns = kNoTime;
  ProgramEnd end;
  pid_t pid = -1;
  std::optional<int> signal_sent;  // the last signal latlab sent the program
  bool result_written = false;
  int write_status = kExitOk;
  // The X11 screen observer (started at the first window record).
  std::unique_ptr<capture::X11DamageObserver> screen;
  std::string screen_why;  // why it is unavailable ("" while it is not)
  std::vector<capture::WatchedWindow> watched;
  size_t windows_seen = 0;
  // What capture could not attach (its file is missing): name, reason.
  std::vector<std::pair<std::string, std::string>> not_attached;
};

// Whether capture attached `what` (its file was found).
bool attached(const CaptureRun& run, std::string_view what) {
  return std::none_of(run.not_attached.begin(), run.not_attached.end(),
                      [&](const auto& n) { return n.first == what; });
}

// Watches the windows the program's sources reported since the last call.
void watch_new_windows(CaptureRun& run) {
  const auto& windows = run.stream.windows();
  for (; run.windows_seen < windows.size(); ++run.windows_seen) {
    const auto& w = windows[run.windows_seen];
    if (std::any_of(run.watched.begin(), run.watched.end(),
                    [&](const capture::WatchedWindow& x) { return x.window == w.window; }))
      continue;
    if (!run.screen && run.screen_why.empty()) {
      auto o = capture::X11DamageObserver::create(w.display);
      if (o) {
        run.screen = std::move(*o);
      } else {
        run.screen_why = o.error().message;
      }
    }
    if (!run.screen) continue;
    if (!w.display.empty() && w.display != run.screen->display()) continue;  // one display
    if (auto since = run.screen->watch(w.window)) {
      run.watched.push_back({w.window, *since});
    } else if (run.watched.empty()) {
      run.screen_why = since.error().message;
    }
  }
}

// The observer's entry of the result: what it saw, or why it saw nothing.
CaptureScreenObserver screen_of(const CaptureRun& run, const capture::ScreenSummary& sc) {
  std::string why = run.screen_why;
  if (why.empty() && run.watched.empty())
    why =
        "no window known: the program's sources reported no X11 window (a surface other than "
        "xcb/xlib, a GL program, or the program presented nothing)";
  CaptureScreenObserver o;
  o.name = "x11_damage";
  o.observes =
      "DamageNotify (raw rectangles) for the program's window on its X server: when the "
      "server had executed the drawing of the new contents (host time latlab read the "
      "event); not scan-out, not light";
  o.available = why.empty();
  o.reason = why;
  if (run.screen) o.display = run.screen->display();
  for (const auto& w : run.watched) o.windows.push_back(w.window);
  o.frames_watched = sc.frames_watched;
  o.frames_matched = sc.frames_matched;
  o.events = sc.events;
  o.events_unmatched = sc.events_unmatched;
  o.figures = {{"until_screen_updated", sc.until_screen_updated}};
  return o;
}

NamedDistributions figures_of(const capture::CaptureSummary& s) {
  NamedDistributions f;
  for (size_t i = 0; i < capture::kFrameFigureCount; ++i)
    f.emplace_back(capture::to_string(static_cast<capture::FrameFigure>(i)), s.frame_figures[i]);
  return f;
}

NamedDistributions submit_figures_of(const capture::CaptureSummary& s) {
  NamedDistributions f;
  for (size_t i = 0; i < capture::kSubmitFigureCount; ++i)
    f.emplace_back(capture::to_string(static_cast<capture::SubmitFigure>(i)), s.submit_figures[i]);
  return f;
}

const char* api_name(capture::SourceApi a) {
  return a == capture::SourceApi::vulkan   ? "vulkan"
         : a == capture::SourceApi::opengl ? "opengl"
                                           : "unknown";
}

const char* signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

std::string partial_reason(const CaptureRun& run, const capture::CaptureStream& st) {
  std::vector<std::string> why;
  if (run.end.not_started) why.push_back("the program could not be started");
  if (run.end.signal != 0 && !(run.signal_sent && run.end.signal == *run.signal_sent))
    why.push_back("the program was ended by signal " + std::to_string(run.end.signal));
  if (run.stopped_by == "signal")
    why.push_back(std::string("latlab capture was interrupted (") +
                  signal_name(g_first_signal.load()) + ")");
  if (run.signal_sent == SIGKILL) why.push_back("latlab killed the program at a second interrupt");
  if (st.dropped() > 0)
    why.push_back(std::to_string(st.dropped()) + " records were dropped (the socket was full)");
  if (run.recording) {
    for (const auto& s : st.sources()) {
      if (!s.ended)
        why.push_back("a " + std::string(api_name(s.api)) + " source of pid " +
                      std::to_string(s.pid) +
                      " sent no end record (the program did not destroy its device, or died): "
                      "frames still being collected were lost");
    }
  }
  std::string out;
  for (const auto& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

CaptureStop stop_of(const CaptureOptions& o, const CaptureRun& run) {
  const auto& st = run.stream;
  CaptureStop c;
  c.stopped_by = run.stopped_by;
  if (o.frames > 0) c.frames_limit = o.frames;
  if (o.seconds > 0) c.seconds_limit = o.seconds;
  c.terminate = o.terminate;
  if (run.signal_sent) c.signal_sent = *run.signal_sent;
  c.records_dropped = st.dropped();
  c.records_malformed = st.malformed();
  c.records_unknown = st.unknown();
  return c;
}

// Why a capture holds no frame: an empty result says so, never only "0".
std::string no_frames_reason(const CaptureResult& c) {
  if (c.sources.empty()) {
    return "no frame: the program made no Vulkan device and no GL context that latlab's layer or "
           "interposer saw (it drew nothing, or loaded the API in a way latlab does not see)";
  }
  return "no frame: " + std::to_string(c.sources.size()) + " source" +
         (c.sources.size() == 1 ? "" : "s") + " attached but presented nothing (" +
         std::to_string(c.submits) + " submits seen: offscreen work has no frames)";
}

// The typed capture section (the JSON reporter writes it, docs/capture.md).
CaptureResult capture_result(const CaptureOptions& o, const CaptureRun& run,
                             const capture::CaptureSummary& s, const capture::ScreenSummary& sc) {
  const auto& st = run.stream;
  CaptureResult c;
  c.partial_reason = partial_reason(run, st);
  c.program = {
      o.program, run.pid, run.end.exited ? std::optional<int64_t>(run.end.exit_code) : std::nullopt,
      run.end.signal != 0 ? std::optional<int64_t>(run.end.signal) : std::nullopt, !run.end.exited};
  c.stop = stop_of(o, run);
  for (const auto& src : st.sources())
    c.sources.push_back({src.pid, api_name(src.api), src.device_name, src.clock_method,
                         src.source_name, src.present_method, src.ended});
  c.frames = s.frames.size();
  c.submits = s.submits;
  c.submits_without_work = s.submits_without_work;
  c.gpu_spans_missing = s.gpu_spans_missing;
  c.frames_with_missing_gpu = s.frames_with_missing_gpu;
  for (size_t i = 0; i < std::size(s.no_span_counts); ++i)
    c.submit_spans.emplace_back(capture::to_string(static_cast<capture::NoSpan>(i)),
                                s.no_span_counts[i]);
  const char* nc_names[] = {"measured", "unavailable", "dropped",   "failed",
                            "retired",  "late",        "not_tagged"};
  for (size_t i = 0; i < std::size(s.no_complete_counts); ++i)
    c.present_complete.emplace_back(nc_names[i], s.no_complete_counts[i]);
  c.figures = figures_of(s);
  c.submit_figures = submit_figures_of(s);
  c.layer_cpu_per_submit = s.submit_figures[static_cast<size_t>(capture::SubmitFigure::layer_cpu)];
  c.layer_cpu_per_present =
      s.frame_figures[static_cast<size_t>(capture::FrameFigure::layer_present_cpu)];
  c.overhead = capture::overhead_of(s, st.brackets());
  c.bracketing = capture::bracketing_of(st.brackets());
  for (const auto& [name, why] : run.not_attached) c.unavailable.push_back({name, why, run.pid});
  for (const auto& u : st.unavailable()) c.unavailable.push_back({u.name, u.reason, u.pid});
  if (c.frames == 0) c.unavailable.push_back({"frames", no_frames_reason(c), run.pid});
  c.screen_observers.push_back(screen_of(run, sc));
  return c;
}

json result_json(const CaptureOptions& o, const CaptureRun& run, const capture::CaptureSummary& s,
                 const capture::ScreenSummary& sc) {
  RunResult r;
  r.meta.command_line = o.command_line;
  r.meta.created_utc = utc_now_iso8601();
  r.meta.machine = collect_machine_info();
  r.capture = capture_result(o, run, s, sc);
  return run_result_to_json(r);
}

std::string frames_csv(const capture::CaptureSummary& s, const capture::ScreenSummary& sc) {
  std::string out =
      "pid,source,frame,swapchain,frame_start_ns,present_start_ns,present_end_ns,gpu_begin_ns,"
      "gpu_end_ns,present_complete_ns,submits,gpu_spans_missing,present_result";
  // gpu_busy_ns and acquire_wait_ns are figures below (each once, with the
  // figure's conditions), not raw columns.
  for (size_t i = 0; i < capture::kFrameFigureCount; ++i)
    out += std::string(",") + capture::to_string(static_cast<capture::FrameFigure>(i)) + "_ns";
  out += ",no_complete,screen_updated_ns,screen_server_ms\n";
  auto t = [](int64_t v) { return v == kNoTime ? std::string() : std::to_string(v); };
  for (size_t k = 0; k < s.frames.size(); ++k) {
    const auto& row = s.frames[k];
    const auto& f = row.record;
    out += std::to_string(row.pid) + ',' + std::to_string(f.head.source) + ',' +
           std::to_string(f.frame) + ',' + std::to_string(f.swapchain) + ',' + t(f.frame_start) +
           ',' + t(f.present_start) + ',' + t(f.present_end) + ',' + t(f.gpu_begin) + ',' +
           t(f.gpu_end) + ',' + t(f.present_complete) + ',' + std::to_string(f.submits) + ',' +
           std::to_string(f.gpu_spans_missing) + ',' + std::to_string(f.present_result);
    for (const auto& v : row.figures) out += ',' + (v ? std::to_string(*v) : std::string());
    const auto& seen = sc.per_frame[k];
    out += ',' + std::to_string(static_cast<uint32_t>(f.no_complete)) + ',' +
           (seen ? std::to_string(seen->host_ns) + ',' + std::to_string(seen->server_ms) : ",");
    out += '\n';
  }
  return out;
}

std::string submits_csv(const capture::CaptureStream& st) {
  std::string out =
      "pid,source,frame,queue_family,cpu_start_ns,cpu_end_ns,gpu_begin_ns,gpu_end_ns,"
      "layer_cpu_ns,batches,command_buffers,no_span,result\n";
  auto t = [](int64_t v) { return v == kNoTime ? std::string() : std::to_string(v); };
  for (const auto& r : st.submits()) {
    out += std::to_string(r.head.pid) + ',' + std::to_string(r.head.source) + ',' +
           std::to_string(r.frame) + ',' + std::to_string(r.queue_family) + ',' + t(r.cpu_start) +
           ',' + t(r.cpu_end) + ',' + t(r.gpu_begin) + ',' + t(r.gpu_end) + ',' +
           std::to_string(r.source_cpu_ns) + ',' + std::to_string(r.batches) + ',' +
           std::to_string(r.command_buffers) + ',' +
           std::to_string(static_cast<uint32_t>(r.no_span)) + ',' + std::to_string(r.result) + '\n';
  }
  return out;
}

int write_outputs(const CaptureOptions& o, CaptureRun& run) {
  run.result_written = true;
  const capture::CaptureSummary s = capture::summarize_capture(run.stream);
  // The updates of the last presents reach the server a frame or so later.
  if (run.screen) run.screen->stop(100'000'000);
  const std::vector<capture::ScreenEvent> events =
      run.screen ? run.screen->events() : std::vector<capture::ScreenEvent>{};
  const capture::ScreenSummary sc =
      capture::summarize_screen(s, run.stream.windows(), run.watched, events);
  int status = kExitOk;
  std::string written;  // the files written, for the console
  auto write = [&](const char* option, const std::string& path, const std::string& text) {
    if (path.empty()) return;
    if (auto r = write_output_file(path, text); !r) {
      std::fprintf(stderr, "latlab capture: cannot write %s: %s\n", option,
                   r.error().message.c_str());
      status = kExitWriteFailed;
      return;
    }
    written += (written.empty() ? "" : ", ") + (path == "-" ? std::string("stdout") : path);
  };
  if (!o.out.empty()) write("--out", o.out, result_json(o, run, s, sc).dump(2) + "\n");
  if (!o.frames_csv.empty()) write("--frames-csv", o.frames_csv, frames_csv(s, sc));
  if (!o.submits_csv.empty()) write("--submits-csv", o.submits_csv, submits_csv(run.stream));
  const auto& bp = s.frame_figures[static_cast<size_t>(capture::FrameFigure::between_presents)];
  char bp_p50[64] = "n/a";
  if (!bp.empty()) std::snprintf(bp_p50, sizeof bp_p50, "%.1f us", bp.p50);
  const std::string why_missing = capture::missing_span_reasons(s);
  std::fprintf(stderr,
               "latlab capture: %zu frames, %llu submits, %llu GPU spans missing%s%s%s, %llu "
               "records dropped; between presents p50 %s\n",
               s.frames.size(), static_cast<unsigned long long>(s.submits),
               static_cast<unsigned long long>(s.gpu_spans_missing),
               why_missing.empty() ? "" : " (", why_missing.c_str(), why_missing.empty() ? "" : ")",
               static_cast<unsigned long long>(run.stream.dropped()), bp_p50);
  if (const auto ov = capture::overhead_of(s, run.stream.brackets()); ov.layer_cpu_per_frame_us) {
    char driver[128] = "; no estimate of the driver's share (no bracketing probe)";
    if (ov.driver_cpu_per_frame_us)
      std::snprintf(driver, sizeof driver,
                    ", about %.1f us in the driver for its command buffers (bracketing probe)",
                    *ov.driver_cpu_per_frame_us);
    std::fprintf(stderr,
                 "latlab capture: latlab's CPU in the program per frame: %.1f us its own (%.1f us "
                 "in %u latlab threads)%s\n",
                 *ov.layer_cpu_per_frame_us, *ov.threads_cpu_per_frame_us, ov.threads, driver);
  }
  if (!run.watched.empty()) {
    std::fprintf(stderr, "latlab capture: X11 damage observer: %llu of %llu frames seen updated\n",
                 static_cast<unsigned long long>(sc.frames_matched),
                 static_cast<unsigned long long>(sc.frames_watched));
  }
  if (run.stream.sources().empty()) {
    std::fprintf(stderr,
                 "latlab capture: no source reported: %s; %s (docs/capture.md says which "
                 "programs it cannot see)\n",
                 attached(run, "vulkan_layer")
                     ? "the program made no Vulkan device, or the Vulkan loader did not load "
                       "VK_LAYER_LATLAB_capture (VK_LOADER_DEBUG=layer shows its search)"
                     : "the Vulkan layer was not attached (its manifest is missing)",
                 attached(run, "gl_interposer")
                     ? "the program swapped no GLX or EGL buffers the GL interposer saw"
                     : "the GL interposer was not attached (its library is missing)");
  } else {
    size_t vk = 0;
    size_t gl = 0;
    for (const auto& src : run.stream.sources()) {
      if (src.api == capture::SourceApi::opengl) {
        ++gl;
      } else {
        ++vk;
      }
    }
    std::string apis;
    if (vk > 0) apis += "vulkan (" + std::to_string(vk) + " device" + (vk > 1 ? "s)" : ")");
    if (gl > 0)
      apis += (apis.empty() ? "" : ", ") + std::string("opengl (") + std::to_string(gl) +
              " context" + (gl > 1 ? "s)" : ")");
    std::fprintf(stderr, "latlab capture: reported by %s\n", apis.c_str());
  }
  const std::string partial = partial_reason(run, run.stream);
  if (!written.empty()) std::fprintf(stderr, "latlab capture: wrote %s\n", written.c_str());
  if (o.out.empty()) std::fprintf(stderr, "latlab capture: no --out: the result was not saved\n");
  if (!partial.empty()) std::fprintf(stderr, "latlab capture: partial: %s\n", partial.c_str());
  return status;
}

// Receives every datagram waiting on `fd`; false once the socket is closed.
bool drain(int fd, const CaptureOptions& o, CaptureRun& run) {
  alignas(8) std::byte buf[capture::kMaxRecordSize * 2];
  for (;;) {
    const ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
    if (n == 0) return false;
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    if (!run.recording) continue;
    const size_t len = std::min(static_cast<size_t>(n), sizeof(buf));
    run.stream.add(std::span<const std::byte>(buf, len));
    if (run.stream.windows().size() > run.windows_seen) watch_new_windows(run);
    if (run.stream.frames().size() > run.frames_seen) {
      run.frames_seen = run.stream.frames().size();
      if (run.first_frame_ns == kNoTime) run.first_frame_ns = host_now_ns();
      if (o.frames > 0 && run.frames_seen >= o.frames) {
        run.recording = false;
        run.stopped_by = "frames";
      }
    }
  }
}

ProgramEnd decode(int status) {
  ProgramEnd e;
  e.exited = true;
  if (WIFEXITED(status)) {
    e.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
    e.exit_code = 128 + e.signal;
  }
  return e;
}

// SIGINT or SIGTERM came (run.pid is the program): the first stops the
// recording and passes the signal on (unless the terminal sent it to the
// program too); a later one (not within kSameInterruptNs) kills the program.
void on_interrupt(CaptureRun& run, int64_t& interrupted_at) {
  const int64_t now = host_now_ns();
  const int sig = g_first_signal.load();
  if (interrupted_at == kNoTime) {
    interrupted_at = now;
    if (run.recording) run.stopped_by = "signal";
    run.recording = false;
    const bool from_terminal = g_first_from_terminal.load();
    if (!from_terminal) {
      kill(run.pid, sig);
      run.signal_sent = sig;
    }
    std::fprintf(stderr,
                 "latlab capture: %s: recording stopped; %s; waiting up to %.0f s for it to end "
                 "(interrupt again to kill it)\n",
                 signal_name(sig),
                 from_terminal ? "the program got it from the terminal too"
                               : (std::string(signal_name(sig)) +
                                  " passed on to the program (pid " + std::to_string(run.pid) + ")")
                                     .c_str(),
                 static_cast<double>(kInterruptWaitNs) / 1e9);
    return;
  }
  if (now - interrupted_at < kSameInterruptNs || run.signal_sent == SIGKILL) return;
  kill(run.pid, SIGKILL);
  run.signal_sent = SIGKILL;
  std::fprintf(stderr, "latlab capture: interrupted again: the program (pid %d) was killed\n",
               static_cast<int>(run.pid));
}

int capture_main(CaptureOptions& o) {
  // Each API's attachment is optional: a missing one is said, listed
  // unavailable in the result, and the other still captures.
  CaptureRun run;
  const std::string layer_dir = find_layer_dir();
  if (layer_dir.empty()) {
    run.not_attached.emplace_back(
        "vulkan_layer", std::string("the layer's manifest ") + kManifest +
                            " is not installed beside latlab (../share/latlab/layers) nor in the "
                            "build tree (set LATLAB_CAPTURE_LAYER_DIR to its folder): Vulkan "
                            "programs are not captured");
  }
  const std::string gl_interposer = find_gl_interposer();
  if (gl_interposer.empty()) {
    run.not_attached.emplace_back(
        "gl_interposer", std::string("the GL interposer ") + kGlInterposer +
                             " is not installed beside latlab nor in the build tree (set "
                             "LATLAB_CAPTURE_GL_DIR to its folder): OpenGL programs are not "
                             "captured");
  }
  for (const auto& [name, why] : run.not_attached)
    std::fprintf(stderr, "latlab capture: %s\n", why.c_str());
  if (run.not_attached.size() == 2) {
    std::fprintf(stderr, "latlab capture: nothing to attach\n");
    return kExitMissingCapability;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    std::fprintf(stderr, "latlab capture: socketpair: %s\n", std::strerror(errno));
    return kExitRunFailed;
  }
  const int size = 4 << 20;  // as much as the system lets (net.core.wmem_max caps it)
  setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
  setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {
  }, old_term{};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    std::fprintf(stderr, "latlab capture: fork: %s\n", std::strerror(errno));
    return kExitRunFailed;
  }
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    const int child_fd = fcntl(sv[1], F_DUPFD, 3);  // without CLOEXEC: it survives exec
    setenv(capture::kCaptureFdEnv, std::to_string(child_fd).c_str(), 1);
    if (!layer_dir.empty()) {
      setenv("VK_ADD_LAYER_PATH", prepend("VK_ADD_LAYER_PATH", layer_dir, ':').c_str(), 1);
      // Loaders before VK_ADD_LAYER_PATH (Debian 12's 1.3.239 among them)
      // search only VK_LAYER_PATH when it is set.
      if (const char* lp = std::getenv("VK_LAYER_PATH"); lp != nullptr && *lp != '\0')
        setenv("VK_LAYER_PATH", prepend("VK_LAYER_PATH", layer_dir, ':').c_str(), 1);
      setenv("VK_INSTANCE_LAYERS",
             prepend("VK_INSTANCE_LAYERS", "VK_LAYER_LATLAB_capture", ':').c_str(), 1);
    }
    // The GL interposer before the preloads already there: another
    // interposer (MangoHud) calls the driver's swap itself, so one listed
    // first would hide every swap from latlab's; first, latlab's wrapper
    // forwards to theirs.
    if (!gl_interposer.empty())
      setenv("LD_PRELOAD", prepend("LD_PRELOAD", gl_interposer, ':').c_str(), 1);
    // --out -: the result is latlab's stdout; the program's goes to stderr.
    if (o.out == "-") dup2(STDERR_FILENO, STDOUT_FILENO);
    std::vector<char*> argv;
    for (auto& a : o.program) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "latlab capture: cannot run '%s': %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  close(sv[1]);
  run.pid = pid;
  bool socket_open = true;
  int signals_seen = 0;
  int64_t interrupted_at = kNoTime;
  for (;;) {
    pollfd p{sv[0], POLLIN, 0};
    if (socket_open) poll(&p, 1, 50);
    if (socket_open) socket_open = drain(sv[0], o, run);
    if (!socket_open) usleep(20'000);
    if (const int n = g_signals.load(); n != signals_seen) {
      signals_seen = n;
      on_interrupt(run, interrupted_at);
    }
    if (run.recording && o.seconds > 0 && run.first_frame_ns != kNoTime &&
        static_cast<double>(host_now_ns() - run.first_frame_ns) >= o.seconds * 1e9) {
      run.recording = false;
      run.stopped_by = "seconds";
    }
    // Interrupted: written once the program ended, or after the wait.
    const bool waited =
        interrupted_at == kNoTime || host_now_ns() - interrupted_at >= kInterruptWaitNs;
    if (!run.recording && !run.result_written && waited) {
      if (o.terminate && !run.signal_sent) {
        kill(pid, SIGTERM);  // before writing: the result says it was sent
        run.signal_sent = SIGTERM;
      }
      run.write_status = write_outputs(o, run);
      if (interrupted_at != kNoTime) {
        std::fprintf(stderr,
                     "latlab capture: the program (pid %d) still runs %.0f s after the interrupt; "
                     "latlab waits for it (interrupt again to kill it)\n",
                     static_cast<int>(pid), static_cast<double>(kInterruptWaitNs) / 1e9);
      }
    }
    int status = 0;
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      run.end = decode(status);
      break;
    }
  }
  // The program is gone: what it sent is still queued (its children may keep
  // the socket open, so read what is there and stop).
  drain(sv[0], o, run);
  close(sv[0]);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (run.end.exit_code == 127 && run.stream.sources().empty() && run.frames_seen == 0)
    run.end.not_started = true;
  if (!run.result_written) run.write_status = write_outputs(o, run);
  if (run.end.exit_code == 0 && run.write_status != kExitOk) return run.write_status;
  return run.end.exit_code;
}

// --seconds: from 1 ms to 1e6 s (11.6 days).
constexpr double kMinSeconds = 1e-3;
constexpr double kMaxSeconds = 1e6;

CommandRunner setup(CLI::App& app) {
  auto o = std::make_shared<CaptureOptions>();
  CLI::App* sub = app.add_subcommand(
      "capture", "Run a program with latlab attached and capture its frames (docs/capture.md)");
  sub->add_option("--out", o->out, "Result JSON (kind \"capture\"); '-' for stdout");
  sub->add_option("--frames-csv", o->frames_csv, "Per-frame CSV (ns on CLOCK_MONOTONIC)");
  sub->add_option("--submits-csv", o->submits_csv,
                  "Per-submission CSV (ns on CLOCK_MONOTONIC; no_span: docs/capture.md)");
  auto* frames = sub->add_option("--frames", o->frames, "Stop recording after N frames");
  auto* seconds =
      sub->add_option("--seconds", o->seconds, "Stop recording S seconds after the first frame");
  frames->excludes(seconds);
  frames->transform(unsigned_in(1, 1'000'000'000));
  seconds->check(real_in(kMinSeconds, kMaxSeconds));
  sub->add_flag("--terminate", o->terminate,
                "Send the program SIGTERM once --frames/--seconds stopped the recording "
                "(default: let it run to its end)");
  sub->add_option("program", o->program, "-- PROGRAM ARGS...")->required()->expected(-1);
  return {[o, sub] {
            FilePlan files;
            files.output("--out", o->out);
            files.output("--frames-csv", o->frames_csv);
            files.output("--submits-csv", o->submits_csv);
            if (auto r = files.check(); !r) {
              std::fprintf(stderr, "latlab capture: %s\n", r.error().message.c_str());
              return static_cast<int>(kExitUsage);
            }
            (void)sub;
            o->command_line = own_command_line();
            return static_cast<int>(kExitOk);
          },
          [o] { return capture_main(*o); }};
}

const RegisterCommand kRegister{{"capture", setup, 15}};

}  // namespace
}  // namespace latlab::cli
