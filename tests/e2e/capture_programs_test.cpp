// `latlab capture` on programs as users run them: GL programs
// that load GL themselves (glmark2, glmark2-es2: dlopen + dlsym), another
// interposer preloaded before or after latlab's (MangoHud), Ctrl-C to latlab
// alone, the names of the threads latlab adds to the program, and the
// checks of capture's options. Each skips, with the reason, where a program,
// Xvfb or a sanitizer-free build is missing (capture_env.hpp).
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "capture_env.hpp"
#include "cli_run_helpers.hpp"
#include "xvfb_server.hpp"

namespace latlab::e2e {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

class CaptureProgram : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kSanitizerBuild != nullptr) GTEST_SKIP() << kSanitizerBuild;
    if (!xvfb_.ok()) GTEST_SKIP() << xvfb_.why_not();
    env_ = gl_env(xvfb_);
  }
  // Skips the test unless `program` is on PATH (`package`: where it comes from).
  bool need(const char* program, const char* package) {
    if (on_path(program)) return true;
    skip_why_ = std::string(program) + " not installed (" + package + ")";
    return false;
  }
  CliResult capture(const std::string& args) {
    return run_cli("capture " + args, CliOptions{env_});
  }
  XvfbServer xvfb_;
  std::string env_;
  std::string skip_why_;
  TempDir dir_;
};

