#include "capture/presentation_feedback.hpp"

#include <poll.h>

#include <algorithm>
#include <cstring>

#include "capture/presentation_clock.hpp"
#include "latlab/host_clock.hpp"

namespace latlab::capture {
namespace {

using Fn = void (*)();

template <class F>
Fn any_fn(F f) {
  return reinterpret_cast<Fn>(f);
}

}  // namespace

void apply_outcome(const DisplayOutcome& o, FrameRecord& f) {
  f.present_complete = o.displayed_ns;
  f.no_complete = o.why;
  f.refresh_ns = o.refresh_ns > 0 ? o.refresh_ns : kNoTime;
  f.display_seq = o.seq;
  f.display_flags = o.flags;
}

PresentationFeedback::PresentationFeedback(const wl::Client& c, wl::Display* display)
    : c_(c), display_(display) {}

std::unique_ptr<PresentationFeedback> PresentationFeedback::create(const wl::Client& c,
                                                                   wl::Display* display,
                                                                   std::string& why) {
  std::unique_ptr<PresentationFeedback> p(new PresentationFeedback(c, display));
  p->queue_ = c.display_create_queue(display);
  if (p->queue_ == nullptr) {
    why = "wl_display_create_queue failed";
    return nullptr;
  }
  why = p->bind();
  if (!why.empty()) return nullptr;
  return p;
}

std::string PresentationFeedback::bind() {
  static Fn registry_listener[] = {any_fn(&on_global), any_fn(&on_global_remove)};
  static Fn presentation_listener[] = {any_fn(&on_clock_id)};
  // The registry is made through a wrapper of the program's display on
  // latlab's queue: its events, and those of what is bound from it, never
  // reach the program's queues.
  wl::Proxy* wrapper = c_.proxy_create_wrapper(display_);
  if (wrapper == nullptr) return "wl_proxy_create_wrapper failed on the program's wl_display";
  c_.proxy_set_queue(wrapper, queue_);
  wl::Proxy* registry =
      c_.proxy_marshal_constructor(wrapper, wl::kDisplayGetRegistry, c_.registry_interface,
                                   nullptr);
  c_.proxy_wrapper_destroy(wrapper);
  if (registry == nullptr) return "wl_display.get_registry failed";
  c_.proxy_add_listener(registry, registry_listener, this);
  std::string why;
  if (c_.display_roundtrip_queue(display_, queue_) < 0) {
    why = "the round trip to the compositor failed (the display has an error)";
  } else if (global_name_ == 0) {
    why = "the compositor does not offer wp_presentation (presentation-time)";
  } else {
    const wl::Interface* iface = wl::presentation_interfaces(c_).presentation;
    presentation_ = c_.proxy_marshal_constructor_versioned(
        registry, wl::kRegistryBind, iface, 1, global_name_, iface->name, 1, nullptr);
    if (presentation_ != nullptr) {
      c_.proxy_add_listener(presentation_, presentation_listener, this);
      c_.display_roundtrip_queue(display_, queue_);
    }
    if (clock_id_ == UINT32_MAX) {
      why = "wp_presentation sent no clock_id";
    } else {
      why = presentation_clock_refusal(clock_id_);
    }
  }
  c_.proxy_destroy(registry);
  return why;
}

PresentationFeedback::~PresentationFeedback() { close(); }

void PresentationFeedback::close() {
  std::lock_guard read(read_mu_);
  std::lock_guard lock(list_mu_);
  if (closed_) return;
  closed_ = true;
  for (const Outstanding& o : outstanding_) c_.proxy_destroy(o.proxy);
  outstanding_.clear();
  arrived_.clear();
  if (presentation_ != nullptr) {
    c_.proxy_marshal(presentation_, wl::kPresentationDestroy);
    c_.proxy_destroy(presentation_);
    presentation_ = nullptr;
  }
  if (queue_ != nullptr) c_.event_queue_destroy(queue_);
  queue_ = nullptr;
}

bool PresentationFeedback::request(wl::Proxy* surface, uint64_t owner, uint64_t frame) {
  static Fn feedback_listener[] = {any_fn(&on_sync_output), any_fn(&on_presented),
                                   any_fn(&on_discarded)};
  // Held across the request: a handler on another thread finds the entry
  // once the proxy exists.
  std::lock_guard lock(list_mu_);
  if (presentation_ == nullptr || outstanding_.size() >= kMaxOutstanding) return false;
  // wp_presentation.feedback(surface, new id): the new object is on
  // latlab's queue, as the presentation object it is made from.
  wl::Proxy* fb = c_.proxy_marshal_constructor(presentation_, wl::kPresentationFeedback,
                                               wl::presentation_interfaces(c_).feedback, surface,
                                               nullptr);
  if (fb == nullptr) return false;
  c_.proxy_add_listener(fb, feedback_listener, this);
  outstanding_.push_back({fb, owner, frame, host_now_ns()});
  return true;
}

bool PresentationFeedback::pump(int timeout_ms) {
  // Events already queued for latlab are dispatched before reading more.
  while (c_.display_prepare_read_queue(display_, queue_) != 0) {
    if (c_.display_dispatch_queue_pending(display_, queue_) < 0) return false;
  }
  pollfd p{c_.display_get_fd(display_), POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) > 0 && (p.revents & POLLIN) != 0) {
    if (c_.display_read_events(display_) < 0) return false;
  } else {
    c_.display_cancel_read(display_);
  }
  return c_.display_dispatch_queue_pending(display_, queue_) >= 0;
}

