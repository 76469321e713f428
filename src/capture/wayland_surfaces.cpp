#include "capture/wayland_surfaces.hpp"

#include <cstdlib>
#include <cstring>

namespace latlab::capture {
namespace {

// LATLAB_CAPTURE_WAYLAND_FEEDBACK=0 turns the feedback off (a program that
// misbehaves with it, or the cost measured without it).
bool feedback_wanted() {
  static const bool wanted = [] {
    const char* v = std::getenv(kWaylandFeedbackEnv);
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return wanted;
}

}  // namespace

void WaylandSurfaces::add(uint64_t key, void* display, void* surface) {
  std::lock_guard lock(mu_);
  if (surfaces_.count(key) != 0) remove_locked(key);
  auto [it, made] = displays_.try_emplace(display);
  Display& d = it->second;
  if (made && !feedback_wanted()) {
    d.why = std::string("turned off by ") + kWaylandFeedbackEnv + "=0";
  } else if (made) {
    const wl::Client* c = wl::client(d.why);
    if (c != nullptr)
      d.feedback = PresentationFeedback::create(*c, static_cast<wl::Display*>(display), d.why);
  }
  ++d.surfaces;
  surfaces_[key] = {display, static_cast<wl::Proxy*>(surface)};
}

void WaylandSurfaces::remove(uint64_t key) {
  std::lock_guard polling(poll_mu_);
  std::lock_guard lock(mu_);
  remove_locked(key);
}

void WaylandSurfaces::poll_all(std::vector<DisplayOutcome>& out) {
  std::lock_guard polling(poll_mu_);
  std::vector<std::shared_ptr<PresentationFeedback>> feedbacks;
  {
    std::lock_guard lock(mu_);
    for (const auto& [display, d] : displays_) {
      if (d.feedback) feedbacks.push_back(d.feedback);
    }
  }
  for (const auto& f : feedbacks) f->poll(out);
}

void WaylandSurfaces::forget_display(void* display) {
  std::lock_guard polling(poll_mu_);
  std::shared_ptr<PresentationFeedback> feedback;
  {
    std::lock_guard lock(mu_);
    std::erase_if(surfaces_, [display](const auto& s) { return s.second.display == display; });
    auto d = displays_.find(display);
    if (d == displays_.end()) return;
    feedback = std::move(d->second.feedback);
    displays_.erase(d);
  }
  // Closed, not only released: a context's swap may still hold it.
  if (feedback) feedback->close();
}

void WaylandSurfaces::remove_locked(uint64_t key) {
  auto it = surfaces_.find(key);
  if (it == surfaces_.end()) return;
  auto d = displays_.find(it->second.display);
  surfaces_.erase(it);
  if (d != displays_.end() && --d->second.surfaces == 0) displays_.erase(d);
}

std::optional<WaylandSurfaces::Surface> WaylandSurfaces::find(uint64_t key) const {
  std::lock_guard lock(mu_);
  auto it = surfaces_.find(key);
  if (it == surfaces_.end()) return std::nullopt;
  auto d = displays_.find(it->second.display);
  Surface s;
  s.surface = it->second.surface;
  if (d != displays_.end()) {
    s.feedback = d->second.feedback;
    s.why = d->second.why;
  }
  return s;
}

}  // namespace latlab::capture