// glmark2 prints "[build] ...: FPS: N FrameTime: ..." per benchmark, N over
// the benchmark's duration (frames it drew / seconds). The capture must see
// at least 90 % of N * duration swaps (glmark2 also swaps outside the timed
// part: setup, the last frame), each but the first with its GPU span.
void expect_glmark_frames(const CliResult& r, const json& j, double duration_s) {
  const std::regex fps_line(R"(FPS: (\d+) FrameTime)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, fps_line)) << r.output;
  const double printed = std::stod(m[1]) * duration_s;
  const double frames = j["frames"].get<double>();
  EXPECT_GE(frames, 0.9 * printed) << "glmark2 drew about " << printed << " frames\n" << r.output;
  EXPECT_LE(frames, 1.1 * printed + 10) << "glmark2 drew about " << printed << " frames";
  ASSERT_EQ(j["sources"].size(), 1u) << r.output;
  EXPECT_EQ(j["sources"][0]["api"], "opengl");
  if (!j["sources"][0]["clock_method"].is_null()) {
    EXPECT_GE(j["submit_spans"]["measured"].get<double>(), 0.9 * frames) << j["submit_spans"];
    EXPECT_GT(j["figures"]["gpu_time"]["count"].get<double>(), 0.9 * frames);
  }
}

// glmark2 (GLX) dlopens libGL and takes glXSwapBuffers with dlsym.
TEST_F(CaptureProgram, Glmark2GlxSwapsAreCaptured) {
  if (!need("glmark2", "glmark2-x11")) GTEST_SKIP() << skip_why_;
  const auto out = (dir_.path / "r.json").string();
  const CliResult r = capture("--out " + out + " -- glmark2 -b build:duration=2");
  ASSERT_EQ(r.rc, 0) << r.output;
  const json j = json::parse(slurp(out));
  EXPECT_NE(j["sources"][0]["source"].get<std::string>().find("(GLX)"), std::string::npos);
  expect_glmark_frames(r, j, 2.0);
}

// glmark2-es2 (EGL, GLES 2) dlopens libEGL and takes eglSwapBuffers with
// dlsym or eglGetProcAddress.
TEST_F(CaptureProgram, Glmark2Es2EglSwapsAreCaptured) {
  if (!need("glmark2-es2", "glmark2-es2-x11")) GTEST_SKIP() << skip_why_;
  const auto out = (dir_.path / "r.json").string();
  const CliResult r = capture("--out " + out + " -- glmark2-es2 -b build:duration=2");
  ASSERT_EQ(r.rc, 0) << r.output;
  const json j = json::parse(slurp(out));
  EXPECT_NE(j["sources"][0]["source"].get<std::string>().find("(EGL)"), std::string::npos);
  expect_glmark_frames(r, j, 2.0);
}

// MangoHud's GL hooks call the driver's swap themselves: latlab's
// interposer goes first in LD_PRELOAD whichever was set first, and forwards
// to MangoHud's. Both orders give every frame.
TEST_F(CaptureProgram, MangohudBeforeOrAfterLatlabGivesFrames) {
  if (!need("mangohud", "mangohud") || !need("glxgears", "mesa-utils")) GTEST_SKIP() << skip_why_;
  const auto out1 = (dir_.path / "outer.json").string();
  const auto out2 = (dir_.path / "inner.json").string();
  std::string text;
  // mangohud's script appends its library to LD_PRELOAD and runs latlab.
  const int rc1 = run_shell(env_ + " mangohud " + latlab_binary() + " capture --out " + out1 +
                                " --frames 20 --terminate -- glxgears 2>&1",
                            text);
  EXPECT_EQ(rc1, 128 + 15) << text;
  const CliResult r2 = capture("--out " + out2 + " --frames 20 --terminate -- mangohud glxgears");
  EXPECT_EQ(r2.rc, 128 + 15) << r2.output;
  for (const auto& [path, said] : {std::pair{out1, text}, std::pair{out2, r2.output}}) {
    const json j = json::parse(slurp(path));
    EXPECT_EQ(j["frames"], 20) << said;
    ASSERT_EQ(j["sources"].size(), 1u) << said;
    EXPECT_EQ(j["sources"][0]["api"], "opengl");
  }
}

// Ctrl-C to latlab alone (timeout sends it to latlab, then to its process
// group): the recording stops, latlab passes SIGINT on, the program ends,
// and the partial result says so; long before glxgears' own end (never).
TEST_F(CaptureProgram, InterruptStopsRecordingAndEndsTheProgram) {
  if (!need("glxgears", "mesa-utils")) GTEST_SKIP() << skip_why_;
  const auto out = (dir_.path / "r.json").string();
  std::string text;
  const auto t0 = Clock::now();
  const int rc = run_shell(env_ + " timeout --preserve-status -s INT 3 " + latlab_binary() +
                               " capture --out " + out + " -- glxgears 2>&1",
                           text);
  const double took = seconds_since(t0);
  EXPECT_EQ(rc, 128 + 2) << "glxgears' own end by SIGINT: " << text;
  EXPECT_LT(took, 7.0) << text;
  EXPECT_NE(text.find("recording stopped; SIGINT passed on to the program"), std::string::npos)
      << text;
  const json j = json::parse(slurp(out));
  EXPECT_EQ(j["partial"], true);
  EXPECT_NE(j["partial_reason"].get<std::string>().find("interrupted"), std::string::npos);
  EXPECT_EQ(j["capture"]["stopped_by"], "signal");
  EXPECT_EQ(j["capture"]["signal_sent"], 2);
  EXPECT_EQ(j["program"]["signal"], 2);
  EXPECT_EQ(j["program"]["running_when_written"], false) << "written once it ended";
}

// Ctrl-C on a terminal: the tty sends SIGINT to latlab and the program (one
// foreground process group); latlab must not send the program a second one.
// latlab runs on a pseudo-terminal of the test's, which writes ^C to it.
TEST_F(CaptureProgram, CtrlCOnATerminalIsNotPassedOnTwice) {
  if (!need("glxgears", "mesa-utils")) GTEST_SKIP() << skip_why_;
  const auto out = (dir_.path / "r.json").string();
  const std::string cmd =
      "exec env " + env_ + " " + latlab_binary() + " capture --out " + out + " -- glxgears";
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  ASSERT_GE(pid, 0) << "forkpty failed";
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Until glxgears runs (its first lines), then ^C; read everything after.
  std::string text;
  char buf[4096];
  bool sent = false;
  const auto t0 = Clock::now();
  for (;;) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 100) > 0) {
      const ssize_t n = read(master, buf, sizeof buf);
      if (n <= 0) break;  // EIO: latlab and the program are gone
      text.append(buf, static_cast<size_t>(n));
    }
    if (!sent && seconds_since(t0) > 1.5) {
      ASSERT_EQ(write(master, "\x03", 1), 1);
      sent = true;
    }
    if (seconds_since(t0) > 20) {
      kill(pid, SIGKILL);
      break;
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(master);
  ASSERT_TRUE(WIFEXITED(status)) << text;
  EXPECT_EQ(WEXITSTATUS(status), 128 + 2) << text;
  EXPECT_NE(text.find("the program got it from the terminal too"), std::string::npos) << text;
  const json j = json::parse(slurp(out));
  EXPECT_EQ(j["capture"]["stopped_by"], "signal");
  EXPECT_TRUE(j["capture"]["signal_sent"].is_null()) << "the tty sent it, not latlab";
  EXPECT_EQ(j["program"]["signal"], 2);
}

// A program that ignores SIGINT: the second interrupt kills it, within the
// wait the first one began (5 s).
TEST_F(CaptureProgram, SecondInterruptKillsTheProgram) {
  if (!need("glxgears", "mesa-utils")) GTEST_SKIP() << skip_why_;
  const auto out = (dir_.path / "r.json").string();
  std::string text;
  const auto t0 = Clock::now();
  const int rc =
      run_shell(env_ + " " + latlab_binary() + " capture --out " + out +
                    " -- sh -c 'trap \"\" INT; exec glxgears' >/dev/null 2>&1 & p=$!; sleep 1; "
                    "kill -INT $p; sleep 1; kill -INT $p; wait $p",
                text);
  const double took = seconds_since(t0);
  EXPECT_EQ(rc, 128 + 9) << "the program's end by SIGKILL";
  EXPECT_LT(took, 5.0);
  const json j = json::parse(slurp(out));
  EXPECT_EQ(j["capture"]["stopped_by"], "signal");
  EXPECT_EQ(j["capture"]["signal_sent"], 9);
  EXPECT_NE(j["partial_reason"].get<std::string>().find("killed the program"), std::string::npos)
      << j["partial_reason"];
}

