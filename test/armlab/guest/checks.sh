#!/bin/sh
# The arm lab's checks, run inside the emulated CPU by the guest's init:
#   checks.sh JOB OUT
# Each check runs tprof (or the independent counter, pmu_count) in OUT/NAME and keeps there its
# command line (cmd), stdout, stderr, exit status and the files it wrote. Nothing is judged here:
# the host's test (test/armlab/armlab_test.cpp) reads the results against the PMU's exact counts.
job=$1
out=$2
rounds=1000         # lab_loop rounds: 150,127 user instructions each
period=100003       # a prime sampling period, so samples do not beat with the loop
# Group reads credit a window to a function only when both its ends fall in it: light runs
# 100,000 cycles at a time, so its windows must be shorter than that.
group_period=40009
spec=/lab/spec/neoverse-n1.json   # Arm's telemetry specification, for more events than counters
fp=/lab/bin/lab_loop_fp
nofp=/lab/bin/lab_loop_nofp
# The seed's hard case (metric_oracle's calls of one iteration, ~160,000 cycles here) measured
# three ways: the long period alone, --burst's alternating period (the hf boot) and its fallback
# on a kernel without it (n1): every short_window events, or one short window per short_long.
# The window is longer than a page fault's kernel path (~5,000 cycles here): windows of 1,001
# and 4,001 cycles were seen to miss the faults they held (docs/trust.md).
short_rounds=2000
short_long=100003
short_window=20003
short_group='{cycles,instructions,page-faults}:S'
short_metric='faults_per_ki = page-faults / instructions * 1000'
# libc_leaves (test/workloads): each on-CPU phase runs 200 ms of its CPU time (200 million
# cycles here: about 1,000 samples a phase at this period), each off-CPU phase waits 10 x 20 ms.
leaves_on_cpu_ms=200
leaves_nap_ms=20
leaves_rounds=10
leaves_period=200003
# A clock sampled in user space only (what a user who is not root records) beside every page
# fault: the kernel's fault handling is left out of the clock's samples. Linux 6.1 (n1) cannot
# read the clock in inherited events and record says so; 6.12 (hf) reads it, and report measures
# the time left out.
user_clock_events='task-clock:u,software/config=2,period=1,name=page-faults/'
user_clock_metric='faults_per_ms = page-faults / task-clock * 1000000'

# The kernel lowers perf_event_max_sample_rate for good when sampling interrupts take long
# (perf_cpu_time_max_percent), and under emulation -g's (the registers and a stack copy) do: a
# check after one was throttled at a period the boot allows (the group reads: 80 times, 24 % of
# the time), and restoring the limit alone did not help, since the kernel's running average of
# interrupt times lowers it again at once. So the lowering is off and each check starts from
# the boot's limit: one check's interrupts do not throttle the next.
echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
boot_sample_rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)

# unprivileged COMMAND...: runs COMMAND as nobody (uid 65534) at perf_event_paranoid 2, the
# kernel's default (Debian's kernels default to 3, which refuses such a user everything).
unprivileged() {
  paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
  echo 2 >/proc/sys/kernel/perf_event_paranoid
  /lab/bin/as_user 65534 "$@"
  status=$?
  echo "$paranoid" >/proc/sys/kernel/perf_event_paranoid
  return $status
}

# check NAME COMMAND...: runs COMMAND in OUT/NAME.
check() {
  name=$1
  shift
  echo "$boot_sample_rate" >/proc/sys/kernel/perf_event_max_sample_rate
  mkdir -p "$out/$name"
  (
    cd "$out/$name" || exit 1
    echo "$*" >cmd
    start=$(cut -d' ' -f1 /proc/uptime)
    # A hung check must not take the boot's other results with it: 300 s each (the longest
    # takes a few); the lab's own shell functions run as they are.
    case $(type "$1") in
      *function*) "$@" >stdout 2>stderr ;;
      *) timeout 300 "$@" >stdout 2>stderr ;;
    esac
    echo $? >status
    end=$(cut -d' ' -f1 /proc/uptime)
    echo "$start $end" >uptime
  )
  echo "check $name: status $(cat "$out/$name/status")"
}

