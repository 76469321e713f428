// The comparison page's helpers, its runs table and its settings that differ.
#include "report/html/compare_page_parts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "report/html/page_runs.hpp"
#include "report/html/report_parts.hpp"
#include "report/json_parts.hpp"

namespace latlab::html {

const std::vector<double>& samples_of(const CompareRow& r, CompareUnit unit, char side) {
  if (unit == CompareUnit::runs) return side == 'A' ? r.a_runs : r.b_runs;
  return side == 'A' ? r.a_blocks : r.b_blocks;
}

namespace {

struct LabelledRun {
  std::string label, name;
  const RunResult* r;  // one device: a several-device run's top level
  char side;
};

std::vector<LabelledRun> all_runs(const CompareSide& a, const CompareSide& b) {
  std::vector<LabelledRun> out;
  for (const auto& [s, side] : {std::pair{&a, 'A'}, std::pair{&b, 'B'}}) {
    for (size_t i = 0; i < s->runs.size(); ++i) {
      std::string label = run_label(side, i, s->runs.size());
      std::string name = i < s->names.size() ? s->names[i] : label;
      out.push_back({std::move(label), std::move(name), &s->runs[i]->top_level(), side});
    }
  }
  return out;
}

using Items = std::vector<std::pair<std::string, std::string>>;

// Every leaf of `j` as "path" -> its JSON text; arrays are one leaf.
void flatten(const nlohmann::json& j, const std::string& path, Items& out) {
  if (j.is_object() && !j.empty()) {
    for (const auto& [k, v] : j.items()) flatten(v, path.empty() ? k : path + "." + k, out);
    return;
  }
  out.emplace_back(path, j.is_string() ? j.get<std::string>() : j.dump());
}

Items items_of(const RunResult& r) {
  const RunDevice d = run_device(r);
  Items out = {{"host", r.meta.machine.hostname},
               {"cpu", r.meta.machine.cpu_model},
               {"kernel", r.meta.machine.kernel},
               {"backend", d.backend},
               {"device", d.name},
               {"driver", d.driver},
               {"latlab version", r.meta.tool_version}};
  flatten(run_settings(r), "settings", out);
  for (const RunMode& m : run_modes(r)) {
    const FrameWorkload* w = m.workload;
    out.emplace_back(m.name + " workload",
                     m.available
                         ? fmt::format("{} pass(es), {}x{} {}, complexity {}", w->passes, w->width,
                                       w->height, form_name(w->form), w->complexity)
                         : "not available: " + m.reason);
  }
  return out;
}

}  // namespace

std::string runs_table(const CompareSide& a, const CompareSide& b) {
  std::string t =
      "<table class=\"runs\"><tr><th class=\"text\">run</th><th class=\"text\">as named</th><th "
      "class=\"text\">created (UTC)</th><th class=\"text\">host</th><th "
      "class=\"text\">device</th><th class=\"text\">driver</th><th class=\"text\">latlab</th><th "
      "class=\"text\">partial</th></tr>\n";
  for (const LabelledRun& r : all_runs(a, b)) {
    const RunDevice d = run_device(*r.r);
    t += fmt::format(
        "<tr><td class=\"text\">{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td><td "
        "class=\"text\">{}</td><td class=\"text\">{} ({})</td><td class=\"text\">{}</td><td "
        "class=\"text\">{}</td><td class=\"text\">{}</td></tr>\n",
        r.label, escape(r.name), escape(r.r->meta.created_utc), escape(r.r->meta.machine.hostname),
        escape(d.name), escape(d.backend), escape(d.driver), escape(r.r->meta.tool_version),
        r.r->partial() ? "yes: " + escape(r.r->partial_reason()) : "no");
  }
  return t + "</table>\n";
}

namespace {

// One setting's row, or "" when every run has the same value.
std::string diff_row(const std::string& key, const std::vector<LabelledRun>& runs,
                     const std::vector<std::map<std::string, std::string>>& values) {
  std::vector<std::string> all, va, vb;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto it = values[i].find(key);
    all.push_back(it != values[i].end() ? it->second : "(absent)");
    (runs[i].side == 'A' ? va : vb).push_back(all.back());
  }
  if (std::all_of(all.begin(), all.end(), [&](const std::string& v) { return v == all[0]; }))
    return "";
  for (std::vector<std::string>* v : {&va, &vb}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  std::string row = fmt::format("<tr><td class=\"text\">{}</td><td class=\"text\">{}</td>",
                                escape(key), va != vb ? "between A and B" : "within a side");
  for (const std::string& v : all) row += "<td class=\"text\"><code>" + escape(v) + "</code></td>";
  return row + "</tr>\n";
}

}  // namespace

std::string settings_diff_table(const CompareSide& a, const CompareSide& b) {
  const std::vector<LabelledRun> runs = all_runs(a, b);
  std::vector<std::string> keys;  // first seen first
  std::vector<std::map<std::string, std::string>> values;
  for (const LabelledRun& r : runs) {
    values.emplace_back();
    for (auto& [k, v] : items_of(*r.r)) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
      values.back()[k] = std::move(v);
    }
  }
  std::string rows;
  for (const std::string& k : keys) rows += diff_row(k, runs, values);
  if (rows.empty()) return "<p id=\"settings-agree\">Every run has the same settings.</p>\n";
  std::string head = "<tr><th class=\"text\">setting</th><th class=\"text\">differs</th>";
  for (const LabelledRun& r : runs) head += "<th class=\"text\">" + r.label + "</th>";
  return "<p>Everything the runs record about how they ran: what compare checks (mode asked, "
         "interval range, CPU step cost, poll observer, workloads), and what only informs (a "
         "seed, a host, a version).</p>\n<table class=\"settings-diff\">" +
         head + "</tr>\n" + rows + "</table>\n";
}

}  // namespace latlab::html