// The threads latlab adds to the program are named for `top -H`: the GL
// interposer's sender and, in a Vulkan program, the layer's collector. The
// program is a shell that prints the captured program's thread names when
// --terminate ends the recording.
TEST_F(CaptureProgram, ThreadsLatlabAddsAreNamed) {
  if (!need("glxgears", "mesa-utils")) GTEST_SKIP() << skip_why_;
  const auto out = (dir_.path / "r.json").string();
  const char* names =
      " -- sh -c 'trap \"cat /proc/\\$p/task/*/comm; kill \\$p; wait \\$p; exit 3\" TERM; ";
  const CliResult gl = capture("--out " + out + " --frames 5 --terminate" + names +
                               "glxgears >/dev/null & p=$!; wait $p'");
  EXPECT_EQ(gl.rc, 3) << gl.output;
  EXPECT_NE(gl.output.find("latlab-glsend"), std::string::npos) << gl.output;
  if (!vkcube_skip_reason().empty()) return;
  const CliResult vk = run_cli("capture --out " + out + " --frames 5 --terminate" + names +
                                   "vkcube >/dev/null & p=$!; wait $p'",
                               CliOptions{vkcube_env(xvfb_)});
  EXPECT_EQ(vk.rc, 3) << vk.output;
  EXPECT_NE(vk.output.find("latlab-collect"), std::string::npos) << vk.output;
}

// --out -: the result is latlab's stdout; the program's own output goes to
// stderr, so stdout is one JSON document.
TEST(CaptureOptions, OutDashKeepsTheProgramsStdoutApart) {
  if (kSanitizerBuild != nullptr) GTEST_SKIP() << kSanitizerBuild;
  const CliSplitResult r = run_cli_split("capture --out - -- echo hello-from-program");
  EXPECT_EQ(r.rc, 0) << r.err;
  const json j = json::parse(r.out);  // throws (fails) on mixed text
  EXPECT_EQ(j["kind"], "capture");
  EXPECT_NE(r.err.find("hello-from-program"), std::string::npos) << r.err;
  const std::string cmd = j["command_line"];
  EXPECT_NE(cmd.find("capture --out - -- echo hello-from-program"), std::string::npos)
      << "latlab's options and the -- are kept: " << cmd;
}

// A program that draws nothing: the result says why it holds no frame.
TEST(CaptureOptions, AnEmptyCaptureSaysWhyItHasNoFrame) {
  if (kSanitizerBuild != nullptr) GTEST_SKIP() << kSanitizerBuild;
  TempDir dir;
  const std::string out = (dir.path / "e.json").string();
  const CliResult r = run_cli("capture --out " + out + " -- true");
  EXPECT_EQ(r.rc, 0) << r.output;
  const json j = json::parse(slurp(out));
  EXPECT_EQ(j["frames"], 0) << j.dump();
  bool said = false;
  for (const auto& u : j["unavailable"])
    said = said || (u["name"] == "frames" && u["reason"].get<std::string>().find("no frame") == 0);
  EXPECT_TRUE(said) << j["unavailable"].dump();
  // No frame time: no FPS, null rather than 0.
  EXPECT_TRUE(j["fps"]["average"].is_null()) << j["fps"].dump();
  EXPECT_TRUE(j["fps"]["low_1_percent"].is_null()) << j["fps"].dump();
  EXPECT_NE(r.output.find("FPS n/a"), std::string::npos) << r.output;
}

// --seconds takes finite decimal numbers only; a refusal is short.
TEST(CaptureOptions, SecondsRefusesWhatIsNotAFiniteDecimal) {
  for (const char* bad : {"nan", "inf", "-1", "0", "0x10", "1e400"}) {
    const CliResult r = run_cli(std::string("capture --seconds ") + bad + " -- true");
    EXPECT_EQ(r.rc, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("--seconds"), std::string::npos) << bad << ": " << r.output;
    EXPECT_EQ(r.output.find("179769"), std::string::npos) << "DBL_MAX printed: " << r.output;
    EXPECT_LT(r.output.size(), 400u) << r.output;
  }
}

// --gpu-spans takes "all" or a percent in (0, 100]; anything else is refused.
TEST(CaptureOptions, GpuSpansRefusesWhatIsNotAllNorAPercent) {
  for (const char* bad : {"0", "-1", "101", "nan", "some", "%", "2%%"}) {
    const CliResult r = run_cli(std::string("capture --gpu-spans '") + bad + "' -- true");
    EXPECT_EQ(r.rc, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("--gpu-spans"), std::string::npos) << bad << ": " << r.output;
  }
}

// The program's options read as latlab's: the hint says where '--' goes.
TEST(CaptureOptions, MissingDashDashGetsAHint) {
  const CliResult r = run_cli("capture vkcube --c 60");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("need '--' before the program"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace latlab::e2e
