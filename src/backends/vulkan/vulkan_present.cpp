// VulkanPresentPath: see vulkan_present.hpp.
#include "backends/vulkan/vulkan_present.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/vulkan/frame_pattern.hpp"
#include "backends/vulkan/vk_unique.hpp"
#include "backends/vulkan/vk_util.hpp"
#include "backends/vulkan/x11_framebuffer_observer.hpp"
#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/host_time.hpp"

#if LATLAB_HAVE_XCB
#include <xcb/xcb.h>
// After xcb.h: the xcb surface types need it.
#include <vulkan/vulkan_xcb.h>
#endif
#if LATLAB_HAVE_WAYLAND
#include <vulkan/vulkan_wayland.h>

#include "backends/vulkan/wayland_window.hpp"
#endif

namespace latlab {
namespace {

bool device_has(VkPhysicalDevice pd, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> props(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, props.data());
  return std::any_of(props.begin(), props.end(), [&](const VkExtensionProperties& e) {
    return std::strcmp(e.extensionName, name) == 0;
  });
}

// The observers latlab does not run here, each with why: the extensions are
// named even where the driver offers them, so nothing is silently absent.
std::vector<ScreenObserverInfo> extension_observers(VkPhysicalDevice pd) {
  std::vector<ScreenObserverInfo> out;
  const auto add = [&](const char* name, const char* ext, const char* observes, const char* error) {
    ScreenObserverInfo o;
    o.name = name;
    o.observes = observes;
    o.error = error;
    o.available = false;
    o.reason = device_has(pd, ext)
                   ? std::string(ext) + " is offered by the driver, but latlab does not read it yet"
                   : std::string(ext) + " is not offered by the driver";
    out.push_back(std::move(o));
  };
  add("vk_ext_present_timing", "VK_EXT_present_timing",
      "the driver's reported time the image was presented (VkPastPresentationTimingEXT)",
      "as the driver states it (present stage and time domain reported per present)");
  add("vk_google_display_timing", "VK_GOOGLE_display_timing",
      "the driver's actualPresentTime (vkGetPastPresentationTimingGOOGLE)",
      "as the driver states it; no bound given by the extension");
  add("vk_nv_low_latency2", "VK_NV_low_latency2",
      "NVIDIA's own present and GPU times per frame (vkGetLatencyTimingsNV), kept apart from "
      "latlab's GPU timestamps",
      "as NVIDIA's driver reports it");
  return out;
}

#if LATLAB_HAVE_XCB

const char* mode_name(VkPresentModeKHR m) {
  switch (m) {
    case VK_PRESENT_MODE_IMMEDIATE_KHR:
      return "immediate";
    case VK_PRESENT_MODE_MAILBOX_KHR:
      return "mailbox";
    case VK_PRESENT_MODE_FIFO_KHR:
      return "fifo";
    case VK_PRESENT_MODE_FIFO_RELAXED_KHR:
      return "fifo_relaxed";
    default:
      return "other";
  }
}

// Releases held frames (PresentDesc::hold_ns): sets each frame's event at
// its time. One thread, woken by a condition variable; no polling.
class Holder {
 public:
  explicit Holder(VkDevice device) : device_(device), thread_([this] { loop(); }) {}
  ~Holder() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void release_at(VkEvent event, int64_t at_ns) {
    {
      std::lock_guard lock(mu_);
      queue_.emplace_back(event, at_ns);
    }
    cv_.notify_all();
  }

 private:
  void loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and nothing left to release
      const auto [event, at] = queue_.front();
      queue_.pop_front();
      lock.unlock();
      host_sleep_until(at);
      vkSetEvent(device_, event);
      lock.lock();
    }
  }
  VkDevice device_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<VkEvent, int64_t>> queue_;
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members it uses
};

// The X connection and its window, closed when it goes.
struct XcbWindow {
  xcb_connection_t* xcb = nullptr;
  xcb_window_t window = 0;
  XcbWindow() = default;
  XcbWindow(const XcbWindow&) = delete;
  XcbWindow& operator=(const XcbWindow&) = delete;
  ~XcbWindow() {
    if (xcb == nullptr) return;
    if (window != 0) xcb_destroy_window(xcb, window);
    xcb_disconnect(xcb);
  }
};

