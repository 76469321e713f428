#include <string>

#include "core/output_file.hpp"
#include "latlab/bench/latency_report.hpp"

namespace latlab {

Result<void> write_file_atomic(const std::string& path, std::string_view content) {
  return write_output_file(path, content);
}

}  // namespace latlab
