// The GL interposer on Wayland (docs/capture.md, "OpenGL"): the wl_surface
// behind each EGL window surface, learnt from the calls that make it. The
// interposer wraps eglGetDisplay/eglGetPlatformDisplay(EXT) (an EGLDisplay
// on the program's wl_display), wl_egl_window_create/destroy (the
// wl_surface of a wl_egl_window), eglCreateWindowSurface/
// eglCreatePlatformWindowSurface(EXT) and eglDestroySurface (an EGLSurface
// on a wl_egl_window) and wl_display_disconnect; each forwards to the next
// definition and, when it made or let go such an object, notes it. A window
// surface on a Wayland display is then kept with its display's presentation
// feedback (wayland_surfaces.hpp); one on an X server's display, with its X
// window (for the screen observer).
//
// Threads: every function from any thread.
#pragma once

#define EGL_NO_X11 1
#include <EGL/egl.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "capture/wayland_surfaces.hpp"

namespace latlab::capture::glcap {

// The Wayland surface behind `surface` (an EGL window surface the program
// made on a Wayland EGLDisplay); nullopt for any other surface.
std::optional<WaylandSurfaces::Surface> wayland_surface_of(EGLSurface surface);

// The X window behind `surface` (an EGL window surface the program made on
// an X11 EGLDisplay: eglGetDisplay of a Display*, or the X11 platform);
// nullopt for any other surface.
std::optional<uint64_t> x11_window_of(EGLSurface surface);

// `dpy` is being terminated: its window surfaces go with it.
void wayland_display_terminated(EGLDisplay dpy);

// What the compositor said of the frames of every Wayland window surface
// (WaylandSurfaces::poll_all), from the interposer's own thread: never in
// the program's swap. The interposer also wraps wl_display_disconnect,
// which closes the display's feedback first, so a poll never uses a
// display the program has let go.
void poll_wayland_feedback(std::vector<DisplayOutcome>& out);

// The interposer's wrapper of `name` when it is one of the functions above
// (for dlsym and eglGetProcAddress), `real` (not null) being the definition
// the program's look-up found; null for any other name.
void* wayland_wrapper(const char* name, void* real);

}  // namespace latlab::capture::glcap