class VulkanPresentPath final : public PresentPath {
 public:
  VulkanPresentPath(VulkanLatencyDevice& dev, const PresentDesc& desc)
      : dev_(dev), ctx_(dev.context()), desc_(desc) {}
  ~VulkanPresentPath() override;

  Result<void> init();
  PresentInfo info() const override { return info_; }
  Result<PresentTimes> present(uint64_t frame_id) override;
  void start_observers() override;
  void stop_observers() override;
  std::optional<int64_t> screen_ns(size_t observer, uint64_t frame_id) const override;

 private:
  Result<void> connect_window();
  // On $WAYLAND_DISPLAY when it is set and no X display was named.
  bool on_wayland() const;
  Result<void> connect_wayland();
  Result<void> make_surface();
  Result<void> make_wayland_surface();
  Result<void> make_xcb_surface();
  void add_observers();
  Result<void> make_swapchain();
  Result<void> make_frame_objects();
  // The host-visible buffer the frame pattern is copied from, mapped.
  Result<void> make_pattern_buffer();
  void record_copy(VkCommandBuffer cmd, uint32_t image, uint64_t frame_id);
  // The recorded copy into `image`, then its present, under the queue's lock.
  Result<PresentTimes> submit_and_present(uint32_t image, uint64_t frame_id);
  // The frame's result below the pattern, as far as the image holds it.
  void copy_result(VkCommandBuffer cmd, uint32_t image, VkBuffer result, uint32_t work_w,
                   uint32_t work_h);

  VulkanLatencyDevice& dev_;
  const VulkanContext& ctx_;
  PresentDesc desc_;
  PresentInfo info_;
  std::string display_;

  // Members go in reverse order (after the destructor's wait for idle): the
  // observer, the holder thread before its event, the frame objects, the
  // swapchain before its surface, the surface before the X window.
  XcbWindow x_;
#if LATLAB_HAVE_WAYLAND
  std::unique_ptr<WaylandWindow> wl_;  // the window and its wp_presentation observer
#endif
  vk::UniqueSurface surface_;
  vk::UniqueSwapchain swapchain_;
  VkExtent2D extent_{};
  std::vector<VkImage> images_;                // the swapchain's
  std::vector<vk::UniqueSemaphore> rendered_;  // per image: the copy finished, present may go
  vk::UniqueSemaphore acquired_;
  vk::UniqueCommandPool pool_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;  // freed with pool_
  vk::UniqueFence fence_;                 // the last copy's; signalled when none is in flight
  vk::UniqueBuffer pattern_;
  vk::UniqueMemory pattern_memory_;     // freed before the buffer, as before
  uint32_t* pattern_pixels_ = nullptr;  // mapped
  vk::UniqueEvent hold_event_;
  std::unique_ptr<Holder> holder_;
  std::unique_ptr<X11FramebufferObserver> observer_;
  PFN_vkQueuePresentKHR queue_present_ = nullptr;
  PFN_vkAcquireNextImageKHR acquire_ = nullptr;
};

bool VulkanPresentPath::on_wayland() const {
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  return desc_.display.empty() && wayland != nullptr && *wayland != '\0';
}

Result<void> VulkanPresentPath::connect_wayland() {
#if LATLAB_HAVE_WAYLAND
  if (!ctx_.wayland_surface_enabled()) {
    return make_error(
        "WAYLAND_DISPLAY is set but the Vulkan instance offers no VK_KHR_wayland_surface (or the "
        "context was made without VulkanContextDesc::present)");
  }
  if (!ctx_.swapchain_enabled()) return make_error("the device offers no VK_KHR_swapchain");
  auto w = WaylandWindow::open("", desc_.width, desc_.height);
  if (!w) return w.error();
  wl_ = std::move(w.value());
  display_ = wl_->name();
  return {};
#else
  return make_error(
      "WAYLAND_DISPLAY is set but latlab was built without Wayland (libwayland-dev, "
      "wayland-protocols): unset it to present on $DISPLAY");
#endif
}

