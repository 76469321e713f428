// Mesa's software drivers (lavapipe, llvmpipe) spread a dispatch or pass over
// worker threads; on a busy 2-core machine one dispatch may get both cores and
// the next only one, so a timing ratio measures the scheduler, not the work
// (CI's ASan runs gave 1.98-1.99 for 4x and 8x the work). One worker makes the
// work decide. Call before the Vulkan instance or EGL display is created
// (Mesa reads LP_NUM_THREADS then); other drivers ignore it.
#pragma once

#include <cstdlib>

namespace latlab::test {

inline void use_one_mesa_worker() { setenv("LP_NUM_THREADS", "1", 1); }

}  // namespace latlab::test
