#include "report/html/report_input.hpp"

#include "report/result_reader.hpp"

namespace latlab {

Result<ReportFile> read_report_input(const std::string& path) {
  Result<ResultDocument> read = read_result_file(path);
  if (!read) return read.error();
  const size_t slash = path.find_last_of('/');
  return ReportFile{slash == std::string::npos ? path : path.substr(slash + 1),
                    std::move(read->result)};
}

}  // namespace latlab
