// VulkanFragmentWorkload: the fragment form of the reference work
// (shaders/fullscreen.vert + shaders/burn.frag).
#include "backends/vulkan/vk_pipeline_parts.hpp"
#include "backends/vulkan/vk_unique.hpp"
#include "backends/vulkan/vk_util.hpp"
#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/vulkan.hpp"

namespace latlab {
namespace {

const uint32_t kFullscreenVert[] = {
#include "fullscreen.vert.spv.inc"
};
const uint32_t kBurnFrag[] = {
#include "burn.frag.spv.inc"
};

struct FragPush {
  uint32_t complexity;
  uint32_t pass;
};

constexpr VkFormat kFormat = VK_FORMAT_R8G8B8A8_UNORM;

}  // namespace

namespace vk {

// The workload's objects. Destroyed in reverse order: the pipeline before
// its modules and layout; the descriptor pool (and its sets) before the set
// layout and the sampler; the framebuffers before the views, the views
// before the images, the images before their memory; the render pass last.
struct FragmentObjects {
  UniqueRenderPass render_pass;
  UniqueMemory memory[2];
  UniqueImage images[2];
  UniqueImageView views[2];
  UniqueFramebuffer framebuffers[2];
  UniqueSampler sampler;
  UniqueSetLayout set_layout;
  UniqueDescriptorPool descriptor_pool;
  VkDescriptorSet sets[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};  // sets[i] samples the target
                                                               // pass i does not write
  UniquePipelineLayout layout;
  UniqueShaderModule vert;
  UniqueShaderModule frag;
  UniquePipeline pipeline;
};

}  // namespace vk

namespace {

// The size fits the device, and the format and queue can do what the
// passes need.
Result<void> check_support(const VulkanContext& ctx, const FragmentWorkloadDesc& desc) {
  const VkPhysicalDeviceLimits& limits = ctx.properties().limits;
  if (desc.width == 0 || desc.height == 0)
    return make_error("fragment workload size must be at least 1x1");
  if (desc.width > limits.maxFramebufferWidth || desc.height > limits.maxFramebufferHeight ||
      desc.width > limits.maxImageDimension2D || desc.height > limits.maxImageDimension2D) {
    return make_error("fragment workload " + std::to_string(desc.width) + "x" +
                      std::to_string(desc.height) + " exceeds the device's framebuffer limit " +
                      std::to_string(limits.maxFramebufferWidth) + "x" +
                      std::to_string(limits.maxFramebufferHeight));
  }
  VkFormatProperties fp{};
  vkGetPhysicalDeviceFormatProperties(ctx.physical_device(), kFormat, &fp);
  const VkFormatFeatureFlags need = VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT |
                                    VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT |
                                    VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT;
  if ((fp.optimalTilingFeatures & need) != need) {
    return make_error("R8G8B8A8_UNORM cannot be rendered to and sampled linearly on " +
                      ctx.device_name());
  }
  if ((ctx.report().queue_families.at(ctx.queue_family()).flags & VK_QUEUE_GRAPHICS_BIT) == 0) {
    return make_error(
        "the context's queue family has no graphics: the fragment workload needs one");
  }
  return {};
}

// Target i: its image, bound device memory and a view.
Result<void> make_target(const VulkanContext& ctx, const FragmentWorkloadDesc& desc,
                         vk::FragmentObjects& o, int i) {
  const VkDevice dev = ctx.device();
  VkImageCreateInfo ici{};
  ici.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
  ici.imageType = VK_IMAGE_TYPE_2D;
  ici.format = kFormat;
  ici.extent = {desc.width, desc.height, 1};
  ici.mipLevels = 1;
  ici.arrayLayers = 1;
  ici.samples = VK_SAMPLE_COUNT_1_BIT;
  ici.tiling = VK_IMAGE_TILING_OPTIMAL;
  ici.usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_SAMPLED_BIT |
              VK_IMAGE_USAGE_TRANSFER_DST_BIT;
  ici.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ici.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  auto image = vk::make(vkCreateImage, dev, ici, vkDestroyImage, "vkCreateImage");
  if (!image) return image.error();
  o.images[i] = std::move(*image);
  VkMemoryRequirements req{};
  vkGetImageMemoryRequirements(dev, o.images[i].get(), &req);
  auto memory = vk::allocate_memory(ctx, req, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, true);
  if (!memory) return memory.error();
  o.memory[i] = std::move(*memory);
  if (const VkResult r = vkBindImageMemory(dev, o.images[i].get(), o.memory[i].get(), 0);
      r != VK_SUCCESS) {
    return vk::error("vkBindImageMemory", r);
  }
  VkImageViewCreateInfo vci{};
  vci.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO;
  vci.image = o.images[i].get();
  vci.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vci.format = kFormat;
  vci.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  auto view = vk::make(vkCreateImageView, dev, vci, vkDestroyImageView, "vkCreateImageView");
  if (!view) return view.error();
  o.views[i] = std::move(*view);
  return {};
}

// The whole target is rewritten, then sampled by the next pass.
Result<vk::UniqueRenderPass> make_render_pass(VkDevice dev) {
  VkAttachmentDescription color{};
  color.format = kFormat;
  color.samples = VK_SAMPLE_COUNT_1_BIT;
  color.loadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;  // every pixel is drawn
  color.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
  color.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  color.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  color.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  color.finalLayout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
  VkAttachmentReference ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
  VkSubpassDescription subpass{};
  subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
  subpass.colorAttachmentCount = 1;
  subpass.pColorAttachments = &ref;
  // In: the previous pass wrote the target we sample (RAW) and sampled the
  // target we write (WAR). Out: our target is sampled next.
  VkSubpassDependency deps[2]{};
  deps[0].srcSubpass = VK_SUBPASS_EXTERNAL;
  deps[0].dstSubpass = 0;
  deps[0].srcStageMask =
      VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT | VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT;
  deps[0].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
  deps[0].dstStageMask =
      VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT | VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  deps[0].dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
  deps[1].srcSubpass = 0;
  deps[1].dstSubpass = VK_SUBPASS_EXTERNAL;
  deps[1].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  deps[1].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
  deps[1].dstStageMask = VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT;
  deps[1].dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
  VkRenderPassCreateInfo rpci{};
  rpci.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO;
  rpci.attachmentCount = 1;
  rpci.pAttachments = &color;
  rpci.subpassCount = 1;
  rpci.pSubpasses = &subpass;
  rpci.dependencyCount = 2;
  rpci.pDependencies = deps;
  return vk::make(vkCreateRenderPass, dev, rpci, vkDestroyRenderPass, "vkCreateRenderPass");
}

Result<void> make_framebuffers(VkDevice dev, const FragmentWorkloadDesc& desc,
                               vk::FragmentObjects& o) {
  for (int i = 0; i < 2; ++i) {
    const VkImageView view = o.views[i].get();
    VkFramebufferCreateInfo fci{};
    fci.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO;
    fci.renderPass = o.render_pass.get();
    fci.attachmentCount = 1;
    fci.pAttachments = &view;
    fci.width = desc.width;
    fci.height = desc.height;
    fci.layers = 1;
    auto fb = vk::make(vkCreateFramebuffer, dev, fci, vkDestroyFramebuffer, "vkCreateFramebuffer");
    if (!fb) return fb.error();
    o.framebuffers[i] = std::move(*fb);
  }
  return {};
}

// The sampler and the two sets: sets[i] samples target 1 - i.
Result<void> make_sampling(VkDevice dev, vk::FragmentObjects& o) {
  VkSamplerCreateInfo sci{};
  sci.sType = VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO;
  sci.magFilter = VK_FILTER_LINEAR;
  sci.minFilter = VK_FILTER_LINEAR;
  sci.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST;
  sci.addressModeU = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  sci.addressModeV = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  sci.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  sci.maxLod = 0.0f;
  auto sampler = vk::make(vkCreateSampler, dev, sci, vkDestroySampler, "vkCreateSampler");
  if (!sampler) return sampler.error();
  o.sampler = std::move(*sampler);
  if (auto sets = vk::create_single_binding_sets(dev, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                                                 VK_SHADER_STAGE_FRAGMENT_BIT, 2, o.set_layout,
                                                 o.descriptor_pool, o.sets);
      !sets) {
    return sets.error();
  }
  VkDescriptorImageInfo image_info[2]{};
  VkWriteDescriptorSet writes[2]{};
  for (int i = 0; i < 2; ++i) {
    image_info[i] = {o.sampler.get(), o.views[1 - i].get(),
                     VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
    writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[i].dstSet = o.sets[i];
    writes[i].dstBinding = 0;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    writes[i].pImageInfo = &image_info[i];
  }
  vkUpdateDescriptorSets(dev, 2, writes, 0, nullptr);
  return {};
}

// The fixed-function state of a full-screen triangle into the whole target,
// for make_pipeline (which points the create info at these).
struct FixedState {
  VkPipelineVertexInputStateCreateInfo vertex_input{};
  VkPipelineInputAssemblyStateCreateInfo assembly{};
  VkViewport viewport{};
  VkRect2D scissor{};
  VkPipelineViewportStateCreateInfo viewport_state{};
  VkPipelineRasterizationStateCreateInfo raster{};
  VkPipelineMultisampleStateCreateInfo multisample{};
  VkPipelineColorBlendAttachmentState blend_attachment{};
  VkPipelineColorBlendStateCreateInfo blend{};

  explicit FixedState(const FragmentWorkloadDesc& desc) {
    vertex_input.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO;
    assembly.sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO;
    assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
    viewport = {0.0f, 0.0f, static_cast<float>(desc.width), static_cast<float>(desc.height),
                0.0f, 1.0f};
    scissor = {{0, 0}, {desc.width, desc.height}};
    viewport_state.sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO;
    viewport_state.viewportCount = 1;
    viewport_state.pViewports = &viewport;
    viewport_state.scissorCount = 1;
    viewport_state.pScissors = &scissor;
    raster.sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO;
    raster.polygonMode = VK_POLYGON_MODE_FILL;
    raster.cullMode = VK_CULL_MODE_NONE;
    raster.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
    raster.lineWidth = 1.0f;
    multisample.sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO;
    multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
    blend_attachment.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                                      VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
    blend.sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO;
    blend.attachmentCount = 1;
    blend.pAttachments = &blend_attachment;
  }
  FixedState(const FixedState&) = delete;  // points into itself
  FixedState& operator=(const FixedState&) = delete;
};

Result<void> make_pipeline(VkDevice dev, const FragmentWorkloadDesc& desc, vk::FragmentObjects& o) {
  auto layout = vk::create_pipeline_layout(dev, o.set_layout.get(), VK_SHADER_STAGE_FRAGMENT_BIT,
                                           sizeof(FragPush));
  if (!layout) return layout.error();
  o.layout = std::move(*layout);
  auto vert =
      vk::create_shader_module(dev, kFullscreenVert, sizeof(kFullscreenVert), "fullscreen.vert");
  if (!vert) return vert.error();
  o.vert = std::move(*vert);
  auto frag = vk::create_shader_module(dev, kBurnFrag, sizeof(kBurnFrag), "burn.frag");
  if (!frag) return frag.error();
  o.frag = std::move(*frag);

  VkPipelineShaderStageCreateInfo stages[2]{};
  stages[0].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
  stages[0].module = o.vert.get();
  stages[0].pName = "main";
  stages[1].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
  stages[1].module = o.frag.get();
  stages[1].pName = "main";
  const FixedState fixed(desc);
  VkGraphicsPipelineCreateInfo gpci{};
  gpci.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO;
  gpci.stageCount = 2;
  gpci.pStages = stages;
  gpci.pVertexInputState = &fixed.vertex_input;
  gpci.pInputAssemblyState = &fixed.assembly;
  gpci.pViewportState = &fixed.viewport_state;
  gpci.pRasterizationState = &fixed.raster;
  gpci.pMultisampleState = &fixed.multisample;
  gpci.pColorBlendState = &fixed.blend;
  gpci.layout = o.layout.get();
  gpci.renderPass = o.render_pass.get();
  gpci.subpass = 0;
  VkPipeline pipeline = VK_NULL_HANDLE;
  if (const VkResult r =
          vkCreateGraphicsPipelines(dev, VK_NULL_HANDLE, 1, &gpci, nullptr, &pipeline);
      r != VK_SUCCESS) {
    return vk::error("vkCreateGraphicsPipelines", r);
  }
  o.pipeline = vk::UniquePipeline(dev, pipeline, vkDestroyPipeline);
  return {};
}

// Records known contents (0.5 grey) into both targets, left in the layout
// the passes sample from.
void record_clear_targets(VkCommandBuffer cmd, const vk::FragmentObjects& o) {
  VkImageMemoryBarrier to_clear[2]{};
  VkImageMemoryBarrier to_read[2]{};
  for (int i = 0; i < 2; ++i) {
    to_clear[i].sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
    to_clear[i].srcAccessMask = 0;
    to_clear[i].dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    to_clear[i].oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    to_clear[i].newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
    to_clear[i].srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    to_clear[i].dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    to_clear[i].image = o.images[i].get();
    to_clear[i].subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    to_read[i] = to_clear[i];
    to_read[i].srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    to_read[i].dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
    to_read[i].oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
    to_read[i].newLayout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
  }
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0,
                       nullptr, 0, nullptr, 2, to_clear);
  const VkClearColorValue half{{0.5f, 0.5f, 0.5f, 0.5f}};
  const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  for (int i = 0; i < 2; ++i) {
    vkCmdClearColorImage(cmd, o.images[i].get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &half, 1,
                         &range);
  }
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT,
                       0, 0, nullptr, 0, nullptr, 2, to_read);
}

}  // namespace

