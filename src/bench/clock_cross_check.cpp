// Two devices' clock models against each other (clock_cross_check.hpp).
#include "latlab/bench/clock_cross_check.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>
#include <vector>

#include "latlab/host_clock.hpp"
#include "latlab/host_time.hpp"

namespace latlab {
namespace {

// One device's side of a trial.
struct Side {
  int64_t submit_ns = 0;  // host, right after submit_frame returned
  std::optional<MappedSpan> start;
  std::string error;
};

Side run_side(LatencyDevice& dev, const TickMapper& map, uint64_t frame_id,
              const FrameWorkload& work, int64_t deadline_ns) {
  Side s;
  host_sleep_until(deadline_ns);
  if (Result<void> r = dev.submit_frame(frame_id, work); !r) {
    s.error = r.error().message;
    return s;
  }
  // After the call: the work can start no earlier than its submit, and a
  // thread preempted inside the call moves this time with the GPU start.
  s.submit_ns = host_now_ns();
  Result<GpuFrameTiming> t = dev.wait_frame(frame_id);
  if (!t) {
    s.error = t.error().message;
    return s;
  }
  if (t->gpu_status == QueryStatus::ok)
    s.start = map.map_pair(t->gpu_begin_ticks, t->gpu_end_ticks);
  return s;
}

Distribution summarize_us(std::vector<double> v, uint64_t missing) {
  return summarize_in_place(v, missing);
}

}  // namespace

Result<ClockCrossCheckResult> run_clock_cross_check(LatencyDevice& a, const TickMapper& map_a,
                                                    LatencyDevice& b, const TickMapper& map_b,
                                                    const ClockCrossCheckDesc& desc) {
  if (desc.trials == 0) return make_error("the cross-check needs at least one trial");
  if (desc.interval_ns <= 0) return make_error("the cross-check interval must be positive");
  ClockCrossCheckResult r;
  std::vector<double> skew, submit, launch_a, launch_b;
  std::vector<int64_t> bounds_a, bounds_b;
  int64_t deadline = host_now_ns() + desc.interval_ns;
  for (uint32_t i = 0; i < desc.trials; ++i, deadline += desc.interval_ns) {
    Side sa, sb;
    std::thread tb(
        [&] { sb = run_side(b, map_b, desc.first_frame_id_b + i, desc.work, deadline); });
    sa = run_side(a, map_a, desc.first_frame_id_a + i, desc.work, deadline);
    tb.join();
    ++r.trials;
    if (!sa.error.empty()) return make_error("device a (" + a.info().name + "): " + sa.error);
    if (!sb.error.empty()) return make_error("device b (" + b.info().name + "): " + sb.error);
    if (!sa.start || !sb.start) continue;
    ++r.trials_mapped;
    const int64_t d_submit = sa.submit_ns - sb.submit_ns;
    const int64_t d_start = sa.start->begin_host_ns - sb.start->begin_host_ns;
    skew.push_back(static_cast<double>(d_start - d_submit) / 1e3);
    submit.push_back(static_cast<double>(d_submit) / 1e3);
    launch_a.push_back(static_cast<double>(sa.start->begin_host_ns - sa.submit_ns) / 1e3);
    launch_b.push_back(static_cast<double>(sb.start->begin_host_ns - sb.submit_ns) / 1e3);
    bounds_a.push_back(sa.start->error_ns);
    bounds_b.push_back(sb.start->error_ns);
  }
  if (r.trials_mapped == 0)
    return make_error(
        "no trial had both GPU starts timed and mapped (no clock model or no timestamps)");
  const uint64_t unmapped = r.trials - r.trials_mapped;
  r.start_skew_us = summarize_us(std::move(skew), unmapped);
  r.submit_skew_us = summarize_us(std::move(submit), unmapped);
  r.launch_a_us = summarize_us(std::move(launch_a), unmapped);
  r.launch_b_us = summarize_us(std::move(launch_b), unmapped);
  auto median = [](std::vector<int64_t> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  r.bound_a_ns = median(std::move(bounds_a));
  r.bound_b_ns = median(std::move(bounds_b));
  const double limit_us = static_cast<double>(r.bound_a_ns + r.bound_b_ns) / 1e3;
  r.agree = std::abs(r.start_skew_us.p50) <= limit_us;
  char text[256];
  std::snprintf(text, sizeof text,
                "%s: median start skew %+.3f us (submit-corrected, p99 %+.3f) %s the sum of the "
                "bounds %.3f us (%.3f + %.3f) over %u trials",
                r.agree ? "agree" : "DISAGREE", r.start_skew_us.p50, r.start_skew_us.p99,
                r.agree ? "within" : "beyond", limit_us, static_cast<double>(r.bound_a_ns) / 1e3,
                static_cast<double>(r.bound_b_ns) / 1e3, r.trials_mapped);
  r.verdict = text;
  return r;
}

}  // namespace latlab
