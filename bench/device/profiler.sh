#!/usr/bin/env bash
# GPU profiler on a real GPU (run on the device machine): the
# profiler's micro-benchmarks (CPU bookkeeping, zones with Vulkan timestamp
# writes beside the raw writes, collecting 2048 queries) on a quiet machine,
# the profiler's Vulkan tests against the GPU, and `latlab profile` with a
# trace. Usage, from the repository root:
#   bench/device/profiler.sh [device-selector]   (default: first discrete GPU)
# Output goes to $OUT (or ./out).
set -euo pipefail
out=${OUT:-out}
mkdir -p "$out"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
device=${1:-}

cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target latlab latlab_bench latlab_vulkan_tests
bin=build/release/apps/latlab/latlab

LATLAB_BENCH_VULKAN_DEVICE="$device" build/release/bench/latlab_bench \
  --benchmark_filter='Profiler|Vulkan' --benchmark_repetitions=10 \
  --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/profiler_bench.json" --benchmark_out_format=json 2>&1 | tee "$out/profiler_bench.txt"

LATLAB_TEST_VULKAN_DEVICE="$device" build/release/tests/latlab_vulkan_tests \
  --gtest_filter='ProfilerVulkan*:ProfileCli*' \
  --gtest_output=json:"$out/profiler_vulkan_tests.json" 2>&1 | tee "$out/profiler_vulkan_tests.txt" || true

dev_args=()
[[ -n "$device" ]] && dev_args=(--device "$device")
for c in 16 256; do
  "$bin" profile "${dev_args[@]}" --frames 600 --size 1920x1080 --complexity "$c" \
    --trace "$out/profile_c${c}_trace.json" > "$out/profile_c${c}.txt" 2>&1 \
    || echo "profile c$c failed: see $out/profile_c${c}.txt"
  cat "$out/profile_c${c}.txt"
done
