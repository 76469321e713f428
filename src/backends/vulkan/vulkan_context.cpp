// VulkanContext and device reports: instance, device choice, queue with
// timestamps, optional features (host query reset, calibrated timestamps),
// validation messenger.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <deque>

#if defined(__SANITIZE_ADDRESS__)
#include <dlfcn.h>
#include <link.h>
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <dlfcn.h>
#include <link.h>
#endif
#endif

#include "backends/vulkan/vk_util.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/vulkan.hpp"

namespace latlab {
namespace vk {

const char* result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_UNKNOWN: return "VK_ERROR_UNKNOWN";
    default: return "VkResult(other)";
  }
}

Error error(const std::string& what, VkResult r) {
  std::string msg = what + " failed: " + result_name(r);
  if (r == VK_ERROR_DEVICE_LOST) msg += " (the GPU or its driver reset; restart the run)";
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY) msg += " (try a smaller --size)";
  return make_error(std::move(msg));
}

std::string version_text(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

uint32_t min_version(uint32_t a, uint32_t b) {
  const uint32_t va = VK_MAKE_API_VERSION(0, VK_API_VERSION_MAJOR(a), VK_API_VERSION_MINOR(a), VK_API_VERSION_PATCH(a));
  const uint32_t vb = VK_MAKE_API_VERSION(0, VK_API_VERSION_MAJOR(b), VK_API_VERSION_MINOR(b), VK_API_VERSION_PATCH(b));
  return std::min(va, vb);
}

}  // namespace vk

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LATLAB_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define LATLAB_ASAN 1
#endif

#if defined(LATLAB_ASAN)
// AddressSanitizer builds only. Mesa's Vulkan drivers (lavapipe) allocate
// process globals under pthread_once; when the loader dlcloses the driver
// at vkDestroyInstance those become unreachable and LeakSanitizer reports
// them, with frames it can no longer symbolise (so no suppression can name
// them). Keeping the loaded drivers and layers resident keeps the globals
// reachable; leaks in latlab's own code are still reported.
void keep_vulkan_modules_loaded() {
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void*) -> int {
        const char* name = info->dlpi_name;
        if (name != nullptr && (std::strstr(name, "libvulkan_") != nullptr || std::strstr(name, "libVkLayer_") != nullptr)) {
          (void)dlopen(name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
        }
        return 0;
      },
      nullptr);
}
#else
void keep_vulkan_modules_loaded() {}
#endif
constexpr size_t kMaxValidationMessages = 256;

bool at_least(uint32_t version, uint32_t major, uint32_t minor) {
  return VK_API_VERSION_MAJOR(version) > major ||
         (VK_API_VERSION_MAJOR(version) == major && VK_API_VERSION_MINOR(version) >= minor);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

std::string queue_flags_text(VkQueueFlags f) {
  std::string s;
  const auto add = [&](VkQueueFlags bit, const char* name) {
    if ((f & bit) == 0) return;
    if (!s.empty()) s += "|";
    s += name;
  };
  add(VK_QUEUE_GRAPHICS_BIT, "graphics");
  add(VK_QUEUE_COMPUTE_BIT, "compute");
  add(VK_QUEUE_TRANSFER_BIT, "transfer");
  add(VK_QUEUE_SPARSE_BINDING_BIT, "sparse");
  add(VK_QUEUE_PROTECTED_BIT, "protected");
  return s.empty() ? "none" : s;
}

std::vector<std::string> device_extensions(VkPhysicalDevice pd) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> props(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, props.data());
  std::vector<std::string> out;
  out.reserve(n);
  for (uint32_t i = 0; i < n; ++i) out.emplace_back(props[i].extensionName);
  return out;
}

