// The checks every `latlab run` result must pass, whatever the backend: the
// JSON document against the frames CSV of the same run.
//
//  * Every series cell of a frame equals its marker difference (the seven
//    stages, core and fence latency, timer lateness; gpu_execution through
//    the device's tick format, clock_map_error = map_error_ns). A series
//    whose markers are absent is an empty cell; nothing is ever 0 in place
//    of a missing value (host markers of CLOCK_MONOTONIC are never 0, and
//    GPU markers are present exactly when gpu_status is ok).
//  * Per mode, for the total and for each measured block: count + missing =
//    frames, and count, missing, min, max, mean, stddev and every percentile
//    recompute from the CSV (type 7, independently of the library). A
//    distribution with count 0 has null statistics.
//
// Use: expect_result_matches_csv(json, csv_path) inside a gtest test.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "latlab/tick_format.hpp"

namespace latlab::e2e {

// One CSV row's cells by column name; an empty cell is nullopt.
struct CsvFrame {
  std::map<std::string, std::string> cells;
  std::optional<int64_t> num(const std::string& column) const {
    const auto it = cells.find(column);
    if (it == cells.end() || it->second.empty()) return std::nullopt;
    return static_cast<int64_t>(std::stoll(it->second));
  }
  std::optional<uint64_t> unum(const std::string& column) const {
    const auto it = cells.find(column);
    if (it == cells.end() || it->second.empty()) return std::nullopt;
    return static_cast<uint64_t>(std::stoull(it->second));
  }
  const std::string& text(const std::string& column) const { return cells.at(column); }
};

inline std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

inline std::vector<CsvFrame> read_frames_csv(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::vector<CsvFrame> rows;
  if (!std::getline(in, line)) {
    ADD_FAILURE() << path << ": no header";
    return rows;
  }
  const std::vector<std::string> head = split_csv_line(line);
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = split_csv_line(line);
    if (cells.size() != head.size()) {
      ADD_FAILURE() << "row with " << cells.size() << " cells, header has " << head.size() << ": "
                    << line;
      continue;
    }
    CsvFrame f;
    for (size_t i = 0; i < head.size(); ++i) f.cells[head[i]] = cells[i];
    rows.push_back(std::move(f));
  }
  return rows;
}

