// VulkanFragmentWorkload: the fragment form of the reference work
// (shaders/fullscreen.vert + shaders/burn.frag).
#include "backends/vulkan/vk_pipeline_parts.hpp"
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

Result<std::unique_ptr<VulkanFragmentWorkload>> VulkanFragmentWorkload::create(
    const VulkanContext& ctx, const FragmentWorkloadDesc& desc) {
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

  std::unique_ptr<VulkanFragmentWorkload> w(new VulkanFragmentWorkload(ctx, desc));
  const VkDevice dev = ctx.device();

  // --- targets -------------------------------------------------------------
  for (int i = 0; i < 2; ++i) {
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
    if (const VkResult r = vkCreateImage(dev, &ici, nullptr, &w->images_[i]); r != VK_SUCCESS) {
      w->images_[i] = VK_NULL_HANDLE;
      return vk::error("vkCreateImage", r);
    }
    VkMemoryRequirements req{};
    vkGetImageMemoryRequirements(dev, w->images_[i], &req);
    auto type = ctx.find_memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (!type) type = ctx.find_memory_type(req.memoryTypeBits, 0);
    if (!type) return type.error();
    VkMemoryAllocateInfo mai{};
    mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = *type;
    if (const VkResult r = vkAllocateMemory(dev, &mai, nullptr, &w->memory_[i]); r != VK_SUCCESS) {
      w->memory_[i] = VK_NULL_HANDLE;
      return vk::error("vkAllocateMemory(" + std::to_string(req.size) + " bytes)", r);
    }
    if (const VkResult r = vkBindImageMemory(dev, w->images_[i], w->memory_[i], 0);
        r != VK_SUCCESS) {
      return vk::error("vkBindImageMemory", r);
    }
    VkImageViewCreateInfo vci{};
    vci.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO;
    vci.image = w->images_[i];
    vci.viewType = VK_IMAGE_VIEW_TYPE_2D;
    vci.format = kFormat;
    vci.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    if (const VkResult r = vkCreateImageView(dev, &vci, nullptr, &w->views_[i]); r != VK_SUCCESS) {
      w->views_[i] = VK_NULL_HANDLE;
      return vk::error("vkCreateImageView", r);
    }
  }

  // --- render pass: whole target rewritten, then sampled by the next pass --
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
  if (const VkResult r = vkCreateRenderPass(dev, &rpci, nullptr, &w->render_pass_);
      r != VK_SUCCESS) {
    w->render_pass_ = VK_NULL_HANDLE;
    return vk::error("vkCreateRenderPass", r);
  }
  for (int i = 0; i < 2; ++i) {
    VkFramebufferCreateInfo fci{};
    fci.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO;
    fci.renderPass = w->render_pass_;
    fci.attachmentCount = 1;
    fci.pAttachments = &w->views_[i];
    fci.width = desc.width;
    fci.height = desc.height;
    fci.layers = 1;
    if (const VkResult r = vkCreateFramebuffer(dev, &fci, nullptr, &w->framebuffers_[i]);
        r != VK_SUCCESS) {
      w->framebuffers_[i] = VK_NULL_HANDLE;
      return vk::error("vkCreateFramebuffer", r);
    }
  }

  // --- sampling the previous target ----------------------------------------
  VkSamplerCreateInfo sci{};
  sci.sType = VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO;
  sci.magFilter = VK_FILTER_LINEAR;
  sci.minFilter = VK_FILTER_LINEAR;
  sci.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST;
  sci.addressModeU = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  sci.addressModeV = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  sci.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  sci.maxLod = 0.0f;
  if (const VkResult r = vkCreateSampler(dev, &sci, nullptr, &w->sampler_); r != VK_SUCCESS) {
    w->sampler_ = VK_NULL_HANDLE;
    return vk::error("vkCreateSampler", r);
  }
  if (auto sets = vk::create_single_binding_sets(dev, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                                                 VK_SHADER_STAGE_FRAGMENT_BIT, 2, w->set_layout_,
                                                 w->descriptor_pool_, w->sets_);
      !sets) {
    return sets.error();
  }
  VkDescriptorImageInfo image_info[2]{};
  VkWriteDescriptorSet writes[2]{};
  for (int i = 0; i < 2; ++i) {
    image_info[i] = {w->sampler_, w->views_[1 - i], VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
    writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[i].dstSet = w->sets_[i];
    writes[i].dstBinding = 0;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    writes[i].pImageInfo = &image_info[i];
  }
  vkUpdateDescriptorSets(dev, 2, writes, 0, nullptr);

  // --- pipeline ------------------------------------------------------------
  auto layout = vk::create_pipeline_layout(dev, w->set_layout_, VK_SHADER_STAGE_FRAGMENT_BIT,
                                           sizeof(FragPush));
  if (!layout) return layout.error();
  w->layout_ = *layout;
  auto vert =
      vk::create_shader_module(dev, kFullscreenVert, sizeof(kFullscreenVert), "fullscreen.vert");
  if (!vert) return vert.error();
  w->vert_ = *vert;
  auto frag = vk::create_shader_module(dev, kBurnFrag, sizeof(kBurnFrag), "burn.frag");
  if (!frag) return frag.error();
  w->frag_ = *frag;

  VkPipelineShaderStageCreateInfo stages[2]{};
  stages[0].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
  stages[0].module = w->vert_;
  stages[0].pName = "main";
  stages[1].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
  stages[1].module = w->frag_;
  stages[1].pName = "main";
  VkPipelineVertexInputStateCreateInfo vertex_input{};
  vertex_input.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO;
  VkPipelineInputAssemblyStateCreateInfo assembly{};
  assembly.sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO;
  assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
  VkViewport viewport{0.0f, 0.0f, static_cast<float>(desc.width), static_cast<float>(desc.height),
                      0.0f, 1.0f};
  VkRect2D scissor{{0, 0}, {desc.width, desc.height}};
  VkPipelineViewportStateCreateInfo viewport_state{};
  viewport_state.sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO;
  viewport_state.viewportCount = 1;
  viewport_state.pViewports = &viewport;
  viewport_state.scissorCount = 1;
  viewport_state.pScissors = &scissor;
  VkPipelineRasterizationStateCreateInfo raster{};
  raster.sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO;
  raster.polygonMode = VK_POLYGON_MODE_FILL;
  raster.cullMode = VK_CULL_MODE_NONE;
  raster.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
  raster.lineWidth = 1.0f;
  VkPipelineMultisampleStateCreateInfo multisample{};
  multisample.sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO;
  multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
  VkPipelineColorBlendAttachmentState blend_attachment{};
  blend_attachment.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                                    VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
  VkPipelineColorBlendStateCreateInfo blend{};
  blend.sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO;
  blend.attachmentCount = 1;
  blend.pAttachments = &blend_attachment;
  VkGraphicsPipelineCreateInfo gpci{};
  gpci.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO;
  gpci.stageCount = 2;
  gpci.pStages = stages;
  gpci.pVertexInputState = &vertex_input;
  gpci.pInputAssemblyState = &assembly;
  gpci.pViewportState = &viewport_state;
  gpci.pRasterizationState = &raster;
  gpci.pMultisampleState = &multisample;
  gpci.pColorBlendState = &blend;
  gpci.layout = w->layout_;
  gpci.renderPass = w->render_pass_;
  gpci.subpass = 0;
  if (const VkResult r =
          vkCreateGraphicsPipelines(dev, VK_NULL_HANDLE, 1, &gpci, nullptr, &w->pipeline_);
      r != VK_SUCCESS) {
    w->pipeline_ = VK_NULL_HANDLE;
    return vk::error("vkCreateGraphicsPipelines", r);
  }

  // Known contents in both targets, in the layout the passes sample from;
  // then one untimed pass so a driver that compiles at first draw (llvmpipe)
  // does not charge it to the first timed pass.
  VulkanFragmentWorkload* self = w.get();
  auto ready = ctx.run_one_shot([self](VkCommandBuffer cmd) {
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
      to_clear[i].image = self->images_[i];
      to_clear[i].subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
      to_read[i] = to_clear[i];
      to_read[i].srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      to_read[i].dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
      to_read[i].oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
      to_read[i].newLayout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    }
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                         0, nullptr, 0, nullptr, 2, to_clear);
    const VkClearColorValue half{{0.5f, 0.5f, 0.5f, 0.5f}};
    const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    for (int i = 0; i < 2; ++i) {
      vkCmdClearColorImage(cmd, self->images_[i], VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &half, 1,
                           &range);
    }
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT,
                         0, 0, nullptr, 0, nullptr, 2, to_read);
    self->record_pass(cmd, 1, 0);
  });
  if (!ready) return ready.error();
  return w;
}