bool has(const std::vector<std::string>& list, const char* name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// The facts about one physical device, as seen through `instance` (created
// at `instance_api`). Also says which extensions to enable on it.
struct Probe {
  VulkanDeviceReport report;
  VkPhysicalDeviceProperties props{};
  uint32_t usable_api = 0;  // min(instance, device)
  bool host_reset_core = false;  // feature via Vulkan 1.2
  bool host_reset_ext = false;   // feature via VK_EXT_host_query_reset
  bool calibrated_ext = false;
  bool has_device_domain = false;
  bool has_monotonic_domain = false;
};

Probe probe_device(VkInstance instance, uint32_t instance_api, VkPhysicalDevice pd, uint32_t index) {
  Probe p;
  VulkanDeviceReport& r = p.report;
  vkGetPhysicalDeviceProperties(pd, &p.props);
  p.usable_api = vk::min_version(instance_api, p.props.apiVersion);
  const auto exts = device_extensions(pd);

  r.index = index;
  r.name = p.props.deviceName;
  r.type = type_name(p.props.deviceType);
  r.vendor_id = p.props.vendorID;
  r.device_id = p.props.deviceID;
  r.driver_version = p.props.driverVersion;
  r.api_version = p.props.apiVersion;
  r.api_version_text = vk::version_text(p.props.apiVersion);
  r.timestamp_period_ns = static_cast<double>(p.props.limits.timestampPeriod);
  r.timestamp_compute_and_graphics = p.props.limits.timestampComputeAndGraphics == VK_TRUE;

  // The *2 queries are core 1.1: a 1.0 device gets the plain facts only.
  const bool v11 = at_least(p.usable_api, 1, 1);
  if (v11 && (at_least(p.usable_api, 1, 2) || has(exts, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME))) {
    VkPhysicalDeviceDriverProperties driver{};
    driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
    VkPhysicalDeviceProperties2 props2{};
    props2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    props2.pNext = &driver;
    vkGetPhysicalDeviceProperties2(pd, &props2);
    r.driver_name = driver.driverName;
    r.driver_info = driver.driverInfo;
    r.driver_id = static_cast<uint32_t>(driver.driverID);
  }

  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> families(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, families.data());
  bool any_bits = false;
  for (uint32_t i = 0; i < nq; ++i) {
    VulkanQueueFamilyReport q;
    q.index = i;
    q.flags = families[i].queueFlags;
    q.flags_text = queue_flags_text(q.flags);
    q.queue_count = families[i].queueCount;
    q.timestamp_valid_bits = families[i].timestampValidBits;
    any_bits = any_bits || (q.timestamp_valid_bits > 0 && (q.flags & VK_QUEUE_COMPUTE_BIT) != 0);
    r.queue_families.push_back(q);
  }

  // Host query reset: core in 1.2, else the extension; the feature must be on.
  const bool ext_reset = has(exts, VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME);
  if (v11 && (at_least(p.usable_api, 1, 2) || ext_reset)) {
    VkPhysicalDeviceHostQueryResetFeatures reset{};
    reset.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES;
    VkPhysicalDeviceFeatures2 f2{};
    f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f2.pNext = &reset;
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    if (reset.hostQueryReset == VK_TRUE) {
      p.host_reset_core = at_least(p.usable_api, 1, 2);
      p.host_reset_ext = !p.host_reset_core;
    }
  }
  r.host_query_reset = p.host_reset_core || p.host_reset_ext;

  p.calibrated_ext = has(exts, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
  r.calibrated_timestamps = p.calibrated_ext;
  if (p.calibrated_ext) {
    auto get_domains = reinterpret_cast<PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT"));
    if (get_domains != nullptr) {
      uint32_t nd = 0;
      get_domains(pd, &nd, nullptr);
      std::vector<VkTimeDomainEXT> domains(nd);
      get_domains(pd, &nd, domains.data());
      domains.resize(nd);
      for (const VkTimeDomainEXT d : domains) {
        r.time_domains.push_back(time_domain_name(d));
        p.has_device_domain = p.has_device_domain || d == VK_TIME_DOMAIN_DEVICE_EXT;
        p.has_monotonic_domain = p.has_monotonic_domain || d == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
      }
    }
  }

  if (!any_bits) {
    r.missing.push_back({"timestamps", "no compute-capable queue family reports timestampValidBits > 0: GPU "
                                       "work cannot be timed on this device"});
  } else if (!r.timestamp_compute_and_graphics) {
    r.missing.push_back({"timestamp_compute_and_graphics",
                         "timestampComputeAndGraphics is false: only the queue families listed with valid "
                         "bits > 0 can time"});
  }
  if (r.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE) {
    r.missing.push_back({"non_blocking_query_reads",
                         "lavapipe waits for the device to go idle inside vkGetQueryPoolResults (even without "
                         "the WAIT flag): reading results stalls while later frames are in flight"});
  }
  if (!r.host_query_reset) {
    r.missing.push_back({"host_query_reset", "needs Vulkan 1.2 or VK_EXT_host_query_reset with the hostQueryReset "
                                             "feature: queries are reset in the command buffer instead"});
  }
  if (!p.calibrated_ext) {
    r.missing.push_back({"calibrated_timestamps", "VK_EXT_calibrated_timestamps not supported: calibration pairs "
                                                  "are estimated by bracketing a submitted timestamp"});
  } else if (!p.has_device_domain || !p.has_monotonic_domain) {
    r.missing.push_back({"calibration_clock_monotonic",
                         std::string("VK_EXT_calibrated_timestamps does not offer ") +
                             (!p.has_device_domain ? "the device domain" : "CLOCK_MONOTONIC") +
                             ": calibration pairs are estimated by bracketing a submitted timestamp"});
  }
  return p;
}

}  // namespace

std::string time_domain_name(VkTimeDomainEXT domain) {
  switch (domain) {
    case VK_TIME_DOMAIN_DEVICE_EXT: return "device";
    case VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT: return "clock_monotonic";
    case VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT: return "clock_monotonic_raw";
    case VK_TIME_DOMAIN_QUERY_PERFORMANCE_COUNTER_EXT: return "query_performance_counter";
    default: return "domain_" + std::to_string(static_cast<int>(domain));
  }
}

// ---------------------------------------------------------------------------
// Validation messages

struct VulkanContext::Validation {
  mutable std::mutex mu;
  uint64_t errors = 0;
  std::deque<std::string> messages;

  static VKAPI_ATTR VkBool32 VKAPI_CALL callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT /*types*/,
                                                 const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                 void* user) {
    auto* self = static_cast<Validation*>(user);
    const bool is_error = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0;
    std::string text = is_error ? "[error] " : "[warning] ";
    text += (data != nullptr && data->pMessage != nullptr) ? data->pMessage : "(no message)";
    std::lock_guard lock(self->mu);
    if (is_error) ++self->errors;
    self->messages.push_back(std::move(text));
    while (self->messages.size() > kMaxValidationMessages) self->messages.pop_front();
    return VK_FALSE;  // never abort the call
  }

  VkDebugUtilsMessengerCreateInfoEXT create_info() {
    VkDebugUtilsMessengerCreateInfoEXT ci{};
    ci.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    ci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    ci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    ci.pfnUserCallback = &Validation::callback;
    ci.pUserData = this;
    return ci;
  }
};

