#!/usr/bin/env bash
# On the GPU machine: several queues in one profile.
#   * `latlab devices --json`: the queue families and their valid bits;
#   * `latlab profile --queues all` (--json, and text with a trace): the
#     reference frame spread over one queue per family that can time
#     (upload on a transfer family, async compute on a compute family behind
#     a semaphore, graphics on the context's queue; other timing families get
#     a timestamps-only "cmdbuf marker", which exercises 32-bit wrap on the
#     H200's family 3); every zone named with its queue, a track per queue;
#   * the same with --validation when the layer is carried (VK_LAYER_PATH);
#   * `latlab profile --queues all --device D` for every Vulkan device index
#     the listing shows (a 2-GPU machine: one profile per GPU), then
#     `--device all` (every device in turn, one trace with a group per device).
# Every step is bounded by `timeout`. Needs LATLAB_BINARY (default
# .devbin/latlab). Output under $OUT: devices.json, queues_<d>.json/.txt,
# queues_<d>_trace.json, queues_all_devices.json (+ _trace.json),
# queues_validation.txt, summary.txt (python3).
#   OUT=/tmp/o bench/device/queues.sh        FRAMES=600 bench/device/queues.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
L=${LATLAB_BINARY:-$PWD/.devbin/latlab}
out=${OUT:-build/device-queues/out}
mkdir -p "$out"
frames=${FRAMES:-300}
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
T() { local s=$1; shift; timeout -k 5 "$s" "$@"; }

echo "== $(date -u +%T) devices"
T 60 "$L" devices --json > "$out/devices.json" 2> "$out/devices.err"; echo "rc=$?" >> "$out/devices.err"
T 60 "$L" devices > "$out/devices.txt" 2>&1

# Vulkan device indices from the listing (0 when it cannot be read).
indices=$(python3 - "$out/devices.json" 2>/dev/null <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
v = j.get("devices", []) if isinstance(j, dict) else []
print(" ".join(str(d["index"]) for d in v if d.get("backend") == "vulkan" and "index" in d))
PY
)
[[ -z ${indices// } ]] && indices=0

for d in $indices; do
  echo "== $(date -u +%T) profile --queues all --device $d"
  T 180 "$L" profile --queues all --device "$d" --frames "$frames" --json \
    > "$out/queues_$d.json" 2> "$out/queues_$d.err"; echo "rc=$?" >> "$out/queues_$d.err"
  T 180 "$L" profile --queues all --device "$d" --frames "$frames" \
    --trace "$out/queues_${d}_trace.json" > "$out/queues_$d.txt" 2>&1; echo "rc=$?" >> "$out/queues_$d.txt"
done
echo "== $(date -u +%T) profile --queues all --device all"
T 300 "$L" profile --queues all --device all --frames "$frames" --json \
  --trace "$out/queues_all_devices_trace.json" > "$out/queues_all_devices.json" 2> "$out/queues_all_devices.err"
echo "rc=$?" >> "$out/queues_all_devices.err"
echo "== $(date -u +%T) profile --queues all --validation"
T 180 "$L" profile --queues all --frames 60 --validation > "$out/queues_validation.txt" 2>&1
echo "rc=$?" >> "$out/queues_validation.txt"

command -v python3 >/dev/null || exit 0
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import glob, json, os, sys
out = sys.argv[1]
for path in sorted(glob.glob(os.path.join(out, "queues_*.json"))):
    if path.endswith("_trace.json"): continue
    try: doc = json.load(open(path))
    except Exception as e: print(os.path.basename(path), "unreadable:", e); continue
    for j in doc.get("devices", [doc]):
      if j.get("error"): print(f"{os.path.basename(path)}: {j.get('device_selector')} failed: {j['error']}"); continue
      print(f"{os.path.basename(path)}: {j.get('device')}  {j.get('host_mapping')}")
      for q in j.get("queues", []):
          print(f"  family {q['family']} ({q['flags']}), {q['valid_bits']} bits: {', '.join(q['roles'])};"
                f" zones ok {q['counters']['zones_ok']}, invalid {q['counters']['zones_invalid']}")
      for r in j.get("roles", []):
          if r.get("note"): print(f"  {r['role']} on family {r['queue_family']}: {r['note']}")
      for u in j.get("queue_families_unavailable", []): print(f"  unavailable {u['name']}: {u['reason']}")
      for o in j.get("overlap", []):
          print(f"  overlap {o['role']} with {o['with']}{' (same queue)' if o['same_queue'] else ''}:"
                f" {o['frames_overlapping']} of {o['frames']} frames, avg {o['avg_overlap_ms']} ms")
      so = j.get("semaphore_order") or {}
      print(f"  semaphore order: async began before upload ended in {so.get('async_began_before_upload_ended')}"
            f" of {so.get('frames')} frames (tolerance {so.get('tolerance_ns')} ns)")
      for z in j.get("zones", []):
          if z.get("command_buffer"):
              print(f"  {z['queue']}: {z['zone']} avg {z['avg_ms']} ms p95 {z['p95_ms']} ms")
PY
