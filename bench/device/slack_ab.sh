#!/usr/bin/env bash
# Does the waiting thread's timer slack delay the blocking fence wake?
# Alternates `latlab run --mode baseline` as is (the consumer thread keeps
# the default 50 us slack) with the same run under a 1 ns slack inherited
# from the launching process (prctl PR_SET_TIMERSLACK is inherited by new
# threads and kept across execve), REPS times per backend, and prints
# gpu_end_to_fence_wake and fence_latency p50/p99 of each run.
#   OUT=/tmp/o REPS=3 bench/device/slack_ab.sh      (needs .devbin: pack.sh)
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${LATLAB_BIN_DIR:-$PWD/.devbin}
out=${OUT:-build/device-slack}; mkdir -p "$out"
reps=${REPS:-3}; frames=${FRAMES:-1000}
[[ -d $B/lib ]] && export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
slack1=(python3 -c 'import ctypes, os, sys
ctypes.CDLL(None).prctl(29, 1, 0, 0, 0)  # PR_SET_TIMERSLACK, 1 ns
os.execv(sys.argv[1], sys.argv[1:])')
for b in ${BACKENDS:-vulkan cuda}; do
  for rep in $(seq 1 "$reps"); do
    for v in default slack1; do
      pre=(); [[ $v == slack1 ]] && pre=("${slack1[@]}")
      timeout -k 5 $(( frames * 12 / 1000 + 60 )) "${pre[@]}" "$B/latlab" run --backend "$b" --mode baseline \
        --frames "$frames" --blocks 5 --warmup 100 --seed "$rep" --poll off \
        --out "$out/${b}_${v}_$rep.json" > "$out/${b}_${v}_$rep.txt" 2>&1
      echo "rc=$?" >> "$out/${b}_${v}_$rep.txt"
    done
  done
done
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import glob, json, os, sys
for p in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    try:
        t = json.load(open(p))["modes"]["baseline"]["total"]
        w = t["stages"]["gpu_end_to_fence_wake"]; f = t["fence_latency"]
        print(f"{os.path.basename(p)}: gpu_end_to_fence_wake p50 {w['p50']:.1f} p99 {w['p99']:.1f}"
              f" | fence_latency p50 {f['p50']:.1f} p99 {f['p99']:.1f} us")
    except Exception as e:
        print(os.path.basename(p), "unreadable:", e)
PY
