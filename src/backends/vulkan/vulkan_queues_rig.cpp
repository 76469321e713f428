// `latlab profile --queues all` on Vulkan (latlab/core/profile_queues_rig.hpp):
// a ring per role on its family's queue, the upload's staging and target
// buffers (a region per frame slot) and a semaphore per frame slot from the
// upload to async compute.
#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/vulkan/vk_unique.hpp"
#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/core/profile_queues_rig.hpp"
#include "latlab/vulkan.hpp"
#include "vulkan_profile_parts.hpp"

namespace latlab {
namespace {

using vulkan_profile::exceeds_limits;
using vulkan_profile::shortest;

// Queue flag bits of extensions (VK_KHR_video_decode_queue,
// VK_KHR_video_encode_queue, VK_NV_optical_flow), by value: older headers
// lack some of the names.
constexpr VkQueueFlags kVideoDecodeBit = 0x20;
constexpr VkQueueFlags kVideoEncodeBit = 0x40;
constexpr VkQueueFlags kOpticalFlowBit = 0x100;
// vkCmdWriteTimestamp needs a queue of graphics, compute, transfer, video or
// optical flow work; a sparse-binding-only family gets no role.
constexpr VkQueueFlags kRecords = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT |
                                  VK_QUEUE_TRANSFER_BIT | kVideoDecodeBit | kVideoEncodeBit |
                                  kOpticalFlowBit;

// A device-local buffer with its memory (the buffer goes first).
struct Buffer {
  vk::UniqueMemory memory;
  vk::UniqueBuffer buffer;
};

Result<Buffer> make_buffer(const VulkanContext& ctx, VkDeviceSize bytes,
                           const std::vector<uint32_t>& families) {
  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = bytes;
  bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  // Used on two families without ownership transfers: concurrent.
  bci.sharingMode = families.size() > 1 ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE;
  bci.queueFamilyIndexCount = families.size() > 1 ? static_cast<uint32_t>(families.size()) : 0;
  bci.pQueueFamilyIndices = families.size() > 1 ? families.data() : nullptr;
  const VkDevice dev = ctx.device();
  auto buffer = vk::make(vkCreateBuffer, dev, bci, vkDestroyBuffer, "vkCreateBuffer");
  if (!buffer) return buffer.error();
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(dev, buffer->get(), &req);
  auto type = ctx.find_memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (!type) type = ctx.find_memory_type(req.memoryTypeBits, 0);
  if (!type) return type.error();
  VkMemoryAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = *type;
  auto memory = vk::make(vkAllocateMemory, dev, ai, vkFreeMemory, "vkAllocateMemory");
  if (!memory) return memory.error();
  if (const VkResult r = vkBindBufferMemory(dev, buffer->get(), memory->get(), 0); r != VK_SUCCESS)
    return vk::error("vkBindBufferMemory", r);
  return Buffer{std::move(memory.value()), std::move(buffer.value())};
}

void memory_barrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                    VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = src_access;
  mb.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

// The first opened family other than the context's queue's whose flags
// include `want` and none of `avoid`; nullopt if none.
std::optional<uint32_t> dedicated_family(const VulkanContext& ctx, VkQueueFlags want,
                                         VkQueueFlags avoid) {
  for (const auto& q : ctx.queues()) {
    if (q.primary) continue;
    if ((q.flags & want) == want && (q.flags & avoid) == 0) return q.family;
  }
  return std::nullopt;
}

std::string family_name(const VulkanQueueInfo& q) {
  return "queue family " + std::to_string(q.family) + " (" + q.flags_text + ")";
}

// Everything of the run. Members go in reverse: the rings (they wait for
// their work), the semaphores and buffers that work used, the workloads,
// then the context.
class VulkanQueuesRig final : public QueuesProfileRig {
 public:
  VulkanQueuesRig(std::unique_ptr<VulkanContext> ctx, const ProfileRigDesc& desc)
      : ctx_(std::move(ctx)), desc_(desc) {}

