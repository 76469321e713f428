#!/usr/bin/env bash
# Stalls of GL Loaded on the GPU machine: NVIDIA's first eglMakeCurrent on a
# new thread costs tens of ms, so the consumer prepares its thread before
# each block's schedule and the summary prints each block's preparation.
# Experiments that separate the possible causes, interleaved so a drift of
# the machine hits them alike (all Loaded, 500 frames after 100 warm-up, 8-12
# ms, seed 1, 5 blocks unless said, --poll off, 1920x1080 compute, the complexity the
# first run calibrates):
#   gl_default, gl_default2   latlab as it is (clock refresh every 1 s)
#   gl_norefresh              --clock-refresh-ms 0: no calibration beside the frames
#   gl_refresh100             --clock-refresh-ms 100: ten times as many refreshes
#   gl_oneblock               --blocks 1: no block boundary (a new consumer thread)
#   vk_default, vk_refresh100 the same on Vulkan
#   ctl_*                     bench/gl_stall_control, a plain EGL program with
#                             the same workload, fence and wait, no latlab code:
#     ctl_plain               nothing else (a stall here is the driver's)
#     ctl_release             eglMakeCurrent/release around every submit and wait
#     ctl_calib1000/100       a calibration thread like latlab's (second context,
#                             8 x {make current, 5 GL_TIMESTAMP reads, release})
#     ctl_calib100_keep       the same, its context kept current (reads only)
#     ctl_threads             a new waiting thread every 100 frames
#     ctl_latlab_like         all of latlab's habits at once
#     ctl_yield_nothing       ctl_plain with __GL_YIELD=NOTHING (the NVIDIA
#                             driver's waits spin instead of yielding)
#   strace_gl.txt.gz          strace -f -tt -T (ioctl, futex, sched_yield) of
#                             200 GL frames, when strace exists
# Every latlab run writes its JSON and --frames-csv; every control run its
# per-frame CSV and calibration windows. summary.txt compares them (python3).
# Bounded: each step by `timeout`, the whole under ~4 minutes (steps are
# skipped once BUDGET_S, default 230, has passed).
#   OUT=/tmp/o bench/device/gl_stall.sh      (binaries: $B, else .devbin)
# FRAMES (500), COMPLEXITY and SIZE (Loaded's; default: calibrated by the
# first run at 1920x1080, then used by every run, Vulkan's too) may be given.
set -uo pipefail
cd "$(dirname "$0")/../.."
here=$PWD
B=${B:-${LATLAB_BIN_DIR:-$here/.devbin}}
out=${OUT:-build/device-gl-stall/out}
mkdir -p "$out"
budget=${BUDGET_S:-230}
start_s=$SECONDS
# The H200 machine's set-up, as h200_round.sh does it (the loaders in .gl).
if [[ -d .gl ]] && compgen -G ".gl/*.deb" > /dev/null && [[ $(id -u) == 0 ]]; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
fi
[[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]] &&
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[[ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ]] &&
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[[ -d $B/lib ]] && export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
T() { local s=$1; shift; timeout -k 5 "$s" "$@"; }
left() { (( SECONDS - start_s < budget )); }
log() { echo "== $(date -u +%T) +$(( SECONDS - start_s ))s $*" | tee -a "$out/steps.log"; }

{ date -u; uname -a; grep -m1 'model name' /proc/cpuinfo; nproc
  nvidia-smi --query-gpu=name,driver_version,pstate,clocks.gr,clocks.mem --format=csv 2>&1
  echo "strace: $(command -v strace || echo none)  perf: $(command -v perf || echo none)"
  echo "B=$B"; ls -la "$B" 2>&1 | head -30; } > "$out/machine.txt" 2>&1

