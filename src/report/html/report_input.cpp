#include "report/html/report_input.hpp"

#include <fmt/format.h>

#include "report/result_reader.hpp"

namespace latlab {

Result<ReportInput> read_report_input(const std::string& path) {
  Result<ReadResult> read = read_result_file(path);
  if (!read) return read.error();
  ReportInput r;
  const size_t slash = path.find_last_of('/');
  r.label = slash == std::string::npos ? path : path.substr(slash + 1);
  try {
    // The reader parsed this text already; parsing it once more keeps the
    // store's model free of the JSON library's types.
    r.doc = nlohmann::ordered_json::parse(read->text);
  } catch (const nlohmann::json::parse_error& e) {
    return make_error(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
  return r;
}

}  // namespace latlab