Result<std::unique_ptr<VulkanFragmentWorkload>> VulkanFragmentWorkload::create(
    const VulkanContext& ctx, const FragmentWorkloadDesc& desc) {
  if (auto ok = check_support(ctx, desc); !ok) return ok.error();
  std::unique_ptr<VulkanFragmentWorkload> w(new VulkanFragmentWorkload(desc));
  w->o_ = std::make_unique<vk::FragmentObjects>();
  vk::FragmentObjects& o = *w->o_;
  const VkDevice dev = ctx.device();
  for (int i = 0; i < 2; ++i) {
    if (auto r = make_target(ctx, desc, o, i); !r) return r.error();
  }
  auto render_pass = make_render_pass(dev);
  if (!render_pass) return render_pass.error();
  o.render_pass = std::move(*render_pass);
  if (auto r = make_framebuffers(dev, desc, o); !r) return r.error();
  if (auto r = make_sampling(dev, o); !r) return r.error();
  if (auto r = make_pipeline(dev, desc, o); !r) return r.error();
  // Known contents in both targets; then one untimed pass so a driver that
  // compiles at first draw (llvmpipe) does not charge it to the first timed
  // pass.
  VulkanFragmentWorkload* self = w.get();
  auto ready = ctx.run_one_shot([self](VkCommandBuffer cmd) {
    record_clear_targets(cmd, *self->o_);
    self->record_pass(cmd, 1, 0);
  });
  if (!ready) return ready.error();
  return w;
}

