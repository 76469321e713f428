#!/usr/bin/env bash
# latlab attached to a program's own device on the GPU machine,
# from binaries built here and carried in .devbin/ (bench/device/pack.sh):
#   * zone cost on the attach path beside latlab's own context:
#     BM_VulkanZoneVsRawRatio and BM_VulkanAttachZoneVsRawRatio (host_reset
#     1: the program enabled host query reset; 0: resets recorded per frame),
#     10 repetitions each, in one process, nothing else on the GPU;
#   * the attach tests: Vulkan (validation layer on), OpenGL (EGL), CUDA;
#   * the examples built against the installed package, where packed
#     (.devbin/examples/: vulkan_attach under the validation layer,
#     gl_attach, cuda_attach).
# Every step is bounded by `timeout`. Output in $OUT (or ./out):
# attach_bench.{txt,json}, attach_*_tests.txt, example_*.txt.
#   Here:   cmake --preset release && cmake --build --preset release --target latlab latlab_bench \
#             latlab_vulkan_tests latlab_opengl_tests latlab_cuda_tests
#           scripts/check-install.sh && bench/device/pack.sh
#   Device: OUT=$OUT bash bench/device/attach.sh   (carry .devbin and .gl)
set -u
here=$PWD
out=${OUT:-out}
mkdir -p "$out"
for f in .gl/*.deb; do [[ -e $f ]] && dpkg -x "$f" /; done
ldconfig 2>/dev/null || true
[[ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]] &&
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[[ -e /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ]] &&
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export LD_LIBRARY_PATH=$here/.devbin/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export VK_LAYER_PATH=$here/.devbin/layers
export XDG_RUNTIME_DIR=/tmp/latlab-xdg; mkdir -p -m 700 "$XDG_RUNTIME_DIR"
B=$here/.devbin
T() { local s=$1; shift; timeout -k 5 "$s" "$@"; }
{ date -u; git -C "$here" rev-parse HEAD 2>/dev/null; nvidia-smi 2>&1 | head -15; nproc; } > "$out/machine.txt" 2>&1

echo "== zone cost: latlab's context vs the attach path"
T 300 "$B/latlab_bench" --benchmark_filter='BM_VulkanZoneVsRawRatio|BM_VulkanAttachZoneVsRawRatio' \
  --benchmark_repetitions=10 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/attach_bench.json" --benchmark_out_format=json > "$out/attach_bench.txt" 2>&1
echo "rc=$?" >> "$out/attach_bench.txt"
cat "$out/attach_bench.txt"

echo "== attach tests"
T 120 "$B/latlab_vulkan_tests" --gtest_filter='VulkanAttach*:*ContextIsBuiltOnTheAttachPath' \
  > "$out/attach_vulkan_tests.txt" 2>&1; echo "rc=$?" >> "$out/attach_vulkan_tests.txt"
T 120 "$B/latlab_opengl_tests" --gtest_filter='*GlAttach*' > "$out/attach_opengl_tests.txt" 2>&1
echo "rc=$?" >> "$out/attach_opengl_tests.txt"
T 120 "$B/latlab_cuda_tests" --gtest_filter='CudaAttach*' > "$out/attach_cuda_tests.txt" 2>&1
echo "rc=$?" >> "$out/attach_cuda_tests.txt"
tail -n 4 "$out"/attach_*_tests.txt

echo "== examples"
E=$B/examples
if [[ -x $E/vulkan_attach ]]; then
  T 120 env VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation "$E/vulkan_attach" "$out/vulkan_attach_trace.json" \
    > "$out/example_vulkan_attach.txt" 2>&1; echo "rc=$?" >> "$out/example_vulkan_attach.txt"
fi
for x in gl_attach cuda_attach; do
  [[ -x $E/$x ]] || continue
  T 120 "$E/$x" "$out/${x}_trace.json" > "$out/example_$x.txt" 2>&1; echo "rc=$?" >> "$out/example_$x.txt"
done
tail -n 12 "$out"/example_*.txt 2>/dev/null
exit 0
