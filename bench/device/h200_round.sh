#!/usr/bin/env bash
# One batched round on the GPU machine (device tool), from binaries built on
# the development machine and carried in .devbin/ (bench/device/pack.sh),
# with the GL and Vulkan loader packages carried in .gl/ (made once on the
# development machine by bench/device/fetch_gl.sh).
# Steps run one after another: nothing else uses the GPU while one measures
# (a second process on the GPU time-slices it and spoils timings).
# Everything lands in $OUT/round.tgz (the tool returns at most 8 files).
#   ROUND_STEPS="vulkan load latency loaded profile clocks" bench/device/h200_round.sh
# Step queues (bench/device/queues.sh): profile --queues all on every Vulkan device.
# Further steps, by name only: e2e (the CLI's tests, latlab_e2e_tests, with the
# packed CLI, capture layer, GL interposer and GL swap probe; what needs vkcube,
# glxgears, Xvfb or a browser skips there), cuda (the CUDA tests and cuda_vs_events),
# profiler_cuda (bench/device/profiler_cuda.sh: the profiler on CUDA), gl
# (bench/device/gl.sh: OpenGL through EGL), present (needs .xvfb from bench/device/pack_xvfb.sh),
# cupti (bench/device/cupti.sh: CUDA, CUPTI and Vulkan tests, cuda_timing,
# the 2-minute %globaltimer probe; about 12 minutes at most).
# lean (bench/device/lean.sh: measured vs reference path, allocations, zone cost).
# loaded_runs (bench/dev/loaded_runs.sh: Loaded run after run, LOADED_RUNS), capture
# (bench/device/capture.sh and capture_gl.sh: the layer and the GL interposer),
# capture_replay (bench/device/capture_replay.sh and capture_fps.sh: what capture
# costs a gfxreconstruct replay and latlab's Performance mode; needs
# .devbin/gfxrecon-replay and .devbin/cube3000.gfxr; CAPTURE_REPLAY_ALL=1 adds the
# replay with every submission timed, CAPTURE_FPS=0 leaves out capture_fps.sh,
# SUBMITS_CSV=1 adds each capture's submissions CSV and bench/submit_costs.py),
# bracket_variants (bench/bracket_variants.cpp: the ways of timing a submission, no latlab code),
# attach (bench/device/attach.sh: the attach path's zone cost, tests and examples).
# E2E_FILTER narrows the e2e step to a gtest filter.
# suites: every packed test binary (Vulkan, OpenGL, CUDA, CUPTI, threads, the
# profiler's protocol, e2e), each bounded, with its gtest XML and one line of
# counts in suites.txt (SUITES names a subset, SUITE_S bounds each).
# gpus (bench/device/gpus.sh: several GPUs: devices' physical ids, clocks and
# run with --device all, the two-device clock cross-check; kind nvidia-h200-x2).
set -u
here=$PWD
if [[ -f .devbin.txz ]]; then rm -rf .devbin; tar xJf .devbin.txz; fi  # pack.sh with PACK_XZ=1
compgen -G '.gl/*.deb' >/dev/null || echo "no .gl/*.deb: run bench/device/fetch_gl.sh on the development machine and carry .gl" >&2
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export LD_LIBRARY_PATH=$here/.devbin/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export VK_LAYER_PATH=$here/.devbin/layers
export XDG_RUNTIME_DIR=/tmp/latlab-xdg; mkdir -p -m 700 $XDG_RUNTIME_DIR
B=$here/.devbin
R=$(mktemp -d); steps=${ROUND_STEPS:-"vulkan load latency loaded profile clocks"}
log() { echo "== $(date -u +%T) $*" | tee -a "$R/round.log"; tar czf "$OUT/${ROUND_NAME:-round}.tgz" -C "$R" . 2>/dev/null; }
T() { local s=$1; shift; timeout -k 5 "$s" "$@"; }  # every step is bounded: a hang costs its budget, not the round
has() { [[ " $steps " == *" $1 "* ]]; }
cd "$R"

{ date -u; uname -a; nvidia-smi; nproc; ulimit -n; } > machine.txt 2>&1
"$B/latlab" devices > devices.txt 2>&1; "$B/latlab" devices --json > devices.json 2>&1

