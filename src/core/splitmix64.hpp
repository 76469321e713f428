// splitmix64 (Steele, Lea, Flood 2014; Vigna's reference code), written once:
// tiny, seeded, and the same on every compiler and standard library (the std
// distributions are not), so a seed names one exact schedule or sim run.
// Private to latlab; include/latlab/bench/schedule.hpp spells the algorithm out for
// users.
#pragma once

#include <cstdint>

namespace latlab {

// The golden-ratio increment added to the state before each output.
inline constexpr uint64_t kSplitMix64Gamma = 0x9E3779B97F4A7C15ull;

// The finaliser: a bijective 64-bit mix.
constexpr uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Advances `state` by kSplitMix64Gamma and returns the next output. A
// generator seeded with s starts with state = s.
constexpr uint64_t splitmix64_next(uint64_t& state) {
  state += kSplitMix64Gamma;
  return splitmix64_mix(state);
}

}  // namespace latlab
