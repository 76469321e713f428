#!/usr/bin/env bash
# One batched round on the GPU machine (device tool), from binaries built on
# the development machine and carried in .devbin/ (see bench/device/pack.sh).
# Everything lands in $OUT/round.tgz (the tool returns at most 8 files).
#   ROUND_STEPS="vulkan cuda load clocks latency profile" bench/device/h200_round.sh
set -u
here=$PWD
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export LD_LIBRARY_PATH=$here/.devbin/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export VK_LAYER_PATH=$here/.devbin/layers
export XDG_RUNTIME_DIR=/tmp/latlab-xdg; mkdir -p -m 700 $XDG_RUNTIME_DIR
B=$here/.devbin
R=$(mktemp -d); steps=${ROUND_STEPS:-"vulkan cuda load clocks"}
log() { echo "== $(date -u +%T) $*" | tee -a "$R/round.log"; }
has() { [[ " $steps " == *" $1 "* ]]; }

{ date -u; uname -a; nvidia-smi; nproc; } > "$R/machine.txt" 2>&1
"$B/latlab" devices > "$R/devices.txt" 2>&1; "$B/latlab" devices --json > "$R/devices.json" 2>&1

clock_pid=
if has clocks; then
  log "clocks ${CLOCKS_SECONDS:-540}s (background)"
  (OUT=$R LATLAB_BINARY=$B/latlab CLOCKS_SECONDS=${CLOCKS_SECONDS:-540} bash bench/device/clocks.sh) &
  clock_pid=$!
fi
if has vulkan; then
  log "vulkan tests"
  "$B/latlab_vulkan_tests" > "$R/vulkan_tests.txt" 2>&1; echo "rc=$?" >> "$R/vulkan_tests.txt"
  for form in compute fragment; do
    "$B/latlab" run --mode baseline --form $form --frames 120 --passes 4 --complexity 256 --size 1920x1080 > "$R/ref_run_$form.txt" 2>&1
  done
fi
if has cuda; then
  log "cuda tests"
  "$B/latlab_cuda_tests" > "$R/cuda_tests.txt" 2>&1; echo "rc=$?" >> "$R/cuda_tests.txt"
  "$B/cuda_vs_events" --reps 200 > "$R/cuda_vs_events.txt" 2>&1; echo "rc=$?" >> "$R/cuda_vs_events.txt"
fi
if has load; then
  log "calibrate-load"
  for args in "--backend vulkan" "--backend vulkan --form fragment" "--backend cuda"; do
    n=$(echo $args | tr ' -' '_' | tr -s _)
    /usr/bin/time -v "$B/latlab" calibrate-load $args --json > "$R/load$n.json" 2> "$R/load$n.log"
  done
fi
if has latency; then
  log "latency"
  LATLAB_BINARY=$B/latlab OUT=$R bash bench/device/latency.sh > "$R/latency_sh.txt" 2>&1
fi
if has profile; then
  log "profile"
  "$B/latlab" profile --frames 600 --trace "$R/profile_trace.json" > "$R/profile.txt" 2>&1
  [[ -x $B/latlab_bench ]] && "$B/latlab_bench" --benchmark_filter='Profiler|Zone|Collect' > "$R/profiler_bench.txt" 2>&1
fi
[[ -n $clock_pid ]] && { log "waiting for clocks"; wait $clock_pid; }
log "done"
tar czf "$OUT/round.tgz" -C "$R" .
cat "$R/round.log"
