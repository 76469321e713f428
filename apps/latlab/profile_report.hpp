// What `latlab profile` prints, shared by its backends (profile.cpp: Vulkan,
// profile_cuda.cpp: CUDA): one JSON shape for the zone table, the counters
// and the clock fit, and the newest frame's tree.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "latlab/clock_model.hpp"
#include "latlab/profiler.hpp"

namespace latlab::cli {

// The zone table: one object per zone name, in first-seen order.
nlohmann::json profile_stats_json(const std::vector<ZoneStat>& stats);
// frames_collected, zones_ok, zones_dropped, zones_invalid, frames_without_queries.
nlohmann::json profile_counters_json(const ProfilerCounters& counters);
// pairs_used, drift_ppm, base_error_ns, estimated; null without a fit.
nlohmann::json profile_clock_fit_json(const std::shared_ptr<const ClockFit>& fit);
// Prints the tree of the newest retained frame with zones (the very last
// one closed is empty); nothing if none is retained.
void print_newest_frame_tree(const GpuProfiler& prof, const std::string& queue_name);

}  // namespace latlab::cli
