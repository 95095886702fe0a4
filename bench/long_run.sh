#!/bin/bash
# Long and heavy recordings (issue 59): what tprof record's memory and file size do over a long
# run, and whether a workload that starts and ends many threads comes out whole.
#   bench/long_run.sh [BUILD_DIR] [SECONDS] [THREADS]   (defaults: build/rel, 1800, 4)
# 1. steady: THREADS threads of long_run_workload (1 ms of compute in three functions in shares
#    1:2:3, then 9 ms asleep, so ~0.1 CPU each) recorded -g at 4 kHz for SECONDS. Prints the
#    recorder's peak memory (its own VmHWM, polled) at 1/10 of the run and at the end, the file's
#    size per second, samples and lost samples, and the report's time, peak memory and the three
#    functions' shares against 1:2:3.
# 2. churn: 1,000 threads started and ended (50 alive at a time): threads the report shows
#    against the workload's count.
set -eu
build=${1:-build/rel}
seconds=${2:-1800}
threads=${3:-4}
root=$(cd "$(dirname "$0")/.." && pwd)
tprof=$(realpath "$build/tprof")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -g -fno-omit-frame-pointer -pthread "$root/bench/long_run_workload.c" -o "$tmp/lrw"

# peak PID OUT: the recorder's highest VmHWM in KiB, written to OUT as "ELAPSED_S KIB" lines every
# 10 s while PID lives (so growth over the run shows).
peak() {
  local pid=$1 out=$2 best=0 kib start=$SECONDS next=0
  while kill -0 "$pid" 2>/dev/null; do
    kib=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [ -n "$kib" ] && [ "$kib" -gt "$best" ] && best=$kib
    if [ $((SECONDS - start)) -ge "$next" ]; then
      echo "$((SECONDS - start)) $best" >>"$out"
      next=$((next + 10))
    fi
    sleep 0.2
  done
  echo "$((SECONDS - start)) $best" >>"$out"
}

echo "== steady: $threads threads, ${seconds} s, -g -F 4000 (cpu-clock)"
start=$(date +%s.%N)
"$tprof" record -q -e cpu-clock -F 4000 -g -o "$tmp/long.tprof" -- \
  "$tmp/lrw" steady "$seconds" "$threads" >"$tmp/steady.out" 2>"$tmp/steady.err" &
rec=$!
peak "$rec" "$tmp/rss" &
poller=$!
wait "$rec" || { echo "record failed: $(cat "$tmp/steady.err")"; exit 1; }
wait "$poller"
end=$(date +%s.%N)
cat "$tmp/steady.out"
bytes=$(stat -c %s "$tmp/long.tprof")
# The recorder's peak at 10, 50 and 90 % of the run (while the workload runs: growth here would
# grow with the run's length) and at the end (after the pass that mends -g's chains from the
# stack copies and embeds the symbols).
at() { awk -v t="$1" '$1 >= t {print $2; exit}' "$tmp/rss"; }
p10=$(at $((seconds / 10)))
p50=$(at $((seconds / 2)))
p90=$(at $((seconds * 9 / 10)))
last=$(tail -1 "$tmp/rss" | awk '{print $2}')
awk -v s="$start" -v e="$end" -v b="$bytes" -v sec="$seconds" \
  'BEGIN {printf "record: %.0f s wall; file %.1f MB (%.1f kB per second of run)\n", e - s, b / 1e6, b / 1e3 / sec}'
awk -v a="$p10" -v b="$p50" -v c="$p90" -v d="$last" \
  'BEGIN {printf "recorder peak memory: %.1f MiB at 10 %% of the run, %.1f at 50 %%, %.1f at 90 %%, %.1f MiB at the end (after mending chains and embedding symbols)\n", a / 1024, b / 1024, c / 1024, d / 1024}'
cat "$tmp/steady.err"

# The report: its time and peak memory (/usr/bin/time's max RSS of the one process).
/usr/bin/time -f "%e %M" -o "$tmp/report.time" "$tprof" report -i "$tmp/long.tprof" --sort sym \
  --children --percent-limit 0 --csv >"$tmp/report.csv" 2>"$tmp/report.err"
read -r rsec rkib <"$tmp/report.time"
"$tprof" report -i "$tmp/long.tprof" 2>/dev/null | grep -E "^# (event|lost|samples lost)" || true
awk -v rsec="$rsec" -v rkib="$rkib" 'BEGIN {printf "report: %.1f s, peak memory %.1f MiB\n", rsec, rkib / 1024}'
# The three functions' shares (their calls' totals), against the design's 1:2:3 of their sum.
awk -F, '$1 ~ /^long_run_(one|two|three)$/ { share[$1] = $5; total += $5 }
     END { for (n in share) printf "  %-16s %5.1f %% of the three (design %s)\n", n,
             100 * share[n] / total, (n ~ /one/ ? "16.7" : n ~ /two/ ? "33.3" : "50.0") }' \
  "$tmp/report.csv"

echo "== churn: 1,000 threads started and ended"
"$tprof" record -q -e cpu-clock -F 4000 -g -o "$tmp/churn.tprof" -- "$tmp/lrw" churn 1000 \
  >"$tmp/churn.out" 2>"$tmp/churn.err" || { echo "record failed: $(cat "$tmp/churn.err")"; exit 1; }
cat "$tmp/churn.out"
"$tprof" report -i "$tmp/churn.tprof" --sort tid --percent-limit 0 --limit 0 --csv \
  >"$tmp/churn.csv" 2>"$tmp/churn.report.err"
# Threads with samples: rows of the tid table (the main thread's among them).
tids=$(($(wc -l <"$tmp/churn.csv") - 1))
echo "threads with samples in the report: $tids (1,000 started, each computing ~2 ms = ~8 samples, and the main thread)"
cat "$tmp/churn.err" "$tmp/churn.report.err"
