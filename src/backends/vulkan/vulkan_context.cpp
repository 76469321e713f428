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
#include "backends/vulkan/vk_unique.hpp"
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
  vk::UniqueDevice device;
  std::vector<VkQueue> queues;  // queue 0 of each family asked for, in that order
  bool swapchain = false;       // VK_KHR_swapchain enabled (desc.present and offered)
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
  VkDevice device = VK_NULL_HANDLE;
  if (const VkResult r = vkCreateDevice(pd, &dci, nullptr, &device); r != VK_SUCCESS) {
    return vk::error("vkCreateDevice on " + probe.report.name, r);
  }
  out.device = vk::UniqueDevice(nullptr, device, vkDestroyDevice);
  out.queues.resize(families.size());
  for (size_t i = 0; i < families.size(); ++i)
    vkGetDeviceQueue(device, families[i], 0, &out.queues[i]);
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

// open_device on every family to open; when the driver refuses, again on
// the graphics, compute and transfer ones only (a driver may refuse a queue
// of a family latlab records no work on: video, optical flow), the others
// going to `unopened` with the reason. `families` is left as opened.
Result<OpenedDevice> open_device_or_fewer(VkPhysicalDevice pd, std::vector<uint32_t>& families,
                                          uint32_t primary, const vk::Probe& probe,
                                          const VulkanAttachWishes& wishes, bool host_reset,
                                          const VulkanContextDesc& desc,
                                          std::vector<MissingCapability>& unopened) {
  Result<OpenedDevice> opened = open_device(pd, families, probe, wishes, host_reset, desc);
  if (opened || families.size() == 1) return opened;
  constexpr VkQueueFlags kWork =
      VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT;
  std::vector<uint32_t> work;
  for (const uint32_t f : families) {
    const VulkanQueueFamilyReport& q = probe.report.queue_families[f];
    if (f == primary || (q.flags & kWork) != 0) {
      work.push_back(f);
    } else {
      unopened.push_back({"queue family " + std::to_string(f) + " (" + q.flags_text + ")",
                          "vkCreateDevice failed with a queue of every timing family (" +
                              opened.error().message + "); opened without this one"});
    }
  }
  if (work.size() == families.size()) return opened;
  families = std::move(work);
  return open_device(pd, families, probe, wishes, host_reset, desc);
}

// What the context says of each opened queue (queues[i] of families[i]).
std::vector<VulkanQueueInfo> queue_infos(const VulkanDeviceReport& report,
                                         const std::vector<uint32_t>& families,
                                         const std::vector<VkQueue>& queues) {
  std::vector<VulkanQueueInfo> out;
  for (size_t i = 0; i < families.size(); ++i) {
    const VulkanQueueFamilyReport& fam = report.queue_families[families[i]];
    out.push_back(
        VulkanQueueInfo{.family = families[i],
                        .queue = queues[i],
                        .flags = fam.flags,
                        .flags_text = fam.flags_text,
                        .ticks = TickFormat::from_period_ns(
                            report.timestamp_period_ns,
                            fam.timestamp_valid_bits == 0 ? 64 : fam.timestamp_valid_bits),
                        .primary = i == 0});
  }
  return out;
}

// The command pool of run_one_shot: transient, resettable buffers.
Result<vk::UniqueCommandPool> make_one_shot_pool(VkDevice device, uint32_t family) {
  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.flags =
      VK_COMMAND_POOL_CREATE_TRANSIENT_BIT | VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = family;
  return vk::make(vkCreateCommandPool, device, pci, vkDestroyCommandPool, "vkCreateCommandPool");
}

// Every device of the instance probed; the one `selector` names.
struct ChosenDevice {
  VkPhysicalDevice pd = VK_NULL_HANDLE;
  uint32_t index = 0;
  vk::Probe probe;
};

