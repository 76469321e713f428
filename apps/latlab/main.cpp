// latlab: GPU timing and frame latency on Linux. See docs/usage.md.
#include <optional>

#include "cli_app.hpp"

int main(int argc, char** argv) {
  latlab::cli::Cli cli;
  if (const std::optional<int> rc = cli.parse_and_check(argc, argv)) return *rc;
  return cli.run();
}
