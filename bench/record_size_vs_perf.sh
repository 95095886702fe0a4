#!/usr/bin/env bash
# Records the demo workload with perf and with tprof at the same settings (task-clock, -F 4000,
# frame-pointer callchains) and prints the bytes per sample of each file and their ratio.
#   bench/record_size_vs_perf.sh BUILD_DIR
set -euo pipefail
build=${1:-build/release}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
demo="$build/tprof_demo"
perf record -q -e task-clock -F 4000 -g -o "$tmp/perf.data" -- "$demo" 0.5 >/dev/null 2>"$tmp/perf.err"
perf_samples=$(perf report -i "$tmp/perf.data" --stats 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
"$build/tprof" record -e task-clock -F 4000 -g -o "$tmp/demo.tprof" -- "$demo" 0.5 >/dev/null 2>"$tmp/tprof.err"
tprof_samples=$(grep -o '[0-9]* task-clock samples' "$tmp/tprof.err" | awk '{print $1}')
perf_bytes=$(stat -c %s "$tmp/perf.data")
tprof_bytes=$(stat -c %s "$tmp/demo.tprof")
awk -v pb="$perf_bytes" -v ps="$perf_samples" -v tb="$tprof_bytes" -v ts="$tprof_samples" 'BEGIN {
  printf "perf.data:  %d bytes, %d samples, %.1f bytes/sample\n", pb, ps, pb / ps
  printf "tprof:      %d bytes, %d samples, %.1f bytes/sample\n", tb, ts, tb / ts
  printf "tprof/perf: %.3f of perf.data bytes per sample\n", (tb / ts) / (pb / ps)
}'
