#include "page_files.hpp"

#include <fmt/format.h>

#include "command.hpp"
#include "core/output_file.hpp"
#include "file_plan.hpp"
#include "report/store/results_store.hpp"

namespace latlab::cli {

int check_page_files(const char* command, const PageFiles& f) {
  FilePlan files;
  for (size_t i = 0; i < f.inputs.size(); ++i)
    files.input("result " + std::to_string(i + 1), f.inputs[i]);
  // Read only: an input, so reading it twice is fine and writing it is not.
  if (f.store && !store::is_postgres_url(*f.store))
    files.input("--store", f.store->empty() ? store::default_store_location() : *f.store);
  files.output("--report", f.report);
  if (f.json && !f.report.empty()) files.output("--json (standard output)", "-");
  if (Result<void> r = files.check(); !r) {
    fmt::print(stderr, "{}: {}\n", command, r.error().message);
    return kExitUsage;
  }
  return kExitOk;
}

int write_page(const char* command, const std::string& path, const std::string& page, bool json) {
  if (Result<void> w = write_output_file(path, page); !w) {
    fmt::print(stderr, "{}: {}\n", command, w.error().message);
    return kExitWriteFailed;
  }
  fmt::print(json || names_stdout(path) ? stderr : stdout, "report written to {} ({} KiB)\n", path,
             (page.size() + 1023) / 1024);
  return kExitOk;
}

}  // namespace latlab::cli
