// 128-bit integers for exact tick arithmetic (GCC/Clang extension; the
// __extension__ keeps -Wpedantic quiet).
#pragma once

namespace latlab {
__extension__ typedef unsigned __int128 uint128_t;
__extension__ typedef __int128 int128_t;
}  // namespace latlab
