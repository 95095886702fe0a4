#!/usr/bin/env bash
# The arm lab: tprof for arm64 on an emulated Neoverse CPU with a live PMUv3 (QEMU TCG, no KVM).
# Under -icount shift=1 every instruction takes two cycles of the emulated 1 GHz clock, so the
# PMU's cycle and instruction counts are an exact oracle (IPC 0.5 everywhere).
#
#   scripts/armlab.sh setup              install the cross compiler, the :arm64 libraries and QEMU
#   scripts/armlab.sh build              cross-build tprof and the lab's workloads (build/arm64)
#   scripts/armlab.sh kernel             build the lab's own guest kernel (Linux 6.12 from Debian's
#                                        linux-source-6.12 with test/armlab/kernel's hf_sample_period
#                                        patch and config), or reuse the one cached outside the
#                                        clone ($ARMLAB_KERNEL_CACHE, default ~/.cache/tprof-armlab)
#   scripts/armlab.sh check [OUT [BOOT...]]
#                                        boot each lab CPU (or the BOOTs named: n1, n1-smp2,
#                                        n2r0p0, n2r0p3, nopmu, and hf: N1 on the lab's kernel), run test/armlab/guest/checks.sh in
#                                        it, and leave every CPU's results in OUT/<BOOT> (default
#                                        build/armlab/results); judged by test/armlab/armlab_test
#                                        (ARMLAB_RESULTS=OUT build/.../tprof_armlab_tests)
#   scripts/armlab.sh run [--cpu MODEL] [--smp N] [--no-icount] [--lab-kernel] -- COMMAND [ARGS]
#                                        run one command in the guest (tprof is on its PATH, the
#                                        workloads in /lab/bin); it runs in /work, whose files come
#                                        back to build/armlab/run (or --out DIR); --lab-kernel
#                                        boots the lab's own kernel (hf_sample_period)
#
# MODEL is a QEMU -cpu value: neoverse-n1 (default), "max,midr=0x410fd490" (Neoverse N2 r0p0),
# "max,pmu=off" (no PMU) ... Every failure to set up or boot ends with one line saying why.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lab=${ARMLAB_DIR:-$root/build/armlab}
build=${ARMLAB_BUILD:-$root/build/arm64}
cache=$lab/cache
triplet=aarch64-linux-gnu
boot_timeout=${ARMLAB_TIMEOUT:-600}  # a boot; its checks take 5-50 s
kernel_cache=${ARMLAB_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tprof-armlab}
kernel_source=/usr/src/linux-source-6.12.tar.xz

die() {
  echo "armlab: $*" >&2
  exit 1
}

setup() {
  "$root/scripts/setup.sh" --armlab
}