struct VulkanContext::OneShot {
  std::mutex mu;
  VkCommandPool pool = VK_NULL_HANDLE;
};

// A pre-recorded command buffer that resets one query and writes a
// timestamp into it, with its fence; one sample at a time (mu).
struct VulkanContext::Estimator {
  std::mutex mu;
  VkQueryPool query = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
};

uint64_t VulkanContext::validation_error_count() const {
  if (!validation_) return 0;
  std::lock_guard lock(validation_->mu);
  return validation_->errors;
}

std::vector<std::string> VulkanContext::validation_messages() const {
  if (!validation_) return {};
  std::lock_guard lock(validation_->mu);
  return {validation_->messages.begin(), validation_->messages.end()};
}

// ---------------------------------------------------------------------------
// Instance

namespace {

struct InstanceChoice {
  VkInstance instance = VK_NULL_HANDLE;
  uint32_t api = 0;
};

// VK_ERROR_INCOMPATIBLE_DRIVER comes back as an empty instance (no driver),
// other failures as errors.
Result<InstanceChoice> make_instance(uint32_t max_api, bool validation,
                                     const VkDebugUtilsMessengerCreateInfoEXT* messenger) {
  uint32_t loader = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion(&loader) != VK_SUCCESS) loader = VK_API_VERSION_1_0;
  if (!at_least(loader, 1, 1)) {
    return make_error("the Vulkan loader supports only " + vk::version_text(loader) +
                      "; latlab needs Vulkan 1.1 (update libvulkan1)");
  }
  InstanceChoice out;
  out.api = vk::min_version(loader, max_api);
  if (!at_least(out.api, 1, 1)) out.api = VK_API_VERSION_1_1;

  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  if (validation) {
    uint32_t n = 0;
    vkEnumerateInstanceLayerProperties(&n, nullptr);
    std::vector<VkLayerProperties> props(n);
    vkEnumerateInstanceLayerProperties(&n, props.data());
    const bool found = std::any_of(props.begin(), props.end(),
                                   [](const VkLayerProperties& l) { return std::strcmp(l.layerName, kValidationLayer) == 0; });
    if (!found) {
      return make_error(std::string(kValidationLayer) +
                        " is not installed (Debian/Ubuntu: apt install vulkan-validationlayers); "
                        "run without validation or install it");
    }
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }

  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "latlab";
  app.applicationVersion = VK_MAKE_API_VERSION(0, 0, 1, 0);
  app.pEngineName = "latlab";
  app.engineVersion = VK_MAKE_API_VERSION(0, 0, 1, 0);
  app.apiVersion = out.api;

  VkInstanceCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ci.pNext = validation ? messenger : nullptr;
  ci.pApplicationInfo = &app;
  ci.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  ci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  ci.ppEnabledExtensionNames = extensions.data();
  const VkResult r = vkCreateInstance(&ci, nullptr, &out.instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
    out.instance = VK_NULL_HANDLE;
    return out;
  }
  if (r != VK_SUCCESS) return vk::error("vkCreateInstance", r);
  keep_vulkan_modules_loaded();
  return out;
}

// The instance's devices; an error (with the driver's code) when the driver
// fails to enumerate, so "no device" only ever means none exists.
Result<std::vector<VkPhysicalDevice>> physical_devices(VkInstance instance) {
  uint32_t n = 0;
  VkResult r = vkEnumeratePhysicalDevices(instance, &n, nullptr);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return vk::error("vkEnumeratePhysicalDevices", r);
  std::vector<VkPhysicalDevice> out(n);
  if (n > 0) {
    r = vkEnumeratePhysicalDevices(instance, &n, out.data());
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) return vk::error("vkEnumeratePhysicalDevices", r);
  }
  out.resize(n);
  return out;
}

constexpr const char* kNoDevice =
    "no Vulkan device found (the driver sees no device). For a software device "
    "install Mesa's lavapipe (apt install mesa-vulkan-drivers)";
constexpr const char* kNoDriver =
    "no Vulkan driver could be loaded (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER). For a "
    "software device install Mesa's lavapipe (apt install mesa-vulkan-drivers)";

}  // namespace

Result<std::vector<VulkanDeviceReport>> enumerate_vulkan_devices() {
  auto inst = make_instance(VK_API_VERSION_1_3, false, nullptr);
  if (!inst) return inst.error();
  std::vector<VulkanDeviceReport> out;
  if (inst->instance == VK_NULL_HANDLE) return out;
  const auto listed = physical_devices(inst->instance);
  if (!listed) {
    vkDestroyInstance(inst->instance, nullptr);
    return listed.error();
  }
  const auto& devices = *listed;
  for (uint32_t i = 0; i < devices.size(); ++i) {
    out.push_back(probe_device(inst->instance, inst->api, devices[i], i).report);
  }
  vkDestroyInstance(inst->instance, nullptr);
  return out;
}

