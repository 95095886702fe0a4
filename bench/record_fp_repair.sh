#!/usr/bin/env bash
# What mending `-g` costs (issue 58): `tprof record -g` records, beside the kernel's
# frame-pointer callchain, the user registers and a copy of the top of the user stack, and after
# the workload walks each copy with CFI to put back the frames a libc leaf without a frame pointer
# made the chain skip. This runs the demo workload (`tprof_demo 0.5`) at -F 4000 and -F 20000,
# task-clock, as:
#   unprofiled;
#   perf record -g                            (perf's frame-pointer callchains, the reference);
#   tprof record --call-graph fp,0            (plain frame-pointer chains, no stack copy);
#   tprof record --call-graph fp,256          (mended, 256-byte copies);
#   tprof record -g                           (mended, the default 1024-byte copies);
#   tprof record --call-graph fp,4096         (mended, 4096-byte copies);
# in RUNS rounds, each round running every configuration once in turn (the order rotated from
# round to round), so drift on a shared machine reaches them alike.
#
# How to read it. Table 1, the cost (medians of the runs):
#   wall s, cpu s     the whole command (profiler and workload; user + system from /usr/bin/time);
#                     wall time on a shared 2-core machine moves with whatever else runs, the CPU
#                     seconds a profiler adds and the pair ratios much less: read those
#   ovh               against the unprofiled run
#   ovh x perf        this configuration's CPU overhead over perf -g's (the issue's goal: <= 1.2)
#   wall x perf       median over the rounds of this run's wall time / the same round's perf -g
#   after s           what tprof spends after the workload exits (the summary's "symbols
#                     [unwound and] embedded in X s"); part of wall s. perf's own pass after the
#                     workload (build ids) is inside its wall s too, not reported apart.
#   us/sample         tprof's own CPU while recording per sample (its summary's figure)
# Table 2, size and benefit:
#   B/sample          final file bytes / samples (tprof's summary; perf report --stats for perf)
#   x fp,0            bytes per sample over plain fp,0's (the issue's goal: <= 1.5 for -g)
#   side B/s          the stack-copy side file OUT.stacks at its largest (polled in one more,
#                     untimed run), per sample: the disk a recording needs while it runs
#   mended            stacks the CFI walk of the copy mended (frames put in), of those checked
#   right             stacks the walk found right as recorded
#   replaced          chains the walk replaced by a walk to the outermost frame
#   kept              stacks kept as recorded because the walk stopped first, and of them
#   (short)           how many because the copy was too short: what a larger copy would buy
# The demo runs each phase for a fixed amount of its threads' CPU time, so what the kernel spends
# taking a sample (the callchain, the stack copy) is charged to the workload's threads and
# shortens their useful work instead of lengthening the run: the overheads here are the
# profiler's own process (and its pass after the workload), not the in-kernel part.
#   bench/record_fp_repair.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build/release}
runs=${2:-5}
demo="$build/tprof_demo"
tprof="$build/tprof"
rates="4000 20000"
configs="perf fp0 fp256 fp1024 fp4096"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/r"

# The command of a configuration key ("base", or "CONFIG-HZ") in the array `cmd`; its output
# file in `out`.
command_of() {
  local what=${1%-*} hz=${1##*-}
  case $what in
    base) out=""; cmd=("$demo" 0.5) ;;
    perf) out="$tmp/perf.data"
      cmd=(perf record -e task-clock -F "$hz" -g -o "$out" -- "$demo" 0.5) ;;
    fp1024) out="$tmp/out.tprof"
      cmd=("$tprof" record -e task-clock -F "$hz" -g -o "$out" -- "$demo" 0.5) ;;
    fp*) out="$tmp/out.tprof"
      cmd=("$tprof" record -e task-clock -F "$hz" --call-graph "fp,${what#fp}" -o "$out" -- \
        "$demo" 0.5) ;;
  esac
}
label() {
  case ${1%-*} in
    perf) echo "perf record -g" ;;
    fp0) echo "tprof --call-graph fp,0" ;;
    fp256) echo "tprof --call-graph fp,256" ;;
    fp1024) echo "tprof -g (fp,1024)" ;;
    fp4096) echo "tprof --call-graph fp,4096" ;;
  esac
}

