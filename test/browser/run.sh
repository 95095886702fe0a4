#!/usr/bin/env bash
# ctest entry point of the browser tests: installs playwright-core from package-lock.json when
# node_modules is missing (scripts/setup.sh normally has), then runs the test: the script named
# first when it ends in .mjs (e.g. diff_flamegraph.test.mjs), else flamegraph.test.mjs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -d "$here/node_modules/playwright-core" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi
script=flamegraph.test.mjs
if [[ "${1:-}" == *.mjs ]]; then
  script=$1
  shift
fi
exec node "$here/$script" "$@"
