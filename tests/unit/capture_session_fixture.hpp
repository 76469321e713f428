// A capture session (latlab/bench/capture_session.hpp) run with a fake
// program: a forked child of the test that sends records on the session's
// socket, as the Vulkan layer or the GL interposer would. The rows the
// session hands to its row sinks are checked as they come.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <utility>

#include "capture/capture_records.hpp"
#include "capture/capture_row_sink.hpp"
#include "latlab/bench/capture_session.hpp"
#include "temp_dir.hpp"

namespace latlab::test {

// Counts the rows a session releases and checks their order.
struct RowCounter final : capture::CaptureRowSink {
  uint64_t frames = 0;
  uint64_t submits = 0;
  uint64_t out_of_present_order = 0;
  int64_t last_present = INT64_MIN;
  void frame(const capture::FrameRowView& v, const capture::CaptureRecords&) override {
    ++frames;
    if (v.row.record.present_start < last_present) ++out_of_present_order;
    last_present = v.row.record.present_start;
  }
  void submit(const capture::SubmitRecord&, const capture::CaptureRecords&) override { ++submits; }
};

// What the reporters got, the rows, and the end.
struct SessionRun {
  int reports = 0;
  CaptureOutcome outcome;
  CaptureEnd end;
  RowCounter rows;
};

class CaptureSession : public ::testing::Test {
 protected:
  void SetUp() override {
    // The session attaches only what it finds: a manifest (never loaded
    // here) lets it start.
    std::ofstream(dir_.path / "VkLayer_latlab_capture.json") << "{}";
    setenv("LATLAB_CAPTURE_LAYER_DIR", dir_.path.c_str(), 1);
  }
  void TearDown() override { unsetenv("LATLAB_CAPTURE_LAYER_DIR"); }

  static SessionRun run(const CapturePlan& plan, std::function<int()> child) {
    SessionRun r;
    CaptureHooks hooks;
    hooks.child_main = std::move(child);
    hooks.row_sinks = {&r.rows};
    hooks.report = [&r](const CaptureOutcome& o) {
      ++r.reports;
      r.outcome = o;
      return 0;
    };
    r.end = run_capture(plan, hooks);
    return r;
  }

  static CapturePlan plan() {
    CapturePlan p;
    p.program = {"fake-program"};
    return p;
  }

  TempDir dir_{"latlab-session"};
};

}  // namespace latlab::test
