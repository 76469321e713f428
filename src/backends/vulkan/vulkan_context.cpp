// VulkanContext::create: instance, device choice, queue family, logical
// device with its optional features (host query reset, calibrated
// timestamps), capabilities; and the context's submission helpers.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/vulkan/vk_dispatch.hpp"
#include "backends/vulkan/vk_util.hpp"
#include "backends/vulkan/vulkan_attach_parts.hpp"
#include "backends/vulkan/vulkan_context_parts.hpp"

namespace latlab {
namespace {

constexpr const char* kNoDevice =
    "no Vulkan device found (the driver sees no device). For a software device "
    "install Mesa's lavapipe (apt install mesa-vulkan-drivers)";
constexpr const char* kNoDriver =
    "no Vulkan driver could be loaded (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER). For a "
    "software device install Mesa's lavapipe (apt install mesa-vulkan-drivers)";

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The device VulkanContextDesc::device names: empty, the first discrete GPU
// else the first device; digits, an index; else a case-insensitive name
// substring. An error lists the devices.
Result<uint32_t> choose_device(const std::vector<vk::Probe>& probes, const std::string& selector) {
  const auto list_devices = [&] {
    std::string s;
    for (const auto& p : probes)
      s += "\n  " + std::to_string(p.report.index) + ": " + p.report.name;
    return s;
  };
  if (selector.empty()) {
    for (const auto& p : probes) {
      if (p.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) return p.report.index;
    }
    return 0u;
  }
  if (std::all_of(selector.begin(), selector.end(),
                  [](unsigned char c) { return std::isdigit(c); })) {
    uint64_t idx = 0;
    const auto [ptr, ec] = std::from_chars(selector.data(), selector.data() + selector.size(), idx);
    if (ec != std::errc{} || ptr != selector.data() + selector.size() || idx >= probes.size()) {
      return make_error("no Vulkan device with index " + selector + "; devices:" + list_devices());
    }
    return static_cast<uint32_t>(idx);
  }
  const std::string want = lower(selector);
  for (const auto& p : probes) {
    if (lower(p.report.name).find(want) != std::string::npos) return p.report.index;
  }
  return make_error("no Vulkan device matches \"" + selector + "\"; devices:" + list_devices());
}

// The queue family to use: compute-capable, able to time, graphics+compute
// preferred; nullopt when there is no compute family.
std::optional<uint32_t> choose_queue_family(const VulkanDeviceReport& report) {
  std::optional<uint32_t> family;
  int best = -1;
  for (const auto& q : report.queue_families) {
    const bool compute = (q.flags & VK_QUEUE_COMPUTE_BIT) != 0;
    if (!compute) continue;
    const bool graphics = (q.flags & VK_QUEUE_GRAPHICS_BIT) != 0;
    const int score = (q.timestamp_valid_bits > 0 ? 2 : 0) + (graphics ? 1 : 0);
    if (score > best) {
      best = score;
      family = q.index;
    }
  }
  return family;
}

// A logical device with its queues and the optional features it enabled.
struct OpenedDevice {
  VkDevice device = VK_NULL_HANDLE;  // owned by the caller
  std::vector<VkQueue> queues;       // queue 0 of each family asked for, in that order
  bool swapchain = false;  // VK_KHR_swapchain enabled (desc.present and offered)
};

bool device_offers(VkPhysicalDevice pd, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> props(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, props.data());
  return std::any_of(props.begin(), props.end(), [&](const VkExtensionProperties& e) {
    return std::string_view(e.extensionName) == name;
  });
}

// Creates the logical device on `pd` with one queue of each of `families`
// (distinct); what latlab wishes for (vulkan_attach_wishes: host query reset
// when `host_reset`, calibrated timestamps when offered) and VK_KHR_swapchain
// for a present path.
Result<OpenedDevice> open_device(VkPhysicalDevice pd, const std::vector<uint32_t>& families,
                                 const vk::Probe& probe, const VulkanAttachWishes& wishes,
                                 bool host_reset, const VulkanContextDesc& desc) {
  std::vector<const char*> extensions;
  VkPhysicalDeviceHostQueryResetFeatures reset_features = wishes.host_query_reset_features;
  for (const char* e : wishes.extensions) {
    if (host_reset || std::string_view(e) != VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME)
      extensions.push_back(e);
  }
  const bool swapchain = desc.present && device_offers(pd, VK_KHR_SWAPCHAIN_EXTENSION_NAME);
  if (swapchain) extensions.push_back(VK_KHR_SWAPCHAIN_EXTENSION_NAME);

  const float priority = 1.0f;
  std::vector<VkDeviceQueueCreateInfo> qcis(families.size());
  for (size_t i = 0; i < families.size(); ++i) {
    qcis[i].sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qcis[i].queueFamilyIndex = families[i];
    qcis[i].queueCount = 1;
    qcis[i].pQueuePriorities = &priority;
  }
  VkDeviceCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  dci.pNext = host_reset ? &reset_features : nullptr;
  dci.queueCreateInfoCount = static_cast<uint32_t>(qcis.size());
  dci.pQueueCreateInfos = qcis.data();
  dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  OpenedDevice out;
  out.swapchain = swapchain;
  if (const VkResult r = vkCreateDevice(pd, &dci, nullptr, &out.device); r != VK_SUCCESS) {
    return vk::error("vkCreateDevice on " + probe.report.name, r);
  }
  out.queues.resize(families.size());
  for (size_t i = 0; i < families.size(); ++i)
    vkGetDeviceQueue(out.device, families[i], 0, &out.queues[i]);
  return out;
}

// The attachment's capabilities, with the reasons of what the context's
// desc turned off (the attachment says "offered by the device but not
// enabled"; what the device does not offer keeps its reason).
VulkanCapabilities context_capabilities(VulkanCapabilities caps, const VulkanContextDesc& desc) {
  for (MissingCapability& m : caps.missing) {
    if (m.reason.rfind(vk::kOfferedNotEnabled, 0) != 0) continue;
    if (m.name == "calibrated_timestamps" && !desc.calibrated_timestamps) {
      m.reason =
          "turned off by VulkanContextDesc::calibrated_timestamps: calibration pairs are estimated "
          "by bracketing a submitted timestamp";
    } else if (m.name == "host_query_reset" && !desc.host_query_reset) {
      m.reason =
          "turned off by VulkanContextDesc::host_query_reset: queries are reset in the command "
          "buffer instead";
    }
  }
  return caps;
}

// The families to open: `primary` first, then (all_timing_queues) every
// other family that can time; the others go to `unopened` with the reason.
std::vector<uint32_t> families_to_open(const VulkanDeviceReport& report, uint32_t primary,
                                       bool all_timing_queues,
                                       std::vector<MissingCapability>& unopened) {
  std::vector<uint32_t> out{primary};
  for (const auto& q : report.queue_families) {
    if (q.index == primary) continue;
    const std::string name = "queue family " + std::to_string(q.index) + " (" + q.flags_text + ")";
    if (q.timestamp_valid_bits == 0) {
      unopened.push_back({name, "timestampValidBits = 0: its queues cannot write timestamps"});
    } else if (!all_timing_queues) {
      unopened.push_back({name, "not opened: one queue asked for (all timing queues off)"});
    } else {
      out.push_back(q.index);
    }
  }
  return out;
}

// The command pool of run_one_shot: transient, resettable buffers.
Result<VkCommandPool> make_one_shot_pool(VkDevice device, uint32_t family) {
  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.flags =
      VK_COMMAND_POOL_CREATE_TRANSIENT_BIT | VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = family;
  VkCommandPool pool = VK_NULL_HANDLE;
  if (const VkResult r = vkCreateCommandPool(device, &pci, nullptr, &pool); r != VK_SUCCESS) {
    return vk::error("vkCreateCommandPool", r);
  }
  return pool;
}

}  // namespace

Result<std::unique_ptr<VulkanContext>> VulkanContext::create(const VulkanContextDesc& desc) {
  std::unique_ptr<VulkanContext> ctx(new VulkanContext());
  VkDebugUtilsMessengerCreateInfoEXT messenger_ci{};
  if (desc.validation) {
    ctx->validation_ = std::make_unique<Validation>();
    messenger_ci = ctx->validation_->create_info();
  }
  auto inst = vk::make_instance(desc.max_api_version, desc.validation, &messenger_ci, desc.present);
  if (!inst) return inst.error();
  if (inst->instance == VK_NULL_HANDLE) return make_error(kNoDriver);
  ctx->instance_ = inst->instance;
  ctx->xcb_surface_ = inst->xcb_surface;
  if (desc.validation) {
    auto messenger = vk::create_messenger(ctx->instance_, messenger_ci);
    if (!messenger) return messenger.error();
    ctx->messenger_ = *messenger;
  }

  // --- which device --------------------------------------------------------
  const auto listed = vk::physical_devices(ctx->instance_);
  if (!listed) return listed.error();
  const auto& devices = *listed;
  if (devices.empty()) return make_error(kNoDevice);
  const auto fns = vk::InstanceFns::load(ctx->instance_, nullptr);
  if (!fns) return fns.error();
  std::vector<vk::Probe> probes;
  probes.reserve(devices.size());
  for (uint32_t i = 0; i < devices.size(); ++i)
    probes.push_back(vk::probe_device(*fns, inst->api, devices[i], i));
  const Result<uint32_t> chosen = choose_device(probes, desc.device);
  if (!chosen) return chosen.error();
  const vk::Probe& probe = probes[*chosen];
  ctx->physical_ = devices[*chosen];
  ctx->device_index_ = *chosen;
  ctx->props_ = probe.props;
  ctx->report_ = probe.report;
  ctx->api_version_ = probe.usable_api;
  vkGetPhysicalDeviceMemoryProperties(ctx->physical_, &ctx->memory_);
  if (!vk::at_least(ctx->api_version_, 1, 1)) {
    return make_error(probe.report.name + " supports Vulkan " + probe.report.api_version_text +
                      "; latlab needs 1.1");
  }

  // --- queue family, logical device, what it can do ------------------------
  const std::optional<uint32_t> family = choose_queue_family(probe.report);
  if (!family)
    return make_error(probe.report.name + " has no compute queue family; latlab needs one");
  ctx->family_ = *family;
  // The device is made as latlab asks a program to make its own
  // (vulkan_attach_wishes), then attached like one.
  VulkanAttachDesc attach{.instance = ctx->instance_,
                          .physical_device = ctx->physical_,
                          .queue_family = ctx->family_,
                          .api_version = inst->api};
  auto wishes = vulkan_attach_wishes(attach);
  if (!wishes) return wishes.error();
  const bool host_reset = desc.host_query_reset && wishes->host_query_reset;
  std::vector<uint32_t> families =
      families_to_open(probe.report, ctx->family_, desc.all_timing_queues, ctx->unopened_);
  Result<OpenedDevice> opened =
      open_device(ctx->physical_, families, probe, *wishes, host_reset, desc);
  if (!opened && families.size() > 1) {
    // A driver may refuse a queue of a family latlab records no work on
    // (video, optical flow): open the graphics, compute and transfer ones only.
    constexpr VkQueueFlags kWork = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT;
    std::vector<uint32_t> work;
    for (const uint32_t f : families) {
      const VulkanQueueFamilyReport& q = probe.report.queue_families[f];
      if (f == ctx->family_ || (q.flags & kWork) != 0) {
        work.push_back(f);
      } else {
        ctx->unopened_.push_back(
            {"queue family " + std::to_string(f) + " (" + q.flags_text + ")",
             "vkCreateDevice failed with a queue of every timing family (" +
                 opened.error().message + "); opened without this one"});
      }
    }
    if (work.size() < families.size()) {
      families = std::move(work);
      opened = open_device(ctx->physical_, families, probe, *wishes, host_reset, desc);
    }
  }
  if (!opened) return opened.error();
  ctx->device_ = opened->device;
  ctx->queue_ = opened->queues[0];
  for (size_t i = 0; i < families.size(); ++i) {
    const VulkanQueueFamilyReport& fam = probe.report.queue_families[families[i]];
    ctx->queues_.push_back(
        VulkanQueueInfo{.family = families[i],
                        .queue = opened->queues[i],
                        .flags = fam.flags,
                        .flags_text = fam.flags_text,
                        .ticks = TickFormat::from_period_ns(
                            probe.report.timestamp_period_ns,
                            fam.timestamp_valid_bits == 0 ? 64 : fam.timestamp_valid_bits),
                        .primary = i == 0});
    if (i > 0) ctx->extra_queue_mutexes_.push_back(std::make_unique<std::mutex>());
  }
  ctx->swapchain_ = opened->swapchain;

  // --- latlab's timing on it: the attach path ------------------------------
  attach.device = ctx->device_;
  attach.host_query_reset = host_reset;
  attach.calibrated_timestamps = probe.calibrated_ext && desc.calibrated_timestamps;
  attach.queue = ctx->queue_;
  VulkanContext* self = ctx.get();
  attach.queue_lock = [self](const std::function<void()>& submit) {
    std::lock_guard lock(self->queue_mutex_);
    submit();
  };
  auto attached = VulkanAttachment::create(attach);
  if (!attached) return attached.error();
  ctx->attachment_ = std::move(attached.value());
  ctx->ticks_ = ctx->attachment_->tick_format();
  ctx->caps_ = context_capabilities(ctx->attachment_->capabilities(), desc);

  // --- one-shot command pool -----------------------------------------------
  ctx->one_shot_ = std::make_unique<OneShot>();
  Result<VkCommandPool> pool = make_one_shot_pool(ctx->device_, ctx->family_);
  if (!pool) return pool.error();
  ctx->one_shot_->pool = *pool;
  return ctx;
}

VulkanContext::~VulkanContext() {
  if (device_ != VK_NULL_HANDLE) {
    {
      std::lock_guard lock(queue_mutex_);
      std::vector<std::unique_lock<std::mutex>> extra;
      for (auto& m : extra_queue_mutexes_) extra.emplace_back(*m);
      vkDeviceWaitIdle(device_);
    }
    attachment_.reset();  // its calibration objects, before the device
    if (one_shot_ && one_shot_->pool != VK_NULL_HANDLE)
      vkDestroyCommandPool(device_, one_shot_->pool, nullptr);
    vkDestroyDevice(device_, nullptr);
  }
  if (messenger_ != VK_NULL_HANDLE) vk::destroy_messenger(instance_, messenger_);
  if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

Result<void> VulkanContext::submit(VkCommandBuffer cmd, VkFence fence) const {
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  std::lock_guard lock(queue_mutex_);
  if (const VkResult r = vkQueueSubmit(queue_, 1, &si, fence); r != VK_SUCCESS)
    return vk::error("vkQueueSubmit", r);
  return {};
}

const VulkanQueueInfo* VulkanContext::find_queue(uint32_t family) const {
  for (const auto& q : queues_) {
    if (q.family == family) return &q;
  }
  return nullptr;
}

std::mutex& VulkanContext::queue_mutex(uint32_t family) const {
  for (size_t i = 1; i < queues_.size(); ++i) {
    if (queues_[i].family == family) return *extra_queue_mutexes_[i - 1];
  }
  return queue_mutex_;
}

Result<void> VulkanContext::submit(uint32_t family, VkCommandBuffer cmd, VkFence fence,
                                   const VulkanSubmitSync& sync) const {
  const VulkanQueueInfo* q = find_queue(family);
  if (q == nullptr) {
    return make_error("no queue of family " + std::to_string(family) + " is open on " +
                      device_name());
  }
  if (sync.wait.size() != sync.wait_stages.size()) {
    return make_error("VulkanSubmitSync: one wait stage per wait semaphore");
  }
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.waitSemaphoreCount = static_cast<uint32_t>(sync.wait.size());
  si.pWaitSemaphores = sync.wait.data();
  si.pWaitDstStageMask = sync.wait_stages.data();
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  si.signalSemaphoreCount = static_cast<uint32_t>(sync.signal.size());
  si.pSignalSemaphores = sync.signal.data();
  std::lock_guard lock(queue_mutex(family));
  if (const VkResult r = vkQueueSubmit(q->queue, 1, &si, fence); r != VK_SUCCESS)
    return vk::error("vkQueueSubmit", r);
  return {};
}

Result<void> VulkanContext::run_one_shot(const std::function<void(VkCommandBuffer)>& record) const {
  std::lock_guard lock(one_shot_->mu);
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = one_shot_->pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  if (const VkResult r = vkAllocateCommandBuffers(device_, &ai, &cmd); r != VK_SUCCESS) {
    return vk::error("vkAllocateCommandBuffers", r);
  }
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  VkFence fence = VK_NULL_HANDLE;
  if (const VkResult r = vkCreateFence(device_, &fci, nullptr, &fence); r != VK_SUCCESS) {
    vkFreeCommandBuffers(device_, one_shot_->pool, 1, &cmd);
    return vk::error("vkCreateFence", r);
  }
  const auto cleanup = [&] {
    vkDestroyFence(device_, fence, nullptr);
    vkFreeCommandBuffers(device_, one_shot_->pool, 1, &cmd);
  };
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(cmd, &bi);
  record(cmd);
  if (const VkResult r = vkEndCommandBuffer(cmd); r != VK_SUCCESS) {
    cleanup();
    return vk::error("vkEndCommandBuffer", r);
  }
  if (auto s = submit(cmd, fence); !s) {
    cleanup();
    return s.error();
  }
  const VkResult w = vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX);
  cleanup();
  if (w != VK_SUCCESS) return vk::error("vkWaitForFences", w);
  return {};
}

Result<CalibrationPair> VulkanContext::sample_calibration() const {
  return attachment_->sample_calibration();
}

Result<uint32_t> VulkanContext::find_memory_type(uint32_t type_bits,
                                                 VkMemoryPropertyFlags want) const {
  for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    if ((type_bits & (1u << i)) != 0 && (memory_.memoryTypes[i].propertyFlags & want) == want)
      return i;
  }
  return make_error("no memory type with the wanted properties on " + device_name());
}

}  // namespace latlab
