#!/usr/bin/env bash
# latlab_vulkan_tests whole, in one process, on the GPU machine, with the
# Vulkan leak counts: a driver resource leaked per context shows up only
# when many contexts are made in one process (vkCreateInstance then failing
# with VK_ERROR_INCOMPATIBLE_DRIVER while each suite passes alone).
#
# Each binary runs under libvk_leak_shim.so (testbed/leak/vk_leak_shim.cpp,
# packed by bench/device/pack.sh), which prints the process's open fds,
# memory mappings and threads at every vkCreateInstance and why one failed,
# and at exit what was made, destroyed and left alive per kind; the
# loader says why it could not load the driver (VK_LOADER_DEBUG=error,warn);
# a binary with the leak listener (testbed/leak/vk_leak_listener.hpp) also
# prints a [vkleak] line per test. Modes, each a whole run:
#   plain   as the round runs it;
#   pinned  the drivers are never unloaded (LATLAB_VKLEAK_PIN=1): if only
#           this run passes, the cost is per load of the driver, not per object;
#   nofile  the soft open-file limit raised to the hard one, and
#   halffd  halved: if the first failing context moves with the limit,
#           the process runs out of fds.
#
# Usage (the device machine, repository root, carry [".devbin", ".gl"]):
#   bench/device/vulkan_leak.sh [BINARY...]   (default .devbin/latlab_vulkan_tests)
#   VULKAN_LEAK_MODES="plain pinned nofile halffd" (default), VULKAN_LEAK_S=60 per run
# Output: $OUT/summary.txt and $OUT/vulkan_leak.tgz (every log).
set -u
here=$PWD
out=${OUT:-out}
mkdir -p "$out"
B=$here/.devbin
shim=$B/libvk_leak_shim.so
[[ -e $shim ]] || { echo "no $shim: build vk_leak_shim and run bench/device/pack.sh" >&2; exit 2; }
if compgen -G '.gl/*.deb' >/dev/null; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
[[ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]] &&
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
export VK_LAYER_PATH=$B/layers
export LATLAB_BINARY=$B/latlab  # the CLI tests run the packed CLI
export XDG_RUNTIME_DIR=/tmp/latlab-xdg; mkdir -p -m 700 $XDG_RUNTIME_DIR
bins=("$@")
[[ ${#bins[@]} -gt 0 ]] || bins=("$B/latlab_vulkan_tests")
R=$(mktemp -d)
{ date -u; uname -a; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ulimit -Sn; ulimit -Hn
  echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"; } > "$R/machine.txt" 2>&1

# One whole run: $1 binary, $2 mode; the log is $R/<binary>_<mode>.log.
run() {
  local bin=$1 mode=$2 log
  log=$R/$(basename "$bin")_$mode.log
  local -a env=(LD_PRELOAD="$shim" LATLAB_VKLEAK_TRACE=1 LATLAB_VKLEAK_REPORT=1 VK_LOADER_DEBUG=error,warn)
  [[ $mode == pinned ]] && env+=(LATLAB_VKLEAK_PIN=1)
  (
    [[ $mode == nofile ]] && ulimit -Sn "$(ulimit -Hn)"
    [[ $mode == halffd ]] && ulimit -Sn $(($(ulimit -Sn) / 2))
    echo "== $bin $mode, open-file limit $(ulimit -Sn)"
    timeout -k 5 "${VULKAN_LEAK_S:-60}" env "${env[@]}" "$bin"
    echo "rc=$?"
  ) > "$log" 2>&1
  summarize "$log"
}

# What each run says: the result, where vkCreateInstance first failed and
# what the process held there, what the loader said, what was left.
summarize() {
  local log=$1
  echo "== $(head -1 "$log" | cut -c4-)"
  grep -E '^rc=|^\[  PASSED  \]|^\[  FAILED  \] [0-9]+ test' "$log"
  echo "first failed test: $(grep -m1 -E '^\[  FAILED  \] [A-Za-z]' "$log" | cut -c14-)"
  echo "INCOMPATIBLE_DRIVER mentioned: $(grep -c INCOMPATIBLE_DRIVER "$log")"
  echo "instances made (fds, maps, threads at each), first three and last three:"
  grep -E '^vkleak: \+ instance' "$log" | sed -n '1,3p'
  grep -E '^vkleak: \+ instance' "$log" | tail -3
  grep -m3 -E '^vkleak: vkCreateInstance failed' "$log"
  echo "the loader's errors and warnings (the 6 most frequent):"
  grep -E '^(ERROR|WARNING)' "$log" | sort | uniq -c | sort -rn | head -6
  echo "tests that left fds, mappings or objects (first 8):"
  grep -E '^\[vkleak\] .*(fds [0-9]+ \(\+[1-9]|alive:)' "$log" | head -8
  grep -E '^vkleak: (at exit|.*destroyed (with|after))' "$log" | head -5
  echo
}

for bin in "${bins[@]}"; do
  for mode in ${VULKAN_LEAK_MODES:-plain pinned nofile halffd}; do
    run "$bin" "$mode"
  done
done | tee "$out/summary.txt"
cp "$out/summary.txt" "$R/"
tar czf "$out/vulkan_leak.tgz" -C "$R" .
