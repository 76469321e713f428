#include "latlab/timestamp_query_pool.hpp"

#include <algorithm>
#include <charconv>

namespace latlab {
namespace {

bool is_final(QueryStatus s) { return s != QueryStatus::not_ready && s != QueryStatus::missing; }

}  // namespace

Result<std::unique_ptr<TimestampQueryPool>> TimestampQueryPool::create(std::shared_ptr<TimestampSlots> slots,
                                                                       const QueryPoolDesc& desc) {
  if (!slots) return make_error("TimestampQueryPool: no timestamp slots given");
  if (desc.max_queries < 2 || desc.max_queries % 2 != 0) {
    return make_error("QueryPoolDesc::max_queries must be even and >= 2 (got " + std::to_string(desc.max_queries) +
                      ")");
  }
  if (slots->can_time() && slots->slot_count() < desc.max_queries) {
    return make_error("TimestampQueryPool: " + std::to_string(desc.max_queries) + " queries asked, the slots hold " +
                      std::to_string(slots->slot_count()));
  }
  return std::unique_ptr<TimestampQueryPool>(new TimestampQueryPool(std::move(slots), desc));
}

TimestampQueryPool::TimestampQueryPool(std::shared_ptr<TimestampSlots> slots, const QueryPoolDesc& desc)
    : slots_(std::move(slots)),
      desc_(desc),
      ticks_(slots_->tick_format()),
      track_timestamp_(slots_->can_time()),
      durations_only_(slots_->durations_only()) {
  desc_.retained_frames = std::max<uint32_t>(1, desc_.retained_frames);
  pairs_.resize(desc_.max_queries / 2);
}

TimestampQueryPool::~TimestampQueryPool() = default;

void TimestampQueryPool::write_begin(GpuCommandStream stream, uint32_t offset) {
  if (!disposed_ && track_timestamp_) slots_->write(stream, offset, TimestampEdge::begin);
}

void TimestampQueryPool::write_end(GpuCommandStream stream, uint32_t offset) {
  if (!disposed_ && track_timestamp_) slots_->write(stream, offset + 1, TimestampEdge::end);
}

std::optional<uint64_t> TimestampQueryPool::frame_of_uid(std::string_view uid) {
  const auto pos = uid.rfind(":f");
  if (pos == std::string_view::npos || pos + 2 >= uid.size()) return std::nullopt;
  uint64_t frame = 0;
  const char* first = uid.data() + pos + 2;
  const char* last = uid.data() + uid.size();
  const auto [ptr, ec] = std::from_chars(first, last, frame);
  if (ec != std::errc{} || ptr != last) return std::nullopt;
  return frame;
}

std::optional<uint32_t> TimestampQueryPool::query_offset(std::string_view uid) const {
  const auto it = held_.find(std::string(uid));
  if (it == held_.end()) return std::nullopt;
  return it->second * 2;
}

std::optional<uint32_t> TimestampQueryPool::find_free_pair() {
  const auto n = static_cast<uint32_t>(pairs_.size());
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t idx = (cursor_ + i) % n;
    if (pairs_[idx].state == PairState::free) {
      cursor_ = (idx + 1) % n;
      return idx;
    }
  }
  return std::nullopt;
}

std::optional<uint32_t> TimestampQueryPool::find_or_sweep_free_pair() {
  if (auto idx = find_free_pair()) return idx;
  // Full: read what the device has written so those pairs free up. Pairs
  // whose result is still unread stay held: no written result is lost.
  std::vector<std::string> held_uids;
  held_uids.reserve(held_.size());
  for (const auto& [u, _] : held_) held_uids.push_back(u);
  ResolveTicket::State sweep;
  sweep.uids = std::move(held_uids);
  poll(sweep);
  return find_free_pair();
}