common=(--mode loaded --frames "${FRAMES:-500}" --warmup 100 --seed 1 --poll off)
# latlab run NAME BACKEND BLOCKS [ARGS...]
lrun() {
  local name=$1 backend=$2 blocks=$3; shift 3
  left || { log "skip $name (budget)"; return; }
  log "$name: latlab run --backend $backend ${common[*]} --blocks $blocks $*"
  T 45 "$B/latlab" run --backend "$backend" "${common[@]}" --blocks "$blocks" "$@" --out "$out/$name.json" \
    --frames-csv "$out/$name.csv" > "$out/$name.txt" 2>&1
  echo "rc=$?" >> "$out/$name.txt"
}
# control NAME [ARGS...]
crun() {
  local name=$1; shift
  left || { log "skip $name (budget)"; return; }
  log "$name: ${CTL_ENV:-} gl_stall_control $*"
  T 45 env ${CTL_ENV:-} "$B/gl_stall_control" --frames "${FRAMES:-500}" --warmup 100 --seed 1 --complexity "$complexity" \
    --size "$size" --csv "$out/$name.csv" --events "$out/${name}_events.csv" "$@" > "$out/$name.txt" 2>&1
  echo "rc=$?" >> "$out/$name.txt"
}

# The Loaded complexity and size: COMPLEXITY and SIZE when given (every run
# uses them), else what the first run calibrates, for every later run.
complexity=${COMPLEXITY:-0}
size=${SIZE:-1920x1080}
fixed=(--load-size "$size")
[[ $complexity -ge 1 ]] && fixed+=(--load-complexity "$complexity")
lrun gl_default gl 5 "${fixed[@]}"
if [[ $complexity -lt 1 ]]; then
  read -r complexity size < <(python3 - "$out/gl_default.json" <<'PY' 2>/dev/null || echo "0 $size"
import json, sys
w = json.load(open(sys.argv[1]))["modes"]["loaded"]["workload"]
print(w["complexity"], f'{w["width"]}x{w["height"]}')
PY
  )
  [[ ${complexity:-0} -ge 1 ]] 2>/dev/null || complexity=0  # 0: the control calibrates its own
  fixed=(--load-size "$size")
  [[ $complexity -ge 1 ]] && fixed+=(--load-complexity "$complexity")
fi
log "complexity $complexity size $size"

crun ctl_plain
lrun gl_norefresh gl 5 "${fixed[@]}" --clock-refresh-ms 0
crun ctl_calib1000 --calib-ms 1000
lrun gl_refresh100 gl 5 "${fixed[@]}" --clock-refresh-ms 100
crun ctl_calib100 --calib-ms 100
crun ctl_calib100_keep --calib-ms 100 --calib-keep-current
crun ctl_release --release-each-call
crun ctl_threads --thread-per 100
crun ctl_latlab_like --release-each-call --calib-ms 1000 --thread-per 100
lrun vk_default vulkan 5 "${fixed[@]}"
lrun vk_refresh100 vulkan 5 "${fixed[@]}" --clock-refresh-ms 100
lrun gl_oneblock gl 1 "${fixed[@]}"
if command -v strace > /dev/null && left; then
  log "strace of 200 GL frames"
  T 60 strace -f -tt -T -e trace=ioctl,futex,sched_yield,clock_nanosleep,poll,ppoll -o "$out/strace_gl.txt" \
    "$B/latlab" run --backend gl --mode loaded --frames 200 --blocks 2 --warmup 20 --seed 1 --poll off \
    "${fixed[@]}" --out "$out/strace_gl.json" --frames-csv "$out/strace_gl.csv" > "$out/strace_gl.log" 2>&1
  echo "rc=$?" >> "$out/strace_gl.log"
  # Per-thread counts and the slowest calls; the full trace compressed.
  { echo "calls by name:"; grep -oE '^[0-9]+ +[0-9:.]+ [a-z_0-9]+' "$out/strace_gl.txt" | awk '{print $3}' | sort | uniq -c
    echo "calls over 5 ms:"; grep -E '<(0\.00[5-9]|0\.0[1-9]|0\.[1-9]|[1-9])[0-9]*>$' "$out/strace_gl.txt" | head -200
  } > "$out/strace_gl_slow.txt" 2>&1
  gzip -f "$out/strace_gl.txt"
fi
lrun gl_default2 gl 5 "${fixed[@]}"
CTL_ENV=__GL_YIELD=NOTHING crun ctl_yield_nothing
log "done"

command -v python3 > /dev/null || exit 0
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import csv, glob, json, os, sys
out = sys.argv[1]
def g(d, *ks):
    for k in ks:
        if not isinstance(d, dict) or d.get(k) is None: return None
        d = d[k]
    return d
