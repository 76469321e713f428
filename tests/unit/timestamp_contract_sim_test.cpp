// The timestamp contract suite on the sim backend, and proof that the suite
// catches a broken backend: the same cases run against faulty sim slots
// (begin/end swapped, a reset that keeps the old value) and must fail.
#include <deque>

#include "conformance/timestamp_contract.hpp"
#include "latlab/bench/sim_timestamp_slots.hpp"

namespace latlab::test {
namespace {

enum class SimFault : uint8_t { none, swapped_edges, stale_after_reset };

// SimTimestampSlots behind a recorder: write() appends to a SimRigStream
// with the slot's use (its reset count), so a write of an earlier use lands
// as complete_late, as a backend that tags its writes reports it.
class SimRigSlots final : public TimestampSlots {
 public:
  struct Op {
    enum Kind : uint8_t { write, work, hold } kind = write;
    uint32_t slot = 0;
    uint64_t use = 0;
    uint64_t ticks = 0;  // work: its length
  };
  struct Stream {
    std::vector<Op> ops;
  };

  SimRigSlots(uint32_t count, SimFault fault)
      : sim_(SimTimestampSlots::create({.count = count})), use_(count, 0), fault_(fault) {}

  uint32_t slot_count() const override { return sim_->slot_count(); }
  TickFormat tick_format() const override { return sim_->tick_format(); }
  void write(GpuCommandStream stream, uint32_t slot, TimestampEdge /*edge*/) override {
    if (stream == nullptr || slot >= use_.size()) return;
    static_cast<Stream*>(stream)->ops.push_back({Op::write, slot, use_[slot], 0});
  }
  void read(uint32_t first, std::span<SlotReading> out) override {
    sim_->read(first, out);
    if (fault_ != SimFault::swapped_edges) return;
    for (size_t i = (first % 2 == 0 ? 0 : 1); i + 1 < out.size(); i += 2)
      std::swap(out[i], out[i + 1]);
  }
  void reset(uint32_t first, uint32_t count, bool previous_use_done) override {
    for (uint32_t s = first; s < first + count && s < use_.size(); ++s) ++use_[s];
    if (fault_ != SimFault::stale_after_reset) sim_->reset(first, count, previous_use_done);
  }

  // Runs `ops` from `next` on; stops at a hold while `held`. Returns where it stopped.
  size_t execute(const std::vector<Op>& ops, size_t next, const bool& held) {
    for (; next < ops.size(); ++next) {
      const Op& op = ops[next];
      if (op.kind == Op::hold) {
        if (held) return next;
      } else if (op.kind == Op::work) {
        clock_ += op.ticks;
      } else {
        if (op.use == use_[op.slot]) {
          sim_->complete(op.slot, clock_);
        } else {
          sim_->complete_late(op.slot, clock_);
        }
        clock_ += 1;
      }
    }
    return next;
  }

 private:
  std::shared_ptr<SimTimestampSlots> sim_;
  std::vector<uint64_t> use_;
  SimFault fault_;
  uint64_t clock_ = 1'000;
};

// The sim device runs submitted frames in order when a frame is waited for;
// a hold stops it there until release().
template <SimFault Fault>
class SimRig {
 public:
  static constexpr const char* kName = Fault == SimFault::none ? "sim" : "faulty_sim";
  static constexpr uint32_t kScaleBase = 100;
  static constexpr uint64_t kTicksPerComplexity = 1'000;

