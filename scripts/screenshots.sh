#!/usr/bin/env bash
# The README's and docs' pictures are screenshots the browser tests take of pages made from real
# recordings (test/browser/*.test.mjs write them to BUILD_DIR/test/browser-out). This runs those
# tests and copies the pictures the docs show into docs/img, with the fingerprint of the page
# template they were taken of (docs/img/template.sha256); --check says whether every picture the
# docs show is one the tests still take, and whether the template is still the one the pictures
# show (ctest's docs_screenshots), so a renamed or dropped screenshot, or a page whose look has
# changed since, fails rather than leaving a stale picture behind.
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
# What the pages look like: the one template every flame graph, differential and timeline page
# is written from.
template=report/flamegraph.html.in
fingerprint=$(sha256sum "$template" | cut -d' ' -f1)
status=0
if ((check)); then
  if [[ $(cat docs/img/template.sha256 2>/dev/null) != "$fingerprint" ]]; then
    echo "screenshots: $template changed since docs/img was taken: run scripts/screenshots.sh $1" >&2
    status=1
  fi
else
  echo "$fingerprint" >docs/img/template.sha256
fi
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
