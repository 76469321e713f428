// latlab run: the result of a latency run: JSON document, table, files,
// validation findings and the exit code.
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <utility>

#include "command.hpp"
#include "file_plan.hpp"
#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/vulkan.hpp"
#if LATLAB_HAVE_OPENGL
#include "latlab/bench/gl_rig.hpp"
#include "latlab/opengl.hpp"
#endif
#include "report/html/report_html.hpp"
#include "run_parts.hpp"

namespace latlab::cli {
namespace {

// The validation layer's findings of a Vulkan device run with --validation.
std::optional<ValidationReport> validation_report(const RunOptions& o,
                                                  const LatencyDevice& device) {
#if LATLAB_HAVE_OPENGL
  // GL: KHR_debug's errors and high-severity messages (--validation).
  if (const auto* gl = dynamic_cast<const GlLatencyDevice*>(&device);
      gl != nullptr && o.validation) {
    return ValidationReport{gl->context().debug_error_count(), gl->context().debug_messages()};
  }
#endif
  const auto* vk = dynamic_cast<const VulkanLatencyDevice*>(&device);
  if (vk == nullptr || !o.validation) return std::nullopt;
  ValidationReport v;
  v.error_count = vk->context().validation_error_count();
  v.messages = vk->context().validation_messages();
  return v;
}

// The result document: the run, plus Loaded's calibration and Performance
// (or why they are unavailable).
nlohmann::ordered_json result_json(const RunOptions& o, const RunPlan& plan, const LatencyRun& run,
                                   const LoadedSetup& loaded, const PerformanceOutcome& perf,
                                   const RunMeta& meta) {
  nlohmann::ordered_json doc = latency_run_to_json(run, meta);
  if (o.per_frame || !o.report.empty()) doc["per_frame"] = per_frame_to_json(run);
  if (plan.want_loaded) {
    if (loaded.calibration) {
      doc["load_calibration"] = load_calibration_to_json(*loaded.calibration);
      doc["load_calibration"]["source"] = "calibrated";
      doc["load_calibration"]["size"] = load_size_to_json(loaded.size);
    } else if (o.load_complexity > 0) {
      doc["load_calibration"] = {{"source", "given"},
                                 {"complexity", o.load_complexity},
                                 {"size", load_size_to_json(loaded.size)}};
    } else {
      doc["load_calibration"] = nullptr;
    }
    if (!loaded.runs) {
      doc["modes"]["loaded"] = {{"available", false}, {"reason", loaded.unavailable}};
      if (!loaded.size.asked.empty())
        doc["modes"]["loaded"]["load_size"] = load_size_to_json(loaded.size);
      doc["unavailable"].push_back({{"name", "loaded"}, {"reason", loaded.unavailable}});
    }
  }
  if (plan.want_perf) {
    if (perf.report) {
      doc["modes"]["performance"] = performance_to_json(*perf.report);
    } else {
      doc["modes"]["performance"] = {{"available", false}, {"reason", perf.unavailable}};
      doc["unavailable"].push_back({{"name", "performance"}, {"reason", perf.unavailable}});
    }
    if (!run.partial && !perf.interrupted.empty()) {  // Ctrl-C in Performance, after the blocks
      doc["partial"] = true;
      doc["partial_reason"] = perf.interrupted;
    }
  }
  return doc;
}

// What an interrupt leaves of a file being written.
constexpr const char* kFileIfCut =
    "it keeps its previous contents; a temporary .latlab-XXXXXX beside it may remain";

// The per-stage table and what was unavailable, on `table` (stdout, or
// stderr when an output writes to stdout).
void print_summary(const RunPlan& plan, const LatencyRun& run, const LoadedSetup& loaded,
                   const PerformanceOutcome& perf, std::FILE* table) {
  std::fputs(format_run_table(run).c_str(), table);
  if (plan.want_loaded && !loaded.runs)
    std::fprintf(table, "  Loaded unavailable: %s\n", loaded.unavailable.c_str());
  if (perf.report) std::fputs(format_performance(*perf.report).c_str(), table);
  if (plan.want_perf && !perf.report)
    std::fprintf(table, "  Performance unavailable: %s\n", perf.unavailable.c_str());
}

// Writes --out, --frames-csv and --report; returns false when one could not
// be written.
bool write_outputs(const RunOptions& o, const LatencyRun& run, const nlohmann::ordered_json& doc,
                   std::FILE* info, WritesInterruptScope& notice) {
  bool ok = true;
  if (!o.out.empty()) {
    notice.writing("the result '" + o.out + "'", kFileIfCut);
    if (write_result_json(o.out, doc, info, run.partial ? " (partial)" : "")) {
      notice.kept("the result '" + o.out + "'");
    } else {
      ok = false;
    }
  }
  if (!o.frames_csv.empty()) {
    notice.writing("the per-frame markers '" + o.frames_csv + "'", kFileIfCut);
    if (Result<void> w = write_frames_csv(o.frames_csv, run); !w) {
      std::fprintf(stderr, "latlab run: %s\n", w.error().message.c_str());
      ok = false;
    } else {
      fmt::print(info, "per-frame markers written to {}\n", o.frames_csv);
      notice.kept("the per-frame markers '" + o.frames_csv + "'");
    }
  }
  if (!o.report.empty()) {
    notice.writing("the report '" + o.report + "'", kFileIfCut);
    const ReportInput in{o.out.empty() ? std::string("latlab run") : o.out, doc};
    if (Result<void> w = write_html_report(o.report, std::span(&in, 1)); !w) {
      std::fprintf(stderr, "latlab run: report: %s\n", w.error().message.c_str());
      ok = false;
    } else {
      fmt::print(info, "report written to {}\n", o.report);
      notice.kept("the report '" + o.report + "'");
    }
  }
  return ok;
}

// Prints the validation findings; returns whether the layer reported errors.
bool print_validation(const ValidationReport& v, std::FILE* info) {
  fmt::print(info, "validation errors: {}\n", v.error_count);
  if (v.error_count == 0) return false;
  for (const std::string& m : v.messages) std::fprintf(stderr, "  %s\n", m.c_str());
  std::fprintf(stderr, "latlab run: the Vulkan validation layer reported %llu errors\n",
               static_cast<unsigned long long>(v.error_count));
  return true;
}

}  // namespace

bool run_outputs_take_stdout(const RunOptions& o) {
  return names_stdout(o.out) || names_stdout(o.frames_csv) || names_stdout(o.report);
}

Result<void> check_run_files(const RunOptions& o) {
  FilePlan files;
  files.output("--out", o.out);
  files.output("--frames-csv", o.frames_csv);
  files.output("--report", o.report);
  if (o.json) files.output("--json (standard output)", "-");
  if (o.use_store) files.store("--store", o.store);
  return files.check();
}

nlohmann::ordered_json latency_result_doc(const RunOptions& o, const RunPlan& plan,
                                          const LatencyRun& run, const LoadedSetup& loaded,
                                          const LatencyDevice& device, RunMeta meta) {
  meta.validation = validation_report(o, device);
  return result_json(o, plan, run, loaded, PerformanceOutcome{}, meta);
}

bool write_result_json(const std::string& path, const nlohmann::ordered_json& doc, std::FILE* info,
                       const char* suffix) {
  if (Result<void> w = write_file_atomic(path, doc.dump(2) + "\n"); !w) {
    std::fprintf(stderr, "latlab run: %s\n", w.error().message.c_str());
    return false;
  }
  fmt::print(info, "result written to {}{}\n", path, suffix);
  return true;
}

int report_latency_run(const RunOptions& o, const RunPlan& plan, const LatencyRun& run,
                       const LoadedSetup& loaded, const PerformanceOutcome& perf,
                       const LatencyDevice& device, RunMeta meta, std::FILE* info,
                       store::ResultsStore* store) {
  meta.validation = validation_report(o, device);
  const nlohmann::ordered_json doc = result_json(o, plan, run, loaded, perf, meta);
  if (o.json) {
    std::printf("%s\n", doc.dump(2).c_str());
  } else {
    print_summary(plan, run, loaded, perf, run_outputs_take_stdout(o) ? stderr : stdout);
  }
  int rc = run.partial || !perf.interrupted.empty() ? kExitRunFailed : kExitOk;
  if (plan.want_perf && !perf.report && !run.partial) rc = kExitRunFailed;
  std::fflush(nullptr);  // the table before any interrupt's message
  WritesInterruptScope notice("latlab run");
  if (!write_outputs(o, run, doc, info, notice)) rc = kExitWriteFailed;
  if (store != nullptr) {
    notice.writing("the run into the store " + store->name(),
                   "the append is rolled back: nothing of this run is in the store");
    if (!store_run(*store, doc, run, info)) rc = kExitWriteFailed;
  }
  if (meta.validation && print_validation(*meta.validation, info) && rc == kExitOk) {
    rc = kExitRunFailed;
  }
  if (run.partial) {
    std::fprintf(stderr, "latlab run: run incomplete: %s\n", run.partial_reason.c_str());
  } else if (!perf.interrupted.empty()) {
    std::fprintf(stderr, "latlab run: run incomplete: %s\n", perf.interrupted.c_str());
  }
  return rc;
}

}  // namespace latlab::cli
