#!/usr/bin/env bash
# The README's and docs' pictures are screenshots the browser tests take of pages made from real
# recordings (test/browser/*.test.mjs write them to BUILD_DIR/test/browser-out). This runs those
# tests and copies the pictures the docs show into docs/img; --check only says whether every
# picture the docs show is one the tests still take (ctest's docs_screenshots), so a renamed or
# dropped screenshot fails rather than leaving a stale picture behind.
#   scripts/screenshots.sh [--check] BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [[ ${1:-} == --check ]]; then
  check=1
  shift
fi
build=$(realpath "${1:?usage: $0 [--check] BUILD_DIR}")
out=$build/test/browser-out
# docs/img name <- the browser tests' screenshot
pictures=(
  "flamegraph.png flamegraph-name.png"
  "metric.png flamegraph-ipc.png"
  "diff-flamegraph.png diff-flamegraph-real.png"
  "wall-time.png flamegraph-off-cpu.png"
  "timeline-compare.png timeline-compare.png"
)
if ((!check)); then
  (cd "$build" && ctest -R '^(flamegraph_browser|diff_flamegraph_browser|timeline_browser)$' \
    --output-on-failure)
  mkdir -p docs/img
fi
status=0
for pair in "${pictures[@]}"; do
  read -r name source <<<"$pair"
  if [[ ! -f $out/$source ]]; then
    echo "screenshots: the browser tests no longer take $source (docs/img/$name)" >&2
    status=1
  elif ((check)); then
    [[ -f docs/img/$name ]] || {
      echo "screenshots: docs/img/$name is missing: run scripts/screenshots.sh $1" >&2
      status=1
    }
    grep -rqF "img/$name" README.md docs/*.md || {
      echo "screenshots: docs/img/$name is shown nowhere in README.md or docs/" >&2
      status=1
    }
  else
    cp "$out/$source" "docs/img/$name"
  fi
done
exit $status