Result<ChosenDevice> probe_and_choose(VkInstance instance, uint32_t instance_api,
                                      const std::string& selector) {
  const auto listed = vk::physical_devices(instance);
  if (!listed) return listed.error();
  const auto& devices = *listed;
  if (devices.empty()) return make_error(kNoDevice);
  const auto fns = vk::InstanceFns::load(instance, nullptr);
  if (!fns) return fns.error();
  std::vector<vk::Probe> probes;
  probes.reserve(devices.size());
  for (uint32_t i = 0; i < devices.size(); ++i)
    probes.push_back(vk::probe_device(*fns, instance_api, devices[i], i));
  const Result<uint32_t> chosen = choose_device(probes, selector);
  if (!chosen) return chosen.error();
  const vk::Probe& probe = probes[*chosen];
  if (!vk::at_least(probe.usable_api, 1, 1)) {
    return make_error(probe.report.name + " supports Vulkan " + probe.report.api_version_text +
                      "; latlab needs 1.1");
  }
  return ChosenDevice{devices[*chosen], *chosen, probe};
}

}  // namespace

Result<std::unique_ptr<VulkanContext>> VulkanContext::create(const VulkanContextDesc& desc) {
  std::unique_ptr<VulkanContext> ctx(new VulkanContext());
  ctx->owned_ = std::make_unique<Owned>();
  if (auto r = ctx->open_instance(desc); !r) return r.error();
  if (auto r = ctx->open_device(desc); !r) return r.error();
  if (auto r = ctx->attach(desc); !r) return r.error();
  ctx->one_shot_ = std::make_unique<OneShot>();
  auto pool = make_one_shot_pool(ctx->device(), ctx->family_);
  if (!pool) return pool.error();
  ctx->one_shot_->pool = std::move(*pool);
  return ctx;
}

Result<void> VulkanContext::open_instance(const VulkanContextDesc& desc) {
  VkDebugUtilsMessengerCreateInfoEXT messenger_ci{};
  if (desc.validation) {
    validation_ = std::make_unique<Validation>();
    messenger_ci = validation_->create_info();
  }
  auto inst = vk::make_instance(desc.max_api_version, desc.validation, &messenger_ci, desc.present);
  if (!inst) return inst.error();
  if (!inst->instance) return make_error(kNoDriver);
  owned_->instance = std::move(inst->instance);
  instance_api_ = inst->api;
  xcb_surface_ = inst->xcb_surface;
  wayland_surface_ = inst->wayland_surface;
  if (desc.validation) {
    auto messenger = vk::create_messenger(instance(), messenger_ci);
    if (!messenger) return messenger.error();
    owned_->messenger = std::move(*messenger);
  }
  return {};
}

Result<void> VulkanContext::open_device(const VulkanContextDesc& desc) {
  auto chosen = probe_and_choose(instance(), instance_api_, desc.device);
  if (!chosen) return chosen.error();
  const vk::Probe& probe = chosen->probe;
  physical_ = chosen->pd;
  device_index_ = chosen->index;
  props_ = probe.props;
  report_ = probe.report;
  api_version_ = probe.usable_api;
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);
  const std::optional<uint32_t> family = choose_queue_family(probe.report);
  if (!family)
    return make_error(probe.report.name + " has no compute queue family; latlab needs one");
  family_ = *family;
  calibrated_ext_ = probe.calibrated_ext;
  // The device is made as latlab asks a program to make its own
  // (vulkan_attach_wishes), then attached like one (attach()).
  auto wishes = vulkan_attach_wishes(attach_desc());
  if (!wishes) return wishes.error();
  host_reset_ = desc.host_query_reset && wishes->host_query_reset;
  std::vector<uint32_t> families =
      families_to_open(probe.report, family_, desc.all_timing_queues, unopened_);
  Result<OpenedDevice> opened = open_device_or_fewer(physical_, families, family_, probe, *wishes,
                                                     host_reset_, desc, unopened_);
  if (!opened) return opened.error();
  owned_->device = std::move(opened->device);
  queue_ = opened->queues[0];
  queues_ = queue_infos(probe.report, families, opened->queues);
  for (size_t i = 1; i < queues_.size(); ++i)
    extra_queue_mutexes_.push_back(std::make_unique<std::mutex>());
  swapchain_ = opened->swapchain;
  return {};
}