def f(x): return "-" if x is None else f"{x:.0f}"
def d(x): return f"{f(g(x, 'p50'))}/{f(g(x, 'p90'))}/{f(g(x, 'p99'))}/{f(g(x, 'max'))}"
print("latlab runs (us, p50/p90/p99/max):")
for name in ["gl_default", "gl_norefresh", "gl_refresh100", "gl_oneblock", "gl_default2", "vk_default", "vk_refresh100", "strace_gl"]:
    p = os.path.join(out, name + ".json")
    try: j = json.load(open(p))
    except Exception as e: print(f"{name}: no result ({e.__class__.__name__})"); continue
    t = g(j, "modes", "loaded", "total") or {}
    st = t.get("stages") or {}
    cm = j.get("clock_model") or {}
    bk = g(j, "diagnostics", "bookkeeping") or {}
    bm = g(bk, "modes", "loaded") or {}
    print(f"{name}: core {d(t.get('core_latency'))} behind {t.get('consumer_behind_frames')}"
          f" | submit_span {d(st.get('workload_submit_cpu_span'))} end->fence {d(st.get('gpu_end_to_fence_wake'))}"
          f" gpu {d(st.get('gpu_execution'))}")
    print(f"    clock: refreshes {cm.get('refreshes')} every {cm.get('refresh_interval_ns')} ns,"
          f" max cost {cm.get('max_refresh_cost_ns')} ns, refresh span {d(bk.get('span_duration'))};"
          f" frames overlapped {bm.get('frames_overlapped')}: core {d(bm.get('core_latency_overlapped'))}"
          f" vs clear {d(bm.get('core_latency_clear'))}")
    # Each block's consumer-thread preparation before its schedule (absent
    # in older results): the per-thread cost, out of the frames.
    prep = bk.get("thread_preparation_ns")
    if prep is not None:
        print("    thread preparation per block, ms:",
              " ".join("-" if x is None else f"{x/1e6:.1f}" for x in prep))
    # Stalls from the CSV: where each slow measured frame lost its time.
    try: rows = [r for r in csv.DictReader(open(os.path.join(out, name + ".csv"))) if r["block_kind"] == "measured"]
    except Exception: rows = []
    def v(r, k):
        try: return int(r[k])
        except Exception: return None
    stalls = []
    prev = None
    for r in rows:
        sub, e2f = v(r, "workload_submit_cpu_span_ns"), v(r, "gpu_end_to_fence_wake_ns")
        gap = None
        if prev is not None and v(prev, "fence_wake_ns") and v(r, "cpu_start_ns") and prev["block_index"] == r["block_index"]:
            if int(r["consumer_behind"]) == 1: gap = v(r, "cpu_start_ns") - v(prev, "fence_wake_ns")
        where = [(k, x) for k, x in (("submit", sub), ("end->fence", e2f), ("wake->next", gap)) if x is not None and x > 5_000_000]
        if where: stalls.append((r["frame_id"], where, r.get("bookkeeping_overlap_ns")))
        prev = r
    # Block boundaries: the last fence wake of a block to the next block's
    # first deadline and CPU start (by design: lead 20 ms + one interval).
    gaps = []
    for a, b in zip(rows, rows[1:]):
        if a["block_index"] != b["block_index"] and None not in (v(a, "fence_wake_ns"), v(b, "cpu_start_ns"), v(b, "deadline_ns")):
            gaps.append(f"{(v(b, 'deadline_ns') - v(a, 'fence_wake_ns'))/1e6:.1f}/{(v(b, 'cpu_start_ns') - v(a, 'fence_wake_ns'))/1e6:.1f}")
    if gaps: print("    block boundaries, ms from the last fence wake to the next deadline/cpu_start:", " ".join(gaps))
    print(f"    stalls > 5 ms in a stage: {len(stalls)}; with bookkeeping overlap: {sum(1 for s in stalls if s[2] not in (None, '', '0'))}")
    for s in stalls[:12]:
        print("      frame", s[0], ", ".join(f"{k} {x/1e6:.1f} ms" for k, x in s[1]), "overlap", s[2])
print("control runs (bench/gl_stall_control):")
for p in sorted(glob.glob(os.path.join(out, "ctl_*.txt"))):
    print(open(p).read().rstrip())
PY
