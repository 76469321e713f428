#!/usr/bin/env bash
# The GL interposer of `latlab capture` on the GPU machine's OpenGL (NVIDIA
# EGL, no display): testbed/gl_swap_probe.cpp swaps an EGL pbuffer N times,
# alone and under `latlab capture`, 5 runs each, and checks its GL/EGL state
# around every swap (exit 0: it held). Prints the interposer's own CPU time
# per swap (overhead.layer_cpu_per_present, measured inside it), the probe's
# eglSwapBuffers median alone and captured, and the GPU spans measured.
#
#   bench/device/capture_gl.sh [SWAPS]   (default 5000)
#   LATLAB_BINARY=.devbin/latlab GL_SWAP_PROBE=.devbin/latlab_gl_swap_probe \
#   LATLAB_CAPTURE_GL_DIR=.devbin/capture_layer bench/device/capture_gl.sh   (prebuilt, pack.sh)
# Output: $OUT or build/device-capture-gl/out: machine.txt, build.log,
# alone_K.txt, captured_K.{txt,json}, summary.txt. About 3 min to build on
# 16 cores, then seconds.
set -uo pipefail
cd "$(dirname "$0")/../.."
swaps="${1:-5000}"
build=build/device-capture-gl
out="${OUT:-$build/out}"
mkdir -p "$out"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
# NVIDIA's EGL where installed (else whatever GLVND picks: Mesa).
for f in /usr/share/glvnd/egl_vendor.d/10_nvidia.json /etc/glvnd/egl_vendor.d/10_nvidia.json; do
  [ -r "$f" ] && export __EGL_VENDOR_LIBRARY_FILENAMES="$f" && break
done
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  uname -a
  grep -m1 'model name' /proc/cpuinfo
  echo "cpus: $(nproc)"
  nvidia-smi --query-gpu=name,driver_version,pstate --format=csv 2>&1 | tail -n +2
  echo "EGL vendor file: ${__EGL_VENDOR_LIBRARY_FILENAMES:-default}"
  uptime
} >"$out/machine.txt"
bin="${LATLAB_BINARY:-}"
probe="${GL_SWAP_PROBE:-}"
if [ -z "$bin" ] || [ -z "$probe" ]; then
  timeout 400 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLATLAB_WERROR=ON \
    -DLATLAB_BUILD_TESTS=OFF -DLATLAB_BUILD_BENCH=OFF >"$out/build.log" 2>&1 &&
  timeout 400 cmake --build "$build" -j"$(nproc)" --target latlab LatlabGlCapture \
    >>"$out/build.log" 2>&1 &&
  timeout 120 c++ -O2 -std=c++20 testbed/gl_swap_probe.cpp -o "$build/gl_swap_probe" -lEGL \
    >>"$out/build.log" 2>&1 || { echo "build failed (build.log)"; tail -20 "$out/build.log"; exit 1; }
  bin="$build/apps/latlab/latlab"
  probe="$build/gl_swap_probe"
fi
for k in 1 2 3 4 5; do
  timeout 120 "$probe" "$swaps" >"$out/alone_$k.txt" 2>&1; echo "rc=$?" >>"$out/alone_$k.txt"
  timeout 120 "$bin" capture --out "$out/captured_$k.json" -- "$probe" "$swaps" \
    >"$out/captured_$k.txt" 2>&1; echo "rc=$?" >>"$out/captured_$k.txt"
done
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, re, sys
out = sys.argv[1]
def median_of(path):
    m = re.search(r"min (\d+) median (\d+)", open(path).read())
    return (int(m[1]), int(m[2])) if m else None
for k in range(1, 6):
    a, c = median_of(f"{out}/alone_{k}.txt"), median_of(f"{out}/captured_{k}.txt")
    rc = open(f"{out}/captured_{k}.txt").read().strip().splitlines()[-1]
    try:
        j = json.load(open(f"{out}/captured_{k}.json"))
    except Exception as e:
        print(f"run {k}: no result ({e}); probe {rc}"); continue
    o = j["overhead"]["layer_cpu_per_present"]
    src = j["sources"][0] if j["sources"] else {}
    print(f"run {k}: probe {rc}; eglSwapBuffers min/median ns alone {a}, captured {c}; "
          f"interposer own p50 {o['p50']:.3f} us min {o['min']:.3f} p99 {o['p99']:.3f}; "
          f"spans {j['submit_spans']}; device {src.get('device')}; clock {src.get('clock_method')}")
PY
