// latlab clocks: how a device clock drifts against the host clock, and what
// a drift-corrected model buys over a single start-up calibration pair.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "cli_options.hpp"
#include "command.hpp"
#include "latlab/bench/clock_studies.hpp"
#include "latlab/bench/clock_study.hpp"
#include "latlab/bench/device_factory.hpp"
#include "latlab/bench/device_list.hpp"
#include "latlab/bench/sim.hpp"
#include "report/reporters/reporters.hpp"

namespace latlab::cli {
namespace {

struct ClocksOptions {
  Backend backend = Backend::vulkan;
  std::string device;
  double seconds = 10.0;
  double interval_ms = 100.0;
  uint32_t samples = 8;
  uint32_t fresh = 32;
  uint32_t window = 640;  // 64 s at the default 100 ms: see the comment on --window
  bool json = false;
  double sim_drift_ppm = 0.0;  // hidden: SimClock without the factory (tests)
  bool cross_check = false;    // with several devices: the two-device cross-check after the study
  uint32_t cross_trials = 200;
};

// What the document names under "settings".
// `backend`: the studied device's (a simulated clock's is "sim").
ClocksSettings settings_of(const ClocksOptions& o, const std::string& backend, bool sim_direct) {
  ClocksSettings s{backend,   o.device, o.seconds, o.interval_ms,
                   o.samples, o.fresh,  o.window,  std::nullopt};
  if (sim_direct) s.sim_drift_ppm = o.sim_drift_ppm;
  return s;
}

// The study's settings from the options (the host domain is the device's).
ClockStudyDesc study_desc(const ClocksOptions& o) {
  ClockStudyDesc desc;
  desc.seconds = o.seconds;
  desc.interval_ns = std::llround(o.interval_ms * 1e6);
  desc.samples_per_refresh = o.samples;
  desc.fresh_pairs = o.fresh;
  desc.model.window = o.window;
  return desc;
}

// The clock of one device, or null after saying why it cannot be studied
// (`rc`: the exit code).
std::unique_ptr<LatencyDevice> open_device(const ClocksOptions& o, bool sim_direct, int& rc) {
  std::unique_ptr<LatencyDevice> device;
  if (sim_direct) {
    device = open_sim_clock_device(o.sim_drift_ppm);
  } else if (auto opened =
                 open_clock_device(DeviceSelector{.backend = o.backend, .device = o.device})) {
    device = std::move(opened.value());
  } else {
    std::fprintf(stderr, "latlab clocks: cannot open a %s device: %s\n",
                 std::string(backend_name(o.backend)).c_str(), opened.error().message.c_str());
    rc = device_open_exit_code(o.device);
    return nullptr;
  }
  const DeviceInfo& info = device->info();
  if (info.calibration_domain.empty()) {
    std::string why = "the device offers no calibration pairs";
    for (const auto& m : info.missing) {
      if (m.name.find("calibrat") != std::string::npos) why = m.reason;
    }
    std::fprintf(stderr, "latlab clocks: %s: no clock calibration: %s\n", info.name.c_str(),
                 why.c_str());
    rc = kExitMissingCapability;
    return nullptr;
  }
  return device;
}

// The study of one device, with its progress on a terminal's stderr.
Result<ClockStudyResult> study(const ClocksOptions& o, LatencyDevice& device) {
  const DeviceInfo& info = device.info();
  ClockStudyDesc desc = study_desc(o);
  desc.host_domain = info.calibration_domain;
  const bool tty = isatty(STDERR_FILENO) != 0;
  if (tty) {
    desc.progress = [&](double f) {
      std::fprintf(stderr, "\r  sampling %s: %5.1f / %.1f s", info.name.c_str(), f * o.seconds,
                   o.seconds);
      std::fflush(stderr);
    };
  }
  Result<ClockStudyResult> r =
      run_clock_study([&device] { return device.sample_calibration(); }, info.ticks, desc);
  if (tty) std::fprintf(stderr, "\r\033[K");
  return r;
}

// --device all or a list: every device studied at the same time; exit 0 when
// every one was studied, 1 when one failed (its section says why), 2 for a
// bad list, 3 when none could be studied.
int run_clocks_devices(const ClocksOptions& o) {
  std::vector<ListedDevice> listed;
  if (const int rc = resolve_devices("clocks", o.backend, o.device, listed); rc != kExitOk)
    return rc;
  if (!o.json) {
    fmt::print("latlab clocks: backend {}, {} devices ({}), studied at the same time, {} s\n",
               backend_name(o.backend), listed.size(), o.device, o.seconds);
    std::fflush(stdout);
  }
  const ListedClockStudies r =
      study_listed_clocks(o.backend, listed, study_desc(o), o.cross_check ? o.cross_trials : 0);
  std::vector<ClocksDeviceSection> sections;
  bool failed = false;
  for (const ListedClockStudy& d : r.devices) {
    failed = failed || !d.study;
    sections.push_back(
        {d.head, d.device ? &d.device->info() : nullptr, d.study ? &*d.study : nullptr, d.failure});
  }
  const ClocksCrossCheck cross{r.cross_check ? &*r.cross_check : nullptr, r.cross_check_skipped};
  const ClocksCrossCheck* asked = o.cross_check ? &cross : nullptr;
  const std::optional<std::string> doc = clocks_devices_json(
      settings_of(o, std::string(backend_name(o.backend)), false), sections, asked);
  if (doc) fmt::print("{}", o.json ? *doc + "\n" : clocks_devices_text(sections, asked));
  for (const ListedClockStudy& d : r.devices) {
    if (!d.study)
      fmt::print(stderr, "latlab clocks: {} device {}: {}\n", backend_name(o.backend),
                 d.head.selector, d.failure);
  }
  if (!doc) return kExitMissingCapability;
  const bool cc_failed = r.cross_check && !*r.cross_check;
  if (cc_failed)
    fmt::print(stderr, "latlab clocks: cross-check: {}\n", r.cross_check->error().message);
  return failed || cc_failed ? kExitRunFailed : kExitOk;
}

int run_clocks(const ClocksOptions& o, bool sim_direct) {
  if (!sim_direct && is_device_list(o.device)) return run_clocks_devices(o);
  int rc = kExitOk;
  const std::unique_ptr<LatencyDevice> device = open_device(o, sim_direct, rc);
  if (!device) return rc;
  const DeviceInfo& info = device->info();
  if (!o.json) {
    fmt::print(
        "latlab clocks: backend {}, device \"{}\", {} s, refresh every {} ms, best of {}, {} fresh "
        "pairs, window {}\n",
        sim_direct ? "sim (direct)" : std::string(backend_name(o.backend)), o.device, o.seconds,
        o.interval_ms, o.samples, o.fresh, o.window);
    std::fflush(stdout);
  }
  const Result<ClockStudyResult> r = study(o, *device);
  if (!r) {
    std::fprintf(stderr, "latlab clocks: %s: %s\n", info.name.c_str(), r.error().message.c_str());
    return kExitRunFailed;
  }
  if (o.json) {
    fmt::print("{}\n",
               clock_study_json(
                   settings_of(o, sim_direct ? info.backend : std::string(backend_name(o.backend)),
                               sim_direct),
                   info, *r));
  } else {
    fmt::print("{}", clock_study_text(info, *r));
  }
  return kExitOk;
}

const RegisterCommand reg{Command{
    "clocks",
    [](CLI::App& app) -> std::function<int()> {
      auto opts = std::make_shared<ClocksOptions>();
      CLI::App* sub = app.add_subcommand("clocks",
                                         "Measure a device clock against the host clock: "
                                         "deviation, drift, residuals, error bound, "
                                         "and how far a single start-up calibration pair drifts");
      add_backend_option(sub, opts->backend, BackendUse::any, "Backend: vulkan, cuda, gl, sim",
                         "--backend,-b");
      sub->add_option("--device,-d", opts->device,
                      "Device index or name substring (empty: the default device); 'all' or a "
                      "comma-separated list: one clock model per device, studied at the same time");
      sub->add_option("--seconds,-s", opts->seconds, "Sampling duration, seconds")
          ->capture_default_str()
          ->check(real_in(0.001, 604800.0));
      sub->add_option("--interval-ms", opts->interval_ms, "Between model refreshes, ms")
          ->capture_default_str()
          ->check(real_in(0.001, 3'600'000.0));
      sub->add_option("--samples", opts->samples, "Pairs per refresh; the lowest deviation is kept")
          ->capture_default_str()
          ->transform(unsigned_in(1, 1024));
      sub->add_option("--fresh", opts->fresh, "Pairs taken at the end and kept out of the fit")
          ->capture_default_str()
          ->transform(unsigned_in(1, 100000));
      // A minute of pairs: on the H200 the host clock is slewed (NTP), so a fit
      // over the whole run was 10 us off fresh pairs after 8 min; 64 s: 0.5 us
      // (docs/BENCHMARKS.md).
      sub->add_option("--window", opts->window,
                      "Newest pairs kept in the fit (640 = 64 s at 100 ms)")
          ->capture_default_str()
          ->transform(unsigned_in(2, 1000000));
      sub->add_flag("--json", opts->json, "Print the result as JSON on stdout");
      sub->add_flag("--cross-check", opts->cross_check,
                    "With several devices (--device all or a list): then submit a minimal frame to "
                    "the first two at the same host deadline and check their clock models agree");
      sub->add_option("--cross-trials", opts->cross_trials, "Synchronised submits of --cross-check")
          ->capture_default_str()
          ->transform(unsigned_in(1, 100000));
      CLI::Option* sim = sub->add_option("--sim-drift-ppm", opts->sim_drift_ppm,
                                         "Use a simulated clock drifting this much (tests)")
                             ->check(real_in(-1000.0, 1000.0))
                             ->group("");  // hidden
      return [opts, sim] { return run_clocks(*opts, sim->count() > 0); };
    },
    40}};

}  // namespace
}  // namespace latlab::cli