VulkanAttachDesc VulkanContext::attach_desc() const {
  return VulkanAttachDesc{.instance = instance(),
                          .physical_device = physical_,
                          .queue_family = family_,
                          .api_version = instance_api_};
}

// latlab's timing on the device: the attach path.
Result<void> VulkanContext::attach(const VulkanContextDesc& desc) {
  VulkanAttachDesc attach = attach_desc();
  attach.device = device();
  attach.host_query_reset = host_reset_;
  attach.calibrated_timestamps = calibrated_ext_ && desc.calibrated_timestamps;
  attach.queue = queue_;
  attach.queue_lock = [this](const std::function<void()>& submit) {
    std::lock_guard lock(queue_mutex_);
    submit();
  };
  auto attached = VulkanAttachment::create(attach);
  if (!attached) return attached.error();
  attachment_ = std::move(attached.value());
  // Every use of the context's queue takes queue_mutex(): its calibration
  // may submit from the refresh thread (the latency engine has no frame loop).
  attachment_->impl_->direct_submit = true;
  ticks_ = attachment_->tick_format();
  caps_ = context_capabilities(attachment_->capabilities(), desc);
  return {};
}

// Idle first (under every queue's lock); then the members go in reverse
// order (latlab/vulkan.hpp says which goes before which).
VulkanContext::~VulkanContext() {
  if (!owned_ || !owned_->device) return;
  std::lock_guard lock(queue_mutex_);
  std::vector<std::unique_lock<std::mutex>> extra;
  for (auto& m : extra_queue_mutexes_) extra.emplace_back(*m);
  vkDeviceWaitIdle(device());
}

VkInstance VulkanContext::instance() const { return owned_->instance.get(); }
VkDevice VulkanContext::device() const { return owned_->device.get(); }

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

namespace {
// A command buffer of `pool`, freed when it goes.
struct PoolCommandBuffer {
  VkDevice device;
  VkCommandPool pool;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  PoolCommandBuffer(VkDevice d, VkCommandPool p) : device(d), pool(p) {}
  PoolCommandBuffer(const PoolCommandBuffer&) = delete;
  PoolCommandBuffer& operator=(const PoolCommandBuffer&) = delete;
  ~PoolCommandBuffer() {
    if (cmd != VK_NULL_HANDLE) vkFreeCommandBuffers(device, pool, 1, &cmd);
  }
};
}  // namespace

Result<void> VulkanContext::run_one_shot(const std::function<void(VkCommandBuffer)>& record) const {
  std::lock_guard lock(one_shot_->mu);
  const VkDevice dev = device();
  // Declared before the fence: the fence goes first, then the buffer.
  PoolCommandBuffer buffer{dev, one_shot_->pool.get()};
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = buffer.pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  if (const VkResult r = vkAllocateCommandBuffers(dev, &ai, &buffer.cmd); r != VK_SUCCESS) {
    buffer.cmd = VK_NULL_HANDLE;
    return vk::error("vkAllocateCommandBuffers", r);
  }
  const VkCommandBuffer cmd = buffer.cmd;
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  auto fence = vk::make(vkCreateFence, dev, fci, vkDestroyFence, "vkCreateFence");
  if (!fence) return fence.error();
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(cmd, &bi);
  record(cmd);
  if (const VkResult r = vkEndCommandBuffer(cmd); r != VK_SUCCESS)
    return vk::error("vkEndCommandBuffer", r);
  const VkFence f = fence->get();
  if (auto s = submit(cmd, f); !s) return s.error();
  if (const VkResult w = vkWaitForFences(dev, 1, &f, VK_TRUE, UINT64_MAX); w != VK_SUCCESS)
    return vk::error("vkWaitForFences", w);
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
