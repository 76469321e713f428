# Sourced by bench/soak.sh and bench/dev/capture_rss.sh: samples a process's
# resident memory, open descriptors and threads from /proc while it runs.
#   sample_process PID FILE SAMPLE_S [UNTIL_S]
# writes a header, then "t_s rss_kb fds threads" (tabs) every SAMPLE_S
# seconds until PID ends; with UNTIL_S, samples from UNTIL_S seconds on are
# left out (the run's own end, where its outputs are written). The format
# bench/soak_check.awk reads.
sample_process() {
  local pid=$1 file=$2 every=$3 until=${4:-0} start=$SECONDS rss thr fds
  printf 't_s\trss_kb\tfds\tthreads\n' >"$file"
  while kill -0 "$pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ {print $2}' /proc/$pid/status 2>/dev/null || true)
    thr=$(awk '/^Threads:/ {print $2}' /proc/$pid/status 2>/dev/null || true)
    fds=$(ls /proc/$pid/fd 2>/dev/null | wc -l || true)
    if [[ -n $rss && -n $thr ]] && (( until == 0 || SECONDS - start < until )); then
      printf '%d\t%s\t%s\t%s\n' $((SECONDS - start)) "$rss" "$fds" "$thr" >>"$file"
    fi
    sleep "$every"
  done
}
