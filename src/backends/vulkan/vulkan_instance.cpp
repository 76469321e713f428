// VulkanContext's instance and validation messenger, shared with the
// device reports (enumerate_vulkan_devices).
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>

#include "backends/vulkan/vk_util.hpp"
#include "backends/vulkan/vulkan_context_parts.hpp"

namespace latlab {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

std::set<std::string> loaded_modules() {
  std::set<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) -> int {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
          static_cast<std::set<std::string>*>(out)->insert(info->dlpi_name);
        }
        return 0;
      },
      &names);
  return names;
}

// The loader dlopens the drivers (and layers) at vkCreateInstance and
// dlcloses them at the last vkDestroyInstance. A process that makes and
// destroys many instances reloads them each time, and NVIDIA's driver
// (libnvidia-tls) takes glibc static TLS on every load that dlclose never
// gives back: on the H200 (580.159.04) the 31st instance in a row failed with
// VK_ERROR_INCOMPATIBLE_DRIVER ("cannot allocate memory in static TLS block").
// So what latlab's own instance loaded stays resident, as in a program that
// keeps one instance. (It also keeps Mesa's process globals reachable, which
// LeakSanitizer would otherwise report once lavapipe is unloaded.)
void keep_new_modules_resident(const std::set<std::string>& before) {
  for (const std::string& name : loaded_modules()) {
    if (!before.contains(name)) (void)dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  }
}

constexpr size_t kMaxValidationMessages = 256;

}  // namespace

// ---------------------------------------------------------------------------
// Validation messages

VKAPI_ATTR VkBool32 VKAPI_CALL VulkanContext::Validation::callback(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT /*types*/,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
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

VkDebugUtilsMessengerCreateInfoEXT VulkanContext::Validation::create_info() {
  VkDebugUtilsMessengerCreateInfoEXT ci{};
  ci.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  ci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  ci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                   VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                   VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  ci.pfnUserCallback = &Validation::callback;
  ci.pUserData = this;
  return ci;
}

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

namespace vk {

Result<UniqueMessenger> create_messenger(VkInstance instance,
                                         const VkDebugUtilsMessengerCreateInfoEXT& ci) {
  auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
  auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
  if (create == nullptr || destroy == nullptr)
    return make_error("vkCreateDebugUtilsMessengerEXT is not available");
  return make(create, instance, ci, destroy, "vkCreateDebugUtilsMessengerEXT");
}

// ---------------------------------------------------------------------------
// Instance

namespace {

bool validation_layer_installed() {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> props(n);
  vkEnumerateInstanceLayerProperties(&n, props.data());
  return std::any_of(props.begin(), props.end(), [](const VkLayerProperties& l) {
    return std::strcmp(l.layerName, kValidationLayer) == 0;
  });
}

// Whether the loader offers the instance extension `name`.
bool instance_offers(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> props(n);
  vkEnumerateInstanceExtensionProperties(nullptr, &n, props.data());
  return std::any_of(props.begin(), props.end(), [&](const VkExtensionProperties& e) {
    return std::strcmp(e.extensionName, name) == 0;
  });
}

}  // namespace

Result<InstanceChoice> make_instance(uint32_t max_api, bool validation,
                                     const VkDebugUtilsMessengerCreateInfoEXT* messenger,
                                     bool surfaces) {
  const std::set<std::string> modules_before = loaded_modules();
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
    if (!validation_layer_installed()) {
      return make_error(std::string(kValidationLayer) +
                        " is not installed (Debian/Ubuntu: apt install vulkan-validationlayers); "
                        "run without validation or install it");
    }
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  if (surfaces) {
    out.xcb_surface =
        instance_offers(VK_KHR_SURFACE_EXTENSION_NAME) && instance_offers("VK_KHR_xcb_surface");
    out.wayland_surface =
        instance_offers(VK_KHR_SURFACE_EXTENSION_NAME) && instance_offers("VK_KHR_wayland_surface");
    if (out.xcb_surface || out.wayland_surface) extensions.push_back(VK_KHR_SURFACE_EXTENSION_NAME);
    if (out.xcb_surface) extensions.push_back("VK_KHR_xcb_surface");
    if (out.wayland_surface) extensions.push_back("VK_KHR_wayland_surface");
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
  VkInstance instance = VK_NULL_HANDLE;
  const VkResult r = vkCreateInstance(&ci, nullptr, &instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER) return out;  // no instance: no driver
  if (r != VK_SUCCESS) return vk::error("vkCreateInstance", r);
  out.instance = UniqueInstance(nullptr, instance, vkDestroyInstance);
  keep_new_modules_resident(modules_before);
  return out;
}

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

}  // namespace vk
}  // namespace latlab
