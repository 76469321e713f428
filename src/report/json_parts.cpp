#include "report/json_parts.hpp"

#include "report/result_fields.hpp"

namespace latlab {

using json = nlohmann::ordered_json;

const char* form_name(WorkloadForm f) {
  return f == WorkloadForm::fragment ? "fragment" : "compute";
}

json workload_to_json(const FrameWorkload& w) {
  return fields::write_object(w, fields::kWorkloadFields);
}

json machine_to_json(const MachineInfo& m) {
  return fields::write_object(m, fields::kMachineFields);
}

json device_identity_to_json(const DeviceInfo& di) {
  return fields::write_object(di, fields::kDeviceIdentityFields);
}

json capabilities_to_json(const std::vector<MissingCapability>& caps) {
  return fields::write_records<MissingCapability>(caps, fields::kCapabilityFields);
}

json result_header_to_json(const char* kind, const RunMeta& meta, bool partial,
                           const std::string& partial_reason) {
  json j;
  j["schema_version"] = kResultSchemaVersion;
  j["kind"] = kind;
  j["tool"] = {{"name", "latlab"}, {"version", meta.tool_version}};
  j["created_utc"] = meta.created_utc;
  j["command_line"] = meta.command_line;
  j["partial"] = partial;
  j["partial_reason"] = partial ? json(partial_reason) : json(nullptr);
  return j;
}

json device_section_to_json(const DeviceSectionHead& head, const std::string& status,
                            const std::string& failure, json result) {
  json j = fields::write_object(DeviceSectionResult{head, status, failure, {}, {}},
                                fields::kSectionFields);
  j["result"] = std::move(result);
  return j;
}

}  // namespace latlab
