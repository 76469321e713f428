// latlab run: Performance mode, alone (--mode performance) or after the
// latency blocks (--mode all).
#include <cstdio>
#include <utility>

#include "command.hpp"
#include "run_parts.hpp"

namespace latlab::cli {

int run_performance_only(const RunOptions& o, const RunPlan& plan, LatencyDevice& device,
                         const RunMeta& meta, uint64_t first_frame_id, std::FILE* info,
                         const std::atomic<bool>* interrupt) {
  PerformanceDesc pd;
  pd.first_frame_id = first_frame_id;
  pd.interrupt = interrupt;
  Result<PerformanceReport> perf = run_performance(device, plan.perf_work, o.perf_frames, pd);
  if (!perf) {
    std::fprintf(stderr, "latlab run: performance mode failed: %s\n", perf.error().message.c_str());
    return kExitRunFailed;
  }
  const bool partial = !perf->partial_reason.empty();
  if (partial && perf->frames == 0) {  // as a latency run: nothing measured, nothing written
    std::fprintf(stderr, "latlab run: stopped before any measured frame (%s); nothing written\n",
                 perf->partial_reason.c_str());
    return kExitRunFailed;
  }
  const nlohmann::ordered_json doc = performance_run_to_json(*perf, device.info(), meta);
  if (o.json) {
    std::printf("%s\n", doc.dump(2).c_str());
  } else {
    std::fputs(format_performance(*perf).c_str(), run_outputs_take_stdout(o) ? stderr : stdout);
  }
  if (!o.out.empty() && !write_result_json(o.out, doc, info, partial ? " (partial)" : "")) {
    return kExitWriteFailed;
  }
  if (partial) {
    std::fprintf(stderr, "latlab run: run incomplete: %s\n", perf->partial_reason.c_str());
    return kExitRunFailed;
  }
  return kExitOk;
}

PerformanceOutcome run_performance_after(const RunPlan& plan, const LatencyRun& run,
                                         LatencyDevice& device, uint32_t frames,
                                         const std::atomic<bool>* interrupt) {
  PerformanceOutcome out;
  if (!plan.want_perf) return out;
  if (run.partial) {
    out.unavailable = "not run: the latency run stopped early";
    return out;
  }
  PerformanceDesc pd;
  pd.first_frame_id = run.next_frame_id;
  pd.interrupt = interrupt;
  Result<PerformanceReport> perf = run_performance(device, plan.perf_work, frames, pd);
  if (perf && perf->frames == 0 && !perf->partial_reason.empty()) {
    out.unavailable = out.interrupted = perf->partial_reason;
  } else if (perf) {
    out.interrupted = perf->partial_reason;
    out.report = std::move(perf.value());
  } else {
    out.unavailable = "performance mode failed: " + perf.error().message;
  }
  return out;
}

}  // namespace latlab::cli
