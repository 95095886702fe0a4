#!/usr/bin/env bash
# A long fuzzing campaign by hand (CI runs each target for 30 s in scripts/test.sh):
#   scripts/fuzz_campaign.sh [SECONDS] [TARGET...]   (default 1800 s, every target at once)
#   scripts/fuzz_campaign.sh table                   (the last campaign's table again)
# Builds the fuzz targets as scripts/test.sh does (clang, libFuzzer, ASan+UBSan), runs every
# target at the same time for SECONDS, each on its own corpus (kept in build/fuzz-corpus/TARGET,
# so a later campaign starts where this one ended) with the seeds and test/fuzz/regressions,
# at nice 10, and prints per target: executions, executions per second, edges covered
# (libFuzzer's cov), corpus entries and findings (crash-, leak-, timeout-, oom- files, kept in
# build/fuzz-corpus/findings). docs/fuzzing.md records the runs.
set -euo pipefail
cd "$(dirname "$0")/.."
work=build/fuzz-corpus
all_targets=(profile_reader_fuzzer record_decoder_fuzzer perf_data_reader_fuzzer
  perf_script_parser_fuzzer folded_parser_fuzzer elf_inflate_fuzzer writers_fuzzer)

# table TARGET...: per target, from its log and corpus.
table() {
  printf '%-26s %11s %7s %7s %6s %7s %s\n' target executions "per s" edges "ft" corpus findings
  for target in "$@"; do
    local log=$work/logs/$target.log
    [ -f "$log" ] || continue
    local runs per cov ft corpus found
    runs=$(awk '/stat::number_of_executed_units/ {print $NF}' "$log" | tail -1)
    per=$(awk '/stat::average_exec_per_sec/ {print $NF}' "$log" | tail -1)
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo "?")
    ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo "?")
    corpus=$(find "$work/$target" -type f | wc -l)
    found=$(grep -cE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|deadly signal' "$log" || true)
    printf '%-26s %11s %7s %7s %6s %7s %s\n' "$target" "${runs:-?}" "${per:-?}" "$cov" "$ft" "$corpus" "$found"
  done
}

if [ "${1:-}" = table ]; then
  table "${all_targets[@]}"
  exit 0
fi
seconds=${1:-1800}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")
CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  -DTPROF_FUZZ=ON -DTPROF_WERROR=ON -DTPROF_UNITY=ON >/dev/null
cmake --build build/fuzz -j "$(nproc)" --target make_fuzz_seeds "${targets[@]}" >/dev/null
mkdir -p "$work/seeds" "$work/findings" "$work/logs"
build/fuzz/test/fuzz/make_fuzz_seeds "$work/seeds"
perf_seeds=$(test -d ../shared/testdata/perf && echo ../shared/testdata/perf || true)
echo "== fuzz campaign: ${#targets[@]} targets at once, ${seconds} s each, $(nproc) cores, $(git rev-parse --short HEAD)"
for target in "${targets[@]}"; do
  mkdir -p "$work/$target"
  extra=$([[ $target == perf_data_reader_fuzzer ]] && echo "$perf_seeds" || true)
  # shellcheck disable=SC2086 # $extra is empty or one directory
  nice -n 10 build/fuzz/test/fuzz/$target -max_total_time="$seconds" -max_len=65536 \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/findings/" \
    "$work/$target" "$work/seeds" test/fuzz/regressions $extra >"$work/logs/$target.log" 2>&1 &
done
status=0
wait || status=$?
table "${targets[@]}"
ls "$work/findings"
exit "$status"
