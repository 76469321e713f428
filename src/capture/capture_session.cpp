// run_capture (include/latlab/bench/capture_session.hpp): the child, the
// record socket, the poll loop and the stop rules.
#include "latlab/bench/capture_session.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "capture/capture_assembly.hpp"
#include "capture/capture_attach.hpp"
#include "capture/capture_pipeline.hpp"
#include "capture/capture_records.hpp"
#include "capture/input_session.hpp"
#include "capture/span_budget.hpp"
#include "capture/x11_damage_observer.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {
namespace {

using capture::kNoTime;

// SIGINT/SIGTERM to latlab: how many came, the first one, and whether the
// first came from the terminal (the tty sends it to the whole foreground
// process group: the program got it too).
std::atomic<int> g_signals{0};
std::atomic<int> g_first_signal{0};
std::atomic<bool> g_first_from_terminal{false};
extern "C" void on_capture_signal(int sig, siginfo_t* info, void*) {
  int none = 0;
  if (g_first_signal.compare_exchange_strong(none, sig))
    g_first_from_terminal.store(info != nullptr && info->si_code == SI_KERNEL);
  g_signals.fetch_add(1);
}

// After the first interrupt latlab waits this long for the program to end
// before it reports the result (and goes on waiting).
constexpr int64_t kInterruptWaitNs = 5'000'000'000;
// After the program ended with the socket still held by processes it
// started, latlab reads this long for their sources to say hello, then as
// long as one of them runs.
constexpr int64_t kOrphanGraceNs = 1'000'000'000;
// Signals this close to the first are the same interrupt: `timeout` sends
// its signal to latlab and then to its whole process group.
constexpr int64_t kSameInterruptNs = 300'000'000;

// The session's handlers for SIGINT and SIGTERM, the previous ones back on
// destruction (and in the child, before it runs the program).
class SignalScope {
 public:
  SignalScope() {
    g_signals.store(0);
    g_first_signal.store(0);
    g_first_from_terminal.store(false);
    struct sigaction sa {};
    sa.sa_sigaction = on_capture_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SignalScope() { restore(); }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;
  void restore() const {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

std::string comm_of(uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

capture::ProgramEnd decode(int status) {
  capture::ProgramEnd e;
  e.exited = true;
  if (WIFEXITED(status)) {
    e.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
    e.exit_code = 128 + e.signal;
  }
  return e;
}

class Session {
 public:
  Session(const CapturePlan& plan, const CaptureHooks& hooks) : plan_(plan), hooks_(hooks) {
    facts_.plan = &plan_;
    records_->program_name = std::filesystem::path(plan.program.front()).filename().string();
  }

  CaptureEnd run();

 private:
  void say(const std::string& line) const {
    if (hooks_.info) hooks_.info(line);
  }
  bool drain(int fd);
  void on_record();
  void advance();
  void watch_new_windows();
  bool watch_window(uint64_t window, const std::string& display);
  void on_interrupt();
  void report();
  void poll_until_exit(int fd);
  bool sources_outlive_program() const;
  std::vector<capture::CaptureRowSink*> row_sinks() const {
    std::vector<capture::CaptureRowSink*> sinks = hooks_.row_sinks;
    if (input_) sinks.push_back(input_.get());
    return sinks;
  }
  [[noreturn]] void run_child(int fd, const capture::Attachments& a, const SignalScope& s) const;

  const CapturePlan& plan_;
  const CaptureHooks& hooks_;
  capture::SessionFacts facts_;
  std::shared_ptr<capture::CaptureRecords> records_ = std::make_shared<capture::CaptureRecords>();
  capture::CaptureStream& stream_ = records_->stream;
  // --input: started before the program (to see its window mapped); a row
  // sink of the pipeline.
  std::unique_ptr<capture::InputSession> input_ =
      plan_.input ? std::make_unique<capture::InputSession>(*plan_.input, hooks_.input_sinks)
                  : nullptr;
  capture::CapturePipeline pipeline_{*records_, row_sinks()};
  uint64_t frames_seen_ = 0;
  size_t sources_seen_ = 0;
  size_t windows_seen_ = 0;
  int64_t first_frame_ns_ = kNoTime;
  int64_t interrupted_at_ = kNoTime;
  bool reported_ = false;
  bool program_ended_ = false;  // reaped: its pid may name another process now
  int64_t ended_at_ = kNoTime;
  int report_status_ = 0;
  // The X11 screen observer, started at the first window record.
  std::unique_ptr<capture::X11DamageObserver> screen_;
};

// Receives every datagram waiting on `fd`; false once the socket is closed.
bool Session::drain(int fd) {
  // The stream holds records until advance() takes them: a flood of them
  // goes to the pipeline every kAdvanceEvery records.
  constexpr uint64_t kAdvanceEvery = 1024;
  alignas(8) std::byte buf[capture::kMaxRecordSize * 2];
  for (uint64_t received = 1;; ++received) {
    const ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
    if (n == 0) return false;
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    if (!facts_.recording) continue;
    const size_t len = std::min(static_cast<size_t>(n), sizeof(buf));
    stream_.add(std::span<const std::byte>(buf, len));
    on_record();
    if (received % kAdvanceEvery == 0 && !reported_) advance();
  }
}

// Hands what came to the pipeline and releases the rows that are final.
void Session::advance() {
  const int64_t now = host_now_ns();
  // Markers before frames and changes: an input is there before the rows
  // that may take it.
  if (input_) {
    if (const auto w = input_->poll(now)) watch_window(*w, "");
  }
  pipeline_.take(stream_);
  if (screen_) {
    const auto events = screen_->take_events();
    if (input_) input_->add_damage(events);
    pipeline_.add_screen_events(events);
  }
  pipeline_.release(now);
  if (input_) input_->release(now);
}

void Session::on_record() {
  for (; sources_seen_ < stream_.sources().size(); ++sources_seen_) {
    const uint32_t pid = stream_.sources()[sources_seen_].pid;
    auto& names = records_->process_names;
    if (std::none_of(names.begin(), names.end(), [&](const auto& n) { return n.first == pid; })) {
      if (std::string comm = comm_of(pid); !comm.empty()) names.emplace_back(pid, comm);
    }
  }
  if (stream_.windows().size() > windows_seen_) watch_new_windows();
  if (stream_.frames_received() > frames_seen_) {
    frames_seen_ = stream_.frames_received();
    if (first_frame_ns_ == kNoTime) first_frame_ns_ = host_now_ns();
    if (plan_.frames > 0 && frames_seen_ >= plan_.frames) {
      facts_.recording = false;
      facts_.stopped_by = "frames";
    }
  }
}

// Watches the windows the program's sources reported since the last call.
void Session::watch_new_windows() {
  const auto& windows = stream_.windows();
  for (; windows_seen_ < windows.size(); ++windows_seen_) {
    const auto& w = windows[windows_seen_];
    if (watch_window(w.window, w.display) && input_) input_->source_window(w.window);
  }
}

// The screen observer watches `window` (started at the first); false when
// it cannot (no observer, another display, the window is gone).
bool Session::watch_window(uint64_t window, const std::string& display) {
  if (std::any_of(facts_.watched.begin(), facts_.watched.end(),
                  [&](const capture::WatchedWindow& x) { return x.window == window; }))
    return true;
  if (!screen_ && facts_.screen_why.empty()) {
    auto o = capture::X11DamageObserver::create(display);
    if (o) {
      screen_ = std::move(*o);
      facts_.screen_display = screen_->display();
    } else {
      facts_.screen_why = o.error().message;
    }
  }
  if (!screen_) return false;
  if (!display.empty() && display != screen_->display()) return false;  // one display
  if (auto since = screen_->watch(window)) {
    facts_.watched.push_back({window, *since});
    pipeline_.watch(facts_.watched.back());
    return true;
  } else if (facts_.watched.empty()) {
    facts_.screen_why = since.error().message;
  }
  return false;
}

// SIGINT or SIGTERM came: the first stops the recording and passes the
// signal on (unless the terminal sent it to the program too); a later one
// (not within kSameInterruptNs) kills the program.
void Session::on_interrupt() {
  const int64_t now = host_now_ns();
  const int sig = g_first_signal.load();
  const auto pid = static_cast<pid_t>(facts_.pid);
  const std::string name = capture::signal_name(sig);
  if (interrupted_at_ == kNoTime) {
    interrupted_at_ = now;
    facts_.interrupt = sig;
    if (facts_.recording) facts_.stopped_by = "signal";
    facts_.recording = false;
    const bool from_terminal = g_first_from_terminal.load();
    if (!from_terminal && !program_ended_) {
      kill(pid, sig);
      facts_.signal_sent = sig;
    }
    say(name + ": recording stopped; " +
        (from_terminal ? std::string("the program got it from the terminal too")
                       : name + " passed on to the program (pid " + std::to_string(pid) + ")") +
        "; waiting up to " + std::to_string(kInterruptWaitNs / 1'000'000'000) +
        " s for it to end (interrupt again to kill it)");
    return;
  }
  if (now - interrupted_at_ < kSameInterruptNs || facts_.signal_sent == SIGKILL || program_ended_)
    return;
  kill(pid, SIGKILL);
  facts_.signal_sent = SIGKILL;
  say("interrupted again: the program (pid " + std::to_string(pid) + ") was killed");
}

// Releases every row, assembles the result and hands it to the reporters.
void Session::report() {
  reported_ = true;
  // The updates of the last presents reach the server a frame or so later.
  if (input_) input_->stop();
  if (screen_) screen_->stop(100'000'000);
  pipeline_.take(stream_);
  if (screen_) {
    const auto events = screen_->take_events();
    if (input_) input_->add_damage(events);
    pipeline_.add_screen_events(events);
  }
  pipeline_.finish(stream_, records_->summary, records_->screen);
  if (input_) input_->finish(records_->summary.frame_count > 0);
  records_->peak_rows_held = pipeline_.peak_rows_held();
  records_->peak_events_held = pipeline_.peak_events_held();
  CaptureOutcome out;
  out.capture = capture::assemble_capture(facts_, stream_, records_->summary, records_->screen);
  if (input_) input_->add_to(out.capture);
  out.records = records_;
  if (hooks_.report) report_status_ = hooks_.report(out);
}

static_assert(kDefaultGpuSpanBudgetPercent == capture::kDefaultSpanBudgetPercent,
              "the plan's default is the layer's");

// The layer's span budget (span_budget.hpp), in the child before exec: the
// plan's setting wins over one in the environment.
void set_span_budget_environment(const std::optional<double>& percent) {
  char value[32] = "all";
  if (percent) std::snprintf(value, sizeof value, "%g", *percent);
  setenv(capture::kGpuSpansEnv, value, 1);
}

void Session::run_child(int fd, const capture::Attachments& a, const SignalScope& s) const {
  s.restore();
  const int child_fd = fcntl(fd, F_DUPFD, 3);  // without CLOEXEC: it survives exec
  capture::set_child_environment(a, child_fd);
  set_span_budget_environment(plan_.gpu_span_budget_percent);
  if (plan_.program_stdout_to_stderr) dup2(STDERR_FILENO, STDOUT_FILENO);
  if (hooks_.child_main) _exit(hooks_.child_main());
  std::vector<char*> argv;
  for (const auto& arg : plan_.program) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "latlab capture: cannot run '%s': %s\n", argv[0], std::strerror(errno));
  _exit(127);
}

// Whether `pid` has ended, without reaping it.
bool has_exited(pid_t pid) {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

// Reads records, applies the stop rules and interrupts, and reports once
// the recording stopped, until the program (facts_.pid) ended.
void Session::poll_until_exit(int fd) {
  const auto pid = static_cast<pid_t>(facts_.pid);
  bool socket_open = true;
  int signals_seen = 0;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (socket_open) poll(&p, 1, 50);
    if (socket_open) socket_open = drain(fd);
    // Closed, usually as the program ended: then waitpid below reaps it now.
    if (!socket_open && !program_ended_ && !has_exited(pid)) usleep(20'000);
    if (!reported_) advance();
    if (const int n = g_signals.load(); n != signals_seen) {
      signals_seen = n;
      on_interrupt();
    }
    // --seconds counts from the first frame, or the first input's schedule.
    const int64_t t0 = first_frame_ns_ != kNoTime ? first_frame_ns_
                       : input_                   ? input_->started_at()
                                                  : kNoTime;
    if (facts_.recording && plan_.seconds > 0 && t0 != kNoTime &&
        static_cast<double>(host_now_ns() - t0) >= plan_.seconds * 1e9) {
      facts_.recording = false;
      facts_.stopped_by = "seconds";
    }
    if (facts_.recording && input_ && input_->done(host_now_ns())) {
      facts_.recording = false;
      facts_.stopped_by = "inputs";
    }
    // Interrupted: reported once the program ended, or after the wait.
    const bool waited =
        interrupted_at_ == kNoTime || host_now_ns() - interrupted_at_ >= kInterruptWaitNs;
    if (!facts_.recording && !reported_ && waited) {
      if (plan_.terminate && !facts_.signal_sent && !program_ended_) {
        kill(pid, SIGTERM);  // before reporting: the result says it was sent
        facts_.signal_sent = SIGTERM;
      }
      report();
      if (interrupted_at_ != kNoTime) {
        say("the program (pid " + std::to_string(pid) + ") still runs " +
            std::to_string(kInterruptWaitNs / 1'000'000'000) +
            " s after the interrupt; latlab waits for it (interrupt again to kill it)");
      }
    }
    if (program_ended_) {
      // Following sources of its descendants: until they end or close the
      // socket, or the recording stops.
      if (!socket_open || !facts_.recording) break;
      if (host_now_ns() - ended_at_ >= kOrphanGraceNs && !sources_outlive_program()) break;
      continue;
    }
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      facts_.end = decode(status);
      program_ended_ = true;
      ended_at_ = host_now_ns();
      if (!socket_open || !facts_.recording) break;
      say("the program (pid " + std::to_string(pid) +
          ") ended and processes it started still hold the record socket: recording goes on "
          "while frame sources among them run (interrupt to stop)");
    }
  }
}

// Whether a source of another process than the program's sent no end
// record and its process still runs (an orphan: `sh -c 'vkcube &'`).
bool Session::sources_outlive_program() const {
  return std::any_of(stream_.sources().begin(), stream_.sources().end(),
                     [&](const capture::CapturedSource& s) {
                       return !s.ended && s.pid != facts_.pid &&
                              (kill(static_cast<pid_t>(s.pid), 0) == 0 || errno == EPERM);
                     });
}

CaptureEnd Session::run() {
  CaptureEnd end;
  // Each API's attachment is optional: a missing one is said, listed
  // unavailable in the result, and the other still captures.
  const capture::Attachments attach = capture::find_attachments();
  facts_.not_attached = attach.missing;
  for (const auto& [name, why] : attach.missing) say(why);
  if (attach.missing.size() == 2) {
    end.start = CaptureStart::nothing_to_attach;
    end.why = "nothing to attach";
    return end;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    end.start = CaptureStart::failed;
    end.why = std::string("socketpair: ") + std::strerror(errno);
    return end;
  }
  const int size = 4 << 20;  // as much as the system lets (net.core.wmem_max caps it)
  setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
  setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
  const SignalScope signals;
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    end.start = CaptureStart::failed;
    end.why = std::string("fork: ") + std::strerror(errno);
    close(sv[0]);
    close(sv[1]);
    return end;
  }
  if (pid == 0) run_child(sv[1], attach, signals);
  close(sv[1]);
  facts_.pid = pid;
  if (input_) input_->set_program(pid);
  poll_until_exit(sv[0]);
  // The program is gone: what it sent is still queued (its children may keep
  // the socket open, so read what is there and stop).
  drain(sv[0]);
  close(sv[0]);
  if (facts_.end.exit_code == 127 && stream_.sources().empty() && frames_seen_ == 0)
    facts_.end.not_started = true;
  if (!reported_) report();
  end.exit_code = facts_.end.exit_code;
  end.report_status = report_status_;
  return end;
}

}  // namespace

CaptureEnd run_capture(const CapturePlan& plan, const CaptureHooks& hooks) {
  return Session(plan, hooks).run();
}

}  // namespace latlab
