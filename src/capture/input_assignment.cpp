#include "capture/input_assignment.hpp"

#include <algorithm>
#include <array>

namespace latlab::capture {

const char* to_string(InputFigure f) {
  switch (f) {
    case InputFigure::input_to_frame_start:
      return "input_to_frame_start";
    case InputFigure::input_to_present:
      return "input_to_present";
    case InputFigure::input_to_gpu_end:
      return "input_to_gpu_end";
    case InputFigure::input_to_screen_updated:
      return "input_to_screen_updated";
    case InputFigure::input_to_present_complete:
      return "input_to_present_complete";
    case InputFigure::input_to_reaction:
      return "input_to_reaction";
    case InputFigure::sent_to_seen:
      return "sent_to_seen";
    case InputFigure::count_:
      break;
  }
  return "?";
}

std::array<std::optional<int64_t>, kInputFigureCount> input_figures(const InputRow& row,
                                                                    bool reaction) {
  std::array<std::optional<int64_t>, kInputFigureCount> out{};
  const int64_t t = row.marker.sent;
  auto since = [t](const std::optional<int64_t>& v) -> std::optional<int64_t> {
    return v ? std::optional<int64_t>(*v - t) : std::nullopt;
  };
  auto at = [&out](InputFigure f) -> std::optional<int64_t>& {
    return out[static_cast<size_t>(f)];
  };
  if (row.frame) {
    const InputFrame& f = *row.frame;
    at(InputFigure::input_to_frame_start) = f.frame_start - t;
    at(InputFigure::input_to_present) = f.present_start - t;
    at(InputFigure::input_to_gpu_end) = since(f.gpu_end);
    at(InputFigure::input_to_screen_updated) = since(f.screen_updated);
    at(InputFigure::input_to_present_complete) = since(f.present_complete);
  }
  if (reaction) at(InputFigure::input_to_reaction) = since(row.reaction);
  if (row.seen) at(InputFigure::sent_to_seen) = row.seen->host_ns - t;
  return out;
}

bool overlaps(const ScreenEvent& e, const InputRegion& r) {
  if (e.width == 0 || e.height == 0) return true;
  const int64_t ex = e.x, ey = e.y, rx = r.x, ry = r.y;
  return ex < rx + r.width && rx < ex + e.width && ey < ry + r.height && ry < ey + e.height;
}

InputAssigner::InputAssigner(bool reaction, Release release, Limits limits)
    : reaction_(reaction), release_(std::move(release)), limits_(limits) {}

void InputAssigner::add_input(const InputMarker& m) {
  if (rows_.empty()) first_id_ = m.id;
  Pending p;
  p.row.marker = m;
  p.reaction_done = !reaction_;
  if (!early_raw_.empty() && first_early_ == m.id) {
    p.row.seen = early_raw_.front();
    p.seen_done = true;
    early_raw_.pop_front();
    ++first_early_;
  }
  rows_.push_back(std::move(p));
  peak_waiting_ = std::max(peak_waiting_, rows_.size());
  // Beyond the limit the oldest gives up (and everything before it).
  if (rows_.size() > limits_.max_waiting) {
    Pending& old = rows_.front();
    old.seen_done = true;
    if (!old.frame_done) {
      old.frame_done = true;
      old.row.no_frame = kTooManyWaiting;
      next_frame_ = std::max(next_frame_, old.row.marker.id + 1);
    }
    if (!old.reaction_done) {
      old.reaction_done = true;
      old.row.no_reaction = kTooManyWaiting;
      next_reaction_ = std::max(next_reaction_, old.row.marker.id + 1);
    }
  }
  pair_reactions();
  release_done();
}

void InputAssigner::add_raw(const RawInputEvent& e, InputKind kind) {
  // The server's time against the host clock: unwrap its 32-bit ms with
  // the host's and keep the extremes of host - server.
  const int64_t host_ms = e.host_ns / 1'000'000;
  const auto behind = static_cast<int32_t>(static_cast<uint32_t>(host_ms) - e.server_ms);
  const int64_t offset_us = (e.host_ns - (host_ms - behind) * 1'000'000) / 1'000;
  offset_min_us_ = std::min(offset_min_us_.value_or(offset_us), offset_us);
  offset_max_us_ = std::max(offset_max_us_.value_or(offset_us), offset_us);
  if (!e.from_xtest || e.kind != kind) {
    ++other_events_;
    return;
  }
  const uint64_t id = xtest_seen_++;
  const uint64_t next_id = first_id_ + rows_.size();  // the next marker's
  if (id >= next_id) {
    // Read before its marker came: kept for it.
    if (early_raw_.empty()) first_early_ = id;
    if (early_raw_.size() < kMaxEarlyRaw) early_raw_.push_back(e);
    return;
  }
  if (id < first_id_) return;  // released without it (waited out)
  Pending& p = rows_[id - first_id_];
  p.row.seen = e;
  p.seen_done = true;
  release_done();
}

void InputAssigner::add_frame(const CaptureFrameRow& row, std::optional<uint64_t> source_index) {
  const FrameRecord& r = row.record;
  frames_seen_ = true;
  if (r.frame_start == kNoTime) return;  // the first frame: its start is unknown
  while (next_frame_ >= first_id_ && next_frame_ - first_id_ < rows_.size()) {
    Pending& p = rows_[next_frame_ - first_id_];
    if (p.row.marker.sent >= r.frame_start) break;
    InputFrame f;
    f.pid = row.pid;
    f.source = r.head.source;
    f.source_index = source_index;
    f.swapchain = r.swapchain;
    f.frame = r.frame;
    f.frame_start = r.frame_start;
    f.present_start = r.present_start;
    f.present_end = r.present_end;
    if (r.gpu_end != kNoTime) f.gpu_end = r.gpu_end;
    if (r.present_complete != kNoTime) f.present_complete = r.present_complete;
    if (row.screen) f.screen_updated = row.screen->host_ns;
    p.row.frame = f;
    p.frame_done = true;
    ++next_frame_;
  }
  release_done();
}

void InputAssigner::add_damage(const ScreenEvent& e) {
  damage_.push_back(e);
  pair_reactions();
  release_done();
}

void InputAssigner::pair_reactions() {
  if (!reaction_) return;
  while (next_reaction_ >= first_id_ && next_reaction_ - first_id_ < rows_.size()) {
    Pending& p = rows_[next_reaction_ - first_id_];
    const int64_t sent = p.row.marker.sent;
    const auto it = std::find_if(damage_.begin(), damage_.end(),
                                 [sent](const ScreenEvent& e) { return e.host_ns > sent; });
    // Changes before it can be no later input's reaction either.
    damage_.erase(damage_.begin(), it);
    if (damage_.empty()) return;
    p.row.reaction = damage_.front().host_ns;
    p.reaction_done = true;
    ++next_reaction_;
  }
}

void InputAssigner::release(int64_t now) {
  for (Pending& p : rows_) {
    if (now - p.row.marker.sent < limits_.seen_wait_ns) break;
    p.seen_done = true;
  }
  for (Pending& p : rows_) {
    if (now - p.row.marker.sent < limits_.wait_ns) break;
    if (!p.frame_done) {
      p.frame_done = true;
      p.row.no_frame = frames_seen_ ? kNoFrameInTime : kNoFrameSource;
      next_frame_ = std::max(next_frame_, p.row.marker.id + 1);
    }
    if (!p.reaction_done) {
      p.reaction_done = true;
      p.row.no_reaction = kNoFrameInTime;
      next_reaction_ = std::max(next_reaction_, p.row.marker.id + 1);
    }
  }
  // With no input waiting for one, changes are kept a short while only.
  if (next_reaction_ - first_id_ >= rows_.size()) {
    while (!damage_.empty() && damage_.front().host_ns < now - limits_.damage_keep_ns)
      damage_.pop_front();
  }
  release_done();
}

void InputAssigner::finish(bool frames_seen) {
  for (Pending& p : rows_) {
    p.seen_done = true;
    if (!p.frame_done) {
      p.frame_done = true;
      p.row.no_frame = frames_seen || frames_seen_ ? kNoFrameYet : kNoFrameSource;
    }
    if (!p.reaction_done) {
      p.reaction_done = true;
      p.row.no_reaction = kNoFrameYet;
    }
  }
  next_frame_ = next_reaction_ = first_id_ + rows_.size();
  release_done();
}

void InputAssigner::count_reason(std::vector<std::pair<std::string, uint64_t>>& counts,
                                 const std::string& r) {
  const auto it =
      std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == r; });
  if (it == counts.end()) {
    counts.emplace_back(r, 1);
  } else {
    ++it->second;
  }
}