# Downloads Debian packages for arm64 (the first name that downloads, for alternatives given as
# "a|b") and unpacks them all into DIR, which is made anew.
unpack_packages() {
  local dir=$1
  shift
  rm -rf "$dir" "$dir.debs" && mkdir -p "$dir" "$dir.debs"
  local package choice
  for package in "$@"; do
    for choice in ${package//|/ }; do
      (cd "$dir.debs" && apt-get download -q "$choice:arm64" >/dev/null 2>&1) && continue 2
    done
    die "cannot download $package for arm64 (run 'scripts/armlab.sh setup': it adds the arm64 architecture)"
  done
  for deb in "$dir.debs"/*.deb; do dpkg-deb -x "$deb" "$dir" || die "cannot unpack $deb"; done
  rm -rf "$dir.debs"
}

# The newest Debian cloud kernel for arm64 (CONFIG_ARM_PMU=y, PL011 console built in), busybox,
# and Linux perf with the libraries it needs (the reference the lab holds tprof to), unpacked
# into the cache; downloaded once.
fetch_guest_parts() {
  mkdir -p "$cache"
  if [ ! -f "$cache/vmlinuz" ]; then
    local kernel_package
    kernel_package=$(apt-cache depends linux-image-cloud-arm64:arm64 2>/dev/null |
      sed -n 's/^ *Depends: \(linux-image-[0-9.]*-[0-9]*-cloud-arm64\).*/\1/p' | head -n 1 || true)
    [ -n "$kernel_package" ] || die "cannot find Debian's linux-image-cloud-arm64 (run 'scripts/armlab.sh setup': it adds the arm64 architecture)"
    unpack_packages "$cache/kernel" "$kernel_package-unsigned|$kernel_package"
    grep -q '^CONFIG_ARM_PMU=y' "$cache"/kernel/boot/config-* ||
      die "$kernel_package has no built-in Arm PMU driver (CONFIG_ARM_PMU)"
    basename "$cache"/kernel/boot/vmlinuz-* >"$cache/kernel-version"
    cp "$cache"/kernel/boot/vmlinuz-* "$cache/vmlinuz"
    rm -rf "$cache/kernel"
  fi
  if [ ! -f "$cache/perf-root/usr/bin/perf" ]; then
    local packages
    packages=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
      --no-breaks --no-replaces --no-enhances --no-pre-depends linux-perf:arm64 2>/dev/null |
      sed -n 's/^\(lib.*\|linux-perf\):arm64$/\1/p' | sort -u || true)
    [ -n "$packages" ] || die "cannot find linux-perf:arm64's dependencies (run 'scripts/armlab.sh setup')"
    # shellcheck disable=SC2086 # one package a word
    unpack_packages "$cache/perf-root" $packages
  fi
  if [ ! -f "$cache/busybox" ]; then
    unpack_packages "$cache/bb" busybox-static
    cp "$cache/bb/bin/busybox" "$cache/busybox"
    rm -rf "$cache/bb"
  fi
}

# The lab's own kernel, for the hf boot: Debian's Linux 6.12 source with the hf_sample_period
# patch (test/armlab/kernel), configured from tinyconfig plus lab.config. Cached outside the clone
# under a key of the source package's version, the config, the patch and this recipe, so that a
# machine builds it once; prints the Image's path.
kernel_image() {
  local version recipe key
  version=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null) ||
    die "linux-source-6.12 is not installed (run 'scripts/armlab.sh setup')"
  [ -f "$kernel_source" ] || die "no $kernel_source (run 'scripts/armlab.sh setup')"
  recipe=$(declare -f build_kernel)
  key=$( (echo "$version" && cat "$root/test/armlab/kernel/lab.config" \
    "$root/test/armlab/kernel/hf_sample_period.patch" && echo "$recipe") | sha256sum | cut -c1-16)
  local dir=$kernel_cache/linux-6.12-$key
  if [ ! -f "$dir/Image" ]; then
    build_kernel "$dir" >&2
  fi
  echo "$dir/Image"
}

build_kernel() {
  local dir=$1 started=$SECONDS
  local work=$dir.building
  command -v $triplet-gcc >/dev/null || die "no $triplet-gcc (run 'scripts/armlab.sh setup')"
  rm -rf "$work" && mkdir -p "$work" || die "cannot make $work"
  echo "armlab: building the lab's kernel in $work (once per machine)"
  # The sources without Documentation (all but the Kconfig file it must have): 1.4 of 1.6 GB.
  tar -xJf "$kernel_source" -C "$work" --exclude='linux-source-6.12/Documentation' ||
    die "cannot unpack $kernel_source"
  tar -xJf "$kernel_source" -C "$work" linux-source-6.12/Documentation/Kconfig ||
    die "cannot unpack Documentation/Kconfig from $kernel_source"
  local src=$work/linux-source-6.12 out=$work/out
  (cd "$src" && patch -s -p1 <"$root/test/armlab/kernel/hf_sample_period.patch") ||
    die "the hf_sample_period patch does not apply to $kernel_source"
  local make_args=(-s -C "$src" O="$out" ARCH=arm64 CROSS_COMPILE=$triplet- -j "$(nproc)")
  make "${make_args[@]}" tinyconfig >/dev/null || die "make tinyconfig failed"
  "$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" \
    "$root/test/armlab/kernel/lab.config" >/dev/null || die "cannot merge lab.config"
  make "${make_args[@]}" olddefconfig >/dev/null || die "make olddefconfig failed"
  # Every option lab.config asks for must have survived (a dependency left unmet drops it).
  local option
  while read -r option; do
    grep -qx "$option" "$out/.config" || die "the kernel config lost $option (lab.config)"
  done < <(grep '^CONFIG_' "$root/test/armlab/kernel/lab.config")
  make "${make_args[@]}" Image || die "the kernel build failed (its output is above)"
  mkdir -p "$dir"
  cp "$out/arch/arm64/boot/Image" "$out/.config" "$dir/" || die "cannot copy the kernel to $dir"
  echo "$((SECONDS - started))" >"$dir/build-seconds"
  rm -rf "$work"
  echo "armlab: the lab's kernel built in $((SECONDS - started)) s: $dir/Image"
}

