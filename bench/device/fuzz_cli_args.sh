#!/usr/bin/env bash
# A 1-million-execution record of fuzz_cli_args on a machine with
# many cores (the GPU machine's 16 host cores; no GPU is used): N independent
# libFuzzer processes (default 16), each with its own -seed, its own copy of
# the seed corpus and its own scratch directory (the target makes one per
# process when FUZZ_CLI_DIR is unset), each bounded by S seconds (default
# 450). On the 2-core dev VM the target runs at 73-160 executions/s: 1M
# there takes hours. ASan's allocation stacks and malloc fill are off
# (malloc_context_size=0, max_malloc_fill_size=0): detection is unchanged,
# the reports name fewer allocation frames, the run is about 1.5x faster.
# Binary: .devbin/fuzz_cli_args from `make fuzz`'s build (preset fuzz),
# stripped, with the shared libraries it needs in .devbin/lib; the loaders
# from .gl (bench/device/fetch_gl.sh). Output under $OUT: call3.tgz (every
# process's log and any artifact) and total.txt (executions summed, exit
# codes, artifacts counted).
#   OUT=/tmp/o bash bench/device/fuzz_cli_args.sh        N=4 S=60 ...
set -u
here=$PWD
if compgen -G ".gl/*.deb" > /dev/null && [[ $(id -u) == 0 ]]; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
fi
export LD_LIBRARY_PATH=$here/.devbin/lib:${LD_LIBRARY_PATH:-}
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:malloc_context_size=0:max_malloc_fill_size=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
R=$(mktemp -d); N=${N:-16}; S=${S:-450}
{ date -u; nproc; grep -m1 'model name' /proc/cpuinfo; echo "ASAN_OPTIONS=$ASAN_OPTIONS"; echo "N=$N S=$S"; } > "$R/machine.txt"
for k in $(seq 1 "$N"); do
  mkdir -p "$R/corpus_$k" && cp bench/fuzz/corpus/cli_args/* "$R/corpus_$k/"
  ( timeout -k 5 $((S + 30)) "$here/.devbin/fuzz_cli_args" -seed="$k" -max_total_time="$S" -print_final_stats=1 \
      -dict=bench/fuzz/cli_args.dict -close_fd_mask=3 -artifact_prefix="$R/art_${k}_" "$R/corpus_$k" > "$R/fuzz_$k.log" 2>&1
    echo "rc=$?" >> "$R/fuzz_$k.log" ) &
done
wait
grep -h "stat::number_of_executed_units" "$R"/fuzz_*.log | awk '{s+=$2} END {print "total executions:", s}' | tee "$R/total.txt"
grep -h "^rc=" "$R"/fuzz_*.log | sort | uniq -c | tee -a "$R/total.txt"
ls "$R" | grep -c '^art_' | sed 's/^/artifacts: /' | tee -a "$R/total.txt"
rm -rf "$R"/corpus_*
tar czf "$OUT/call3.tgz" -C "$R" .
cp "$R/total.txt" "$OUT/"
