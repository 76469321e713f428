// A 16-byte device UUID as text (private): lowercase hex in the 8-4-4-4-12
// form, the same for Vulkan's deviceUUID, CUDA's cudaDeviceProp::uuid and
// EGL's device UUID, so equal bytes give equal text.
#pragma once

#include <cstdint>
#include <string>

namespace latlab {

inline std::string uuid_text(const uint8_t* bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += kHex[bytes[i] >> 4];
    s += kHex[bytes[i] & 0xf];
  }
  return s;
}

}  // namespace latlab