if has vulkan; then
  log "vulkan tests (one process, then one process per test)"
  export LATLAB_BINARY=$B/latlab  # the CLI tests run the packed binary
  T ${VULKAN_TEST_S:-45} "$B/latlab_vulkan_tests" > vulkan_tests.txt 2>&1; echo "rc=$?" >> vulkan_tests.txt
  if [[ -n ${VULKAN_PER_PROCESS:-} ]]; then
    for t in $("$B/latlab_vulkan_tests" --gtest_list_tests | awk '/^[^ ]/{s=$1} /^  /{print s $1}'); do
      T 20 "$B/latlab_vulkan_tests" --gtest_filter="$t" > one.txt 2>&1; rc=$?
      echo "$rc $t" >> vulkan_tests_per_process.txt
      [[ $rc -ne 0 ]] && cat one.txt >> vulkan_tests_per_process_failures.txt
    done
  fi
fi
if has suites; then
  log "every test suite"
  for t in ${SUITES:-vulkan opengl cuda cupti thread profiler_protocol e2e}; do
    x=$B/latlab_${t}_tests; [[ -x $x ]] || { echo "$t: not packed" >> suites.txt; continue; }
    T ${SUITE_S:-240} env LATLAB_BINARY=$B/latlab LATLAB_CAPTURE_LAYER_DIR=$B/capture_layer \
      LATLAB_CAPTURE_GL_DIR=$B/capture_layer LATLAB_GL_SWAP_PROBE=$B/latlab_gl_swap_probe \
      "$x" --gtest_output="xml:suite_$t.xml" > "suite_$t.txt" 2>&1; rc=$?
    echo "$t: rc=$rc $(grep -E '^\[  (PASSED|SKIPPED|FAILED) ' "suite_$t.txt" | tr '\n' ' ')" >> suites.txt
  done
  cat suites.txt
fi
if has e2e; then
  log "e2e tests"
  T ${E2E_TEST_S:-400} env LATLAB_BINARY=$B/latlab LATLAB_CAPTURE_LAYER_DIR=$B/capture_layer \
    LATLAB_CAPTURE_GL_DIR=$B/capture_layer LATLAB_GL_SWAP_PROBE=$B/latlab_gl_swap_probe \
    "$B/latlab_e2e_tests" --gtest_filter="${E2E_FILTER:-*}" > e2e_tests.txt 2>&1; echo "rc=$?" >> e2e_tests.txt
fi
if has cuda; then
  log "cuda tests"
  T ${CUDA_TEST_S:-150} env LATLAB_BINARY=$B/latlab "$B/latlab_cuda_tests" > cuda_tests.txt 2>&1; echo "rc=$?" >> cuda_tests.txt  # CLI tests run $B/latlab
  T ${CUDA_VS_EVENTS_S:-120} "$B/cuda_vs_events" --reps 200 > cuda_vs_events.txt 2>&1; echo "rc=$?" >> cuda_vs_events.txt
fi
if has cupti; then
  log "cupti: tests, cuda_timing, globaltimer ${GLOBALTIMER_S:-120}s"
  (cd "$here" && T ${CUPTI_S:-900} env BIN=$B OUT=$R/cupti GLOBALTIMER_S=${GLOBALTIMER_S:-120} bash bench/device/cupti.sh) > cupti_sh.txt 2>&1; echo "rc=$?" >> cupti_sh.txt
fi
if has load; then
  log "calibrate-load"
  for args in "--backend vulkan" "--backend vulkan --form fragment" "--backend cuda"; do
    n=$(echo $args | tr ' -' '_' | tr -s _)
    for rep in 1 2; do
      T 15 /usr/bin/time -f "wall %e s" "$B/latlab" calibrate-load $args --json > "load${n}_$rep.json" 2> "load${n}_$rep.log"
    done
  done
fi
if has latency; then
  log "latency baseline + bare loop"
  (cd "$here" && T ${LATENCY_S:-130} env LATLAB_BINARY=$B/latlab OUT=$R bash bench/device/latency.sh ${LATENCY_FRAMES:-1500}) > latency_sh.txt 2>&1
fi
if has loaded; then
  log "baseline + loaded"
  for b in vulkan cuda; do
    T ${LOADED_S:-50} "$B/latlab" run --backend $b --mode latency --frames ${LOADED_FRAMES:-1000} --blocks 5 --warmup 100 --seed 1 \
      --out loaded_$b.json --frames-csv loaded_frames_$b.csv > loaded_$b.txt 2>&1; echo "rc=$?" >> loaded_$b.txt
  done
  T 20 "$B/latlab" run --backend vulkan --mode performance --out perf_vulkan.json > perf_vulkan.txt 2>&1
