#!/usr/bin/env bash
# How often `latlab compare` calls a change where there is none (A/A), and
# whether it still finds a real 10 % change, on this machine. Usage:
#   bench/compare_aa.sh [OUT]            (default OUT: build/compare-aa)
# Env: LATLAB (default build/dev/apps/latlab/latlab), PAIRS (A/A comparisons
# per backend, 20), RUNS (runs a side, 3), REAL (comparisons per real change,
# 5), BACKENDS ("sim vulkan"; vulkan is lavapipe where there is no GPU).
#
# A/A: for each backend, PAIRS comparisons; each runs RUNS A and RUNS B one
# after another, counterbalanced (A1 B1 B2 A2 A3 B3), same settings, a new
# schedule seed per run; compared at compare's default settings twice:
#   runs   - A1 A2 A3 --vs B1 B2 B3 (the unit is the run)
#   blocks - A1 B1 (one run a side; the unit is the block)
# Every row called improvement or regression is a false call.
# Real change (sim): REAL comparisons, run as above, where B
# is slower in one stage: gpu_execution +9.97 % (--complexity 100 -> 148 at
# 256x256: 63.107 -> 69.399 us, exact on the sim), and cpu_processing about
# +10 % (--cpu-iterations 20000 -> 22000, about 75 -> 82 us of real CPU work,
# so host-timed noise; the default 2000 is 7.5 us, where +10 % is below the
# default --min-effect-us of 1 us).
# Found: the stage's p50 row called a regression.
# Runs are small (240 frames in 12 blocks at 2-3 ms, Baseline only): on a
# 2-core machine the whole script takes about 10-15 minutes; run it with nice
# on a shared machine. Writes every result and comparison under OUT and the
# summary to OUT/summary.txt (needs python3). COMPARE_ONLY=1 compares the
# runs already under OUT again (e.g. with another latlab) without running any.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/compare-aa}
bin=${LATLAB:-build/dev/apps/latlab/latlab}
pairs=${PAIRS:-20}
runs=${RUNS:-3}
real=${REAL:-5}
backends=${BACKENDS:-sim vulkan}
common=(--mode baseline --frames 240 --blocks 12 --interval-ms 2-3)
sim=(run --backend sim "${common[@]}" --warmup 10 --size 256x256)
vulkan=(run --backend vulkan "${common[@]}" --warmup 20)
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
seed=0

# one_run DIR NAME ARGS...: one run, its result DIR/NAME.json.
one_run() {
  local dir=$1 name=$2
  shift 2
  seed=$((seed + 1))
  "$bin" "$@" --seed "$seed" --out "$dir/$name.json" >"$dir/$name.log" 2>&1 ||
    { echo "compare_aa: run $dir/$name failed:" >&2; tail -5 "$dir/$name.log" >&2; exit 1; }
}

# compare_group DIR [OPTION]: A1..An --vs B1..Bn over runs, and A1 against
# B1 over blocks, at default settings.
compare_group() {
  local dir=$1 extra=${2:-} i a=() b=() rc=0
  for ((i = 1; i <= runs; ++i)); do
    a+=("$dir/a$i.json")
    b+=("$dir/b$i.json")
  done
  # shellcheck disable=SC2086  # extra is one option or none
  "$bin" compare --json "${a[@]}" --vs "${b[@]}" $extra >"$dir/runs.json" 2>"$dir/runs.err" || rc=$?
  [[ $rc == 0 ]] || { echo "compare_aa: compare over runs exited $rc: $(cat "$dir/runs.err")" >&2; exit 1; }
  # shellcheck disable=SC2086
  "$bin" compare --json "${a[0]}" "${b[0]}" $extra >"$dir/blocks.json" 2>"$dir/blocks.err" || rc=$?
  [[ $rc == 0 ]] || { echo "compare_aa: compare over blocks exited $rc: $(cat "$dir/blocks.err")" >&2; exit 1; }
}

# group DIR "A ARGS" "B ARGS" [OPTION]: RUNS runs a side, then compare_group.
group() {
  local dir=$1 a_args=$2 b_args=$3 i
  mkdir -p "$dir"
  for ((i = 1; i <= runs; ++i)); do
    # A B, then B A: a drift of the machine's load falls on both sides.
    # shellcheck disable=SC2086  # the argument strings are split on purpose
    if ((i % 2)); then
      one_run "$dir" "a$i" $a_args
      one_run "$dir" "b$i" $b_args
    else
      one_run "$dir" "b$i" $b_args
      one_run "$dir" "a$i" $a_args
    fi
  done
  compare_group "$dir" "${4:-}"
}

