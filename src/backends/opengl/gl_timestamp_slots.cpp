// GlTimestampSlots: the backend seam's timestamp slots on GL query objects,
// GL_TIMESTAMP or (durations only) GL_TIME_ELAPSED.
#include <algorithm>

#include "backends/opengl/gl_state.hpp"

namespace latlab {
namespace {

// Per-slot state bits; 0: free (not written since its reset).
constexpr uint8_t kWritten = 1;     // GL_TIMESTAMP: glQueryCounter; elapsed: its span began or ended here
constexpr uint8_t kDisjoint = 2;    // a disjoint event came while it was in flight
constexpr uint8_t kOverlapped = 4;  // elapsed: not timed, another span was open
constexpr uint8_t kEnd = 8;         // elapsed: the end slot of a pair (its query is the slot before)

}  // namespace

Result<std::shared_ptr<GlTimestampSlots>> GlTimestampSlots::create(GlContext& ctx, const GlTimestampSlotsDesc& desc) {
  if (desc.count < 2) {
    return make_error("GlTimestampSlotsDesc::count must be >= 2 (got " + std::to_string(desc.count) + ")");
  }
  if (!ctx.is_current()) return make_error("GlTimestampSlots::create: the GL context is not current on this thread");
  if (!ctx.durations_only() && ctx.report().timestamp_bits <= 0) {
    return make_error("'" + ctx.report().renderer + "' has no GL timestamp queries");
  }
  std::shared_ptr<GlTimestampSlots> s(new GlTimestampSlots(ctx, desc.count));
  const gl::Api& api = ctx.state().api;
  api.GenQueries(static_cast<GLsizei>(desc.count), s->queries_.data());
  if (const std::string e = gl::drain_errors(api); !e.empty()) {
    return make_error("glGenQueries(" + std::to_string(desc.count) + ") failed: " + e);
  }
  if (desc.disjoint_probe) {
    s->probe_ = desc.disjoint_probe;
  } else if (ctx.report().disjoint_signal) {
    const gl::Api* a = &api;
    s->probe_ = [a] {
      GLint disjoint = 0;
      a->GetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint);  // reading clears it
      return disjoint != 0;
    };
  }
  return s;
}

GlTimestampSlots::GlTimestampSlots(GlContext& ctx, uint32_t count)
    : ctx_(ctx),
      count_(count),
      ticks_(ctx.tick_format()),
      elapsed_(ctx.durations_only()),
      queries_(count, 0),
      state_(count, 0) {}

GlTimestampSlots::~GlTimestampSlots() {
  // Query objects belong to the context: delete them only where it is current
  // (else the context's destruction frees them).
  if (!ctx_.is_current()) return;
  GlContext::State& st = ctx_.state();
  if (st.elapsed_owner == this) {
    st.api.EndQuery(GL_TIME_ELAPSED);  // a span left open: the context's one query target is free again
    st.elapsed_owner = nullptr;
  }
  st.api.DeleteQueries(static_cast<GLsizei>(count_), queries_.data());
}