# What the guest is: CPU, PMU, counters.
machine() {
  cat /proc/cpuinfo >"$out/cpuinfo"
  cat /sys/devices/system/cpu/cpu0/regs/identification/midr_el1 >"$out/midr" 2>/dev/null
  ls /sys/bus/event_source/devices >"$out/pmus"
  ls /sys/bus/event_source/devices/armv8_pmuv3/events >"$out/pmu-events" 2>/dev/null
  dmesg | grep -i 'perfevents' >"$out/pmu-dmesg"
  nproc >"$out/nproc"
  uname -r >"$out/kernel"
}

# The lab's cells of the metric matrix (test/integration/metric_matrix_test.cpp): faults per
# kilo-instruction of metric_oracle, exact here, by one method over matrix_recordings recordings,
# each report kept (the three functions' rows) and the recording dropped, so that the results
# stay small for the serial console. The host's ArmLabHf.MetricMatrix judges them.
#   matrix_cell PLACEMENT ROUNDS ITERATIONS RECORD_ARGS...
matrix_recordings=20
matrix_cell() {
  placement=$1 matrix_rounds=$2 iterations=$3
  shift 3
  r=1
  while [ $r -le $matrix_recordings ]; do
    timeout 300 tprof record -q "$@" -o p.tprof -- /lab/bin/metric_oracle "$matrix_rounds" \
      "$iterations" \
      "truth_$r.json" "$placement" turns >/dev/null 2>>record_err || echo "record $r failed"
    timeout 300 tprof report -i p.tprof --json --no-inline --sort sym --limit 6 \
      --metric "$short_metric" \
      >"report_$r.json" 2>>report_err || echo "report $r failed"
    rm -f p.tprof
    r=$((r + 1))
  done
}

# A command that attaches to a running lab_loop: starts it, runs COMMAND with PID replaced by
# its pid, and waits for it.
with_running_loop() {
  loop_rounds=$1
  shift
  "$fp" "$loop_rounds" >/dev/null &
  loop=$!
  sleep 0.05
  cmd=""
  for a in "$@"; do
    [ "$a" = PID ] && a=$loop
    cmd="$cmd $a"
  done
  $cmd
  status=$?
  wait "$loop"
  return $status
}

# leaves NAME OPTION...: libc_leaves recorded with OPTIONs (the call graph), --off-cpu and
# cycles:u in NAME, and its stacks by thread as the host compares them: NAME_cycles,
# NAME_off_cpu, and NAME_preempted, the off-CPU intervals in which the scheduler preempted a
# thread (which fails, saying there is no such event, where there were none).
leaves() {
  leaves_name=$1
  shift
  check "$leaves_name" tprof record "$@" --off-cpu -e cycles:u -c $leaves_period -o p.tprof -- \
    /lab/bin/libc_leaves $leaves_on_cpu_ms $leaves_nap_ms $leaves_rounds
  leaves_profile=../$leaves_name/p.tprof
  check "${leaves_name}_cycles" tprof report -i "$leaves_profile" --folded --no-inline \
    --folded-prefix tid --event cycles
  check "${leaves_name}_off_cpu" tprof report -i "$leaves_profile" --folded --no-inline \
    --folded-prefix tid --event off-cpu
  check "${leaves_name}_preempted" tprof report -i "$leaves_profile" --folded --no-inline \
    --folded-prefix tid --off-cpu-reasons --event off-cpu:preempted
}

