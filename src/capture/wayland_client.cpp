#include "capture/wayland_client.hpp"

#include <dlfcn.h>

#include <atomic>
#include <mutex>

namespace latlab::capture::wl {
namespace {

template <class F>
bool find(void* lib, F& out, const char* name, std::string& missing) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (out == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(name);
  return out != nullptr;
}

// Fills `c` from `lib`; the names it lacks, or "".
std::string fill(void* lib, Client& c) {
  std::string missing;
  find(lib, c.proxy_create_wrapper, "wl_proxy_create_wrapper", missing);
  find(lib, c.proxy_wrapper_destroy, "wl_proxy_wrapper_destroy", missing);
  find(lib, c.proxy_set_queue, "wl_proxy_set_queue", missing);
  find(lib, c.proxy_marshal_constructor, "wl_proxy_marshal_constructor", missing);
  find(lib, c.proxy_marshal_constructor_versioned, "wl_proxy_marshal_constructor_versioned",
       missing);
  find(lib, c.proxy_marshal, "wl_proxy_marshal", missing);
  find(lib, c.proxy_add_listener, "wl_proxy_add_listener", missing);
  find(lib, c.proxy_destroy, "wl_proxy_destroy", missing);
  find(lib, c.display_create_queue, "wl_display_create_queue", missing);
  find(lib, c.event_queue_destroy, "wl_event_queue_destroy", missing);
  find(lib, c.display_get_fd, "wl_display_get_fd", missing);
  find(lib, c.display_prepare_read_queue, "wl_display_prepare_read_queue", missing);
  find(lib, c.display_read_events, "wl_display_read_events", missing);
  find(lib, c.display_cancel_read, "wl_display_cancel_read", missing);
  find(lib, c.display_dispatch_queue_pending, "wl_display_dispatch_queue_pending", missing);
  find(lib, c.display_roundtrip_queue, "wl_display_roundtrip_queue", missing);
  find(lib, c.display_flush, "wl_display_flush", missing);
  find(lib, c.display_interface, "wl_display_interface", missing);
  find(lib, c.registry_interface, "wl_registry_interface", missing);
  find(lib, c.surface_interface, "wl_surface_interface", missing);
  find(lib, c.output_interface, "wl_output_interface", missing);
  return missing;
}

}  // namespace

const Client* client(std::string& why) {
  static std::mutex mu;
  static std::atomic<const Client*> made{nullptr};
  if (const Client* c = made.load(std::memory_order_acquire)) return c;
  std::lock_guard lock(mu);
  if (const Client* c = made.load(std::memory_order_relaxed)) return c;
  void* lib = dlopen("libwayland-client.so.0", RTLD_LAZY | RTLD_NOLOAD);
  if (lib == nullptr) {
    why = "libwayland-client.so.0 is not loaded in the program (latlab uses the program's own)";
    return nullptr;
  }
  // Never freed: the program's proxies and latlab's live as long as the process.
  auto* c = new Client{};
  if (std::string missing = fill(lib, *c); !missing.empty()) {
    why = "the program's libwayland-client lacks " + missing + " (latlab needs 1.10 or later)";
    delete c;
    dlclose(lib);
    return nullptr;
  }
  made.store(c, std::memory_order_release);
  return c;
}

PresentationInterfaces presentation_interfaces(const Client& c) {
  // Built once, with the program's wl_surface and wl_output interfaces in
  // the argument types (libwayland checks an object argument against them).
  struct Tables {
    const Interface* types[10] = {};
    Message presentation_requests[2] = {};
    Message presentation_events[1] = {};
    Message feedback_events[3] = {};
    Interface presentation{};
    Interface feedback{};
  };
  static const Tables* tables = [&c] {
    auto* t = new Tables;
    // types: [0..6] none (uint arguments), [7] wl_surface, [8] the feedback
    // (feedback's new_id), [9] wl_output (sync_output).
    t->types[7] = c.surface_interface;
    t->types[8] = &t->feedback;
    t->types[9] = c.output_interface;
    t->presentation_requests[0] = {"destroy", "", t->types};
    t->presentation_requests[1] = {"feedback", "on", t->types + 7};
    t->presentation_events[0] = {"clock_id", "u", t->types};
    t->feedback_events[0] = {"sync_output", "o", t->types + 9};
    t->feedback_events[1] = {"presented", "uuuuuuu", t->types};
    t->feedback_events[2] = {"discarded", "", t->types};
    t->presentation = {"wp_presentation", 1, 2, t->presentation_requests, 1,
                       t->presentation_events};
    t->feedback = {"wp_presentation_feedback", 1, 0, nullptr, 3, t->feedback_events};
    return t;
  }();
  return {&tables->presentation, &tables->feedback};
}

}  // namespace latlab::capture::wl
