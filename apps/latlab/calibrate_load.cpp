// latlab calibrate-load: find the shader complexity whose GPU time per frame
// hits a target (the load of Loaded latency). See docs/load-calibration.md.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli_options.hpp"
#include "cli_values.hpp"
#include "command.hpp"
#include "latlab/bench/device_factory.hpp"
#include "latlab/bench/latency_report.hpp"
#include "latlab/bench/load_calibration.hpp"
#include "report/reporters/reporters.hpp"

namespace latlab::cli {
namespace {

struct Options {
  double target_ms = kLoadedTargetMs;
  std::string size = "1920x1080";
  std::string form = "compute";
  std::string device;
  Backend backend = Backend::vulkan;
  double tolerance = 0.02;
  uint32_t max_evaluations = 12;
  uint32_t verify_frames = 30;
  bool validation = false;
  bool json = false;
};

constexpr const char* kFooter =
    "Exit codes: 0 calibrated and verified within the tolerance; 1 calibration failed: the target "
    "is\n"
    "outside the reachable range (the message gives the range), no complexity was verified within "
    "the\n"
    "tolerance before --max-evaluations or the time budget ran out, or a device error; 2 bad "
    "usage\n"
    "(also a --device that matches nothing); 3 no device, or it cannot time GPU work.";

// The calibration settings from the options; false (after a usage message)
// when --size is not WxH.
bool desc_of(const Options& o, LoadCalibrationDesc& desc) {
  const auto size = parse_calibrate_size(o.size);
  if (!size) {
    std::fprintf(stderr,
                 "latlab calibrate-load: --size must be WxH with 1..16384 pixels each (e.g. "
                 "1920x1080), got '%s'\n",
                 o.size.c_str());
    return false;
  }
  desc.width = size->first;
  desc.height = size->second;
  desc.target_ms = o.target_ms;
  desc.tolerance = o.tolerance;
  desc.form = o.form == "fragment" ? WorkloadForm::fragment : WorkloadForm::compute;
  desc.max_evaluations = o.max_evaluations;
  desc.verify_frames = o.verify_frames;
  return true;
}

// Says why the device cannot time GPU work; false when it can.
bool cannot_time(const DeviceInfo& info) {
  if (info.can_time) return false;
  std::string why;
  for (const auto& m : info.missing) why += fmt::format("; {}: {}", m.name, m.reason);
  std::fprintf(stderr, "latlab calibrate-load: device '%s' (%s) cannot time GPU work%s\n",
               info.name.c_str(), info.backend.c_str(), why.c_str());
  return true;
}

// Runs the calibration of `desc` (desc_of(o) checked it).
int run(const Options& o, LoadCalibrationDesc desc) {
  DeviceSelector sel;
  sel.backend = o.backend;
  sel.device = o.device;
  sel.validation = o.validation;
  auto device = open_latency_device(sel);
  if (!device) {
    std::fprintf(stderr, "latlab calibrate-load: cannot open a %s device: %s\n",
                 std::string(backend_name(o.backend)).c_str(), device.error().message.c_str());
    return device_open_exit_code(o.device);
  }
  LatencyDevice& dev = **device;
  const DeviceInfo& info = dev.info();
  if (cannot_time(info)) return kExitMissingCapability;

  // With --json, stdout carries only the JSON document; progress goes to stderr.
  std::FILE* text = o.json ? stderr : stdout;
  std::fputs(calibrate_load_settings_text(info, desc, o.form).c_str(), text);
  desc.on_step = [text](const LoadCalibrationStep& s) {
    std::fprintf(text, "%s\n", calibrate_load_step_line(s).c_str());
    std::fflush(text);
  };

  auto r = calibrate_load(dev, desc);
  if (!r) {
    std::string message = r.error().message;
    const std::string prefix = "load calibration: ";
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    std::fprintf(stderr, "latlab calibrate-load: %s\n", message.c_str());
    return kExitRunFailed;
  }
  if (o.json) {
    std::printf("%s\n", calibrate_load_json(*r, desc, info).c_str());
  } else {
    std::fputs(calibrate_load_result_text(*r, desc).c_str(), stdout);
  }
  if (!r->within_tolerance) {
    std::fprintf(stderr,
                 "latlab calibrate-load: no complexity verified within %.3g%% of %.7g ms (%s); "
                 "closest: complexity %u "
                 "at %.4g ms\n",
                 desc.tolerance * 100.0, desc.target_ms, r->outcome.c_str(), r->complexity,
                 r->median_ms);
    return kExitRunFailed;
  }
  return kExitOk;
}

CommandRunner setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  auto desc = std::make_shared<LoadCalibrationDesc>();
  CLI::App* sub = app.add_subcommand("calibrate-load",
                                     "Choose the shader complexity (1..4096, four post-process "
                                     "passes) whose GPU time per frame hits a target: "
                                     "the load of Loaded latency");
  sub->add_option("--target-ms", o->target_ms, "GPU time per frame to reach, ms (120 Hz budget)")
      ->default_str("8.333333")
      ->check(real_in(kMinTargetMs, kMaxTargetMs));
  sub->add_option("--size", o->size, "render target size, WxH pixels")->capture_default_str();
  sub->add_option("--form", o->form, "workload form")
      ->capture_default_str()
      ->check(CLI::IsMember({"compute", "fragment"}));
  sub->add_option("--device", o->device,
                  "device index or name substring (default: the backend's default device)");
  add_backend_option(sub, o->backend, BackendUse::any, "backend: vulkan, cuda, gl, sim");
  sub->add_option("--tolerance", o->tolerance, "accepted |median - target| / target")
      ->capture_default_str()
      ->check(real_in(0.0001, 0.5));
  sub->add_option("--max-evaluations", o->max_evaluations, "search + verification steps at most")
      ->capture_default_str()
      ->transform(unsigned_in(2, 1000));
  sub->add_option("--verify-frames", o->verify_frames, "measured frames of a verification")
      ->capture_default_str()
      ->transform(unsigned_in(1, 100000));
  sub->add_flag("--validation", o->validation, "Vulkan: enable the Khronos validation layer");
  sub->add_flag("--json", o->json, "print the report as JSON on stdout (progress goes to stderr)");
  sub->footer(kFooter);
  return {[o, desc] { return desc_of(*o, *desc) ? kExitOk : kExitUsage; },
          [o, desc] { return run(*o, *desc); }};
}

const RegisterCommand kRegister{{"calibrate-load", setup, 40}};

}  // namespace
}  // namespace latlab::cli
