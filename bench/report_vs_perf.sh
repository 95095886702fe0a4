#!/usr/bin/env bash
# Report speed: `tprof report` (the function table) against `perf report --stdio` on the same
# samples. bench/synth_perf_data writes a perf.data file of SAMPLES samples with ~20-frame
# callchains at addresses in a real binary (tprof itself, so symbols resolve); `tprof import`
# turns it into a .tprof file with its symbols embedded. Then, on those samples:
#   tprof report -i synth.tprof      (best of 3)  -- goal: under 1.5 s
#   tprof report -i synth.data       (best of 3)  -- reading perf.data directly
#   perf report --stdio              (once)       -- perf's default: children, call graphs
#   perf report --stdio --no-children -g none     (best of 3) -- perf's flat table
# and the ratios (goal: tprof at least 10x faster than `perf report --stdio`).
# Usage: bench/report_vs_perf.sh BUILD_DIR [SAMPLES=1000000] [BINARY=BUILD_DIR/tprof]
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [SAMPLES] [BINARY]}
samples=${2:-1000000}
binary=${3:-$build/tprof}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$build/bench/synth_perf_data" "$binary" "$tmp/synth.data" "$samples" 20
start=$(date +%s.%N)
"$build/tprof" import "$tmp/synth.data" -o "$tmp/synth.tprof" 2>/dev/null
end=$(date +%s.%N)
printf 'tprof import (not timed below): %.1f s, %s\n' "$(echo "$end - $start" | bc -l)" \
  "$(du -h "$tmp/synth.tprof" | cut -f1)"

once() {  # wall-clock seconds of one run, output discarded
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}
best() {  # best of 3 runs
  local best="" t
  for _ in 1 2 3; do
    t=$(once "$@")
    best=$(awk -v b="$best" -v t="$t" 'BEGIN { print (b == "" || t < b) ? t : b }')
  done
  echo "$best"
}

# Both tools must see the same samples: compare the top rows' shares before timing.
"$build/tprof" report -i "$tmp/synth.tprof" --limit 3 | awk '/^ +[0-9.]+%/ {print "  tprof: " $0}'
perf report --stdio --no-children -g none -i "$tmp/synth.data" 2>/dev/null |
  awk '/^ +[0-9.]+%/ && n++ < 3 {print "  perf:  " substr($0, 1, 100)}'

t_tprof=$(best "$build/tprof" report -i "$tmp/synth.tprof")
t_tprof_perf_data=$(best "$build/tprof" report -i "$tmp/synth.data")
t_perf_flat=$(best perf report --stdio --no-children -g none -i "$tmp/synth.data")
t_perf=$(once perf report --stdio -i "$tmp/synth.data")

printf '%s samples, ~20 frames each\n' "$samples"
printf 'tprof report (.tprof):                     %7.3f s  (goal < 1.5 s)\n' "$t_tprof"
printf 'tprof report (perf.data):                  %7.3f s\n' "$t_tprof_perf_data"
printf 'perf report --stdio:                       %7.3f s\n' "$t_perf"
printf 'perf report --stdio --no-children -g none: %7.3f s\n' "$t_perf_flat"
printf 'ratio perf report --stdio / tprof report:  %7.1fx  (goal >= 10x)\n' \
  "$(echo "$t_perf / $t_tprof" | bc -l)"
printf 'ratio perf flat table / tprof report:      %7.1fx\n' \
  "$(echo "$t_perf_flat / $t_tprof" | bc -l)"