Result<void> VulkanPresentPath::connect_window() {
  if (on_wayland()) return connect_wayland();
  const char* env = std::getenv("DISPLAY");
  display_ = !desc_.display.empty() ? desc_.display : (env != nullptr ? env : "");
  if (display_.empty()) return make_error("no X display: DISPLAY is not set");
  if (!ctx_.xcb_surface_enabled()) {
    return make_error(
        "the Vulkan instance offers no VK_KHR_xcb_surface (or the context was made "
        "without VulkanContextDesc::present)");
  }
  if (!ctx_.swapchain_enabled()) {
    return make_error(
        "the device offers no VK_KHR_swapchain (or the context was made without "
        "VulkanContextDesc::present)");
  }
  int screen_index = 0;
  x_.xcb = xcb_connect(display_.c_str(), &screen_index);
  if (x_.xcb == nullptr || xcb_connection_has_error(x_.xcb) != 0) {
    return make_error("cannot connect to X display " + display_ + " (xcb_connect failed)");
  }
  // NVIDIA's X11 WSI crashed against an X server without GLX (Xvfb on the
  // H200): look before any surface is made.
  if (ctx_.properties().vendorID == 0x10DE) {
    xcb_query_extension_reply_t* glx =
        xcb_query_extension_reply(x_.xcb, xcb_query_extension(x_.xcb, 3, "GLX"), nullptr);
    const bool has_glx = glx != nullptr && glx->present != 0;
    std::free(glx);
    if (!has_glx) {
      return make_error("X display " + display_ +
                        " has no GLX extension, which NVIDIA's Vulkan X11 WSI needs (it crashed "
                        "without it); present through an X server with GLX");
    }
  }
  const xcb_setup_t* setup = xcb_get_setup(x_.xcb);
  xcb_screen_iterator_t it = xcb_setup_roots_iterator(setup);
  for (int i = 0; i < screen_index && it.rem > 0; ++i) xcb_screen_next(&it);
  if (it.rem == 0) return make_error("X display " + display_ + " has no screen");
  const xcb_screen_t* screen = it.data;
  x_.window = xcb_generate_id(x_.xcb);
  const uint32_t mask = XCB_CW_BACK_PIXEL | XCB_CW_OVERRIDE_REDIRECT;
  const uint32_t values[] = {screen->black_pixel, 1};  // no window manager moves it
  xcb_create_window(x_.xcb, XCB_COPY_FROM_PARENT, x_.window, screen->root, 0, 0,
                    static_cast<uint16_t>(desc_.width), static_cast<uint16_t>(desc_.height), 0,
                    XCB_WINDOW_CLASS_INPUT_OUTPUT, screen->root_visual, mask, values);
  static constexpr char kTitle[] = "latlab present";
  xcb_change_property(x_.xcb, XCB_PROP_MODE_REPLACE, x_.window, XCB_ATOM_WM_NAME, XCB_ATOM_STRING,
                      8, sizeof kTitle - 1, kTitle);
  xcb_map_window(x_.xcb, x_.window);
  // A round trip: the window exists and is mapped before the surface.
  xcb_get_geometry_reply_t* g =
      xcb_get_geometry_reply(x_.xcb, xcb_get_geometry(x_.xcb, x_.window), nullptr);
  if (g == nullptr) return make_error("the X window could not be created on " + display_);
  std::free(g);
  return {};
}

Result<void> VulkanPresentPath::make_wayland_surface() {
#if LATLAB_HAVE_WAYLAND
  auto create = reinterpret_cast<PFN_vkCreateWaylandSurfaceKHR>(
      vkGetInstanceProcAddr(ctx_.instance(), "vkCreateWaylandSurfaceKHR"));
  if (create == nullptr) return make_error("vkCreateWaylandSurfaceKHR is not available");
  VkWaylandSurfaceCreateInfoKHR sci{};
  sci.sType = VK_STRUCTURE_TYPE_WAYLAND_SURFACE_CREATE_INFO_KHR;
  sci.display = wl_->display();
  sci.surface = wl_->surface();
  auto surface =
      vk::make(create, ctx_.instance(), sci, vkDestroySurfaceKHR, "vkCreateWaylandSurfaceKHR");
  if (!surface) return surface.error();
  surface_ = std::move(*surface);
  return {};
#else
  return make_error("latlab was built without Wayland");
#endif
}

