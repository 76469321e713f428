// libFuzzer target: the pool's string uids (TimestampQueryPool::frame_of_uid) and
// the pool driven by any sequence of calls on simulated slots: uids and
// frame ids from the input, devices writing any ticks (late, reversed,
// disjoint), resolves, retires, dispose. The pool's invariants must hold and
// nothing may crash.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "latlab/bench/sim_timestamp_slots.hpp"
#include "latlab/timestamp_query_pool.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

struct Input {
  const uint8_t* p;
  size_t n;
  uint8_t byte() {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | byte();
    return v;
  }
  std::string str(size_t max) {
    const size_t len = std::min<size_t>(byte() % (max + 1), n);
    std::string s(reinterpret_cast<const char*>(p), len);
    p += len;
    n -= len;
    return s;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace latlab;
  // frame_of_uid: any text; a parsed frame prints back to the same suffix.
  const std::string whole(reinterpret_cast<const char*>(data), size);
  if (const auto f = TimestampQueryPool::frame_of_uid(whole)) {
    check(TimestampQueryPool::frame_of_uid("c:x:f" + std::to_string(*f)) == f);
  }

  Input in{data, size};
  const uint32_t bits = 1 + in.byte() % 64;
  const uint32_t max_queries = 2 * (1 + in.byte() % 8);
  auto slots = SimTimestampSlots::create(
      {.count = max_queries, .ticks = TickFormat::from_period_ns(1.0, bits)});
  auto made = TimestampQueryPool::create(slots, {.max_queries = max_queries,
                                                 .kind = QueryKind::compute,
                                                 .retained_frames = 1u + in.byte() % 4});
  check(made.ok());
  auto& pool = *made.value();
  std::string last_uid = "c:0:f0";
  while (in.n > 0) {
    switch (in.byte() % 8) {
      case 0: {  // a well-formed uid of a small frame, frame id right or wrong
        const uint64_t frame = in.byte() % 16;
        last_uid = "c:" + std::to_string(in.byte() % 4) + ":f" + std::to_string(frame);
        const uint64_t asked = in.byte() % 4 == 0 ? frame + 1 : frame;
        const auto off = pool.allocate_queries_for_context(last_uid, asked);
        if (off) check(*off % 2 == 0 && *off < max_queries && asked == frame);
        break;
      }
      case 1: {  // any uid, any frame id
        last_uid = in.str(24);
        (void)pool.allocate_queries_for_context(last_uid, in.u64());
        break;
      }
      case 2: {  // the device writes a slot
        const uint32_t slot = in.byte() % max_queries;
        slots->complete(slot, in.u64());
        break;
      }
      case 3:
        if (in.byte() % 2 == 0) {
          slots->mark_disjoint(in.byte() % max_queries);
        } else {
          slots->complete_late(in.byte() % max_queries, in.u64());
        }
        break;
      case 4: {
        const auto t = pool.resolve_queries_async();
        check(t.valid());
        const auto& s = t.summary();
        check(s.last_value_ms.has_value() == s.last_value_frame.has_value());
        break;
      }
      case 5:
        pool.retire_frame(in.byte() % 16);
        break;
      case 6: {
        const auto r = pool.timestamp(last_uid);
        if (r.ok()) check(r.duration_ns >= 0);
        (void)pool.has_timestamp_query(last_uid);
        (void)pool.timestamp_frames();
        break;
      }
      default:
        if (in.byte() % 16 == 0) pool.dispose();
        break;
    }
    check(pool.pairs_in_use() <= max_queries / 2);
    check(pool.last_value().has_value() == pool.last_value_frame().has_value());
  }
  return 0;
}
