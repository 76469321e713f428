# The soak's flatness check (bench/soak.sh), over its samples: a header line,
# then t_s, rss_kb, fds, threads per line. Variables: rc (the run's exit
# status), backend (a name for the summary line). Exit 0 when flat.
# Two windows: from the end of the warm-up (10% of the run) to 30%, and the
# last fifth. Flat: the run exited 0, RSS median grew <= 10 MB, and the fd
# and thread medians did not grow. Medians, not end points: the thread count
# moves with the phase of the block a sample falls in (a block's generator
# thread ends before its consumer), and a sample may fall in the last
# seconds, where the result is built (the summaries' sorted copies: +80 MB
# for a day of frames) and the run's threads are gone; a leak stays, and
# moves the median.
function median(a, lo, hi,   k, m, j, x, v) {  # of a[lo..hi], by insertion sort
  m = 0
  for (k = lo; k <= hi; k++) {
    x = a[k]; j = m
    while (j > 0 && v[j] > x) { v[j + 1] = v[j]; j-- }
    v[j + 1] = x; m++
  }
  return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}
NR > 1 { t[NR] = $1; r[NR] = $2; f[NR] = $3; h[NR] = $4; n = NR; if ($2 > peak) peak = $2 }
END {
  if (n - 1 < 10) { print "soak " backend ": too few samples (" n - 1 ", 10 needed)"; exit 1 }
  w = 2; while (w < n && t[w] < 0.1 * t[n]) w++                # first sample after the warm-up
  e = w; while (e + 1 < n && t[e + 1] < 0.3 * t[n]) e++        # last sample of the early window
  late = e + 1; while (late < n && t[late] < 0.8 * t[n]) late++  # first sample of the last fifth
  r1 = median(r, w, e) / 1024; r2 = median(r, late, n) / 1024
  f1 = median(f, w, e); f2 = median(f, late, n)
  h1 = median(h, w, e); h2 = median(h, late, n)
  ok = (rc == 0 && r2 - r1 <= 10 && f2 <= f1 && h2 <= h1)
  printf "soak %s: %d s, exit %d, medians from %d-%d s to %d-%d s: rss %.1f -> %.1f MB (%+.1f MB, peak %.1f), fds %g -> %g, threads %g -> %g: %s\n",
    backend, t[n], rc, t[w], t[e], t[late], t[n], r1, r2, r2 - r1, peak / 1024, f1, f2, h1, h2, ok ? "flat" : "NOT FLAT"
  exit ok ? 0 : 1
}
