#include "report/page_files.hpp"

#include <fmt/format.h>

#include "core/output_file.hpp"
#include "report/file_plan.hpp"

namespace latlab {

Result<void> check_page_files(const PageFiles& f) {
  FilePlan files;
  for (size_t i = 0; i < f.inputs.size(); ++i)
    files.input("result " + std::to_string(i + 1), f.inputs[i]);
  // Read only: an input, so reading it twice is fine and writing it is not.
  if (f.store && !store::is_postgres_url(*f.store))
    files.input("--store", f.store->empty() ? store::default_store_location() : *f.store);
  files.output("--report", f.report);
  if (f.json && !f.report.empty()) files.output("--json (standard output)", "-");
  return files.check();
}

Result<void> write_page(const std::string& path, const std::string& page, std::FILE* said) {
  if (Result<void> w = write_output_file(path, page); !w) return w;
  fmt::print(said, "report written to {} ({} KiB)\n", path, (page.size() + 1023) / 1024);
  return {};
}

}  // namespace latlab