fi
if has profile; then
  log "profile"
  T 35 "$B/latlab_bench" --benchmark_filter='Profiler|Vulkan' --benchmark_repetitions=3 --benchmark_min_time=0.05 \
    --benchmark_report_aggregates_only=true > profiler_bench.txt 2>&1
  for c in ${PROFILE_COMPLEXITIES:-16 256}; do
    T 25 "$B/latlab" profile --frames 600 --size 1920x1080 --complexity $c --trace profile_c${c}_trace.json > profile_c$c.txt 2>&1
  done
fi
if has profiler_cuda; then
  log "profiler on CUDA"
  (cd "$here" && T ${PROFILER_CUDA_S:-300} env LATLAB_BINARY=$B/latlab LATLAB_CUDA_TESTS=$B/latlab_cuda_tests \
    OUT=$R/profiler_cuda bash bench/device/profiler_cuda.sh) > profiler_cuda_sh.txt 2>&1; echo "rc=$?" >> profiler_cuda_sh.txt
fi
if has lean; then
  log "lean: measured vs reference path"
  (cd "$here" && T ${LEAN_S:-540} env LATLAB_BIN_DIR=$B OUT=$R/lean bash bench/device/lean.sh) > lean_sh.txt 2>&1; echo "rc=$?" >> lean_sh.txt
fi
if has gpus; then
  log "several GPUs: devices, clocks and run --device all, cross-check (bench/device/gpus.sh)"
  (cd "$here" && T ${GPUS_S:-560} env LATLAB_BINARY=$B/latlab LATLAB_CUDA_TESTS=$B/latlab_cuda_tests \
    OUT=$R/gpus bash bench/device/gpus.sh) > gpus_sh.txt 2>&1; echo "rc=$?" >> gpus_sh.txt
fi
if has gl; then
  log "OpenGL through EGL (bench/device/gl.sh)"
  (cd "$here" && T ${GL_S:-560} env LATLAB_BINARY=$B/latlab LATLAB_GL_TESTS=$B/latlab_opengl_tests \
    OUT=$R/gl bash bench/device/gl.sh) > gl_sh.txt 2>&1; echo "rc=$?" >> gl_sh.txt
fi
if has clocks; then
  log "clocks ${CLOCKS_SECONDS:-180}s, window ${CLOCKS_WINDOW:-640}"
  for b in vulkan cuda; do
    T $(( ${CLOCKS_SECONDS:-180} + 15 )) "$B/latlab" clocks --backend $b --seconds ${CLOCKS_SECONDS:-180} --interval-ms 100 --window ${CLOCKS_WINDOW:-640} --json \
      > clocks-$b.json 2> clocks-$b.log &
  done
  wait
fi
if has loaded_runs; then
  log "Loaded run after run (bench/dev/loaded_runs.sh, RUNS=${LOADED_RUNS:-10})"
  (cd "$here" && T ${LOADED_RUNS_S:-240} env OUT=$R/loaded_runs RUNS=${LOADED_RUNS:-10} bash bench/dev/loaded_runs.sh "$B/latlab") \
    > loaded_runs_sh.txt 2>&1; echo "rc=$?" >> loaded_runs_sh.txt
fi
if has capture; then
  log "capture: the layer's cost and its GPU spans against latlab's markers (bench/device/capture.sh)"
  (cd "$here" && T ${CAPTURE_S:-150} env LATLAB_BINARY=$B/latlab LATLAB_CAPTURE_LAYER_DIR=$B/capture_layer OUT=$R/capture \
    bash bench/device/capture.sh ${CAPTURE_FRAMES:-2000}) > capture_sh.txt 2>&1; echo "rc=$?" >> capture_sh.txt
  log "capture: the GL interposer on NVIDIA's EGL (bench/device/capture_gl.sh)"
  (cd "$here" && T ${CAPTURE_GL_S:-120} env LATLAB_BINARY=$B/latlab GL_SWAP_PROBE=$B/latlab_gl_swap_probe \
    LATLAB_CAPTURE_GL_DIR=$B/capture_layer OUT=$R/capture_gl bash bench/device/capture_gl.sh) > capture_gl_sh.txt 2>&1
  echo "rc=$?" >> capture_gl_sh.txt
