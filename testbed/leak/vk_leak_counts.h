/* The counts of testbed/leak/vk_leak_shim.cpp: live Vulkan objects by kind and
   the order faults (a parent destroyed with children alive, a child after
   its parent). latlab_vulkan_tests links the counting wrappers in and calls
   these directly; another process gets them from the LD_PRELOADed
   libvk_leak_shim.so through dlsym(RTLD_DEFAULT, "latlab_vkleak_live"). */
#ifndef LATLAB_TESTS_LEAK_VK_LEAK_COUNTS_H
#define LATLAB_TESTS_LEAK_VK_LEAK_COUNTS_H

#include <stdint.h>

enum {
  LATLAB_VKLEAK_INSTANCE,
  LATLAB_VKLEAK_DEVICE,
  LATLAB_VKLEAK_MESSENGER,
  LATLAB_VKLEAK_SURFACE,
  LATLAB_VKLEAK_SWAPCHAIN,
  LATLAB_VKLEAK_MEMORY,
  LATLAB_VKLEAK_BUFFER,
  LATLAB_VKLEAK_IMAGE,
  LATLAB_VKLEAK_IMAGE_VIEW,
  LATLAB_VKLEAK_SAMPLER,
  LATLAB_VKLEAK_RENDER_PASS,
  LATLAB_VKLEAK_FRAMEBUFFER,
  LATLAB_VKLEAK_SET_LAYOUT,
  LATLAB_VKLEAK_DESC_POOL,
  LATLAB_VKLEAK_PIPELINE_LAYOUT,
  LATLAB_VKLEAK_SHADER_MODULE,
  LATLAB_VKLEAK_PIPELINE,
  LATLAB_VKLEAK_COMMAND_POOL,
  LATLAB_VKLEAK_FENCE,
  LATLAB_VKLEAK_SEMAPHORE,
  LATLAB_VKLEAK_EVENT,
  LATLAB_VKLEAK_QUERY_POOL,
  LATLAB_VKLEAK_KINDS
};

#ifdef __cplusplus
extern "C" {
#endif
/* Live objects of `kind` (-1 for an unknown kind). Thread-safe. */
int latlab_vkleak_live(int kind);
/* The kind's name ("instance", "device", ...). */
const char* latlab_vkleak_kind_name(int kind);
/* Parents destroyed with children alive plus children destroyed after their parent. */
uint64_t latlab_vkleak_order_faults(void);
#ifdef __cplusplus
}
#endif

#endif
