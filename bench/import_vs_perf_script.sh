#!/usr/bin/env bash
# Import speed: `tprof import` of a perf.data file against `perf script` over the same file.
# Records the demo at 10 kHz with -g for about 20 s of wall time on an idle 2-core machine
# (cpu-clock, so it works in a VM), unless a file is given. Prints wall and CPU (user + system)
# seconds: on a shared machine the CPU figures are the steadier ones. Usage: bench/import_vs_perf_script.sh BUILD_DIR [perf.data]
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [perf.data]}
data=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ -z "$data" ]]; then
  data=$tmp/bench.data
  perf record -q -e cpu-clock -F 10000 -g -o "$data" -- "$build/tprof_demo" 5 >/dev/null 2>&1
fi
samples=$(perf report --stats -i "$data" 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
echo "file: $data ($(du -h "$data" | cut -f1), $samples samples)"

best() {  # best of 3 runs: "wall cpu" in seconds
  local best_wall="" best_cpu="" t
  t=$(mktemp)
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %U %S" -o "$t" "$@" >/dev/null 2>&1
    read -r w u s <"$t"
    best_wall=$(awk -v a="$w" -v b="$best_wall" 'BEGIN {print (b == "" || a < b) ? a : b}')
    best_cpu=$(awk -v a="$(echo "$u + $s" | bc -l)" -v b="$best_cpu" 'BEGIN {print (b == "" || a < b) ? a : b}')
  done
  rm -f "$t"
  echo "$best_wall $best_cpu"
}

read -r w_tprof c_tprof < <(best "$build/tprof" import "$data" -o "$tmp/out.tprof")
read -r w_perf c_perf < <(best perf script -i "$data")
printf 'tprof import: %.3f s wall, %.3f s cpu\nperf script:  %.3f s wall, %.3f s cpu\n' \
  "$w_tprof" "$c_tprof" "$w_perf" "$c_perf"
printf 'ratio:        %.1fx wall, %.1fx cpu\n' "$(echo "$w_perf / $w_tprof" | bc -l)" \
  "$(echo "$c_perf / $c_tprof" | bc -l)"