  std::optional<std::string> open(const RigOptions& /*opts*/) { return std::nullopt; }
  void close() {}
  Result<std::unique_ptr<TimestampQueryPool>> make_pool(const QueryPoolDesc& desc) {
    slots_ = std::make_shared<SimRigSlots>(std::max<uint32_t>(desc.max_queries, 2), Fault);
    return TimestampQueryPool::create(slots_, desc);
  }
  TickFormat expected_ticks() { return TickFormat{}; }
  void begin(uint32_t slot) { frames_[slot] = {}; }
  GpuCommandStream stream(uint32_t slot) { return &frames_[slot]; }
  void barrier(uint32_t /*slot*/) {}
  void work(uint32_t slot, uint32_t complexity, uint32_t /*index*/) {
    frames_[slot].ops.push_back({SimRigSlots::Op::work, 0, 0, complexity * kTicksPerComplexity});
  }
  void submit(uint32_t slot) { queue_.push_back({slot, frames_[slot].ops}); }
  void wait(uint32_t slot) {
    ASSERT_TRUE(slots_);
    for (bool done = false; !done;) {
      ASSERT_FALSE(queue_.empty())
          << "waiting for frame slot " << slot << ", which was not submitted";
      Submitted& s = queue_.front();
      s.next = slots_->execute(s.ops, s.next, held_);
      ASSERT_EQ(s.next, s.ops.size()) << "waiting for held work that nothing releases";
      done = s.slot == slot;
      queue_.pop_front();
    }
  }
  std::optional<std::string> cannot_hold() { return std::nullopt; }
  void hold(uint32_t slot) {
    held_ = true;
    frames_[slot].ops.push_back({SimRigSlots::Op::hold, 0, 0, 0});
  }
  void release() { held_ = false; }
  std::optional<std::string> cannot_write_late() { return std::nullopt; }
  std::optional<std::string> reads_may_wait() { return std::nullopt; }
  std::optional<std::string> dispose_needs_no_wait() {
    return "the sim device runs only when the test waits for it: nothing is in flight during "
           "dispose()";
  }
  bool separates_small_work() { return true; }
  std::optional<std::string> skips(ContractCase /*c*/) { return std::nullopt; }

 private:
  struct Submitted {
    uint32_t slot = 0;
    std::vector<SimRigSlots::Op> ops;
    size_t next = 0;
  };
  std::shared_ptr<SimRigSlots> slots_;
  SimRigSlots::Stream frames_[kRigInFlight];
  std::deque<Submitted> queue_;
  bool held_ = false;
};

using SimRigs = ::testing::Types<SimRig<SimFault::none>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Sim, TimestampContract, SimRigs, RigName);

// Every case that the faulty rigs must fail passes on the sound rig: the
// failures below come from the fault, not from the case.
template <SimFault Fault, class Case>
bool fails_on(Case run) {
  SimRig<Fault> rig;
  return reports_a_failure([&] { run(rig); });
}

TEST(TimestampContractCatchesABrokenBackend, SwappedBeginAndEnd) {
  using Faulty = SimRig<SimFault::swapped_edges>;
  EXPECT_TRUE(fails_on<SimFault::swapped_edges>(contract::pairs_are_ordered_and_positive<Faulty>));
  EXPECT_TRUE(
      fails_on<SimFault::swapped_edges>(contract::results_map_to_their_uid_and_frame<Faulty>));
  EXPECT_TRUE(fails_on<SimFault::swapped_edges>(
      contract::tiny_pool_overflow_loses_no_written_result<Faulty>));
  EXPECT_TRUE(fails_on<SimFault::swapped_edges>(
      contract::reset_slot_reads_unavailable_until_written_again<Faulty>));
}

TEST(TimestampContractCatchesABrokenBackend, ResetKeepsTheOldValue) {
  using Faulty = SimRig<SimFault::stale_after_reset>;
  EXPECT_TRUE(fails_on<SimFault::stale_after_reset>(
      contract::reused_slots_old_value_is_not_read_as_the_new_use<Faulty>));
  EXPECT_TRUE(fails_on<SimFault::stale_after_reset>(
      contract::reset_slot_reads_unavailable_until_written_again<Faulty>));
}

TEST(TimestampContractCatchesABrokenBackend, SoundSimPassesTheSameCases) {
  using Sound = SimRig<SimFault::none>;
  EXPECT_FALSE(fails_on<SimFault::none>(contract::pairs_are_ordered_and_positive<Sound>));
  EXPECT_FALSE(
      fails_on<SimFault::none>(contract::reused_slots_old_value_is_not_read_as_the_new_use<Sound>));
  EXPECT_FALSE(fails_on<SimFault::none>(contract::late_write_into_reused_slot_is_invalid<Sound>));
}

}  // namespace
}  // namespace latlab::test
