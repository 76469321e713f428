// latlab clocks: how a device clock drifts against the host clock, and what
// a drift-corrected model buys over a single start-up calibration pair.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "backend_table.hpp"
#include "cli_checks.hpp"
#include "clocks_devices.hpp"
#include "command.hpp"
#include "device_list.hpp"
#include "latlab/bench/clock_study.hpp"
#include "latlab/bench/device_factory.hpp"
#include "latlab/bench/sim.hpp"
#include "report/json_parts.hpp"
#include "report/result_json.hpp"

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

std::string dist_line(const Distribution& d) {
  if (d.empty()) return fmt::format("no samples ({} missing)", d.missing);
  return fmt::format("p50 {:.3f}  p99 {:.3f}  min {:.3f}  max {:.3f}  mean {:.3f}  (n={}{})", d.p50,
                     d.p99, d.min, d.max, d.mean, d.count,
                     d.missing ? fmt::format(", {} missing", d.missing) : "");
}

void print_human(const DeviceInfo& info, const ClockStudyResult& r) {
  fmt::print("device: {} [{}, {}], tick {:.6g} ns, {} valid bits{}\n", info.name, info.backend,
             info.driver, r.ticks.period_ns(), r.ticks.valid_bits,
             info.calibration_estimated ? ", estimated pairs" : "");
  fmt::print("host domain: {}\n", r.host_domain);
  fmt::print(
      "sampled {:.1f} s: {} refreshes, {} failed, {} pairs rejected, {} source calls ({} errors)\n",
      r.sampled_seconds, r.refreshes, r.failed_refreshes, r.rejected_pairs, r.source_calls,
      r.source_errors);
  fmt::print("deviation (us):   {}\n", dist_line(r.deviation_us));
  fmt::print("fitted drift:     {:+.4f} ppm (bound +-{:.4f} ppm), {} pairs in the fit\n",
             r.drift_ppm, r.drift_uncertainty_ppm, r.pairs_used);
  fmt::print("residuals (us):   {}\n", dist_line(r.residual_us));
  fmt::print("error bound now:  {:.3f} us\n", static_cast<double>(r.bound_now_ns) / 1e3);
  fmt::print("at the end, {} fresh pairs not in the fit (mapped host - pair host, us):\n",
             r.fresh_count);
  const Distribution& m = r.model_error_us;
  const Distribution& s = r.single_pair_error_us;
  fmt::print("  {:<8} {:>22} {:>22}\n", "", "drift-corrected model", "single start-up pair");
  // An empty distribution has no statistics: "-", never 0.
  auto cell = [](const Distribution& d, double v) {
    return d.empty() ? std::string("-") : fmt::format("{:.3f}", v);
  };
  fmt::print("  {:<8} {:>22} {:>22}\n", "mean", cell(m, m.mean), cell(s, s.mean));
  fmt::print("  {:<8} {:>22} {:>22}\n", "p50", cell(m, m.p50), cell(s, s.p50));
  fmt::print("  {:<8} {:>22} {:>22}\n", "min", cell(m, m.min), cell(s, s.min));
  fmt::print("  {:<8} {:>22} {:>22}\n", "max", cell(m, m.max), cell(s, s.max));
  fmt::print("  within the model's bound: {}/{} ({:.1f}%)\n", r.fresh_within_bound, r.fresh_count,
             100.0 * r.fresh_within_bound_fraction());
}