VulkanFragmentWorkload::~VulkanFragmentWorkload() {
  const VkDevice dev = ctx_.device();
  if (pipeline_ != VK_NULL_HANDLE) vkDestroyPipeline(dev, pipeline_, nullptr);
  if (frag_ != VK_NULL_HANDLE) vkDestroyShaderModule(dev, frag_, nullptr);
  if (vert_ != VK_NULL_HANDLE) vkDestroyShaderModule(dev, vert_, nullptr);
  if (layout_ != VK_NULL_HANDLE) vkDestroyPipelineLayout(dev, layout_, nullptr);
  if (descriptor_pool_ != VK_NULL_HANDLE) vkDestroyDescriptorPool(dev, descriptor_pool_, nullptr);
  if (set_layout_ != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(dev, set_layout_, nullptr);
  if (sampler_ != VK_NULL_HANDLE) vkDestroySampler(dev, sampler_, nullptr);
  for (int i = 0; i < 2; ++i) {
    if (framebuffers_[i] != VK_NULL_HANDLE) vkDestroyFramebuffer(dev, framebuffers_[i], nullptr);
    if (views_[i] != VK_NULL_HANDLE) vkDestroyImageView(dev, views_[i], nullptr);
    if (images_[i] != VK_NULL_HANDLE) vkDestroyImage(dev, images_[i], nullptr);
    if (memory_[i] != VK_NULL_HANDLE) vkFreeMemory(dev, memory_[i], nullptr);
  }
  if (render_pass_ != VK_NULL_HANDLE) vkDestroyRenderPass(dev, render_pass_, nullptr);
}

void VulkanFragmentWorkload::record_pass(VkCommandBuffer cmd, uint32_t complexity,
                                         uint32_t pass_index) {
  const uint32_t target = pass_index % 2;
  VkRenderPassBeginInfo rbi{};
  rbi.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO;
  rbi.renderPass = render_pass_;
  rbi.framebuffer = framebuffers_[target];
  rbi.renderArea = {{0, 0}, {desc_.width, desc_.height}};
  vkCmdBeginRenderPass(cmd, &rbi, VK_SUBPASS_CONTENTS_INLINE);
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline_);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, layout_, 0, 1, &sets_[target], 0,
                          nullptr);
  const FragPush push{complexity == 0 ? 1 : complexity, pass_index};
  vkCmdPushConstants(cmd, layout_, VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof(push), &push);
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
