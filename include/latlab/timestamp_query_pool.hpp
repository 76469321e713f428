// TimestampQueryPool: three.js's TimestampQueryPool contract in C++, with
// honest statuses. No GPU headers: the pool runs on any
// backend's TimestampSlots (timestamp_slots.hpp), the one owner of that API's
// query objects.
//
// A pool holds `max_queries` GPU timestamp queries (even). Each context (a
// pass, a dispatch) asks for a begin/end pair with allocate_queries_for_context
// (uid, frame_id), records the two timestamps at the returned offset and
// offset+1, and later resolve_queries_async() reads what the device has
// written, without ever waiting for it.
//
// Uids carry their frame as in three.js: "<kind>:<anything>:f<frame>", e.g.
// "c:0:blur:f7" (compute) or "r:3:42:f7" (render). Compute and render uids
// belong to separate pools (QueryPoolDesc::kind); a uid of the other kind is
// refused.
//
// Where three.js's pool is weak, this contract is stricter:
//  * every per-uid result carries a QueryStatus; a missing value is never 0
//    and never the last good value;
//  * when every pair is in use, allocation first resolves what is written;
//    a pair whose result was never read is never handed out again (so no
//    written result is lost), and the uid that found no free pair is reported
//    `overflowed`;
//  * a pair is reused only after its result was read, or its frame was
//    retired (retire_frame) and its result can no longer arrive; a late write
//    into a reused pair is detected (slots that tag their writes flag it
//    kLate; otherwise a begin tick older than what the pool had already seen
//    complete) and reported `invalid`, never mixed into the new uid's result;
//  * the per-uid result map keeps only the newest `retained_frames` frames;
//  * on durations-only slots (TimestampSlots::durations_only, e.g.
//    GL_TIME_ELAPSED) results carry a duration and no ticks (has_ticks
//    false), and a pair opened while another is open is `overlapped`.
//
// Frames must be submitted in increasing frame id on one queue: retiring
// frame N then means every earlier frame completed, which tells the slots
// when a pair's previous use is done (Vulkan resets on the host only then).
//
// Ownership and threads: a pool is owned by whoever created it (create()
// returns unique_ptr) and shares its slots; it is not thread-safe: use it
// from one thread (the recording/render thread).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "latlab/query_status.hpp"
#include "latlab/result.hpp"
#include "latlab/tick_format.hpp"
#include "latlab/timestamp_slots.hpp"

namespace latlab {

enum class QueryKind : uint8_t { render, compute };

struct QueryPoolDesc {
  uint32_t max_queries = 2048;    // capacity in queries; even, >= 2. Default 2048.
  QueryKind kind = QueryKind::render;  // which uids ("r:" / "c:") this pool takes
  uint32_t retained_frames = 16;  // frames whose per-uid results are kept (>= 1)
};

// The result for one uid.
struct TimestampResult {
  QueryStatus status = QueryStatus::missing;
  uint64_t frame_id = 0;
  // Raw device ticks (masked to valid bits), valid when has_ticks: a result
  // read from timestamps (ok, disjoint or invalid). Durations-only slots
  // never give ticks: has_ticks stays false and both are 0.
  bool has_ticks = false;
  uint64_t begin_ticks = 0;
  uint64_t end_ticks = 0;
  int64_t duration_ns = 0;   // valid only when status == ok
  double duration_ms() const { return static_cast<double>(duration_ns) / 1e6; }
  bool ok() const { return status == QueryStatus::ok; }
};

// What one resolve produced.
struct ResolveSummary {
  uint32_t resolved_ok = 0;   // pairs read with a valid result
  uint32_t invalid = 0;       // pairs read but rejected (late, reversed, disjoint, overlapped)
  uint32_t still_pending = 0; // pairs of this resolve's snapshot not yet final
  // Total ms of the newest frame whose pairs are all ok, and that frame's id
  // (an older frame than the newest one when the newest is incomplete or has
  // a pair that is not ok). Both nullopt before any such frame.
  std::optional<double> last_value_ms;
  std::optional<uint64_t> last_value_frame;
};

// The handle resolve_queries_async() returns: shared by every call made while
// it is pending. It never blocks; call resolve_queries_async() again (once a
// frame, say) to let it progress.
class ResolveTicket {
 public:
  bool is_ready() const { return state_ && state_->ready; }
  const ResolveSummary& summary() const { return state_->summary; }  // final once ready
  bool same_as(const ResolveTicket& other) const { return state_ == other.state_; }
  bool valid() const { return static_cast<bool>(state_); }

 private:
  friend class TimestampQueryPool;
  struct State {
    bool ready = false;
    ResolveSummary summary;
    std::vector<std::string> uids;  // the uids this resolve waits for
  };
  std::shared_ptr<State> state_;
};

class TimestampQueryPool {
 public:
  // A pool over slots [0, desc.max_queries) of `slots`. Error when
  // max_queries is odd or below 2, or the slots hold fewer. On slots that
  // cannot time, the pool is made but track_timestamp() is false.
  static Result<std::unique_ptr<TimestampQueryPool>> create(std::shared_ptr<TimestampSlots> slots,
                                                            const QueryPoolDesc& desc);
  ~TimestampQueryPool();
  TimestampQueryPool(const TimestampQueryPool&) = delete;
  TimestampQueryPool& operator=(const TimestampQueryPool&) = delete;

  // --- three.js's properties -----------------------------------------------
  uint32_t max_queries() const { return desc_.max_queries; }
  // Next query index the pool will hand out (wraps within max_queries).
  uint32_t current_query_index() const { return cursor_ * 2; }
  // Offset of the begin query of `uid`'s pair, while the pair is held.
  std::optional<uint32_t> query_offset(std::string_view uid) const;
  // False when the device cannot time: allocation then gives no value.
  bool track_timestamp() const { return track_timestamp_; }
  bool is_disposed() const { return disposed_; }
  // True on durations-only slots: results have no ticks (has_ticks false).
  bool durations_only() const { return durations_only_; }
  const TickFormat& tick_format() const { return ticks_; }
  QueryKind kind() const { return desc_.kind; }

