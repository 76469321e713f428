#!/usr/bin/env bash
# Memory of a long `latlab capture`: a fake frame source
# (testbed/fake_frame_source.cpp: frame and submission records through the
# real socket and record format, no GPU) presents FPS frames a second for
# SECONDS, captured with every output on (--out, --report, --frames-csv,
# --submits-csv, --presentmon-csv); latlab's VmRSS, open fds and threads are
# sampled every SAMPLE_S seconds. Checks, on the samples:
#   - bench/soak_check.awk (the soak's: RSS median from 10-30 % of the run to
#     the last fifth within 10 MB, fds and threads not growing);
#   - RSS at the first sample at or after 60 s against the last sample
#     (before the report): within LIMIT_KB (default 4096).
# Prints both, the frames captured, the records dropped and the files'
# sizes; exits 1 when a check fails.
#   bench/dev/capture_rss.sh [SECONDS] [FPS]      (default 600 s at 1000 frames/s)
#   PROGRAM="vkcube" xvfb-run -a bench/dev/capture_rss.sh 3600
#     captures PROGRAM instead (--seconds SECONDS --terminate; FPS unused)
#   LATLAB=build/release/apps/latlab/latlab SOURCE=build/release/bench/fake_frame_source
#   SAMPLE_S=5 LIMIT_KB=4096 OUT=/tmp/latlab-capture-rss (the samples and the
#   result stay there; the CSVs, 430 bytes a frame together, are removed)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-600}
fps=${2:-1000}
bin=${LATLAB:-build/release/apps/latlab/latlab}
source_bin=${SOURCE:-build/release/bench/fake_frame_source}
sample_s=${SAMPLE_S:-5}
limit_kb=${LIMIT_KB:-4096}
out=${OUT:-/tmp/latlab-capture-rss}
mkdir -p "$out"
rm -f "$out"/*.csv
if [[ -n ${PROGRAM:-} ]]; then
  read -r -a program <<<"$PROGRAM"
  run=(--seconds "$seconds" --terminate -- "${program[@]}")
else
  run=(-- "$source_bin" --fps "$fps" --seconds "$seconds")
fi
"$bin" capture --out "$out/r.json" --report "$out/r.html" --frames-csv "$out/frames.csv" \
  --submits-csv "$out/submits.csv" --presentmon-csv "$out/presentmon.csv" "${run[@]}" \
  >"$out/source.txt" 2>"$out/latlab.txt" &
pid=$!
source bench/proc_samples.sh
# Not the last seconds: the report is written there.
sample_process "$pid" "$out/samples.tsv" "$sample_s" "$seconds"
wait "$pid" && rc=0 || rc=$?
# --terminate ends PROGRAM with latlab's SIGTERM: its exit code is 128 + 15.
label="capture of the fake source at ${fps}/s"
if [[ -n ${PROGRAM:-} ]]; then
  label="capture of $PROGRAM"
  (( rc == 143 )) && rc=0
fi
ls -l "$out"/*.csv "$out/r.json" "$out/r.html" | awk '{print "  " $5 " bytes " $NF}'
grep -h "frames,\|fake_frame_source:\|observer" "$out/latlab.txt" "$out/source.txt" || true
awk -v rc="$rc" -v backend="$label" -f bench/soak_check.awk "$out/samples.tsv" && flat=1 || flat=0
read -r t1 r1 t2 r2 < <(awk -F'\t' 'NR > 1 && $1 >= 60 && !a { a = 1; t1 = $1; r1 = $2 }
  NR > 1 { t2 = $1; r2 = $2 } END { print t1 + 0, r1 + 0, t2 + 0, r2 + 0 }' "$out/samples.tsv")
echo "rss at ${t1} s: ${r1} kB; at ${t2} s: ${r2} kB; difference $((r2 - r1)) kB (limit ${limit_kb} kB)"
rm -f "$out"/*.csv
if (( t1 == 0 || r2 - r1 > limit_kb || flat == 0 )); then
  echo "FAIL"
  exit 1
fi
echo "OK"
