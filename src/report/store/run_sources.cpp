#include "report/store/run_sources.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "report/result_reader.hpp"

namespace latlab {
namespace {

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() < 19 && s.find_first_not_of("0123456789") == std::string::npos;
}

Result<RunSource> parse_run_source(const std::string& arg) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(arg, ec)) return RunSource{arg};
  if (all_digits(arg)) return RunSource{"", std::stoll(arg), std::stoll(arg)};
  const size_t dash = arg.find('-');
  if (dash != std::string::npos && all_digits(arg.substr(0, dash)) &&
      all_digits(arg.substr(dash + 1))) {
    const int64_t first = std::stoll(arg.substr(0, dash)), last = std::stoll(arg.substr(dash + 1));
    if (last < first) return make_error(fmt::format("'{}': the range ends before it starts", arg));
    if (last - first >= kMaxRunRange)
      return make_error(fmt::format("'{}': a range names at most {} runs", arg, kMaxRunRange));
    return RunSource{"", first, last};
  }
  return make_error(fmt::format(
      "'{}' is neither a result file, a run id nor a range of run ids (12-14) of the store", arg));
}

// A several-device run (`devices_run`): the section `how` names, or the
// top-level device with a note saying so.
Result<RunResult> pick_section(Result<RunResult> r, const std::string& name,
                               const RunLoading& how) {
  if (!r) return r;
  if (how.section >= 0) {
    Result<RunResult> picked = select_device_section(r.value(), static_cast<uint32_t>(how.section));
    if (!picked)
      return make_error(fmt::format("--section {}: {}", how.section, picked.error().message));
    return picked;
  }
  if (r->sections.size() > 1 && how.note) {
    const RunResult& top = r->top_level();
    how.note(fmt::format(
        "{} holds {} device sections; comparing its top-level device (section {}: {}); choose "
        "another with --section N",
        name, r->sections.size(), r->top_section.value_or(0), top.device.name));
  }
  return r;
}

Result<RunResult> read_run(const std::string& path) {
  Result<ResultDocument> doc = read_result_file(path, ReadOptions{.per_frame = false});
  if (!doc) return doc.error();
  return std::move(doc->result);
}

}  // namespace

Result<std::vector<RunSource>> parse_run_sources(const std::vector<std::string>& args) {
  std::vector<RunSource> out;
  for (const std::string& arg : args) {
    Result<RunSource> source = parse_run_source(arg);
    if (!source) return source.error();
    out.push_back(std::move(source.value()));
  }
  return out;
}

Result<LoadedRuns> load_runs(const std::vector<RunSource>& sources, const RunLoading& how,
                             std::unique_ptr<store::ResultsStore>& store) {
  LoadedRuns out;
  for (const RunSource& source : sources) {
    if (!source.file.empty()) {
      Result<RunResult> r = pick_section(read_run(source.file), source.file, how);
      if (!r) return r.error();
      out.runs.push_back(std::move(r.value()));
      out.names.push_back(source.file);
      continue;
    }
    if (!store) {
      Result<std::unique_ptr<store::ResultsStore>> opened =
          store::ResultsStore::open(how.store_path, store::ResultsStore::Access::read);
      if (!opened) return opened.error();
      store = std::move(opened.value());
    }
    for (int64_t id = source.first; id <= source.last; ++id) {
      const std::string name = fmt::format("run {}", id);
      Result<RunResult> r = pick_section(store->load(id), name, how);
      if (!r) return r.error();
      out.runs.push_back(std::move(r.value()));
      out.names.push_back(name);
    }
  }
  return out;
}

}  // namespace latlab