build_all() {
  command -v $triplet-g++ >/dev/null || die "no $triplet-g++ (run 'scripts/armlab.sh setup')"
  # A unity build: the lab's tprof is built to be run, not edited, and unity batches halve its
  # compile time (CMakeLists.txt, TPROF_UNITY).
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$root/cmake/$triplet.cmake" \
    -DCMAKE_BUILD_TYPE=Release -DTPROF_WERROR=ON -DTPROF_TESTS=OFF -DTPROF_BENCHMARKS=OFF \
    -DTPROF_UNITY=ON \
    >/dev/null || die "cmake could not configure the arm64 build in $build"
  cmake --build "$build" -j "$(nproc)" --target tprof || die "the arm64 build failed"
  # The workloads: -O2 -g, with frame pointers (leaf functions too, so a leaf's caller is in the
  # frame-record chain) and without; the counter is static (it runs before anything else).
  local bin=$lab/bin
  mkdir -p "$bin"
  local src=$root/test/armlab/workloads
  local cc="$triplet-gcc -O2 -g -Wall -Wextra -Werror"
  $cc -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -o "$bin/lab_loop_fp" \
    "$src/lab_loop.c" -pthread || die "cannot build lab_loop_fp"
  $cc -fomit-frame-pointer -fasynchronous-unwind-tables -o "$bin/lab_loop_nofp" \
    "$src/lab_loop.c" -pthread || die "cannot build lab_loop_nofp"
  $cc -static -o "$bin/pmu_count" "$src/pmu_count.c" || die "cannot build pmu_count"
  $cc -static -o "$bin/hf_periods" "$src/hf_periods.c" || die "cannot build hf_periods"
  $cc -static -o "$bin/as_user" "$src/as_user.c" || die "cannot build as_user"
  # The page-fault oracle of the x86-64 tests (test/workloads): faults per function by design.
  $triplet-g++ -O2 -g -Wall -Wextra -Werror -fno-omit-frame-pointer -static \
    -o "$bin/metric_oracle" "$root/test/workloads/metric_oracle.cpp" ||
    die "cannot build metric_oracle"
  # Functions that wait designed times, for --off-cpu (test/workloads).
  $cc -fno-omit-frame-pointer -o "$bin/off_cpu" "$root/test/workloads/off_cpu.c" ||
    die "cannot build off_cpu"
  # Phases that wait and compute in libc and the vDSO, for -g's repair of the frame-pointer
  # chains where a leaf makes no frame record (test/workloads). Its own leaves make none either
  # (no -mno-omit-leaf-frame-pointer): they are not where it spends its time.
  $cc -fno-omit-frame-pointer -o "$bin/libc_leaves" "$root/test/workloads/libc_leaves.c" \
    -pthread || die "cannot build libc_leaves"
  cp "$build/tprof" "$bin/tprof"
}

