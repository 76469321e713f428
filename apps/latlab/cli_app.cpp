// The latlab command line (cli_app.hpp).
#include "cli_app.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>

#include "latlab/version.hpp"

namespace latlab::cli {

std::vector<Command>& command_registry() {
  static std::vector<Command> registry;
  return registry;
}

namespace {

// Edit distance with a swap of neighbours as one edit (optimal string
// alignment); the names are short, so the full table is cheap.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// "--name" and "-n" of every option of `app` and of its subcommands.
void option_names(const CLI::App* app, std::vector<std::string>& out) {
  for (const CLI::Option* o : app->get_options()) {
    for (const std::string& l : o->get_lnames()) out.push_back("--" + l);
    for (const std::string& s : o->get_snames()) out.push_back("-" + s);
  }
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
    option_names(sub, out);
  }
}

// The innermost subcommand the parse reached ("" and `app` itself when none).
const CLI::App* innermost(const CLI::App& app, std::string& path) {
  const CLI::App* at = &app;
  for (;;) {
    const std::vector<CLI::App*> parsed = at->get_subcommands();
    if (parsed.empty()) return at;
    at = parsed.front();
    path += " " + at->get_name();
  }
}

// After CLI11's message on arguments it did not expect: the nearest known
// option of the subcommand for each unknown one that looks like a typo.
void suggest_options(const CLI::App& app) {
  std::string path = "latlab";
  const CLI::App* sub = innermost(app, path);
  std::vector<std::string> known;
  option_names(sub, known);
  if (sub != &app) option_names(&app, known);
  for (const std::string& arg : app.remaining(true)) {
    if (arg.size() < 2 || arg[0] != '-') continue;
    const std::string typed = arg.substr(0, arg.find('='));
    const std::string near = nearest_name(typed, known);
    if (!near.empty()) {
      std::fprintf(stderr, "%s: unknown option '%s'; did you mean '%s'?\n", path.c_str(),
                   typed.c_str(), near.c_str());
    }
  }
  // A command that runs a program (capture): its options were read as
  // latlab's because no "--" came before them.
  for (const CLI::Option* o : sub->get_options()) {
    if (o->get_positional() && o->get_name(true) == "program") {
      std::fprintf(stderr,
                   "%s: the program's own options need '--' before the program: %s [OPTIONS] -- "
                   "PROGRAM ARGS...\n",
                   path.c_str(), path.c_str());
      break;
    }
  }
}

}  // namespace

std::string own_command_line() {
  std::FILE* f = std::fopen("/proc/self/cmdline", "rb");
  if (f == nullptr) return "";
  std::string s;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  for (char& ch : s) {
    if (ch == '\0') ch = ' ';
  }
  return s;
}

std::string nearest_name(const std::string& typed, const std::vector<std::string>& known) {
  std::string best;
  size_t best_d = 3;  // at most 2 edits
  bool tie = false;
  for (const std::string& k : known) {
    const size_t d = edit_distance(typed, k);
    if (d < best_d) {
      best = k;
      best_d = d;
      tie = false;
    } else if (d == best_d && k != best) {
      tie = true;
    }
  }
  if (best.empty() || tie || 2 * best_d >= typed.size()) return "";
  return best;
}

Cli::Cli() : app_{"latlab: measures GPU work and frame latency on Linux, precisely and honestly"} {
  app_.require_subcommand(1);
  app_.set_version_flag("--version", "latlab " LATLAB_VERSION_STRING);
  std::vector<Command>& registry = command_registry();
  std::stable_sort(registry.begin(), registry.end(),
                   [](const Command& a, const Command& b) { return a.order < b.order; });
  for (Command& c : registry) {
    const size_t before = app_.get_subcommands({}).size();
    CommandRunner runner = c.setup(app_);
    const std::vector<CLI::App*> subs = app_.get_subcommands({});
    if (subs.size() > before) runners_.emplace_back(subs.back(), std::move(runner));
  }
}

std::optional<int> Cli::parse_and_check(int argc, const char* const* argv) {
  chosen_ = nullptr;
  // CLI11 reads an unknown first word as a missing subcommand ("A
  // subcommand is required"); say what it is instead.
  if (argc > 1 && argv[1][0] != '-') {
    const std::string word = argv[1];
    std::vector<std::string> names;
    for (const auto& [sub, runner] : runners_) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), word) == names.end()) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      const std::string near = nearest_name(word, names);
      std::fprintf(stderr, "latlab: unknown command '%s'%s; the commands are %s (latlab --help)\n",
                   word.c_str(), near.empty() ? "" : (" (did you mean '" + near + "'?)").c_str(),
                   list.c_str());
      return kExitUsage;
    }
  }
  try {
    app_.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app_.exit(e);
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) suggest_options(app_);
    return rc == 0 ? kExitOk : kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "latlab: error: %s\n", e.what());
    return kExitUsage;
  }
  for (auto& [sub, runner] : runners_) {
    if (!sub->parsed()) continue;
    if (runner.check) {
      try {
        if (const int rc = runner.check(); rc != kExitOk) return rc;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "latlab: error: %s\n", e.what());
        return kExitRunFailed;
      }
    }
    chosen_ = &runner;
    return std::nullopt;
  }
  return kExitUsage;
}

int Cli::run() {
  if (chosen_ == nullptr) return kExitUsage;
  try {
    return chosen_->run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "latlab: error: %s\n", e.what());
    return kExitRunFailed;
  }
}

}  // namespace latlab::cli
