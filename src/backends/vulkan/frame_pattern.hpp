// The frame id as a pixel pattern (private to the Vulkan backend and its
// tests): 32 cells of kCell x kCell pixels in a row carry the low 32 bits of
// the frame id (bit 0 leftmost; white = 1, black = 0), and a second row
// carries their complement, so a read that caught half of one frame and
// half of another (tearing, or a copy in progress) decodes to nothing rather
// than to a wrong id. The pattern sits at the top-left of the image.
#pragma once

#include <cstdint>
#include <optional>

namespace latlab::frame_pattern {

inline constexpr uint32_t kBits = 32;
inline constexpr uint32_t kCell = 8;                  // pixels per cell side
inline constexpr uint32_t kWidth = kBits * kCell;     // 256 px
inline constexpr uint32_t kHeight = 2 * kCell;        // 16 px
inline constexpr uint32_t kWhite = 0xFFFFFFFFu;       // 4-byte pixel, any channel order
inline constexpr uint32_t kBlack = 0xFF000000u;

// Pixel (x, y) of the pattern for `id`, x < kWidth, y < kHeight.
inline uint32_t pixel(uint64_t id, uint32_t x, uint32_t y) {
  const uint32_t bit = static_cast<uint32_t>((id >> (x / kCell)) & 1u);
  const uint32_t on = y < kCell ? bit : 1u - bit;
  return on != 0 ? kWhite : kBlack;
}

// Writes the whole pattern for `id` into kWidth x kHeight 4-byte pixels, row by row.
inline void write(uint32_t* pixels, uint64_t id) {
  for (uint32_t y = 0; y < kHeight; ++y) {
    for (uint32_t x = 0; x < kWidth; ++x) pixels[y * kWidth + x] = pixel(id, x, y);
  }
}

// Decodes the pattern from 4-byte pixels; `at(x, y)` returns the pixel.
// Samples each cell's centre; a channel above 127 is "on" (every channel of
// white is 255, of black 0, whatever the byte order). nullopt when the two
// rows disagree (no complete pattern there).
template <class At>
std::optional<uint32_t> decode(At at) {
  uint32_t top = 0;
  uint32_t bottom = 0;
  for (uint32_t b = 0; b < kBits; ++b) {
    const uint32_t x = b * kCell + kCell / 2;
    const auto on = [&](uint32_t y) -> uint32_t {
      const uint32_t p = at(x, y);
      const uint32_t g = (p >> 8) & 0xFFu;
      const uint32_t r = (p >> 16) & 0xFFu;
      return (g > 127 && r > 127) ? 1u : 0u;
    };
    top |= on(kCell / 2) << b;
    bottom |= on(kCell + kCell / 2) << b;
  }
  if (top != ~bottom) return std::nullopt;
  return top;
}

// The full frame id nearest `near` whose low 32 bits are `low` (ids rise
// by one per frame, so the observer extends what it read from the last id
// it knows).
inline uint64_t widen(uint32_t low, uint64_t near) {
  const uint64_t base = near & ~uint64_t{0xFFFFFFFFu};
  uint64_t best = base | low;
  for (const int64_t d : {-1, 1}) {
    const uint64_t hi = base + static_cast<uint64_t>(d) * (uint64_t{1} << 32);
    const uint64_t cand = hi | low;
    const auto dist = [&](uint64_t v) { return v > near ? v - near : near - v; };
    if ((d < 0 && base == 0)) continue;
    if (dist(cand) < dist(best)) best = cand;
  }
  return best;
}

}  // namespace latlab::frame_pattern
