#!/usr/bin/env bash
# Every speed goal of tprof's analysis and recording in one table, each row against perf's
# fastest equivalent on the same input where perf has one (issue 31):
#   - report, --children, --folded, the flame graph page: 1M synthetic samples of ~20 frames
#     (bench/synth_perf_data over a copy of the tprof binary, imported to .tprof), against
#     `perf report --stdio` in its flat mode (--no-children -g none), its children mode
#     (--children -g none) and `perf script` (the stacks perf's folded pipelines start from);
#   - diff of two such profiles (another seed) against `perf diff`;
#   - perf script text folded as FlameGraph's stackcollapse-perf.pl folds it, against the script,
#     with the peak anonymous memory of each at two sizes of text;
#   - diff --stream of two 1M-sample branch-stack profiles (bench/stream_diff_bench; perf has
#     nothing like it);
#   - record: the recorder's own CPU per sample at 1, 4 and 20 kHz (tprof's summary, measured
#     with getrusage over the recording) against the kernel's sampling budget
#     (perf_cpu_time_max_percent=25 at 100 kHz: 2.5 us per sample), and its peak memory against
#     perf's (bench/record_memory_vs_perf.sh).
# Each tprof command runs RUNS times (default 3, after a warm-up run of it and of perf's), each
# run beside a run of perf's equivalent, in turn: the machine's speed drifts, and a pair sees the
# same drift. Printed: the median wall seconds (from the clock, in ns) and peak resident memory
# (from /usr/bin/time) of each side, and the median of the pairs' ratios. Nothing else should
# run on the machine meanwhile.
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