Result<void> VulkanPresentPath::make_surface() {
  if (on_wayland()) {
    if (auto r = make_wayland_surface(); !r) return r;
  } else if (auto r = make_xcb_surface(); !r) {
    return r;
  }
  VkBool32 supported = VK_FALSE;
  if (const VkResult r = vkGetPhysicalDeviceSurfaceSupportKHR(
          ctx_.physical_device(), ctx_.queue_family(), surface_.get(), &supported);
      r != VK_SUCCESS) {
    return vk::error("vkGetPhysicalDeviceSurfaceSupportKHR", r);
  }
  if (supported != VK_TRUE) {
    return make_error("queue family " + std::to_string(ctx_.queue_family()) +
                      " cannot present to this surface");
  }
  return {};
}

Result<void> VulkanPresentPath::make_xcb_surface() {
  auto create = reinterpret_cast<PFN_vkCreateXcbSurfaceKHR>(
      vkGetInstanceProcAddr(ctx_.instance(), "vkCreateXcbSurfaceKHR"));
  if (create == nullptr) return make_error("vkCreateXcbSurfaceKHR is not available");
  VkXcbSurfaceCreateInfoKHR sci{};
  sci.sType = VK_STRUCTURE_TYPE_XCB_SURFACE_CREATE_INFO_KHR;
  sci.connection = x_.xcb;
  sci.window = x_.window;
  auto surface =
      vk::make(create, ctx_.instance(), sci, vkDestroySurfaceKHR, "vkCreateXcbSurfaceKHR");
  if (!surface) return surface.error();
  surface_ = std::move(*surface);
  return {};
}

Result<void> VulkanPresentPath::make_swapchain() {
  VkPhysicalDevice pd = ctx_.physical_device();
  VkSurfaceCapabilitiesKHR caps{};
  if (const VkResult r = vkGetPhysicalDeviceSurfaceCapabilitiesKHR(pd, surface_.get(), &caps);
      r != VK_SUCCESS) {
    return vk::error("vkGetPhysicalDeviceSurfaceCapabilitiesKHR", r);
  }
  if ((caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_DST_BIT) == 0) {
    return make_error("the surface's images cannot be transfer destinations");
  }
  uint32_t n = 0;
  vkGetPhysicalDeviceSurfaceFormatsKHR(pd, surface_.get(), &n, nullptr);
  std::vector<VkSurfaceFormatKHR> formats(n);
  vkGetPhysicalDeviceSurfaceFormatsKHR(pd, surface_.get(), &n, formats.data());
  const auto format = std::find_if(formats.begin(), formats.end(), [](const VkSurfaceFormatKHR& f) {
    return f.format == VK_FORMAT_B8G8R8A8_UNORM || f.format == VK_FORMAT_R8G8B8A8_UNORM ||
           f.format == VK_FORMAT_B8G8R8A8_SRGB || f.format == VK_FORMAT_R8G8B8A8_SRGB;
  });
  if (format == formats.end()) return make_error("the surface offers no 8-bit RGBA/BGRA format");

  vkGetPhysicalDeviceSurfacePresentModesKHR(pd, surface_.get(), &n, nullptr);
  std::vector<VkPresentModeKHR> modes(n);
  vkGetPhysicalDeviceSurfacePresentModesKHR(pd, surface_.get(), &n, modes.data());
  VkPresentModeKHR mode = VK_PRESENT_MODE_FIFO_KHR;  // always offered
  for (const VkPresentModeKHR want : {VK_PRESENT_MODE_MAILBOX_KHR, VK_PRESENT_MODE_IMMEDIATE_KHR}) {
    if (std::find(modes.begin(), modes.end(), want) != modes.end()) mode = want;
  }
  for (const VkPresentModeKHR m : modes) info_.modes_offered.emplace_back(mode_name(m));
  info_.present_mode = mode_name(mode);

  extent_ = caps.currentExtent;
  if (extent_.width == UINT32_MAX) extent_ = {desc_.width, desc_.height};
  uint32_t count = std::max(caps.minImageCount, 2u);
  if (caps.maxImageCount != 0) count = std::min(count, caps.maxImageCount);
  VkCompositeAlphaFlagBitsKHR alpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
  if ((caps.supportedCompositeAlpha & alpha) == 0) {
    alpha = static_cast<VkCompositeAlphaFlagBitsKHR>(caps.supportedCompositeAlpha &
                                                     (~caps.supportedCompositeAlpha + 1));
  }
  VkSwapchainCreateInfoKHR sci{};
  sci.sType = VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR;
  sci.surface = surface_.get();
  sci.minImageCount = count;
  sci.imageFormat = format->format;
  sci.imageColorSpace = format->colorSpace;
  sci.imageExtent = extent_;
  sci.imageArrayLayers = 1;
  sci.imageUsage = VK_IMAGE_USAGE_TRANSFER_DST_BIT;
  sci.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
  sci.preTransform = caps.currentTransform;
  sci.compositeAlpha = alpha;
  sci.presentMode = mode;
  sci.clipped = VK_FALSE;  // the observer reads these pixels back
  auto swapchain = vk::make(vkCreateSwapchainKHR, ctx_.device(), sci, vkDestroySwapchainKHR,
                            "vkCreateSwapchainKHR");
  if (!swapchain) return swapchain.error();
  swapchain_ = std::move(*swapchain);
  vkGetSwapchainImagesKHR(ctx_.device(), swapchain_.get(), &n, nullptr);
  images_.resize(n);
  vkGetSwapchainImagesKHR(ctx_.device(), swapchain_.get(), &n, images_.data());
  info_.swapchain_images = n;
  return {};
}

