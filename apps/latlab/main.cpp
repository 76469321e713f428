// latlab: GPU timing and frame latency on Linux. See docs/usage.md.
#include <algorithm>
#include <cstdio>
#include <exception>

#include "command.hpp"
#include "latlab/version.hpp"

namespace latlab::cli {
std::vector<Command>& command_registry() {
  static std::vector<Command> registry;
  return registry;
}
}  // namespace latlab::cli

int main(int argc, char** argv) {
  using namespace latlab::cli;
  CLI::App app{"latlab: measures GPU work and frame latency on Linux, precisely and honestly"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "latlab " LATLAB_VERSION_STRING);
  auto& registry = command_registry();
  std::sort(registry.begin(), registry.end(),
            [](const Command& a, const Command& b) { return a.order < b.order; });
  std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
  for (auto& c : registry) {
    const size_t before = app.get_subcommands({}).size();
    auto runner = c.setup(app);
    auto subs = app.get_subcommands({});
    if (subs.size() > before) runners.emplace_back(subs.back(), std::move(runner));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  try {
    for (auto& [sub, run] : runners) {
      if (sub->parsed()) return run();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "latlab: error: %s\n", e.what());
    return kExitRunFailed;
  }
  return kExitUsage;
}
