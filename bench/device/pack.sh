#!/usr/bin/env bash
# Packs stripped release binaries, the shared libraries the GPU machine lacks
# (fmt, Google Benchmark) and the Khronos validation layer into .devbin/, which
# the device tool carries (`carry: [".devbin", ".gl"]`).
set -euo pipefail
b=${1:-build/release}
rm -rf .devbin; mkdir -p .devbin/lib .devbin/layers
for f in apps/latlab/latlab tests/latlab_vulkan_tests tests/latlab_opengl_tests tests/latlab_cuda_tests bench/cuda_vs_events bench/latlab_bench bench/alloc_per_frame; do
  [[ -x $b/$f ]] && strip -o .devbin/$(basename $f) $b/$f
done
cp -L /usr/lib/x86_64-linux-gnu/libfmt.so.9 /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian .devbin/lib/
# latlab links xcb (the present path); the GPU machine may have no X libraries.
for l in libxcb.so.1 libxcb-shm.so.0 libXau.so.6 libXdmcp.so.6 libbsd.so.0 libmd.so.0; do
  cp -L /usr/lib/x86_64-linux-gnu/$l .devbin/lib/
done
cp /usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so .devbin/layers/
sed 's#"library_path": *"[^"]*"#"library_path": "./libVkLayer_khronos_validation.so"#' \
  /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json > .devbin/layers/VkLayer_khronos_validation.json
du -sh .devbin
