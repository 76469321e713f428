// Preloaded into a program that crashes on the GPU machine, where there is
// no debugger: on SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT it prints the
// stack as module + offset to stderr (backtrace_symbols_fd), which
// addr2line resolves against the unstripped build on the development
// machine:
//   cc -shared -fPIC -O1 -o .devbin/segv_backtrace.so bench/device/segv_backtrace.c
//   (device) LD_PRELOAD=$PWD/.devbin/segv_backtrace.so .devbin/latlab_vulkan_tests ...
//   addr2line -f -C -e build/release/tests/latlab_vulkan_tests 0xOFFSET
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void on_fault(int sig) {
  void* frames[64];
  const int n = backtrace(frames, 64);
  const char* head = "\n== segv_backtrace: fatal signal, stack (module(+offset)):\n";
  (void)!write(2, head, strlen(head));
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void install(void) {
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc's unwinder now, not inside the handler
  const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
  for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) signal(sigs[i], on_fault);
}
