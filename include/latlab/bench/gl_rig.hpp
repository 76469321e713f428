// The OpenGL benchmark rig: the reference workloads in GLSL (GlWorkload) and
// the LatencyDevice on GL (GlLatencyDevice), on the timing library's
// GlContext, timestamp slots and frame ring (latlab/opengl.hpp). Compiled
// into latlab_opengl with the timing code (latlab::opengl): one library.
//
// Threads and contexts as in latlab/opengl.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "latlab/clock_model.hpp"
#include "latlab/core/latency_device.hpp"
#include "latlab/core/profile_rig.hpp"
#include "latlab/opengl.hpp"
#include "latlab/result.hpp"

namespace latlab {

// ---------------------------------------------------------------------------
// Workloads
// ---------------------------------------------------------------------------

// The reference workloads in GLSL (shaders/burn.comp and burn.frag, ported):
// compute passes over a width x height vec4 buffer, or full-screen fragment
// passes ping-ponging between two RGBA32F targets. Context current.
class GlWorkload {
 public:
  static Result<std::unique_ptr<GlWorkload>> create(GlContext& ctx, uint32_t width, uint32_t height,
                                                    WorkloadForm form);
  ~GlWorkload();
  GlWorkload(const GlWorkload&) = delete;
  GlWorkload& operator=(const GlWorkload&) = delete;
  // Issues pass `pass` at `complexity` (1..4096) into the current context.
  void record_pass(uint32_t complexity, uint32_t pass);
  uint32_t width() const { return width_; }
  uint32_t height() const { return height_; }
  WorkloadForm form() const { return form_; }

 private:
  explicit GlWorkload(GlContext& ctx) : ctx_(ctx) {}
  // The form's program and buffers (compute) or targets (fragment); the
  // context is current.
  Result<void> create_compute(const std::string& head);
  Result<void> create_fragment(const std::string& head);
  Result<void> create_targets();  // the two RGBA32F textures and framebuffers
  GlContext& ctx_;
  uint32_t width_ = 0, height_ = 0;
  WorkloadForm form_ = WorkloadForm::compute;
  uint32_t program_ = 0, buffer_ = 0, vao_ = 0;
  uint32_t textures_[2] = {0, 0}, fbos_[2] = {0, 0};
  int loc_complexity_ = -1, loc_pass_ = -1, loc_size_ = -1;
};

// ---------------------------------------------------------------------------
// Latency device
// ---------------------------------------------------------------------------

struct GlLatencyDeviceDesc {
  GlContextDesc context;
  uint32_t frames_in_flight = 4;  // 1..8
};

// The LatencyDevice on GL: submit_frame makes the context current on the
// calling thread, issues begin timestamp, the passes, end timestamp, a
// glFenceSync, glFlush, and releases it; wait_frame sleeps in
// glClientWaitSync (the fence observer), takes host_now_ns() right after,
// and reads the frame's pair (now available). Frame calls from one thread at
// a time (any thread); sample_calibration from any thread.
class GlLatencyDevice final : public LatencyDevice {
 public:
  static Result<std::unique_ptr<GlLatencyDevice>> create(const GlLatencyDeviceDesc& desc = {});
  ~GlLatencyDevice() override;
  const DeviceInfo& info() const override;
  Result<void> submit_frame(uint64_t frame_id, const FrameWorkload& work) override;
  Result<GpuFrameTiming> wait_frame(uint64_t frame_id) override;
  Result<CalibrationPair> sample_calibration() override;
  // Makes the context current on this thread once and releases it (unless it
  // was current here already): NVIDIA's first eglMakeCurrent on a thread
  // costs about 27 ms, paid here instead of in a frame's submit.
  Result<void> prepare_thread() override;
  // Poll target: the frame's fence sync; the poller calls glClientWaitSync
  // with timeout 0 on a context of its own sharing the device's objects.
  std::optional<PollTarget> poll_target(uint64_t frame_id) override;
  Result<std::unique_ptr<CompletionPoller>> open_poller() override;
  GlContext& context();
  const GlContext& context() const;

  struct Impl;

 private:
  explicit GlLatencyDevice(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

Result<std::unique_ptr<LatencyDevice>> create_gl_latency_device(
    const GlLatencyDeviceDesc& desc = {});

// `latlab profile`'s rig on this backend (latlab/core/profile_rig.hpp);
// null, with `failure` set, when it cannot run the reference frame.
std::unique_ptr<ProfileRig> open_gl_profile_rig(const ProfileRigDesc& desc,
                                            ProfileFailure& failure);

}  // namespace latlab
