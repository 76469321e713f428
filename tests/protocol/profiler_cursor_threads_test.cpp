// The profiler's zone cursor protocol (GpuProfiler::take_pair,
// claim_or_share_cursor, next_frame), proved the way STYLE.md rule 20 asks:
// every thread is parked at every step of the protocol, with 2, 3 and 8
// threads, while the others run until they finish or wait; then a randomized
// stress run. The profiler here is a build of its own with the step hooks
// compiled in (LATLAB_PROFILER_PROTOCOL_HOOKS, tests/CMakeLists.txt).
//
// Thread 0 is the owner: it records and closes frames alone first, so it
// takes its pairs with a plain load and store. Then threads 1.. (joiners)
// record zones too, and one thread (`closer`: none, the owner, or the last
// joiner) also closes frames between its zones. Every zone has a name of its
// own; afterwards every
// recorded zone must be collected exactly once, with a time, and no query
// written twice: a pair given to two zones, or a zone lost, fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "latlab/bench/sim_timestamp_slots.hpp"
#include "latlab/profiler.hpp"
#include "profiler/heavy_fence.hpp"

static_assert(LATLAB_PROFILER_PROTOCOL_HOOKS,
              "this test needs the profiler built with its step hooks");

namespace latlab {
namespace {

using detail::CursorStep;
using detail::kCursorSteps;
using namespace std::chrono_literals;

const char* step_name(CursorStep s) {
  switch (s) {
    case CursorStep::owner_seen:
      return "owner_seen";
    case CursorStep::announced:
      return "announced";
    case CursorStep::confirmed:
      return "confirmed";
    case CursorStep::cursor_loaded:
      return "cursor_loaded";
    case CursorStep::cursor_stored:
      return "cursor_stored";
    case CursorStep::owner_lost:
      return "owner_lost";
    case CursorStep::claim:
      return "claim";
    case CursorStep::sharing:
      return "sharing";
    case CursorStep::fenced:
      return "fenced";
    case CursorStep::waiting_owner:
      return "waiting_owner";
    case CursorStep::owner_out:
      return "owner_out";
    case CursorStep::waiting_shared:
      return "waiting_shared";
    case CursorStep::before_fetch_add:
      return "before_fetch_add";
    case CursorStep::before_exchange:
      return "before_exchange";
  }
  return "?";
}

bool is_wait_step(CursorStep s) {
  return s == CursorStep::waiting_owner || s == CursorStep::waiting_shared;
}

constexpr CursorStep kOwnerSteps[] = {CursorStep::owner_seen, CursorStep::announced,
                                      CursorStep::confirmed, CursorStep::cursor_loaded,
                                      CursorStep::cursor_stored};
constexpr CursorStep kSharerSteps[] = {CursorStep::claim, CursorStep::sharing, CursorStep::fenced,
                                       CursorStep::waiting_owner, CursorStep::owner_out};

constexpr int kZonesPerThread = 4;
constexpr int kOwnerAloneZones = 6;  // before the others start: 3 per frame, two frames

// One step of a script. After release and unpark the test waits until every
// released thread is parked, waiting in the protocol, or done.
struct Action {
  enum Kind { arm, release, unpark } kind;
  int thread;  // release: -1 = every thread not released yet
  CursorStep step = CursorStep::claim;
};

struct Script {
  std::string what;
  std::vector<Action> actions;
};

class Lab;
Lab* g_lab = nullptr;            // the hook's target; set before the workers start
thread_local int t_worker = -1;  // this thread's index in the lab; -1: not a worker

enum WorkerState : int { kGate, kRunning, kParked, kWaiting, kDone };

// One trial: a profiler, N worker threads, and the parking lot the hook uses.
class Lab {
 public:
  // `closer`: the thread that closes frames between its zones; -1: none.
  Lab(int threads, int closer, bool owner_alone_first, uint64_t random_seed = 0)
      : n_(threads), closer_(closer), random_(random_seed != 0), rng_seed_(random_seed) {
    // Frames in flight for every frame a trial closes (two by the owner
    // alone, four by the closer): a zone that stays open while a thread is
    // preempted holds its frame and every later one, but never leaves a
    // frame without queries.
    const GpuProfilerDesc desc{
        .name = "protocol", .max_zones_per_frame = 512, .frames_in_flight = 8};
    writer_ =
        SimTimestampSlots::create({.count = GpuProfiler::slots_needed(desc), .immediate = true});
    prof_ = GpuProfiler::create(writer_, desc).value();
    prof_->set_frame_sink([this](const ProfilerFrame& f) {
      for (const ProfilerZone& z : f.zones) {
        seen_.push_back(z.name);
        if (!z.ok()) ++not_ok_;
      }
    });
    for (int i = 0; i < n_; ++i) {
      workers_.push_back(std::make_unique<Worker>());
      Worker& w = *workers_.back();
      w.rng.seed(rng_seed_ * 1000 + static_cast<uint64_t>(i));
      const int zones = random_ ? 1 + static_cast<int>(w.rng() % 40) : kZonesPerThread;
      for (int k = 0; k < zones + kOwnerAloneZones; ++k) {
        w.names.push_back("t" + std::to_string(i) + "z" + std::to_string(k));
      }
      w.zones = zones;
      w.recorded.assign(w.names.size(), -1);
    }
    g_lab = this;
    detail::cursor_step_hook = &Lab::hook;
    for (int i = 0; i < n_; ++i) {
      workers_[i]->thread =
          std::thread([this, i, owner_alone_first] { work(i, owner_alone_first); });
    }
    if (owner_alone_first) {
      // The owner records and closes frames alone first, then waits at the gate.
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return workers_[0]->alone_done; });
    }
  }
  ~Lab() {
    finish();
    detail::cursor_step_hook = nullptr;
    g_lab = nullptr;
  }
  Lab(const Lab&) = delete;
  Lab& operator=(const Lab&) = delete;

