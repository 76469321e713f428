// What the CLI accepts from its command line and environment. Numbers (NaN and
// infinities, hex, octal and clamped whole numbers), options that contradict
// each other, the default store without a home, `devices` with a broken
// Vulkan driver file, unknown commands and mistyped options.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "e2e/cli_run_helpers.hpp"

namespace latlab::e2e {
namespace {

namespace fs = std::filesystem;

// Runs latlab with `args` (no shell), output dropped; its exit code and peak
// RSS in MiB (wait4's rusage), or rc -1 when it could not run.
struct Measured {
  int rc = -1;
  double max_rss_mib = 0;
};
Measured run_measured(const std::vector<std::string>& args) {
  const std::string bin = latlab_binary();
  std::vector<char*> argv{const_cast<char*>(bin.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execvp(bin.c_str(), argv.data());
    _exit(127);
  }
  Measured m;
  int status = 0;
  struct rusage ru {};
  if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status)) return m;
  m.rc = WEXITSTATUS(status);
  m.max_rss_mib = static_cast<double>(ru.ru_maxrss) / 1024.0;
  return m;
}

// A quick baseline run on the sim backend writing `out`.
std::string sim_run(const fs::path& out) {
  return "run --backend sim --mode baseline --frames 40 --blocks 4 --warmup 5 --interval-ms 2-3 "
         "--out " +
         out.string();
}

// A command that runs for a moment at most even where a bad value is taken.
struct NumberCase {
  std::string command;  // everything before the option
  std::string option;
};

std::vector<NumberCase> real_options(const fs::path& result) {
  const std::string run =
      "run --backend sim --mode baseline --blocks 1 --warmup 0 --out '' "
      "--interval-ms 1-2 --time-scale 1000";
  const std::string run_frames = run + " --frames 10";
  const std::string clocks = "clocks --backend sim";
  const std::string calibrate = "calibrate-load --backend sim --size 16x16 --max-evaluations 2";
  const std::string compare = "compare " + result.string() + " " + result.string();
  return {
      {run, "--seconds"},
      {run_frames, "--load-target-ms"},
      {run_frames, "--load-tolerance"},
      {run_frames, "--poll-limit-us"},
      {run_frames, "--turn-warmup-ms"},
      {run_frames, "--present-poll-us"},
      {run_frames, "--present-hold-ms"},
      {clocks + " --interval-ms 10", "--seconds"},
      {clocks + " --seconds 0.1", "--interval-ms"},
      {clocks + " --seconds 0.1", "--sim-drift-ppm"},
      {calibrate, "--target-ms"},
      {calibrate, "--tolerance"},
      {compare, "--alpha"},
      {compare, "--min-effect-pct"},
      {compare, "--min-effect-us"},
      {compare, "--fail-on-regression"},
  };
}

class CliInputs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    const CliResult r = run_cli(sim_run(result()));
    ASSERT_EQ(r.rc, 0) << r.output;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static fs::path result() { return dir_->path / "a.json"; }
  static TempDir* dir_;
};

TempDir* CliInputs::dir_ = nullptr;

// `compare --fail-on-regression nan` passed the range check and turned the
// gate off (exit 0 where 5 gave 5); every floating option had the hole.
TEST_F(CliInputs, EveryFloatingOptionRefusesNanAndInfinities) {
  for (const NumberCase& c : real_options(result())) {
    for (const char* bad : {"nan", "NaN", "inf", "-inf", "infinity", "1e999", "0x1p3", "5x"}) {
      // Bounded: before the check, some of these ran with the bad value.
      const CliResult s = run_cli(c.command + " " + c.option + " " + bad, {.env = "timeout 60"});
      EXPECT_EQ(s.rc, 2) << c.command << " " << c.option << " " << bad << "\n" << s.output;
      // CLI11 names no hidden option (the test knob --sim-drift-ppm) in its errors.
      if (c.option != "--sim-drift-ppm") {
        EXPECT_NE(s.output.find(c.option), std::string::npos) << s.output;
      }
      EXPECT_NE(s.output.find("not a finite decimal number"), std::string::npos) << s.output;
    }
  }
}