void InputAssigner::release_done() {
  while (!rows_.empty() && rows_.front().frame_done && rows_.front().reaction_done &&
         rows_.front().seen_done) {
    const InputRow& row = rows_.front().row;
    ++released_;
    injector_lateness_.add(row.marker.sent - row.marker.scheduled);
    timer_lateness_.add(row.marker.woke - row.marker.scheduled);
    if (row.seen) ++seen_;
    if (row.frame) {
      ++assigned_;
    } else {
      count_reason(not_assigned_, row.no_frame);
    }
    if (reaction_) {
      if (row.reaction) {
        ++reactions_;
      } else {
        count_reason(no_reaction_, row.no_reaction);
      }
    }
    const auto values = input_figures(row, reaction_);
    for (size_t i = 0; i < kInputFigureCount; ++i) {
      if (static_cast<InputFigure>(i) == InputFigure::input_to_reaction && !reaction_) continue;
      figures_[i].add(values[i]);
    }
    if (release_) release_(row);
    rows_.pop_front();
    ++first_id_;
  }
}

InputTotals InputAssigner::totals() const {
  InputTotals t;
  t.released = released_;
  t.seen = seen_;
  t.other_events = other_events_;
  t.assigned = assigned_;
  t.reactions = reactions_;
  t.not_assigned = not_assigned_;
  t.no_reaction = no_reaction_;
  t.injector_lateness = injector_lateness_.summary();
  t.timer_lateness = timer_lateness_.summary();
  for (size_t i = 0; i < kInputFigureCount; ++i) {
    const auto f = static_cast<InputFigure>(i);
    if (f == InputFigure::input_to_reaction && !reaction_) continue;
    t.figures.emplace_back(to_string(f), figures_[i].summary());
  }
  t.server_offset_min_us = offset_min_us_;
  t.server_offset_max_us = offset_max_us_;
  return t;
}

}  // namespace latlab::capture
