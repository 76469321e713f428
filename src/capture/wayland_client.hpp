// The program's own libwayland-client, reached without linking it, and the
// protocol tables of wp_presentation (presentation-time, version 1) that a
// frame source needs to ask the compositor when a frame was shown.
//
// Why not linked: a frame source (the Vulkan layer, the GL interposer) loads
// into every program, most of which have no Wayland; linking the library
// would load it into all of them, and a layer that fails to load where it is
// missing loses the program its capture. A program that gave latlab a
// wl_display has the library loaded already, so client() takes that very
// copy (dlopen with RTLD_NOLOAD: never a second one, whose wl_display would
// not be the program's) and loads nothing anywhere else.
//
// The declarations below are libwayland's stable C ABI (wayland-util.h,
// wayland-client-core.h), declared here so that building latlab needs no
// Wayland headers, as the layer declares the X11 surface structures itself.
//
// Threads: client() from any thread; the table is immutable once made.
#pragma once

#include <cstdint>
#include <string>

namespace latlab::capture::wl {

// Opaque: wl_display, wl_proxy, wl_event_queue.
struct Display;
struct Proxy;
struct EventQueue;

struct Interface;
struct Message {  // wl_message
  const char* name;
  const char* signature;
  const Interface* const* types;
};
struct Interface {  // wl_interface
  const char* name;
  int version;
  int method_count;
  const Message* methods;
  int event_count;
  const Message* events;
};

using Listener = void (**)(void);

// The functions and interfaces of the loaded libwayland-client.
struct Client {
  Proxy* (*proxy_create_wrapper)(void* proxy);
  void (*proxy_wrapper_destroy)(void* wrapper);
  void (*proxy_set_queue)(Proxy* proxy, EventQueue* queue);
  Proxy* (*proxy_marshal_constructor)(Proxy* proxy, uint32_t opcode, const Interface* made, ...);
  Proxy* (*proxy_marshal_constructor_versioned)(Proxy* proxy, uint32_t opcode,
                                                const Interface* made, uint32_t version, ...);
  void (*proxy_marshal)(Proxy* proxy, uint32_t opcode, ...);
  int (*proxy_add_listener)(Proxy* proxy, Listener listener, void* data);
  void (*proxy_destroy)(Proxy* proxy);
  EventQueue* (*display_create_queue)(Display* display);
  void (*event_queue_destroy)(EventQueue* queue);
  int (*display_get_fd)(Display* display);
  int (*display_prepare_read_queue)(Display* display, EventQueue* queue);
  int (*display_read_events)(Display* display);
  void (*display_cancel_read)(Display* display);
  int (*display_dispatch_queue_pending)(Display* display, EventQueue* queue);
  int (*display_roundtrip_queue)(Display* display, EventQueue* queue);
  int (*display_flush)(Display* display);
  const Interface* display_interface;
  const Interface* registry_interface;
  const Interface* surface_interface;
  const Interface* output_interface;
};

// The process's libwayland-client, or nullptr with `why` set (it is not
// loaded, or lacks a function latlab calls). Looked up once.
const Client* client(std::string& why);

// wp_presentation and wp_presentation_feedback, version 1, their object
// arguments typed with `c`'s wl_surface and wl_output.
struct PresentationInterfaces {
  const Interface* presentation;
  const Interface* feedback;
};
PresentationInterfaces presentation_interfaces(const Client& c);

// Opcodes and flags of presentation-time.xml.
inline constexpr uint32_t kDisplayGetRegistry = 1;  // wl_display.get_registry
inline constexpr uint32_t kRegistryBind = 0;        // wl_registry.bind
inline constexpr uint32_t kPresentationDestroy = 0;
inline constexpr uint32_t kPresentationFeedback = 1;
inline constexpr const char* kPresentationName = "wp_presentation";

}  // namespace latlab::capture::wl