  uint32_t owner_hits(CursorStep s) const {
    return workers_[0]->hits[static_cast<int>(s)].load(std::memory_order_relaxed);
  }

  // Runs `script`; false (with `why`) when the threads neither finished nor
  // waited in time: a deadlock of the protocol, or a thread stuck elsewhere.
  bool run(const Script& script, std::string& why) {
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
            for (int i = 0; i < n_; ++i) {
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
          unpark(a.thread);
          if (!settle(why)) return false;
          break;
      }
    }
    return true;
  }

  // Releases and unparks everyone and joins; then drains the profiler.
  void finish() {
    if (finished_) return;
    finished_ = true;
    {
      std::lock_guard lock(mu_);
      for (auto& w : workers_) {
        w->armed.store(-1);
        w->released = true;
        if (w->state.load() == kParked) w->unpark = true;
      }
    }
    cv_.notify_all();
    for (auto& w : workers_) w->thread.join();
    detail::cursor_step_hook = nullptr;
    for (int i = 0; i < 6; ++i) prof_->next_frame();  // every frame closed and collected
  }

  // (thread, step) pairs where a thread was parked.
  const std::set<std::pair<int, CursorStep>>& parked_at() const { return parked_at_; }

  // Every recorded zone collected once with a time, every dropped one
  // counted (none dropped at all with `no_drops`), no query written twice.
  // Empty when all holds.
  std::string check(bool no_drops) {
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

 private:
  struct Worker {
    std::thread thread;
    std::vector<std::string> names;
    std::vector<int> recorded;  // per name: 1 recorded, 0 dropped, -1 not attempted
    int zones = 0;
    int stream_tag = 0;
    std::atomic<int> state{kGate};
    std::atomic<uint64_t> turns{0};
    std::array<std::atomic<uint32_t>, kCursorSteps> hits{};
    std::mt19937_64 rng;
    // Written under mu_; read without it first, so that the random runs take
    // no lock in the hook (a lock would order the threads for TSan).
    std::atomic<int> armed{-1};
    // Under mu_:
    bool released = false;
    bool unpark = false;
    bool alone_done = false;
  };

  static void hook(CursorStep s) {
    Lab* lab = g_lab;
    if (lab != nullptr && t_worker >= 0) lab->step(t_worker, s);
  }

  void step(int i, CursorStep s) {
    Worker& w = *workers_[i];
    w.hits[static_cast<int>(s)].fetch_add(1, std::memory_order_relaxed);
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

  void record(int i, size_t k) {
    Worker& w = *workers_[i];
    GpuZone z(prof_.get(), &w.stream_tag, w.names[k].c_str());
    w.recorded[k] = z.recorded() ? 1 : 0;
  }

  void work(int i, bool owner_alone_first) {
    t_worker = i;
    Worker& w = *workers_[i];
    const auto alone = static_cast<size_t>(w.zones);  // the alone zones' names follow
    if (i == 0 && owner_alone_first) {
      for (size_t k = 0; k < kOwnerAloneZones; ++k) {
        record(i, alone + k);
        if (k % 3 == 2) prof_->next_frame();
      }
      std::lock_guard lock(mu_);
      w.state.store(kGate);
      w.alone_done = true;
      cv_.notify_all();
    }
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return w.released; });
    }
    const bool closes = random_ ? (w.rng() % 3 == 0) : (i == closer_);
    for (size_t k = 0; k < alone; ++k) {
      if (closes && (!random_ || w.rng() % 4 == 0)) prof_->next_frame();
      record(i, k);
      if (random_ && w.rng() % 8 == 0) std::this_thread::yield();
    }
    w.state.store(kDone);
    t_worker = -1;
  }

  void unpark(int i) {
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
  bool settle(std::string& why) {
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    std::vector<uint64_t> last(n_, 0);
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
      std::vector<uint64_t> now(n_, 0);
      for (int i = 0; i < n_; ++i) {
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

  int n_;
  int closer_;
  bool random_;
  uint64_t rng_seed_;
  std::shared_ptr<SimTimestampSlots> writer_;
  std::unique_ptr<GpuProfiler> prof_;
  std::vector<const char*> seen_;  // by the sink, under the profiler's mutex
  uint64_t not_ok_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::set<std::pair<int, CursorStep>> parked_at_;  // under mu_
  bool finished_ = false;
};

Action arm(int t, CursorStep s) { return {Action::arm, t, s}; }
Action release(int t) { return {Action::release, t}; }
Action unpark(int t) { return {Action::unpark, t}; }

// Scripts that between them park every thread at every step it can reach.
std::vector<Script> scripts(int n, int closer) {
  std::vector<Script> out;
  // The owner at each step of its plain path, joiner 1 at each step of
  // sharing (or not parked), woken in both orders.
  for (const CursorStep os : kOwnerSteps) {
    for (int ss = -1; ss < static_cast<int>(std::size(kSharerSteps)); ++ss) {
      for (const bool owner_first : {true, false}) {
        Script s;
        s.what = std::string("owner at ") + step_name(os);
        s.actions = {arm(0, os), release(0)};
        if (ss >= 0) {
          s.what += std::string(", joiner 1 at ") + step_name(kSharerSteps[ss]);
          s.actions.push_back(arm(1, kSharerSteps[ss]));
          s.actions.push_back(release(1));
        }
        s.what += owner_first ? ", owner woken first" : ", joiner woken first";
        s.actions.push_back(release(-1));
        if (owner_first) {
          s.actions.push_back(unpark(0));
          s.actions.push_back(unpark(1));
        } else {
          s.actions.push_back(unpark(1));
          s.actions.push_back(unpark(0));
        }
        out.push_back(std::move(s));
        if (ss < 0 && !owner_first) out.pop_back();  // one joiner not parked: the order is moot
      }
    }
  }
  // Every other joiner shares the cursor at each step, the owner parked
  // between its load and store of the cursor.
  for (int j = 2; j < n; ++j) {
    for (const CursorStep ss : kSharerSteps) {
      out.push_back({"owner at cursor_loaded, joiner " + std::to_string(j) + " at " + step_name(ss),
                     {arm(0, CursorStep::cursor_loaded), release(0), arm(j, ss), release(j),
                      release(-1), unpark(0), unpark(j)}});
    }
  }
  // The owner loses the cursor between its announcement and its second look.
  out.push_back({"owner at announced, joiner 1 at fenced, owner at owner_lost",
                 {arm(0, CursorStep::announced), release(0), arm(1, CursorStep::fenced), release(1),
                  arm(0, CursorStep::owner_lost), unpark(0), release(-1), unpark(1), unpark(0)}});
  // Each thread waits for another's sharing.
  for (int t = 0; t < n; ++t) {
    const int sharer = t == 1 ? 2 : 1;
    if (sharer >= n) continue;
    out.push_back(
        {"joiner " + std::to_string(sharer) + " at sharing, thread " + std::to_string(t) +
             " at waiting_shared",
         {arm(sharer, CursorStep::sharing), release(sharer), arm(t, CursorStep::waiting_shared),
          release(t), release(-1), unpark(sharer), unpark(t)}});
  }
  // Each thread just before its fetch_add, the others going on.
  out.push_back(
      {"thread 0 at before_fetch_add",
       {arm(0, CursorStep::before_fetch_add), release(1), release(0), release(-1), unpark(0)}});
  for (int t = 1; t < n; ++t) {
    out.push_back({"thread " + std::to_string(t) + " at before_fetch_add",
                   {arm(t, CursorStep::before_fetch_add), release(t), release(-1), unpark(t)}});
  }
  // The closer about to move the cursor to a new frame.
  if (closer > 0) {
    out.push_back(
        {"owner at cursor_loaded, closer at before_exchange",
         {arm(0, CursorStep::cursor_loaded), release(0), arm(closer, CursorStep::before_exchange),
          release(closer), release(-1), unpark(0), unpark(closer)}});
    if (n >= 3) {
      out.push_back(
          {"joiner 1 at sharing, closer at before_exchange",
           {arm(1, CursorStep::sharing), release(1), arm(closer, CursorStep::before_exchange),
            release(closer), release(-1), unpark(1), unpark(closer)}});
    }
  }
  if (closer == 0) {
    out.push_back({"owner at before_exchange, the others sharing",
                   {arm(0, CursorStep::before_exchange), release(0), release(-1), unpark(0)}});
    out.push_back({"joiner 1 at sharing, owner at before_exchange",
                   {arm(1, CursorStep::sharing), release(1), arm(0, CursorStep::before_exchange),
                    release(0), release(-1), unpark(1), unpark(0)}});
  }
  return out;
}

// What the scripts must between them have parked: each thread at each step
// its role reaches.
std::set<std::pair<int, CursorStep>> expected_parks(int n, int closer) {
  std::set<std::pair<int, CursorStep>> out;
  for (const CursorStep s : kOwnerSteps) out.insert({0, s});
  out.insert({0, CursorStep::owner_lost});
  out.insert({0, CursorStep::waiting_shared});
  out.insert({0, CursorStep::before_fetch_add});
  for (int j = 1; j < n; ++j) {
    for (const CursorStep s : kSharerSteps) out.insert({j, s});
    out.insert({j, CursorStep::before_fetch_add});
    if (n >= 3) out.insert({j, CursorStep::waiting_shared});
  }
  if (closer >= 0) out.insert({closer, CursorStep::before_exchange});
  return out;
}

void park_each_thread_at_each_step(int n, int closer) {
  if (!profiler_detail::heavy_fence_available()) {
    GTEST_SKIP() << "membarrier(2) is not available here: the cursor is shared from the start, "
                    "there is no owner's plain path to test";
  }
  std::set<std::pair<int, CursorStep>> parked;
  int failures = 0;
  for (const Script& s : scripts(n, closer)) {
    Lab lab(n, closer, true);
    ASSERT_GT(lab.owner_hits(CursorStep::confirmed), 0u)
        << "the owner recording alone did not take the plain path";
    std::string why;
    const bool ran = lab.run(s, why);
    ASSERT_TRUE(ran) << s.what << ": " << why;  // a deadlock: the lab cannot be joined
    const std::string problems = lab.check(true);
    if (!problems.empty() && ++failures <= 10) ADD_FAILURE() << s.what << ": " << problems;
    parked.insert(lab.parked_at().begin(), lab.parked_at().end());
  }
  EXPECT_EQ(failures, 0) << "scripts that lost or duplicated zones";
  for (const auto& [thread, step] : expected_parks(n, closer)) {
    EXPECT_TRUE(parked.count({thread, step}))
        << "thread " << thread << " was never parked at " << step_name(step);
  }
}

TEST(ProfilerCursorProtocol, TwoThreadsEachParkedAtEachStep) {
  park_each_thread_at_each_step(2, -1);
}
TEST(ProfilerCursorProtocol, ThreeThreadsEachParkedAtEachStep) {
  park_each_thread_at_each_step(3, -1);
}
TEST(ProfilerCursorProtocol, EightThreadsEachParkedAtEachStep) {
  park_each_thread_at_each_step(8, -1);
}
// next_frame from a thread that does not own the cursor.
TEST(ProfilerCursorProtocol, TwoThreadsOneClosingFramesEachParkedAtEachStep) {
  park_each_thread_at_each_step(2, 1);
}
TEST(ProfilerCursorProtocol, ThreeThreadsOneClosingFramesEachParkedAtEachStep) {
  park_each_thread_at_each_step(3, 2);
}
TEST(ProfilerCursorProtocol, EightThreadsOneClosingFramesEachParkedAtEachStep) {
  park_each_thread_at_each_step(8, 7);
}
// next_frame from the owner while the others share its cursor.
TEST(ProfilerCursorProtocol, TwoThreadsOwnerClosingFramesEachParkedAtEachStep) {
  park_each_thread_at_each_step(2, 0);
}
TEST(ProfilerCursorProtocol, ThreeThreadsOwnerClosingFramesEachParkedAtEachStep) {
  park_each_thread_at_each_step(3, 0);
}
TEST(ProfilerCursorProtocol, EightThreadsOwnerClosingFramesEachParkedAtEachStep) {
  park_each_thread_at_each_step(8, 0);
}

// Randomized: 2, 3 and 8 threads start at once (after the owner recorded
// alone, or not), record 1..40 zones each, a third of them also close frames
// at random, and every step of the protocol yields or sleeps at random. Run
// under TSan (label threads): two zones on one record are a reported race.
TEST(ProfilerCursorProtocol, RandomizedStress) {
  constexpr int kRounds = 40;
  for (const int n : {2, 3, 8}) {
    int failures = 0;
    for (int round = 0; round < kRounds; ++round) {
      const uint64_t seed = 1 + static_cast<uint64_t>(n) * 10'000 + static_cast<uint64_t>(round);
      Lab lab(n, -1, round % 2 == 0, seed);
      std::string why;
      ASSERT_TRUE(lab.run({"all at once", {release(-1)}}, why)) << why;
      // Frames closed at random under open zones may leave none free: drops
      // are allowed there, if counted.
      const std::string problems = lab.check(false);
      if (!problems.empty() && ++failures <= 5) {
        ADD_FAILURE() << n << " threads, seed " << seed << ": " << problems;
      }
    }
    EXPECT_EQ(failures, 0) << n << " threads";
  }
}

}  // namespace
}  // namespace latlab