# One timed run of a key in round $2; appends to $tmp/r/KEY:
#   round wall cpu after samples bytes us/sample lost checked mended right replaced kept short
run_once() {
  local key=$1 round=$2 samples lost
  command_of "$key"
  [ -z "$out" ] || rm -f "$out" "$out.old"
  if ! /usr/bin/time -f "%e %U %S" -o "$tmp/time" "${cmd[@]}" >/dev/null 2>"$tmp/err"; then
    echo "record_fp_repair: failed: ${cmd[*]}" >&2
    cat "$tmp/err" >&2
    exit 1
  fi
  case $key in
    base) echo "$round $(awk '{printf "%s %.3f", $1, $2 + $3}' "$tmp/time") 0 0 0 0 0 0 0 0 0 0 0" ;;
    perf-*)
      perf report -i "$out" --stats >"$tmp/stats" 2>/dev/null
      samples=$(awk '/SAMPLE events:/ {print $3; exit}' "$tmp/stats")
      lost=$(awk '/LOST events:/ {print $3; exit}' "$tmp/stats")
      echo "$round $(awk '{printf "%s %.3f", $1, $2 + $3}' "$tmp/time") 0 $samples" \
        "$(stat -c %s "$out") 0 ${lost:-0} 0 0 0 0 0 0" ;;
    *)
      echo "$round $(awk '{printf "%s %.3f", $1, $2 + $3}' "$tmp/time")" \
        "$(awk -v bytes="$(stat -c %s "$out")" '
          function num(re, skip) { return match($0, re) ? substr($0, RSTART + skip) + 0 : 0 }
          /^\[ tprof record:/ {
            samples = num("record: [0-9]+ task-clock samples", 8)
            lost = num("samples; [0-9]+ lost", 9)
            after = num("embedded in [0-9.]+ s\\)", 12)
            us = num(", [0-9.]+ us per sample", 2)
          }
          /stacks checked against/ {
            checked = num(": [0-9]+ frame-pointer stacks checked", 2)
            mended = num("[0-9]+ \\([0-9.]+%\\) mended", 0)
            right = num("[0-9]+ \\([0-9.]+%\\) right as recorded", 0)
            replaced = num("[0-9]+ replaced by", 0)
          }
          /kept as recorded/ {
            k = num("unwinding: [0-9]+ \\(", 11)
            kept += k
            if (/stack copy too short/) short += k
          }
          END { printf "%.3f %d %d %.2f %d %d %d %d %d %d %d", after, samples, bytes, us, lost,
                checked, mended, right, replaced, kept, short }' "$tmp/err")" ;;
  esac >>"$tmp/r/$key"
}

# The median of column COL of a results file.
median() {
  awk -v c="$2" '{print $c}' "$1" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}
# The median over the rounds of FILE_A's column COL over FILE_B's, round by round.
pair_median() {
  awk -v c="$3" 'NR == FNR {b[$1] = $c; next} ($1 in b) && b[$1] > 0 {print $c / b[$1]}' \
    "$2" "$1" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}
# The median of the runs' bytes per sample.
bytes_per_sample() {
  awk '$5 > 0 {print $6 / $5}' "$1" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}

keys="base"
for hz in $rates; do
  for c in $configs; do keys="$keys $c-$hz"; done