TEST_F(CliInputs, ANanGateIsRefusedAndANumberGateStillGates) {
  // One run a side: the gate needs --min-effect-pct (compare over blocks).
  const std::string ab =
      "compare " + result().string() + " " + result().string() + " --min-effect-pct 5";
  const CliResult nan = run_cli(ab + " --fail-on-regression nan");
  EXPECT_EQ(nan.rc, 2) << nan.output;
  EXPECT_NE(nan.output.find("not a finite decimal number"), std::string::npos) << nan.output;
  // The same file twice: no regression, the gate passes.
  const CliResult ok = run_cli(ab + " --fail-on-regression 5");
  EXPECT_EQ(ok.rc, 0) << ok.output;
}

// clocks --interval-ms nan reached llround: "got -9223372036854775808".
TEST_F(CliInputs, ClocksNanIntervalIsBadUsageNotAnUndefinedConversion) {
  const CliResult r = run_cli("clocks --backend sim --seconds 0.1 --interval-ms nan");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_EQ(r.output.find("-9223372036854775808"), std::string::npos) << r.output;
}

// Seeds past 2^64 - 1 were clamped to it; "0x10" was 16 and "010" 8.
TEST_F(CliInputs, WholeNumbersAreDecimalAndNeverClamped) {
  const std::string run =
      "run --backend sim --mode baseline --blocks 1 --warmup 0 --out '' "
      "--interval-ms 1-2 --time-scale 1000 ";
  for (const char* bad :
       {"--seed 18446744073709551616", "--seed 99999999999999999999999", "--seed -1",
        "--frames 0x10", "--frames 1e3", "--frames +5", "--frames 16.0", "--blocks 4294967297",
        "--warmup ' 5'", "--time-scale 0x10", "--frames ''"}) {
    const CliResult r = run_cli(run + bad);
    EXPECT_EQ(r.rc, 2) << bad << "\n" << r.output;
    EXPECT_NE(r.output.find("not a whole number"), std::string::npos) << bad << "\n" << r.output;
  }
  // The largest seed is taken as it is; a leading zero is decimal, not octal.
  CliResult r = run_cli(run + "--frames 10 --seed 18446744073709551615");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("seed 18446744073709551615,"), std::string::npos) << r.output;
  r = run_cli(run + "--frames 010");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find(" 10 frames in 1 blocks"), std::string::npos) << r.output;
  // Other commands' whole numbers go through the same check.
  for (const char* bad : {"clocks --backend sim --samples 0x8", "history --limit 010x",
                          "profile --frames 1e3", "compare a b --section 0x1",
                          "calibrate-load --backend sim --verify-frames 18446744073709551617"}) {
    r = run_cli(bad);
    EXPECT_EQ(r.rc, 2) << bad << "\n" << r.output;
    EXPECT_NE(r.output.find("not a whole number"), std::string::npos) << bad << "\n" << r.output;
  }
}

// run --interval-ms parsed each end with strtod: "0x8-0xC" (hex), " 8-12"
// (a blank) and "+8-12" ran where every other floating option refuses them.
TEST_F(CliInputs, IntervalEndsAreDecimalAsEveryFloatingOption) {
  const std::string run =
      "run --backend sim --mode baseline --frames 5 --blocks 1 --warmup 0 --out '' "
      "--time-scale 100 --interval-ms ";
  for (const char* bad :
       {"0x8-0xC", "8-0x10", "' 8-12'", "'8-12 '", "+8-12", "8-+12", "nan-12", "8-inf", "0x1p3"}) {
    const CliResult r = run_cli(run + bad, {.env = "timeout 60"});
    EXPECT_EQ(r.rc, 2) << bad << "\n" << r.output;
    EXPECT_NE(r.output.find("--interval-ms"), std::string::npos) << bad << "\n" << r.output;
  }
  // Decimal text, exponents included, still runs.
  for (const char* good : {"8-12", "8", "1e1-12", "0.5-2.5"}) {
    const CliResult r = run_cli(run + good, {.env = "timeout 60"});
    EXPECT_EQ(r.rc, 0) << good << "\n" << r.output;
  }
}

