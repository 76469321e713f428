#!/usr/bin/env bash
# present_complete's device set-up on the GPU machine (docs/capture.md,
# "Present completion"): the NVIDIA driver offers VK_KHR_present_id and
# VK_KHR_present_wait, so under `latlab capture` the layer enables them (and
# their features) at vkCreateDevice of a program that enabled VK_KHR_swapchain.
# There is no display, so nothing is presented: this checks that the device
# is created with the additions (sources[].present_method is
# "VK_KHR_present_wait", no "layer_additions" entry), that the program runs
# as without the layer, and that the Khronos validation layer (when
# installed) reports 0 errors for it.
#
#   bench/device/capture_present.sh
#   LATLAB_BINARY=path/to/latlab bench/device/capture_present.sh   (prebuilt)
# Output: $OUT or build/device-capture-present/out: machine.txt, capture.json,
# run.json, validated.json, validated.txt, summary.txt, build.log.
# About 3 min to build on 16 cores, then under a minute.
set -uo pipefail
cd "$(dirname "$0")/../.."

build=build/device-capture-present
out="${OUT:-$build/out}"
mkdir -p "$out"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  uname -a
  nvidia-smi --query-gpu=name,driver_version --format=csv 2>&1 | tail -n +2
} >"$out/machine.txt"

bin="${LATLAB_BINARY:-}"
if [ -z "$bin" ]; then
  timeout 400 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLATLAB_WERROR=ON \
    -DLATLAB_BUILD_TESTS=OFF -DLATLAB_BUILD_BENCH=OFF >"$out/build.log" 2>&1 &&
  timeout 400 cmake --build "$build" -j"$(nproc)" --target latlab VkLayer_latlab_capture \
    >>"$out/build.log" 2>&1 || { echo "build failed (build.log)"; tail -20 "$out/build.log"; exit 1; }
  bin="$build/apps/latlab/latlab"
fi

# --present: latlab's own device enables VK_KHR_swapchain (nothing is shown:
# no display, the present path reports itself unavailable and the run goes on).
run_args=(run --backend vulkan --mode baseline --present --blocks 1 --warmup 50 --seed 1)
timeout 120 "$bin" capture --out "$out/capture.json" -- "$bin" "${run_args[@]}" --frames 300 \
  --out "$out/run.json" >"$out/captured.txt" 2>&1
echo "captured run exit: $?" >>"$out/captured.txt"
if [ -f /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json ] ||
  [ -n "${VK_LAYER_PATH:-}" ]; then
  VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation timeout 300 "$bin" capture \
    --out "$out/validated.json" -- "$bin" "${run_args[@]}" --frames 500 --out "$out/validated_run.json" \
    >"$out/validated.txt" 2>&1
  echo "validated run exit: $?" >>"$out/validated.txt"
fi

python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, os, sys
out = sys.argv[1]
cap = json.load(open(f"{out}/capture.json"))
for s in cap["sources"]:
    print("source:", s["device"], "| present_method:", s["present_method"], "| clock:", s["clock_method"])
for u in cap["unavailable"]:
    if u["name"] in ("present_complete", "present_timing", "layer_additions"):
        print("unavailable:", u["name"], "-", u["reason"])
print("partial:", cap["partial"], cap["partial_reason"], "| submits", cap["submits"],
      "| spans", cap["submit_spans"])
o = cap["overhead"]["layer_cpu_per_submit"]
print(f"layer CPU per submit: p50 {o['p50']} us p99 {o['p99']} us")
ok = any(s["present_method"] == "VK_KHR_present_wait" for s in cap["sources"])
print("EXPECTED present_method VK_KHR_present_wait:", "yes" if ok else "NO")
v = f"{out}/validated.txt"
if os.path.exists(v):
    text = open(v).read()
    print("validation errors:", text.count("Validation Error"))
PY
