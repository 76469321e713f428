// What `latlab clocks` prints, from the typed clock studies
// (latlab/bench/clock_study.hpp, clock_studies.hpp): per device the text and
// the JSON document (docs/usage.md), and with several devices one section
// per device beside the first study's document, plus the cross-check.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "latlab/bench/clock_studies.hpp"
#include "latlab/bench/clock_study.hpp"
#include "latlab/bench/run_result.hpp"
#include "latlab/core/latency_device.hpp"

namespace latlab {

// The options a clocks document names under "settings".
struct ClocksSettings {
  std::string backend;
  std::string device;
  double seconds = 0.0;
  double interval_ms = 0.0;
  uint32_t samples = 0;
  uint32_t fresh = 0;
  uint32_t window = 0;
  std::optional<double> sim_drift_ppm;  // a simulated clock (tests)
};

// One device of a several-device study: its section head, and its study or
// why it has none.
struct ClocksDeviceSection {
  DeviceSectionHead head;
  const DeviceInfo* info = nullptr;          // null when the device did not open
  const ClockStudyResult* study = nullptr;   // null: `failure` says why
  std::string failure;
};

// The cross-check of the first two devices when it was asked for: its result,
// or why it was skipped.
struct ClocksCrossCheck {
  const Result<ClockCrossCheckResult>* result = nullptr;  // null: skipped
  std::string skipped;
};

// One device's study as text (several lines).
std::string clock_study_text(const DeviceInfo& info, const ClockStudyResult& r);
// One device's document, indented by 2.
std::string clock_study_json(const ClocksSettings& s, const DeviceInfo& info,
                             const ClockStudyResult& r);

// Several devices: the first studied device's document with `per_device`
// (one section each) and, when asked, `cross_check`; nullopt when no device
// was studied.
std::optional<std::string> clocks_devices_json(const ClocksSettings& s,
                                               std::span<const ClocksDeviceSection> sections,
                                               const ClocksCrossCheck* cross_check);
// The same as text: a heading and the study (or the failure) per section,
// then the cross-check's verdict when asked.
std::string clocks_devices_text(std::span<const ClocksDeviceSection> sections,
                                const ClocksCrossCheck* cross_check);

}  // namespace latlab
