#!/usr/bin/env bash
# Vulkan backend on a real GPU (run on the device machine):
# device report, the Vulkan tests against the GPU (not lavapipe), and the
# reference run in both forms. Usage, from the repository root:
#   bench/device/vulkan_check.sh [device-selector]   (default: first discrete GPU)
# Output goes to $OUT (or ./out) as text and JSON files.
set -euo pipefail
out=${OUT:-out}
mkdir -p "$out"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
device=${1:-}

cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target latlab latlab_vulkan_tests
bin=build/release/apps/latlab/latlab

"$bin" devices | tee "$out/devices.txt"
"$bin" devices --json > "$out/devices.json"

# The tests need VK_LAYER_KHRONOS_validation; they fail (not skip) without it.
LATLAB_TEST_VULKAN_DEVICE="$device" build/release/tests/latlab_vulkan_tests \
  --gtest_output=json:"$out/vulkan_tests.json" 2>&1 | tee "$out/vulkan_tests.txt" || true

dev_args=()
[[ -n "$device" ]] && dev_args=(--device "$device")
for form in compute fragment; do
  for c in 16 256 4096; do
    "$bin" run --mode baseline "${dev_args[@]}" --form "$form" --frames 120 --passes 4 --complexity "$c" --size 1920x1080 \
      > "$out/run_${form}_c${c}.txt" 2>&1 || echo "run $form c$c failed: see $out/run_${form}_c${c}.txt"
    tail -8 "$out/run_${form}_c${c}.txt"
  done
done
