#!/usr/bin/env bash
# Packs what a present run against an Xvfb *with GLX* needs on the GPU
# machine into one compressed file, .presentglx/pack.tar.xz (carry
# [".presentglx"] alone: with .devbin it is over the carry limit):
#   bin/    the latlab binary (stripped, release)
#   lib/    its shared libraries (as bench/device/pack.sh picks them)
#   xvfb/   Debian 12's Xvfb, xkbcomp, XKB data and libraries (pack_xvfb.sh)
#   dri/    Mesa's swrast_dri.so, which Xvfb's GLX loads, with libLLVM and
#           the rest of its libraries (about 195 MB before compression)
# Used by bench/device/present_glx.sh (does NVIDIA's X11 WSI present to an
# Xvfb that has GLX?).
set -euo pipefail
b=${1:-build/release}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{bin,lib,dri}
strip -o "$work/bin/latlab" "$b/apps/latlab/latlab"
skip='/(libc|libm|libpthread|libdl|librt|libresolv|libnss[^/]*|ld-linux[^/]*|libstdc\+\+|libgcc_s|libvulkan|libEGL|libGL[A-Za-z]*|libOpenGL|libglvnd[^/]*|libcuda[^/]*|libcudart[^/]*|libcupti[^/]*)\.so'
ldd "$work/bin/latlab" | awk '$3 ~ /^\// {print $3}' | { grep -vE "$skip" || true; } |
  while read -r lib; do cp -Ln "$lib" "$work/lib/"; done
[[ -x .xvfb/bin/Xvfb ]] || bash bench/device/pack_xvfb.sh
cp -r .xvfb "$work/xvfb"
cp -L /usr/lib/x86_64-linux-gnu/dri/swrast_dri.so "$work/dri/"
ldd "$work/dri/swrast_dri.so" | awk '$3 ~ /^\// {print $3}' |
  { grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*|libstdc\+\+|libgcc_s)\.so' || true; } |
  while read -r lib; do cp -Ln "$lib" "$work/dri/"; done
mkdir -p .presentglx
tar cf - -C "$work" . | xz -T2 -9 > .presentglx/pack.tar.xz
ls -la .presentglx/pack.tar.xz
