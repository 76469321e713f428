// Several devices' latency runs taking turns block by block
// (latency_devices.hpp).
#include <cstdint>
#include <limits>
#include <thread>
#include <utility>

#include "latlab/bench/latency_devices.hpp"

namespace latlab {

namespace {
constexpr uint64_t kFinished = std::numeric_limits<uint64_t>::max();
}  // namespace

BlockTurns::BlockTurns(size_t lanes) : next_(lanes, 0) {}

bool BlockTurns::may_start(size_t lane, uint64_t order) const {
  for (size_t e = 0; e < next_.size(); ++e) {
    if (e == lane) continue;
    // Lower lanes run block `order` first; higher lanes only need to be there.
    if (e < lane ? next_[e] <= order : next_[e] < order) return false;
  }
  return true;
}

void BlockTurns::begin(size_t lane, uint32_t order) {
  std::unique_lock lock(mutex_);
  next_[lane] = order;
  changed_.notify_all();
  changed_.wait(lock, [&] { return may_start(lane, order); });
}

void BlockTurns::end(size_t lane, uint32_t order) {
  {
    std::lock_guard lock(mutex_);
    next_[lane] = uint64_t{order} + 1;
  }
  changed_.notify_all();
}

void BlockTurns::finish(size_t lane) {
  {
    std::lock_guard lock(mutex_);
    next_[lane] = kFinished;
  }
  changed_.notify_all();
}

std::vector<Result<LatencyRun>> run_latency_interleaved(std::vector<DeviceLane> lanes) {
  std::vector<Result<LatencyRun>> results(lanes.size(), make_error("not run"));
  BlockTurns turns(lanes.size());
  std::vector<std::thread> threads;
  threads.reserve(lanes.size());
  for (size_t i = 0; i < lanes.size(); ++i) {
    lanes[i].env.before_block = [&turns, i](uint32_t order) { turns.begin(i, order); };
    lanes[i].env.after_block = [&turns, i](uint32_t order) { turns.end(i, order); };
    threads.emplace_back([&, i] {
      results[i] = run_latency(lanes[i].desc, lanes[i].env);
      turns.finish(i);  // a run that stopped early gives up its later turns
    });
  }
  for (std::thread& t : threads) t.join();
  return results;
}

}  // namespace latlab