// ---------------------------------------------------------------------------
// Context

Result<std::unique_ptr<VulkanContext>> VulkanContext::create(const VulkanContextDesc& desc) {
  std::unique_ptr<VulkanContext> ctx(new VulkanContext());
  VkDebugUtilsMessengerCreateInfoEXT messenger_ci{};
  if (desc.validation) {
    ctx->validation_ = std::make_unique<Validation>();
    messenger_ci = ctx->validation_->create_info();
  }
  auto inst = make_instance(desc.max_api_version, desc.validation, &messenger_ci);
  if (!inst) return inst.error();
  if (inst->instance == VK_NULL_HANDLE) return make_error(kNoDriver);
  ctx->instance_ = inst->instance;

  if (desc.validation) {
    auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(ctx->instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (create_messenger == nullptr) return make_error("vkCreateDebugUtilsMessengerEXT is not available");
    const VkResult r = create_messenger(ctx->instance_, &messenger_ci, nullptr, &ctx->messenger_);
    if (r != VK_SUCCESS) return vk::error("vkCreateDebugUtilsMessengerEXT", r);
  }

  // --- which device --------------------------------------------------------
  const auto listed = physical_devices(ctx->instance_);
  if (!listed) return listed.error();
  const auto& devices = *listed;
  if (devices.empty()) return make_error(kNoDevice);
  std::vector<Probe> probes;
  probes.reserve(devices.size());
  for (uint32_t i = 0; i < devices.size(); ++i) probes.push_back(probe_device(ctx->instance_, inst->api, devices[i], i));
  const auto list_devices = [&] {
    std::string s;
    for (const auto& p : probes) s += "\n  " + std::to_string(p.report.index) + ": " + p.report.name;
    return s;
  };

  std::optional<uint32_t> chosen;
  if (desc.device.empty()) {
    for (const auto& p : probes) {
      if (p.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) {
        chosen = p.report.index;
        break;
      }
    }
    if (!chosen) chosen = 0;
  } else if (std::all_of(desc.device.begin(), desc.device.end(), [](unsigned char c) { return std::isdigit(c); })) {
    uint64_t idx = 0;
    const auto [ptr, ec] = std::from_chars(desc.device.data(), desc.device.data() + desc.device.size(), idx);
    if (ec != std::errc{} || ptr != desc.device.data() + desc.device.size() || idx >= probes.size()) {
      return make_error("no Vulkan device with index " + desc.device + "; devices:" + list_devices());
    }
    chosen = static_cast<uint32_t>(idx);
  } else {
    const std::string want = lower(desc.device);
    for (const auto& p : probes) {
      if (lower(p.report.name).find(want) != std::string::npos) {
        chosen = p.report.index;
        break;
      }
    }
    if (!chosen) return make_error("no Vulkan device matches \"" + desc.device + "\"; devices:" + list_devices());
  }
  const Probe& probe = probes[*chosen];
  ctx->physical_ = devices[*chosen];
  ctx->device_index_ = *chosen;
  ctx->props_ = probe.props;
  ctx->report_ = probe.report;
  ctx->api_version_ = probe.usable_api;
  vkGetPhysicalDeviceMemoryProperties(ctx->physical_, &ctx->memory_);
  if (!at_least(ctx->api_version_, 1, 1)) {
    return make_error(probe.report.name + " supports Vulkan " + probe.report.api_version_text +
                      "; latlab needs 1.1");
  }

  // --- which queue family: can time, graphics+compute preferred ------------
  std::optional<uint32_t> family;
  int best = -1;
  for (const auto& q : probe.report.queue_families) {
    const bool compute = (q.flags & VK_QUEUE_COMPUTE_BIT) != 0;
    if (!compute) continue;
    const bool graphics = (q.flags & VK_QUEUE_GRAPHICS_BIT) != 0;
    const int score = (q.timestamp_valid_bits > 0 ? 2 : 0) + (graphics ? 1 : 0);
    if (score > best) {
      best = score;
      family = q.index;
    }
  }
  if (!family) return make_error(probe.report.name + " has no compute queue family; latlab needs one");
  ctx->family_ = *family;
  const uint32_t valid_bits = probe.report.queue_families[*family].timestamp_valid_bits;

  // --- logical device ------------------------------------------------------
  std::vector<const char*> extensions;
  VkPhysicalDeviceHostQueryResetFeatures reset_features{};
  reset_features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES;
  const bool host_reset = desc.host_query_reset && (probe.host_reset_core || probe.host_reset_ext);
  if (host_reset) {
    reset_features.hostQueryReset = VK_TRUE;
    if (probe.host_reset_ext) extensions.push_back(VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME);
  }
  if (probe.calibrated_ext) extensions.push_back(VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{};
  qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qci.queueFamilyIndex = ctx->family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  dci.pNext = host_reset ? &reset_features : nullptr;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  if (const VkResult r = vkCreateDevice(ctx->physical_, &dci, nullptr, &ctx->device_); r != VK_SUCCESS) {
    ctx->device_ = VK_NULL_HANDLE;
    return vk::error("vkCreateDevice on " + probe.report.name, r);
  }
  vkGetDeviceQueue(ctx->device_, ctx->family_, 0, &ctx->queue_);

  if (host_reset) {
    ctx->reset_query_pool_ = reinterpret_cast<PFN_vkResetQueryPoolEXT>(
        vkGetDeviceProcAddr(ctx->device_, probe.host_reset_core ? "vkResetQueryPool" : "vkResetQueryPoolEXT"));
  }
  if (probe.calibrated_ext && desc.calibrated_timestamps) {
    ctx->get_calibrated_timestamps_ = reinterpret_cast<PFN_vkGetCalibratedTimestampsEXT>(
        vkGetDeviceProcAddr(ctx->device_, "vkGetCalibratedTimestampsEXT"));
  }

  // --- what it can do ------------------------------------------------------
  ctx->ticks_ = TickFormat::from_period_ns(probe.report.timestamp_period_ns, valid_bits == 0 ? 64 : valid_bits);
  VulkanCapabilities& caps = ctx->caps_;
  caps.timestamps = valid_bits > 0 && probe.report.timestamp_period_ns > 0.0;
  caps.timestamp_valid_bits = valid_bits;
  caps.host_query_reset = ctx->reset_query_pool_ != nullptr;
  caps.calibrated_timestamps = ctx->get_calibrated_timestamps_ != nullptr;
  caps.query_reads_wait_idle = probe.report.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE;
  caps.time_domains = probe.report.time_domains;
  if (!caps.timestamps) {
    caps.calibration_method.clear();
  } else if (caps.calibrated_timestamps && probe.has_device_domain && probe.has_monotonic_domain) {
    caps.calibration_method = "vkGetCalibratedTimestampsEXT(device, clock_monotonic)";
    caps.calibration_domain = "CLOCK_MONOTONIC";
  } else {
    caps.calibration_method = "bracketed submit (estimated): host reads before vkQueueSubmit and after the fence";
    caps.calibration_domain = "CLOCK_MONOTONIC";
    caps.calibration_estimated = true;
  }
  if (!desc.calibrated_timestamps && probe.calibrated_ext) {
    caps.missing.push_back({"calibrated_timestamps", "turned off by VulkanContextDesc::calibrated_timestamps: "
                                                     "calibration pairs are estimated by bracketing a submitted "
                                                     "timestamp"});
  }
  if (!host_reset && (probe.host_reset_core || probe.host_reset_ext)) {
    caps.missing.push_back({"host_query_reset", "turned off by VulkanContextDesc::host_query_reset: queries are "
                                                "reset in the command buffer instead"});
  }
  for (const auto& m : probe.report.missing) {
    // The device-wide "timestamps" entry is about any family; restate it for
    // the chosen queue below.
    if (m.name != "timestamps" && m.name != "timestamp_compute_and_graphics") caps.missing.push_back(m);
  }
  if (!caps.timestamps) {
    caps.missing.insert(caps.missing.begin(),
                        MissingCapability{"timestamps", "queue family " + std::to_string(ctx->family_) +
                                                            " reports timestampValidBits = 0: GPU work cannot be "
                                                            "timed; results will be missing, not zero"});
  }

  // --- one-shot command pool -----------------------------------------------
  ctx->one_shot_ = std::make_unique<OneShot>();
  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT | VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = ctx->family_;
  if (const VkResult r = vkCreateCommandPool(ctx->device_, &pci, nullptr, &ctx->one_shot_->pool); r != VK_SUCCESS) {
    ctx->one_shot_->pool = VK_NULL_HANDLE;
    return vk::error("vkCreateCommandPool", r);
  }
  if (caps.timestamps && caps.calibration_estimated) {
    if (auto e = ctx->create_estimator(); !e) return e.error();
  }
  return ctx;
}

VulkanContext::~VulkanContext() {
  if (device_ != VK_NULL_HANDLE) {
    {
      std::lock_guard lock(queue_mutex_);
      vkDeviceWaitIdle(device_);
    }
    if (estimator_) {
      if (estimator_->fence != VK_NULL_HANDLE) vkDestroyFence(device_, estimator_->fence, nullptr);
      if (estimator_->pool != VK_NULL_HANDLE) vkDestroyCommandPool(device_, estimator_->pool, nullptr);
      if (estimator_->query != VK_NULL_HANDLE) vkDestroyQueryPool(device_, estimator_->query, nullptr);
    }
    if (one_shot_ && one_shot_->pool != VK_NULL_HANDLE) vkDestroyCommandPool(device_, one_shot_->pool, nullptr);
    vkDestroyDevice(device_, nullptr);
  }
  if (messenger_ != VK_NULL_HANDLE) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy != nullptr) destroy(instance_, messenger_, nullptr);
  }
  if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

Result<void> VulkanContext::submit(VkCommandBuffer cmd, VkFence fence) const {
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  std::lock_guard lock(queue_mutex_);
  if (const VkResult r = vkQueueSubmit(queue_, 1, &si, fence); r != VK_SUCCESS) return vk::error("vkQueueSubmit", r);
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

Result<uint32_t> VulkanContext::find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags want) const {
  for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    if ((type_bits & (1u << i)) != 0 && (memory_.memoryTypes[i].propertyFlags & want) == want) return i;
  }
  return make_error("no memory type with the wanted properties on " + device_name());
}