Result<void> VulkanPresentPath::make_pattern_buffer() {
  VkDevice d = ctx_.device();
  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = VkDeviceSize{frame_pattern::kWidth} * frame_pattern::kHeight * 4;
  bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  auto pattern = vk::make(vkCreateBuffer, d, bci, vkDestroyBuffer, "vkCreateBuffer");
  if (!pattern) return pattern.error();
  pattern_ = std::move(*pattern);
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(d, pattern_.get(), &req);
  auto type = ctx_.find_memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                            VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  if (!type) return type.error();
  VkMemoryAllocateInfo mai{};
  mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = *type;
  auto memory = vk::make(vkAllocateMemory, d, mai, vkFreeMemory, "vkAllocateMemory");
  if (!memory) return memory.error();
  pattern_memory_ = std::move(*memory);
  vkBindBufferMemory(d, pattern_.get(), pattern_memory_.get(), 0);
  void* mapped = nullptr;
  if (const VkResult r = vkMapMemory(d, pattern_memory_.get(), 0, VK_WHOLE_SIZE, 0, &mapped);
      r != VK_SUCCESS)
    return vk::error("vkMapMemory", r);
  pattern_pixels_ = static_cast<uint32_t*>(mapped);
  return {};
}

Result<void> VulkanPresentPath::make_frame_objects() {
  VkDevice d = ctx_.device();
  VkSemaphoreCreateInfo sem{};
  sem.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  auto acquired = vk::make(vkCreateSemaphore, d, sem, vkDestroySemaphore, "vkCreateSemaphore");
  if (!acquired) return acquired.error();
  acquired_ = std::move(*acquired);
  for (size_t i = 0; i < images_.size(); ++i) {
    auto rendered = vk::make(vkCreateSemaphore, d, sem, vkDestroySemaphore, "vkCreateSemaphore");
    if (!rendered) return rendered.error();
    rendered_.push_back(std::move(*rendered));
  }
  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = ctx_.queue_family();
  auto pool = vk::make(vkCreateCommandPool, d, pci, vkDestroyCommandPool, "vkCreateCommandPool");
  if (!pool) return pool.error();
  pool_ = std::move(*pool);
  VkCommandBufferAllocateInfo cai{};
  cai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  cai.commandPool = pool_.get();
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  if (const VkResult r = vkAllocateCommandBuffers(d, &cai, &cmd_); r != VK_SUCCESS)
    return vk::error("vkAllocateCommandBuffers", r);
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  fci.flags = VK_FENCE_CREATE_SIGNALED_BIT;
  auto fence = vk::make(vkCreateFence, d, fci, vkDestroyFence, "vkCreateFence");
  if (!fence) return fence.error();
  fence_ = std::move(*fence);

  if (auto made = make_pattern_buffer(); !made) return made;

  if (desc_.hold_ns > 0) {
    VkEventCreateInfo eci{};
    eci.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO;
    auto event = vk::make(vkCreateEvent, d, eci, vkDestroyEvent, "vkCreateEvent");
    if (!event) return event.error();
    hold_event_ = std::move(*event);
    holder_ = std::make_unique<Holder>(d);
  }
  queue_present_ =
      reinterpret_cast<PFN_vkQueuePresentKHR>(vkGetDeviceProcAddr(d, "vkQueuePresentKHR"));
  acquire_ =
      reinterpret_cast<PFN_vkAcquireNextImageKHR>(vkGetDeviceProcAddr(d, "vkAcquireNextImageKHR"));
  if (queue_present_ == nullptr || acquire_ == nullptr)
    return make_error("the swapchain entry points are not available");
  return {};
}