fi
if has capture_replay; then
  # The trace and Debian's gfxrecon-replay come in .devbin from
  # `REPLAY_TRACE=cube3000.gfxr bash bench/device/pack.sh`;
  # bench/device/capture_replay.sh says how the trace is made.
  log "capture_replay: a gfxreconstruct replay with and without capture, then latlab's Performance mode"
  # Under capture's default span budget, then (CAPTURE_REPLAY_ALL=1) timing every submission.
  (cd "$here" && T ${CAPTURE_REPLAY_S:-240} env GFXRECON=$B/gfxrecon-replay TRACE=$B/cube3000.gfxr \
    LATLAB_BINARY=$B/latlab LATLAB_CAPTURE_LAYER_DIR=$B/capture_layer OUT=$R/capture_replay \
    PAIRS=${CAPTURE_PAIRS:-7} bash bench/device/capture_replay.sh) > capture_replay_sh.txt 2>&1
  echo "rc=$?" >> capture_replay_sh.txt
  if [[ -n ${CAPTURE_REPLAY_ALL:-} ]]; then
    (cd "$here" && T ${CAPTURE_REPLAY_S:-240} env GFXRECON=$B/gfxrecon-replay TRACE=$B/cube3000.gfxr \
      LATLAB_BINARY=$B/latlab LATLAB_CAPTURE_LAYER_DIR=$B/capture_layer OUT=$R/capture_replay_all \
      CAPTURE_ARGS="--gpu-spans all" PAIRS=${CAPTURE_PAIRS:-7} bash bench/device/capture_replay.sh) > capture_replay_all_sh.txt 2>&1
    echo "rc=$?" >> capture_replay_all_sh.txt
  fi
  if [[ ${CAPTURE_FPS:-1} != 0 ]]; then
    (cd "$here" && T ${CAPTURE_FPS_S:-240} env LATLAB_BINARY=$B/latlab LATLAB_CAPTURE_LAYER_DIR=$B/capture_layer \
      OUT=$R/capture_fps PAIRS=${CAPTURE_PAIRS:-7} bash bench/device/capture_fps.sh) > capture_fps_sh.txt 2>&1
    echo "rc=$?" >> capture_fps_sh.txt
  fi
fi
if has bracket_variants; then
  # A plain Vulkan program (bench/bracket_variants.cpp): each way of timing a
  # waited-for submission, with the program's fill of 64 MiB and of 1 MiB.
  log "bracket_variants: what each way of timing a submission costs"
  for fill in 64 1; do
    T 120 "$B/bracket_variants" ${BRACKET_ROUNDS:-9} 400 $fill > bracket_variants_$fill.txt 2>&1
  done
fi
if has attach; then
  log "attach: zone cost on the attach path, attach tests, examples (bench/device/attach.sh)"
  (cd "$here" && T ${ATTACH_S:-400} env OUT=$R/attach bash bench/device/attach.sh) > attach_sh.txt 2>&1; echo "rc=$?" >> attach_sh.txt
fi
if has queues; then
  log "several queues (bench/device/queues.sh)"
  (cd "$here" && T ${QUEUES_S:-560} env LATLAB_BINARY=$B/latlab OUT=$R/queues bash bench/device/queues.sh) \
    > queues_sh.txt 2>&1; echo "rc=$?" >> queues_sh.txt
fi
if has present; then
  log "present: headless, then against a carried Xvfb (bench/device/pack_xvfb.sh -> .xvfb)"
  T 60 env -u DISPLAY "$B/latlab" run --mode baseline --present --frames 200 --out present_headless.json > present_headless.txt 2>&1; echo "rc=$?" >> present_headless.txt
  if [[ -x $here/.xvfb/bin/Xvfb ]]; then
    X=$here/.xvfb; [[ -x /usr/bin/xkbcomp ]] || cp "$X/bin/xkbcomp" /usr/bin/  # Xvfb runs /usr/bin/xkbcomp
    LD_LIBRARY_PATH=$X/lib PATH=$X/bin:$PATH timeout -k 5 200 "$X/bin/Xvfb" :91 -screen 0 640x480x24 -nolisten tcp -xkbdir "$X/share/xkb" > xvfb.log 2>&1 &
    xpid=$!; sleep 3
    for v in "" "--validation"; do
      n=present_xvfb${v//-/_}
      T 90 env DISPLAY=:91 "$B/latlab" run --mode baseline --present $v --frames 200 --out $n.json --frames-csv $n.csv > $n.txt 2>&1; echo "rc=$?" >> $n.txt
    done
    T 90 env DISPLAY=:91 "$B/latlab" run --mode latency --present --frames 300 --out present_xvfb_latency.json > present_xvfb_latency.txt 2>&1; echo "rc=$?" >> present_xvfb_latency.txt
    kill $xpid 2>/dev/null; wait $xpid 2>/dev/null
  fi
fi
log "done"
rm -f one.txt
tar czf "$OUT/${ROUND_NAME:-round}.tgz" .
cat round.log
