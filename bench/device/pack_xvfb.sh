#!/usr/bin/env bash
# Packs Debian 12's Xvfb for the GPU machine into .xvfb/ (carry it with
# `carry: [".devbin", ".gl", ".xvfb"]`): the server, xkbcomp and the XKB data
# it compiles its keymap from, and the shared libraries of both that the
# GPU machine may lack (not libc). GLX in the server needs Mesa's
# swrast_dri.so and libLLVM (over 100 MB): not carried, so this Xvfb lists
# no GLX unless the machine has its own Mesa DRI drivers. Used by the
# `present` step of bench/device/h200_round.sh.
set -euo pipefail
rm -rf .xvfb; mkdir -p .xvfb/bin .xvfb/lib .xvfb/share
cp /usr/bin/Xvfb /usr/bin/xkbcomp .xvfb/bin/
for bin in /usr/bin/Xvfb /usr/bin/xkbcomp; do
  ldd "$bin" | awk '$3 ~ /^\// {print $3}' | grep -vE '/(libc|libm|libpthread|libdl|ld-linux[^/]*)\.so' |
    while read -r lib; do cp -Ln "$lib" .xvfb/lib/; done
done
cp -r /usr/share/X11/xkb .xvfb/share/
du -sh .xvfb