Result<void> VulkanPresentPath::init() {
  if (desc_.width < frame_pattern::kWidth || desc_.height < frame_pattern::kHeight) {
    return make_error("the present window must be at least " +
                      std::to_string(frame_pattern::kWidth) + "x" +
                      std::to_string(frame_pattern::kHeight) + " (the frame-id pattern)");
  }
  info_.api = "vulkan";
  info_.hold_ns = desc_.hold_ns;
  info_.present_wait = false;
  info_.present_wait_reason =
      device_has(ctx_.physical_device(), "VK_KHR_present_wait")
          ? "VK_KHR_present_wait is offered by the driver, but latlab does not enable it yet"
          : "VK_KHR_present_wait is not offered by the driver";
  if (auto r = connect_window(); !r) return r;
  if (auto r = make_surface(); !r) return r;
  if (auto r = make_swapchain(); !r) return r;
  if (auto r = make_frame_objects(); !r) return r;
  info_.surface = on_wayland()
                      ? "VK_KHR_wayland_surface, xdg_toplevel " + std::to_string(extent_.width) +
                            "x" + std::to_string(extent_.height) + " on Wayland display " + display_
                      : "VK_KHR_xcb_surface, window " + std::to_string(extent_.width) + "x" +
                            std::to_string(extent_.height) + " at 0,0 on X display " + display_;
  info_.image_content =
      "the frame-id pattern (32 cells of 8x8 px, complement row below) over the frame's "
      "compute result (raw bytes of its storage buffer; black under the pattern for the "
      "fragment form), copied after the frame's passes";

  add_observers();
  return {};
}

// Observer 0 watches the window where it is: the compositor's report on
// Wayland (the X server's framebuffer holds no Wayland window), else the X
// framebuffer. The others are listed with why they do not run.
void VulkanPresentPath::add_observers() {
  ScreenObserverInfo fb = X11FramebufferObserver::describe(desc_.poll_period_ns);
#if LATLAB_HAVE_WAYLAND
  if (wl_) {
    info_.observers.push_back(wl_->describe());
    fb.reason = "the window is on the Wayland display " + display_ + ", not on an X server";
  }
#endif
  if (!on_wayland()) {
    auto obs = X11FramebufferObserver::create(display_, x_.window, desc_.poll_period_ns);
    if (obs) {
      observer_ = std::move(obs.value());
      fb.available = true;
    } else {
      fb.reason = obs.error().message;
    }
  }
  info_.observers.push_back(std::move(fb));
  for (ScreenObserverInfo& o : extension_observers(ctx_.physical_device()))
    info_.observers.push_back(std::move(o));
}

