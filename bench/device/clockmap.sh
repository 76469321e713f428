#!/usr/bin/env bash
# On the GPU machine: the per-frame clock-map bound of a short run, whose
# frames are mapped after the run (interpolated between the run's
# calibration pairs, one taken at every block's end).
#   * REPS (default 3) alternations of vulkan, cuda:
#     `latlab run --mode baseline --frames 200 --blocks 2 --warmup 20`
#     (before the final mapping: clock_map_error p90 397-401 us in every such run);
#   * LONG=1 (default) one more run per backend of 1000 frames in 5 blocks
#     (--warmup 100), for comparison (before: p99 8 us).
# Every run is bounded by `timeout`. Binary: LATLAB_BINARY, else
# LATLAB_BIN_DIR/latlab (default .devbin/, bench/device/pack.sh), else built
# here (2-4 min on 16 cores).
# Output under $OUT (default build/device-clockmap/out): machine.txt,
# short_<backend>_<rep>.json/.txt, long_<backend>.json/.txt, summary.txt
# (python3: clock_map_error p50/p90/p99/max in us over the measured frames,
# and the clock model's frame mapping counts).
#   OUT=/tmp/o bench/device/clockmap.sh        REPS=5 LONG=0 bench/device/clockmap.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-build/device-clockmap/out}
reps=${REPS:-3}
long=${LONG:-1}
mkdir -p "$out"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
B=${LATLAB_BIN_DIR:-$PWD/.devbin}
[[ -d $B/lib ]] && export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T() { local s=$1; shift; timeout -k 5 "$s" "$@"; }

{ date -u; echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"; uname -a
  grep -m1 'model name' /proc/cpuinfo; nproc
  nvidia-smi --query-gpu=name,driver_version,pstate --format=csv 2>&1; } > "$out/machine.txt"

if [[ -n ${LATLAB_BINARY:-} && -x ${LATLAB_BINARY} ]]; then
  bin=$LATLAB_BINARY
elif [[ -x $B/latlab ]]; then
  bin=$B/latlab
else
  build=build/device-clockmap
  T 300 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLATLAB_WERROR=ON \
    -DLATLAB_BUILD_TESTS=OFF -DLATLAB_BUILD_BENCH=OFF > "$out/configure.log" 2>&1 \
    || { echo "configure failed"; tail -30 "$out/configure.log"; exit 1; }
  T 540 cmake --build "$build" -j"$(nproc)" --target latlab > "$out/build.log" 2>&1 \
    || { echo "build failed"; tail -40 "$out/build.log"; exit 1; }
  bin=$build/apps/latlab/latlab
fi
echo "binary: $bin" | tee -a "$out/machine.txt"

for rep in $(seq 1 "$reps"); do
  for b in vulkan cuda; do
    echo "== $(date -u +%T) $b short rep $rep"
    T 120 "$bin" run --backend "$b" --mode baseline --frames 200 --blocks 2 --warmup 20 --seed "$rep" \
      --out "$out/short_${b}_$rep.json" > "$out/short_${b}_$rep.txt" 2>&1
    echo "rc=$?" >> "$out/short_${b}_$rep.txt"
  done
done
if [[ $long == 1 ]]; then
  for b in vulkan cuda; do
    echo "== $(date -u +%T) $b long"
    T 180 "$bin" run --backend "$b" --mode baseline --frames 1000 --blocks 5 --warmup 100 --seed 1 \
      --out "$out/long_${b}.json" > "$out/long_${b}.txt" 2>&1
    echo "rc=$?" >> "$out/long_${b}.txt"
  done
fi

command -v python3 >/dev/null || { echo "no python3: see the JSON files"; exit 0; }
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import glob, json, os, sys
out = sys.argv[1]
def f(x): return "null" if x is None else f"{x:.3f}"
print("run                 frames  clock_map_error us:      p50      p90      p99      max | mapping       "
      "between outside block_end_pairs misfit_ns pairs")
for path in sorted(glob.glob(os.path.join(out, "short_*.json")) + glob.glob(os.path.join(out, "long_*.json"))):
    try:
        r = json.load(open(path))
    except Exception as e:
        print(f"{os.path.basename(path)}: unreadable ({e})"); continue
    e = r["modes"]["baseline"]["total"]["clock_map_error"]
    cm = r["clock_model"]
    print(f"{os.path.basename(path)[:-5]:20s}{e['count']:6d}  {'':19s}{f(e.get('p50')):>8s} {f(e.get('p90')):>8s} "
          f"{f(e.get('p99')):>8s} {f(e.get('max')):>8s} | {str(cm.get('frame_mapping')):13s} "
          f"{cm.get('frames_between_pairs')!s:>7s} {cm.get('frames_outside_pairs')!s:>7s} "
          f"{cm.get('block_end_pairs')!s:>15s} {cm.get('interpolation_misfit_ns')!s:>9s} {cm.get('pairs_accepted')}"
          f"{'  PARTIAL: ' + r['partial_reason'] if r.get('partial') else ''}")
PY
