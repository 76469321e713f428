// latlab store add RESULT.json [--store DB]: appends a result file to the
// results store (docs/store.md). Exit codes: 0 stored, 2 bad input (the file
// is not a valid result, the store cannot be opened or is of another schema
// version; nothing changed), 4 the store could not be written.
// latlab store migrate [--store DB]: upgrades a version 1 or 2 store in place
// (exit 2 when there is no store there; nothing is created).
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>

#include "cli_options.hpp"
#include "command.hpp"
#include "report/reporters/reporters.hpp"

namespace latlab::cli {
namespace {

struct StoreAddOptions {
  std::vector<std::string> files;
  std::string store;
};

// Before any work: the store has a location (the default one needs a home)
// and is none of the result files.
int check_store_add(const StoreAddOptions& o) {
  if (const int rc = store_location_exit("latlab store add", o.store); rc != kExitOk) return rc;
  FilePlan files;
  for (size_t i = 0; i < o.files.size(); ++i)
    files.input("result " + std::to_string(i + 1), o.files[i]);
  files.store("--store", o.store);
  if (Result<void> r = files.check(); !r) {
    std::fprintf(stderr, "latlab store add: %s\n", r.error().message.c_str());
    return kExitUsage;
  }
  return kExitOk;
}

// Runs what check_store_add() accepted.
int store_add(const StoreAddOptions& o) {
  // Every file is read and checked before the store is touched.
  std::vector<ResultDocument> results;
  for (const std::string& f : o.files) {
    Result<ResultDocument> r = read_result_file(f, ReadOptions{.per_frame = false});
    if (!r) {
      std::fprintf(stderr, "latlab store add: %s\n", r.error().message.c_str());
      return kExitUsage;
    }
    results.push_back(std::move(r.value()));
  }
  Result<std::unique_ptr<store::ResultsStore>> s =
      store::ResultsStore::open(o.store, store::ResultsStore::Access::append);
  if (!s) {
    std::fprintf(stderr, "latlab store add: %s\n", s.error().message.c_str());
    return kExitUsage;
  }
  WritesInterruptScope notice("latlab store add");
  for (size_t i = 0; i < results.size(); ++i) {
    notice.writing(o.files[i] + " into the store " + s.value()->name(),
                   "its append is rolled back: nothing of it is in the store");
    const ResultDocument& doc = results[i];
    Result<int64_t> id =
        s.value()->add(doc.result, store::StoredText{doc.text, doc.schema_version}, {});
    if (!id) {
      std::fprintf(stderr, "latlab store add: %s: %s\n", o.files[i].c_str(),
                   id.error().message.c_str());
      return kExitWriteFailed;
    }
    fmt::print("{}: stored as run {} in {}\n", o.files[i], id.value(), s.value()->name());
    std::fflush(stdout);
    notice.kept(o.files[i] + " as run " + std::to_string(id.value()));
  }
  return kExitOk;
}

// Opens the store for writing, which upgrades an older schema in place.
int store_migrate(const std::string& location) {
  Result<std::unique_ptr<store::ResultsStore>> s =
      store::ResultsStore::open(location, store::ResultsStore::Access::append);
  if (!s) {
    std::fprintf(stderr, "latlab store migrate: %s\n", s.error().message.c_str());
    return kExitUsage;
  }
  if (!s.value()->exists()) {
    std::fprintf(stderr,
                 "latlab store migrate: no results store at %s (nothing stored there yet)\n",
                 s.value()->name().c_str());
    return kExitUsage;
  }
  if (Result<void> r = s.value()->prepare_for_writes(); !r) {
    std::fprintf(stderr, "latlab store migrate: %s\n", r.error().message.c_str());
    return kExitWriteFailed;
  }
  if (const std::optional<int> from = s.value()->migrated_from()) {
    fmt::print("{}: upgraded from schema version {} to {}\n", s.value()->name(), *from,
               store::kStoreSchemaVersion);
  } else {
    fmt::print("{}: schema version {} already, nothing to do\n", s.value()->name(),
               store::kStoreSchemaVersion);
  }
  return kExitOk;
}

CommandRunner setup(CLI::App& app) {
  auto opts = std::make_shared<StoreAddOptions>();
  CLI::App* sub = app.add_subcommand("store", "The results store: add result files, upgrade it");
  sub->require_subcommand(1);
  CLI::App* migrate = sub->add_subcommand(
      "migrate", "Upgrade a store of an older schema version in place (one transaction)");
  auto migrate_store = std::make_shared<std::string>();
  migrate->add_option(
      "--store", *migrate_store,
      "SQLite file or postgresql:// URL (default: $XDG_DATA_HOME/latlab/results.db)");
  CLI::App* add = sub->add_subcommand("add", "Append result JSON files to the store");
  add->add_option("results", opts->files,
                  "Result files written by `latlab run` or `latlab capture`")
      ->required()
      ->check(CLI::ExistingFile);
  add->add_option("--store", opts->store,
                  "SQLite file or postgresql:// URL (default: $XDG_DATA_HOME/latlab/results.db)");
  auto check = [opts, add, migrate_store] {
    return add->parsed() ? check_store_add(*opts)
                         : store_location_exit("latlab store migrate", *migrate_store);
  };
  auto run = [opts, add, migrate_store] {
    if (add->parsed()) return store_add(*opts);
    return store_migrate(*migrate_store);
  };
  return {check, run};
}

const RegisterCommand kRegister{{"store", setup, 60}};

}  // namespace
}  // namespace latlab::cli
