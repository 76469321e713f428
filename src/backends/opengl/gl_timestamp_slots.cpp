// GlTimestampSlots: the backend seam's timestamp slots on GL query objects.
#include <algorithm>

#include "backends/opengl/gl_state.hpp"

namespace latlab {
namespace {

constexpr uint8_t kFree = 0;
constexpr uint8_t kWritten = 1;
constexpr uint8_t kWrittenDisjoint = 2;

}  // namespace

Result<std::shared_ptr<GlTimestampSlots>> GlTimestampSlots::create(GlContext& ctx, const GlTimestampSlotsDesc& desc) {
  if (desc.count < 2) {
    return make_error("GlTimestampSlotsDesc::count must be >= 2 (got " + std::to_string(desc.count) + ")");
  }
  if (!ctx.is_current()) return make_error("GlTimestampSlots::create: the GL context is not current on this thread");
  if (ctx.report().timestamp_bits <= 0) {
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
    : ctx_(ctx), count_(count), ticks_(ctx.tick_format()), queries_(count, 0), state_(count, kFree) {}

GlTimestampSlots::~GlTimestampSlots() {
  // Query objects belong to the context: delete them only where it is current
  // (else the context's destruction frees them).
  if (ctx_.is_current()) ctx_.state().api.DeleteQueries(static_cast<GLsizei>(count_), queries_.data());
}

void GlTimestampSlots::write(GpuCommandStream stream, uint32_t slot, TimestampEdge /*edge*/) {
  // GL_TIMESTAMP is recorded once every command before it has completed on
  // the GPU: one behaviour for both edges.
  if (slot >= count_ || (stream != nullptr && stream != &ctx_) || !ctx_.is_current()) {
    write_errors_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ctx_.state().api.QueryCounter(queries_[slot], GL_TIMESTAMP);
  state_[slot] = kWritten;
}

void GlTimestampSlots::read(uint32_t first, std::span<SlotReading> out) {
  std::fill(out.begin(), out.end(), SlotReading{});
  if (first >= count_ || !ctx_.is_current()) return;
  const gl::Api& api = ctx_.state().api;
  const auto n = static_cast<uint32_t>(std::min<size_t>(out.size(), count_ - first));
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t slot = first + i;
    if (state_[slot] == kFree) continue;  // not written since its reset: nothing of this use
    GLuint available = 0;
    api.GetQueryObjectuiv(queries_[slot], GL_QUERY_RESULT_AVAILABLE, &available);
    if (available == 0) continue;  // stop-free: never GL_QUERY_RESULT on an unavailable query
    GLuint64 ticks = 0;
    api.GetQueryObjectui64v(queries_[slot], GL_QUERY_RESULT, &ticks);
    out[i].ticks = ticks & ticks_.mask();
    out[i].available = 1;
  }
  // GL_EXT_disjoint_timer_query: after reading, ask whether a disjoint event
  // happened; if so, nothing read now or still in flight can be trusted.
  if (probe_ && probe_()) {
    ++disjoint_events_;
    for (uint8_t& st : state_) {
      if (st == kWritten) st = kWrittenDisjoint;
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (state_[first + i] == kWrittenDisjoint) out[i].flags |= SlotReading::kDisjoint;
  }
}

void GlTimestampSlots::reset(uint32_t first, uint32_t count, bool /*previous_use_done*/) {
  // A query object reports only its latest glQueryCounter, so a reset is
  // host bookkeeping: the slot reads unavailable until written again.
  if (first >= count_) return;
  count = std::min(count, count_ - first);
  std::fill(state_.begin() + first, state_.begin() + first + count, kFree);
}

Result<std::unique_ptr<TimestampQueryPool>> create_gl_query_pool(GlContext& ctx, const QueryPoolDesc& desc) {
  auto slots = GlTimestampSlots::create(ctx, {.count = std::max<uint32_t>(2, desc.max_queries), .disjoint_probe = {}});
  if (!slots) return slots.error();
  return TimestampQueryPool::create(std::move(slots.value()), desc);
}

}  // namespace latlab
