#!/usr/bin/env bash
# Runs the demo workload unprofiled, under `perf record` and under `tprof record` with the same
# event (task-clock), frequency (1 kHz and 10 kHz) and frame-pointer callchains, and prints the
# median wall time of RUNS runs, the overhead against the unprofiled run, file size and samples
# lost.   bench/record_overhead.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build/release}
runs=${2:-3}
demo="$build/tprof_demo"
tprof="$build/tprof"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
wall() {  # runs "$@" and prints its wall time in seconds
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>"$tmp/last.err"
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f\n", b - a}'
}

base=$(for i in $(seq "$runs"); do wall "$demo" 0.5; done | median)
printf "%-28s %8s %9s %10s %8s\n" "configuration" "wall s" "overhead" "file KiB" "lost"
printf "%-28s %8.3f %9s %10s %8s\n" "unprofiled" "$base" "-" "-" "-"
for hz in 1000 10000; do
  t=$(for i in $(seq "$runs"); do wall perf record -e task-clock -F "$hz" -g -o "$tmp/perf.data" -- "$demo" 0.5; done | median)
  lost=$(perf report -i "$tmp/perf.data" --stats 2>/dev/null | awk '/LOST events:/ {print $3; exit}')
  size=$(stat -c %s "$tmp/perf.data")
  printf "%-28s %8.3f %8.1f%% %10.1f %8s\n" "perf record -F $hz -g" "$t" \
    "$(awk -v t="$t" -v b="$base" 'BEGIN {print 100 * (t - b) / b}')" "$(awk -v s="$size" 'BEGIN {print s / 1024}')" "${lost:-0}"
  t=$(for i in $(seq "$runs"); do wall "$tprof" record -e task-clock -F "$hz" -g -o "$tmp/out.tprof" -- "$demo" 0.5; done | median)
  lost=$(grep -o '[0-9]* lost' "$tmp/last.err" | awk '{print $1}')
  size=$(stat -c %s "$tmp/out.tprof")
  printf "%-28s %8.3f %8.1f%% %10.1f %8s\n" "tprof record -F $hz -g" "$t" \
    "$(awk -v t="$t" -v b="$base" 'BEGIN {print 100 * (t - b) / b}')" "$(awk -v s="$size" 'BEGIN {print s / 1024}')" "${lost:-0}"
done
