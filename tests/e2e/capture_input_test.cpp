// `latlab capture --input` (docs/capture.md, "Input") on programs nobody
// here changed, under Xvfb: xterm in reaction mode (every key it echoes is a
// reaction), a window of the test's own that reacts after a set delay (the
// delay moves input_to_reaction by itself), glxgears and vkcube with keys
// injected (each input assigned to the first frame started after it, as an
// independent reading of the frames CSV finds), the schedule of a seed (the
// run's generator), and bad options. Skipped, with the reason, where a
// program, Xvfb or the X input libraries are absent, or in sanitizer builds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "capture_env.hpp"
#include "cli_run_helpers.hpp"
#include "csv_rows.hpp"
#include "latlab/bench/schedule.hpp"
#include "xvfb_server.hpp"

namespace latlab::e2e {
namespace {

using json = nlohmann::json;
using Row = CsvRow;

long long num(const Row& r, const char* key) { return std::stoll(r.at(key)); }

// Why the X input cannot be tested here, or empty.
std::string input_skip_reason(const XvfbServer& xvfb) {
  if (kSanitizerBuild != nullptr) return kSanitizerBuild;
  if (!xvfb.ok()) return xvfb.why_not();
  return {};
}

// The capture's input section; skips (returns false) when latlab was built
// without the X input libraries.
bool input_of(const json& j, json& input, std::string& why) {
  for (const auto& u : j["unavailable"]) {
    if (u["name"] == "input" &&
        u["reason"].get<std::string>().find("built without") != std::string::npos) {
      why = u["reason"];
      return false;
    }
  }
  input = j.at("input");
  return true;
}

// The machine is idle enough for a tail-latency bound: the 1-minute load
// average below a quarter of the CPUs; else why not.
std::string not_idle_reason() {
  std::ifstream in("/proc/loadavg");
  double load = 0;
  in >> load;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (load < 0.25 * static_cast<double>(cpus)) return {};
  return "the machine is not idle (load average " + std::to_string(load) + " on " +
         std::to_string(cpus) + " CPUs): a p99 bound would measure the other work";
}

struct InputRun {
  CliResult cli;
  json doc;
  json input;
  std::vector<Row> inputs;
  std::vector<Row> frames;
};

// Runs `latlab capture ARGS -- PROGRAM` with --out, --inputs-csv and
// --frames-csv in `dir`.
InputRun capture_input(const TempDir& dir, const std::string& env, const std::string& args,
                       const std::string& program) {
  InputRun r;
  const auto out = (dir.path / "r.json").string();
  const auto in_csv = (dir.path / "inputs.csv").string();
  const auto fr_csv = (dir.path / "frames.csv").string();
  r.cli = run_cli("capture --out " + out + " --inputs-csv " + in_csv + " --frames-csv " + fr_csv +
                      " " + args + " --terminate -- " + program,
                  CliOptions{env});
  if (access(out.c_str(), R_OK) != 0) return r;
  r.doc = json::parse(slurp(out));
  if (r.doc.contains("input")) r.input = r.doc["input"];
  r.inputs = read_csv(slurp(in_csv));
  r.frames = read_csv(slurp(fr_csv));
  return r;
}

#ifdef LATLAB_KEY_REACT_WINDOW
constexpr const char* kReactWindow = LATLAB_KEY_REACT_WINDOW;
#else
constexpr const char* kReactWindow = nullptr;
#endif

TEST(CaptureInput, XtermReactsToEveryKey) {
  if (!on_path("xterm")) GTEST_SKIP() << "xterm not installed (package xterm)";
  XvfbServer xvfb;
  if (const std::string why = input_skip_reason(xvfb); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const InputRun r = capture_input(dir, "DISPLAY=" + xvfb.display(),
                                   "--input key:x --inputs 100 --input-reaction", "xterm -e cat");
  ASSERT_FALSE(r.doc.is_null()) << r.cli.output;
  json in;
  std::string why;
  if (!input_of(r.doc, in, why)) GTEST_SKIP() << why;
  EXPECT_EQ(r.doc["capture"]["stopped_by"], "inputs") << r.cli.output;
  EXPECT_EQ(in["window_found_by"], "_NET_WM_PID") << in.dump(1);
  EXPECT_EQ(in["sent"], 100);
  EXPECT_EQ(in["seen"], 100) << "XInput2 saw every XTest key";
  EXPECT_EQ(in["reactions"], 100) << "xterm echoed every key: " << in.dump(1);
  EXPECT_EQ(in["figures"]["input_to_reaction"]["count"], 100);
  EXPECT_GT(in["figures"]["input_to_reaction"]["min"].get<double>(), 0.0);
  // xterm presents nothing latlab's sources see: no frame, with the reason.
  EXPECT_EQ(in["assigned"], 0);
  EXPECT_EQ(in["not_assigned"]["no_frame_source"], 100);
  EXPECT_EQ(in["figures"]["input_to_present"]["count"], 0);
  EXPECT_EQ(in["figures"]["input_to_present"]["missing"], 100);
  bool listed = false;
  for (const auto& u : r.doc["unavailable"]) listed |= u["name"] == "input_to_frame_start";
  EXPECT_TRUE(listed) << r.doc["unavailable"].dump(1);
  ASSERT_EQ(r.inputs.size(), 100u);
  for (const Row& row : r.inputs) {
    ASSERT_FALSE(row.at("reaction_ns").empty()) << "input " << row.at("input");
    EXPECT_GT(num(row, "reaction_ns"), num(row, "sent_ns"));
    EXPECT_GE(num(row, "sent_ns"), num(row, "woke_ns"));
    EXPECT_GE(num(row, "woke_ns"), num(row, "scheduled_ns"));
    EXPECT_TRUE(row.at("frame").empty());
    EXPECT_EQ(row.at("no_frame"), "no_frame_source");
  }
}

// The window of the test's own reacts 0 ms, then 20 ms, after each key:
// the median reaction moves by 20 ms (within 2 ms).
TEST(CaptureInput, ADelayInTheProgramMovesTheReactionByIt) {
  if (kReactWindow == nullptr) GTEST_SKIP() << "built without Xlib (libx11-dev)";
  XvfbServer xvfb;
  if (const std::string why = input_skip_reason(xvfb); !why.empty()) GTEST_SKIP() << why;
  double median[2] = {0, 0};
  const int delays[2] = {0, 20};
  for (int i = 0; i < 2; ++i) {
    TempDir dir;
    // 40-60 ms apart: each reaction is over before the next key.
    const InputRun r =
        capture_input(dir, "DISPLAY=" + xvfb.display(),
                      "--input key:space --input-interval 40-60ms --inputs 60 --input-reaction",
                      std::string(kReactWindow) + " " + std::to_string(delays[i]));
    ASSERT_FALSE(r.doc.is_null()) << r.cli.output;
    json in;
    std::string why;
    if (!input_of(r.doc, in, why)) GTEST_SKIP() << why;
    EXPECT_EQ(in["window_found_by"], "first window mapped") << "it sets no _NET_WM_PID";
    ASSERT_EQ(in["sent"], 60) << r.cli.output;
    EXPECT_EQ(in["reactions"], 60) << in.dump(1);
    median[i] = in["figures"]["input_to_reaction"]["p50"].get<double>();
  }
  EXPECT_NEAR(median[1] - median[0], 20'000.0, 2'000.0)
      << "medians " << median[0] << " us and " << median[1] << " us";
}

// A region the window's changes never touch sees no reaction; one inside
// it sees every one.
TEST(CaptureInput, OnlyChangesInTheRegionAreReactions) {
  if (kReactWindow == nullptr) GTEST_SKIP() << "built without Xlib (libx11-dev)";
  XvfbServer xvfb;
  if (const std::string why = input_skip_reason(xvfb); !why.empty()) GTEST_SKIP() << why;
  const char* regions[2] = {"300,300,10,10", "50,50,10,10"};  // the window is 200x120
  const int expected[2] = {0, 30};
  for (int i = 0; i < 2; ++i) {
    TempDir dir;
    const InputRun r = capture_input(dir, "DISPLAY=" + xvfb.display(),
                                     std::string("--input key:a --inputs 30 --input-interval "
                                                 "20-30ms --input-reaction --input-region ") +
                                         regions[i],
                                     kReactWindow);
    ASSERT_FALSE(r.doc.is_null()) << r.cli.output;
    json in;
    std::string why;
    if (!input_of(r.doc, in, why)) GTEST_SKIP() << why;
    EXPECT_EQ(in["region"], regions[i]);
    ASSERT_EQ(in["sent"], 30);
    EXPECT_EQ(in["reactions"], expected[i]) << regions[i] << ": " << in.dump(1);
  }
}

// Each input goes to the first frame (in present order) whose frame_start is
// after the input was sent, read independently from the frames CSV.
void expect_assigned_by_the_rule(const InputRun& r, size_t inputs) {
  ASSERT_EQ(r.inputs.size(), inputs) << r.cli.output;
  ASSERT_GT(r.frames.size(), 10u) << r.cli.output;
  size_t assigned = 0;
  for (const Row& in : r.inputs) {
    if (in.at("frame").empty()) {
      EXPECT_EQ(in.at("no_frame"), "capture_ended_first") << "input " << in.at("input");
      continue;
    }
    ++assigned;
    const long long sent = num(in, "sent_ns");
    EXPECT_GT(num(in, "frame_start_ns"), sent) << "input " << in.at("input");
    EXPECT_GE(num(in, "present_start_ns") - sent, 0) << "input " << in.at("input");
    const Row* first = nullptr;
    for (const Row& f : r.frames) {
      if (!f.at("frame_start_ns").empty() && num(f, "frame_start_ns") > sent) {
        first = &f;
        break;
      }
    }
    ASSERT_NE(first, nullptr) << "input " << in.at("input");
    // The same frame: its number, pid and times (not `source`, whose
    // numbering the frames CSV may give differently).
    EXPECT_EQ(in.at("frame"), first->at("frame")) << "input " << in.at("input");
    EXPECT_EQ(in.at("pid"), first->at("pid")) << "input " << in.at("input");
    EXPECT_EQ(in.at("source"), first->at("source")) << "input " << in.at("input");
    EXPECT_EQ(in.at("swapchain_handle"), first->at("swapchain_handle"))
        << "input " << in.at("input");
    EXPECT_EQ(in.at("frame_start_ns"), first->at("frame_start_ns")) << "input " << in.at("input");
    EXPECT_EQ(in.at("present_start_ns"), first->at("present_start_ns"))
        << "input " << in.at("input");
  }
  // The last inputs may find the program already stopped; every other one
  // had a frame.
  EXPECT_GE(assigned, inputs - 2);
  EXPECT_EQ(r.input["assigned"].get<size_t>(), assigned);
  EXPECT_EQ(r.input["figures"]["input_to_present"]["count"].get<size_t>(), assigned);
  EXPECT_GE(r.input["figures"]["input_to_present"]["min"].get<double>(), 0.0);
  // XInput2 saw every XTest event, after latlab began sending it.
  EXPECT_EQ(r.input["seen"], r.input["sent"]);
  EXPECT_GE(r.input["figures"]["sent_to_seen"]["min"].get<double>(), 0.0);
}

// 100 inputs to a program whose frame source names its window: each goes to
// its frame by the rule, and the damage observer saw (nearly) every
// assigned frame's update, after its present.
void expect_on_the_sources_frames_and_window(const InputRun& r, const json& in) {
  EXPECT_EQ(in["window_found_by"], "frame source");
  expect_assigned_by_the_rule(r, 100);
  const json& screen = in["figures"]["input_to_screen_updated"];
  EXPECT_GT(screen["count"].get<int>(), 90) << in.dump(1);
  EXPECT_GE(screen["min"].get<double>(), in["figures"]["input_to_present"]["min"].get<double>());
}

TEST(CaptureInput, GlxgearsInputsGoToTheFirstFrameStartedAfterThem) {
  if (kSanitizerBuild != nullptr) GTEST_SKIP() << kSanitizerBuild;
  if (!on_path("glxgears")) GTEST_SKIP() << "glxgears not installed (mesa-utils)";
  XvfbServer xvfb;
  if (const std::string why = input_skip_reason(xvfb); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const InputRun r = capture_input(dir, gl_env(xvfb), "--input key:x --inputs 100", "glxgears");
  ASSERT_FALSE(r.doc.is_null()) << r.cli.output;
  std::string why;
  json in;
  if (!input_of(r.doc, in, why)) GTEST_SKIP() << why;
  // The GL interposer names glxgears' window at its first swap.
  expect_on_the_sources_frames_and_window(r, in);
}

TEST(CaptureInput, VkcubeInputsGoToTheFirstFrameStartedAfterThem) {
  if (const std::string why = vkcube_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  XvfbServer xvfb;
  if (const std::string why = input_skip_reason(xvfb); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  // Not space: vkcube pauses on it. Every frame's GPU end: every span.
  const InputRun r =
      capture_input(dir, vkcube_env(xvfb), "--input key:x --inputs 100 --gpu-spans all", "vkcube");
  ASSERT_FALSE(r.doc.is_null()) << r.cli.output;
  std::string why;
  json in;
  if (!input_of(r.doc, in, why)) GTEST_SKIP() << why;
  expect_on_the_sources_frames_and_window(r, in);
  EXPECT_GT(in["figures"]["input_to_gpu_end"]["count"].get<int>(), 90) << in.dump(1);
}

// A button and pointer motion, as a key: each sent through XTest, seen by
// XInput2 (a raw event of its kind from XTest's device) and assigned.
TEST(CaptureInput, ButtonsAndMotionAreSentSeenAndAssigned) {
  if (kSanitizerBuild != nullptr) GTEST_SKIP() << kSanitizerBuild;
  if (!on_path("glxgears")) GTEST_SKIP() << "glxgears not installed (mesa-utils)";
  XvfbServer xvfb;
  if (const std::string why = input_skip_reason(xvfb); !why.empty()) GTEST_SKIP() << why;
  for (const char* spec : {"button:3", "motion"}) {
    TempDir dir;
    const InputRun r =
        capture_input(dir, gl_env(xvfb), std::string("--inputs 30 --input ") + spec, "glxgears");
    ASSERT_FALSE(r.doc.is_null()) << r.cli.output;
    std::string why;
    json in;
    if (!input_of(r.doc, in, why)) GTEST_SKIP() << why;
    EXPECT_EQ(in["spec"], spec);
    EXPECT_EQ(in["sent"], 30) << spec;
    EXPECT_EQ(in["seen"], 30) << spec;
    EXPECT_GE(in["assigned"].get<int>(), 28) << spec << ": " << in.dump(1);
  }
}

// On an idle machine an input reaches its present within 3 frame intervals
// at p99 (one to the next frame's start, one for the frame, one of slack).
void expect_input_to_present_within_three_frames(const std::string& env,
                                                 const std::string& program) {
  XvfbServer xvfb;
  if (const std::string why = input_skip_reason(xvfb); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const InputRun r =
      capture_input(dir, env + " DISPLAY=" + xvfb.display(), "--input key:x --inputs 300", program);
  ASSERT_FALSE(r.doc.is_null()) << r.cli.output;
  std::string why;
  json in;
  if (!input_of(r.doc, in, why)) GTEST_SKIP() << why;
  EXPECT_GE(in["assigned"].get<int>(), 298) << in.dump(1);
  const double interval = r.doc["figures"]["between_presents"]["p50"].get<double>();
  EXPECT_LT(in["figures"]["input_to_present"]["p99"].get<double>(), 3 * interval)
      << "frame interval p50 " << interval << " us";
}

TEST(CaptureInput, GlxgearsInputToPresentP99IsBelowThreeFrameIntervalsWhenIdle) {
  if (kSanitizerBuild != nullptr) GTEST_SKIP() << kSanitizerBuild;
  if (!on_path("glxgears")) GTEST_SKIP() << "glxgears not installed (mesa-utils)";
  if (const std::string why = not_idle_reason(); !why.empty()) GTEST_SKIP() << why;
  expect_input_to_present_within_three_frames("LIBGL_ALWAYS_SOFTWARE=1", "glxgears");
}

TEST(CaptureInput, VkcubeInputToPresentP99IsBelowThreeFrameIntervalsWhenIdle) {
  if (const std::string why = vkcube_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  if (const std::string why = not_idle_reason(); !why.empty()) GTEST_SKIP() << why;
  expect_input_to_present_within_three_frames(std::string("VK_ICD_FILENAMES=") + kLavapipeIcd,
                                              "vkcube");
}

// The same seed sends the same intervals: those of `latlab run`'s schedule.
TEST(CaptureInput, TheSameSeedSendsTheSameSchedule) {
  if (kReactWindow == nullptr) GTEST_SKIP() << "built without Xlib (libx11-dev)";
  XvfbServer xvfb;
  if (const std::string why = input_skip_reason(xvfb); !why.empty()) GTEST_SKIP() << why;
  std::vector<long long> intervals[2];
  for (auto& run : intervals) {
    TempDir dir;
    const InputRun r = capture_input(dir, "DISPLAY=" + xvfb.display(),
                                     "--input key:a --input-seed 9 --inputs 40", kReactWindow);
    ASSERT_FALSE(r.doc.is_null()) << r.cli.output;
    std::string why;
    json in;
    if (!input_of(r.doc, in, why)) GTEST_SKIP() << why;
    EXPECT_EQ(in["seed"], 9);
    ASSERT_EQ(r.inputs.size(), 40u);
    for (size_t k = 1; k < r.inputs.size(); ++k)
      run.push_back(num(r.inputs[k], "scheduled_ns") - num(r.inputs[k - 1], "scheduled_ns"));
  }
  EXPECT_EQ(intervals[0], intervals[1]);
  Schedule schedule(ScheduleDesc{9, 8'000'000, 12'000'000});
  (void)schedule.next_interval_ns();  // the first deadline's, from an unknown start
  for (const long long interval : intervals[0]) EXPECT_EQ(interval, schedule.next_interval_ns());
}

// Without an X display (a Wayland session without Xwayland, a console) the
// input is unavailable with the reason, and the capture goes on.
TEST(CaptureInput, WithoutAnXDisplayTheInputIsUnavailable) {
  if (kSanitizerBuild != nullptr) GTEST_SKIP() << kSanitizerBuild;
  TempDir dir;
  const auto out = (dir.path / "r.json").string();
  const CliResult r = run_cli("capture --out " + out + " --input key:a --inputs 5 -- sleep 0.3",
                              CliOptions{"env -u DISPLAY"});
  ASSERT_EQ(r.rc, 0) << r.output;
  const json j = json::parse(slurp(out));
  std::string reason;
  for (const auto& u : j["unavailable"]) {
    if (u["name"] == "input") reason = u["reason"];
  }
  EXPECT_NE(reason.find("DISPLAY"), std::string::npos) << j["unavailable"].dump(1);
  EXPECT_EQ(j["input"]["sent"], 0);
  EXPECT_TRUE(j["input"]["window"].is_null());
  EXPECT_EQ(j["input"]["figures"]["input_to_present"]["count"], 0);
  EXPECT_EQ(j["capture"]["stopped_by"], "program_exit");
}

TEST(CaptureInput, BadInputOptionsAreBadUsage) {
  for (const char* args :
       {"--input key: -- true", "--input button:9 -- true",
        "--input key:a --input-interval 12-8ms -- true",
        "--input key:a --input-interval 10 -- true", "--input-seed 3 -- true", "--inputs 5 -- true",
        "--input key:a --input-reaction --input-region 1,2,3 -- true",
        "--input key:a --input-region 1,2,3,4 -- true"}) {
    const CliResult r = run_cli(std::string("capture ") + args);
    EXPECT_EQ(r.rc, 2) << args << ": " << r.output;
  }
}

}  // namespace
}  // namespace latlab::e2e
