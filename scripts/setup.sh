#!/usr/bin/env bash
# Installs every Debian 12 package tprof's build, tests and benchmarks need; skips what is present.
#   scripts/setup.sh --demo     only what building tprof and its demo needs (scripts/demo.sh)
#   scripts/setup.sh            also what the host's tests and benchmarks need
#   scripts/setup.sh --armlab   also the arm lab's (scripts/armlab.sh): the arm64 architecture, the
#                               cross compiler, tprof's libraries for arm64 and QEMU
set -euo pipefail
armlab=no
tests=yes
case ${1:-} in
  "") ;;
  --demo) tests=no ;;
  --armlab) armlab=yes ;;
  *) echo "setup: unknown option $1 (known: --demo, --armlab)" >&2; exit 2 ;;
esac

# What tprof itself builds with.
packages=(
  build-essential cmake ninja-build pkg-config
  libdw-dev libelf-dev libzstd-dev libxxhash-dev libcapstone-dev libdeflate-dev
  nlohmann-json3-dev libcli11-dev libpfm4-dev libdtl-dev libabsl-dev libmimalloc-dev zlib1g-dev
)
if [ $tests = yes ]; then
  # The tests' references and tools: clang (fuzzing, clang-built binaries), rustc, perf,
  # binutils, pprof, Chromium for the flame graph pages, Python for the README's session check.
  packages+=(clang libclang-rt-14-dev clang-format llvm-14 rustc
    libgtest-dev libgmock-dev libbenchmark-dev linux-perf binutils
    protobuf-compiler golang-github-google-pprof-dev chromium python3)
  # Node.js runs the speedscope schema check (test/speedscope_schema) and the browser tests
  # (test/browser); Debian's only where no node/npm is installed already (a NodeSource nodejs
  # bundles npm and conflicts with Debian's).
  command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)
fi
if [ $armlab = yes ]; then
  # The same -dev packages as above, for arm64 beside the host's (Debian's multiarch); the stock
  # guest kernel and busybox are downloaded by scripts/armlab.sh, not installed. The lab's own
  # kernel (the hf boot) is built from Debian's linux-source-6.12 with flex, bison and bc.
  packages+=(qemu-system-arm cpio gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
    linux-source-6.12 flex bison bc
    libdw-dev:arm64 libelf-dev:arm64 libzstd-dev:arm64 libxxhash-dev:arm64 libcapstone-dev:arm64
    libdeflate-dev:arm64 libpfm4-dev:arm64 libabsl-dev:arm64 libmimalloc-dev:arm64
    zlib1g-dev:arm64)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
else
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if [ $armlab = yes ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $sudo dpkg --add-architecture arm64
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ $tests = yes ] || exit 0

# The speedscope export test validates against the schema of the pinned speedscope package.
schema_check="$(dirname "$0")/../test/speedscope_schema"
if [ ! -d "$schema_check/node_modules/ajv" ] || [ ! -d "$schema_check/node_modules/speedscope" ]; then
  echo "setup: npm ci in test/speedscope_schema"
  (cd "$schema_check" && npm ci --no-audit --no-fund --loglevel=error)
fi
# The browser tests drive Debian's chromium with playwright-core, pinned in package-lock.json.
browser_tests="$(cd "$(dirname "$0")/.." && pwd)/test/browser"
if [ ! -d "$browser_tests/node_modules/playwright-core" ]; then
  echo "setup: npm ci in test/browser"
  (cd "$browser_tests" && npm ci --no-audit --no-fund --loglevel=error)
fi
