// libLatlabGlCapture.so: the OpenGL frame source of `latlab capture`
// (docs/capture.md, "OpenGL"), put in the program with LD_PRELOAD. It
// defines glXSwapBuffers, eglSwapBuffers, glXDestroyContext,
// eglDestroyContext, eglTerminate and the GetProcAddress functions
// (glXGetProcAddress, glXGetProcAddressARB, eglGetProcAddress, which hand out
// these wrappers and those of eglSwapBuffersWithDamageKHR/EXT) and dlsym
// (which hands them out to programs that dlopen GL themselves), forwards each
// to the next definition (dlsym(RTLD_NEXT)), and times frames on the
// program's current context with GlContextTiming. Records go through an
// outbox to a thread of the interposer's, which sends them
// (RecordSender: never blocking) and dispatches what a Wayland compositor
// said of the frames (gl_wayland.hpp), so a swap costs the program GL calls
// and a lock (on Wayland also the feedback's request), not a system call.
//
// Inactive (every wrapper only forwards) unless LATLAB_CAPTURE_FD names the
// capture's socket; inactive in a child forked by the program (its GL state
// is the parent's) and once the process is exiting.
//
// Error state: GL errors are never read or raised (gl_context_timing.hpp).
// EGL keeps the error of the last EGL call per thread: the wrappers make
// their own EGL calls (eglGetCurrentContext, eglGetProcAddress) before the
// program's call, never after it, so eglGetError still reports the program's.
#define EGL_NO_X11 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "capture/gl_interposer/gl_context_timing.hpp"
#include "capture/gl_interposer/gl_wayland.hpp"
#include "capture/gl_interposer/interposer_core.hpp"
#include "capture/record_sender.hpp"
#include "capture/thread_cpu.hpp"
#include "latlab/host_clock.hpp"

#define LATLAB_GL_EXPORT extern "C" __attribute__((visibility("default")))

// GLX types without Xlib's headers: Display* and GLXContext are pointers,
// GLXDrawable an XID (unsigned long); the ABI is the same.
using GlxDisplay = void*;
using GlxContext = void*;
using GlxDrawable = unsigned long;
using GlxProc = void (*)();

namespace latlab::capture::glcap {
namespace {

// How often the sender thread sends what was queued.
constexpr auto kSendPeriod = std::chrono::milliseconds(2);
// How long a context's destruction waits for the compositor's word on its
// last frames (a few refresh periods).
constexpr int64_t kFeedbackDrainNs = 100'000'000;
// How often the sender reports the CPU of latlab's threads (CostRecord).
constexpr int64_t kCostPeriodNs = 1'000'000'000;
// Records queued at most; beyond, dropped and counted (a stalled sender).
constexpr size_t kMaxQueued = 1 << 16;

std::atomic<bool> g_forked_child{false};
std::atomic<bool> g_exiting{false};

}  // namespace

bool enabled() {
  static const bool active = RecordSender::process(kSeqLaneGlInterposer).active();
  return active && !g_forked_child.load(std::memory_order_relaxed) &&
         !g_exiting.load(std::memory_order_relaxed);
}

namespace {

using DlsymFn = void* (*)(void*, const char*);

// libc's own dlsym. The interposer's look-ups go there, never through the
// `dlsym` it exports (that one hands out its wrappers: a wrapper would find
// itself as its next definition). Called from this library, RTLD_NEXT means
// "after this library", as it should.
DlsymFn libc_dlsym() {
  static const DlsymFn f = [] {
    DlsymFn found = nullptr;
    for (const char* lib : {"libc.so.6", "libdl.so.2"}) {
      void* h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
      if (h == nullptr) continue;
      for (const char* version : {"GLIBC_2.34", "GLIBC_2.2.5"}) {
        found = reinterpret_cast<DlsymFn>(dlvsym(h, "dlsym", version));
        if (found != nullptr) break;
      }
      dlclose(h);
      if (found != nullptr) break;
    }
    return found;
  }();
  return f;
}

// What the program's dlsym found for each function the interposer hands out
// in its place (see `dlsym` below): the last way to reach the driver when
// neither RTLD_NEXT nor the GL libraries' usual names find it (a program
// that loaded its GL library under another name).
struct SeenSymbol {
  const char* name;
  std::atomic<void*> real{nullptr};
};
SeenSymbol g_seen[] = {{"glXSwapBuffers"},    {"glXDestroyContext"}, {"glXGetProcAddressARB"},
                       {"glXGetProcAddress"}, {"eglSwapBuffers"},    {"eglDestroyContext"},
                       {"eglTerminate"},      {"eglGetProcAddress"}};

void remember_seen(const char* name, void* real) {
  for (auto& s : g_seen) {
    if (std::strcmp(s.name, name) == 0) {
      void* none = nullptr;
      s.real.compare_exchange_strong(none, real);
      return;
    }
  }
}

}  // namespace

void* next_symbol(const char* name) {
  const DlsymFn real_dlsym = libc_dlsym();
  if (real_dlsym == nullptr) return nullptr;
  if (void* f = real_dlsym(RTLD_NEXT, name)) return f;
  for (const char* lib : {"libGLX.so.0", "libGL.so.1", "libEGL.so.1", "libwayland-egl.so.1",
                          "libwayland-client.so.0"}) {
    if (void* h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD)) {
      void* f = real_dlsym(h, name);
      dlclose(h);
      if (f != nullptr) return f;
    }
  }
  for (auto& s : g_seen) {
    if (std::strcmp(s.name, name) == 0) return s.real.load();
  }
  return nullptr;
}