  std::string device_name() const override { return ctx_->device_name(); }
  ProfileClock clock() override {
    VulkanContext& ctx = *ctx_;
    return {.sample = [&ctx] { return ctx.sample_calibration(); },
            .ticks = ctx.tick_format(),
            .domain = ctx.capabilities().calibration_method,
            .unavailable = {}};
  }
  Result<void> plan(uint32_t frames_in_flight, const std::string& track_prefix) override;
  const std::vector<ProfileQueueInfo>& queues() const override { return queues_; }
  const std::vector<QueueRoleInfo>& roles() const override { return roles_; }
  std::vector<MissingCapability> unavailable() const override {
    std::vector<MissingCapability> out = ctx_->unopened_queue_families();
    out.insert(out.end(), idle_.begin(), idle_.end());
    return out;
  }
  Result<std::shared_ptr<TimestampSlots>> make_slots(size_t queue, uint32_t count) override {
    auto slots = VulkanTimestampSlots::create(
        *ctx_, {.count = count, .require_host_reset = true, .queue_family = queues_[queue].family});
    if (!slots) return slots.error();
    return std::shared_ptr<TimestampSlots>(slots.value());
  }
  Result<void> build(uint32_t frames_in_flight) override;

  Result<bool> wait_slot(uint32_t slot) override {
    bool waited_any = false;
    for (auto& ring : rings_) {
      if (!ring->in_flight(slot)) continue;
      waited_any = true;
      if (auto waited = ring->wait(slot); !waited) return waited.error();
    }
    return waited_any;
  }
  Result<GpuCommandStream> begin(size_t role, uint32_t slot) override {
    auto cmd = rings_[role]->begin(slot);
    if (!cmd) return cmd.error();
    return GpuCommandStream{cmd.value()};
  }
  Result<void> record_step(GpuCommandStream stream, QueueStep step, uint32_t slot, uint64_t frame,
                           uint32_t complexity) override;
  Result<void> record_pass(GpuCommandStream stream, ProfilePass pass, uint32_t c) override;
  Result<void> submit(size_t role, uint32_t slot) override;
  Result<void> wait_all() override {
    for (auto& ring : rings_) {
      if (auto w = ring->wait_all(); !w) return w.error();
    }
    return {};
  }
  ProfileRigReport report() override;

 private:
  void add_role(QueueRole role, std::string label, uint32_t family, std::string note) {
    roles_.push_back(QueueRoleInfo{.role = role,
                                   .label = std::move(label),
                                   .note = std::move(note),
                                   .family = family,
                                   .queue = 0});
  }
  void pick_roles();
  size_t queue_of(uint32_t family, const std::string& track_prefix);
  uint32_t family_of(QueueRole role) const {
    for (const auto& r : roles_) {
      if (r.role == role) return r.family;
    }
    return ctx_->queue_family();
  }
  Result<void> make_buffers(uint32_t frames_in_flight);

