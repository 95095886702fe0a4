#!/usr/bin/env bash
# Shows that a change leaves `tprof import` as it was: imports the same perf.data files with two
# tprof binaries and compares the .tprof bytes, the messages and the exit status, then the
# output of a few reports of each imported file. For refactorings that must not change
# behaviour (issue 17 moved every core/ file).
#   scripts/compare_imports.sh OLD_TPROF NEW_TPROF [DEMO_BINARY]
# The inputs are two recordings of DEMO_BINARY made here with perf (frame pointers and
# --call-graph dwarf; skipped without a demo) and the perf.data files in ../shared/testdata/perf.
# Exits 1 when anything differs.
set -uo pipefail
if (($# < 2)); then
  echo "usage: $0 OLD_TPROF NEW_TPROF [DEMO_BINARY]" >&2
  exit 2
fi
old=$(realpath "$1") new=$(realpath "$2") demo=${3:+$(realpath "$3")}
testdata=$(realpath "$(dirname "$0")/../../shared/testdata" 2>/dev/null || true)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/old" "$work/new" "$work/in"

inputs=()
if [[ -n $demo ]]; then
  perf record -q -e cpu-clock -g -o "$work/in/fp.data" -- "$demo" >/dev/null 2>&1 &&
    inputs+=("$work/in/fp.data")
  perf record -q -e cpu-clock --call-graph dwarf -o "$work/in/dwarf.data" -- "$demo" \
    >/dev/null 2>&1 && inputs+=("$work/in/dwarf.data")
fi
# Every perf.data file there (by its magic), the autofdo/ folder's too.
if [[ -d $testdata/perf ]]; then
  while IFS= read -r -d '' file; do
    [[ $(head -c 8 "$file" | tr -d '\0') == PERFILE2 ]] && inputs+=("$file")
  done < <(find "$testdata/perf" -type f -print0 | sort -z)
fi

same=0 different=0 refused=0 reports=0
for input in "${inputs[@]}"; do
  name=$(basename "$input")
  extra=()
  [[ -n $demo && $input == "$work/in/"* ]] && extra=(--binary "$demo")
  # The same output name on both sides: import names it in its summary line.
  (cd "$work/old" && "$old" import "$input" -o "$name.tprof" "${extra[@]}" >/dev/null 2>"$name.err")
  old_status=$?
  (cd "$work/new" && "$new" import "$input" -o "$name.tprof" "${extra[@]}" >/dev/null 2>"$name.err")
  new_status=$?
  if ((old_status != new_status)) || ! cmp -s "$work/old/$name.err" "$work/new/$name.err"; then
    echo "different exit status or messages: $name ($old_status, $new_status)"
    different=$((different + 1))
    continue
  fi
  if ((new_status != 0)); then
    echo "refused by both: $name ($(head -c 120 "$work/new/$name.err"))"
    refused=$((refused + 1))
    continue
  fi
  if ! cmp -s "$work/old/$name.tprof" "$work/new/$name.tprof"; then
    echo "different .tprof bytes: $name"
    different=$((different + 1))
    continue
  fi
  echo "identical: $name ($(stat -c %s "$work/new/$name.tprof") bytes)"
  same=$((same + 1))
  for args in "" "--folded" "--json" "--children" "--callers main"; do
    # shellcheck disable=SC2086 # $args is split on purpose
    if ! cmp -s <(cd "$work/new" && "$old" report -i "$name.tprof" $args 2>&1) \
      <(cd "$work/new" && "$new" report -i "$name.tprof" $args 2>&1); then
      echo "different report output: $name report $args"
      different=$((different + 1))
    else
      reports=$((reports + 1))
    fi
  done
done
echo "imports: $same identical, $different different, $refused refused by both;" \
  "reports: $reports identical"
((different == 0 && same > 0))
