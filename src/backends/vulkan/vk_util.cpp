// The small helpers of vk_util.hpp.
#include "backends/vulkan/vk_util.hpp"

#include <algorithm>

namespace latlab::vk {

const char* result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS:
      return "VK_SUCCESS";
    case VK_NOT_READY:
      return "VK_NOT_READY";
    case VK_TIMEOUT:
      return "VK_TIMEOUT";
    case VK_INCOMPLETE:
      return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
      return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
      return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED:
      return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST:
      return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED:
      return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT:
      return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
      return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT:
      return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
      return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS:
      return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED:
      return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_UNKNOWN:
      return "VK_ERROR_UNKNOWN";
    default:
      return "VkResult(other)";
  }
}

Error error(const std::string& what, VkResult r) {
  std::string msg = what + " failed: " + result_name(r);
  if (r == VK_ERROR_DEVICE_LOST) msg += " (the GPU or its driver reset; restart the run)";
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY) msg += " (try a smaller --size)";
  return make_error(std::move(msg));
}

std::string version_text(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

uint32_t min_version(uint32_t a, uint32_t b) {
  const uint32_t va = VK_MAKE_API_VERSION(0, VK_API_VERSION_MAJOR(a), VK_API_VERSION_MINOR(a),
                                          VK_API_VERSION_PATCH(a));
  const uint32_t vb = VK_MAKE_API_VERSION(0, VK_API_VERSION_MAJOR(b), VK_API_VERSION_MINOR(b),
                                          VK_API_VERSION_PATCH(b));
  return std::min(va, vb);
}

}  // namespace latlab::vk
