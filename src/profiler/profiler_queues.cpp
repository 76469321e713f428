// Several queues on one host clock, and command-buffer zone names
// (latlab/profiler_queues.hpp).
#include "latlab/profiler_queues.hpp"

#include <array>
#include <string>
#include <utility>

namespace latlab {
namespace {

constexpr uint32_t kNamed = 64;

// "cmdbuf 0" .. "cmdbuf 63", built once, never freed (profiler frames keep
// the pointers).
const std::array<std::string, kNamed>& command_buffer_names() {
  static const std::array<std::string, kNamed> names = [] {
    std::array<std::string, kNamed> out;
    for (uint32_t i = 0; i < kNamed; ++i) out[i] = kCommandBufferZonePrefix + std::to_string(i);
    return out;
  }();
  return names;
}

}  // namespace

const char* command_buffer_zone_name(uint32_t n) {
  if (n >= kNamed) return "cmdbuf 64+";
  return command_buffer_names()[n].c_str();
}

GpuClockMapper queue_clock_mapper(std::function<std::shared_ptr<const ClockFit>()> fit_source,
                                  TickFormat queue_ticks) {
  return
      [source = std::move(fit_source), queue_ticks](uint64_t ticks) -> std::optional<MappedTime> {
        const std::shared_ptr<const ClockFit> fit = source ? source() : nullptr;
        if (!fit) return std::nullopt;
        if (queue_ticks.valid_bits >= fit->ticks.valid_bits) return fit->map(ticks);
        // The queue keeps fewer bits than the fit counts: unwrap around the
        // anchor in the queue's own width.
        const uint64_t mask = queue_ticks.mask();
        const uint64_t anchor = fit->anchor_device_ticks;
        const int64_t d = queue_ticks.signed_delta(anchor & mask, ticks & mask);
        return fit->map_unwrapped(anchor + static_cast<uint64_t>(d));
      };
}

}  // namespace latlab
