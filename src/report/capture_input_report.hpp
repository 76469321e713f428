// The reporters of a capture's input section (docs/capture.md, "Input"):
// the per-input CSV (--inputs-csv) and the console lines (its JSON is
// kCaptureInputFields).
#pragma once

#include <cstdio>

#include "capture/input_assignment.hpp"
#include "latlab/bench/capture_input.hpp"
#include "report/capture_csv_writers.hpp"

namespace latlab {

// One row per input, in input order, once final: its marker, its raw
// event, its frame's times and its reaction, ns on CLOCK_MONOTONIC (an
// empty cell where there is none), and why it has no frame or reaction.
// A row sink of the session too (it writes nothing per frame).
class InputsCsvWriter final : public CaptureCsvWriter, public capture::InputRowSink {
 public:
  InputsCsvWriter();
  void frame(const capture::FrameRowView&, const capture::CaptureRecords&) override {}
  void submit(const capture::SubmitRecord&, const capture::CaptureRecords&) override {}
  void input(const capture::InputRow& row, bool reaction) override;
};

// A few lines on `out` (each begins "latlab capture: ").
void print_capture_input(std::FILE* out, const CaptureInput& in);

}  // namespace latlab
