#!/usr/bin/env bash
# Packs stripped release binaries, the shared libraries the GPU machine lacks
# (fmt, Google Benchmark) and the Khronos validation layer into .devbin/, which
# the device tool carries (`carry: [".devbin", ".gl"]`).
set -euo pipefail
b=${1:-build/release}
rm -rf .devbin; mkdir -p .devbin/lib .devbin/layers
for f in apps/latlab/latlab tests/latlab_vulkan_tests tests/latlab_opengl_tests tests/latlab_cuda_tests \
         tests/latlab_cupti_tests bench/cuda_vs_events bench/cuda_timing bench/cuda_globaltimer bench/latlab_bench; do
  [[ -x $b/$f ]] && strip -o .devbin/$(basename $f) $b/$f
done
cp -L /usr/lib/x86_64-linux-gnu/libfmt.so.9 /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian .devbin/lib/
# latlab links xcb (the present path); the GPU machine may have no X libraries.
for l in libxcb.so.1 libxcb-shm.so.0 libXau.so.6 libXdmcp.so.6 libbsd.so.0 libmd.so.0; do
  cp -L /usr/lib/x86_64-linux-gnu/$l .devbin/lib/
done
# CUPTI (cuda_timing, latlab_cupti_tests): the toolkit's, in case the GPU machine's lies elsewhere.
for c in /usr/local/cuda/lib/libcupti.so.13 /usr/local/cuda/lib64/libcupti.so.13 /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13; do
  [[ -e $c ]] && { cp -L "$c" .devbin/lib/; break; }
done
cp /usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so .devbin/layers/
sed 's#"library_path": *"[^"]*"#"library_path": "./libVkLayer_khronos_validation.so"#' \
  /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json > .devbin/layers/VkLayer_khronos_validation.json
du -sh .devbin