void GlTimestampSlots::write(GpuCommandStream stream, uint32_t slot, TimestampEdge edge) {
  if (slot >= count_ || (stream != nullptr && stream != &ctx_) || !ctx_.is_current()) {
    write_errors_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (elapsed_) {
    write_elapsed(slot, edge);
    return;
  }
  // GL_TIMESTAMP is recorded once every command before it has completed on
  // the GPU: one behaviour for both edges.
  ctx_.state().api.QueryCounter(queries_[slot], GL_TIMESTAMP);
  state_[slot] = kWritten;
}

void GlTimestampSlots::write_elapsed(uint32_t slot, TimestampEdge edge) {
  // One GL_TIME_ELAPSED query may be active per context: a begin while a
  // span is open (a nested or overlapping pair, of any slots on this
  // context) is not timed, and its end must not close the open span.
  GlContext::State& st = ctx_.state();
  if (edge == TimestampEdge::begin) {
    if (st.elapsed_owner != nullptr) {
      state_[slot] = kWritten | kOverlapped;
      ++overlapped_spans_;
      return;
    }
    st.api.BeginQuery(GL_TIME_ELAPSED, queries_[slot]);
    st.elapsed_owner = this;
    st.elapsed_slot = slot;
    state_[slot] = kWritten;
    return;
  }
  if (st.elapsed_owner == this && st.elapsed_slot + 1 == slot) {
    st.api.EndQuery(GL_TIME_ELAPSED);
    st.elapsed_owner = nullptr;
    state_[slot] = kWritten | kEnd;
    return;
  }
  state_[slot] = kWritten | kEnd | kOverlapped;  // its begin was not timed
}

void GlTimestampSlots::read(uint32_t first, std::span<SlotReading> out) {
  std::fill(out.begin(), out.end(), SlotReading{});
  if (first >= count_ || !ctx_.is_current()) return;
  const auto n = static_cast<uint32_t>(std::min<size_t>(out.size(), count_ - first));
  if (elapsed_) {
    read_elapsed(first, out.first(n));
  } else {
    const gl::Api& api = ctx_.state().api;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t slot = first + i;
      if (state_[slot] == 0) continue;  // not written since its reset: nothing of this use
      GLuint available = 0;
      api.GetQueryObjectuiv(queries_[slot], GL_QUERY_RESULT_AVAILABLE, &available);
      if (available == 0) continue;  // stop-free: never GL_QUERY_RESULT on an unavailable query
      GLuint64 ticks = 0;
      api.GetQueryObjectui64v(queries_[slot], GL_QUERY_RESULT, &ticks);
      out[i].ticks = ticks & ticks_.mask();
      out[i].available = 1;
    }
  }
  // GL_EXT_disjoint_timer_query: after reading, ask whether a disjoint event
  // happened; if so, nothing read now or still in flight can be trusted.
  if (probe_ && probe_()) {
    ++disjoint_events_;
    for (uint8_t& st : state_) {
      if ((st & kWritten) != 0) st |= kDisjoint;
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    if ((state_[first + i] & kDisjoint) != 0) out[i].flags |= SlotReading::kDisjoint;
  }
}

void GlTimestampSlots::read_elapsed(uint32_t first, std::span<SlotReading> out) {
  // A pair's one query object is the begin slot's. Its result exists once
  // the span ended: the begin slot then reads 0 and the end slot the span
  // (the seam's durations-only convention). A query still active is never
  // asked (GL_INVALID_OPERATION), nor one never begun.
  const gl::Api& api = ctx_.state().api;
  for (uint32_t i = 0; i < out.size(); ++i) {
    const uint32_t slot = first + i;
    const uint8_t st = state_[slot];
    if (st == 0) continue;
    if ((st & kOverlapped) != 0) {
      out[i].available = 1;
      out[i].flags = SlotReading::kOverlapped;
      continue;
    }
    const bool end = (st & kEnd) != 0;
    if (!end && (slot + 1 >= count_ || (state_[slot + 1] & kEnd) == 0 || (state_[slot + 1] & kOverlapped) != 0)) {
      continue;  // its span has not ended
    }
    const uint32_t query = queries_[end ? slot - 1 : slot];
    GLuint available = 0;
    api.GetQueryObjectuiv(query, GL_QUERY_RESULT_AVAILABLE, &available);
    if (available == 0) continue;
    GLuint64 elapsed = 0;
    if (end) api.GetQueryObjectui64v(query, GL_QUERY_RESULT, &elapsed);
    out[i].ticks = elapsed;
    out[i].available = 1;
  }
}

void GlTimestampSlots::reset(uint32_t first, uint32_t count, bool /*previous_use_done*/) {
  // A query object reports only its latest use, so a reset is host
  // bookkeeping: the slot reads unavailable until written again.
  if (first >= count_) return;
  count = std::min(count, count_ - first);
  GlContext::State& st = ctx_.state();
  if (elapsed_ && st.elapsed_owner == this && st.elapsed_slot >= first && st.elapsed_slot - first < count &&
      ctx_.is_current()) {
    // A span whose end never came (its frame retired): close it, or no
    // later span on this context could be timed.
    st.api.EndQuery(GL_TIME_ELAPSED);
    st.elapsed_owner = nullptr;
  }
  std::fill(state_.begin() + first, state_.begin() + first + count, uint8_t{0});
}

Result<std::unique_ptr<TimestampQueryPool>> create_gl_query_pool(GlContext& ctx, const QueryPoolDesc& desc) {
  auto slots = GlTimestampSlots::create(ctx, {.count = std::max<uint32_t>(2, desc.max_queries), .disjoint_probe = {}});
  if (!slots) return slots.error();
  return TimestampQueryPool::create(std::move(slots.value()), desc);
}

}  // namespace latlab