void VulkanPresentPath::start_observers() {
  if (observer_) observer_->start();
#if LATLAB_HAVE_WAYLAND
  if (wl_) wl_->start();
#endif
}

std::optional<int64_t> VulkanPresentPath::screen_ns(size_t observer, uint64_t frame_id) const {
  if (observer != 0) return std::nullopt;
  if (observer_) return observer_->first_seen(frame_id);
#if LATLAB_HAVE_WAYLAND
  if (wl_) return wl_->shown_ns(frame_id);
#endif
  return std::nullopt;
}

void VulkanPresentPath::copy_result(VkCommandBuffer cmd, uint32_t image, VkBuffer result,
                                    uint32_t work_w, uint32_t work_h) {
  if (result == VK_NULL_HANDLE || extent_.height <= frame_pattern::kHeight) return;
  // The result's bytes as 4-byte texels: 4 per vec4 element.
  VkBufferImageCopy r{};
  r.bufferRowLength = 4 * work_w;
  r.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  r.imageOffset = {0, static_cast<int32_t>(frame_pattern::kHeight), 0};
  r.imageExtent = {std::min(extent_.width, 4 * work_w),
                   std::min(extent_.height - frame_pattern::kHeight, work_h), 1};
  vkCmdCopyBufferToImage(cmd, result, images_[image], VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &r);
}

void VulkanPresentPath::record_copy(VkCommandBuffer cmd, uint32_t image, uint64_t frame_id) {
  if (hold_event_) {
    vkCmdWaitEvents(cmd, 1, hold_event_.ptr(), VK_PIPELINE_STAGE_HOST_BIT,
                    VK_PIPELINE_STAGE_TRANSFER_BIT, 0, nullptr, 0, nullptr, 0, nullptr);
  }
  uint32_t work_w = 0;
  uint32_t work_h = 0;
  VkBuffer result = dev_.frame_output_buffer(frame_id, &work_w, &work_h);

  VkImageMemoryBarrier to_dst{};
  to_dst.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
  to_dst.srcAccessMask = 0;
  to_dst.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  to_dst.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  to_dst.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
  to_dst.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  to_dst.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  to_dst.image = images_[image];
  to_dst.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  // The frame's passes wrote `result` in an earlier submission: make those
  // writes visible to this copy.
  VkMemoryBarrier written{};
  written.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  written.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  written.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &written, 0, nullptr, 1, &to_dst);
  VkClearColorValue black{};
  black.float32[3] = 1.0f;
  vkCmdClearColorImage(cmd, images_[image], VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &black, 1,
                       &to_dst.subresourceRange);
  VkMemoryBarrier cleared{};
  cleared.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  cleared.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  cleared.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
                       &cleared, 0, nullptr, 0, nullptr);
  copy_result(cmd, image, result, work_w, work_h);
  VkBufferImageCopy p{};
  p.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  p.imageExtent = {frame_pattern::kWidth, frame_pattern::kHeight, 1};
  vkCmdCopyBufferToImage(cmd, pattern_.get(), images_[image], VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                         1, &p);

  VkImageMemoryBarrier to_present = to_dst;
  to_present.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  to_present.dstAccessMask = 0;
  to_present.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
  to_present.newLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
  // Later frames' passes write `result` again only after this copy read it.
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       0, 0, nullptr, 0, nullptr, 1, &to_present);
}

