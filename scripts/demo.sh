#!/usr/bin/env bash
# Quick start: installs what is missing, builds tprof (Release), records the bundled demo
# workload and prints the report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --demo
# A unity build (CMakeLists.txt, TPROF_UNITY): the first build is most of a first run's time, and
# batching the sources about halves it.
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DTPROF_TESTS=OFF \
  -DTPROF_BENCHMARKS=OFF -DTPROF_UNITY=ON >/dev/null
cmake --build build/release --target tprof tprof_demo
mkdir -p out
echo "== tprof record -g -o out/demo.tprof -- build/release/tprof_demo"
build/release/tprof record -g -o out/demo.tprof -- build/release/tprof_demo
echo "== tprof report -i out/demo.tprof --limit 15"
build/release/tprof report -i out/demo.tprof --limit 15
echo "== tprof report -i out/demo.tprof --flamegraph out/demo.html --flame-roots thread"
build/release/tprof report -i out/demo.tprof --flamegraph out/demo.html --flame-roots thread
echo "The interactive flame graph is in out/demo.html (open it in any browser; it works offline)."