namespace {

using GlxGetProcAddress = GlxProc (*)(const GLubyte*);
using GlxGetCurrentContext = GlxContext (*)();
using EglGetProcAddress = __eglMustCastToProperFunctionPointerType (*)(const char*);
using EglGetCurrentContext = EGLContext (*)();

GlxGetProcAddress real_glx_gpa() {
  static const auto f = next<GlxGetProcAddress>("glXGetProcAddressARB");
  return f;
}
EglGetProcAddress real_egl_gpa() {
  static const auto f = next<EglGetProcAddress>("eglGetProcAddress");
  return f;
}

void* glx_load(const char* name) {
  auto gpa = real_glx_gpa();
  return gpa != nullptr ? reinterpret_cast<void*>(gpa(reinterpret_cast<const GLubyte*>(name)))
                        : nullptr;
}
void* egl_load(const char* name) {
  auto gpa = real_egl_gpa();
  return gpa != nullptr ? reinterpret_cast<void*>(gpa(name)) : nullptr;
}

// ---------------------------------------------------------------------------
// Outbox: records queued by the program's threads, sent by one thread.

RecordType type_of(const HelloRecord&) { return RecordType::hello; }
RecordType type_of(const UnavailableRecord&) { return RecordType::unavailable; }
RecordType type_of(const SubmitRecord&) { return RecordType::submit; }
RecordType type_of(const FrameRecord&) { return RecordType::frame; }
RecordType type_of(const EndRecord&) { return RecordType::end; }
RecordType type_of(const WindowRecord&) { return RecordType::window; }

// What the compositor said of Wayland frames, handed to their contexts
// (defined with the contexts below): the sender's, never the swap's, work.
void poll_display_outcomes();

class Outbox {
 public:
  void push(uint64_t source, OutRecord&& record) {
    std::lock_guard lock(mu_);
    if (queued_.size() >= kMaxQueued) {
      ++dropped_;
      return;
    }
    queued_.emplace_back(source, std::move(record));
    if (!started_) start();
  }
  // Sends everything queued and stops the thread (at exit).
  void stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    std::vector<Item> rest;
    {
      std::lock_guard lock(mu_);
      rest.swap(queued_);
    }
    send(rest);
  }

 private:
  using Item = std::pair<uint64_t, OutRecord>;

