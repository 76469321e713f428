// A lab for the profiler's lane protocol (ZoneRecorder::take_pair): N
// threads record zones into one profiler, one of them (`closer`) also closes
// frames between its zones, so collection runs beside the recording; a hook
// at every LATLAB_ZONE_STEP parks a thread at the step a script armed, and
// the script releases and wakes threads in the order it gives. Afterwards
// check() says whether every recorded zone was collected exactly once, with
// a time and its parent, and no query was written twice. Needs the profiler
// built with its step hooks (LATLAB_PROFILER_PROTOCOL_HOOKS, tests/CMakeLists.txt).
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
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

namespace latlab::zone_lab {

using detail::ZoneStep;

const char* step_name(ZoneStep s);
// Steps a thread turns in while it waits for another (never parked for good there).
bool is_wait_step(ZoneStep s);

// One step of a script. After release and unpark the lab waits until every
// released thread is parked, waiting in the protocol, or done.
struct Action {
  enum Kind { arm, release, unpark } kind;
  int thread;  // release: -1 = every thread not released yet
  ZoneStep step = ZoneStep::announced;
};
inline Action arm(int t, ZoneStep s) { return {Action::arm, t, s}; }
inline Action release(int t) { return {Action::release, t}; }
inline Action unpark(int t) { return {Action::unpark, t}; }

struct Script {
  std::string what;
  std::vector<Action> actions;
};

struct LabConfig {
  int threads = 2;
  int closer = 0;  // closes a frame before every third zone of its own; -1: none
  // Each thread records two zones first, one thread after the other, before
  // any script runs: every lane is bound and holds a block with room.
  bool warm = true;
  uint32_t zones_per_frame = 512;
  uint64_t random_seed = 0;  // nonzero: random zone counts, closers and yields
};

class Lab {
 public:
  explicit Lab(const LabConfig& config);
  ~Lab();
  Lab(const Lab&) = delete;
  Lab& operator=(const Lab&) = delete;

  // Runs `script`; false (with `why`) when the threads neither finished nor
  // waited in time: a deadlock of the protocol, or a thread stuck elsewhere.
  bool run(const Script& script, std::string& why);
  // Releases and wakes everyone, joins, and drains the profiler.
  void finish();
  // Every recorded zone collected once with a time and its parent, every
  // dropped one counted (none dropped at all with `no_drops`), no query
  // written twice. Empty when all holds.
  std::string check(bool no_drops);
  // (thread, step) pairs where a thread was parked.
  const std::set<std::pair<int, ZoneStep>>& parked_at() const { return parked_at_; }

 private:
  enum WorkerState : int { kGate, kRunning, kParked, kWaiting, kDone };
  struct Worker {
    std::thread thread;
    std::vector<std::string> names;  // warm zones, then the zones of the run (children after)
    std::vector<int> recorded;       // per name: 1 recorded, 0 dropped, -1 not attempted
    int zones = 0;
    int stream_tag = 0;
    bool closes = false;
    std::atomic<int> state{kGate};
    std::atomic<uint64_t> turns{0};
    std::mt19937_64 rng;
    // Written under mu_, read without it first, so that the random runs take
    // no lock in the hook (a lock would order the threads for TSan).
    std::atomic<int> armed{-1};
    // Under mu_:
    bool released = false;
    bool unpark = false;
    bool warm_turn = false;
    bool warm_done = false;
  };

  static void hook(ZoneStep s);
  void step(int i, ZoneStep s);
  void record(int i, size_t k);
  void work(int i);
  void unpark_thread(int i);
  bool settle(std::string& why);
  void sink(const ProfilerFrame& f);

  LabConfig config_;
  bool random_;
  std::shared_ptr<SimTimestampSlots> writer_;
  std::unique_ptr<GpuProfiler> prof_;
  std::map<const char*, const char*> parent_of_;  // a child zone's name -> its parent's
  // By the sink, under the profiler's mutex:
  std::vector<const char*> seen_;
  uint64_t not_ok_ = 0;
  uint64_t bad_parents_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::set<std::pair<int, ZoneStep>> parked_at_;  // under mu_
  bool finished_ = false;
};

}  // namespace latlab::zone_lab
