// The result reader: the present path (docs/result-schema.md, "present").
#include <fmt/format.h>

#include "report/result_sections.hpp"

namespace latlab::reading {
namespace {

ScreenObserverInfo read_observer(const Obj& o) {
  ScreenObserverInfo s;
  s.name = o.str("name");
  s.available = o.boolean("available");
  o.opt("reason", s.reason);
  o.opt("observes", s.observes);
  o.opt("error", s.error);
  o.opt("poll_period_ns", s.poll_period_ns);
  o.opt("polls", s.polls);
  o.opt("unreadable_polls", s.unreadable_polls);
  o.opt("frames_seen", s.frames_seen);
  o.opt("error_p50_ns", s.error_p50_ns);
  o.opt("error_bound_ns", s.error_bound_ns);
  o.opt("read_p50_ns", s.read_p50_ns);
  o.opt("read_p99_ns", s.read_p99_ns);
  o.opt("cpu_ns", s.cpu_ns);
  o.opt("wall_ns", s.wall_ns);
  return s;
}

std::vector<std::string> read_strings(const Obj& p, const char* key) {
  std::vector<std::string> out;
  const json& a = p.array(key);
  for (size_t i = 0; i < a.size(); ++i)
    out.push_back(str_value(a[i], fmt::format("{}[{}]", p.key_path(key), i)));
  return out;
}

}  // namespace

void read_present(const Obj& doc, LatencyRun& run) {
  if (!doc.has("present")) return;
  const std::optional<Obj> p = doc.obj_or_null("present");
  if (!p) return;
  PresentInfo& info = run.present.emplace();
  info.api = p->str("api");
  p->opt("surface", info.surface);
  p->opt("present_mode", info.present_mode);
  if (p->has("present_modes_offered"))
    info.modes_offered = read_strings(*p, "present_modes_offered");
  p->opt("swapchain_images", info.swapchain_images);
  p->opt("image_content", info.image_content);
  p->opt("hold_ns", info.hold_ns);
  if (p->has("present_complete")) {
    const Obj c = p->obj("present_complete");
    info.present_wait = c.boolean("available");
    c.opt("reason", info.present_wait_reason);
  }
  p->opt("present_errors", run.present_errors);
  p->opt("first_present_error", run.present_first_error);
  if (!p->has("screen_observers")) return;
  const json& obs = p->array("screen_observers");
  for (size_t i = 0; i < obs.size(); ++i) {
    info.observers.push_back(
        read_observer(Obj(obs[i], fmt::format("{}[{}]", p->key_path("screen_observers"), i))));
  }
}

}  // namespace latlab::reading
