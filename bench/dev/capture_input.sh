#!/usr/bin/env bash
# `latlab capture --input` on programs nobody here changed (docs/capture.md,
# "Input to photon"): xterm in reaction mode and glxgears with keys
# injected, N inputs each (default 1000, 8-12 ms apart, seed 1), under
# whatever $DISPLAY is (run it in xvfb-run). Prints, per program, the load
# average before it, the counts, the injector's lateness and its timer's,
# and each input figure (p50 / p90 / p99 / max in us); the results and the
# per-input CSVs stay in OUT. The same inputs, seed and interval give the
# same schedule each run.
#   xvfb-run -a -s "-screen 0 640x480x24" bench/dev/capture_input.sh [N]
#   LATLAB=build/release/apps/latlab/latlab OUT=/tmp/latlab-capture-input
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-1000}
bin=${LATLAB:-build/release/apps/latlab/latlab}
out=${OUT:-/tmp/latlab-capture-input}
mkdir -p "$out"
run() {
  local name=$1
  shift
  echo "== $name: load average $(cut -d' ' -f1-3 /proc/loadavg)"
  "$bin" capture --out "$out/$name.json" --inputs-csv "$out/$name.inputs.csv" \
    --input key:x --inputs "$n" --terminate "$@" >"$out/$name.program.txt" \
    2>"$out/$name.latlab.txt" || true # the exit code is the program's (SIGTERM: 143)
  python3 - "$out/$name.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
i = j["input"]
print(f"  sent {i['sent']}, seen {i['seen']}, assigned {i['assigned']}, not assigned {i['not_assigned']}, "
      f"reactions {i['reactions']}, timer slack {i['timer_slack_ns']} ns, frames {j['frames']}")
def line(name, d):
    if d["count"] == 0:
        print(f"  {name:26s} none ({d['missing']} missing)")
    else:
        print(f"  {name:26s} p50 {d['p50']:9.1f}  p90 {d['p90']:9.1f}  p99 {d['p99']:9.1f}  max {d['max']:9.1f}  ({d['count']})")
line("injector_lateness", i["injector_lateness"])
line("timer_lateness", i["timer_lateness"])
for name, d in i["figures"].items():
    line(name, d)
if j["figures"].get("between_presents", {}).get("count"):
    line("between_presents", j["figures"]["between_presents"])
PY
}
run xterm --input-reaction -- xterm -e cat
LIBGL_ALWAYS_SOFTWARE=1 run glxgears -- glxgears
