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

# A private copy of the binary: both tools read its symbols, and a rebuild during the run
# cannot change them.
cp "$binary" "$tmp/$(basename "$binary")"
binary=$tmp/$(basename "$binary")
"$build/bench/synth_perf_data" "$binary" "$tmp/synth.data" "$samples" 20
start=$(date +%s.%N)
"$build/tprof" import "$tmp/synth.data" -o "$tmp/synth.tprof" 2>/dev/null
end=$(date +%s.%N)
printf 'tprof import (not timed below): %.1f s, %s\n' "$(echo "$end - $start" | bc -l)" \
  "$(du -h "$tmp/synth.tprof" | cut -f1)"

# Wall-clock and CPU (user + system) seconds of one run, output discarded. The CPU time is the
# steadier figure on a shared machine.
once() {
  /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$@" >/dev/null 2>&1
  awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$tmp/time"
}
best() {  # the run with the best wall-clock time of 3
  local best="" t
  for _ in 1 2 3; do
    t=$(once "$@")
    best=$(echo "$best|$t" | awk -F'|' '{ split($1, b, " "); split($2, t, " ");
      print ($1 == "" || t[1] < b[1]) ? $2 : $1 }')
  done
  echo "$best"
}
wall() { echo "${1% *}"; }
cpu() { echo "${1#* }"; }

# Both tools must see the same samples: compare the top rows' shares before timing.
"$build/tprof" report -i "$tmp/synth.tprof" --limit 3 | awk '/^ +[0-9.]+%/ {print "  tprof: " substr($0, 1, 100)}'
perf report --stdio --no-children -g none -i "$tmp/synth.data" 2>/dev/null |
  awk '/^ +[0-9.]+%/ && n++ < 3 {print "  perf:  " substr($0, 1, 100)}'

t_tprof=$(best "$build/tprof" report -i "$tmp/synth.tprof")
t_tprof_perf_data=$(best "$build/tprof" report -i "$tmp/synth.data")
t_perf_flat=$(best perf report --stdio --no-children -g none -i "$tmp/synth.data")
t_perf=$(once perf report --stdio -i "$tmp/synth.data")

printf '%s samples, ~20 frames each; seconds: wall (CPU)\n' "$samples"
printf 'tprof report (.tprof):                     %7.3f (%.2f)  (goal < 1.5 s)\n' \
  "$(wall "$t_tprof")" "$(cpu "$t_tprof")"
printf 'tprof report (perf.data):                  %7.3f (%.2f)\n' \
  "$(wall "$t_tprof_perf_data")" "$(cpu "$t_tprof_perf_data")"
printf 'perf report --stdio:                       %7.3f (%.2f)\n' "$(wall "$t_perf")" "$(cpu "$t_perf")"
printf 'perf report --stdio --no-children -g none: %7.3f (%.2f)\n' \
  "$(wall "$t_perf_flat")" "$(cpu "$t_perf_flat")"
printf 'ratio perf report --stdio / tprof report:  %7.1fx  (goal >= 10x)\n' \
  "$(echo "$(wall "$t_perf") / $(wall "$t_tprof")" | bc -l)"
printf 'ratio perf flat table / tprof report:      %7.1fx\n' \
  "$(echo "$(wall "$t_perf_flat") / $(wall "$t_tprof")" | bc -l)"