// Performance mode has no latency frames: --frames-csv (and --report,
// --per-frame) were accepted, echoed ("frames -> x.csv") and never written.
TEST_F(CliInputs, PerformanceModeRefusesWhatOnlyLatencyFramesHave) {
  for (const char* flag : {"--frames-csv f.csv", "--report r.html", "--per-frame"}) {
    TempDir dir;
    const CliResult r =
        run_cli("run --backend sim --mode performance --perf-frames 5 --perf-size 16x16 --out " +
                (dir.path / "p.json").string() + " " + flag + " 2>&1; ls " + dir.path.string());
    EXPECT_NE(r.output.find("--mode performance"), std::string::npos) << flag << "\n" << r.output;
    EXPECT_EQ(r.output.find("p.json"), std::string::npos) << flag << ": ran anyway\n" << r.output;
    const CliResult rc = run_cli(
        "run --backend sim --mode performance --perf-frames 5 "
        "--perf-size 16x16 --out '' " +
        std::string(flag));
    EXPECT_EQ(rc.rc, 2) << flag << "\n" << rc.output;
  }
}

// --load-complexity sets Loaded's load; with no Loaded mode it did nothing.
TEST_F(CliInputs, LoadComplexityWithoutLoadedIsRefused) {
  for (const char* mode : {"baseline", "performance"}) {
    const CliResult r = run_cli(std::string("run --backend sim --mode ") + mode +
                                " --load-complexity 5 --frames 10 --out ''");
    EXPECT_EQ(r.rc, 2) << mode << "\n" << r.output;
    EXPECT_NE(r.output.find("--load-complexity"), std::string::npos) << r.output;
  }
}

// Without HOME (and XDG_DATA_HOME) the default store was /.local/share/latlab/results.db.
TEST_F(CliInputs, DefaultStoreWithoutAHomeIsRefused) {
  struct stat st {};
  const bool existed = stat("/.local/share/latlab/results.db", &st) == 0;
  TempDir dir;
  TempDir cwd;  // relative homes resolve here: nothing may appear in it
  const std::string no_home = "cd " + cwd.path.string() + " && env -u HOME -u XDG_DATA_HOME";
  for (const std::string& env : {no_home, no_home + " HOME=relative/dir",
                                 no_home + " HOME=" + (dir.path / "missing").string(),
                                 no_home + " XDG_DATA_HOME=relative"}) {
    for (const std::string& cmd :
         {std::string("run --backend sim --mode baseline --frames 10 --blocks 1 --warmup 0 "
                      "--interval-ms 1-2 --out '' --store"),
          std::string("history"), std::string("store migrate"), "store add " + result().string(),
          std::string("compare 1 2")}) {
      const CliResult r = run_cli(cmd, {.env = env});
      EXPECT_EQ(r.rc, 2) << env << " " << cmd << "\n" << r.output;
      EXPECT_NE(r.output.find("pass --store"), std::string::npos) << env << " " << cmd << "\n"
                                                                  << r.output;
    }
  }
  if (!existed) {
    EXPECT_NE(stat("/.local/share/latlab/results.db", &st), 0) << "a store was created under /";
  }
  EXPECT_TRUE(fs::is_empty(cwd.path)) << "a store was created under a relative HOME";
  // An absolute XDG_DATA_HOME alone is enough (the directory is created).
  const CliResult r = run_cli("history", {.env = no_home + " XDG_DATA_HOME=" + dir.path.string()});
  EXPECT_EQ(r.output.find("pass --store"), std::string::npos) << r.output;
}

// A Vulkan ICD file that is not JSON failed the whole listing (exit 3, no
// JSON); GL (and CUDA) are still listed, Vulkan says why it is not.
TEST_F(CliInputs, DevicesListsTheOtherApisWhenTheVulkanDriverFileIsBroken) {
  TempDir dir;
  const fs::path icd = dir.path / "broken_icd.json";
  std::ofstream(icd) << "{\"ICD\":";
  const std::string env = "VK_ICD_FILENAMES=" + icd.string() + " VK_DRIVER_FILES=" + icd.string();
  CliSplitResult r;
  r.rc = run_shell(env + " " + latlab_binary() + " devices --json 2>" + (dir.path / "err").string(),
                   r.out);
  r.err = slurp(dir.path / "err");
  const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << "rc " << r.rc << ", no JSON on stdout: " << r.out << r.err;
  ASSERT_TRUE(doc.contains("vulkan_unavailable")) << doc.dump(2);
  EXPECT_FALSE(doc["vulkan_unavailable"].get<std::string>().empty());
  for (const auto& d : doc["devices"]) {
    EXPECT_NE(d["backend"], "vulkan") << d.dump();
  }
  EXPECT_EQ(r.rc, doc["devices"].empty() ? 3 : 0) << r.err;
  const CliResult table = run_cli("devices", {.env = env});
  EXPECT_NE(table.output.find("Vulkan: unavailable:"), std::string::npos) << table.output;
  if (!doc["devices"].empty()) {
    EXPECT_EQ(table.rc, 0) << table.output;
  }
}

