// --report of `latlab compare` and `latlab history`: the page's path checked
// with the command's other files before any work (file_plan.hpp), and the
// page written through the one output writer. Private to apps/latlab.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace latlab::cli {

// The files of a command that writes a page.
struct PageFiles {
  std::string report;               // --report ("" = none)
  bool json = false;                // --json: standard output carries JSON
  std::vector<std::string> inputs;  // result files read
  // A store read ("" = the default location); nullopt: none.
  std::optional<std::string> store;
};

// kExitOk, or kExitUsage after "<command>: why" (nothing read or written).
int check_page_files(const char* command, const PageFiles& f);

// Writes `page` to `path` atomically (the previous file stays on failure) and
// says so, on stderr when standard output carries JSON or the page:
// kExitOk, or kExitWriteFailed after saying why.
int write_page(const char* command, const std::string& path, const std::string& page, bool json);

}  // namespace latlab::cli