# Copies an arm64 ELF file's shared libraries (and theirs) into the guest's root, where the
# dynamic loader looks for them.
copy_libraries() {
  local dest=$1
  shift
  local queue=("$@") seen=" " file lib path
  while [ ${#queue[@]} -gt 0 ]; do
    file=${queue[0]}
    queue=("${queue[@]:1}")
    for lib in $($triplet-readelf -d "$file" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      case "$seen" in *" $lib "*) continue ;; esac
      seen+="$lib "
      path=""
      for dir in /lib/$triplet /usr/lib/$triplet "$cache/perf-root/lib/$triplet" \
        "$cache/perf-root/usr/lib/$triplet"; do
        [ -e "$dir/$lib" ] && path="$dir/$lib" && break
      done
      [ -n "$path" ] || die "cannot find $lib (needed by $(basename "$file")) for arm64"
      mkdir -p "$dest/usr/lib/$triplet"
      cp -L "$path" "$dest/usr/lib/$triplet/$lib"
      queue+=("$path")
    done
  done
}

# The initramfs: busybox, the lab's init and checks, tprof with its libraries (the two it opens
# when used, capstone and libpfm4, included), the workloads.
pack_initramfs() {
  local rootfs=$lab/rootfs
  rm -rf "$rootfs"
  mkdir -p "$rootfs"/{bin,sbin,proc,sys,dev,tmp,work,results,lab/bin,lib,usr/bin,usr/lib/$triplet}
  cp "$cache/busybox" "$rootfs/bin/busybox"
  cp "$root/test/armlab/guest/init" "$rootfs/init"
  cp "$root/test/armlab/guest/checks.sh" "$rootfs/lab/checks.sh"
  cp "$lab"/bin/* "$rootfs/lab/bin/"
  ln -s /lab/bin/tprof "$rootfs/usr/bin/tprof"
  # Arm's telemetry specifications (../shared/reference), for topdown --spec.
  local specs=$root/../shared/reference/arm-telemetry
  [ -d "$specs" ] || die "no $specs: the multiplexing check reads Arm's telemetry specifications"
  mkdir -p "$rootfs/lab/spec"
  cp "$specs"/*.json "$rootfs/lab/spec/"
  cp -L /lib/$triplet/ld-linux-aarch64.so.1 "$rootfs/lib/ld-linux-aarch64.so.1"
  cp "$cache/perf-root/usr/bin/perf" "$rootfs/usr/bin/perf"
  copy_libraries "$rootfs" "$lab/bin/tprof" "$lab/bin/lab_loop_fp" "$rootfs/usr/bin/perf" \
    /usr/lib/$triplet/libcapstone.so.4 /usr/lib/$triplet/libpfm.so.4
  cp -L /usr/lib/$triplet/libcapstone.so.4 /usr/lib/$triplet/libpfm.so.4 "$rootfs/usr/lib/$triplet/"
  ln -s usr/lib "$rootfs/lib64"
  mkdir -p "$rootfs/lib/$triplet"
  # The workloads' debug info stays in the binaries; the guest's tprof symbolizes from them.
  write_initrd
}

write_initrd() {
  (cd "$lab/rootfs" && find . | cpio -o -H newc --quiet | gzip -1 >"$lab/initrd.gz") ||
    die "cannot write $lab/initrd.gz"
}

# Boots one emulated CPU with the job named on the kernel command line; the guest prints its
# results as a base64 tar between two marker lines on the serial console.
boot() {
  local cpu=$1 smp=$2 icount=$3 job=$4 out=$5 kernel=${6:-$cache/vmlinuz}
  command -v qemu-system-aarch64 >/dev/null ||
    die "qemu-system-aarch64 is not installed (run 'scripts/armlab.sh setup')"
  [ -f "$lab/initrd.gz" ] || die "no initramfs in $lab (run 'scripts/armlab.sh build')"
  local console=$out.console
  local args=(-M virt -cpu "$cpu" -smp "$smp" -m 1024 -display none -monitor none -nic none
    -no-reboot -serial "file:$console" -kernel "$kernel" -initrd "$lab/initrd.gz"
    -append "console=ttyAMA0 quiet loglevel=3 panic=-1 armlab.job=$job")
  [ "$icount" = yes ] && args+=(-icount shift=1)
  local started=$SECONDS status=0
  timeout "$boot_timeout" qemu-system-aarch64 "${args[@]}" 2>"$out.qemu-stderr" 9>&- ||
    status=$?
  if [ $status -eq 124 ]; then
    die "the guest ($cpu) did not power off within ${boot_timeout}s; its console is in $console"
  elif [ $status -ne 0 ]; then
    die "qemu-system-aarch64 -cpu $cpu could not run: $(head -n 1 "$out.qemu-stderr")"
  fi
  rm -rf "$out" && mkdir -p "$out"
  sed -n '/^=== armlab results begin ===/,/^=== armlab results end ===/p' "$console" |
    sed '1d;$d' | tr -d '\r' | base64 -d 2>/dev/null | tar -xzf - -C "$out" 2>/dev/null ||
    die "the guest ($cpu) gave no results; its console is in $console"
  echo "$((SECONDS - started))" >"$out/boot-seconds"
}

# The lab's boots: name, QEMU CPU, CPUs, -icount, kernel (Debian's stock 6.1, or the lab's own
# 6.12 with hf_sample_period).
lab_cpus() {
  cat <<'EOF'
n1 neoverse-n1 1 yes stock
n1-smp2 neoverse-n1 2 yes stock
n2r0p0 max,midr=0x410fd490,pauth-impdef=on 1 yes stock
n2r0p3 max,midr=0x410fd493,pauth-impdef=on 1 yes stock
nopmu neoverse-n1,pmu=off 1 yes stock
hf neoverse-n1 1 yes lab
EOF
}

check() {
  local out=${1:-$lab/results}
  [ $# -gt 0 ] && shift
  local only=" $* "  # boots to run (all when none is named)
  fetch_guest_parts
  build_all >&2
  pack_initramfs
  mkdir -p "$out"
  local name cpu smp icount kernel image started=$SECONDS
  while read -r name cpu smp icount kernel; do
    [ "$only" = "  " ] || [[ $only == *" $name "* ]] || continue
    image=$cache/vmlinuz
    [ "$kernel" = lab ] && image=$(kernel_image)
    echo "armlab: booting $name (-cpu $cpu -smp $smp, $kernel kernel)"
    boot "$cpu" "$smp" "$icount" "$name" "$out/$name" "$image"
    echo "armlab: $name done in $(cat "$out/$name/boot-seconds") s"
  done < <(lab_cpus)
  echo "armlab: all boots done in $((SECONDS - started)) s; results in $out"
}

run() {
  local cpu=neoverse-n1 smp=1 icount=yes out=$lab/run kernel=stock
  while [ $# -gt 0 ]; do
    case $1 in
      --cpu) cpu=$2; shift 2 ;;
      --smp) smp=$2; shift 2 ;;
      --no-icount) icount=no; shift ;;
      --lab-kernel) kernel=lab; shift ;;
      --out) out=$2; shift 2 ;;
      --) shift; break ;;
      *) die "unknown option $1 (see the top of scripts/armlab.sh)" ;;
    esac
  done
  [ $# -gt 0 ] || die "give the command to run after --"
  fetch_guest_parts
  build_all >&2
  pack_initramfs
  # The command goes in as a file of its own: the kernel command line is short.
  mkdir -p "$lab/rootfs/lab"
  printf '%q ' "$@" >"$lab/rootfs/lab/run-command"
  write_initrd
  local image=$cache/vmlinuz
  [ "$kernel" = lab ] && image=$(kernel_image)
  boot "$cpu" "$smp" "$icount" run "$out" "$image"
  cat "$out/output"
  echo "armlab: exit status $(cat "$out/status"); files in $out/work" >&2
  return "$(cat "$out/status")"
}

# One lab at a time in a build directory: runs share the guest's root and initramfs.
if [ "${1:-}" != setup ]; then
  mkdir -p "$lab"
  exec 9>"$lab/lock"
  flock -w 900 9 || die "another lab has held $lab/lock for 15 minutes"
fi
case ${1:-} in
  setup) setup ;;
  build)
    fetch_guest_parts
    build_all
    pack_initramfs
    ;;
  kernel) kernel_image ;;
  check) shift; check "$@" ;;
  run) shift; run "$@" ;;
  *) sed -n '2,20p' "$0" >&2; exit 2 ;;
esac