// A result of 200 MB (its per_frame series) took a minute and about 1 GB to
// read: the reader held the file twice and parsed per_frame into a tree it
// never used. Now it holds the text once and skips per_frame.
TEST_F(CliInputs, ABigResultIsReadInAboutItsOwnSize) {
  if (std::getenv("ASAN_OPTIONS") != nullptr || std::getenv("TSAN_OPTIONS") != nullptr) {
    GTEST_SKIP() << "a sanitizer's shadow memory makes RSS no measure of the reader";
  }
  std::string text = slurp(result());
  const size_t end = text.rfind('}');
  ASSERT_NE(end, std::string::npos);
  // About 32 MiB of per-frame columns, as a long --per-frame run writes them
  // (a debug build reads them in about 15 s).
  std::string column = "[";
  const size_t values = 32u << 20 >> 3;
  column.reserve(values * 8 + 2);
  for (size_t i = 0; i < values; ++i) column += i == 0 ? "1234567" : ",1234567";
  column += "]";
  text.insert(end,
              ",\"per_frame\": {\"units\": \"ns\", \"frames\": \"measured\", \"modes\": "
              "{\"baseline\": {\"frame_id\": " +
                  column + "}}}");
  column.clear();
  column.shrink_to_fit();
  const fs::path big = dir_->path / "big.json";
  std::ofstream(big, std::ios::binary) << text;
  const double size_mib = static_cast<double>(text.size()) / (1 << 20);
  text.clear();
  text.shrink_to_fit();

  const Measured small = run_measured({"compare", result().string(), result().string()});
  ASSERT_EQ(small.rc, 0);
  const Measured m = run_measured({"compare", big.string(), big.string()});
  ASSERT_EQ(m.rc, 0);
  // Both sides' text (the file twice) and a margin; the tree of per_frame
  // alone was several times the file.
  const double budget = small.max_rss_mib + 2.5 * size_mib;
  EXPECT_LT(m.max_rss_mib, budget) << "file " << size_mib << " MiB; peak RSS " << m.max_rss_mib
                                   << " MiB vs " << small.max_rss_mib << " MiB for a small one";
  std::printf("compare of two %.0f MiB results: peak RSS %.0f MiB (%.0f MiB for small ones)\n",
              size_mib, m.max_rss_mib, small.max_rss_mib);
  fs::remove(big);
}

TEST_F(CliInputs, AnUnknownCommandIsNamedWithTheNearestOne) {
  CliResult r = run_cli("rnu --frames 10");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("unknown command 'rnu'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("did you mean 'run'?"), std::string::npos) << r.output;
  r = run_cli("frobnicate");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("unknown command 'frobnicate'"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("did you mean"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("A subcommand is required"), std::string::npos) << r.output;
}

TEST_F(CliInputs, AMistypedOptionGetsTheNearestKnownName) {
  struct Case {
    std::string args;
    const char* want;
  };
  for (const Case& c : {Case{"run --backend sim --frmes 10", "'--frames'"},
                        Case{"run --backend sim --frames=10 --sed=3", "'--seed'"},
                        Case{"clocks --backend sim --intervall-ms 5", "'--interval-ms'"},
                        Case{"store add --stroe=s.db " + result().string(), "'--store'"},
                        Case{"devices --jsno", "'--json'"}}) {
    const CliResult r = run_cli(c.args);
    EXPECT_EQ(r.rc, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(std::string("did you mean ") + c.want), std::string::npos)
        << c.args << "\n"
        << r.output;
  }
  const CliResult far = run_cli("run --backend sim --completely-unrelated 1");
  EXPECT_EQ(far.rc, 2) << far.output;
  EXPECT_EQ(far.output.find("did you mean"), std::string::npos) << far.output;
}

}  // namespace
}  // namespace latlab::e2e
