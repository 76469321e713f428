// JSON pieces that more than one document carries (the result of `latlab
// run`, its performance-only variant, `calibrate-load`, `clocks`, `devices`):
// each shape is written here once, so the documents cannot drift apart.
// Private to the report and the CLI, like result_json.hpp.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "latlab/bench/latency_report.hpp"
#include "latlab/bench/run_result.hpp"
#include "latlab/core/latency_device.hpp"

namespace latlab {

// "compute" or "fragment".
const char* form_name(WorkloadForm f);

// passes, complexity, width, height, form.
nlohmann::ordered_json workload_to_json(const FrameWorkload& w);

// hostname, os, kernel, arch, cpu_model, logical_cpus; os and cpu_model are
// null when unknown.
nlohmann::ordered_json machine_to_json(const MachineInfo& m);

// backend, name, driver: the head of every document's `device`; documents
// that say more append their keys after these.
nlohmann::ordered_json device_identity_to_json(const DeviceInfo& di);

// [{name, reason}, ...]: missing capabilities, or what was unavailable.
nlohmann::ordered_json capabilities_to_json(const std::vector<MissingCapability>& caps);

// The head of a result document: schema_version, kind, tool {name, version},
// created_utc, command_line, partial, partial_reason (null unless partial).
nlohmann::ordered_json result_header_to_json(const char* kind, const RunMeta& meta, bool partial,
                                             const std::string& partial_reason);

// One device's section of a several-device result (`per_device` of `clocks`
// and `devices_run.sections` of `run`): which device, its physical identity
// (null when unknown), whether it ran ("ok", "partial" or "failed") with the
// reason, and its own result (null when it has none).
nlohmann::ordered_json device_section_to_json(const DeviceSectionHead& head,
                                              const std::string& status, const std::string& failure,
                                              nlohmann::ordered_json result);

}  // namespace latlab
