#!/usr/bin/env bash
# CUDA timing against CUPTI on the GPU machine, from binaries built elsewhere (bench/device/pack.sh
# -> .devbin) or in a build dir: the CUDA tests, the CUPTI tests, the Vulkan
# tests (with LATLAB_BINARY), cuda_timing (latlab stamps, fused stamps, events
# vs CUPTI; cost per zone edge) and cuda_globaltimer (%globaltimer vs the SM
# clock and the host clock). Steps run one after another (one process on the
# GPU at a time); each is bounded by timeout.
#
#   BIN=.devbin OUT=/tmp/out bench/device/cupti.sh
#   env: BIN (default .devbin), OUT (default build/device-cupti), REPS (200),
#        GLOBALTIMER_S (120), TIMING_S (420: bound on cuda_timing)
# Exit status: 1 if a step failed or timed out (each step's rc is in its file).
set -u
cd "$(dirname "$0")/../.."
B=$(realpath "${BIN:-.devbin}")
out="${OUT:-build/device-cupti}"; mkdir -p "$out"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}"; mkdir -p -m 700 "$XDG_RUNTIME_DIR"
# libcupti: carried in $B/lib by pack.sh, else the toolkit's.
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
status=0
step() {  # step NAME SECONDS CMD...: output in $out/NAME.txt, rc appended
  local name=$1 s=$2; shift 2
  echo "== $(date -u +%T) $name (<= ${s}s)"
  timeout -k 5 "$s" "$@" > "$out/$name.txt" 2>&1; local rc=$?
  echo "rc=$rc" >> "$out/$name.txt"; tail -3 "$out/$name.txt"
  [[ $rc -eq 0 ]] || status=1
}
{ date -u; git rev-parse HEAD 2>/dev/null; nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv; } > "$out/machine.txt" 2>&1
step cuda_tests 240 env LATLAB_BINARY="$B/latlab" "$B/latlab_cuda_tests" --gtest_output="xml:$out/cuda_tests.xml"
if [[ -x $B/latlab_cupti_tests ]]; then
  step cupti_tests 120 "$B/latlab_cupti_tests" --gtest_output="xml:$out/cupti_tests.xml"
else
  echo "latlab_cupti_tests missing (built without CUPTI?)" > "$out/cupti_tests.txt"; status=1
fi
step vulkan_tests 120 env LATLAB_BINARY="$B/latlab" "$B/latlab_vulkan_tests" --gtest_output="xml:$out/vulkan_tests.xml"
step cuda_timing "${TIMING_S:-420}" "$B/cuda_timing" --reps "${REPS:-200}"
step cuda_globaltimer $(( ${GLOBALTIMER_S:-120} + 60 )) "$B/cuda_globaltimer" --seconds "${GLOBALTIMER_S:-120}" --csv "$out/globaltimer.csv"
gzip -f "$out/globaltimer.csv" 2>/dev/null
echo "cupti.sh: exit $status; outputs in $out"
exit $status