  // --- three.js's methods --------------------------------------------------
  // A begin/end pair for `uid` in frame `frame_id`: the begin query's offset
  // (end is offset+1). No value once disposed, when tracking is off, when the
  // uid is of the other kind or malformed, or when no pair is free
  // (then the uid's status is `overflowed`). Re-allocating a held uid gives
  // its existing offset.
  // `frame_id` must equal the uid's ":f<N>" frame (results are filed under
  // the uid's frame): a mismatch is a caller error, refused with no value,
  // the uid's status `invalid` (filed under the uid's frame) and
  // frame_mismatch_count() incremented; no pair is taken.
  std::optional<uint32_t> allocate_queries_for_context(std::string_view uid, uint64_t frame_id);
  // Record the begin (end) timestamp of the pair at `offset` into `stream`
  // (a VkCommandBuffer, a cudaStream_t, ...). No-op once disposed.
  void write_begin(GpuCommandStream stream, uint32_t offset);
  void write_end(GpuCommandStream stream, uint32_t offset);

  // Reads every held pair the device has finished, without blocking. While a
  // resolve is pending (some of its pairs not yet written), further calls make
  // it progress and return the same ticket.
  ResolveTicket resolve_queries_async();

  // The result for `uid`: `missing` if never allocated or no longer retained.
  TimestampResult timestamp(std::string_view uid) const;
  // True when `uid` has a final result (any status but not_ready / missing).
  bool has_timestamp_query(std::string_view uid) const;
  // Frames with at least one result, ascending.
  std::vector<uint64_t> timestamp_frames() const;
  // Total GPU ms of the newest frame whose pairs are all `ok`; nullopt
  // before any (never a made-up 0). When the newest frame is incomplete or
  // has a pair that is not ok, this is an OLDER frame's total:
  // last_value_frame() says which frame it belongs to.
  std::optional<double> last_value() const { return last_value_ms_; }
  // The frame id last_value() belongs to; nullopt exactly when it is.
  std::optional<uint64_t> last_value_frame() const { return last_value_frame_; }
  // Lets go of the slots (their device objects go with the last owner);
  // every later call is a no-op.
  void dispose();

  // --- beyond three.js ---------------------------------------------------
  // The owner knows `frame_id`'s work has completed on the device (its fence
  // signalled): pairs of that frame still unwritten will never be; they
  // become `invalid` and their slots free.
  void retire_frame(uint64_t frame_id);
  // Pairs currently held (allocated, result not yet read).
  uint32_t pairs_in_use() const { return in_use_; }
  // Allocations refused because every pair was in use.
  uint64_t overflow_count() const { return overflows_; }
  // Allocations refused because frame_id disagreed with the uid's frame.
  uint64_t frame_mismatch_count() const { return frame_mismatches_; }
  // Late writes detected in reused slots.
  uint64_t late_result_count() const { return late_results_; }

  // The slots the pool runs on (the backend's; e.g. to record Vulkan resets).
  TimestampSlots& slots() const { return *slots_; }

  // Parses the frame from a uid ("...:f<N>"); nullopt if malformed.
  static std::optional<uint64_t> frame_of_uid(std::string_view uid);

 private:
  TimestampQueryPool(std::shared_ptr<TimestampSlots> slots, const QueryPoolDesc& desc);

  enum class PairState : uint8_t { free, held };
  struct Pair {
    PairState state = PairState::free;
    bool ever_used = false;  // frame_id below names its latest use
    uint64_t frame_id = 0;
    uint64_t tick_floor = 0;  // newest tick the pool had seen when allocated
    bool floor_known = false;
    std::string uid;
  };
  struct FrameResults {
    uint64_t frame_id = 0;
    std::unordered_map<std::string, TimestampResult> by_uid;
  };

  void poll(ResolveTicket::State& state);
  bool read_pair(uint32_t pair_index, TimestampResult& out);  // true once final
  bool read_duration(const SlotReading& b, const SlotReading& e, TimestampResult& out);  // durations only
  void store_result(const std::string& uid, const TimestampResult& r);
  void free_pair(uint32_t pair_index);
  std::optional<uint32_t> find_free_pair();
  // A free pair, after reading what the device wrote when none was free.
  std::optional<uint32_t> find_or_sweep_free_pair();
  FrameResults& frame_slot(uint64_t frame_id);
  void update_last_value();

  std::shared_ptr<TimestampSlots> slots_;
  QueryPoolDesc desc_;
  TickFormat ticks_;
  bool track_timestamp_ = true;
  bool durations_only_ = false;
  bool disposed_ = false;
  std::vector<Pair> pairs_;
  uint32_t cursor_ = 0;  // next pair to try
  uint32_t in_use_ = 0;
  std::optional<uint64_t> completed_frame_;  // newest retired frame
  std::unordered_map<std::string, uint32_t> held_;  // uid -> pair index
  std::deque<FrameResults> frames_;                  // ascending frame id, bounded
  std::shared_ptr<ResolveTicket::State> pending_;
  std::optional<double> last_value_ms_;
  std::optional<uint64_t> last_value_frame_;
  uint64_t newest_tick_seen_ = 0;
  bool any_tick_seen_ = false;
  uint64_t overflows_ = 0;
  uint64_t late_results_ = 0;
  uint64_t frame_mismatches_ = 0;
  SlotReading scratch_[2] = {};
};

}  // namespace latlab
