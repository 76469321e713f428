// The result reader: the document's head, device and settings
// (docs/result-schema.md, "Top level" to "settings"); the sections on a field
// table (result_fields.hpp) are read by their tables.
#include "report/result_fields.hpp"
#include "report/result_sections.hpp"

namespace latlab::reading {

PartialFlag read_head(const Obj& doc, RunMeta& meta) {
  meta.tool_version = doc.obj("tool").str("version");
  meta.created_utc = doc.str("created_utc");
  meta.command_line = doc.str("command_line");
  PartialFlag p;
  p.partial = doc.boolean("partial");
  p.reason = doc.str_or_empty("partial_reason");
  meta.machine = fields::read_object<MachineInfo>(doc.obj("machine"), fields::kMachineFields);
  return p;
}

std::vector<MissingCapability> read_capabilities(const json& a, const std::string& path) {
  return fields::read_records<MissingCapability>(a, path, fields::kCapabilityFields);
}

void read_settings(const Obj& s, RunMeta& meta, LatencyRun& run) {
  fields::read_fields(s, fields::kRunSettingsFields, meta);
  fields::read_fields(s, fields::kLatencySettingsFields, run);
}

}  // namespace latlab::reading