Result<PresentTimes> VulkanPresentPath::present(uint64_t frame_id) {
  VkDevice d = ctx_.device();
  // At most one frame in flight: the previous copy is done before this one.
  if (const VkResult r = vkWaitForFences(d, 1, fence_.ptr(), VK_TRUE, 10'000'000'000ull);
      r != VK_SUCCESS) {
    return vk::error("vkWaitForFences (previous present copy)", r);
  }
  uint32_t image = 0;
  const VkResult acq =
      acquire_(d, swapchain_.get(), 1'000'000'000ull, acquired_.get(), VK_NULL_HANDLE, &image);
  if (acq != VK_SUCCESS && acq != VK_SUBOPTIMAL_KHR) return vk::error("vkAcquireNextImageKHR", acq);
  vkResetFences(d, 1, fence_.ptr());
  if (hold_event_) vkResetEvent(d, hold_event_.get());
  if (observer_) observer_->note_presented(frame_id);
  frame_pattern::write(pattern_pixels_, frame_id);

  vkResetCommandBuffer(cmd_, 0);
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(cmd_, &bi);
  record_copy(cmd_, image, frame_id);
  if (const VkResult r = vkEndCommandBuffer(cmd_); r != VK_SUCCESS)
    return vk::error("vkEndCommandBuffer (present copy)", r);

  return submit_and_present(image, frame_id);
}

Result<PresentTimes> VulkanPresentPath::submit_and_present(uint32_t image, uint64_t frame_id) {
  const VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.waitSemaphoreCount = 1;
  si.pWaitSemaphores = acquired_.ptr();
  si.pWaitDstStageMask = &wait_stage;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = rendered_[image].ptr();
  VkPresentInfoKHR pi{};
  pi.sType = VK_STRUCTURE_TYPE_PRESENT_INFO_KHR;
  pi.waitSemaphoreCount = 1;
  pi.pWaitSemaphores = rendered_[image].ptr();
  pi.swapchainCount = 1;
  pi.pSwapchains = swapchain_.ptr();
  pi.pImageIndices = &image;

  PresentTimes t;
  VkResult pr = VK_SUCCESS;
  {
    std::lock_guard lock(ctx_.queue_mutex());
    if (const VkResult r = vkQueueSubmit(ctx_.queue(), 1, &si, fence_.get()); r != VK_SUCCESS)
      return vk::error("vkQueueSubmit (present copy)", r);
#if LATLAB_HAVE_WAYLAND
    if (wl_) wl_->request_feedback(frame_id);  // the present's commit carries it
#else
    (void)frame_id;
#endif
    t.present_start_ns = host_now_ns();
    if (holder_) holder_->release_at(hold_event_.get(), t.present_start_ns + desc_.hold_ns);
    pr = queue_present_(ctx_.queue(), &pi);
    t.present_end_ns = host_now_ns();
  }
  if (pr != VK_SUCCESS && pr != VK_SUBOPTIMAL_KHR) return vk::error("vkQueuePresentKHR", pr);
  return t;
}

void VulkanPresentPath::stop_observers() {
  // The last frame's copy first, then a moment for it to reach the screen.
  if (fence_) vkWaitForFences(ctx_.device(), 1, fence_.ptr(), VK_TRUE, 10'000'000'000ull);
  if (observer_) {
    observer_->stop(std::max<int64_t>(50'000'000, 20 * desc_.poll_period_ns));
    info_.observers[0] = observer_->info();
  }
#if LATLAB_HAVE_WAYLAND
  if (wl_) {
    wl_->stop(200'000'000);  // a few refreshes for the last frames' answers
    info_.observers[0] = wl_->info();
  }
#endif
}

VulkanPresentPath::~VulkanPresentPath() {
  observer_.reset();
  {
    std::lock_guard lock(ctx_.queue_mutex());
    vkQueueWaitIdle(ctx_.queue());
  }
  holder_.reset();  // before its event (and the members in reverse order)
}

#endif  // LATLAB_HAVE_XCB

}  // namespace

Result<std::unique_ptr<PresentPath>> create_vulkan_present_path(VulkanLatencyDevice& device,
                                                                const PresentDesc& desc) {
#if LATLAB_HAVE_XCB
  auto path = std::make_unique<VulkanPresentPath>(device, desc);
  if (Result<void> r = path->init(); !r) return r.error();
  return std::unique_ptr<PresentPath>(std::move(path));
#else
  (void)device;
  (void)desc;
  (void)&extension_observers;
  return make_error(
      "latlab was built without xcb (libxcb1-dev, libxcb-shm0-dev): no X11 present path");
#endif
}

}  // namespace latlab
