#include "protocol/zone_lab.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>

namespace latlab::zone_lab {

using namespace std::chrono_literals;

namespace {

Lab* g_lab = nullptr;            // the hook's target; set before the workers start
thread_local int t_worker = -1;  // this thread's index in the lab; -1: not a worker

constexpr int kWarmZones = 2;
constexpr int kRunZones = 6;

// Run zone k of a thread has a child zone when k % 3 == 1; its name follows
// the zone's. A closer closes a frame before every third zone.
bool has_child(int k) { return k % 3 == 1; }

}  // namespace

const char* step_name(ZoneStep s) {
  switch (s) {
    case ZoneStep::announced:
      return "announced";
    case ZoneStep::block_loaded:
      return "block_loaded";
    case ZoneStep::block_stored:
      return "block_stored";
    case ZoneStep::waiting_held:
      return "waiting_held";
    case ZoneStep::abandoning:
      return "abandoning";
    case ZoneStep::claim_loaded:
      return "claim_loaded";
    case ZoneStep::claimed:
      return "claimed";
    case ZoneStep::installed:
      return "installed";
    case ZoneStep::binding:
      return "binding";
    case ZoneStep::before_fetch_add:
      return "before_fetch_add";
    case ZoneStep::before_exchange:
      return "before_exchange";
    case ZoneStep::exchanged:
      return "exchanged";
    case ZoneStep::holding:
      return "holding";
    case ZoneStep::fenced:
      return "fenced";
    case ZoneStep::busy_lane:
      return "busy_lane";
    case ZoneStep::skipped:
      return "skipped";
  }
  return "?";
}

bool is_wait_step(ZoneStep s) { return s == ZoneStep::waiting_held; }

Lab::Lab(const LabConfig& config) : config_(config), random_(config.random_seed != 0) {
  // Frames in flight for every frame a run closes: a zone that stays open
  // while its thread is parked holds its frame and every later one, but
  // never leaves a frame without queries (drops come only from full frames).
  const GpuProfilerDesc desc{
      .name = "protocol", .max_zones_per_frame = config.zones_per_frame, .frames_in_flight = 8};
  writer_ =
      SimTimestampSlots::create({.count = GpuProfiler::slots_needed(desc), .immediate = true});
  prof_ = GpuProfiler::create(writer_, desc).value();
  prof_->set_frame_sink([this](const ProfilerFrame& f) { sink(f); });
  const int n = config.threads;
  for (int i = 0; i < n; ++i) {
    workers_.push_back(std::make_unique<Worker>());
    Worker& w = *workers_.back();
    w.rng.seed(config.random_seed * 1000 + static_cast<uint64_t>(i));
    w.zones = random_ ? 1 + static_cast<int>(w.rng() % 40) : kRunZones;
    w.closes = random_ ? w.rng() % 3 == 0 : i == config.closer;
    for (int k = 0; k < kWarmZones + 2 * w.zones; ++k) {
      w.names.push_back("t" + std::to_string(i) + "z" + std::to_string(k));
    }
    w.recorded.assign(w.names.size(), -1);
  }
  // Names are final: their pointers are the zones' identity from here on.
  for (auto& w : workers_) {
    for (int k = 0; k < w->zones; ++k) {
      const size_t idx = kWarmZones + 2 * static_cast<size_t>(k);
      if (has_child(k)) parent_of_[w->names[idx + 1].c_str()] = w->names[idx].c_str();
    }
  }
  g_lab = this;
  detail::zone_step_hook = &Lab::hook;
  for (int i = 0; i < n; ++i) workers_[i]->thread = std::thread([this, i] { work(i); });
  if (config.warm) {
    // One thread after the other: each binds its lane and leaves a block
    // with room in frame 0, then waits at the gate.
    for (int i = 0; i < n; ++i) {
      std::unique_lock lock(mu_);
      workers_[i]->warm_turn = true;
      cv_.notify_all();
      cv_.wait(lock, [&] { return workers_[i]->warm_done; });
    }
  }
}

Lab::~Lab() {
  finish();
  detail::zone_step_hook = nullptr;
  g_lab = nullptr;
}

bool Lab::run(const Script& script, std::string& why) {
  for (const Action& a : script.actions) {
    switch (a.kind) {
      case Action::arm: {
        std::lock_guard lock(mu_);
        workers_[a.thread]->armed.store(static_cast<int>(a.step));
        break;
      }
      case Action::release: {
        {
          std::lock_guard lock(mu_);
          for (int i = 0; i < config_.threads; ++i) {
            Worker& w = *workers_[i];
            if ((a.thread < 0 || a.thread == i) && !w.released) {
              w.released = true;
              w.state.store(kRunning);
            }
          }
        }
        cv_.notify_all();
        if (!settle(why)) return false;
        break;
      }
      case Action::unpark:
        unpark_thread(a.thread);
        if (!settle(why)) return false;
        break;
    }
  }
  return true;
}

void Lab::finish() {
  if (finished_) return;
  finished_ = true;
  {
    std::lock_guard lock(mu_);
    for (auto& w : workers_) {
      w->armed.store(-1);
      w->released = true;
      w->warm_turn = true;
      if (w->state.load() == kParked) w->unpark = true;
    }
  }
  cv_.notify_all();
  for (auto& w : workers_) w->thread.join();
  detail::zone_step_hook = nullptr;
  prof_->finish();  // every frame closed and collected
}

std::string Lab::check(bool no_drops) {
  finish();
  std::vector<const char*> expected;
  uint64_t dropped = 0;
  for (auto& w : workers_) {
    for (size_t k = 0; k < w->names.size(); ++k) {
      if (w->recorded[k] == 1) expected.push_back(w->names[k].c_str());
      if (w->recorded[k] == 0) ++dropped;
    }
  }
  std::string out;
  auto add = [&out](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
  std::vector<const char*> seen = seen_;
  std::sort(seen.begin(), seen.end());
  std::sort(expected.begin(), expected.end());
  const auto dup = std::adjacent_find(seen.begin(), seen.end());
  if (dup != seen.end()) add(std::string("zone ") + *dup + " collected twice");
  std::vector<const char*> lost;
  std::set_difference(expected.begin(), expected.end(), seen.begin(), seen.end(),
                      std::back_inserter(lost));
  if (!lost.empty()) add(std::to_string(lost.size()) + " zones lost, e.g. " + lost.front());
  if (seen.size() != expected.size()) {
    add(std::to_string(seen.size()) + " zones collected, " + std::to_string(expected.size()) +
        " recorded");
  }
  if (not_ok_ != 0) add(std::to_string(not_ok_) + " zones without a time");
  if (bad_parents_ != 0) add(std::to_string(bad_parents_) + " zones with a wrong parent");
  const ProfilerCounters c = prof_->counters();
  if (no_drops && dropped != 0) add(std::to_string(dropped) + " zones dropped");
  if (c.zones_dropped != dropped) {
    add(std::to_string(dropped) + " zones dropped, " + std::to_string(c.zones_dropped) +
        " counted");
  }
  if (c.zones_ok != expected.size()) add("zones_ok " + std::to_string(c.zones_ok));
  if (writer_->double_writes() != 0) {
    add(std::to_string(writer_->double_writes()) + " queries written twice");
  }
  if (writer_->immediate_writes() != 2 * expected.size()) {
    add(std::to_string(writer_->immediate_writes()) + " timestamp writes for " +
        std::to_string(expected.size()) + " zones");
  }
  if (c.frames_collected + c.frames_without_queries + 1 != c.frames_opened) {
    add("frames: " + std::to_string(c.frames_opened) + " opened, " +
        std::to_string(c.frames_collected) + " collected");
  }
  return out;
}

void Lab::hook(ZoneStep s) {
  Lab* lab = g_lab;
  if (lab != nullptr && t_worker >= 0) lab->step(t_worker, s);
}

void Lab::step(int i, ZoneStep s) {
  Worker& w = *workers_[i];
  w.turns.fetch_add(1, std::memory_order_relaxed);
  if (w.armed.load() == static_cast<int>(s)) {
    std::unique_lock lock(mu_);
    if (w.armed.load() == static_cast<int>(s)) {
      w.armed.store(-1);
      parked_at_.insert({i, s});
      w.state.store(kParked);
      cv_.notify_all();
      cv_.wait(lock, [&] { return w.unpark; });
      w.unpark = false;
    }
  }
  w.state.store(is_wait_step(s) ? kWaiting : kRunning);
  if (is_wait_step(s)) {
    std::this_thread::sleep_for(20us);  // a waiter spins slowly: the CPUs are few
  } else if (random_) {
    const uint64_t r = w.rng() % 64;
    if (r < 8) std::this_thread::yield();
    if (r == 0) std::this_thread::sleep_for(std::chrono::microseconds(20 + w.rng() % 200));
  }
}

// The zone names[idx], and with `child` the zone names[idx + 1] inside it.
void Lab::record(int i, size_t idx) {
  Worker& w = *workers_[i];
  GpuZone z(prof_.get(), &w.stream_tag, w.names[idx].c_str());
  w.recorded[idx] = z.recorded() ? 1 : 0;
  if (parent_of_.count(w.names[idx + 1].c_str()) != 0) {
    GpuZone child(prof_.get(), &w.stream_tag, w.names[idx + 1].c_str());
    w.recorded[idx + 1] = child.recorded() ? 1 : 0;
  }
}

void Lab::work(int i) {
  t_worker = i;
  Worker& w = *workers_[i];
  if (config_.warm) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return w.warm_turn; });
    }
    for (size_t k = 0; k < kWarmZones; ++k) {
      GpuZone z(prof_.get(), &w.stream_tag, w.names[k].c_str());
      w.recorded[k] = z.recorded() ? 1 : 0;
    }
    std::lock_guard lock(mu_);
    w.state.store(kGate);
    w.warm_done = true;
    cv_.notify_all();
  }
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return w.released; });
  }
  for (int k = 0; k < w.zones; ++k) {
    const bool close = random_ ? w.rng() % 4 == 0 : k % 3 == 0;
    if (w.closes && close) prof_->next_frame();
    record(i, kWarmZones + 2 * static_cast<size_t>(k));
    if (random_ && w.rng() % 8 == 0) std::this_thread::yield();
  }
  w.state.store(kDone);
  t_worker = -1;
}