// ---------------------------------------------------------------------------
// Calibration

Result<void> VulkanContext::create_estimator() {
  estimator_ = std::make_unique<Estimator>();
  Estimator& e = *estimator_;
  VkQueryPoolCreateInfo qci{};
  qci.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qci.queryCount = 1;
  if (const VkResult r = vkCreateQueryPool(device_, &qci, nullptr, &e.query); r != VK_SUCCESS) {
    e.query = VK_NULL_HANDLE;
    return vk::error("vkCreateQueryPool (calibration)", r);
  }
  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.queueFamilyIndex = family_;
  if (const VkResult r = vkCreateCommandPool(device_, &pci, nullptr, &e.pool); r != VK_SUCCESS) {
    e.pool = VK_NULL_HANDLE;
    return vk::error("vkCreateCommandPool (calibration)", r);
  }
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = e.pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  if (const VkResult r = vkAllocateCommandBuffers(device_, &ai, &e.cmd); r != VK_SUCCESS) {
    return vk::error("vkAllocateCommandBuffers (calibration)", r);
  }
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  if (const VkResult r = vkCreateFence(device_, &fci, nullptr, &e.fence); r != VK_SUCCESS) {
    e.fence = VK_NULL_HANDLE;
    return vk::error("vkCreateFence (calibration)", r);
  }
  // Recorded once, resubmitted for every sample (each after the previous
  // one's fence).
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  vkBeginCommandBuffer(e.cmd, &bi);
  vkCmdResetQueryPool(e.cmd, e.query, 0, 1);
  vkCmdWriteTimestamp(e.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, e.query, 0);
  if (const VkResult r = vkEndCommandBuffer(e.cmd); r != VK_SUCCESS) {
    return vk::error("vkEndCommandBuffer (calibration)", r);
  }
  return {};
}