VulkanFragmentWorkload::VulkanFragmentWorkload(const FragmentWorkloadDesc& desc) : desc_(desc) {}

// The objects go in FragmentObjects' reverse order.
VulkanFragmentWorkload::~VulkanFragmentWorkload() = default;

void VulkanFragmentWorkload::record_pass(VkCommandBuffer cmd, uint32_t complexity,
                                         uint32_t pass_index) {
  const uint32_t target = pass_index % 2;
  VkRenderPassBeginInfo rbi{};
  rbi.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO;
  rbi.renderPass = o_->render_pass.get();
  rbi.framebuffer = o_->framebuffers[target].get();
  rbi.renderArea = {{0, 0}, {desc_.width, desc_.height}};
  vkCmdBeginRenderPass(cmd, &rbi, VK_SUBPASS_CONTENTS_INLINE);
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, o_->pipeline.get());
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, o_->layout.get(), 0, 1,
                          &o_->sets[target], 0, nullptr);
  const FragPush push{complexity == 0 ? 1 : complexity, pass_index};
  vkCmdPushConstants(cmd, o_->layout.get(), VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof(push), &push);
  vkCmdDraw(cmd, 3, 1, 0, 0);
  vkCmdEndRenderPass(cmd);
}

std::vector<std::optional<uint32_t>> VulkanFragmentWorkload::record(
    VkCommandBuffer cmd, std::span<const WorkloadPass> passes, uint64_t frame_id,
    TimestampQueryPool* pool) {
  std::vector<std::optional<uint32_t>> offsets(passes.size());
  for (uint32_t i = 0; i < passes.size(); ++i) {
    const WorkloadPass& p = passes[i];
    if (pool != nullptr && !p.uid.empty())
      offsets[i] = pool->allocate_queries_for_context(p.uid, frame_id);
    if (offsets[i]) pool->write_begin(cmd, *offsets[i]);  // outside the render pass
    record_pass(cmd, p.complexity, i);
    if (offsets[i]) pool->write_end(cmd, *offsets[i]);
  }
  return offsets;
}

}  // namespace latlab
