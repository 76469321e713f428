// latlab run --present: see run_present.hpp.
#include "run_present.hpp"

#include <fmt/format.h>

#include "backend_table.hpp"
#include "cli_checks.hpp"
#include "latlab/bench/present_probe.hpp"

namespace latlab::cli {
void add_present_options(CLI::App* sub, RunOptions* opts) {
  sub->add_flag("--present", opts->present,
                "Vulkan: show every latency frame in a window (lowest-latency present mode) and "
                "time present and screen: on $WAYLAND_DISPLAY when set, the compositor's "
                "wp_presentation times; else on X11 ($DISPLAY), the X server framebuffer "
                "observer. Without a display, present is listed unavailable and the run goes on");
  sub->add_option("--present-poll-us", opts->present_poll_us,
                  "With --present: the framebuffer observer's polling period (us)")
      ->check(real_in(50.0, 100'000.0))
      ->capture_default_str();
  sub->add_option("--present-hold-ms", opts->present_hold_ms,
                  "With --present, a test knob: hold each frame's copy on the GPU this long after "
                  "the present call, so it reaches the screen that much later")
      ->check(real_in(0.0, 1000.0))
      ->capture_default_str();
}

PresentSetup probe_run_present(const RunCommand& c) {
  PresentSetup s;
  s.asked = c.present;
  if (!c.present) return s;
  if (!cli_backend(c.plan.backend).present) {
    s.unavailable = "the present path needs --backend vulkan (the " +
                    std::string(backend_name(c.plan.backend)) + " backend has no present path)";
    return s;
  }
  DeviceSelector sel{c.plan.backend, c.plan.device, false, true};
  if (Result<void> probe = probe_present_in_child(sel, c.present_desc); !probe) {
    s.probe_error = probe.error().message;
    s.unavailable = s.probe_error;
  }
  return s;
}

void open_run_present(const RunCommand& c, LatencyDevice& device, PresentSetup& setup,
                      std::FILE* info) {
  if (!setup.asked || !setup.unavailable.empty()) {
    if (setup.asked) fmt::print(info, "  present unavailable: {}\n", setup.unavailable);
    return;
  }
  Result<std::unique_ptr<PresentPath>> opened = device.open_present(c.present_desc);
  if (!opened) {
    setup.unavailable = opened.error().message;
    fmt::print(info, "  present unavailable: {}\n", setup.unavailable);
    return;
  }
  setup.path = std::move(opened.value());
  const PresentInfo pi = setup.path->info();
  fmt::print(info, "  present: {} mode (offered: {}), {} swapchain images, {}\n", pi.present_mode,
             fmt::join(pi.modes_offered, ", "), pi.swapchain_images, pi.surface);
  for (const ScreenObserverInfo& ob : pi.observers) {
    if (ob.available) {
      fmt::print(info, "  screen observer {}: polled every {} us\n", ob.name,
                 static_cast<double>(ob.poll_period_ns) / 1e3);
    }
  }
  if (c.present_desc.hold_ns > 0) {
    fmt::print(info,
               "  present hold: each frame's copy held {} ms after its present call (test knob)\n",
               static_cast<double>(c.present_desc.hold_ns) / 1e6);
  }
}

}  // namespace latlab::cli
