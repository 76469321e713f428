// A window that reacts to each key press after a fixed delay: it sleeps
// DELAY_MS (argv[1], default 0) and then fills itself with the next colour,
// so the X server sees it change once per key, DELAY_MS after the key came.
// The input tests of `latlab capture --input-reaction` run it at 0 and 20 ms
// (tests/e2e/capture_input_test.cpp): the reaction must move by the delay.
// Exits at SIGTERM or when its connection closes. Xlib only; asserts nothing.
#include <X11/Xlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  const int delay_ms = argc > 1 ? std::atoi(argv[1]) : 0;
  Display* d = XOpenDisplay(nullptr);
  if (d == nullptr) {
    std::fprintf(stderr, "key_react_window: cannot open the display\n");
    return 1;
  }
  const int screen = DefaultScreen(d);
  const Window w = XCreateSimpleWindow(d, RootWindow(d, screen), 0, 0, 200, 120, 0,
                                       BlackPixel(d, screen), BlackPixel(d, screen));
  XSelectInput(d, w, KeyPressMask | ExposureMask);
  XMapWindow(d, w);
  GC gc = XCreateGC(d, w, 0, nullptr);
  unsigned long colours[2] = {WhitePixel(d, screen), BlackPixel(d, screen)};
  unsigned presses = 0;
  for (;;) {
    XEvent ev;
    XNextEvent(d, &ev);
    if (ev.type != KeyPress) continue;
    if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    XSetForeground(d, gc, colours[presses++ % 2]);
    XFillRectangle(d, w, gc, 0, 0, 200, 120);
    XFlush(d);
  }
}
