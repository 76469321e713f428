#!/usr/bin/env bash
# The latency benchmark (Baseline) on the GPU machine, with the cost of
# measuring made visible in the same run:
#   * `latlab run --bare`: after each measured block, a bare-loop block (the
#     same signal -> CPU step -> submit -> fence path with two time reads per
#     frame) and a raw clock_nanosleep block on the same deadlines;
#   * the memory check (bench/rss_check.sh, sim backend, 60 000 frames).
#
#   bench/device/latency.sh [FRAMES]    (measured frames per backend, default 2500)
#   LATLAB_BINARY=path/to/latlab bench/device/latency.sh   (use a prebuilt binary, no build)
#
# Targets (checked and printed at the end):
#   - instrumented latency within 5% of the bare loop: fence_latency p50 / bare p50 <= 1.05
#     (core_latency p50 / bare p50 is printed beside it: a different observer, GPU end
#     instead of fence wake, so it is expected below 1);
#   - generator timer lateness p99 within 10% of raw clock_nanosleep p99 (ratio <= 1.10);
#   - generator thread below 1% of a core;
#   - 60 000-frame run grows RSS by at most 10 MB.
# Output: $OUT (the device tool's folder) or build/device-latency/out: machine.txt,
# baseline_<backend>.json, run_<backend>.txt, frames_vulkan.csv, summary.txt, rss.txt (8 files).
# Takes about 2-4 min to build on 16 cores (none with LATLAB_BINARY), then ~85 s per
# backend + ~20 s memory check. The summary needs python3 (skipped without it; the JSON
# files hold everything).
set -uo pipefail
cd "$(dirname "$0")/../.."

frames="${1:-2500}"
build=build/device-latency
out="${OUT:-$build/out}"
mkdir -p "$out"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  uname -a
  grep -m1 'model name' /proc/cpuinfo
  echo "cpus: $(nproc)"
  nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.mem --format=csv 2>&1
  echo "timer slack of this shell: $(cat /proc/self/timerslack_ns 2>/dev/null || echo unknown) ns"
} | tee "$out/machine.txt"

if [ -n "${LATLAB_BINARY:-}" ] && [ -x "${LATLAB_BINARY}" ]; then
  bin="$LATLAB_BINARY"  # prebuilt (bench/device/h200_round.sh carries it in .devbin/)
else
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLATLAB_WERROR=ON \
        -DLATLAB_BUILD_TESTS=OFF -DLATLAB_BUILD_BENCH=OFF >"$build.configure.log" 2>&1 \
    || { echo "configure failed"; tail -30 "$build.configure.log"; exit 1; }
  cmake --build "$build" -j"$(nproc)" --target latlab >"$build.build.log" 2>&1 \
    || { echo "build failed"; tail -40 "$build.build.log"; exit 1; }
  bin="$build/apps/latlab/latlab"
fi
echo "binary: $bin" | tee -a "$out/machine.txt"

status=0
for backend in vulkan cuda; do
  csv_args=()
  [ "$backend" = vulkan ] && csv_args=(--frames-csv "$out/frames_vulkan.csv")
  "$bin" run --mode baseline --backend "$backend" --bare --frames "$frames" --blocks 5 --warmup 200 --seed 1 \
    --interval-ms 8-12 --out "$out/baseline_$backend.json" "${csv_args[@]}" 2>&1 | tee "$out/run_$backend.txt"
  rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 3 ]; then
    echo "$backend: backend unavailable (exit 3), skipped"
  elif [ "$rc" -ne 0 ]; then
    echo "$backend: latlab run failed (exit $rc)"; status=1
  fi
done

# Summary of the targets from the JSON results.
if command -v python3 >/dev/null; then
  python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, os, sys
out = sys.argv[1]
for backend in ("vulkan", "cuda"):
    path = os.path.join(out, f"baseline_{backend}.json")
    if not os.path.exists(path):
        print(f"{backend}: no result"); continue
    r = json.load(open(path))
    t = r["modes"]["baseline"]["total"]; d = r["diagnostics"]; c = d["comparison"] or {}
    def q(x, k): return x.get(k) if x else None
    print(f"== {backend}: {r['device']['name']} ({r['device']['driver']}), partial={r['partial']}")
    print(f"  clock model: available={r['clock_model']['available']} drift={r['clock_model']['drift_ppm']} ppm "
          f"bound={r['clock_model']['error_bound_ns']} ns pairs={r['clock_model']['pairs_used']}")
    for name, dist in list(t["stages"].items()) + [("core_latency", t["core_latency"]), ("fence_latency", t["fence_latency"]),
                                                   ("timer_lateness", t["timer_lateness"]), ("clock_map_error", t["clock_map_error"])]:
        print(f"  {name:28s} n={dist['count']:6d} miss={dist['missing']:5d} p50={q(dist,'p50')} p99={q(dist,'p99')} max={q(dist,'max')}")
    bare = d["bare_loop"]["latency"] if d["bare_loop"] else None
    raw = d["raw_sleep"]["lateness"] if d["raw_sleep"] else None
    print(f"  bare loop fence latency       p50={q(bare,'p50')} p99={q(bare,'p99')}")
    print(f"  raw clock_nanosleep lateness  p50={q(raw,'p50')} p99={q(raw,'p99')} cpu={d['raw_sleep']['cpu_fraction_of_core'] if d['raw_sleep'] else None}")
    f50 = c.get("fence_latency_p50_over_bare_p50"); c50 = c.get("core_latency_p50_over_bare_p50")
    lat = c.get("timer_lateness_p99_over_raw_p99"); cpu = d["generator"]["cpu_fraction_of_core"]
    verdict = lambda ok: "PASS" if ok else "FAIL"
    print(f"  target instrumented/bare: fence p50 ratio={f50} (core p50 ratio={c50}) -> {verdict(f50 is not None and f50 <= 1.05)}")
    print(f"  target lateness p99 vs raw: ratio={lat} -> {verdict(lat is not None and lat <= 1.10)}")
    print(f"  target generator cpu: {cpu} of a core -> {verdict(cpu is not None and cpu < 0.01)}")
    print(f"  timer slack: {r['settings']['timer_slack']}")
PY
fi

# Memory: 60 000 frames on the sim backend (accelerated clock).
bench/rss_check.sh "$bin" 2>&1 | tee "$out/rss.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "latency.sh: exit $status; outputs in $out"
exit $status