started=$(date -u +%FT%TZ)
if [[ ${COMPARE_ONLY:-0} == 1 ]]; then
  # The runs of an earlier call, compared again (another latlab, other defaults).
  for dir in "$out"/aa-*/*/; do compare_group "${dir%/}"; done
  for dir in "$out"/real-*/*/; do compare_group "${dir%/}" --allow-different-settings; done
  started="$started (comparisons only; runs from $(cat "$out/started"))"
else
rm -rf "$out"
mkdir -p "$out"
echo "$started" >"$out/started"
for backend in $backends; do
  case $backend in
    sim) args="${sim[*]} --complexity 100" ;;
    vulkan) args="${vulkan[*]}" ;;
    *) echo "compare_aa: backend is sim or vulkan" >&2; exit 2 ;;
  esac
  for ((g = 1; g <= pairs; ++g)); do
    group "$out/aa-$backend/$g" "$args" "$args" ""
    echo "compare_aa: $backend A/A $g/$pairs done" >&2
  done
done
for ((g = 1; g <= real; ++g)); do
  group "$out/real-gpu/$g" "${sim[*]} --complexity 100" "${sim[*]} --complexity 148" \
    --allow-different-settings
  group "$out/real-cpu/$g" "${sim[*]} --complexity 100 --cpu-iterations 20000" \
    "${sim[*]} --complexity 100 --cpu-iterations 22000" --allow-different-settings
  echo "compare_aa: real change $g/$real done" >&2
done
fi

python3 - "$out" "$started" "$bin" <<'PY' | tee "$out/summary.txt"
import glob, json, os, sys
out, started, binary = sys.argv[1:4]
print(f"compare_aa: started {started}, {binary}, {os.cpu_count()} CPUs")
def load(path):
    with open(path) as f:
        return json.load(f)
def called(c):
    return [r for r in c["rows"] if r["call"] in ("improvement", "regression")]
for kind in sorted(glob.glob(os.path.join(out, "aa-*"))):
    backend = os.path.basename(kind)[3:]
    for unit in ("runs", "blocks"):
        comps = [load(p) for p in sorted(glob.glob(os.path.join(kind, "*", unit + ".json")))]
        false = [(r["series"], r["statistic"], r["relative"]) for c in comps for r in called(c)]
        with_any = sum(1 for c in comps if called(c))
        tested = sum(c["method"]["tested_rows"] for c in comps)
        rel = [abs(r["relative"]) * 100 for c in comps for r in called(c) if r["relative"] is not None]
        # The A/A spread: the largest |change| of any row whose adjusted p was below alpha.
        sig = [abs(r["relative"]) * 100 for c in comps for r in c["rows"]
               if r["p_adjusted"] is not None and r["p_adjusted"] < c["method"]["alpha"]
               and r["relative"] is not None]
        print(f"{backend} A/A over {unit}: {len(false)} false call(s) in {len(comps)} comparisons "
              f"({tested} tested rows; {with_any} comparison(s) with any)"
              + (f"; largest |change| called {max(rel):.1f} %" if rel else "")
              + (f"; largest |change| significant {max(sig):.1f} %" if sig else ""))
        for s, stat, r in false:
            print(f"    {s} {stat} {'-' if r is None else format(r * 100, '+.1f') + ' %'}")
for kind, series in (("real-gpu", "gpu_execution"), ("real-cpu", "cpu_processing")):
    for unit in ("runs", "blocks"):
        comps = [load(p) for p in sorted(glob.glob(os.path.join(out, kind, "*", unit + ".json")))]
        if not comps:
            continue
        rows = [r for c in comps for r in c["rows"] if r["series"] == series and r["statistic"] == "p50"]
        found = sum(1 for r in rows if r["call"] == "regression")
        others = sum(1 for c in comps for r in called(c) if r["series"] not in (series, "core_latency", "fence_latency"))
        rel = ", ".join("-" if r["relative"] is None else format(r["relative"] * 100, "+.1f") for r in rows)
        print(f"sim {series} slower, over {unit}: p50 regression found in {found}/{len(rows)} "
              f"(measured change %: {rel}); calls in other stages: {others}")
PY