done
read -r -a all <<<"$keys"
n=${#all[@]}
echo "tprof_demo 0.5, task-clock, $runs rounds of ${n} runs each, the order rotated by round;" \
  "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
for ((round = 1; round <= runs; round++)); do
  for ((i = 0; i < n; i++)); do
    run_once "${all[$(((i + round) % n))]}" "$round"
  done
done

# The side file at its largest: polled every 20 ms in one untimed run per configuration (it
# stays at its full size while it is unwound, then goes).
side_bytes() {
  local key=$1 size=0 s
  command_of "$key"
  rm -f "$out" "$out.stacks"
  "${cmd[@]}" >/dev/null 2>"$tmp/err" &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    s=$(stat -c %s "$out.stacks" 2>/dev/null || echo 0)
    [ "$s" -le "$size" ] || size=$s
    sleep 0.02
  done
  wait "$pid"
  echo "$size $(awk '/^\[ tprof record:/ && match($0, /record: [0-9]+ task-clock/) {
    print substr($0, RSTART + 8) + 0}' "$tmp/err")"
}

echo "load average $(cut -d' ' -f1-3 /proc/loadavg) after the timed runs"
read -r base_wall base_cpu < <(echo "$(median "$tmp/r/base" 2) $(median "$tmp/r/base" 3)")
pct() { awk -v t="$1" -v b="$2" 'BEGIN {printf "%.1f%%", 100 * (t - b) / b}'; }
echo
printf "unprofiled: wall %.3f s, cpu %.3f s (medians of %d runs)\n" "$base_wall" "$base_cpu" "$runs"
for hz in $rates; do
  perf_cpu=$(median "$tmp/r/perf-$hz" 3)
  echo
  echo "-F $hz: cost (medians; ratios against perf record -g at the same rate)"
  printf "%-27s %7s %8s %7s %8s %10s %11s %7s %9s\n" "configuration" "wall s" "ovh" "cpu s" "ovh" \
    "ovh x perf" "wall x perf" "after s" "us/sample"
  for c in $configs; do
    f="$tmp/r/$c-$hz"
    w=$(median "$f" 2)
    u=$(median "$f" 3)
    if [ "$c" = perf ]; then
      after=-; us=-; wx=-
    else
      after=$(median "$f" 4); us=$(median "$f" 7)
      wx=$(printf "%.3f" "$(pair_median "$f" "$tmp/r/perf-$hz" 2)")
    fi
    printf "%-27s %7.3f %8s %7.3f %8s %10s %11s %7s %9s\n" "$(label "$c")" "$w" \
      "$(pct "$w" "$base_wall")" "$u" "$(pct "$u" "$base_cpu")" \
      "$(awk -v t="$u" -v p="$perf_cpu" -v b="$base_cpu" \
        'BEGIN {if (p > b) printf "%.2f", (t - b) / (p - b); else print "-"}')" "$wx" "$after" "$us"
  done
  fp0_bps=$(bytes_per_sample "$tmp/r/fp0-$hz")
  echo
  echo "-F $hz: size and benefit (bytes per sample: medians; stack shares: all runs summed)"
  printf "%-27s %8s %9s %7s %8s %8s %8s %8s %13s\n" "configuration" "samples" "B/sample" "x fp,0" \
    "side B/s" "mended" "right" "replaced" "kept (short)"
  for c in $configs; do
    f="$tmp/r/$c-$hz"
    bps=$(bytes_per_sample "$f")
    side=-
    if [ "$c" != perf ] && [ "$c" != fp0 ]; then
      read -r sb ss < <(side_bytes "$c-$hz")
      side=$(awk -v b="$sb" -v s="$ss" 'BEGIN {printf "%.1f", (s > 0 ? b / s : 0)}')
    fi
    awk -v name="$(label "$c")" -v bps="$bps" -v base="$fp0_bps" -v side="$side" \
      -v samples="$(median "$f" 5)" '
      {checked += $9; mended += $10; right += $11; replaced += $12
       kept += $13; short += $14}
      function share(x) { return checked ? sprintf("%.1f%%", 100 * x / checked) : "-" }
      END {
        printf "%-27s %8d %9.1f %7.3f %8s %8s %8s %8s %6s (%s)\n", name, samples, bps, bps / base, side, share(mended), share(right),
          share(replaced), share(kept), checked ? sprintf("%.1f%%", 100 * short / checked) : "-"
      }' "$f"
  done
done
