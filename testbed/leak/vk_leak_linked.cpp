// The counting wrappers of vk_leak_shim.cpp, linked into latlab_vulkan_tests
// (no LD_PRELOAD needed): the binary's own calls to the loader go through
// them, and its listener (vk_leak_listener.hpp) reads the counts. One source,
// two builds: hence the .cpp included here.
#define LATLAB_VKLEAK_LINKED 1
#include "leak/vk_leak_shim.cpp"  // NOLINT(bugprone-suspicious-include)
