// `latlab devices`: GL devices through EGL (devices_gl.hpp). An absent value
// (no renderer, no timestamps) is null in JSON, never 0 or "".
#include "devices_gl.hpp"

#include <fmt/format.h>

#include "bench/physical_devices.hpp"
#include "report/json_parts.hpp"
#if LATLAB_HAVE_OPENGL
#include "latlab/opengl.hpp"
#endif

namespace latlab::cli {
namespace {

#if LATLAB_HAVE_OPENGL
nlohmann::json text_or_null(const std::string& s) {
  return s.empty() ? nlohmann::json() : nlohmann::json(s);
}

nlohmann::json to_json(const GlDeviceReport& d) {
  return {{"index", d.index},
          {"backend", std::string(backend_name(Backend::gl))},
          {"name", text_or_null(d.renderer)},
          {"platform", d.platform},
          {"egl_vendor", text_or_null(d.egl_vendor)},
          {"egl_version", text_or_null(d.egl_version)},
          {"drm_node", text_or_null(d.drm_node)},
          {"uuid", text_or_null(d.device_uuid)},
          {"pci_bus_id", text_or_null(pci_bus_id_of_drm_node(d.drm_node))},
          {"software", d.software},
          {"api", text_or_null(d.api)},
          {"vendor", text_or_null(d.vendor)},
          {"version", text_or_null(d.version)},
          {"glsl_version", text_or_null(d.glsl_version)},
          {"timer_query", d.timer_query},
          {"timer", text_or_null(d.timer)},
          {"timestamp_period_ns", d.timestamp_bits > 0 ? nlohmann::json(1) : nlohmann::json()},
          {"timestamp_bits",
           d.timestamp_bits > 0 ? nlohmann::json(d.timestamp_bits) : nlohmann::json()},
          {"disjoint_signal", d.disjoint_signal},
          {"compute_shaders", d.compute_shaders},
          {"khr_debug", d.khr_debug},
          {"missing", nlohmann::json(capabilities_to_json(d.missing))}};
}

std::string yes_no(bool b) { return b ? "yes" : "no"; }

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
        "mapping by bracketed "
        "reads\n",
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
  t += fmt::format("    compute shaders   {}   KHR_debug {}\n", yes_no(d.compute_shaders),
                   yes_no(d.khr_debug));
  if (d.missing.empty()) {
    t += "    missing           nothing\n";
  }
  for (size_t i = 0; i < d.missing.size(); ++i) {
    t += fmt::format("    {}{}: {}\n", i == 0 ? "missing           " : "                  ",
                     d.missing[i].name, d.missing[i].reason);
  }
  return t;
}
#endif

}  // namespace

GlListing list_gl() {
  GlListing out;
#if LATLAB_HAVE_OPENGL
  auto devices = enumerate_gl_devices();
  if (!devices) {
    out.unavailable = devices.error().message;
  } else if (devices->empty()) {
    out.unavailable =
        "EGL lists no device (install Mesa's EGL driver: apt install libegl-mesa0 libgl1-mesa-dri)";
  } else {
    for (const auto& d : *devices) {
      out.devices.push_back(to_json(d));
      out.table += to_text(d);
    }
  }
#else
  out.unavailable =
      "the GL backend is not built (configure with libegl-dev and libopengl-dev present)";
#endif
  if (!out.unavailable.empty()) out.table = "GL: unavailable: " + out.unavailable + "\n";
  return out;
}

}  // namespace latlab::cli
