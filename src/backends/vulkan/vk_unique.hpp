// Owners of Vulkan handles (private to the backend): a handle with what its
// destroy call needs, destroyed once, when the owner goes. The destroy
// function is carried, not named: the attach path passes the program's
// entry points (vk::DeviceFns, loaded through its vkGetDeviceProcAddr), a
// latlab-made context the loader's. The allocator is always null (latlab
// passes none at creation).
//
// Members are destroyed in reverse declaration order: declare an owner after
// the owners it depends on (a view after its image, the image after its
// memory, everything after the device), so the default order is correct.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "backends/vulkan/vk_util.hpp"
#include "latlab/result.hpp"

namespace latlab::vk {

// What a destroy function's type says: the parent it takes (VkDevice or
// VkInstance; none for vkDestroyInstance / vkDestroyDevice) and the handle.
template <class Destroy>
struct DestroyOf;
template <class P, class H>
struct DestroyOf<void(VKAPI_PTR*)(P, H, const VkAllocationCallbacks*)> {
  using Parent = P;
  using Handle = H;
};
template <class H>
struct DestroyOf<void(VKAPI_PTR*)(H, const VkAllocationCallbacks*)> {
  using Parent = std::nullptr_t;  // a root object: destroyed on its own
  using Handle = H;
};

// Move-only owner of one `Handle`, destroyed by `Destroy` (a PFN_vkDestroy*
// or PFN_vkFreeMemory type). Empty (null handle) by default and after a move.
template <class Handle, class Destroy>
class Unique {
  static_assert(std::is_same_v<Handle, typename DestroyOf<Destroy>::Handle>,
                "Destroy must take this Handle");

 public:
  using Parent = typename DestroyOf<Destroy>::Parent;

  Unique() = default;
  Unique(Parent parent, Handle handle, Destroy destroy)
      : parent_(parent), handle_(handle), destroy_(destroy) {}
  Unique(Unique&& o) noexcept
      : parent_(o.parent_), handle_(std::exchange(o.handle_, Handle{})), destroy_(o.destroy_) {}
  Unique& operator=(Unique&& o) noexcept {
    if (this != &o) {
      reset();
      parent_ = o.parent_;
      handle_ = std::exchange(o.handle_, Handle{});
      destroy_ = o.destroy_;
    }
    return *this;
  }
  Unique(const Unique&) = delete;
  Unique& operator=(const Unique&) = delete;
  ~Unique() { reset(); }

  Handle get() const { return handle_; }
  // For calls taking an array of one (pFences, pSwapchains, ...).
  const Handle* ptr() const { return &handle_; }
  explicit operator bool() const { return handle_ != Handle{}; }
  // Destroys the handle now (no-op when empty).
  void reset() {
    if (handle_ == Handle{}) return;
    if constexpr (std::is_same_v<Parent, std::nullptr_t>) {
      destroy_(handle_, nullptr);
    } else {
      destroy_(parent_, handle_, nullptr);
    }
    handle_ = Handle{};
  }

 private:
  Parent parent_{};
  Handle handle_{};
  Destroy destroy_ = nullptr;
};

// Unique<> named by its destroy function's type alone.
template <class Destroy>
using UniqueOf = Unique<typename DestroyOf<Destroy>::Handle, Destroy>;

using UniqueInstance = UniqueOf<PFN_vkDestroyInstance>;
using UniqueDevice = UniqueOf<PFN_vkDestroyDevice>;
using UniqueMessenger = UniqueOf<PFN_vkDestroyDebugUtilsMessengerEXT>;
using UniqueSurface = UniqueOf<PFN_vkDestroySurfaceKHR>;
using UniqueSwapchain = UniqueOf<PFN_vkDestroySwapchainKHR>;
using UniqueMemory = UniqueOf<PFN_vkFreeMemory>;
using UniqueBuffer = UniqueOf<PFN_vkDestroyBuffer>;
using UniqueImage = UniqueOf<PFN_vkDestroyImage>;
using UniqueImageView = UniqueOf<PFN_vkDestroyImageView>;
using UniqueSampler = UniqueOf<PFN_vkDestroySampler>;
using UniqueRenderPass = UniqueOf<PFN_vkDestroyRenderPass>;
using UniqueFramebuffer = UniqueOf<PFN_vkDestroyFramebuffer>;
using UniqueSetLayout = UniqueOf<PFN_vkDestroyDescriptorSetLayout>;
using UniqueDescriptorPool = UniqueOf<PFN_vkDestroyDescriptorPool>;
using UniquePipelineLayout = UniqueOf<PFN_vkDestroyPipelineLayout>;
using UniqueShaderModule = UniqueOf<PFN_vkDestroyShaderModule>;
using UniquePipeline = UniqueOf<PFN_vkDestroyPipeline>;
using UniqueCommandPool = UniqueOf<PFN_vkDestroyCommandPool>;
using UniqueFence = UniqueOf<PFN_vkDestroyFence>;
using UniqueSemaphore = UniqueOf<PFN_vkDestroySemaphore>;
using UniqueEvent = UniqueOf<PFN_vkDestroyEvent>;
using UniqueQueryPool = UniqueOf<PFN_vkDestroyQueryPool>;

// `create(parent, &info, nullptr, &handle)` (any vkCreate*/vkAllocateMemory
// of that shape), owned with `destroy`; error "<what> failed: <VkResult>".
template <class Create, class Info, class Destroy>
Result<UniqueOf<Destroy>> make(Create create, typename UniqueOf<Destroy>::Parent parent,
                               const Info& info, Destroy destroy, const std::string& what) {
  typename DestroyOf<Destroy>::Handle handle{};
  if (const VkResult r = create(parent, &info, nullptr, &handle); r != VK_SUCCESS)
    return error(what, r);
  return UniqueOf<Destroy>(parent, handle, destroy);
}

}  // namespace latlab::vk
