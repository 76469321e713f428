#!/usr/bin/env bash
# Packs stripped release binaries, the shared libraries the GPU machine may
# lack and the Khronos validation layer into .devbin/, which
# the device tool carries (`carry: [".devbin", ".gl"]`; .gl comes from
# bench/device/fetch_gl.sh).
set -euo pipefail
b=${1:-build/release}
rm -rf .devbin .devbin.txz; mkdir -p .devbin/lib .devbin/layers
for f in apps/latlab/latlab tests/latlab_vulkan_tests tests/latlab_opengl_tests tests/latlab_cuda_tests tests/latlab_thread_tests \
         tests/latlab_profiler_protocol_tests \
         tests/latlab_cupti_tests bench/cuda_vs_events bench/cuda_timing bench/cuda_globaltimer bench/latlab_bench \
         bench/alloc_per_frame bench/gl_stall_control bench/bracket_variants tests/latlab_gl_swap_probe tests/latlab_e2e_tests; do
  [[ -x $b/$f ]] && strip -o .devbin/$(basename $f) $b/$f
done
# Every shared library the packed binaries link that the GPU machine may lack
# (fmt, Google Benchmark, SQLite, libpq and its TLS/Kerberos/LDAP chain, the X
# libraries of the present path), but never libc's family, the C++ runtime,
# or the GPU's own loaders and drivers (Vulkan, EGL/GL, CUDA): those come from
# the machine or from .gl.
skip='/(libc|libm|libpthread|libdl|librt|libresolv|libnss[^/]*|ld-linux[^/]*|libstdc\+\+|libgcc_s|libvulkan|libEGL|libGL[A-Za-z]*|libOpenGL|libglvnd[^/]*|libcuda[^/]*|libcudart[^/]*|libcupti[^/]*)\.so'
for bin in .devbin/*; do
  [[ -f $bin && -x $bin ]] || continue
  ldd "$bin" | awk '$3 ~ /^\// {print $3}' | { grep -vE "$skip" || true; } |
    while read -r lib; do cp -Ln "$lib" .devbin/lib/ 2>/dev/null || true; done
done
# CUPTI (cuda_timing, latlab_cupti_tests): the toolkit's, in case the GPU machine's lies elsewhere.
for c in /usr/local/cuda/lib/libcupti.so.13 /usr/local/cuda/lib64/libcupti.so.13 /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13; do
  [[ -e $c ]] && { cp -L "$c" .devbin/lib/; break; }
done
# The attach examples as scripts/check-install.sh built them against the
# installed package (bench/device/attach.sh runs them).
for x in vulkan_attach gl_attach cuda_attach; do
  f=build/install-check/$x/$x
  [[ -x $f ]] && { mkdir -p .devbin/examples; strip -o .devbin/examples/$x $f; }
done
# latlab capture's layer and its manifest (bench/device/capture.sh:
# LATLAB_CAPTURE_LAYER_DIR=.devbin/capture_layer).
if [[ -e $b/layers/VkLayer_latlab_capture.json ]]; then
  mkdir -p .devbin/capture_layer
  strip -o .devbin/capture_layer/libVkLayer_latlab_capture.so $b/layers/libVkLayer_latlab_capture.so
  cp $b/layers/VkLayer_latlab_capture.json .devbin/capture_layer/
fi
# ... and its GL interposer (bench/device/capture_gl.sh: LATLAB_CAPTURE_GL_DIR=.devbin/capture_layer).
if [[ -e $b/layers/libLatlabGlCapture.so ]]; then
  mkdir -p .devbin/capture_layer
  strip -o .devbin/capture_layer/libLatlabGlCapture.so $b/layers/libLatlabGlCapture.so
fi
# The replay benchmark's program and trace (bench/device/capture_replay.sh),
# when REPLAY_TRACE names a gfxreconstruct trace: Debian's gfxrecon-replay
# needs only lz4, zlib and zstd beside libstdc++ on the GPU machine.
if [[ -n ${REPLAY_TRACE:-} ]]; then
  strip -o .devbin/gfxrecon-replay "$(command -v gfxrecon-replay)"
  cp "$REPLAY_TRACE" .devbin/cube3000.gfxr
fi
# The Vulkan leak counts for LD_PRELOAD (bench/device/vulkan_leak.sh).
[[ -e $b/tests/leak/libvk_leak_shim.so ]] && strip -o .devbin/libvk_leak_shim.so $b/tests/leak/libvk_leak_shim.so
cp /usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so .devbin/layers/
sed 's#"library_path": *"[^"]*"#"library_path": "./libVkLayer_khronos_validation.so"#' \
  /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json > .devbin/layers/VkLayer_khronos_validation.json
du -sh .devbin
# A crash on the GPU machine, where there is no debugger, prints its stack
# with LD_PRELOAD=.devbin/segv_backtrace.so (bench/device/segv_backtrace.c).
cc -shared -fPIC -O1 -o .devbin/segv_backtrace.so bench/device/segv_backtrace.c
# Every test binary with the validation layer and the libraries is more than
# the 64 MiB a call carries; PACK_XZ=1 packs .devbin into .devbin.txz (about
# a quarter of the size), which h200_round.sh unpacks in place of
# .devbin (`carry: [".devbin.txz", ".gl"]`).
if [[ -n ${PACK_XZ:-} ]]; then
  tar cf - .devbin | xz -T0 -6 > .devbin.txz.tmp && mv .devbin.txz.tmp .devbin.txz && rm -rf .devbin
  ls -la .devbin.txz
fi
