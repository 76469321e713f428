// The table of `latlab devices` (devices_report.hpp).
#include <fmt/format.h>

#include "report/devices_report.hpp"
#include "report/physical_devices_json.hpp"

namespace latlab {
namespace {

std::string missing_text(const std::vector<MissingCapability>& missing) {
  if (missing.empty()) return "    missing           nothing\n";
  std::string t;
  for (size_t i = 0; i < missing.size(); ++i) {
    t += fmt::format("    {}{}: {}\n", i == 0 ? "missing           " : "                  ",
                     missing[i].name, missing[i].reason);
  }
  return t;
}

std::string to_text(const VulkanDeviceReport& d) {
  std::string t = fmt::format("[{}] {} ({}, Vulkan {})\n", d.index, d.name, d.type,
                              d.api_version_text);
  if (!d.driver_name.empty())
    t += fmt::format("    driver            {} {}\n", d.driver_name, d.driver_info);
  t += fmt::format("    timestamp period  {} ns/tick{}\n", d.timestamp_period_ns,
                   d.timestamp_compute_and_graphics ? "" : " (not on every graphics/compute queue)");
  t += "    queue families    ";
  for (size_t i = 0; i < d.queue_families.size(); ++i) {
    const auto& q = d.queue_families[i];
    t += fmt::format("{}#{} {} x{}: {} valid bits\n", i == 0 ? "" : "                      ",
                     q.index, q.flags_text, q.queue_count, q.timestamp_valid_bits);
  }
  t += fmt::format("    host query reset  {}\n", d.host_query_reset ? "yes" : "no");
  std::string domains;
  for (const auto& name : d.time_domains) domains += (domains.empty() ? "" : ", ") + name;
  t += fmt::format("    time domains      {}\n", d.calibrated_timestamps
                                                   ? (domains.empty() ? "(none)" : domains)
                                                   : "(no VK_EXT_calibrated_timestamps)");
  return t + missing_text(d.missing);
}

std::string to_text(const CudaDeviceReport& d) {
  std::string t = fmt::format(
      "[cuda {}] {} (compute capability {}.{}, {} SMs, {:.1f} GiB)\n", d.index, d.name, d.cc_major,
      d.cc_minor, d.sm_count, static_cast<double>(d.total_memory_bytes) / (1024.0 * 1024.0 * 1024.0));
  t += fmt::format("    driver            CUDA {} (runtime {})\n",
                   format_cuda_version(d.driver_version), format_cuda_version(d.runtime_version));
  t += "    timestamps        %globaltimer, 1 ns/tick, 64 bits; host mapping by bracketed reads\n";
  return t + missing_text(d.missing);
}

std::string to_text(const GlDeviceReport& d) {
  std::string t = fmt::format("[gl {}] {} ({}{}, EGL {} {}{})\n", d.index,
                              d.renderer.empty() ? "(no context)" : d.renderer, d.api,
                              d.version.empty() ? "" : " " + d.version, d.egl_version, d.egl_vendor,
                              d.software ? ", software" : "");
  t += fmt::format("    platform          {}{}\n", d.platform,
                   d.drm_node.empty() ? "" : " (" + d.drm_node + ")");
  if (d.timestamp_bits > 0) {
    t += fmt::format(
        "    timestamps        GL_TIMESTAMP, 1 ns/tick, {} bits (GL_QUERY_COUNTER_BITS); host "
        "mapping by bracketed reads\n",
        d.timestamp_bits);
  } else {
    t += "    timestamps        none\n";
  }
  if (d.timer == "GL_TIME_ELAPSED") {
    t += "    timer             GL_TIME_ELAPSED: durations only (no host mapping, nested spans not "
         "timed)\n";
  } else {
    t += fmt::format("    timer             {}\n", d.timer.empty() ? "none" : d.timer);
  }
  t += fmt::format("    disjoint signal   {}\n", d.disjoint_signal ? "GL_GPU_DISJOINT_EXT" : "no");
  t += fmt::format("    compute shaders   {}   KHR_debug {}\n", d.compute_shaders ? "yes" : "no",
                   d.khr_debug ? "yes" : "no");
  return t + missing_text(d.missing);
}

// Each device of one API, or "API: unavailable: why".
template <class Report>
std::string api_text(const char* api, const std::vector<Report>& devices, const std::string& why) {
  std::string t = why.empty() ? "" : fmt::format("{}: unavailable: {}\n", api, why);
  for (const Report& d : devices) t += to_text(d);
  return t;
}

}  // namespace

std::string devices_text(const DeviceListing& listing) {
  return api_text("Vulkan", listing.vulkan, listing.vulkan_unavailable) +
         api_text("CUDA", listing.cuda, listing.cuda_unavailable) +
         api_text("GL", listing.gl, listing.gl_unavailable) +
         physical_devices_text(listing.physical);
}

}  // namespace latlab