Result<CalibrationPair> VulkanContext::sample_calibration() const {
  if (!caps_.timestamps) {
    return make_error(device_name() + " cannot write GPU timestamps on queue family " + std::to_string(family_) +
                      ": no calibration possible");
  }
  if (!caps_.calibration_estimated && get_calibrated_timestamps_ != nullptr) {
    // Device and the run's host clock. Never CLOCK_MONOTONIC_RAW: it is not
    // the host clock (RAW and MONOTONIC differ by the accumulated NTP slew;
    // a RAW pair used as MONOTONIC was seen ~144 ms off on lavapipe).
    VkCalibratedTimestampInfoEXT infos[2]{};
    infos[0].sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT;
    infos[0].timeDomain = VK_TIME_DOMAIN_DEVICE_EXT;
    infos[1].sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT;
    infos[1].timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
    uint64_t ts[2] = {0, 0};
    uint64_t deviation = 0;
    if (const VkResult r = get_calibrated_timestamps_(device_, 2, infos, ts, &deviation); r != VK_SUCCESS) {
      return vk::error("vkGetCalibratedTimestampsEXT", r);
    }
    CalibrationPair pair;
    pair.device_ticks = ts[0] & ticks_.mask();
    pair.host_ns = static_cast<int64_t>(ts[1]);
    pair.max_deviation_ns = static_cast<int64_t>(deviation);
    pair.estimated = false;
    return pair;
  }
  return sample_estimated();
}

