#!/bin/bash
# The recorder's own peak memory, tprof record against perf record, on the same workload: the
# VmHWM of the recorder process itself (read from /proc just before it exits, through a
# ptrace-free poll of its status file), not the process tree's, whose peak is the workload's
# (g++ compiling a file: 354 MB for both recorders). Also prints each recorder's wall time.
#   bench/record_memory_vs_perf.sh [BUILD_DIR] [-- WORKLOAD ARGS...]
#   (defaults: build/test-release; g++ -O1 compiling core/analysis/profile_diff.cpp)
# Records -g at 4 kHz with cpu-clock (a VM has no cycles).
set -eu
build=build/test-release
if [ $# -gt 0 ] && [ "$1" != "--" ]; then build=$1; shift; fi
[ "${1:-}" = "--" ] && shift
root=$(cd "$(dirname "$0")/.." && pwd)
tprof=$(realpath "$build/tprof")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ $# -eq 0 ]; then
  set -- g++ -std=c++20 -O1 -I"$root" -c "$root/core/analysis/profile_diff.cpp" -o "$tmp/pd.o"
fi

# peak PID: the highest VmHWM seen while PID lives, in KiB (polled every 20 ms).
peak() {
  local pid=$1 best=0 kib
  while kill -0 "$pid" 2>/dev/null; do
    kib=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [ -n "$kib" ] && [ "$kib" -gt "$best" ] && best=$kib
    sleep 0.02
  done
  echo "$best"
}

run() {
  local name=$1
  shift
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 &
  local pid=$!
  local kib
  kib=$(peak "$pid")
  wait "$pid" || true
  end=$(date +%s.%N)
  printf '%-6s recorder peak %7.1f MiB   wall %6.2f s\n' "$name" "$(echo "$kib / 1024" | bc -l)" \
    "$(echo "$end - $start" | bc -l)"
  echo "$kib"
}

echo "workload: $*"
t=$(run tprof "$tprof" record -q -g -F 4000 -e cpu-clock -o "$tmp/w.tprof" -- "$@" | tee /dev/stderr | tail -1)
p=$(run perf perf record -q -g -F 4000 -e cpu-clock -o "$tmp/w.data" -- "$@" | tee /dev/stderr | tail -1)
printf 'tprof / perf peak memory: %.2f\n' "$(echo "$t / $p" | bc -l)"
