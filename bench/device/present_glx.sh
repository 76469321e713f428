#!/usr/bin/env bash
# On the GPU machine: NVIDIA's Vulkan X11 WSI against an Xvfb that has GLX
# (Mesa's swrast in the server), from .presentglx/pack.tar.xz
# (bench/device/pack_present_glx.sh). Against an Xvfb without GLX a minimal
# xcb program can crash after "extension GLX missing on display"; latlab
# probes the surface in a child process and must report `present`
# unavailable rather than crash. Every step is bounded by `timeout`.
#   OUT=out bash bench/device/present_glx.sh
# Output in $OUT: xvfb.log, glx_check.txt, devices.txt, present_*.{txt,json}.
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"
here=$PWD
P=$(mktemp -d)
xz -dc .presentglx/pack.tar.xz | tar xf - -C "$P"
for f in .gl/*.deb; do [[ -e $f ]] && dpkg -x "$f" /; done; ldconfig
# Xvfb's GLX looks for swrast_dri.so in the DRI path it was built with.
mkdir -p /usr/lib/x86_64-linux-gnu/dri
cp -n "$P/dri/swrast_dri.so" /usr/lib/x86_64-linux-gnu/dri/
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export XDG_RUNTIME_DIR=/tmp/latlab-xdg; mkdir -p -m 700 $XDG_RUNTIME_DIR
X=$P/xvfb
[[ -x /usr/bin/xkbcomp ]] || cp "$X/bin/xkbcomp" /usr/bin/
LD_LIBRARY_PATH=$X/lib:$P/dri timeout -k 5 150 "$X/bin/Xvfb" :92 -screen 0 640x480x24 -nolisten tcp \
  +extension GLX -xkbdir "$X/share/xkb" > "$out/xvfb.log" 2>&1 &
xpid=$!; sleep 3
{ echo "Xvfb pid $xpid alive: $(kill -0 $xpid 2>/dev/null && echo yes || echo no)";
  ls -la /usr/lib/x86_64-linux-gnu/dri/; } > "$out/glx_check.txt" 2>&1
export LD_LIBRARY_PATH=$P/lib:${LD_LIBRARY_PATH:-}
L=$P/bin/latlab
timeout -k 5 60 env DISPLAY=:92 "$L" devices > "$out/devices.txt" 2>&1; echo "rc=$?" >> "$out/devices.txt"
timeout -k 5 90 env DISPLAY=:92 "$L" run --mode baseline --present --frames 200 --warmup 20 \
  --out "$out/present_baseline.json" > "$out/present_baseline.txt" 2>&1; echo "rc=$?" >> "$out/present_baseline.txt"
timeout -k 5 120 env DISPLAY=:92 "$L" run --mode latency --present --frames 300 --warmup 20 \
  --out "$out/present_latency.json" > "$out/present_latency.txt" 2>&1; echo "rc=$?" >> "$out/present_latency.txt"
kill $xpid 2>/dev/null; wait $xpid 2>/dev/null
echo "done" >> "$out/glx_check.txt"
