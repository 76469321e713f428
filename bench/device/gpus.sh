#!/usr/bin/env bash
# Several GPUs on the GPU machine (device tool; meant for the
# 2-GPU kind nvidia-h200-x2, and runs on one GPU too), from prebuilt binaries
# (bench/device/pack.sh):
#   * `latlab devices` (text and --json): each entry's UUID / PCI address and
#     the physical_device groups (CUDA, Vulkan and GL entries of one GPU);
#   * per backend (vulkan, cuda): `latlab clocks --device all --cross-check`
#     (one clock model per device studied at the same time, then the
#     two-device cross-check: a frame submitted to both at one host
#     deadline, the starts within the sum of the two bounds), and
#     `latlab run --device all` (every device's latency path, Baseline and
#     Loaded, in interleaved blocks on the same deadlines, one result section
#     per device);
#   * the CUDA cross-check test (latlab_cuda_tests, CudaCrossCheck.*; it
#     skips with the reason below two CUDA devices). The Vulkan one is a CLI
#     test (e2e ClocksSeveral.VulkanCrossCheckOfTwoDevices) and runs here as
#     the `clocks --backend vulkan --cross-check` step.
# Every step is bounded by `timeout`: a hang costs its budget, not the round.
#
#   LATLAB_BINARY=.devbin/latlab LATLAB_CUDA_TESTS=.devbin/latlab_cuda_tests OUT=out bench/device/gpus.sh
#
# Output in $OUT: devices.{txt,json}, clocks_all_<b>.{json,log},
# run_all_<b>.{json,txt} (with --per-frame), run_all_vulkan_no_turn_warmup.{json,txt}
# (GPUS_NO_TURN_WARMUP=0 skips it), cross_check_cuda_tests.{txt,json}; each .log/.txt
# ends with "rc=N". Exit status: non-zero if a step failed.
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
T() { local s=$1; shift; timeout -k 5 "$s" "$@"; }
bin=${LATLAB_BINARY:?LATLAB_BINARY: the latlab binary}
cuda_tests=${LATLAB_CUDA_TESTS:-}
frames=${GPUS_FRAMES:-1000}
clock_s=${GPUS_CLOCKS_SECONDS:-30}
status=0
step() { local rc=$1 f=$2; echo "rc=$rc" >> "$f"; [[ $rc -eq 0 ]] || status=1; }

T 60 "$bin" devices > "$out/devices.txt" 2>&1
step $? "$out/devices.txt"
T 60 "$bin" devices --json > "$out/devices.json" 2> "$out/devices.log"
step $? "$out/devices.log"

for b in vulkan cuda; do
  T $(( clock_s + 60 )) "$bin" clocks --backend "$b" --device all --seconds "$clock_s" --interval-ms 100 \
    --cross-check --cross-trials "${GPUS_CROSS_TRIALS:-200}" --json > "$out/clocks_all_$b.json" 2> "$out/clocks_all_$b.log"
  step $? "$out/clocks_all_$b.log"
  # Baseline + Loaded on every device, interleaved: 2 devices x 2 modes x
  # (frames + warm-up) x ~10 ms, plus each device's load calibration.
  T "${GPUS_RUN_S:-150}" "$bin" run --backend "$b" --device all --mode latency --frames "$frames" --blocks 5 \
    --warmup 100 --seed 1 --interval-ms 8-12 --per-frame --out "$out/run_all_$b.json" > "$out/run_all_$b.txt" 2>&1
  step $? "$out/run_all_$b.txt"
done
# The control for the turn warm-up (on by default with several devices):
# the same Vulkan run without it (without it, Loaded frames at a turn's
# start can be several times slower and a backlog builds).
if [[ ${GPUS_NO_TURN_WARMUP:-1} == 1 ]]; then
  T "${GPUS_RUN_S:-150}" "$bin" run --backend vulkan --device all --mode latency --frames "$frames" --blocks 5 \
    --warmup 100 --seed 1 --interval-ms 8-12 --per-frame --turn-warmup-ms 0 \
    --out "$out/run_all_vulkan_no_turn_warmup.json" > "$out/run_all_vulkan_no_turn_warmup.txt" 2>&1
  step $? "$out/run_all_vulkan_no_turn_warmup.txt"
fi

if [[ -n $cuda_tests && -x $cuda_tests ]]; then
  T 120 "$cuda_tests" --gtest_filter='CudaCrossCheck.*' --gtest_output=json:"$out/cross_check_cuda_tests.json" \
    > "$out/cross_check_cuda_tests.txt" 2>&1
  step $? "$out/cross_check_cuda_tests.txt"
fi
exit $status