std::optional<uint32_t> TimestampQueryPool::allocate_queries_for_context(std::string_view uid,
                                                                         uint64_t frame_id) {
  if (disposed_ || !track_timestamp_) return std::nullopt;
  const char want = desc_.kind == QueryKind::compute ? 'c' : 'r';
  if (uid.size() < 2 || uid[0] != want || uid[1] != ':') return std::nullopt;
  const auto uid_frame = frame_of_uid(uid);
  if (!uid_frame) return std::nullopt;

  std::string key(uid);
  if (*uid_frame != frame_id) {
    // Stored under one frame and looked up under the other, an ok result
    // would read back `missing`: refuse it where the caller can see it.
    ++frame_mismatches_;
    if (!held_.contains(key)) {
      TimestampResult r;
      r.status = QueryStatus::invalid;
      r.frame_id = *uid_frame;
      store_result(key, r);
    }
    return std::nullopt;
  }
  if (const auto it = held_.find(key); it != held_.end()) return it->second * 2;

  const std::optional<uint32_t> idx = find_or_sweep_free_pair();
  if (!idx) {
    ++overflows_;
    TimestampResult r;
    r.status = QueryStatus::overflowed;
    r.frame_id = frame_id;
    store_result(key, r);
    return std::nullopt;
  }

  Pair& p = pairs_[*idx];
  // The pair's previous use is done once its frame (or a later one) retired.
  const bool previous_use_done = !p.ever_used || (completed_frame_ && p.frame_id <= *completed_frame_);
  p.state = PairState::held;
  p.ever_used = true;
  p.frame_id = frame_id;
  p.tick_floor = newest_tick_seen_;
  p.floor_known = any_tick_seen_;
  p.uid = key;
  ++in_use_;
  slots_->reset(*idx * 2, 2, previous_use_done);
  held_.emplace(key, *idx);

  TimestampResult pending;
  pending.status = QueryStatus::not_ready;
  pending.frame_id = frame_id;
  store_result(key, pending);
  return *idx * 2;
}

bool TimestampQueryPool::read_pair(uint32_t pair_index, TimestampResult& out) {
  const Pair& p = pairs_[pair_index];
  slots_->read(pair_index * 2, std::span<SlotReading>(scratch_, 2));
  const SlotReading& b = scratch_[0];
  const SlotReading& e = scratch_[1];
  out = TimestampResult{};
  out.frame_id = p.frame_id;

  if ((b.available && b.late()) || (e.available && e.late())) {
    ++late_results_;
    out.status = QueryStatus::invalid;
    return true;
  }
  if (!b.available || !e.available) {
    out.status = QueryStatus::not_ready;
    return false;
  }
  if (b.overlapped() || e.overlapped()) {
    out.status = QueryStatus::overlapped;  // not timed: no duration, no ticks
    return true;
  }
  if (durations_only_) return read_duration(b, e, out);
  const uint64_t mask = ticks_.mask();
  out.has_ticks = true;
  out.begin_ticks = b.ticks & mask;
  out.end_ticks = e.ticks & mask;
  if (b.disjoint() || e.disjoint()) {
    out.status = QueryStatus::disjoint;
    return true;
  }
  // A begin older than a tick the pool had already seen complete cannot
  // belong to work recorded after that: it is a late write from a previous
  // use of this slot.
  if (p.floor_known && ticks_.before(out.begin_ticks, p.tick_floor)) {
    ++late_results_;
    out.status = QueryStatus::invalid;
    return true;
  }
  if (ticks_.before(out.end_ticks, out.begin_ticks)) {
    out.status = QueryStatus::invalid;  // end before begin
    return true;
  }
  out.duration_ns = ticks_.span_ns(out.begin_ticks, out.end_ticks);
  out.status = QueryStatus::ok;
  if (!any_tick_seen_ || ticks_.before(newest_tick_seen_, out.end_ticks)) {
    newest_tick_seen_ = out.end_ticks;
    any_tick_seen_ = true;
  }
  return true;
}

bool TimestampQueryPool::read_duration(const SlotReading& b, const SlotReading& e, TimestampResult& out) {
  // The begin slot reads 0, the end slot the span: no tick floor to check
  // (a durations-only slot holds only its latest use) and no ticks to keep.
  uint64_t span = 0;
  out.status = completed_pair_status(b, e, ticks_, &span);
  if (out.status == QueryStatus::ok) out.duration_ns = ticks_.ticks_to_ns(span);
  return true;
}

void TimestampQueryPool::free_pair(uint32_t pair_index) {
  Pair& p = pairs_[pair_index];
  if (p.state == PairState::free) return;
  held_.erase(p.uid);
  p.state = PairState::free;
  p.uid.clear();
  --in_use_;
}