// numpy's default percentile (type 7) of sorted values: the test's own oracle.
inline double type7(const std::vector<double>& sorted, double q) {
  const double h = (static_cast<double>(sorted.size()) - 1.0) * q;
  const auto lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

// A JSON distribution (us) against the values (ns) of the frames it covers.
inline void expect_distribution(const nlohmann::json& d,
                                const std::vector<std::optional<int64_t>>& values,
                                const std::string& where) {
  SCOPED_TRACE(where);
  std::vector<double> us;
  for (const auto& v : values) {
    if (v) us.push_back(static_cast<double>(*v) / 1000.0);
  }
  const auto missing = static_cast<uint64_t>(values.size() - us.size());
  ASSERT_EQ(d.at("count").get<uint64_t>(), us.size()) << d.dump();
  ASSERT_EQ(d.at("missing").get<uint64_t>(), missing) << d.dump();
  const char* stats[] = {"mean", "stddev", "min", "p50", "p90", "p95", "p99", "p99_9", "max"};
  if (us.empty()) {
    for (const char* k : stats)
      EXPECT_TRUE(d.at(k).is_null()) << k << ": count 0 must be null, never 0";
    return;
  }
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (double v : us) sum += v;
  const double mean = sum / static_cast<double>(us.size());
  double ss = 0;
  for (double v : us) ss += (v - mean) * (v - mean);
  std::map<std::string, double> want{{"mean", mean},
                                     {"min", us.front()},
                                     {"p50", type7(us, 0.50)},
                                     {"p90", type7(us, 0.90)},
                                     {"p95", type7(us, 0.95)},
                                     {"p99", type7(us, 0.99)},
                                     {"p99_9", type7(us, 0.999)},
                                     {"max", us.back()}};
  // One sample has no sample standard deviation: null, never 0.
  if (us.size() > 1) {
    want["stddev"] = std::sqrt(ss / static_cast<double>(us.size() - 1));
  } else {
    EXPECT_TRUE(d.at("stddev").is_null()) << d.dump();
  }
  for (const auto& [k, w] : want) {
    ASSERT_TRUE(d.at(k).is_number()) << k << " " << d.dump();
    // Summation order may differ in the last bits; 1e-9 relative + 1 ps.
    EXPECT_NEAR(d.at(k).get<double>(), w, 1e-9 * std::abs(w) + 1e-6) << k;
  }
}

inline const char* const kHostMarkers[] = {
    "deadline_ns",       "generator_wake_ns", "signal_ns",       "consumer_wake_ns",
    "cpu_start_ns",      "cpu_end_ns",        "submit_start_ns", "submit_end_ns",
    "gpu_begin_host_ns", "gpu_end_host_ns",   "fence_wake_ns",   "poll_wake_ns"};

// Every series of one frame against its markers; returns the series values.
inline std::map<std::string, std::optional<int64_t>> check_frame_series(const CsvFrame& f,
                                                                        const TickFormat& ticks) {
  const std::string id = "frame " + f.text("frame_id");
  const auto span = [&](const char* from, const char* to) -> std::optional<int64_t> {
    const auto a = f.num(from);
    const auto b = f.num(to);
    if (!a || !b) return std::nullopt;
    return *b - *a;
  };
  std::map<std::string, std::optional<int64_t>> expect{
      {"signal_to_consumer_wake", span("signal_ns", "consumer_wake_ns")},
      {"cpu_processing", span("cpu_start_ns", "cpu_end_ns")},
      {"cpu_end_to_submit_start", span("cpu_end_ns", "submit_start_ns")},
      {"workload_submit_cpu_span", span("submit_start_ns", "submit_end_ns")},
      {"submit_start_to_gpu_begin", span("submit_start_ns", "gpu_begin_host_ns")},
      {"gpu_end_to_fence_wake", span("gpu_end_host_ns", "fence_wake_ns")},
      {"core_latency", span("signal_ns", "gpu_end_host_ns")},
      {"fence_latency", span("signal_ns", "fence_wake_ns")},
      {"poll_latency", span("signal_ns", "poll_wake_ns")},
      {"gpu_end_to_poll_wake", span("gpu_end_host_ns", "poll_wake_ns")},
      {"timer_lateness", span("deadline_ns", "signal_ns")},
  };
  const auto b = f.unum("gpu_begin_ticks");
  const auto e = f.unum("gpu_end_ticks");
  expect["gpu_execution"] = b && e ? std::optional<int64_t>(ticks.span_ns(*b, *e)) : std::nullopt;
  expect["clock_map_error"] = f.num("gpu_end_host_ns") ? f.num("map_error_ns") : std::nullopt;
  for (const auto& [series, want] : expect) {
    const auto got = f.num(series + "_ns");
    EXPECT_EQ(got.has_value(), want.has_value())
        << id << " " << series << ": cell and markers disagree";
    if (got && want) {
      EXPECT_EQ(*got, *want) << id << " " << series;
    }
  }
  // Missing is never 0: host markers are CLOCK_MONOTONIC times (never 0), and
  // GPU markers exist exactly when the frame's timestamps are ok.
  for (const char* m : kHostMarkers) {
    if (const auto v = f.num(m)) {
      EXPECT_NE(*v, 0) << id << " " << m << " is 0";
    }
  }
  const bool gpu_ok = f.text("gpu_status") == "ok";
  EXPECT_EQ(b.has_value(), gpu_ok)
      << id << " gpu_begin_ticks vs gpu_status " << f.text("gpu_status");
  EXPECT_EQ(e.has_value(), gpu_ok) << id << " gpu_end_ticks vs gpu_status " << f.text("gpu_status");
  if (!gpu_ok) {
    EXPECT_FALSE(f.num("gpu_end_host_ns")) << id << " mapped GPU end without ok timestamps";
  }
  if (f.text("fence_status") != "ok") {
    EXPECT_FALSE(f.num("fence_wake_ns")) << id << " fence wake without ok fence";
  }
  if (f.text("poll_status") != "ok") {
    EXPECT_FALSE(f.num("poll_wake_ns")) << id << " poll wake without ok poll";
  }
  return expect;
}

// The whole check; `min_measured` guards against a trivially empty run.
inline void expect_result_matches_csv(const nlohmann::json& result,
                                      const std::filesystem::path& csv, size_t min_measured = 1) {
  const auto& dev = result.at("device");
  TickFormat ticks;
  ticks.period_num = dev.at("tick_period_fraction").at(0).get<uint64_t>();
  ticks.period_den = dev.at("tick_period_fraction").at(1).get<uint64_t>();
  ticks.valid_bits = dev.at("timestamp_valid_bits").get<uint32_t>();

  // mode -> block index -> series -> values (measured frames only).
  using Values = std::map<std::string, std::vector<std::optional<int64_t>>>;
  std::map<std::string, std::map<int, Values>> by_block;
  std::map<std::string, Values> by_mode;
  size_t measured = 0;
  for (const CsvFrame& f : read_frames_csv(csv)) {
    const auto series = check_frame_series(f, ticks);
    if (f.text("block_kind") != "measured") continue;
    ++measured;
    const std::string& mode = f.text("mode");
    const int block = std::stoi(f.text("block_index"));
    for (const auto& [name, v] : series) {
      by_block[mode][block][name].push_back(v);
      by_mode[mode][name].push_back(v);
    }
  }
  ASSERT_GE(measured, min_measured);
  ASSERT_FALSE(by_mode.empty());

  const auto expect_series = [&](const nlohmann::json& set, Values& values,
                                 const std::string& where) {
    for (auto& [name, v] : values) {
      const nlohmann::json& d =
          set.at("stages").contains(name) ? set.at("stages").at(name) : set.at(name);
      expect_distribution(d, v, where + " " + name);
    }
  };
  for (auto& [mode, values] : by_mode) {
    const nlohmann::json& m = result.at("modes").at(mode);
    const nlohmann::json& total = m.at("total");
    EXPECT_EQ(total.at("frames").get<size_t>(), values.begin()->second.size()) << mode;
    expect_series(total, values, mode + " total");
    size_t blocks_seen = 0;
    for (const auto& block : m.at("blocks")) {
      const int index = block.at("index").get<int>();
      auto it = by_block[mode].find(index);
      ASSERT_NE(it, by_block[mode].end()) << mode << " block " << index << " has no CSV rows";
      EXPECT_EQ(block.at("frames_run").get<size_t>(), it->second.begin()->second.size());
      expect_series(block, it->second, mode + " block " + std::to_string(index));
      ++blocks_seen;
    }
    EXPECT_EQ(blocks_seen, by_block[mode].size()) << mode;
  }
}

}  // namespace latlab::e2e