  // With every signal blocked: signals meant for the program's threads
  // never land on this one.
  void start() {
    started_ = true;
    sigset_t all;
    sigset_t old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    thread_ = std::thread([this] { run(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  void run() {
    // Named for `top -H` and profilers: the program's CPU that latlab takes.
    pthread_setname_np(pthread_self(), "latlab-glsend");
    std::vector<Item> batch;
    LatlabThreadsCpu threads;
    int64_t last_cost = 0;
    std::unique_lock lock(mu_);
    while (!stopping_) {
      wake_.wait_for(lock, kSendPeriod, [this] { return stopping_; });
      batch.swap(queued_);
      const bool ending = stopping_;
      lock.unlock();
      send(batch);
      batch.clear();
      poll_display_outcomes();
      // The CPU of latlab's threads in the process, once a second and at
      // the end (source 0: the process's figure, not one context's).
      if (ending || host_now_ns() - last_cost > kCostPeriodNs) {
        CostRecord cost;
        cost.threads_cpu_ns = threads.sample();
        cost.threads = threads.threads();
        RecordSender::process(kSeqLaneGlInterposer).send(cost, RecordType::cost, 0);
        last_cost = host_now_ns();
      }
      lock.lock();
    }
  }
  void send(std::vector<Item>& batch) {
    auto& sender = RecordSender::process(kSeqLaneGlInterposer);
    for (auto& [source, record] : batch) {
      std::visit(
          [&, src = source](auto& r) {
            if constexpr (std::is_same_v<std::decay_t<decltype(r)>, EndRecord>) {
              std::lock_guard lock(mu_);
              r.dropped = sender.dropped() + dropped_;
            }
            sender.send(r, type_of(r), src);
          },
          record);
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::vector<Item> queued_;
  uint64_t dropped_ = 0;
  bool started_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

// Never destroyed: a program's thread may still swap while the process exits.
Outbox& outbox() {
  static auto* o = new Outbox;
  return *o;
}

// ---------------------------------------------------------------------------
// Contexts

struct Entry {
  std::mutex mu;
  std::unique_ptr<GlContextTiming> timing;  // made at the context's first swap
  void* display = nullptr;
  // The presentation feedback its last swap on a Wayland surface asked.
  std::shared_ptr<PresentationFeedback> feedback;
};

// (EGL?, context handle) -> its timing.
using Key = std::pair<bool, uintptr_t>;

struct Registry {
  std::mutex mu;
  std::map<Key, std::shared_ptr<Entry>> contexts;
};

Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

// The context's entry, its timing made (probing the context, current on
// this thread) at the first call.
std::shared_ptr<Entry> entry_for(bool egl, void* context, void* display) {
  std::shared_ptr<Entry> e;
  {
    auto& reg = registry();
    std::lock_guard lock(reg.mu);
    auto& slot = reg.contexts[{egl, reinterpret_cast<uintptr_t>(context)}];
    if (!slot) {
      slot = std::make_shared<Entry>();
      slot->display = display;
    }
    e = slot;
  }
  std::lock_guard lock(e->mu);
  if (!e->timing) {
    e->timing = std::make_unique<GlContextTiming>(
        reinterpret_cast<uint64_t>(context), egl ? "EGL" : "GLX", egl ? egl_load : glx_load,
        [](uint64_t source, OutRecord&& r) { outbox().push(source, std::move(r)); });
  }
  return e;
}

// Hands the compositor's outcomes to their contexts' timing (`self`, whose
// context is `self_context`, directly: it may have left the registry; null:
// every outcome through the registry).
void deliver(const std::vector<DisplayOutcome>& got, Entry* self, void* self_context) {
  for (const DisplayOutcome& o : got) {
    std::shared_ptr<Entry> to;
    Entry* e = self;
    if (self == nullptr || o.owner != reinterpret_cast<uint64_t>(self_context)) {
      auto& reg = registry();
      std::lock_guard lock(reg.mu);
      auto it = reg.contexts.find({true, static_cast<uintptr_t>(o.owner)});
      if (it == reg.contexts.end()) continue;  // its context is gone
      to = it->second;
      e = to.get();
    }
    std::lock_guard lock(e->mu);
    if (e->timing) e->timing->display_outcome(o);
  }
}

void poll_display_outcomes() {
  // At exit the program may have let its display go unseen.
  if (g_exiting.load(std::memory_order_relaxed)) return;
  std::vector<DisplayOutcome> got;  // allocates only when something arrived
  poll_wayland_feedback(got);
  if (!got.empty()) deliver(got, nullptr, nullptr);
}

// Removes the context's entry and finishes it (`current`: on this thread),
// after the compositor's word on its last frames (at most kFeedbackDrainNs).
void forget(bool egl, void* context, bool current) {
  std::shared_ptr<Entry> e;
  {
    auto& reg = registry();
    std::lock_guard lock(reg.mu);
    auto it = reg.contexts.find({egl, reinterpret_cast<uintptr_t>(context)});
    if (it == reg.contexts.end()) return;
    e = it->second;
    reg.contexts.erase(it);
  }
  std::shared_ptr<PresentationFeedback> feedback;
  {
    std::lock_guard lock(e->mu);
    feedback = e->feedback;
  }
  if (feedback) {
    std::vector<DisplayOutcome> got;
    feedback->drain(reinterpret_cast<uint64_t>(context), kFeedbackDrainNs, got);
    deliver(got, e.get(), context);
  }
  std::lock_guard lock(e->mu);
  if (e->timing) e->timing->finish(current);
}

// How the swap of `context` on `drawable` learns its present_complete: on a
// Wayland window surface, the compositor's feedback for the commit the swap
// makes (asked here, before the swap). Under the entry's lock.
DisplayAsk ask_display(Entry& e, bool egl, void* context, uint64_t drawable) {
  DisplayAsk ask;
  if (!egl) return ask;
  const auto w = wayland_surface_of(reinterpret_cast<EGLSurface>(drawable));
  if (!w) return ask;
  if (!w->feedback) {
    ask.no_way = w->why;
    return ask;
  }
  ask.method = PresentMethod::wp_presentation;
  e.feedback = w->feedback;
  const bool asked =
      w->feedback->request(w->surface, reinterpret_cast<uint64_t>(context), e.timing->next_frame());
  ask.why = asked ? NoComplete::none : NoComplete::dropped;
  return ask;
}

// Times one swap around `call` (the real swap; returns its result code).
template <class Call>
int32_t timed_swap(bool egl, void* context, void* display, uint64_t drawable, int64_t enter,
                   Call&& call) {
  std::shared_ptr<Entry> e = entry_for(egl, context, display);
  DisplayAsk ask;
  {
    std::lock_guard lock(e->mu);
    e->timing->before_swap(enter);
    if (e->timing->first_swap_of(drawable)) {
      const auto window = egl ? x11_window_of(reinterpret_cast<EGLSurface>(drawable))
                              : std::optional<uint64_t>(drawable);
      if (window) e->timing->name_x11_window(drawable, *window);
    }
    ask = ask_display(*e, egl, context, drawable);
  }
  const int64_t call_start = host_now_ns();
  const int32_t result = call();
  const int64_t returned = host_now_ns();
  // The compositor's answers come through the sender thread (poll_display_outcomes).
  std::lock_guard lock(e->mu);
  e->timing->after_swap(enter, call_start, returned, drawable, result, ask);
  return result;
}

EGLContext egl_current_context() {
  static const auto f = next<EglGetCurrentContext>("eglGetCurrentContext");
  return f != nullptr ? f() : EGL_NO_CONTEXT;
}

GlxContext glx_current_context() {
  static const auto f = next<GlxGetCurrentContext>("glXGetCurrentContext");
  return f != nullptr ? f() : nullptr;
}

// At exit: every context's frames still waiting are sent (without GPU span:
// GL may be gone already), then the outbox is emptied.
void finish_all() {
  if (!enabled()) return;
  g_exiting.store(true);
  std::map<Key, std::shared_ptr<Entry>> all;
  {
    auto& reg = registry();
    std::lock_guard lock(reg.mu);
    all.swap(reg.contexts);
  }
  for (auto& [key, e] : all) {
    std::lock_guard lock(e->mu);
    if (e->timing) e->timing->finish(false);
    // Never released at exit: the program may have disconnected its display.
    if (e->feedback) new std::shared_ptr<PresentationFeedback>(std::move(e->feedback));
  }
  outbox().stop();
}

struct ProcessHooks {
  ProcessHooks() {
    pthread_atfork(nullptr, nullptr, [] { g_forked_child.store(true); });
  }
  // Preloaded, this library is finalised after the program and its GL
  // libraries: no GL call here, only records.
  ~ProcessHooks() { finish_all(); }
};
ProcessHooks g_process_hooks;

}  // namespace
}  // namespace latlab::capture::glcap

using namespace latlab::capture::glcap;  // NOLINT: the exported C functions below

namespace {

using EglSwapWithDamage = EGLBoolean (*)(EGLDisplay, EGLSurface, const EGLint*, EGLint);

std::atomic<EglSwapWithDamage> g_damage_khr{nullptr};
std::atomic<EglSwapWithDamage> g_damage_ext{nullptr};

EGLBoolean egl_swap(EGLDisplay dpy, EGLSurface surface, EglSwapWithDamage damage,
                    const EGLint* rects, EGLint n) {
  static const auto real = next<EGLBoolean (*)(EGLDisplay, EGLSurface)>("eglSwapBuffers");
  auto call = [&]() -> EGLBoolean {
    if (damage != nullptr) return damage(dpy, surface, rects, n);
    return real != nullptr ? real(dpy, surface) : EGL_FALSE;
  };
  const int64_t enter = latlab::host_now_ns();
  if (!enabled()) return call();
  // Before the program's call: its EGL error stays the last one.
  EGLContext context = egl_current_context();
  if (context == EGL_NO_CONTEXT) return call();
  EGLBoolean ok = EGL_FALSE;
  timed_swap(true, context, dpy, reinterpret_cast<uint64_t>(surface), enter, [&] {
    ok = call();
    return ok == EGL_TRUE ? 0 : -1;
  });
  return ok;
}

EGLBoolean swap_with_damage_khr(EGLDisplay dpy, EGLSurface s, const EGLint* rects, EGLint n) {
  return egl_swap(dpy, s, g_damage_khr.load(), rects, n);
}
EGLBoolean swap_with_damage_ext(EGLDisplay dpy, EGLSurface s, const EGLint* rects, EGLint n) {
  return egl_swap(dpy, s, g_damage_ext.load(), rects, n);
}

}  // namespace

LATLAB_GL_EXPORT void glXSwapBuffers(GlxDisplay dpy, GlxDrawable drawable) {
  static const auto real = next<void (*)(GlxDisplay, GlxDrawable)>("glXSwapBuffers");
  if (real == nullptr) return;
  const int64_t enter = latlab::host_now_ns();
  GlxContext context = enabled() ? glx_current_context() : nullptr;
  if (context == nullptr) {
    real(dpy, drawable);
    return;
  }
  timed_swap(false, context, dpy, drawable, enter, [&] {
    real(dpy, drawable);
    return 0;
  });
}

LATLAB_GL_EXPORT void glXDestroyContext(GlxDisplay dpy, GlxContext context) {
  static const auto real = next<void (*)(GlxDisplay, GlxContext)>("glXDestroyContext");
  if (enabled() && context != nullptr) forget(false, context, glx_current_context() == context);
  if (real != nullptr) real(dpy, context);
}

LATLAB_GL_EXPORT EGLBoolean eglSwapBuffers(EGLDisplay dpy, EGLSurface surface) {
  return egl_swap(dpy, surface, nullptr, nullptr, 0);
}

LATLAB_GL_EXPORT EGLBoolean eglDestroyContext(EGLDisplay dpy, EGLContext context) {
  static const auto real = next<EGLBoolean (*)(EGLDisplay, EGLContext)>("eglDestroyContext");
  if (enabled() && context != EGL_NO_CONTEXT)
    forget(true, context, egl_current_context() == context);
  return real != nullptr ? real(dpy, context) : EGL_FALSE;
}

// Terminating a display destroys its contexts: their timing goes with them.
LATLAB_GL_EXPORT EGLBoolean eglTerminate(EGLDisplay dpy) {
  static const auto real = next<EGLBoolean (*)(EGLDisplay)>("eglTerminate");
  if (enabled()) {
    const EGLContext current = egl_current_context();
    std::vector<std::pair<void*, bool>> gone;
    {
      auto& reg = registry();
      std::lock_guard lock(reg.mu);
      for (auto& [key, e] : reg.contexts) {
        if (key.first && e->display == dpy)
          gone.emplace_back(reinterpret_cast<void*>(key.second),
                            reinterpret_cast<void*>(key.second) == current);
      }
    }
    for (auto& [context, is_current] : gone) forget(true, context, is_current);
    wayland_display_terminated(dpy);
  }
  return real != nullptr ? real(dpy) : EGL_FALSE;
}

namespace {

GlxProc glx_hook(const char* name) {
  if (std::strcmp(name, "glXSwapBuffers") == 0) return reinterpret_cast<GlxProc>(&glXSwapBuffers);
  if (std::strcmp(name, "glXDestroyContext") == 0)
    return reinterpret_cast<GlxProc>(&glXDestroyContext);
  return nullptr;
}

}  // namespace

LATLAB_GL_EXPORT GlxProc glXGetProcAddressARB(const GLubyte* name) {
  const auto real = real_glx_gpa();
  if (name != nullptr && enabled()) {
    const auto* n = reinterpret_cast<const char*>(name);
    if (std::strcmp(n, "glXGetProcAddressARB") == 0 || std::strcmp(n, "glXGetProcAddress") == 0)
      return reinterpret_cast<GlxProc>(&glXGetProcAddressARB);
    if (GlxProc f = glx_hook(n)) return f;
  }
  return real != nullptr ? real(name) : nullptr;
}

LATLAB_GL_EXPORT GlxProc glXGetProcAddress(const GLubyte* name) {
  return glXGetProcAddressARB(name);
}

LATLAB_GL_EXPORT __eglMustCastToProperFunctionPointerType eglGetProcAddress(const char* name) {
  using Proc = __eglMustCastToProperFunctionPointerType;
  const auto real = real_egl_gpa();
  Proc next_fn = real != nullptr ? real(name) : nullptr;
  if (name == nullptr || !enabled()) return next_fn;
  if (std::strcmp(name, "eglSwapBuffers") == 0) return reinterpret_cast<Proc>(&eglSwapBuffers);
  if (std::strcmp(name, "eglDestroyContext") == 0)
    return reinterpret_cast<Proc>(&eglDestroyContext);
  if (std::strcmp(name, "eglTerminate") == 0) return reinterpret_cast<Proc>(&eglTerminate);
  if (std::strcmp(name, "eglGetProcAddress") == 0)
    return reinterpret_cast<Proc>(&eglGetProcAddress);
  if (next_fn != nullptr) {
    if (void* own = wayland_wrapper(name, reinterpret_cast<void*>(next_fn)))
      return reinterpret_cast<Proc>(own);
  }
  // The damage variants exist only where the driver has them.
  if (next_fn != nullptr && std::strcmp(name, "eglSwapBuffersWithDamageKHR") == 0) {
    g_damage_khr.store(reinterpret_cast<EglSwapWithDamage>(next_fn));
    return reinterpret_cast<Proc>(&swap_with_damage_khr);
  }
  if (next_fn != nullptr && std::strcmp(name, "eglSwapBuffersWithDamageEXT") == 0) {
    g_damage_ext.store(reinterpret_cast<EglSwapWithDamage>(next_fn));
    return reinterpret_cast<Proc>(&swap_with_damage_ext);
  }
  return next_fn;
}

// ---------------------------------------------------------------------------
// dlsym: programs that load GL themselves (glmark2, SDL, GLFW, engines)
// dlopen libGL/libEGL privately and take the swap from that handle, which
// no preloaded definition can replace. The interposer exports `dlsym` too:
// every look-up goes to the next dlsym (libc's, or another preload's such as
// MangoHud's), and where that found one of the functions above, the
// interposer's wrapper is returned instead (which forwards to the definition
// after it, as when the program links GL). Names not found stay not found,
// so a program probing for a function is told the truth.
//
// dlsym(RTLD_NEXT, ...) depends on who calls it (glibc reads its return
// address): such calls jump to the next dlsym without a frame of the
// interposer's (x86-64 and AArch64), so they search after their caller, not
// after this library. They are not rewritten: a library asking for the next
// glXSwapBuffers is another interposer, which must reach the driver.

namespace {

// The dlsym after this library, for the program's calls. Set by the
// constructor below (or the first call), read by the trampoline.
DlsymFn next_dlsym() {
  static const DlsymFn f = [] {
    for (const char* version : {"GLIBC_2.34", "GLIBC_2.2.5"}) {
      if (void* p = dlvsym(RTLD_NEXT, "dlsym", version)) return reinterpret_cast<DlsymFn>(p);
    }
    return libc_dlsym();
  }();
  return f;
}

// The wrapper handed out for `name` (`real`: what the program's dlsym found,
// not null), or nullptr to return `real` itself.
void* own_function(const char* name, void* real) {
  using Proc = void*;
  struct Own {
    const char* name;
    Proc own;
  };
  static const Own kOwn[] = {
      {"glXSwapBuffers", reinterpret_cast<Proc>(&glXSwapBuffers)},
      {"glXDestroyContext", reinterpret_cast<Proc>(&glXDestroyContext)},
      {"glXGetProcAddressARB", reinterpret_cast<Proc>(&glXGetProcAddressARB)},
      {"glXGetProcAddress", reinterpret_cast<Proc>(&glXGetProcAddress)},
      {"eglSwapBuffers", reinterpret_cast<Proc>(&eglSwapBuffers)},
      {"eglDestroyContext", reinterpret_cast<Proc>(&eglDestroyContext)},
      {"eglTerminate", reinterpret_cast<Proc>(&eglTerminate)},
      {"eglGetProcAddress", reinterpret_cast<Proc>(&eglGetProcAddress)},
  };
  if (name[0] != 'g' && name[0] != 'e' && name[0] != 'w')
    return nullptr;  // the common case, cheaply
  if (void* own = wayland_wrapper(name, real)) return own;
  for (const auto& o : kOwn) {
    if (std::strcmp(o.name, name) == 0) {
      if (real == o.own) return nullptr;  // the program looked this library up
      remember_seen(name, real);
      return o.own;
    }
  }
  if (std::strcmp(name, "eglSwapBuffersWithDamageKHR") == 0) {
    g_damage_khr.store(reinterpret_cast<EglSwapWithDamage>(real));
    return reinterpret_cast<Proc>(&swap_with_damage_khr);
  }
  if (std::strcmp(name, "eglSwapBuffersWithDamageEXT") == 0) {
    g_damage_ext.store(reinterpret_cast<EglSwapWithDamage>(real));
    return reinterpret_cast<Proc>(&swap_with_damage_ext);
  }
  return nullptr;
}

}  // namespace

extern "C" {

// Read by the trampoline (RTLD_NEXT calls); nullptr until set.
__attribute__((visibility("hidden"))) void* latlab_glcap_next_dlsym = nullptr;

// Every dlsym call but RTLD_NEXT ones (once latlab_glcap_next_dlsym is set).
__attribute__((visibility("hidden"))) void* latlab_glcap_dlsym(void* handle, const char* name) {
  const DlsymFn next = next_dlsym();
  if (next == nullptr) return nullptr;
  void* real = next(handle, name);
  if (real == nullptr || name == nullptr || handle == RTLD_NEXT || !enabled()) return real;
  void* own = own_function(name, real);
  return own != nullptr ? own : real;
}

}  // extern "C"

namespace {

// At load, while the process has one thread: the look-ups take the
// loader's lock, never inside a program's dlsym later.
__attribute__((constructor)) void set_next_dlsym() {
  (void)libc_dlsym();
  latlab_glcap_next_dlsym = reinterpret_cast<void*>(next_dlsym());
}

}  // namespace

// The exported dlsym: a trampoline (no frame of its own) so that glibc sees
// the program's return address.
#if defined(__x86_64__)
asm(R"(
  .text
  .globl dlsym
  .type dlsym, @function
  .p2align 4
dlsym:
  .cfi_startproc
  cmpq $-1, %rdi
  jne 1f
  movq latlab_glcap_next_dlsym(%rip), %rax
  testq %rax, %rax
  jz 1f
  jmp *%rax
1:
  jmp latlab_glcap_dlsym
  .cfi_endproc
  .size dlsym, .-dlsym
)");
#elif defined(__aarch64__)
asm(R"(
  .text
  .globl dlsym
  .type dlsym, %function
  .p2align 4
dlsym:
  .cfi_startproc
  cmn x0, #1
  b.ne 1f
  adrp x16, latlab_glcap_next_dlsym
  ldr x16, [x16, :lo12:latlab_glcap_next_dlsym]
  cbz x16, 1f
  br x16
1:
  b latlab_glcap_dlsym
  .cfi_endproc
  .size dlsym, .-dlsym
)");
#else
// Elsewhere a plain function: dlsym(RTLD_NEXT) from the program searches
// after this library instead of after its caller.
LATLAB_GL_EXPORT void* dlsym(void* handle, const char* name) noexcept {
  return latlab_glcap_dlsym(handle, name);
}
#endif
