#include "report/file_plan.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/output_file.hpp"

namespace latlab {

namespace store {

bool is_postgres_url(const std::string& location) {
  return location.rfind("postgresql://", 0) == 0 || location.rfind("postgres://", 0) == 0;
}

std::string default_store_location() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/latlab/results.db";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "") + "/.local/share/latlab/results.db";
}

}  // namespace store

namespace {

struct Checked {
  std::string identity;
  bool char_device = false;
  bool descriptor = false;
};

}  // namespace

void FilePlan::input(std::string what, std::string path) {
  if (!path.empty()) entries_.push_back({std::move(what), std::move(path), false, false});
}

void FilePlan::output(std::string what, std::string path) {
  if (!path.empty()) entries_.push_back({std::move(what), std::move(path), true, true});
}

void FilePlan::store(std::string what, const std::string& location) {
  if (store::is_postgres_url(location)) return;
  // Written in place; ResultsStore::open checks the path itself.
  entries_.push_back({std::move(what),
                      location.empty() ? store::default_store_location() : location, true, false});
}

Result<void> FilePlan::check() const {
  std::vector<Checked> checked;
  for (const Entry& e : entries_) {
    Checked c;
    if (e.check_as_output) {
      Result<OutputTarget> t = check_output_path(e.path);
      if (!t) return make_error(e.what + ": " + t.error().message);
      c.identity = t->identity;
      c.char_device = t->char_device;
      c.descriptor = t->kind == OutputTarget::Kind::descriptor;
    } else {
      c.identity = file_identity(e.path);
    }
    checked.push_back(std::move(c));
  }
  for (size_t i = 0; i < entries_.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (checked[i].identity != checked[j].identity) continue;
      const Entry& a = entries_[j];
      const Entry& b = entries_[i];
      if (!a.written && !b.written) continue;  // reading one file twice harms nothing
      if (checked[i].char_device && checked[j].char_device) continue;
      const std::string where =
          a.path == b.path ? "'" + a.path + "'" : "'" + a.path + "' and '" + b.path + "'";
      if (checked[i].identity.rfind("fd:", 0) == 0) {
        return make_error(a.what + " and " + b.what + " both write to the same descriptor (" +
                          where + "); give each its own (nothing was run or written)");
      }
      return make_error(a.what + " and " + b.what + " name the same file (" + where +
                        "): one would overwrite the other; give each its own (nothing was run "
                        "or written)");
    }
  }
  return {};
}

bool names_stdout(const std::string& path) {
  if (path.empty()) return false;
  Result<OutputTarget> t = check_output_path(path);
  return t && t->kind == OutputTarget::Kind::descriptor && t->fd == STDOUT_FILENO;
}

namespace {

// The text the signal handler prints: two buffers, the handler reads the one
// published last while the other is rewritten.
std::string g_texts[2];
int g_next_text = 0;
std::atomic<const char*> g_text{nullptr};
struct sigaction g_old_int {};
struct sigaction g_old_term {};

extern "C" void on_interrupt_while_writing(int sig) {
  const char* t = g_text.load();
  if (t != nullptr) (void)!::write(STDERR_FILENO, t, std::strlen(t));
  // SA_RESETHAND put the default action back: the signal ends the process
  // once this handler returns.
  raise(sig);
}

}  // namespace

WritesInterruptScope::WritesInterruptScope(std::string command) : command_(std::move(command)) {
  publish(command_ + ": interrupted before anything was written\n");
  struct sigaction sa {};
  sa.sa_handler = on_interrupt_while_writing;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = static_cast<int>(SA_RESETHAND);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

WritesInterruptScope::~WritesInterruptScope() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  g_text.store(nullptr);
}

void WritesInterruptScope::publish(const std::string& text) {
  g_texts[g_next_text] = text;
  g_text.store(g_texts[g_next_text].c_str());
  g_next_text ^= 1;
}

void WritesInterruptScope::writing(const std::string& what, const std::string& if_cut) {
  std::string text = command_ + ": interrupted while writing " + what + " (" + if_cut + "); ";
  if (kept_.empty()) {
    text += "nothing else was written";
  } else {
    text += "written before it: ";
    for (size_t i = 0; i < kept_.size(); ++i) text += (i > 0 ? ", " : "") + kept_[i];
  }
  publish(text + "\n");
}

void WritesInterruptScope::kept(std::string what) {
  kept_.push_back(std::move(what));
  std::string text = command_ + ": interrupted after writing ";
  for (size_t i = 0; i < kept_.size(); ++i) text += (i > 0 ? ", " : "") + kept_[i];
  publish(text + "\n");
}

}  // namespace latlab