void TimestampQueryPool::poll(ResolveTicket::State& state) {
  for (const std::string& uid : state.uids) {
    const auto it = held_.find(uid);
    if (it == held_.end()) continue;  // already final (read, retired or overflowed)
    const uint32_t idx = it->second;
    TimestampResult r;
    if (read_pair(idx, r)) {
      store_result(uid, r);
      free_pair(idx);
    }
  }
  ResolveSummary s;
  for (const std::string& uid : state.uids) {
    const TimestampResult r = timestamp(uid);
    if (r.status == QueryStatus::ok) {
      ++s.resolved_ok;
    } else if (r.status == QueryStatus::not_ready) {
      ++s.still_pending;
    } else {
      ++s.invalid;
    }
  }
  update_last_value();
  s.last_value_ms = last_value_ms_;
  s.last_value_frame = last_value_frame_;
  state.summary = s;
  state.ready = s.still_pending == 0;
}

ResolveTicket TimestampQueryPool::resolve_queries_async() {
  ResolveTicket t;
  if (disposed_) {
    t.state_ = std::make_shared<ResolveTicket::State>();
    t.state_->ready = true;
    t.state_->summary.last_value_ms = last_value_ms_;
    t.state_->summary.last_value_frame = last_value_frame_;
    return t;
  }
  if (!pending_) {
    pending_ = std::make_shared<ResolveTicket::State>();
    pending_->uids.reserve(held_.size());
    for (const auto& [uid, _] : held_) pending_->uids.push_back(uid);
  }
  poll(*pending_);
  t.state_ = pending_;
  if (pending_->ready) pending_.reset();
  return t;
}

void TimestampQueryPool::retire_frame(uint64_t frame_id) {
  if (disposed_) return;
  completed_frame_ = completed_frame_ ? std::max(*completed_frame_, frame_id) : frame_id;
  for (uint32_t idx = 0; idx < pairs_.size(); ++idx) {
    Pair& p = pairs_[idx];
    if (p.state != PairState::held || p.frame_id != frame_id) continue;
    TimestampResult r;
    if (!read_pair(idx, r)) {
      r.status = QueryStatus::invalid;  // its work completed without writing it
    }
    const std::string uid = p.uid;
    store_result(uid, r);
    free_pair(idx);
  }
  update_last_value();
}

TimestampQueryPool::FrameResults& TimestampQueryPool::frame_slot(uint64_t frame_id) {
  auto it = std::lower_bound(frames_.begin(), frames_.end(), frame_id,
                             [](const FrameResults& f, uint64_t id) { return f.frame_id < id; });
  if (it == frames_.end() || it->frame_id != frame_id) {
    it = frames_.insert(it, FrameResults{frame_id, {}});
  }
  return *it;
}

void TimestampQueryPool::store_result(const std::string& uid, const TimestampResult& r) {
  frame_slot(r.frame_id).by_uid[uid] = r;
  while (frames_.size() > desc_.retained_frames) frames_.pop_front();
}

TimestampResult TimestampQueryPool::timestamp(std::string_view uid) const {
  const auto frame = frame_of_uid(uid);
  if (!frame) return {};
  const auto it = std::lower_bound(frames_.begin(), frames_.end(), *frame,
                                   [](const FrameResults& f, uint64_t id) { return f.frame_id < id; });
  if (it == frames_.end() || it->frame_id != *frame) return {};
  const auto r = it->by_uid.find(std::string(uid));
  if (r == it->by_uid.end()) return {};
  return r->second;
}

bool TimestampQueryPool::has_timestamp_query(std::string_view uid) const {
  return is_final(timestamp(uid).status);
}

std::vector<uint64_t> TimestampQueryPool::timestamp_frames() const {
  std::vector<uint64_t> out;
  out.reserve(frames_.size());
  for (const auto& f : frames_) {
    if (!f.by_uid.empty()) out.push_back(f.frame_id);
  }
  return out;
}

void TimestampQueryPool::update_last_value() {
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    if (it->by_uid.empty()) continue;
    bool complete = true;
    // In double: int64 ns overflows when a frame's pairs span over 292 years
    // together, which 64-bit ticks allow (found by bench/fuzz/fuzz_uid_pool).
    double total_ns = 0;
    for (const auto& [uid, r] : it->by_uid) {
      if (r.status != QueryStatus::ok) {
        complete = false;
        break;
      }
      total_ns += static_cast<double>(r.duration_ns);
    }
    if (complete) {
      last_value_ms_ = total_ns / 1e6;
      last_value_frame_ = it->frame_id;
      return;
    }
  }
}

void TimestampQueryPool::dispose() {
  if (disposed_) return;
  slots_.reset();
  disposed_ = true;
  pending_.reset();
  held_.clear();
  for (auto& p : pairs_) p = Pair{};
  in_use_ = 0;
}

}  // namespace latlab
