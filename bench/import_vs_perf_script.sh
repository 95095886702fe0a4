#!/usr/bin/env bash
# Import speed: `tprof import` of a perf.data file against `perf script` over the same file.
# Records the demo at 10 kHz with -g for about 20 s (cpu-clock, so it works in a VM), unless a
# file is given. Usage: bench/import_vs_perf_script.sh BUILD_DIR [perf.data]
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [perf.data]}
data=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ -z "$data" ]]; then
  data=$tmp/bench.data
  perf record -q -e cpu-clock -F 10000 -g -o "$data" -- "$build/tprof_demo" 20 >/dev/null 2>&1
fi
samples=$(perf report --stats -i "$data" 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
echo "file: $data ($(du -h "$data" | cut -f1), $samples samples)"

best() {  # best of 3 wall-clock runs, in seconds
  local best=""
  for _ in 1 2 3; do
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s.%N)
    best=$(echo "$end - $start" | bc -l | awk -v b="$best" '{ if (b == "" || $1 < b) print $1; else print b }')
  done
  echo "$best"
}

t_tprof=$(best "$build/tprof" import "$data" -o "$tmp/out.tprof")
t_perf=$(best perf script -i "$data")
printf 'tprof import: %.3f s\nperf script:  %.3f s\nratio:        %.1fx\n' "$t_tprof" "$t_perf" \
  "$(echo "$t_perf / $t_tprof" | bc -l)"
