// The frame times of a capture for a plot, decimated as they come into at
// most CaptureFrameTimes::kMaxBuckets buckets (capture_result.hpp): each
// bucket keeps the min, sum and max of its frame times, and when the
// buckets are full each pair of neighbours merges, so a bucket holds twice
// as many frames as before. Memory: kMaxBuckets buckets (16 KiB), however
// long the capture.
//
// Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "latlab/bench/capture_result.hpp"

namespace latlab::capture {

class FrameTimeSeries {
 public:
  // A frame presented at `present_start` (host ns, in present order) with
  // its frame time (ns; nullopt: none, e.g. a source's first frame). The
  // first frame given is time 0.
  void add(int64_t present_start, const std::optional<int64_t>& frame_time_ns);
  CaptureFrameTimes result() const;

 private:
  struct Bucket {
    int64_t first_ns = 0;
    uint64_t frames = 0;
    int64_t min_ns = 0, max_ns = 0;
    double sum_ns = 0;
  };
  void merge_pairs();
  std::vector<Bucket> buckets_;
  uint64_t per_bucket_ = 1;
  std::optional<int64_t> epoch_;
};

}  // namespace latlab::capture
