// The HTML report's tables: every figure the charts show, readable without
// JavaScript. Absent values are shown as "n/a", never 0.
#include <fmt/format.h>

#include <string>

#include "report/html/report_parts.hpp"

namespace latlab::html {

const json* find(const json& j, std::initializer_list<std::string_view> path) {
  const json* at = &j;
  for (std::string_view key : path) {
    if (!at->is_object()) return nullptr;
    const auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

std::optional<double> number(const json& j, std::initializer_list<std::string_view> path) {
  const json* v = find(j, path);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string cell(const json* v, int decimals) {
  if (v == nullptr || v->is_null()) return "<span class=\"na\" title=\"no value\">n/a</span>";
  if (v->is_string()) return escape(v->get<std::string>());
  if (v->is_boolean()) return v->get<bool>() ? "yes" : "no";
  if (v->is_number_integer()) return v->dump();
  if (v->is_number_float()) return fmt::format("{:.{}f}", v->get<double>(), decimals);
  return escape(v->dump());
}

const std::vector<SeriesName>& series_names() {
  static const std::vector<SeriesName> names = {
      {"signal_to_consumer_wake", "stage"}, {"cpu_processing", "stage"},
      {"cpu_end_to_submit_start", "stage"}, {"workload_submit_cpu_span", "stage"},
      {"submit_start_to_gpu_begin", "stage"}, {"gpu_execution", "stage"},
      {"gpu_end_to_fence_wake", "stage"}, {"core_latency", "observer"},
      {"fence_latency", "observer"}, {"poll_latency", "observer"},
      {"timer_lateness", "diagnostic"}, {"clock_map_error", "diagnostic"},
      {"gpu_end_to_poll_wake", "diagnostic"}, {"poll_cpu", "diagnostic"}};
  return names;
}

const json* series_distribution(const json& total, const std::string& key) {
  if (const json* s = find(total, {"stages", key})) return s;
  return find(total, {key});
}

std::vector<std::string> latency_modes(const json& doc) {
  std::vector<std::string> out;
  for (const char* m : {"baseline", "loaded"}) {
    const json* total = find(doc, {"modes", m, "total"});
    if (total != nullptr && total->is_object()) out.emplace_back(m);
  }
  return out;
}

namespace {

void row(std::string& out, std::string_view key, const std::string& value) {
  out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape(key), value);
}

bool is_true(const json* v) { return v != nullptr && v->is_boolean() && v->get<bool>(); }

// A mode's GPU time against its target (modes.<m>.gpu_target), as text; ""
// without one (Baseline, a given complexity, or a file older than the field).
std::string gpu_target_text(const json& mode) {
  const json* g = find(mode, {"gpu_target"});
  if (g == nullptr || !g->is_object()) return "";
  const std::optional<double> target = number(*g, {"target_ms"});
  const std::optional<double> tol = number(*g, {"tolerance"});
  const std::optional<double> measured = number(*g, {"measured_ms"});
  const std::optional<double> e = number(*g, {"error_fraction"});
  if (!target || !tol) return "";
  if (!measured || !e) return fmt::format("target {:.3f} ms: nothing measured to check", *target);
  return fmt::format(
      "gpu_execution p50 {:.3f} ms vs target {:.3f} ms: {:+.1f}% (tolerance {:.3g}%)", *measured,
      *target, *e * 100.0, *tol * 100.0);
}

}  // namespace

std::string settings_table(const json& doc) {
  std::string t = "<table class=\"kv\">\n";
  row(t, "created (UTC)", cell(find(doc, {"created_utc"})));
  row(t, "command line", "<code>" + cell(find(doc, {"command_line"})) + "</code>");
  row(t, "tool", cell(find(doc, {"tool", "name"})) + " " + cell(find(doc, {"tool", "version"})));
  for (const char* k : {"hostname", "os", "kernel", "arch", "cpu_model", "logical_cpus"})
    row(t, std::string("machine.") + k, cell(find(doc, {"machine", k})));
  row(t, "host clock", cell(find(doc, {"host_clock", "name"})) + " (" +
                           cell(find(doc, {"host_clock", "time_source"})) + ")");
  for (const char* k : {"backend", "name", "driver", "tick_period_ns", "timestamp_valid_bits",
                        "calibration_domain", "calibration_estimated"})
    row(t, std::string("device.") + k, cell(find(doc, {"device", k}), 3));
  if (const json* s = find(doc, {"settings"}); s != nullptr && s->is_object()) {
    for (const auto& [k, v] : s->items()) {
      row(t, "settings." + k, v.is_structured() ? "<code>" + escape(v.dump()) + "</code>" : cell(&v, 3));
    }
  }
  return t + "</table>\n";
}

std::string unavailable_list(const json& doc) {
  const json* u = find(doc, {"unavailable"});
  std::string out;
  if (const json* p = find(doc, {"partial"}); p != nullptr && p->is_boolean() && p->get<bool>()) {
    out += "<p class=\"warn\">Partial run: " + cell(find(doc, {"partial_reason"})) + "</p>\n";
  }
  if (const json* modes = find(doc, {"modes"}); modes != nullptr && modes->is_object()) {
    for (const auto& [name, m] : modes->items()) {
      if (is_true(find(m, {"off_target"}))) {
        out += "<p class=\"warn\">" + escape(name) +
               " is OFF TARGET: " + escape(gpu_target_text(m)) +
               ". It ran, but not at the load it was calibrated to.</p>\n";
      }
    }
  }
  if (u == nullptr || !u->is_array() || u->empty()) {
    return out + "<p>Unavailable: nothing (every capability the run needed was present).</p>\n";
  }
  out += "<ul class=\"warn\">\n";
  for (const json& e : *u) {
    out += "<li><b>" + cell(find(e, {"name"})) + "</b>: " + cell(find(e, {"reason"})) + "</li>\n";
  }
  return out + "</ul>\n";
}

std::string modes_table(const json& doc) {
  const json* modes = find(doc, {"modes"});
  std::string t =
      "<table><tr><th>mode</th><th>available</th><th>passes</th><th>complexity</th>"
      "<th>size</th><th>form</th><th>measured frames</th><th>GPU time target</th>"
      "<th>why not</th></tr>\n";
  for (const auto& [name, m] : modes->items()) {
    const json* w = find(m, {"workload"});
    const json* avail = find(m, {"available"});
    const bool ok = avail == nullptr || (avail->is_boolean() && avail->get<bool>());
    const bool off = is_true(find(m, {"off_target"}));
    std::string size = "n/a";
    if (w != nullptr) size = cell(find(*w, {"width"})) + "x" + cell(find(*w, {"height"}));
    t += fmt::format(
        "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
        ok && !off ? "" : "warn", escape(name),
        !ok   ? "no"
        : off ? "yes, OFF TARGET"
              : "yes",
        w ? cell(find(*w, {"passes"})) : "", w ? cell(find(*w, {"complexity"})) : "", size,
        w ? cell(find(*w, {"form"})) : "", cell(find(m, {"total", "frames"})),
        escape(gpu_target_text(m)), ok ? "" : cell(find(m, {"reason"})));
  }
  return t + "</table>\n";
}

std::string percentile_table(const json& doc) {
  const std::vector<std::string> modes = latency_modes(doc);
  if (modes.empty()) return "<p>No latency mode ran.</p>\n";
  static const char* kStats[] = {"count", "missing", "p50", "p90", "p99", "p99_9", "max"};
  std::string t = "<table class=\"pct\">\n<tr><th rowspan=\"2\">us</th>";
  for (const std::string& m : modes)
    t += fmt::format("<th colspan=\"{}\" class=\"mode\">{}</th>", std::size(kStats), escape(m));
  t += "</tr>\n<tr>";
  for (size_t i = 0; i < modes.size(); ++i) {
    for (const char* s : kStats) t += fmt::format("<th>{}</th>", std::string_view(s) == "p99_9" ? "p99.9" : s);
  }
  t += "</tr>\n";
  std::string group;
  for (const SeriesName& s : series_names()) {
    if (s.group != group) {
      group = s.group;
      const char* title = group == "stage"      ? "stages (per frame, in path order)"
                          : group == "observer" ? "observers of completion (each separately)"
                                                : "diagnostics (outside every stage)";
      t += fmt::format("<tr class=\"group\"><td colspan=\"{}\">{}</td></tr>\n",
                       1 + modes.size() * std::size(kStats), title);
    }
    t += "<tr><th>" + escape(s.key) + "</th>";
    for (const std::string& m : modes) {
      const json* d = series_distribution(*find(doc, {"modes", m, "total"}), s.key);
      for (const char* st : kStats) {
        const json* v = d ? find(*d, {st}) : nullptr;
        const bool flag = std::string_view(st) == "missing" && v && v->is_number() && v->get<double>() > 0;
        t += fmt::format("<td{}>{}</td>", flag ? " class=\"missing\"" : "", cell(v));
      }
    }
    t += "</tr>\n";
  }
  return t + "</table>\n";
}

std::string missing_markers_table(const json& doc) {
  const std::vector<std::string> modes = latency_modes(doc);
  if (modes.empty()) return "";
  std::string t = "<table><tr><th>missing markers</th>";
  for (const std::string& m : modes) t += "<th>" + escape(m) + "</th>";
  t += "</tr>\n";
  for (const char* k : {"gpu_timestamps_not_ok", "gpu_timestamps_unmapped", "fence_not_ok",
                        "device_error"}) {
    t += fmt::format("<tr><th>{}</th>", k);
    for (const std::string& m : modes) {
      const json* v = find(doc, {"modes", m, "total", "missing_markers", k});
      const bool flag = v && v->is_number() && v->get<double>() > 0;
      t += fmt::format("<td{}>{}</td>", flag ? " class=\"missing\"" : "", cell(v));
    }
    t += "</tr>\n";
  }
  t += "<tr><th>consumer_behind_frames</th>";
  for (const std::string& m : modes)
    t += "<td>" + cell(find(doc, {"modes", m, "total", "consumer_behind_frames"})) + "</td>";
  return t + "</tr>\n</table>\n";
}

std::string load_calibration_section(const json& doc) {
  const json* lc = find(doc, {"load_calibration"});
  if (lc == nullptr) return "";
  if (lc->is_null()) return "<p class=\"warn\">Load calibration failed: see modes.loaded.</p>\n";
  std::string t = "<table class=\"kv\">\n";
  for (const char* k : {"source", "target_ms", "tolerance", "width", "height", "passes", "form",
                        "complexity", "verified", "within_tolerance", "median_ms",
                        "error_fraction", "p5_ms", "outcome", "evaluations", "frames_submitted",
                        "frames_missing", "wall_ms"}) {
    if (const json* v = find(*lc, {k})) row(t, k, cell(v, 3));
  }
  if (const json* size = find(*lc, {"size"}); size != nullptr && size->is_object()) {
    row(t, "size asked", cell(find(*size, {"asked"})));
    row(t, "size used", cell(find(*size, {"used"})));
    row(t, "size: why", cell(find(*size, {"why"})));
  }
  t += "</table>\n";
  const json* steps = find(*lc, {"steps"});
  if (steps == nullptr || !steps->is_array() || steps->empty()) return t;
  t += "<table><tr><th>#</th><th>kind</th><th>size</th><th>complexity</th><th>median ms</th>"
       "<th>min ms</th><th>max ms</th><th>error</th><th>frames used</th><th>missing</th>"
       "<th>why</th></tr>\n";
  for (const json& s : *steps) {
    std::string size = "";
    if (find(s, {"width"})) size = cell(find(s, {"width"})) + "x" + cell(find(s, {"height"}));
    t += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td class=\"why\">{}</td></tr>\n",
        cell(find(s, {"index"})), cell(find(s, {"kind"})), size, cell(find(s, {"complexity"})),
        cell(find(s, {"median_ms"}), 3), cell(find(s, {"min_ms"}), 3),
        cell(find(s, {"max_ms"}), 3), cell(find(s, {"error_fraction"}), 4),
        cell(find(s, {"frames_used"})), cell(find(s, {"frames_missing"})),
        cell(find(s, {"why"})));
  }
  return t + "</table>\n";
}

std::string clock_model_table(const json& doc) {
  const json* c = find(doc, {"clock_model"});
  if (c == nullptr || !c->is_object()) return "<p>No clock model in this result.</p>\n";
  std::string t = "<table class=\"kv\">\n";
  for (const auto& [k, v] : c->items()) {
    if (k == "pairs") {
      row(t, "pairs (accepted, in the result)", std::to_string(v.is_array() ? v.size() : 0));
    } else {
      row(t, k, cell(&v, 3));
    }
  }
  return t + "</table>\n";
}

std::string performance_table(const json& doc) {
  const json* p = find(doc, {"modes", "performance"});
  if (p == nullptr) return "";
  const json* avail = find(*p, {"available"});
  if (avail && avail->is_boolean() && !avail->get<bool>())
    return "<p class=\"warn\">Performance unavailable: " + cell(find(*p, {"reason"})) + "</p>\n";
  std::string t = "<table><tr><th>performance</th><th>count</th><th>missing</th><th>p50</th>"
                  "<th>p90</th><th>p99</th><th>max</th></tr>\n";
  for (const char* k : {"gpu_ms", "fps"}) {
    t += fmt::format("<tr><th>{}</th>", k);
    for (const char* st : {"count", "missing", "p50", "p90", "p99", "max"})
      t += "<td>" + cell(find(*p, {k, st}), 3) + "</td>";
    t += "</tr>\n";
  }
  t += "<tr><th>gpu_timeline_fps</th><td colspan=\"6\">" + cell(find(*p, {"gpu_timeline_fps"}), 2) +
       "</td></tr>\n";
  return t + "</table>\n";
}

}  // namespace latlab::html
