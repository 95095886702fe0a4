#!/usr/bin/env bash
# The whole test suite: unit and integration tests in a -Werror Release build (g++) with the arm
# lab (tprof cross-built for arm64 and run on QEMU's emulated Neoverse PMUs: scripts/armlab.sh),
# again under AddressSanitizer + UndefinedBehaviorSanitizer (clang, so that both compilers hold
# all of tprof's code and tests to -Wall -Wextra -Werror), then the fuzz targets (clang), each
# run for a short time on their seed corpus and regression inputs.
# FUZZ_SECONDS (default 30 per target) sets how long each fuzzer runs.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each stage's wall time, printed at the end (and when a stage fails), so that CI says where its
# time goes; the whole run is kept under 45 minutes on a 2-core machine, half of CI's limit.
stage_names=()
stage_seconds=()
stage_name=""
stage_start=0
run_start=$SECONDS
stage() {
  if [ -n "$stage_name" ]; then
    stage_names+=("$stage_name")
    stage_seconds+=($((SECONDS - stage_start)))
  fi
  stage_name=$1
  stage_start=$SECONDS
}
print_stage_times() {
  local status=$1
  stage ""
  echo "== stage times (wall seconds)"
  local i
  for i in "${!stage_names[@]}"; do
    printf '%6d  %s\n' "${stage_seconds[$i]}" "${stage_names[$i]}"
  done
  printf '%6d  total%s\n' $((SECONDS - run_start)) "$([ "$status" -eq 0 ] || echo " (failed, exit $status)")"
}
trap 'print_stage_times $?' EXIT

stage "setup"
scripts/setup.sh --armlab
jobs=$(nproc)
# No test may hang the run: each has this limit unless it sets its own TIMEOUT (test/CMakeLists.txt).
test_timeout=${TPROF_TEST_TIMEOUT:-300}

build_suite() {
  local dir=$1; shift
  echo "== build $dir"
  cmake -S . -B "$dir" -G Ninja -DTPROF_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}
test_suite() {
  echo "== test $1"
  (cd "$1" && ctest --output-on-failure -j "$jobs" --timeout "$test_timeout")
}

stage "Release build"
# A unity build like the others here (TPROF_UNITY: 216 s against 326 s file by file on a 2-core
# VM): CI's builds are made once and thrown away, and the default build, file by file, is what a
# developer compiles (and what catches a file that leans on another's includes).
build_suite build/test-release -DCMAKE_BUILD_TYPE=Release -DTPROF_ARMLAB=ON -DTPROF_UNITY=ON
# The arm lab's parts are built before the tests, so that its boots (a ctest entry) only boot.
stage "arm lab build"
echo "== build the arm lab (tprof for arm64, its workloads, the guest's kernel and busybox)"
scripts/armlab.sh build
stage "arm lab kernel (cached outside the clone)"
# The hf boot's Linux 6.12 with hf_sample_period: built once per machine, reused after.
scripts/armlab.sh kernel
stage "Release tests (arm lab boots included)"
test_suite build/test-release
stage "ASan+UBSan build (clang)"
# -g1 (line tables, enough for the sanitizers' reports) compiles about a quarter faster than -g;
# the workloads keep their own -g. A unity build (TPROF_UNITY), as the others. clang rather
# than g++ here: it is the second compiler's -Werror over everything, and compiles this build in
# about half g++'s time.
CC=clang CXX=clang++ build_suite build/test-asan -DCMAKE_BUILD_TYPE=Debug -DTPROF_SANITIZE=ON -DTPROF_BENCHMARKS=OFF \
  -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 -DTPROF_UNITY=ON
stage "ASan+UBSan tests"
test_suite build/test-asan

fuzz_targets=(profile_reader_fuzzer record_decoder_fuzzer perf_data_reader_fuzzer
  perf_script_parser_fuzzer folded_parser_fuzzer elf_inflate_fuzzer writers_fuzzer)
stage "fuzz build (clang, the fuzz targets)"
echo "== fuzz (clang, ${FUZZ_SECONDS:-30} s per target)"
# -O1 with line tables: what libFuzzer's own documentation builds with, and a sixth faster to
# compile than -O2 -g.
CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  -DTPROF_FUZZ=ON -DTPROF_WERROR=ON -DTPROF_UNITY=ON >/dev/null
# Only the fuzz targets and what they link: the ASan+UBSan build above already held all the
# code to clang's -Werror.
cmake --build build/fuzz -j "$jobs" --target make_fuzz_seeds "${fuzz_targets[@]}"
stage "fuzz runs"
corpus=$(mktemp -d)
trap 'status=$?; rm -rf "$corpus"; print_stage_times $status' EXIT
mkdir -p "$corpus/seeds"
build/fuzz/test/fuzz/make_fuzz_seeds "$corpus/seeds"
# The perf.data reader starts from the real files in ../shared/testdata (when present).
perf_seeds=$(test -d ../shared/testdata/perf && echo ../shared/testdata/perf || true)
# fuzz TARGET: runs one fuzzer for FUZZ_SECONDS; its output in $corpus/TARGET.log, its exit
# status in $corpus/TARGET.status.
fuzz() {
  local target=$1 extra status=0
  mkdir -p "$corpus/$target"
  extra=$([[ $target == perf_data_reader_fuzzer ]] && echo "$perf_seeds" || true)
  # shellcheck disable=SC2086 # $extra is empty or one directory
  build/fuzz/test/fuzz/$target -max_total_time="${FUZZ_SECONDS:-30}" -max_len=65536 \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$corpus/" \
    "$corpus/$target" "$corpus/seeds" test/fuzz/regressions $extra >"$corpus/$target.log" 2>&1 ||
    status=$?
  echo "$status" >"$corpus/$target.status"
}
# As many fuzzers at a time as the machine has cores, each for the whole FUZZ_SECONDS.
for ((first = 0; first < ${#fuzz_targets[@]}; first += jobs)); do
  for target in "${fuzz_targets[@]:first:jobs}"; do fuzz "$target" & done
  wait
done
for target in "${fuzz_targets[@]}"; do
  if [ "$(cat "$corpus/$target.status")" != 0 ]; then
    tail -n 40 "$corpus/$target.log"
    echo "fuzz: $target found a failing input (kept as test/fuzz/regressions material: $(ls "$corpus" | grep -E '^(crash|leak|timeout|oom)-' | head -n 3))" >&2
    cp "$corpus"/crash-* "$corpus"/leak-* "$corpus"/timeout-* "$corpus"/oom-* build/ 2>/dev/null || true
    exit 1
  fi
  grep -E "^stat::number_of_executed_units|^Done" "$corpus/$target.log" | sed "s/^/$target: /"
done
echo "== all suites passed"
