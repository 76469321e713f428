// VulkanPresentPath (private to the Vulkan backend): the PresentPath of a
// VulkanLatencyDevice. An X11 window through xcb (VK_KHR_xcb_surface), a
// swapchain in the lowest-latency mode the surface offers (IMMEDIATE, else
// MAILBOX, else FIFO), at most one frame in flight. Each frame: acquire an
// image, copy the frame's result (the compute workload's buffer, raw bytes)
// and the frame-id pattern into it in a second submission ordered after the
// frame's work, and present it. Screen observers: the X server framebuffer
// observer; the display-timing extensions and VK_NV_low_latency2 are listed
// with why they do not run.
//
// Nothing touches the surface before the X server and the instance were
// checked (DISPLAY, connection, VK_KHR_xcb_surface, the driver's needs);
// a driver that may still crash there is probed in a child process first
// (probe_present_in_child, src/bench).
//
// Threads: present() from the device's driving thread; one holder thread
// when PresentDesc::hold_ns > 0.
#pragma once

#include <memory>

#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/result.hpp"
#include "latlab/core/present_path.hpp"
#include "latlab/vulkan.hpp"

namespace latlab {

Result<std::unique_ptr<PresentPath>> create_vulkan_present_path(VulkanLatencyDevice& device,
                                                                const PresentDesc& desc);

}  // namespace latlab
