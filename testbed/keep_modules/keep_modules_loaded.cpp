// Linked into latlab_vulkan_tests in AddressSanitizer builds only: dlclose
// does nothing, so the Vulkan loader's drivers and layers stay loaded until
// the process exits. LeakSanitizer runs at exit; a module unloaded before it
// takes its globals with it, and what they still pointed to was reported as
// a leak "in an unknown module" (128 bytes from a driver or layer after the
// attach tests). With every module loaded, LeakSanitizer scans their globals
// and reports only memory nothing references: latlab's own leaks still fail.
extern "C" int dlclose(void* handle) noexcept {
  (void)handle;
  return 0;
}
