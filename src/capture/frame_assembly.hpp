// API-neutral pieces of a frame record: a frame's GPU figures from its
// submissions' spans. Used by every frame source (Vulkan layer, GL
// interposer) so that they agree on what gpu_busy and a missing span mean.
#pragma once

#include <span>

#include "capture/capture_record.hpp"

namespace latlab::capture {

// Length of the union of [begin, end) spans (ns); overlapping and nested
// spans count once. Spans with end < begin are ignored.
int64_t union_length_ns(std::span<const SubmitRecord> submits);

// Fills frame.gpu_begin, gpu_end, gpu_busy_ns, submits, gpu_spans_missing
// and source_submit_ns from the frame's submissions. A submission with work
// and no span makes the frame's three GPU values kNoTime (a frame with part
// of its GPU work unseen has no GPU begin, end or busy; counted in
// gpu_spans_missing); submissions without work (NoSpan::no_work) are left
// out. A frame without any work keeps kNoTime too.
void fill_gpu_figures(FrameRecord& frame, std::span<const SubmitRecord> submits);

}  // namespace latlab::capture
