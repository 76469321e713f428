// GlFrameRing: frames in flight on GL, one fence sync per slot.
#include <string>

#include "backends/opengl/gl_state.hpp"

namespace latlab {

Result<std::unique_ptr<GlFrameRing>> GlFrameRing::create(GlContext& ctx, uint32_t slots) {
  if (slots < 1 || slots > 64)
    return make_error("GlFrameRing: slots must be 1..64 (got " + std::to_string(slots) + ")");
  if (!ctx.is_current())
    return make_error("GlFrameRing::create: the GL context is not current on this thread");
  std::unique_ptr<GlFrameRing> ring(new GlFrameRing(ctx));
  ring->fences_.assign(slots, nullptr);
  return ring;
}

GlFrameRing::~GlFrameRing() {
  if (!ctx_.is_current()) return;  // the context's destruction frees its syncs
  const gl::Api& api = ctx_.state().api;
  for (void*& f : fences_) {
    if (f == nullptr) continue;
    api.ClientWaitSync(static_cast<GLsync>(f), GL_SYNC_FLUSH_COMMANDS_BIT, kDefaultTimeoutNs);
    api.DeleteSync(static_cast<GLsync>(f));
    f = nullptr;
  }
}

Result<void> GlFrameRing::submit(uint32_t slot) {
  if (slot >= fences_.size())
    return make_error("GlFrameRing::submit: no slot " + std::to_string(slot));
  if (fences_[slot] != nullptr)
    return make_error("GlFrameRing::submit: slot " + std::to_string(slot) + " is in flight");
  if (!ctx_.is_current())
    return make_error("GlFrameRing::submit: the GL context is not current on this thread");
  const gl::Api& api = ctx_.state().api;
  GLsync fence = api.FenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
  api.Flush();  // submit: the GPU starts now, not at the next wait
  if (fence == nullptr) return make_error("glFenceSync failed: " + gl::drain_errors(api));
  fences_[slot] = fence;
  return {};
}

Result<bool> GlFrameRing::wait(uint32_t slot, uint64_t timeout_ns) {
  if (slot >= fences_.size())
    return make_error("GlFrameRing::wait: no slot " + std::to_string(slot));
  if (fences_[slot] == nullptr) return true;
  if (!ctx_.is_current())
    return make_error("GlFrameRing::wait: the GL context is not current on this thread");
  const gl::Api& api = ctx_.state().api;
  const auto fence = static_cast<GLsync>(fences_[slot]);
  const GLenum r = api.ClientWaitSync(fence, GL_SYNC_FLUSH_COMMANDS_BIT, timeout_ns);
  if (r == GL_TIMEOUT_EXPIRED) return false;
  if (r == GL_WAIT_FAILED) return make_error("glClientWaitSync failed: " + gl::drain_errors(api));
  api.DeleteSync(fence);
  fences_[slot] = nullptr;
  return true;
}

Result<void> GlFrameRing::wait_all(uint64_t timeout_ns) {
  for (uint32_t i = 0; i < fences_.size(); ++i) {
    auto w = wait(i, timeout_ns);
    if (!w) return w.error();
    if (!w.value()) {
      return make_error("the GPU did not finish the frame in slot " + std::to_string(i) +
                        " within " + std::to_string(timeout_ns / 1'000'000) + " ms");
    }
  }
  return {};
}

}  // namespace latlab