  std::unique_ptr<VulkanContext> ctx_;
  ProfileRigDesc desc_;
  std::vector<ProfileQueueInfo> queues_;
  std::vector<QueueRoleInfo> roles_;
  std::vector<MissingCapability> idle_;             // opened families the frame cannot use, and why
  std::unique_ptr<VulkanComputeWorkload> compute_;  // graphics role
  std::unique_ptr<VulkanFragmentWorkload> fragment_;      // graphics role
  std::unique_ptr<VulkanComputeWorkload> async_compute_;  // async compute role
  Buffer staging_;                                        // upload source, a region per frame slot
  Buffer upload_;                                         // upload target, a region per frame slot
  VkDeviceSize region_bytes_ = 0;
  std::vector<vk::UniqueSemaphore> uploaded_;            // per frame slot: upload -> async compute
  std::vector<std::unique_ptr<VulkanFrameRing>> rings_;  // per role
};

// Upload and async compute on dedicated families where the device has them,
// graphics on the context's queue, a marker on every other family that can
// time.
void VulkanQueuesRig::pick_roles() {
  const VulkanContext& ctx = *ctx_;
  const uint32_t primary = ctx.queue_family();
  const auto compute = dedicated_family(ctx, VK_QUEUE_COMPUTE_BIT, VK_QUEUE_GRAPHICS_BIT);
  const auto transfer =
      dedicated_family(ctx, VK_QUEUE_TRANSFER_BIT, VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT);
  add_role(QueueRole::upload, "upload", transfer.value_or(primary),
           transfer ? "" : "no other transfer-only family that can time: on the context's queue");
  add_role(QueueRole::async_compute, "async compute", compute.value_or(primary),
           compute
               ? ""
               : "no other compute family without graphics that can time: on the context's queue");
  add_role(QueueRole::graphics, "graphics", primary, "");
  for (const auto& q : ctx.queues()) {
    const bool used = std::any_of(roles_.begin(), roles_.end(),
                                  [&](const QueueRoleInfo& r) { return r.family == q.family; });
    if (!used && (q.flags & kRecords) != 0) {
      add_role(QueueRole::marker, "marker", q.family,
               "no role for this family: a command buffer with its begin/end timestamps only");
    } else if (!used) {
      idle_.push_back({family_name(q),
                       "opened, but its queues record no timestamps (no graphics, compute, "
                       "transfer, video or optical flow work)"});
    }
  }
}

size_t VulkanQueuesRig::queue_of(uint32_t family, const std::string& track_prefix) {
  for (size_t i = 0; i < queues_.size(); ++i) {
    if (queues_[i].family == family) return i;
  }
  const VulkanQueueInfo& info = *ctx_->find_queue(family);
  queues_.push_back(ProfileQueueInfo{.family = family,
                                     .flags_text = info.flags_text,
                                     .ticks = info.ticks,
                                     .track = track_prefix + "vulkan " + family_name(info),
                                     .roles = {}});
  return queues_.size() - 1;
}

Result<void> VulkanQueuesRig::plan(uint32_t frames_in_flight, const std::string& track_prefix) {
  pick_roles();
  for (auto& role : roles_) {
    role.queue = queue_of(role.family, track_prefix);
    queues_[role.queue].roles.push_back(role.label);
    auto ring = VulkanFrameRing::create(*ctx_, frames_in_flight, role.family);
    if (!ring) return ring.error();
    rings_.push_back(std::move(ring.value()));
  }
  return {};
}

Result<void> VulkanQueuesRig::make_buffers(uint32_t frames_in_flight) {
  region_bytes_ = VkDeviceSize{desc_.width} * desc_.height * 16;  // the workload's vec4 buffer
  const VkDeviceSize bytes = region_bytes_ * frames_in_flight;
  const uint32_t upload_family = family_of(QueueRole::upload);
  const uint32_t async_family = family_of(QueueRole::async_compute);
  auto staging = make_buffer(*ctx_, bytes, {upload_family});
  if (!staging) return staging.error();
  staging_ = std::move(staging.value());
  std::vector<uint32_t> both{upload_family};
  if (async_family != upload_family) both.push_back(async_family);
  auto upload = make_buffer(*ctx_, bytes, both);
  if (!upload) return upload.error();
  upload_ = std::move(upload.value());
  return {};
}

Result<void> VulkanQueuesRig::build(uint32_t frames_in_flight) {
  const VulkanContext& ctx = *ctx_;
  auto compute = VulkanComputeWorkload::create(ctx, {desc_.width, desc_.height});
  if (!compute) return compute.error();
  compute_ = std::move(compute.value());
  auto fragment = VulkanFragmentWorkload::create(ctx, {desc_.width, desc_.height});
  if (!fragment) return fragment.error();
  fragment_ = std::move(fragment.value());
  auto async = VulkanComputeWorkload::create(ctx, {desc_.width, desc_.height});
  if (!async) return async.error();
  async_compute_ = std::move(async.value());
  if (auto b = make_buffers(frames_in_flight); !b) return b;
  VkSemaphoreCreateInfo sci{};
  sci.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  for (uint32_t i = 0; i < frames_in_flight; ++i) {
    auto s =
        vk::make(vkCreateSemaphore, ctx.device(), sci, vkDestroySemaphore, "vkCreateSemaphore");
    if (!s) return s.error();
    uploaded_.push_back(std::move(s.value()));
  }
  return {};
}

Result<void> VulkanQueuesRig::record_step(GpuCommandStream stream, QueueStep step, uint32_t slot,
                                          uint64_t frame, uint32_t c) {
  auto* cmd = static_cast<VkCommandBuffer>(stream);
  const VkDeviceSize at = region_bytes_ * slot;
  const VkPipelineStageFlags compute_stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  const VkAccessFlags shader_rw = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  switch (step) {
    case QueueStep::upload_fill:
      vkCmdFillBuffer(cmd, staging_.buffer.get(), at, region_bytes_, static_cast<uint32_t>(frame));
      memory_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                     VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
      break;
    case QueueStep::upload_copy: {
      const VkBufferCopy region{at, at, region_bytes_};
      vkCmdCopyBuffer(cmd, staging_.buffer.get(), upload_.buffer.get(), 1, &region);
      break;
    }
    case QueueStep::async_consume: {
      // The previous frame's passes wrote the target: copy after them, pass
      // after the copy. The copy overwrites the whole workload buffer (made
      // and warmed on the context's queue, exclusive, never handed over), so
      // no read sees contents another family left.
      memory_barrier(cmd, compute_stage, shader_rw, VK_PIPELINE_STAGE_TRANSFER_BIT,
                     VK_ACCESS_TRANSFER_WRITE_BIT);
      const VkBufferCopy region{at, 0, region_bytes_};
      vkCmdCopyBuffer(cmd, upload_.buffer.get(), async_compute_->buffer(), 1, &region);
      memory_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                     compute_stage, shader_rw);
      break;
    }
    case QueueStep::async_simulate:
      async_compute_->record_pass(cmd, std::min<uint32_t>(kMaxComplexity, 2 * c), 3);
      break;
  }
  return {};
}

Result<void> VulkanQueuesRig::record_pass(GpuCommandStream stream, ProfilePass pass, uint32_t c) {
  vulkan_profile::record_reference_pass(*compute_, *fragment_, static_cast<VkCommandBuffer>(stream),
                                        pass, c);
  return {};
}

Result<void> VulkanQueuesRig::submit(size_t role, uint32_t slot) {
  VulkanSubmitSync sync;
  const std::array<VkPipelineStageFlags, 1> stages{VK_PIPELINE_STAGE_TRANSFER_BIT};
  VkSemaphore uploaded = uploaded_[slot].get();
  if (roles_[role].role == QueueRole::upload) sync.signal = {&uploaded, 1};
  if (roles_[role].role == QueueRole::async_compute) {
    sync.wait = {&uploaded, 1};
    sync.wait_stages = stages;
  }
  return rings_[role]->submit(slot, sync);
}

ProfileRigReport VulkanQueuesRig::report() {
  ProfileRigReport r = vulkan_profile::validated_report(*ctx_, desc_.validation);
  if (desc_.validation)
    r.footer.push_back("validation errors: " + std::to_string(ctx_->validation_error_count()));
  return r;
}

}  // namespace

std::unique_ptr<QueuesProfileRig> open_vulkan_queues_rig(const ProfileRigDesc& desc,
                                                         bool all_queues, ProfileFailure& failure) {
  auto ctx = VulkanContext::create(VulkanContextDesc{
      .device = desc.device, .validation = desc.validation, .all_timing_queues = all_queues});
  if (!ctx) {
    failure = {ctx.error().message, ProfileFailureKind::device_not_opened, ""};
    return nullptr;
  }
  const VulkanContext& c = *ctx.value();
  if (exceeds_limits(c, desc)) {
    failure = vulkan_profile::size_failure(c, desc);
    return nullptr;
  }
  if (desc.on_line) {
    desc.on_line("  on [" + std::to_string(c.device_index()) + "] " + c.device_name() + ": tick " +
                 shortest(c.tick_format().period_ns()) + " ns");
    for (const auto& m : c.capabilities().missing)
      desc.on_line("  missing " + m.name + ": " + m.reason);
  }
  return std::make_unique<VulkanQueuesRig>(std::move(ctx.value()), desc);
}

}  // namespace latlab
