#!/usr/bin/env bash
# Runs the demo workload unprofiled, under `perf record` and under `tprof record` with the same
# event (task-clock), frequency (1 kHz and 10 kHz) and frame-pointer callchains, and prints the
# median wall time of RUNS runs, the wall-time overhead against the unprofiled run, the CPU time
# (user + system of the profiler and the workload together) and its overhead, file size and
# samples lost. CPU time is printed too because wall time on a shared 2-core machine moves with
# whatever else runs; the CPU seconds a profiler adds do not.
#   bench/record_overhead.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build/release}
runs=${2:-3}
demo="$build/tprof_demo"
tprof="$build/tprof"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
measure() {  # runs "$@" RUNS times; prints "median-wall median-cpu" in seconds
  local i
  for i in $(seq "$runs"); do
    /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/last.err"
    awk '{printf "%s %.3f\n", $1, $2 + $3}' "$tmp/time"
  done >"$tmp/runs"
  echo "$(cut -d' ' -f1 "$tmp/runs" | median) $(cut -d' ' -f2 "$tmp/runs" | median)"
}
pct() { awk -v t="$1" -v b="$2" 'BEGIN {printf "%.1f%%", 100 * (t - b) / b}'; }
row() {  # name wall cpu size-bytes lost
  printf "%-26s %7.3f %9s %7.3f %9s %9s %6s\n" "$1" "$2" "$(pct "$2" "$base_wall")" "$3" \
    "$(pct "$3" "$base_cpu")" "$4" "$5"
}

read -r base_wall base_cpu < <(measure "$demo" 0.5)
printf "%-26s %7s %9s %7s %9s %9s %6s\n" "configuration" "wall s" "overhead" "cpu s" "overhead" \
  "file KiB" "lost"
printf "%-26s %7.3f %9s %7.3f %9s %9s %6s\n" "unprofiled" "$base_wall" "-" "$base_cpu" "-" "-" "-"
kib() { awk -v s="$(stat -c %s "$1")" 'BEGIN {printf "%.1f", s / 1024}'; }
for hz in 1000 10000; do
  read -r w c < <(measure perf record -e task-clock -F "$hz" -g -o "$tmp/perf.data" -- "$demo" 0.5)
  lost=$(perf report -i "$tmp/perf.data" --stats 2>/dev/null | awk '/LOST events:/ {print $3; exit}')
  row "perf record -F $hz -g" "$w" "$c" "$(kib "$tmp/perf.data")" "${lost:-0}"
  read -r w c < <(measure "$tprof" record -e task-clock -F "$hz" -g -o "$tmp/out.tprof" -- "$demo" 0.5)
  lost=$(grep -o '[0-9]* lost' "$tmp/last.err" | awk '{print $1}')
  row "tprof record -F $hz -g" "$w" "$c" "$(kib "$tmp/out.tprof")" "${lost:-0}"
done
