// The status every per-result value carries. Nothing is papered over with a
// last good value or a zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace latlab {

enum class QueryStatus : uint8_t {
  ok,          // a value measured by the device
  not_ready,   // written or pending on the device, result not available yet
  overflowed,  // no query slot was free: nothing was recorded
  invalid,     // the result cannot be trusted (late write in a reused slot,
               // end before begin, never written though its frame retired)
  disjoint,    // the device reported a discontinuity (clock change, GL disjoint)
  missing,     // no such query / marker was ever recorded
  overlapped,  // not measured: the span began while another was being timed,
               // on slots that time one span at a time (GL_TIME_ELAPSED)
};

// Values of QueryStatus, for tables indexed by it.
inline constexpr size_t kQueryStatusCount = 7;

constexpr std::string_view to_string(QueryStatus s) {
  switch (s) {
    case QueryStatus::ok: return "ok";
    case QueryStatus::not_ready: return "not_ready";
    case QueryStatus::overflowed: return "overflowed";
    case QueryStatus::invalid: return "invalid";
    case QueryStatus::disjoint: return "disjoint";
    case QueryStatus::missing: return "missing";
    case QueryStatus::overlapped: return "overlapped";
  }
  return "unknown";
}

}  // namespace latlab
