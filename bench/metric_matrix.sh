#!/usr/bin/env bash
# The matrix of designed workloads (test/integration/metric_matrix_test.cpp) as
# docs/metric-matrix.md's table: per cell and method, 20 recordings of metric_oracle, the share
# of (function, run) values flagged (! a bias reason, ~ low confidence), the share shown confident, how often a confident
# value's 95 % interval holds the truth, and the confident values' median error. The test asserts
# what docs/trust.md promises; this prints what it measured, as markdown rows.
#   bench/metric_matrix.sh BUILD_DIR [JOBS]
set -euo pipefail
build=$(realpath "${1:?usage: $0 BUILD_DIR [JOBS]}")
jobs=${2:-2}
tests=$build/test/tprof_integration_tests
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# One cell a process, JOBS at a time, as ctest runs them.
"$tests" --gtest_list_tests --gtest_filter='Cells/MetricMatrix.*' |
  awk '/^ /{print prefix $1} /^[^ ]/{prefix=$1}' |
  xargs -P "$jobs" -I{} "$tests" --gtest_filter={} >"$log" 2>&1 || true
echo "| cell | method | flagged ! | ~ (truth inside) | confident | truth inside confident's interval | median error |"
echo "|---|---|---|---|---|---|---|"
grep '^matrix| [a-z_0-9]* *| ' "$log" | grep -v '| no method gives' | sort -t'|' -k2,2 -s |
  awk -F'|' '{
    gsub(/^ +| +$/, "", $2); gsub(/^ +| +$/, "", $3)
    if ($4 ~ /known gap/) { known[$2 "|" $3] = $4; next }
    match($4, /[0-9]+/); pairs = substr($4, RSTART, RLENGTH)
    match($5, /[0-9.]+ %/); biased = substr($5, RSTART, RLENGTH)
    match($6, /[0-9.]+ %/); wide = substr($6, RSTART, RLENGTH)
    match($6, /covering +[0-9]+/); covering = substr($6, RSTART + 8, RLENGTH - 8); gsub(/ /, "", covering)
    match($8, /[0-9.]+ %/); confident = substr($8, RSTART, RLENGTH)
    match($9, /([0-9.]+|nan) %/); coverage = substr($9, RSTART, RLENGTH)
    match($10, /([0-9.]+|nan) %/); error = substr($10, RSTART, RLENGTH)
    rows[++n] = $2 "|" $3
    line[$2 "|" $3] = sprintf("| %s | %s | %s | %s (%s of %d) | %s | %s | %s |", $2, $3, biased, wide, covering, pairs * wide / 100 + 0.5, confident, coverage, error)
  }
  END {
    for (i = 1; i <= n; ++i) {
      l = line[rows[i]]
      if (rows[i] in known) { g = known[rows[i]]; sub(/^ *known gap: */, "", g); l = l " known gap: " g }
      print l
    }
  }' | sed 's/nan %/-/g'
echo
echo "Cells where no method gives a function a confident value:"
echo
grep '| no method gives' "$log" | sort | sed 's/^matrix| \([a-z_0-9]*\) | no method gives a confident value to: /- \1: /' || true
echo
echo "Why values were flagged (cell, method: the reasons' first words, with how many values):"
echo
grep '^matrix-reasons| ' "$log" | sort | sed 's/^matrix-reasons| *\([^|]*[^ ]\) *| *\([^|]*[^ ]\) *| /- \1, \2: /' || true
echo
{ grep -c 'Failure' "$log" || true; } | sed 's/^/assertion failures: /'
grep -A3 'Failure' "$log" | grep -v '^--$' | head -40
