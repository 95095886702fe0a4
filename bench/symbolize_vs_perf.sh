#!/bin/sh
# Symbolization cost, tprof vs perf: records BUILD/bench/symbolize_bench (a large -g binary
# running libdw code) with `perf record`, then times `perf script -F ip,sym,srcline` over it
# and reports its distinct sampled addresses; then times tprof's symbolizer on as many distinct
# addresses of the same binary (symbolize_bench, cold: module open included).
#   bench/symbolize_vs_perf.sh [BUILD_DIR]   (default build/sym)
set -eu
build=${1:-build/sym}
bench=$(realpath "$build/bench/symbolize_bench")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
perf record -q -e task-clock -F 4000 -o "$tmp/perf.data" -- "$bench" "$bench" 20000 >/dev/null 2>&1
distinct=$(perf script -i "$tmp/perf.data" -F ip 2>/dev/null | sort -u | wc -l)
start=$(date +%s.%N)
perf script -i "$tmp/perf.data" -F ip,sym,srcline >"$tmp/perf_script.txt" 2>/dev/null
end=$(date +%s.%N)
perf_s=$(echo "$end - $start" | bc)
echo "perf script -F ip,sym,srcline: $distinct distinct addresses in $perf_s s"
"$bench" "$bench" "$distinct" | sed -n 2,3p
