// Zones on several queues, and the time of each command buffer.
//
// One GpuProfiler per queue (each on its own TimestampSlots: a queue family's
// timestamps have their own valid bits), all mapped to the one host clock
// through the device's clock model: queue_clock_mapper below. Each profiler
// is its own track in tables and traces (GpuProfilerDesc::name).
//
// Command buffers: LATLAB_GPU_COMMAND_BUFFER(profiler, cmd, "upload") opens
// a zone named "cmdbuf upload" that should enclose everything recorded into
// `cmd` (open it right after vkBeginCommandBuffer, in the outermost scope):
// the command buffer's own begin/end pair and its own line in the stat table
// and the trace. Unnamed command buffers take command_buffer_zone_name(n)
// ("cmdbuf 0", "cmdbuf 1", ...). is_command_buffer_zone() tells such zones
// apart from the user's.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include "latlab/clock_model.hpp"
#include "latlab/profiler.hpp"
#include "latlab/tick_format.hpp"

namespace latlab {

// Zone names of command buffers start with this.
inline constexpr const char* kCommandBufferZonePrefix = "cmdbuf ";

// True for a zone name made by LATLAB_GPU_COMMAND_BUFFER or
// command_buffer_zone_name. `name` may be null (false).
inline bool is_command_buffer_zone(const char* name) {
  return name != nullptr && std::strncmp(name, kCommandBufferZonePrefix, 7) == 0;
}

// "cmdbuf <n>" as a static string (zone names are stored, not copied);
// n >= 64 shares the name "cmdbuf 64+".
const char* command_buffer_zone_name(uint32_t n);

// Device ticks of one queue -> host clock through the device's newest clock
// fit (`fit_source`, e.g. a Calibrator's fit()), for a queue whose
// timestamps keep `queue_ticks.valid_bits` bits: a tick is taken as the
// value nearest the fit's anchor whose low valid bits it holds, then mapped.
// So a 32-bit queue (wrapping every 4.3 s at 1 ns) maps right while its
// timestamps lie within half a wrap of the anchor (the calibrator refreshes
// it every second). nullopt before the first fit. The fit must count the
// device's full-width ticks (valid bits >= the queue's).
GpuClockMapper queue_clock_mapper(std::function<std::shared_ptr<const ClockFit>()> fit_source,
                                  TickFormat queue_ticks);

}  // namespace latlab

// A zone named "cmdbuf <name>" (a string literal) around the whole command
// buffer `stream`; same arguments as LATLAB_GPU_ZONE.
#define LATLAB_GPU_COMMAND_BUFFER(profiler, stream, name) \
  LATLAB_GPU_ZONE(profiler, stream, "cmdbuf " name)
