// The charts of a capture's HTML section: the per-frame figures at their
// percentiles, and the frame time over the capture (decimated in the result,
// CaptureFrameTimes).
#include <fmt/format.h>

#include <string>
#include <vector>

#include "report/html/report_charts.hpp"
#include "report/html/report_parts.hpp"

namespace latlab::html {

namespace {

// The frame time over the capture (CaptureFrameTimes: at most 512 points,
// each the min, mean and max of its bucket's frames).
std::string frame_time_chart(const CaptureFrameTimes& t, const std::string& prefix, json& charts) {
  if (t.buckets.empty())
    return "<p class=\"na\">No frame time over the capture in this result: no chart.</p>\n";
  json c = chart(prefix + "capture-frame-time", "line", "frame time over the capture",
                 "time since the first present (s)", "us");
  std::vector<double> x, lo, mean, hi;
  for (const CaptureFrameTimeBucket& b : t.buckets) {
    x.push_back(b.t_s);
    lo.push_back(b.min_us);
    mean.push_back(b.mean_us);
    hi.push_back(b.max_us);
  }
  c["x"] = x;
  std::string note;
  std::vector<std::vector<double>> values;
  if (t.frames_per_bucket == 1) {
    c["series"].push_back({{"label", "between_presents"}, {"values", mean}});
    values = {mean};
    note = "One point per frame: its between_presents.";
  } else {
    c["series"].push_back({{"label", "max"}, {"values", hi}});
    c["series"].push_back({{"label", "mean"}, {"values", mean}});
    c["series"].push_back({{"label", "min"}, {"values", lo}});
    values = {hi, mean, lo};
    note = fmt::format(
        "Decimated: each point is {} consecutive frames (the last fewer), their max, mean and min "
        "between_presents; the result keeps at most {} points however long the capture (the "
        "frames CSV has every frame).",
        t.frames_per_bucket, CaptureFrameTimes::kMaxBuckets);
  }
  value_axes(c, values, linear_axis(x.front(), x.back(), 6));
  return add_chart(std::move(c), charts, note);
}

}  // namespace

std::string capture_charts(const CaptureResult& c, const std::string& prefix, json& charts) {
  static const double kLevels[] = {50, 90, 95, 99, 99.9, 100};
  json pc = chart(prefix + "capture-pct", "line", "per-frame figures at their percentiles",
                  "percentile", "us");
  pc["x"] = kLevels;
  std::vector<std::vector<double>> values;
  for (const auto& [name, d] : c.figures) {
    if (d.empty()) continue;
    values.push_back({d.p50, d.p90, d.p95, d.p99, d.p999, d.max});
    pc["series"].push_back({{"label", name}, {"values", values.back()}});
  }
  value_axes(pc, values, linear_axis(50, 100, 5));
  if (pc["series"].empty())
    return "<p class=\"na\">No frame has a measured figure: no chart.</p>\n";
  const std::string out = add_chart(
      std::move(pc), charts,
      "Each line joins a figure's p50, p90, p95, p99, p99.9 and max from the table above (the "
      "capture result keeps distributions, not each frame's value).");
  return out + frame_time_chart(c.frame_times, prefix, charts);
}

}  // namespace latlab::html
