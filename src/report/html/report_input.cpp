#include "report/html/report_input.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "latlab/latency_report.hpp"

namespace latlab {

Result<void> check_result_document(const nlohmann::ordered_json& doc, const std::string& label) {
  if (!doc.is_object()) return make_error(label + ": not a latlab result (not a JSON object)");
  const auto v = doc.find("schema_version");
  if (v == doc.end()) return make_error(label + ": not a latlab result (no schema_version)");
  if (!v->is_number_integer()) {
    return make_error(label + ": schema_version is not an integer: " + v->dump());
  }
  const auto version = v->get<int64_t>();
  if (version > kResultSchemaVersion) {
    return make_error(fmt::format(
        "{}: schema_version {} is newer than this latlab reads ({}); use a newer latlab", label,
        version, kResultSchemaVersion));
  }
  if (version < 1) return make_error(fmt::format("{}: unknown schema_version {}", label, version));
  const auto kind = doc.find("kind");
  if (kind == doc.end() || !kind->is_string() ||
      (*kind != "latency_run" && *kind != "performance_run")) {
    return make_error(label + ": kind is not \"latency_run\" or \"performance_run\"" +
                      (kind == doc.end() ? std::string() : ": " + kind->dump()));
  }
  const auto modes = doc.find("modes");
  if (modes == doc.end() || !modes->is_object()) {
    return make_error(label + ": no modes object");
  }
  return {};
}

Result<ReportInput> read_report_input(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return make_error(path + ": read failed");
  ReportInput r;
  const size_t slash = path.find_last_of('/');
  r.label = slash == std::string::npos ? path : path.substr(slash + 1);
  try {
    r.doc = nlohmann::ordered_json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    const bool truncated = e.byte >= text.str().size();
    return make_error(fmt::format("{}: not valid JSON{} (byte {} of {}): {}", path,
                                  truncated ? ", the file ends early (truncated?)" : "", e.byte,
                                  text.str().size(), e.what()));
  }
  if (Result<void> c = check_result_document(r.doc, path); !c) return c.error();
  return r;
}

}  // namespace latlab
