#!/usr/bin/env python3
"""Where timing a submission costs a program, from a capture's submissions
CSV (latlab capture --submits-csv F.csv): the driver's time in the
program's vkQueueSubmit (cpu_end - cpu_start - layer_cpu) and the time to
the program's next submission, for timed submissions (no_span 0) against
untimed ones (no_span 7, the span budget's), and the same interval L
submissions later (a program that waits for its submissions pays a span's
device time in a later wait).
  python3 bench/submit_costs.py F.csv [F2.csv ...]
The first SKIP (default 64) submissions are left out (pipelines built)."""
import csv
import os
import statistics
import sys

skip = int(os.environ.get("SKIP", "64"))


def report(path):
    rows = list(csv.DictReader(open(path)))[skip:]
    rows = [r for r in rows if r["no_span"] in ("0", "7")]
    if len(rows) < 32:
        print(f"{path}: {len(rows)} timed or budgeted submissions, too few")
        return
    timed = [r["no_span"] == "0" for r in rows]
    start = [int(r["cpu_start_ns"]) for r in rows]
    driver = [(int(r["cpu_end_ns"]) - s - int(r["layer_cpu_ns"])) / 1e3 for r, s in zip(rows, start)]
    n_t, n_u = sum(timed), len(timed) - sum(timed)
    print(f"{path}: {n_t} timed, {n_u} untimed submissions")
    if n_t == 0 or n_u == 0:
        return

    def split(values):
        t = [v for v, k in zip(values, timed) if k]
        u = [v for v, k in zip(values, timed) if not k]
        return t, u

    t, u = split(driver)
    print(f"  driver time in the submit: timed median {statistics.median(t):.1f} us, "
          f"untimed {statistics.median(u):.1f} us (difference {statistics.median(t) - statistics.median(u):+.1f})")
    for lag in range(0, 3):
        gaps = [(start[i + lag + 1] - start[i + lag]) / 1e3 for i in range(len(rows) - lag - 1)]
        t = [g for i, g in enumerate(gaps) if timed[i]]
        u = [g for i, g in enumerate(gaps) if not timed[i]]
        print(f"  interval {lag} submissions after: timed mean {statistics.mean(t):.1f} us, untimed "
              f"{statistics.mean(u):.1f} (difference {statistics.mean(t) - statistics.mean(u):+.1f}); "
              f"medians {statistics.median(t):.1f} / {statistics.median(u):.1f}")


for p in sys.argv[1:]:
    report(p)
