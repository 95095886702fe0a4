#!/bin/sh
# Startup cost of symbolizing a large binary without .debug_aranges (clang's and rustc's default):
# libdwfl cannot find units through them, so tprof reads every unit's own address ranges once
# per module, on the first miss. Generates a C++ file of UNITS units x 400 functions (each with
# an inlined helper), builds it with g++ (aranges) and with clang++ (none), -O2 -g, and runs
# symbolize_bench on both: "cold" includes opening the module, reading its symbols and, for
# clang's build, the unit ranges; llvm-symbolizer-14 on the same number of addresses of the
# clang build is printed beside it for scale.
#   bench/symbolize_no_aranges.sh [BUILD_DIR] [UNITS]   (defaults: build/test-release, 8)
set -eu
build=${1:-build/test-release}
units=${2:-8}
bench=$(realpath "$build/bench/symbolize_bench")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

unit=0
objects_gcc=""
objects_clang=""
while [ "$unit" -lt "$units" ]; do
  src=$tmp/unit$unit.cpp
  {
    echo "template <int K> static inline __attribute__((always_inline)) unsigned long mix(unsigned long x) {"
    echo "  for (int i = 0; i < K; ++i) x = (x ^ (x >> 7)) * 0x9e3779b97f4a7c15ul + K;"
    echo "  return x;"
    echo "}"
    f=0
    while [ "$f" -lt 400 ]; do
      echo "__attribute__((noinline)) unsigned long u${unit}_f$f(unsigned long x) { return mix<$((f % 7 + 1))>(x) + mix<$((f % 5 + 2))>(x >> 3); }"
      f=$((f + 1))
    done
    echo "unsigned long u${unit}_all(unsigned long x) {"
    f=0
    while [ "$f" -lt 400 ]; do
      echo "  x = u${unit}_f$f(x);"
      f=$((f + 1))
    done
    echo "  return x;"
    echo "}"
  } >"$src"
  g++ -O2 -g -c "$src" -o "$tmp/unit$unit.gcc.o"
  clang++ -O2 -g -c "$src" -o "$tmp/unit$unit.clang.o"
  objects_gcc="$objects_gcc $tmp/unit$unit.gcc.o"
  objects_clang="$objects_clang $tmp/unit$unit.clang.o"
  unit=$((unit + 1))
done
{
  unit=0
  while [ "$unit" -lt "$units" ]; do
    echo "unsigned long u${unit}_all(unsigned long);"
    unit=$((unit + 1))
  done
  echo "int main(int argc, char**) { unsigned long x = argc;"
  unit=0
  while [ "$unit" -lt "$units" ]; do
    echo "  x = u${unit}_all(x);"
    unit=$((unit + 1))
  done
  echo "  return static_cast<int>(x & 1); }"
} >"$tmp/main.cpp"
# shellcheck disable=SC2086 # one object a word
g++ -O2 -g "$tmp/main.cpp" $objects_gcc -o "$tmp/large_gcc"
# shellcheck disable=SC2086
clang++ -O2 -g "$tmp/main.cpp" $objects_clang -o "$tmp/large_clang"

for compiler in gcc clang; do
  binary=$tmp/large_$compiler
  aranges=$(readelf -S -W "$binary" | grep -c '\.debug_aranges' || true)
  echo "== $compiler: $(stat -c %s "$binary") bytes, .debug_aranges sections: $aranges"
  "$bench" "$binary" 5000
done

# llvm-symbolizer on 5000 addresses spread over the clang build's text, for scale.
text=$(readelf -S -W "$tmp/large_clang" | sed -n 's/.* \.text *PROGBITS *\([0-9a-f]*\) [0-9a-f]* \([0-9a-f]*\).*/\1 \2/p')
# shellcheck disable=SC2086 # two words: address and size
set -- $text
start=$((0x$1))
size=$((0x$2))
i=0
while [ "$i" -lt 5000 ]; do
  printf '0x%x\n' $((start + size * i / 5000))
  i=$((i + 1))
done >"$tmp/addresses"
t0=$(date +%s.%N)
llvm-symbolizer-14 --obj="$tmp/large_clang" --inlines <"$tmp/addresses" >/dev/null
t1=$(date +%s.%N)
echo "== llvm-symbolizer-14 on the clang build: 5000 addresses in $(echo "$t1 - $t0" | bc) s (process start and module open included)"