// The age of the oldest request still awaited, ns (-1: none).
int64_t PresentationFeedback::oldest_age() {
  std::lock_guard lock(list_mu_);
  return outstanding_.empty() ? -1 : host_now_ns() - outstanding_.front().asked_ns;
}

void PresentationFeedback::take_arrived(std::vector<DisplayOutcome>& out) {
  std::lock_guard lock(list_mu_);
  out.insert(out.end(), arrived_.begin(), arrived_.end());
  arrived_.clear();
}

void PresentationFeedback::poll(std::vector<DisplayOutcome>& out) {
  // The list lock is not held while libwayland dispatches: a present's
  // request waits only for a handler's few lines, never for a dispatch.
  std::lock_guard lock(read_mu_);
  if (closed_ || oldest_age() < 0) return;
  c_.display_dispatch_queue_pending(display_, queue_);
  if (oldest_age() > kReadAfterNs) pump(0);
  take_arrived(out);
}

void PresentationFeedback::drain(uint64_t owner, int64_t timeout_ns,
                                 std::vector<DisplayOutcome>& out) {
  std::lock_guard read(read_mu_);
  if (closed_) return;
  auto awaited = [&] {
    std::lock_guard lock(list_mu_);
    return std::any_of(outstanding_.begin(), outstanding_.end(),
                       [&](const Outstanding& o) { return o.owner == owner; });
  };
  const int64_t deadline = host_now_ns() + timeout_ns;
  for (int64_t now = host_now_ns(); awaited() && now < deadline; now = host_now_ns()) {
    c_.display_flush(display_);
    if (!pump(static_cast<int>((deadline - now + 999'999) / 1'000'000))) break;
  }
  std::lock_guard lock(list_mu_);
  for (auto it = outstanding_.begin(); it != outstanding_.end();) {
    if (it->owner != owner) {
      ++it;
      continue;
    }
    arrived_.push_back({owner, it->frame, kNoTime, 0, 0, 0, NoComplete::retired});
    c_.proxy_destroy(it->proxy);
    it = outstanding_.erase(it);
  }
  out.insert(out.end(), arrived_.begin(), arrived_.end());
  arrived_.clear();
}

void PresentationFeedback::forget(uint64_t owner) {
  std::lock_guard lock(list_mu_);
  for (auto it = outstanding_.begin(); it != outstanding_.end();) {
    if (it->owner == owner) {
      c_.proxy_destroy(it->proxy);
      it = outstanding_.erase(it);
    } else {
      ++it;
    }
  }
  std::erase_if(arrived_, [&](const DisplayOutcome& o) { return o.owner == owner; });
}

void PresentationFeedback::finish(wl::Proxy* proxy, DisplayOutcome o) {
  std::lock_guard lock(list_mu_);
  auto it = std::find_if(outstanding_.begin(), outstanding_.end(),
                         [&](const Outstanding& x) { return x.proxy == proxy; });
  // Not listed: drain or forget destroyed it while this event was on its
  // way (libwayland keeps the proxy's memory until the handler returns).
  if (it == outstanding_.end()) return;
  o.owner = it->owner;
  o.frame = it->frame;
  outstanding_.erase(it);
  // presented and discarded are destructor events: the proxy goes with them.
  c_.proxy_destroy(proxy);
  arrived_.push_back(o);
}

void PresentationFeedback::on_global(void* self, wl::Proxy*, uint32_t name, const char* iface,
                                     uint32_t) {
  if (std::strcmp(iface, wl::kPresentationName) == 0)
    static_cast<PresentationFeedback*>(self)->global_name_ = name;
}

void PresentationFeedback::on_clock_id(void* self, wl::Proxy*, uint32_t clock_id) {
  static_cast<PresentationFeedback*>(self)->clock_id_ = clock_id;
}

void PresentationFeedback::on_presented(void* self, wl::Proxy* fb, uint32_t sec_hi,
                                        uint32_t sec_lo, uint32_t nsec, uint32_t refresh,
                                        uint32_t seq_hi, uint32_t seq_lo, uint32_t flags) {
  auto* p = static_cast<PresentationFeedback*>(self);
  const auto sec = static_cast<int64_t>((uint64_t{sec_hi} << 32) | sec_lo);
  DisplayOutcome o;
  o.displayed_ns = presentation_to_host_ns(p->clock_id_, sec * 1'000'000'000 + nsec);
  o.refresh_ns = refresh;
  o.seq = (uint64_t{seq_hi} << 32) | seq_lo;
  o.flags = flags;
  p->finish(fb, o);
}

void PresentationFeedback::on_discarded(void* self, wl::Proxy* fb) {
  DisplayOutcome o;
  o.why = NoComplete::discarded;
  static_cast<PresentationFeedback*>(self)->finish(fb, o);
}

}  // namespace latlab::capture
