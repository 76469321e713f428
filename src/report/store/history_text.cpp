// `latlab history`'s table (history_report.hpp).
#include <fmt/format.h>

#include "report/score_report.hpp"
#include "report/store/history_report.hpp"

namespace latlab {
namespace {

std::string us(std::optional<double> v) { return v ? fmt::format("{:.1f}", *v) : "-"; }

// The score column: "412.7 [398.2, 425.1]", or "-" (the reason is listed
// below the table).
std::string score_cell(const std::optional<store::StoredScore>& s) {
  if (!s || !s->value) return "-";
  return fmt::format("{} [{}, {}]", score_number(*s->value), score_number(s->ci_low.value_or(0)),
                     score_number(s->ci_high.value_or(0)));
}

bool is_latency_run(const store::StoredRunSummary& r) {
  for (const auto& m : r.modes)
    if (m.mode != "capture") return true;
  return false;
}

std::string run_rows(const store::StoredRunSummary& r) {
  if (r.modes.empty()) {
    return fmt::format("{:>5}  {:<20}  {:<12.12} {:<28.28} {:<8} {:<9}  (no latency mode)\n", r.id,
                       r.created_utc, r.hostname, r.device, "-", r.settings_mode);
  }
  std::string out;
  for (const auto& m : r.modes) {
    if (m.mode == "capture") {
      out += fmt::format(
          "{:>5}  {:<20}  {:<12.12} {:<28.28} {:<8} {:<9} {:>6}  between presents p50 {} "
          "p99 {}, GPU busy p50 {} p99 {}{}\n",
          r.id, r.created_utc, r.hostname, r.device, m.mode, r.settings_mode, m.frames,
          us(m.between_presents_p50), us(m.between_presents_p99), us(m.gpu_busy_p50),
          us(m.gpu_busy_p99), r.partial ? "  partial" : "");
      continue;
    }
    // The score once per run, on its first row; its components are the
    // core p50 and p99 of the rows beside it.
    const std::string score = &m == &r.modes.front() ? score_cell(r.score) : "";
    std::string line = fmt::format(
        "{:>5}  {:<20}  {:<12.12} {:<28.28} {:<8} {:<9} {:>6} {:>10} {:>10} {:>10} {:>10}  "
        "{:<22}{}",
        r.id, r.created_utc, r.hostname, r.device, m.mode, r.settings_mode, m.frames,
        us(m.core_p50), us(m.core_p99), us(m.fence_p50), us(m.fence_p99), score,
        r.partial ? "  partial" : "");
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::string history_text(const std::vector<store::StoredRunSummary>& runs,
                         const std::string& store_name) {
  std::string out =
      fmt::format("{} ({} newest runs shown, newest first)\n", store_name, runs.size());
  out += fmt::format(
      "{:>5}  {:<20}  {:<12} {:<28} {:<8} {:<9} {:>6} {:>10} {:>10} {:>10} {:>10}  {}\n", "id",
      "created (UTC)", "host", "device", "mode", "of run", "frames", "core p50", "core p99",
      "fence p50", "fence p99", "score [95% interval]");
  for (const auto& r : runs) out += run_rows(r);
  out +=
      "latency in us; '-' = no measured value. score: the latency score (docs/score.md; its "
      "formula in --json) from the core p50 and p99 of baseline and loaded beside it, with its "
      "95% interval over the run's blocks.\n";
  for (const auto& r : runs) {
    if (!is_latency_run(r) || (r.score && r.score->value)) continue;
    out += fmt::format("  run {}: no score: {}\n", r.id,
                       r.score ? r.score->unavailable_reason
                               : "stored without one (before latlab computed scores)");
  }
  return out + "`latlab compare ID ID` compares two runs.\n";
}

}  // namespace latlab
