#!/usr/bin/env bash
# What recording every context switch costs: a pipe ping-pong (bench/pingpong.c, two processes,
# two switches out per round trip) run unprofiled, under `perf record` sampling every switch with
# its callchain (the perf equivalent of tprof's off-CPU recording; perf 6.1's --off-cpu needs a
# BPF-enabled build, which Debian's is not), and under `tprof record --off-cpu`. Prints the
# median of RUNS runs: round trips per second (what the workload got done), its slowdown against
# the unprofiled run, CPU seconds (profiler and workload together), and file bytes per switch.
#   bench/off_cpu_overhead_vs_perf.sh [BUILD_DIR] [RUNS] [SECONDS]
set -euo pipefail
build=${1:-build/test-release}
runs=${2:-5}
seconds=${3:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
tprof=$(realpath "$build/tprof")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/pingpong" "$root/bench/pingpong.c"

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# Runs "$@" RUNS times, writing to $tmp/out (the profile); prints the medians of round trips per
# second, CPU seconds and bytes per switch.
measure() {
  local i trips
  rm -f "$tmp/runs"
  for i in $(seq "$runs"); do
    rm -f "$tmp/out"
    /usr/bin/time -f "%U %S" -o "$tmp/time" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    trips=$(awk '/^round trips/ {print $3}' "$tmp/stdout")
    if [ -z "$trips" ]; then
      echo "no round trips printed by: $*" >&2
      cat "$tmp/stderr" >&2
      exit 1
    fi
    awk -v t="$trips" -v s="$seconds" -v bytes="$(stat -c %s "$tmp/out" 2>/dev/null || echo 0)" \
      '{printf "%.0f %.3f %.1f\n", t / s, $1 + $2, bytes / (2 * t)}' "$tmp/time" >>"$tmp/runs"
  done
  echo "$(cut -d' ' -f1 "$tmp/runs" | median) $(cut -d' ' -f2 "$tmp/runs" | median)" \
    "$(cut -d' ' -f3 "$tmp/runs" | median)"
}
row() {  # name trips/s cpu bytes/switch
  printf "%-58s %10s %9s %7s %8s\n" "$1" "$2" \
    "$(awk -v r="$2" -v b="$base_rate" 'BEGIN {printf "%.2fx", b / r}')" "$3" "$4"
}

echo "pingpong $seconds s, median of $runs runs, $(nproc) CPUs"
printf "%-58s %10s %9s %7s %8s\n" "configuration" "trips/s" "slowdown" "cpu s" "B/switch"
read -r base_rate base_cpu _ < <(measure "$tmp/pingpong" "$seconds")
row "unprofiled" "$base_rate" "$base_cpu" "-"
read -r r c b < <(measure perf record -q -e context-switches -c 1 -g -o "$tmp/out" -- \
  "$tmp/pingpong" "$seconds")
row "perf record -e context-switches -c 1 -g" "$r" "$c" "$b"
read -r r c b < <(measure perf record -q -e task-clock/freq=4000/ -e context-switches/period=1/ \
  --switch-events -g -o "$tmp/out" -- "$tmp/pingpong" "$seconds")
row "perf record (task-clock + every switch + switch records) -g" "$r" "$c" "$b"
read -r r c b < <(measure "$tprof" record -q --off-cpu -g -o "$tmp/out" -- "$tmp/pingpong" \
  "$seconds")
row "tprof record --off-cpu -g (task-clock + every switch)" "$r" "$c" "$b"