Result<CalibrationPair> VulkanContext::sample_estimated() const {
  Estimator& e = *estimator_;
  std::lock_guard lock(e.mu);
  if (const VkResult r = vkResetFences(device_, 1, &e.fence); r != VK_SUCCESS) return vk::error("vkResetFences", r);
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &e.cmd;
  int64_t before = 0;
  {
    std::lock_guard queue_lock(queue_mutex_);
    before = host_now_ns();  // after taking the queue, right before the submit
    if (const VkResult r = vkQueueSubmit(queue_, 1, &si, e.fence); r != VK_SUCCESS) {
      return vk::error("vkQueueSubmit (calibration)", r);
    }
  }
  // Blocks without spinning; the command buffer must not be resubmitted
  // while pending, so this waits as long as it takes.
  const VkResult w = vkWaitForFences(device_, 1, &e.fence, VK_TRUE, UINT64_MAX);
  const int64_t after = host_now_ns();
  if (w != VK_SUCCESS) return vk::error("vkWaitForFences (calibration)", w);
  uint64_t result[2] = {0, 0};
  const VkResult r = vkGetQueryPoolResults(device_, e.query, 0, 1, sizeof(result), result, sizeof(result),
                                           VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
  if (r != VK_SUCCESS && r != VK_NOT_READY) return vk::error("vkGetQueryPoolResults (calibration)", r);
  if (result[1] == 0) {
    return make_error("the calibration timestamp was not available after its fence signalled (driver bug?)");
  }
  CalibrationPair pair;
  pair.device_ticks = result[0] & ticks_.mask();
  pair.host_ns = before + (after - before) / 2;
  pair.max_deviation_ns = (after - before + 1) / 2;
  pair.estimated = true;
  return pair;
}

}  // namespace latlab
