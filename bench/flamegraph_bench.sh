#!/usr/bin/env bash
# How long `tprof report --flamegraph` takes on a profile and how big the page is, then (when
# Chromium and test/browser's node_modules are there) how long the page takes to load, zoom and
# search in headless Chromium.
#   bench/flamegraph_bench.sh PROFILE [BUILD_DIR]
#   bench/flamegraph_bench.sh --wide N [BUILD_DIR]   # synthetic folded stacks: N distinct
#                                                     # 20-frame stacks (N=100000: ~1M frames)
# A big real profile: build/release/tprof record -e cpu-clock -F 20000 -g -o big.tprof -- \
#   build/release/tprof_demo 1
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "${1:-}" = "--wide" ]; then
  n=${2:?usage: $0 --wide N [BUILD_DIR]}
  build=${3:-build/release}
  profile="$work/wide.folded"
  # N stacks of 20 frames over a pool of names: shared prefixes near the root, distinct leaves.
  awk -v n="$n" 'BEGIN { srand(1); for (i = 0; i < n; i++) { s = "main";
      for (d = 1; d < 20; d++) s = s ";fn_" d "_" int(rand() * (d < 4 ? 4 : 40));
      print s ";leaf_" i " " int(1 + rand() * 20) } }' > "$profile"
  echo "profile: $n synthetic folded stacks of 20 frames ($(du -h "$profile" | cut -f1))"
else
  profile=${1:?usage: $0 PROFILE [BUILD_DIR] | --wide N [BUILD_DIR]}
  build=${2:-build/release}
  echo "profile: $profile ($(du -h "$profile" | cut -f1))"
fi
out="$work/flame.html"
start=$(date +%s.%N)
"$build/tprof" report -i "$profile" --flamegraph "$out" 2>/dev/null
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v b="$(stat -c %s "$out")" \
  'BEGIN { printf "tprof report --flamegraph: %.2f s, %d bytes (%.1f MB)\n", e - s, b, b / 1e6 }'
if [ -x /usr/bin/chromium ] && [ -d test/browser/node_modules/playwright-core ]; then
  node bench/flamegraph_load.mjs "$out"
fi
