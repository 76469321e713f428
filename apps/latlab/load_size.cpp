// latlab run --load-size auto: the sizes tried, and how the choice is
// recorded. The choice itself is made in run_latency.cpp (calibrate_loaded).
#include <string>

#include "run_parts.hpp"

namespace latlab::cli {

const std::vector<std::pair<uint32_t, uint32_t>>& auto_load_sizes() {
  // 16:9, each step about half the pixels of the one before; 160x90 still
  // covers many GPU threads per pass.
  static const std::vector<std::pair<uint32_t, uint32_t>> sizes = {
      {1920, 1080}, {1280, 720}, {960, 540}, {640, 360}, {320, 180}, {160, 90}};
  return sizes;
}

bool target_below_reach(const Error& e) {
  // The wording of calibrate_load's "target below the range" error
  // (src/latency/load_calibration.cpp); tests/e2e/load_size_test.cpp checks
  // that an unreachable 1920x1080 falls back to a smaller size.
  return e.message.find("is below the lowest reachable GPU time") != std::string::npos;
}

nlohmann::ordered_json load_size_to_json(const LoadSizeChoice& c) {
  nlohmann::ordered_json tried = nlohmann::ordered_json::array();
  for (const auto& [size, why] : c.tried) tried.push_back({{"size", size}, {"reason", why}});
  return {{"asked", c.asked},
          {"used", c.used.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.used)},
          {"why", c.why},
          {"tried", std::move(tried)}};
}

}  // namespace latlab::cli
