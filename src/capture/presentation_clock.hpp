// Times a Wayland compositor reports (wp_presentation) on the clock it names
// in wp_presentation.clock_id, put on latlab's host clock (CLOCK_MONOTONIC,
// host_clock.hpp). CLOCK_MONOTONIC itself is taken as is. CLOCK_MONOTONIC_RAW
// (weston's choice) and CLOCK_BOOTTIME run beside it without steps, so a
// time on them is moved by their offset to the host clock, read when the
// time is converted: the two clocks drift apart by the kernel's frequency
// correction (NTP's; at most 500 ppm), so the error is that times the
// event's age when converted (frames old, at most ~0.2 s: 0 on a machine
// whose clock is not slewed, 100 us at the kernel's limit). Clocks that step
// (CLOCK_REALTIME, CLOCK_TAI) or that the kernel does not know are refused.
//
// Threads: all functions from any thread.
#pragma once

#include <cstdint>
#include <string>

namespace latlab::capture {

// "" when times on `clock_id` can be put on the host clock, else why not.
std::string presentation_clock_refusal(uint32_t clock_id);

// "CLOCK_MONOTONIC_RAW", ..., or "clock N".
std::string clock_id_name(uint32_t clock_id);

// `t_ns` (on `clock_id`, which presentation_clock_refusal accepts) on the
// host clock.
int64_t presentation_to_host_ns(uint32_t clock_id, int64_t t_ns);

// Now on `clock_id`, ns.
int64_t clock_now_ns(uint32_t clock_id);

// The offset host − `clock_id` now, ns: the tightest of three host-clock
// read pairs around a read of `clock_id`; 0 for CLOCK_MONOTONIC.
int64_t host_offset_ns(uint32_t clock_id);

}  // namespace latlab::capture
