// The parking scripts of the lane protocol's tests (zone_lab.hpp): between
// them every thread of a warm lab is parked at every step its role reaches,
// thread kCloser being the one that closes frames.
#pragma once

#include <set>
#include <utility>
#include <vector>

#include "protocol/zone_lab.hpp"

namespace latlab::zone_lab {

inline constexpr int kCloser = 0;

// Scripts for a warm lab of `n` threads (closer kCloser).
std::vector<Script> park_scripts(int n);
// The (thread, step) pairs park_scripts(n) must between them have parked.
std::set<std::pair<int, ZoneStep>> expected_parks(int n);

// Runs each script in a lab of `config`; returns how many of them found
// problems (lab.check(no_drops)), adding a test failure for each of the
// first ten when `report`; adds where threads were parked to `parked`. A
// lab whose threads neither finish nor wait is a test failure (and ends
// the run).
int run_scripts(const LabConfig& config, const std::vector<Script>& scripts, bool no_drops,
                std::set<std::pair<int, ZoneStep>>& parked, bool report = true);

}  // namespace latlab::zone_lab
