// Ctrl-C / SIGTERM as "stop early, keep what was measured": `latlab run`
// writes a partial result, `latlab profile --trace` a partial trace. The
// engine's runs take flag() as their interrupt.
#pragma once

#include <signal.h>

#include <atomic>

namespace latlab {

// While installed, SIGINT and SIGTERM set flag() instead of ending the
// process; a second one ends it (SA_RESETHAND). restore() puts the previous
// handlers back (also on destruction). One at a time.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope() { restore(); }
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

  void restore();
  // Set once a signal came; stays valid for the process's life.
  static const std::atomic<bool>* flag();

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  bool installed_ = true;
};

}  // namespace latlab