nlohmann::ordered_json result_json(const ClocksOptions& o, bool sim_direct, const DeviceInfo& info,
                                   const ClockStudyResult& r) {
  nlohmann::ordered_json settings = {
      {"backend", std::string(backend_name(sim_direct ? Backend::sim : o.backend))},
      {"device", o.device},
      {"seconds", o.seconds},
      {"interval_ms", o.interval_ms},
      {"samples_per_refresh", o.samples},
      {"fresh_pairs", o.fresh},
      {"window", o.window}};
  if (sim_direct) settings["sim_drift_ppm"] = o.sim_drift_ppm;
  nlohmann::ordered_json device = device_identity_to_json(info);
  device["tick_period_ns"] = r.ticks.period_ns();
  device["tick_period_num"] = r.ticks.period_num;
  device["tick_period_den"] = r.ticks.period_den;
  device["valid_bits"] = r.ticks.valid_bits;
  device["calibration_estimated"] = info.calibration_estimated;
  return {
      {"command", "clocks"},
      {"settings", settings},
      {"device", device},
      {"host_domain", r.host_domain},
      {"sampled_seconds", r.sampled_seconds},
      {"refreshes", r.refreshes},
      {"failed_refreshes", r.failed_refreshes},
      {"rejected_pairs", r.rejected_pairs},
      {"source_calls", r.source_calls},
      {"source_errors", r.source_errors},
      {"deviation_us", distribution_to_json(r.deviation_us)},
      {"drift_ppm", r.drift_ppm},
      {"drift_uncertainty_ppm", r.drift_uncertainty_ppm},
      {"pairs_used", r.pairs_used},
      {"residual_us", distribution_to_json(r.residual_us)},
      {"bound_now_ns", r.bound_now_ns},
      {"fresh",
       {{"count", r.fresh_count},
        {"within_bound", r.fresh_within_bound},
        {"within_bound_fraction", r.fresh_within_bound_fraction()},
        {"model_error_us", distribution_to_json(r.model_error_us)},
        {"single_pair_error_us", distribution_to_json(r.single_pair_error_us)}}},
  };
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

int run_clocks(const ClocksOptions& o, bool sim_direct) {
  if (!sim_direct && is_device_list(o.device)) {
    ClocksDevicesOptions m{o.backend, o.device, o.json, o.cross_check, o.cross_trials};
    return run_clocks_devices(
        m, study_desc(o),
        [&o](const DeviceInfo& info, const ClockStudyResult& r) {
          return result_json(o, false, info, r);
        },
        print_human);
  }
  std::unique_ptr<LatencyDevice> device;
  if (sim_direct) {
    device = open_sim_clock_device(o.sim_drift_ppm);
  } else {
    // The sim backend's clock device is the one with a drifting clock.
    const std::string selected = o.backend == Backend::sim && o.device.empty() ? "clock" : o.device;
    auto opened = open_latency_device(DeviceSelector{.backend = o.backend, .device = selected});
    if (!opened) {
      std::fprintf(stderr, "latlab clocks: cannot open a %s device: %s\n",
                   std::string(backend_name(o.backend)).c_str(), opened.error().message.c_str());
      return device_open_exit_code(o.device);
    }
    device = std::move(opened.value());
  }
  const DeviceInfo& info = device->info();
  if (info.calibration_domain.empty()) {
    std::string why = "the device offers no calibration pairs";
    for (const auto& m : info.missing) {
      if (m.name.find("calibrat") != std::string::npos) why = m.reason;
    }
    std::fprintf(stderr, "latlab clocks: %s: no clock calibration: %s\n", info.name.c_str(),
                 why.c_str());
    return kExitMissingCapability;
  }

  if (!o.json) {
    fmt::print(
        "latlab clocks: backend {}, device \"{}\", {} s, refresh every {} ms, best of {}, {} fresh "
        "pairs, "
        "window {}\n",
        sim_direct ? "sim (direct)" : std::string(backend_name(o.backend)), o.device, o.seconds,
        o.interval_ms, o.samples, o.fresh, o.window);
    std::fflush(stdout);
  }

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
  LatencyDevice* dev = device.get();
  Result<ClockStudyResult> r =
      run_clock_study([dev] { return dev->sample_calibration(); }, info.ticks, desc);
  if (tty) std::fprintf(stderr, "\r\033[K");
  if (!r) {
    std::fprintf(stderr, "latlab clocks: %s: %s\n", info.name.c_str(), r.error().message.c_str());
    return kExitRunFailed;
  }
  if (o.json) {
    fmt::print("{}\n", result_json(o, sim_direct, info, *r).dump(2));
  } else {
    print_human(info, *r);
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
      // over the whole run was 10 us off fresh pairs after 8 min; 64 s: 0.5 us.
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
