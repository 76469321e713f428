// The checks of shared options (cli_options.hpp).
#include "cli_options.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli_values.hpp"
#include "command.hpp"

namespace latlab::cli {

CLI::Validator real_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        if (parse_real(text, lo, hi)) return {};
        return fmt::format("'{}' is not a finite decimal number in {}..{}", text, lo, hi);
      },
      fmt::format("in [{} - {}]", lo, hi), "real_in");
}

CLI::Validator whole_in(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        const auto v = parse_whole(text, lo, hi);
        if (!v) {
          return fmt::format("'{}' is not a whole number in {}..{} (decimal digits only)", text, lo,
                             hi);
        }
        text = std::to_string(*v);
        return {};
      },
      fmt::format("in [{} - {}]", lo, hi), "whole_in");
}

CLI::Validator unsigned_in(uint64_t lo, uint64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        const auto v = parse_unsigned(text, lo, hi);
        if (!v) {
          return fmt::format("'{}' is not a whole number in {}..{} (decimal digits only)", text, lo,
                             hi);
        }
        text = std::to_string(*v);
        return {};
      },
      fmt::format("in [{} - {}]", lo, hi), "unsigned_in");
}

Result<void> check_store_location(const std::string& store) {
  if (!store.empty()) return {};
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg != nullptr && xdg[0] == '/') return {};
  const char* home = std::getenv("HOME");
  struct stat st {};
  if (home != nullptr && home[0] == '/' && stat(home, &st) == 0 && S_ISDIR(st.st_mode)) return {};
  return make_error(fmt::format(
      "no default results store: XDG_DATA_HOME is {} and HOME is {}; pass --store FILE (a SQLite "
      "file) or --store postgresql://...",
      xdg == nullptr ? "unset" : fmt::format("'{}' (not an absolute path)", xdg),
      home == nullptr ? "unset" : fmt::format("'{}' (not an existing directory)", home)));
}

int store_location_exit(const char* command, const std::string& store) {
  if (Result<void> s = check_store_location(store); !s) {
    std::fprintf(stderr, "%s: %s\n", command, s.error().message.c_str());
    return kExitUsage;
  }
  return kExitOk;
}

namespace {

bool accepts(BackendUse use, const BackendInfo& b) {
  return use == BackendUse::any || b.open_profile_rig != nullptr;
}

// The backends `use` accepts, built or not, joined by `sep`.
std::string accepted_names(BackendUse use, const char* sep, bool built_only) {
  std::string out;
  for (const BackendInfo& b : backends()) {
    if (!accepts(use, b) || (built_only && !b.built)) continue;
    if (!out.empty()) out += sep;
    out += b.name;
  }
  return out;
}

}  // namespace

CLI::Option* add_backend_option(CLI::App* app, Backend& backend, BackendUse use,
                                const std::string& help, const std::string& flags) {
  const std::string choices = "{" + accepted_names(use, ",", false) + "}";
  const CLI::Validator check(
      [use, choices](std::string& name) -> std::string {
        const Result<Backend> b = parse_backend(name);
        if (!b) {
          return "unknown backend '" + name +
                 "'; this build has: " + accepted_names(use, ", ", true);
        }
        // The CLI takes each backend by its one name (the library also takes
        // aliases).
        if (!accepts(use, backend_info(*b)) || name != backend_name(*b))
          return name + " not in " + choices;
        return "";
      },
      choices);
  return app
      ->add_option_function<std::string>(
          flags, [&backend](const std::string& name) { backend = *parse_backend(name); }, help)
      ->default_str(std::string(backend_name(backend)))
      ->check(check);
}

}  // namespace latlab::cli
