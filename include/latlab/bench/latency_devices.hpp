// Several devices in one latency run: each device runs its own run_latency
// (its own warm-up, blocks, clock model and result), and the runs take turns
// block by block on the one host clock: block 0 (in plan order) of device 0,
// then of device 1, ..., then block 1 of device 0, ... Only one block runs at
// a time, so the devices never load each other; blocks of the same index use
// the same deadlines (the same seeded schedule, from each block's start).
//
// A device that fails ends only its own run (partial, with the reason); the
// others go on and their turns close up.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "latlab/bench/latency_run.hpp"
#include "latlab/result.hpp"

namespace latlab {

// One device of an interleaved run: its settings and environment, as for
// run_latency. env.before_block and env.after_block are set by the run.
struct DeviceLane {
  LatencyRunDesc desc;
  LatencyRunEnv env;
};

// Runs every lane on its own thread, taking turns block by block; returns
// one run_latency result per lane, in lane order. Blocks until all are done.
std::vector<Result<LatencyRun>> run_latency_interleaved(std::vector<DeviceLane> lanes);

// The turn-taking of run_latency_interleaved, apart for tests: lane `lane`
// may run its block `order` once every other lane that is not finished has
// run its blocks before `order`, and lanes with a lower index their block
// `order` too. Thread-safe.
class BlockTurns {
 public:
  explicit BlockTurns(size_t lanes);
  // Blocks until (order, lane) is the earliest pending turn.
  void begin(size_t lane, uint32_t order);
  // The lane has run its block `order`.
  void end(size_t lane, uint32_t order);
  // The lane runs no more blocks (done or failed).
  void finish(size_t lane);

 private:
  bool may_start(size_t lane, uint64_t order) const;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<uint64_t> next_;  // per lane: the next block order it runs; UINT64_MAX: finished
};

}  // namespace latlab
