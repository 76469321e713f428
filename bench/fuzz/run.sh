#!/usr/bin/env bash
# Runs every libFuzzer target of build/fuzz for FUZZ_SECONDS each (default
# 60), starting from the committed seed corpus bench/fuzz/corpus/<name>/ and
# writing new inputs to a scratch corpus (never into the repository).
# FUZZ_RUNS=N runs N executions of each instead (the BENCHMARKS.md record).
# A crash, leak or UBSan report stops the run and exits non-zero; the input
# that caused it is kept in $FUZZ_ARTIFACTS (default build/fuzz/artifacts).
# FUZZ_TARGETS="cli_args ..." runs only those. cli_args works in an empty
# scratch directory of its own (its working directory and HOME; it must stay
# empty), with the commands' and options' names as its dictionary, and its
# stdout and stderr closed (every input prints help or an error).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=build/fuzz/bench/fuzz
seconds=${FUZZ_SECONDS:-60}
artifacts=${FUZZ_ARTIFACTS:-build/fuzz/artifacts}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
limit=(-max_total_time="$seconds")
[[ -n ${FUZZ_RUNS:-} ]] && limit=(-runs="$FUZZ_RUNS")
status=0
for target in ${FUZZ_TARGETS:-cli_values uid_pool result_reader cli_args}; do
  mkdir -p "$scratch/$target"
  extra=()
  if [[ $target == cli_args ]]; then
    mkdir -p "$scratch/cli_args_home"
    export FUZZ_CLI_DIR=$scratch/cli_args_home
    extra=(-dict=bench/fuzz/cli_args.dict -close_fd_mask=3)
  fi
  start=$SECONDS
  if "$bin/fuzz_$target" "${limit[@]}" "${extra[@]}" -print_final_stats=1 \
      -artifact_prefix="$artifacts/$target-" \
      "$scratch/$target" "bench/fuzz/corpus/$target" >"$scratch/$target.log" 2>&1; then
    echo "fuzz $target: ok, $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$scratch/$target.log" \
      | grep -o '[0-9]*$') executions in $((SECONDS - start)) s"
  else
    status=1
    echo "fuzz $target: FAILED (artifacts in $artifacts)"
    tail -40 "$scratch/$target.log"
  fi
done
exit $status
