#!/usr/bin/env bash
# `ctest -j2` of two built trees, alternating (A B A B ...), and the per-test
# times of the tests both have: was the suite slowed by the code, or did it
# grow? Measures whether a change keeps `make test` no slower.
#
#   bench/ctest_ab.sh OLD_TREE NEW_TREE [PAIRS]
#     OLD_TREE, NEW_TREE: worktrees with build/dev built (cmake --preset dev
#     && cmake --build --preset dev); PAIRS: alternations, default 2.
# Prints, per pair: each tree's wall time, test count and failures; the sum
# of per-test times of the tests in both, and of those whose test source is
# unchanged between the two commits (git diff --name-only -- tests). Run on
# a machine doing nothing else: it is a timing.
set -euo pipefail
old=$(realpath "$1"); new=$(realpath "$2"); pairs=${3:-2}
out=$(mktemp -d)
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
for i in $(seq 1 "$pairs"); do
  for side in old new; do
    tree=$old; [ "$side" = new ] && tree=$new
    start=$(date +%s.%N)
    (cd "$tree" && ctest --test-dir build/dev -j2 >"$out/$side-$i.log" 2>&1) || true
    end=$(date +%s.%N)
    echo "$side $i wall $(echo "$end - $start" | bc) s: $(grep -E 'tests (passed|failed)' "$out/$side-$i.log")"
  done
done
git -C "$new" diff --name-only "$(git -C "$old" rev-parse HEAD)" HEAD -- tests >"$out/changed.txt"
python3 - "$out" "$new" "$pairs" <<'PY'
import glob, os, re, sys
out, new, pairs = sys.argv[1], sys.argv[2], int(sys.argv[3])
changed = set(open(f"{out}/changed.txt").read().split())
sources = {os.path.relpath(f, new): open(f, errors="ignore").read()
           for f in glob.glob(f"{new}/tests/**/*.cpp", recursive=True)}
def times(path):
    d = {}
    for line in open(path):
        m = re.search(r"Test +#\d+: (\S+) .*?([0-9.]+) sec", line)
        if m: d[m.group(1)] = float(m.group(2))
    return d
def source_of(test):
    name = test.split(".")[-1].split("/")[0]
    for f, text in sources.items():
        if re.search(r"\b" + re.escape(name) + r"\b", text): return f
    return None
for i in range(1, pairs + 1):
    o, n = times(f"{out}/old-{i}.log"), times(f"{out}/new-{i}.log")
    both = [t for t in o if t in n]
    same = [t for t in both if source_of(t) and source_of(t) not in changed]
    so, sn = sum(o[t] for t in both), sum(n[t] for t in both)
    uo, un = sum(o[t] for t in same), sum(n[t] for t in same)
    print(f"pair {i}: {len(both)} tests in both: {so:.1f} -> {sn:.1f} s ({sn / so:.3f}x); "
          f"{len(same)} with unchanged sources: {uo:.1f} -> {un:.1f} s ({un / uo:.3f}x); "
          f"{len(n) - len(both)} tests only in new: {sum(v for t, v in n.items() if t not in o):.1f} s")
    for t in sorted(n, key=n.get, reverse=True)[:5]:
        print(f"   slowest in new: {t} {n[t]:.1f} s")
PY
echo "logs: $out"