# One run of a command, output discarded: "wall-seconds peak-KiB".
once() {
  local start end
  start=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$tmp/time" "$@" >/dev/null 2>&1 || true
  end=$(date +%s%N)
  echo "$(((end - start) / 1000)) $(cat "$tmp/time")" | awk '{ printf "%.4f %d\n", $1 / 1e6, $2 }'
}
# Medians of RUNS runs of a tprof command (and, given a second command after "--vs", of runs of
# it beside them, in turn): "wall MiB [wall MiB ratio]", the ratio the median of the pairs'.
measure() {
  local a=() b=() i
  while [ $# -gt 0 ] && [ "$1" != "--vs" ]; do a+=("$1"); shift; done
  [ $# -gt 0 ] && shift && b=("$@")
  "${a[@]}" >/dev/null 2>&1 || true
  [ ${#b[@]} -eq 0 ] || "${b[@]}" >/dev/null 2>&1 || true
  for ((i = 0; i < runs; i++)); do
    if [ ${#b[@]} -eq 0 ]; then
      once "${a[@]}"
    else
      echo "$(once "${a[@]}") $(once "${b[@]}")"
    fi
  done | awk -v n="$runs" '
    function median(v, k, j, t) {  # sorts v[1..n] in place
      for (k = 2; k <= n; k++) for (j = k; j > 1 && v[j - 1] > v[j]; j--) {
        t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
      return v[int((n + 1) / 2)]
    }
    { aw[NR] = $1; am[NR] = $2; if (NF > 2) { bw[NR] = $3; bm[NR] = $4; r[NR] = $1 / $3 } }
    END {
      printf "%.3f %.1f", median(aw), median(am) / 1024
      if (length(bw)) printf " %.3f %.1f %.3f", median(bw), median(bm) / 1024, median(r)
      printf "\n"
    }'
}
row() {  # what, perf command name, and measure's figures
  local f
  read -r -a f <<<"$3"
  if [ ${#f[@]} -gt 2 ]; then
    printf '%-34s %8s %9s  %-40s %8s %9s %7.2f %7.2f\n' "$1" "${f[0]}" "${f[1]}" "$2" "${f[2]}" \
      "${f[3]}" "${f[4]}" "$(echo "${f[1]} / ${f[3]}" | bc -l)"
  else
    printf '%-34s %8s %9s  %-40s %8s %9s %7s %7s\n' "$1" "${f[0]}" "${f[1]}" "$2" - - - -
  fi
}

echo "$samples samples of ~20 frames per profile; medians of $runs runs of each side, in turn;"
echo "wall s, peak MiB; time x: the median of the runs' ratios"
printf '%-34s %8s %9s  %-40s %8s %9s %7s %7s\n' "tprof" "wall" "MiB" "perf's equivalent" "wall" \
  "MiB" "time x" "mem x"
row "report (flat table)" "report --no-children -g none" \
  "$(measure "$tprof" report -i "$tmp/a.tprof" \
    --vs perf report --stdio --no-children -g none -i "$tmp/a.data")"
row "report --children" "report --children -g none" \
  "$(measure "$tprof" report -i "$tmp/a.tprof" --children \
    --vs perf report --stdio --children -g none -i "$tmp/a.data")"
row "report --folded" "script -F comm,tid,ip,sym" \
  "$(measure "$tprof" report -i "$tmp/a.tprof" --folded \
    --vs perf script -F comm,tid,ip,sym -i "$tmp/a.data")"
row "report --flamegraph" "(none)" \
  "$(measure "$tprof" report -i "$tmp/a.tprof" --flamegraph "$tmp/f.html")"
row "report of the perf.data itself" "report --no-children -g none" \
  "$(measure "$tprof" report -i "$tmp/a.data" \
    --vs perf report --stdio --no-children -g none -i "$tmp/a.data")"
row "diff (two profiles)" "diff" \
  "$(measure "$tprof" diff "$tmp/a.tprof" "$tmp/b.tprof" --vs perf diff "$tmp/a.data" "$tmp/b.data")"

echo
# perf script text, the input of FlameGraph's pipelines: `perf script` of 50k and 200k synthetic
# samples (some 200 and 800 MB), folded as stackcollapse-perf.pl folds it, against the script
# itself (from ../shared/reference, beside the checkout); and the peak memory of each at both
# sizes, the text read from a pipe as `perf script | ...` gives it, which must not grow with the
# text (the folded stacks are what it keeps).
collapse=$root/../shared/reference/flamegraph/stackcollapse-perf.pl
if [ -f "$collapse" ]; then
  echo "perf script text to folded stacks (--folded-style stackcollapse against stackcollapse-perf.pl):"
  for n in 50000 200000; do
    "$build/bench/synth_perf_data" "$tmp/target" "$tmp/s$n.data" "$n" 20 3 >/dev/null
    perf script -i "$tmp/s$n.data" >"$tmp/s$n.txt" 2>/dev/null
  done
  sync
  row "perf script text, 200k samples" "stackcollapse-perf.pl" \
    "$(measure "$tprof" report -i "$tmp/s200000.txt" --folded --folded-style stackcollapse \
      --vs perl "$collapse" "$tmp/s200000.txt")"
  # Peak anonymous memory (RssAnon, polled), the text on standard input from a pipe.
  peak_anon() {
    local pid peak=0 now
    "$@" <"$tmp/fifo" >/dev/null 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
      now=$(awk '/RssAnon/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
      [ -n "$now" ] && [ "$now" -gt "$peak" ] && peak=$now
      sleep 0.01
    done
    wait "$pid" || true
    echo "$peak"
  }
  mkfifo "$tmp/fifo"
  for n in 50000 200000; do
    size=$(du -m "$tmp/s$n.txt" | cut -f1)
    cat "$tmp/s$n.txt" >"$tmp/fifo" &
    t=$(peak_anon "$tprof" report - --folded --folded-style stackcollapse)
    wait
    cat "$tmp/s$n.txt" >"$tmp/fifo" &
    p=$(peak_anon perl "$collapse")
    wait
    printf '  %6d samples, %5d MB of text from a pipe: peak anonymous memory tprof %6.1f MiB, perl %6.1f MiB\n' \
      "$n" "$size" "$(echo "$t / 1024" | bc -l)" "$(echo "$p / 1024" | bc -l)"
  done
  rm -f "$tmp"/s*.txt
else
  echo "perf script text: $collapse not found (../shared beside the checkout), rows skipped"
fi

echo
echo "diff --stream, two 1M-sample profiles with 16-entry branch stacks (goal: under 2 s):"
"$build/bench/stream_diff_bench" "$samples" --branches --tprof "$tprof" | grep -E '^tprof'

echo
echo "record: the recorder's own CPU per sample (tprof_demo, -g, cpu-clock); the kernel's"
echo "budget at its default limits is 2.5 us per sample"
: >"$tmp/rates"
for hz in 1000 4000 20000; do
  if ! "$tprof" record -g -F "$hz" -e cpu-clock -o "$tmp/r.tprof" -- "$build/tprof_demo" 1 \
    2>"$tmp/r.err" >/dev/null; then
    echo "speed_vs_perf: record at $hz Hz failed: $(tail -n 1 "$tmp/r.err")" >&2
    exit 1
  fi
  sed -n 's/.*record: \([0-9]*\) cpu-clock samples.*recorder CPU \([0-9.]*\) s while recording, \([0-9.]*\) us per sample.*/\1 \2 \3/p' \
    "$tmp/r.err" | tee -a "$tmp/rates" | awk -v hz="$hz" '{
      printf "  %5d Hz: %s s of recorder CPU, %s us per sample (%d samples)\n", hz, $2, $3, $1 }'
done
# The recorder's CPU has a part that does not grow with the samples (starting the command,
# reading the build ids of what it maps, the flushes): over the few thousand samples at 1 kHz it
# is most of the figure. What one more sample costs is the slope from the lowest rate to the
# highest, the budget's sense (it is set at 100 kHz).
awk 'NR == 1 { n1 = $1; c1 = $2 } { n = $1; c = $2 }
  END { if (n > n1) printf "  each sample more: %.2f us (1 to 20 kHz); the part that does not grow: %.3f s\n",
    (c - c1) * 1e6 / (n - n1), c1 - n1 * (c - c1) / (n - n1) }' "$tmp/rates"

echo
echo "record: peak memory of the recorder against perf's"
"$root/bench/record_memory_vs_perf.sh" "$build" 2>&1 | grep -E 'recorder peak|/ perf'
