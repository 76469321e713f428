#!/usr/bin/env bash
# Fetches the GL and Vulkan loader packages (amd64 .deb files: libvulkan1,
# libegl1, libglvnd0, libopengl0, libgl1, libglx0, libgles2) into .gl/ at the
# repository root. The GPU machine has NVIDIA's drivers but not these
# loaders; the device recipes (h200_round.sh, present_glx.sh, and the
# set-up lines of h200_round.sh that the others reuse) unpack .gl/*.deb there
# with `dpkg -x`, and the GPU machine call carries .gl beside .devbin.
# Run on the Debian development machine, from anywhere in the repository:
#   bash bench/device/fetch_gl.sh
# Idempotent: a package whose .deb is in .gl already is not fetched again
# (FORCE=1 fetches all again). .gl/ is in .gitignore. The package lists go
# to a scratch directory (APT_LISTS, default /tmp/latlab-apt-amd64), never
# into the machine's own apt state.
set -euo pipefail
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
packages=(libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
mkdir -p .gl
[[ -n ${FORCE:-} ]] && rm -f .gl/*.deb
missing=()
for p in "${packages[@]}"; do
  compgen -G ".gl/${p}_*_amd64.deb" >/dev/null || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "fetch_gl: .gl has all ${#packages[@]} packages; nothing to do"
  exit 0
fi
lists=${APT_LISTS:-/tmp/latlab-apt-amd64}
mkdir -p "$lists/partial"
o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists="$lists")
# As root, apt downloads as its own user, which cannot write into .gl.
[[ $(id -u) -eq 0 ]] && o+=(-oAPT::Sandbox::User=root)
apt-get "${o[@]}" -qq update
(cd .gl && apt-get "${o[@]}" -qq download "${missing[@]}")
for p in "${packages[@]}"; do
  compgen -G ".gl/${p}_*_amd64.deb" >/dev/null || { echo "fetch_gl: $p missing after the download" >&2; exit 1; }
done
echo "fetch_gl: .gl has ${#packages[@]} packages:"; ls .gl
