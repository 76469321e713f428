// Small helpers shared by the Vulkan backend's sources (private).
#pragma once

#include <vulkan/vulkan.h>

#include <string>

#include "latlab/result.hpp"

namespace latlab::vk {

// "VK_ERROR_DEVICE_LOST" etc.; the number for codes not listed.
const char* result_name(VkResult r);

// An Error "<what> failed: <VkResult name>".
Error error(const std::string& what, VkResult r);

// "1.3.230"
std::string version_text(uint32_t api_version);

// Minimum of two API versions, compared without the variant bits.
uint32_t min_version(uint32_t a, uint32_t b);

}  // namespace latlab::vk
