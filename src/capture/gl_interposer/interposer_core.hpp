// What every part of the GL interposer (gl_interposer.cpp, gl_wayland.cpp)
// needs of its plumbing: whether it is active, and the next definition of a
// function it wraps.
#pragma once

namespace latlab::capture::glcap {

// Whether the interposer records: LATLAB_CAPTURE_FD names the capture's
// socket, not in a child the program forked, not while the process exits.
// When false every wrapper only forwards.
bool enabled();

// The next definition of `name` after this library (dlsym(RTLD_NEXT)); where
// the library was loaded privately (dlopen RTLD_LOCAL), that library's own
// (libGLX, libGL, libEGL, libwayland-egl), else what the program's dlsym
// found for it. Null when there is none.
void* next_symbol(const char* name);

template <class F>
F next(const char* name) {
  return reinterpret_cast<F>(next_symbol(name));
}

}  // namespace latlab::capture::glcap
