#!/usr/bin/env bash
# Import speed: `tprof import` of a perf.data file against `perf script` over the same file.
# Records the demo at 10 kHz with -g for about 20 s of wall time on an idle 2-core machine
# (cpu-clock, so it works in a VM), unless a file is given.
#
# Timing: `perf stat -r 5` (fork, exec and wait, with microsecond clocks) for each tool in turn,
# ROUNDS times interleaved, so that a change in the machine's load falls on both; prints each
# round's means and the median of the rounds' ratios. The first tprof run is also shown alone:
# it starts with an empty cache of inflated debug files (TPROF_CACHE_DIR), which later runs use.
# Usage: bench/import_vs_perf_script.sh BUILD_DIR [perf.data] [ROUNDS]
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [perf.data] [ROUNDS]}
data=${2:-}
rounds=${3:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ -z "$data" ]]; then
  data=$tmp/bench.data
  perf record -q -e cpu-clock -F 10000 -g -o "$data" -- "$build/tprof_demo" 5 >/dev/null 2>&1
fi
samples=$(perf report --stats -i "$data" 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
echo "file: $data ($(du -h "$data" | cut -f1), $samples samples)"
export TPROF_CACHE_DIR=$tmp/cache

# "wall-ms cpu-ms" means over 5 runs of the command.
measure() {
  local out
  out=$(perf stat -r 5 -e task-clock "$@" 2>&1 >/dev/null)
  awk '/task-clock/ {cpu = $1} /seconds time elapsed/ {wall = $1 * 1000}
       END {printf "%.1f %.1f\n", wall, cpu}' <<<"$out"
}

start=$(date +%s%N)
"$build/tprof" import "$data" -o "$tmp/first.tprof" 2>/dev/null
cold_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "tprof import, empty debug-file cache: ${cold_ms} ms (one run, timed with date)"

ratios=()
printf '%-6s %14s %14s %14s %14s %8s\n' round "tprof wall ms" "tprof cpu ms" "perf wall ms" \
  "perf cpu ms" ratio
for round in $(seq "$rounds"); do
  read -r tw tc < <(measure "$build/tprof" import "$data" -o "$tmp/out.tprof")
  read -r pw pc < <(measure perf script -i "$data")
  ratio=$(awk -v p="$pw" -v t="$tw" 'BEGIN {printf "%.1f", p / t}')
  ratios+=("$ratio")
  printf '%-6s %14s %14s %14s %14s %7sx\n' "$round" "$tw" "$tc" "$pw" "$pc" "$ratio"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
echo "median ratio (perf script wall / tprof import wall): ${median}x"
