// --report of `latlab compare` and `latlab history`: the page's path checked
// with the command's other files before any work (file_plan.hpp), and the
// page written through the one output writer.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "latlab/result.hpp"

namespace latlab {

// The files of a command that writes a page.
struct PageFiles {
  std::string report;               // --report ("" = none)
  bool json = false;                // --json: standard output carries JSON
  std::vector<std::string> inputs;  // result files read
  // A store read ("" = the default location); nullopt: none.
  std::optional<std::string> store;
};

// Every file checked together (nothing read or written); the error says why.
Result<void> check_page_files(const PageFiles& f);

// Writes `page` to `path` atomically (the previous file stays on failure)
// and says so on `said` ("report written to ..."); the error says why not.
Result<void> write_page(const std::string& path, const std::string& page, std::FILE* said);

}  // namespace latlab
