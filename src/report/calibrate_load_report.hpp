// What `latlab calibrate-load` prints, from the typed calibration report
// (latlab/bench/load_calibration.hpp): the settings line, one line per
// search or verification step, the result as text, and the JSON document
// (schema latlab.calibrate_load/1, docs/load-calibration.md).
#pragma once

#include <string>
#include <string_view>

#include "latlab/bench/load_calibration.hpp"
#include "latlab/core/latency_device.hpp"

namespace latlab {

// "calibrate-load: device '...' (vulkan), target ... ms +/- ...%, ..." with a newline.
std::string calibrate_load_settings_text(const DeviceInfo& info, const LoadCalibrationDesc& desc,
                                         std::string_view form);
// "  #3  search complexity ... median ... ms (+1.20%) ..." without a newline.
std::string calibrate_load_step_line(const LoadCalibrationStep& s);
// The result: median, the verification's spread, outcome, timing noise.
std::string calibrate_load_result_text(const LoadCalibrationReport& r,
                                       const LoadCalibrationDesc& desc);
// The JSON document, indented by 2: the report as a run's result stores it,
// plus this command's settings and the device.
std::string calibrate_load_json(const LoadCalibrationReport& r, const LoadCalibrationDesc& desc,
                                const DeviceInfo& info);

}  // namespace latlab