void Lab::unpark_thread(int i) {
  {
    std::lock_guard lock(mu_);
    Worker& w = *workers_[i];
    if (w.state.load() != kParked) return;  // never reached its armed step
    w.unpark = true;
    w.state.store(kRunning);
  }
  cv_.notify_all();
}

// Waits until every released thread is parked, done, or waiting in the
// protocol (and still turning in its wait loop), three polls in a row. A
// poll in which a waiter has not turned yet (starved: 8 threads on 2 busy
// CPUs) neither counts nor starts the count again; only a running thread
// does. A thread stuck outside the wait loop never turns: the deadline.
bool Lab::settle(std::string& why) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  const int n = config_.threads;
  std::vector<uint64_t> last(n, 0);
  int stable = 0;
  while (stable < 3) {
    if (std::chrono::steady_clock::now() > deadline) {
      why = "threads neither finished nor waited within 60 s; states:";
      for (auto& w : workers_) why += " " + std::to_string(w->state.load());
      return false;
    }
    std::this_thread::sleep_for(300us);
    bool running = false;
    bool every_waiter_turned = true;
    std::vector<uint64_t> now(n, 0);
    for (int i = 0; i < n; ++i) {
      Worker& w = *workers_[i];
      const int st = w.state.load();
      now[i] = w.turns.load(std::memory_order_relaxed);
      if (st == kRunning) running = true;
      if (st == kWaiting && now[i] == last[i]) every_waiter_turned = false;
    }
    if (running) {
      stable = 0;
      last = now;
    } else if (every_waiter_turned) {
      ++stable;
      last = now;
    }
  }
  return true;
}

// Every zone's time, and its parent: a child zone inside its parent (or an
// orphan, its parent in another frame), every other zone a root.
void Lab::sink(const ProfilerFrame& f) {
  for (const ProfilerZone& z : f.zones) {
    seen_.push_back(z.name);
    if (!z.ok()) ++not_ok_;
    const auto it = parent_of_.find(z.name);
    const bool good = it == parent_of_.end() ? z.parent == kNoZone && !z.orphan
                                             : z.orphan || (z.parent != kNoZone &&
                                                            f.zones[z.parent].name == it->second);
    if (!good) ++bad_parents_;
  }
}

}  // namespace latlab::zone_lab