machine
case $job in
  n1)
    check oracle pmu_count -- "$fp" $rounds
    check oracle_nofp pmu_count -- "$nofp" $rounds
    check default_record tprof record -o p.tprof -- "$fp" $rounds
    check default_report tprof report -i ../default_record/p.tprof --json
    check period_record tprof record -e cycles:u -c $period -o p.tprof -- "$fp" $rounds
    check period_report tprof report -i ../period_record/p.tprof --json
    check sampled_ipc tprof record -e cycles:u,instructions:u -c $period -g -o p.tprof -- \
      "$fp" $rounds
    check sampled_ipc_report tprof report -i ../sampled_ipc/p.tprof --json
    check sampled_ipc_folded tprof report -i ../sampled_ipc/p.tprof --folded --no-marks
    check sampled_ipc_flame tprof report -i ../sampled_ipc/p.tprof --flamegraph ipc.html \
      --color ipc
    check annotate tprof report -i ../sampled_ipc/p.tprof --annotate heavy
    check group_read tprof record -e '{cycles:u,instructions:u}:S' -c $group_period -o p.tprof \
      -- "$fp" $rounds
    check group_read_report tprof report -i ../group_read/p.tprof --json
    # The group alone, as perf records it: IPC per interval from its windows.
    check group_only tprof record -e '{cycles:u,instructions:u}:S' --no-member-samples \
      -c $group_period -o p.tprof -- "$fp" $rounds
    check group_only_timeline tprof report -i ../group_only/p.tprof --timeline --interval 20 \
      --json
    check metrics_ipc tprof record -M ipc -c $group_period -o p.tprof -- "$fp" $rounds
    # The cost split's designed case: 30 % more rounds at the same cost per instruction (IPC 0.5
    # everywhere), three runs a side; the host diffs them (ArmLabN1.CostSplit...).
    for run in 1 2 3; do
      check split_old_$run tprof record -e cycles:u,instructions:u -c $period -o p.tprof -- \
        "$fp" $rounds
      check split_new_$run tprof record -e cycles:u,instructions:u -c $period -o p.tprof -- \
        "$fp" $((rounds * 13 / 10))
    done
    # Kernel work credited to the user function that faulted, through arm64's user pc (perf_regs
    # bit 32): cycles counted in the kernel too, page faults by design per function.
    check kernel_credit tprof record -e '{cycles,page-faults}:S' -c $group_period -o p.tprof -- \
      /lab/bin/metric_oracle 2 300 truth.json
    check kernel_credit_report tprof report -i ../kernel_credit/p.tprof --json --no-inline \
      --sort dso,sym
    check kernel_rows_report tprof report -i ../kernel_credit/p.tprof --json --no-inline \
      --sort dso,sym --kernel-rows
    # Faults per kilo-instruction per function, exact here: the workload counts its own
    # instructions around each call, and every fault is designed.
    check faults_per_ki tprof record -e '{cycles,instructions,page-faults}:S' -c $group_period \
      -o p.tprof -- /lab/bin/metric_oracle 2 300 truth.json
    check faults_per_ki_report tprof report -i ../faults_per_ki/p.tprof --json --no-inline \
      --sort sym --metric 'faults_per_ki = page-faults / instructions * 1000'
    check user_clock tprof record -F 2000 -e "$user_clock_events" -o p.tprof -- \
      /lab/bin/metric_oracle 2 300 truth.json
    check user_clock_report tprof report -i ../user_clock/p.tprof --json --no-inline --sort sym \
      --metric "$user_clock_metric"
    # Off-CPU time: wait_long sleeps 10 x 30 ms, wait_short 10 x 10 ms, beside cycles.
    check off_cpu tprof record --off-cpu --call-graph dwarf -e cycles:u -c $period -o p.tprof \
      -- /lab/bin/off_cpu 30 10 10 1000000
    check off_cpu_folded tprof report -i ../off_cpu/p.tprof --folded --event off-cpu
    check metrics_ipc_report tprof report -i ../metrics_ipc/p.tprof --json
    check metrics_l1 tprof record -M l1 -c $period -o p.tprof -- "$fp" $rounds
    check metrics_l1_report tprof report -i ../metrics_l1/p.tprof --json
    # Linux 6.1 has no hf_sample_period: the fallback samples every 10,000 cycles, fast enough
    # for the kernel to throttle it.
    check burst tprof record -M ipc --burst 100000,10000 -o p.tprof -- "$fp" $rounds
    check burst_report tprof report -i ../burst/p.tprof --json
    check short_fallback tprof record -e "$short_group" --burst $short_long,$short_window \
      -o p.tprof -- /lab/bin/metric_oracle $short_rounds 1 truth.json
    check short_fallback_report tprof report -i ../short_fallback/p.tprof --json --no-inline \
      --sort sym --metric "$short_metric"
    check dwarf tprof record --call-graph dwarf -e cycles:u -c $period -o p.tprof -- \
      "$nofp" $rounds
    check dwarf_folded tprof report -i ../dwarf/p.tprof --folded --no-marks
    check dwarf_children tprof report -i ../dwarf/p.tprof --children --json
    # The kernel's frame-pointer chains alone (fp,0: -g would mend them from stack copies).
    check fp_nofp tprof record --call-graph fp,0 -e cycles:u -c $period -o p.tprof -- \
      "$nofp" $rounds
    check fp_nofp_folded tprof report -i ../fp_nofp/p.tprof --folded --no-marks
    # -g through leaves that make no frame record (memset, memcpy, the vDSO's clock, PLT stubs;
    # issue 58): the same workload with -g (chains mended from 1 KiB stack copies), with
    # --call-graph dwarf and with the kernel's chains alone (fp,0), on the CPU and off it; the
    # host compares the main thread's stacks (ArmLabN1.FramePointerStacksThroughLibcLeaves...).
    leaves leaves_fp -g
    leaves leaves_dwarf --call-graph dwarf
    leaves leaves_plain --call-graph fp,0
    check topdown tprof topdown -M l1 --json -- "$fp" $rounds
    # As a user who is not root, at the kernel's default perf_event_paranoid (2): user space only.
    check topdown_unprivileged unprivileged tprof topdown -M l1 --json -- "$fp" $rounds
    check topdown_general tprof topdown -M l1,General --json -o counts.txt -- "$fp" $rounds
    check topdown_multiplexed tprof topdown --spec "$spec" \
      -M General,MPKI,Miss_Ratio,Branch_Effectiveness,Operation_Mix --json -o counts.txt -- \
      "$fp" $rounds
    check topdown_interval tprof topdown -M l1 -I 100 --json -- "$fp" $rounds
    check topdown_pid with_running_loop 2000 tprof topdown -M l1 -p PID --json
    check topdown_system tprof topdown -M l1 -a --json -- "$fp" $rounds
    check record_system tprof record -a -e cycles -c $period -o p.tprof -- "$fp" $rounds
    check record_system_report tprof report -i ../record_system/p.tprof --json --sort comm,sym
    check vdso tprof record -e cycles:u -c $period -o p.tprof -- "$fp" --clock 300000
    check vdso_report tprof report -i ../vdso/p.tprof --json --sort dso,sym
    check list_cpus tprof list cpus
    # Linux perf on the same workload: its counts, and a recording the host imports.
    check perf_stat perf stat -x, -e cycles:u,instructions:u,cycles,instructions -- \
      "$fp" $rounds
    check perf_record perf record -e cycles:u -c $period -o perf.data -- "$fp" $rounds
    cp "$fp" "$out/perf_record/"
    check perf_report perf report -i ../perf_record/perf.data --stdio --sort sym
    # perf's own --call-graph dwarf recording (arm64 user registers and stack copies) of the
    # binary without frame pointers, for the host to unwind; a longer period and 4 KiB copies
    # keep the file small for the serial console.
    check perf_dwarf perf record --call-graph dwarf,4096 -e cycles:u -c $((period * 20)) \
      -o perf.data -- "$nofp" $rounds
    cp "$nofp" "$out/perf_dwarf/"
    ;;
  n1-smp2)
    check oracle pmu_count -- "$fp" $rounds 2
    check threads tprof record -e cycles:u -c $period -o p.tprof -- "$fp" $rounds 2
    check threads_report tprof report -i ../threads/p.tprof --json --sort tid,sym
    check group_read tprof record -e '{cycles:u,instructions:u}:S' -c $group_period -o p.tprof \
      -- "$fp" $rounds 2
    check group_read_report tprof report -i ../group_read/p.tprof --json --sort tid,sym
    check system_wide tprof record -a -e cycles -c $period -o p.tprof -- "$fp" $rounds 2
    check system_wide_report tprof report -i ../system_wide/p.tprof --json --sort comm,sym
    check topdown_system tprof topdown -M l1 -a --json -- "$fp" $rounds 2
    check topdown_threads tprof topdown -M l1 --json -- "$fp" $rounds 2
    ;;
  n2r0p0 | n2r0p3)
    check oracle pmu_count -- "$fp" $rounds
    check topdown tprof topdown -M l1 --json -- "$fp" $rounds
    check topdown_text tprof topdown -M l1 -- "$fp" $rounds
    check metrics_l1 tprof record -M l1 -c $period -o p.tprof -- "$fp" $rounds
    check metrics_l1_report tprof report -i ../metrics_l1/p.tprof --json
    ;;
  hf)
    # The lab's own kernel (Linux 6.12 with the hf_sample_period patch, test/armlab/kernel): the
    # alternating period as the kernel gives it (hf_periods, no tprof code), then tprof's --burst
    # on its real path.
    check oracle pmu_count -- "$fp" $rounds
    check hf_refusals hf_periods --refusals
    check hf_periods hf_periods 100000 10000 0 20000000
    check hf_jitter hf_periods 100000 10000 8 20000000
    check burst tprof record -M ipc --burst 100000,10000 -o p.tprof -- "$fp" $rounds
    check burst_report tprof report -i ../burst/p.tprof --json
    check burst_jitter tprof record -M ipc --burst 100000,10000,8 -o p.tprof -- "$fp" $rounds
    check burst_jitter_report tprof report -i ../burst_jitter/p.tprof --json
    check burst_text tprof report -v -i ../burst/p.tprof
    # Faults per kilo-instruction of metric_oracle's long calls, as n1's faults_per_ki, in short
    # windows.
    check faults_per_ki tprof record -e '{cycles,instructions,page-faults}:S' \
      --burst $group_period,$short_window -o p.tprof -- /lab/bin/metric_oracle 2 300 truth.json
    check faults_per_ki_report tprof report -i ../faults_per_ki/p.tprof --json --no-inline \
      --sort sym --metric "$short_metric"
    check short_long tprof record -e "$short_group" -c 1000003 -o p.tprof -- \
      /lab/bin/metric_oracle $short_rounds 1 truth.json
    check short_long_report tprof report -i ../short_long/p.tprof --json --no-inline \
      --sort sym --metric "$short_metric"
    # The fallback's sampling (every short_window events) on this kernel, to compare the two
    # methods on the same kernel: n1's 6.1 takes its own fault path.
    check short_every tprof record -e "$short_group" -c $short_window -o p.tprof -- \
      /lab/bin/metric_oracle $short_rounds 1 truth.json
    check short_every_report tprof report -i ../short_every/p.tprof --json --no-inline \
      --sort sym --metric "$short_metric"
    check short_burst tprof record -e "$short_group" --burst $short_long,$short_window \
      -o p.tprof -- /lab/bin/metric_oracle $short_rounds 1 truth.json
    check short_burst_report tprof report -i ../short_burst/p.tprof --json --no-inline \
      --sort sym --metric "$short_metric"
    check user_clock tprof record -F 2000 -e "$user_clock_events" -o p.tprof -- \
      /lab/bin/metric_oracle 2 300 truth.json
    check user_clock_report tprof report -i ../user_clock/p.tprof --json --no-inline --sort sym \
      --metric "$user_clock_metric"
    # The matrix's lab cells: the kernel's burst windows (20,003 cycles after each 40,009) over
    # calls of 300 iterations (tens of ms) and of one (~160,000 cycles, some eight windows), the
    # faults spread, at entry and at exit.
    for placement in spread entry exit; do
      check matrix_burst_${placement}_long matrix_cell $placement 2 300 -e "$short_group" \
        --burst $group_period,$short_window
      check matrix_burst_${placement}_short matrix_cell $placement 60 1 -e "$short_group" \
        --burst $group_period,$short_window
    done
    ;;
  nopmu)
    check default_record tprof record -o p.tprof -- "$fp" 200
    check default_report tprof report -i ../default_record/p.tprof --json
    check explicit_cycles tprof record -e cycles,instructions -o p.tprof -- "$fp" 200
    check topdown tprof topdown -M l1 -- "$fp" 200
    ;;
  *)
    echo "unknown job $job" >&2
    exit 2
    ;;
esac
