#!/usr/bin/env bash
# Every speed goal of tprof's analysis and recording in one table, each row against perf's
# fastest equivalent on the same input where perf has one (issue 31):
#   - report, --children, --folded, the flame graph page: 1M synthetic samples of ~20 frames
#     (bench/synth_perf_data over a copy of the tprof binary, imported to .tprof), against
#     `perf report --stdio` in its flat mode (--no-children -g none), its children mode
#     (--children -g none) and `perf script` (the stacks perf's folded pipelines start from);
#   - diff of two such profiles (another seed) against `perf diff`;
#   - diff --stream of two 1M-sample branch-stack profiles (bench/stream_diff_bench; perf has
#     nothing like it);
#   - record: the recorder's own CPU per sample at 1, 4 and 20 kHz (tprof's summary, measured
#     with getrusage over the recording) against the kernel's sampling budget
#     (perf_cpu_time_max_percent=25 at 100 kHz: 2.5 us per sample), and its peak memory against
#     perf's (bench/record_memory_vs_perf.sh).
# Times are the median wall seconds of RUNS runs (default 3, after a warm-up run) and the peak
# resident memory of the process, from /usr/bin/time. Nothing else should run on the machine meanwhile.
#   bench/speed_vs_perf.sh BUILD_DIR [RUNS] [SAMPLES]
set -euo pipefail
build=$(realpath "${1:?usage: $0 BUILD_DIR [RUNS] [SAMPLES]}")
runs=${2:-3}
samples=${3:-1000000}
root=$(cd "$(dirname "$0")/.." && pwd)
tprof=$build/tprof
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A private copy of the binary the stacks point into: a rebuild meanwhile cannot change it.
cp "$tprof" "$tmp/target"
"$build/bench/synth_perf_data" "$tmp/target" "$tmp/a.data" "$samples" 20 1 >/dev/null
"$build/bench/synth_perf_data" "$tmp/target" "$tmp/b.data" "$samples" 20 2 >/dev/null
"$tprof" import "$tmp/a.data" -o "$tmp/a.tprof" 2>/dev/null
"$tprof" import "$tmp/b.data" -o "$tmp/b.tprof" 2>/dev/null

# The inputs were just written: let their write-back finish before anything is timed.
sync

# median RUNS runs of a command after one warm-up run, output discarded: "wall-seconds peak-MiB"
measure() {
  local i
  "$@" >/dev/null 2>&1 || true
  for i in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" >/dev/null 2>&1 || true
    cat "$tmp/time"
  done | sort -g | awk -v n="$runs" '{ w[NR] = $1; m[NR] = $2 }
    END { printf "%.3f %.1f\n", w[int((n + 1) / 2)], m[int((n + 1) / 2)] / 1024 }'
}
row() {  # what, tprof "wall mib", perf command name, perf "wall mib"
  local t=($2) p=($4)
  if [ -n "$4" ]; then
    printf '%-34s %8s %9s  %-40s %8s %9s %7.2f %7.2f\n' "$1" "${t[0]}" "${t[1]}" "$3" "${p[0]}" \
      "${p[1]}" "$(echo "${t[0]} / ${p[0]}" | bc -l)" "$(echo "${t[1]} / ${p[1]}" | bc -l)"
  else
    printf '%-34s %8s %9s  %-40s %8s %9s %7s %7s\n' "$1" "${t[0]}" "${t[1]}" "$3" - - - -
  fi
}

echo "$samples samples of ~20 frames per profile; median of $runs runs; wall s, peak MiB"
printf '%-34s %8s %9s  %-40s %8s %9s %7s %7s\n' "tprof" "wall" "MiB" "perf's equivalent" "wall" \
  "MiB" "time x" "mem x"
flat=$(measure "$tprof" report -i "$tmp/a.tprof")
row "report (flat table)" "$flat" "report --no-children -g none" \
  "$(measure perf report --stdio --no-children -g none -i "$tmp/a.data")"
row "report --children" "$(measure "$tprof" report -i "$tmp/a.tprof" --children)" \
  "report --children -g none" \
  "$(measure perf report --stdio --children -g none -i "$tmp/a.data")"
row "report --folded" "$(measure "$tprof" report -i "$tmp/a.tprof" --folded)" \
  "script -F comm,tid,ip,sym" "$(measure perf script -F comm,tid,ip,sym -i "$tmp/a.data")"
row "report --flamegraph" \
  "$(measure "$tprof" report -i "$tmp/a.tprof" --flamegraph "$tmp/f.html")" "(none)" ""
row "report of the perf.data itself" "$(measure "$tprof" report -i "$tmp/a.data")" \
  "report --no-children -g none" \
  "$(measure perf report --stdio --no-children -g none -i "$tmp/a.data")"
row "diff (two profiles)" "$(measure "$tprof" diff "$tmp/a.tprof" "$tmp/b.tprof")" \
  "diff" "$(measure perf diff "$tmp/a.data" "$tmp/b.data")"

echo
echo "diff --stream, two 1M-sample profiles with 16-entry branch stacks (goal: under 2 s):"
"$build/bench/stream_diff_bench" "$samples" --branches --tprof "$tprof" | grep -E '^tprof'

echo
echo "record: the recorder's own CPU per sample (tprof_demo, -g, cpu-clock); the kernel's"
echo "budget at its default limits is 2.5 us per sample"
for hz in 1000 4000 20000; do
  if ! "$tprof" record -g -F "$hz" -e cpu-clock -o "$tmp/r.tprof" -- "$build/tprof_demo" 1 \
    2>"$tmp/r.err" >/dev/null; then
    echo "speed_vs_perf: record at $hz Hz failed: $(tail -n 1 "$tmp/r.err")" >&2
    exit 1
  fi
  sed -n 's/.*recorder CPU \([0-9.]*\) s while recording, \([0-9.]*\) us per sample.*/\1 \2/p' \
    "$tmp/r.err" | awk -v hz="$hz" '{ printf "  %5d Hz: %s s of recorder CPU, %s us per sample\n",
      hz, $1, $2 }'
done

echo
echo "record: peak memory of the recorder against perf's"
"$root/bench/record_memory_vs_perf.sh" "$build" 2>&1 | grep -E 'recorder peak|/ perf'
