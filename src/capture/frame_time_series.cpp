#include "capture/frame_time_series.hpp"

#include <algorithm>

namespace latlab::capture {

void FrameTimeSeries::add(int64_t present_start, const std::optional<int64_t>& frame_time_ns) {
  if (!epoch_) epoch_ = present_start;
  if (!frame_time_ns) return;
  const int64_t v = *frame_time_ns;
  if (buckets_.empty() || buckets_.back().frames == per_bucket_) {
    if (buckets_.size() == CaptureFrameTimes::kMaxBuckets) merge_pairs();
    buckets_.push_back({present_start, 0, v, v, 0.0});
  }
  Bucket& b = buckets_.back();
  ++b.frames;
  b.min_ns = std::min(b.min_ns, v);
  b.max_ns = std::max(b.max_ns, v);
  b.sum_ns += static_cast<double>(v);
}

// Full buckets (kMaxBuckets, an even number, each holding per_bucket_):
// neighbours merge into half as many holding twice as many frames.
void FrameTimeSeries::merge_pairs() {
  for (size_t i = 0; i < buckets_.size() / 2; ++i) {
    const Bucket& a = buckets_[2 * i];
    const Bucket& b = buckets_[2 * i + 1];
    buckets_[i] = {a.first_ns, a.frames + b.frames, std::min(a.min_ns, b.min_ns),
                   std::max(a.max_ns, b.max_ns), a.sum_ns + b.sum_ns};
  }
  buckets_.resize(buckets_.size() / 2);
  per_bucket_ *= 2;
}

CaptureFrameTimes FrameTimeSeries::result() const {
  CaptureFrameTimes out;
  out.frames_per_bucket = per_bucket_;
  for (const Bucket& b : buckets_) {
    out.buckets.push_back({static_cast<double>(b.first_ns - epoch_.value_or(0)) / 1e9, b.frames,
                           static_cast<double>(b.min_ns) / 1000.0,
                           b.sum_ns / static_cast<double>(b.frames) / 1000.0,
                           static_cast<double>(b.max_ns) / 1000.0});
  }
  return out;
}

}  // namespace latlab::capture
