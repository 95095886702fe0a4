// A clock sampled in one mode (task-clock:u, what a user who is not root records) whose samples
// leave out the time spent in the kernel: record has it read itself (ReadClocksSampledAlone), the
// reads say how much was left out (ClockLeftOutTime), and a rate per time over work the kernel does
// (faults per ms) says it reads high, with the value that time gives (ClockLeftOutBias). The
// numbers are worked by hand: a function sampled for 50 ms with 5,000 faults (100 faults/ms)
// whose windows read 1.6 times the time its samples stand for is 62.5 faults/ms with that time.
// A clock in both modes leaves out only the ticks its timer missed, held the same way.
#include "core/analysis/clock_left_out.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <string>
#include <vector>

#include "core/analysis/derived_metrics.h"
#include "core/analysis/report_table.h"
#include "pmu/event_spec.h"

namespace tprof {
namespace clock_left_out_test {
namespace {

constexpr uint64_t kPeriod = 50000;  // ns: a 20 kHz clock

EventDesc UserClock(bool reads_itself) {
  EventDesc e;
  e.name = "task-clock:u";
  e.type = PERF_TYPE_SOFTWARE;
  e.config = PERF_COUNT_SW_TASK_CLOCK;
  e.exclude_kernel = true;
  e.period_or_frequency = kPeriod;
  if (reads_itself) {
    e.sample_type = PERF_SAMPLE_READ;
    e.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
    e.group_leader = 0;
    e.group_members = {0};
  }
  return e;
}

EventDesc Other(const std::string& name, uint32_t type, uint64_t config) {
  EventDesc e;
  e.name = name;
  e.type = type;
  e.config = config;
  e.exclude_kernel = name.ends_with(":u");
  return e;
}

Sample ClockSample(uint32_t tid, uint32_t cpu, uint64_t read) {
  Sample s;
  s.tid = tid;
  s.cpu = cpu;
  s.event = 0;
  s.period = kPeriod;
  s.counter_values = {read};
  return s;
}

TEST(ClockLeftOutTime, ReadsBeyondEachPeriodAreWhatTheDroppedSamplesStoodFor) {
  ClockLeftOutTime left_out({UserClock(true), Other("page-faults", PERF_TYPE_SOFTWARE, 2)});
  EXPECT_TRUE(left_out.any());
  EXPECT_TRUE(left_out.reads_itself(0));
  EXPECT_FALSE(left_out.reads_itself(1));
  EXPECT_EQ(left_out.Add(ClockSample(1, 0, 50000)), 0);     // the thread's first: nothing before
  EXPECT_EQ(left_out.Add(ClockSample(1, 0, 100000)), 0);    // one period on
  EXPECT_EQ(left_out.Add(ClockSample(1, 0, 250000)), 1e5);  // two periods dropped between
  EXPECT_EQ(left_out.Add(ClockSample(2, 0, 200000)), 0);    // another thread's first
  EXPECT_EQ(left_out.Add(ClockSample(1, 1, 400000)), 0);    // the thread on another CPU: a new run
  EXPECT_EQ(left_out.Add(ClockSample(1, 0, 30000)), 0);     // a read that went backwards
  EXPECT_EQ(left_out.Add(ClockSample(1, 0, 130000)), 50000);
  Sample fault;
  fault.event = 1;
  fault.period = 1;
  EXPECT_EQ(left_out.Add(fault), 0);
  EXPECT_EQ(left_out.totals(), (std::vector<double>{150000, 0}));
  // A clock that samples both modes leaves out only the ticks its timer missed: a tick late by
  // under half a period (given back by the next) is not one.
  EventDesc both = UserClock(true);
  both.exclude_kernel = false;
  ClockLeftOutTime missed({both});
  EXPECT_TRUE(missed.reads_itself(0));
  EXPECT_EQ(missed.Add(ClockSample(1, 0, 50000)), 0);
  EXPECT_EQ(missed.Add(ClockSample(1, 0, 120000)), 0);     // 20 us late
  EXPECT_EQ(missed.Add(ClockSample(1, 0, 160000)), 0);     // and early
  EXPECT_EQ(missed.Add(ClockSample(1, 0, 1210000)), 1e6);  // 20 ticks missed
  EXPECT_EQ(missed.totals(), (std::vector<double>{1e6}));
  // A lost record or the clock's own throttle: every thread's next read spans samples the
  // kernel lost or did not take, which are not ticks the timer missed.
  missed.Interrupt();
  EXPECT_EQ(missed.Add(ClockSample(1, 0, 2260000)), 0);    // 20 periods across the loss
  EXPECT_EQ(missed.Add(ClockSample(1, 0, 2410000)), 1e5);  // and two ticks missed after it
  missed.Interrupt(0);                                     // its throttle
  EXPECT_EQ(missed.Add(ClockSample(1, 0, 2560000)), 0);
  EXPECT_EQ(missed.totals(), (std::vector<double>{1.1e6}));
  EXPECT_EQ(missed.across_interrupts(), (std::vector<double>{1.1e6}));
  // Another event's throttle leaves the clock's reads as they are: what they miss, it missed.
  ClockLeftOutTime beside({both, Other("page-faults", PERF_TYPE_SOFTWARE, 2)});
  EXPECT_EQ(beside.Add(ClockSample(1, 0, 50000)), 0);
  beside.Interrupt(1);
  EXPECT_EQ(beside.Add(ClockSample(1, 0, 200000)), 1e5);
  // A clock in one mode keeps a read across a loss: it holds the other mode's time too.
  left_out.Interrupt();
  EXPECT_EQ(left_out.Add(ClockSample(1, 0, 230000)), 50000);
  // Not read: not watched.
  both.sample_type = 0;
  both.group_members.clear();
  EXPECT_FALSE(ClockLeftOutTime({both}).any());
}

// One row `f` sampled for 50 ms (1,000 clock samples) with `faults` faults; its 900 windows read
// `stretch` times their periods, and its 100 windows across call edges `edge_ms` more.
ReportTable TableOf(std::vector<EventDesc> events, uint64_t faults, double stretch, double edge_ms,
                    double run_left_out_ms) {
  ReportTable table;
  table.events = std::move(events);
  table.sort = {SortKey::kSymbol};
  table.total_period = {1000 * kPeriod, faults};
  table.total_samples = {1000, faults};
  ReportRow row;
  row.keys = {"f"};
  row.self_period = table.total_period;
  row.self_samples = table.total_samples;
  row.total_period = row.self_period;
  row.total_samples = row.self_samples;
  if (!table.events[0].group_members.empty()) {
    ReadGroup group;
    group.leader = 0;
    group.members = {0};
    group.windows_credited = 900;
    group.read_totals = {1000 * kPeriod + static_cast<uint64_t>(run_left_out_ms * 1e6)};
    table.groups = {group};
    GroupCredit credit;
    credit.windows_credited = 900;
    credit.deltas = {900.0 * kPeriod * stretch};
    credit.products = {900.0 * kPeriod * kPeriod * stretch * stretch};
    credit.edge_windows = 100;
    credit.edge_leader_delta = 100.0 * kPeriod + edge_ms * 1e6;
    row.groups = {credit};
  }
  table.rows = {row};
  return table;
}

MetricValue Evaluate(const ReportTable& table, const std::string& formula,
                     DerivedMetrics* plan_out = nullptr) {
  auto metric = ParseUserMetric(formula, table.events);
  EXPECT_TRUE(metric.ok()) << metric.error().message();
  auto plan = DerivedMetrics::Plan(table, {}, "", {*metric});
  EXPECT_TRUE(plan.ok());
  for (size_t c = 0; c < plan->columns().size(); ++c)
    if (plan->columns()[c].name == metric->name &&
        plan->columns()[c].source == MetricSource::kSampledPeriods) {
      MetricValue v = plan->Evaluate(c, table, table.rows[0]);
      if (plan_out) *plan_out = *plan;
      return v;
    }
  ADD_FAILURE() << "no sampled column for " << formula;
  return {};
}

const char* kFaultsPerMs = "faults_per_ms = page-faults / task-clock * 1000000";

TEST(ClockLeftOutBias, ARateOverKernelWorkReadsHighByWhatTheClocksReadsCounted) {
  const std::vector<EventDesc> events = {UserClock(true),
                                         Other("page-faults", PERF_TYPE_SOFTWARE, 2)};
  // Windows alone: 50 ms sampled, 80 ms read.
  MetricValue v = Evaluate(TableOf(events, 5000, 1.6, 0, 40), kFaultsPerMs);
  ASSERT_TRUE(v.value && v.bias);
  EXPECT_NEAR(*v.value, 100, 1e-9);
  EXPECT_EQ(v.bias->kind, WindowBiasKind::kClockInOneMode);
  EXPECT_NE(v.bias->reason.find("over 900 windows here 1.60x"), std::string::npos)
      << v.bias->reason;
  EXPECT_NE(v.bias->reason.find("this value is 62.5, so it reads high"), std::string::npos)
      << v.bias->reason;
  // 10 ms more left out across its call edges, some of which may be its own: 5,000 / 90 ms.
  v = Evaluate(TableOf(events, 5000, 1.6, 10, 40), kFaultsPerMs);
  ASSERT_TRUE(v.bias);
  EXPECT_NE(v.bias->reason.find("this value is 55.56 to 62.5, so it reads high"), std::string::npos)
      << v.bias->reason;
  // Nothing left out: nothing to say.
  v = Evaluate(TableOf(events, 5000, 1.0, 0, 0), kFaultsPerMs);
  EXPECT_FALSE(v.bias) << v.bias->reason;
  // No faults here (other functions had them): no time moves 0.
  ReportTable none = TableOf(events, 0, 1.6, 10, 40);
  none.total_period[1] = none.total_samples[1] = 100;
  v = Evaluate(none, kFaultsPerMs);
  EXPECT_FALSE(v.bias) << v.bias->reason;
  // A rate over user-space work the clock does sample: user instructions per user ns.
  const std::vector<EventDesc> user_work = {
      UserClock(true), Other("instructions:u", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS)};
  v = Evaluate(TableOf(user_work, 5000, 1.6, 10, 40), "ipns = instructions / task-clock");
  EXPECT_FALSE(v.bias) << v.bias->reason;
}

TEST(ClockLeftOutBias, WithoutWindowsTheRunsLeftOutTimeBoundsIt) {
  const std::vector<EventDesc> events = {UserClock(true),
                                         Other("page-faults", PERF_TYPE_SOFTWARE, 2)};
  ReportTable table = TableOf(events, 5000, 1.6, 0, 50);
  table.rows[0].groups[0] = GroupCredit{};  // calls too short for a window of their own
  MetricValue v = Evaluate(table, kFaultsPerMs);
  ASSERT_TRUE(v.bias);
  EXPECT_NE(v.bias->reason.find("50 ms over the run, how much of it here unknown; with all of it "
                                "counted this value would be 50, so it may read high"),
            std::string::npos)
      << v.bias->reason;
  // Were that time in windows across lost samples, it held the other mode's time too: still said.
  table.groups[0].leader_read_across_interrupts = 50000000;
  v = Evaluate(table, kFaultsPerMs);
  ASSERT_TRUE(v.bias);
  EXPECT_EQ(v.bias->kind, WindowBiasKind::kClockInOneMode);
  // A clock in both modes: the time its reads held across lost samples was theirs
  // (LostSamplesBias says so), not ticks its timer missed.
  EventDesc both = UserClock(true);
  both.name = "task-clock";
  both.exclude_kernel = false;
  table = TableOf({both, events[1]}, 5000, 1.6, 0, 50);
  table.rows[0].groups[0] = GroupCredit{};
  v = Evaluate(table, kFaultsPerMs);
  ASSERT_TRUE(v.bias);
  EXPECT_EQ(v.bias->kind, WindowBiasKind::kClockMissedTicks);
  table.groups[0].leader_read_across_interrupts = 50000000;
  v = Evaluate(table, kFaultsPerMs);
  EXPECT_FALSE(v.bias) << v.bias->reason;
  // A tenth of a millisecond over the run cannot move it beyond its interval.
  table = TableOf(events, 5000, 1.6, 0, 0.1);
  table.rows[0].groups[0] = GroupCredit{};
  v = Evaluate(table, kFaultsPerMs);
  EXPECT_FALSE(v.bias) << v.bias->reason;
}

TEST(ClockLeftOutBias, AClockNotReadSaysSoAndAnIntervalUsesItsOwnReads) {
  const std::vector<EventDesc> events = {UserClock(false),
                                         Other("page-faults", PERF_TYPE_SOFTWARE, 2)};
  DerivedMetrics plan;
  MetricValue v = Evaluate(TableOf(events, 5000, 1.6, 0, 40), kFaultsPerMs, &plan);
  ASSERT_TRUE(v.bias);
  EXPECT_EQ(v.bias->kind, WindowBiasKind::kClockInOneMode);
  EXPECT_NE(v.bias->reason.find("did not read"), std::string::npos) << v.bias->reason;
  EXPECT_NE(v.bias->reason.find("may read high"), std::string::npos) << v.bias->reason;
  // A timeline's interval knows what its own samples left out: 30 ms beside 50 ms sampled.
  size_t column = plan.columns().size();
  for (size_t c = 0; c < plan.columns().size(); ++c)
    if (plan.columns()[c].name == "faults_per_ms") column = c;
  ASSERT_LT(column, plan.columns().size());
  std::vector<uint64_t> periods, samples;
  for (size_t e : plan.columns()[column].events) {
    periods.push_back(e == 0 ? 50000000 : 5000);
    samples.push_back(e == 0 ? 1000 : 5000);
  }
  const std::vector<double> counts(periods.begin(), periods.end());
  const MetricValue interval = plan.EvaluateSampled(column, periods, samples);
  ASSERT_TRUE(interval.value);
  EXPECT_NEAR(*interval.value, 100, 1e-9);
  auto bias = plan.ClockLeftOutBias(column, counts, interval, nullptr, true, 30e6);
  ASSERT_TRUE(bias);
  EXPECT_NE(bias->reason.find("30 ms here; with that time counted this value is 62.5, so it "
                              "reads high"),
            std::string::npos)
      << bias->reason;
  EXPECT_FALSE(plan.ClockLeftOutBias(column, counts, interval, nullptr, true, 0.0));
}

// A row whose windows span few of its samples (short calls: most of its windows cross its call
// edges) cannot say from them how much time it left out. The stretch its two windows show here is
// none at all, which the old rule took for "nothing left out" and gave no reason (a recording of
// short fault bursts read 6220 faults/ms so, against 250 by the workload's own counts); the run's
// 40 ms left out bound it instead: 5,000 faults over 50 + 40 ms.
TEST(ClockLeftOutBias, AFewWindowsGiveNoCorrectedValueButTheRunsBound) {
  const std::vector<EventDesc> events = {UserClock(true),
                                         Other("page-faults", PERF_TYPE_SOFTWARE, 2)};
  ReportTable table = TableOf(events, 5000, 1.0, 0, 40);
  GroupCredit& credit = table.rows[0].groups[0];
  credit.windows_credited = 2;
  credit.deltas = {2.0 * kPeriod};
  credit.products = {2.0 * kPeriod * kPeriod};
  MetricValue v = Evaluate(table, kFaultsPerMs);
  ASSERT_TRUE(v.bias);
  EXPECT_EQ(v.bias->kind, WindowBiasKind::kClockInOneMode);
  EXPECT_NE(v.bias->reason.find("40 ms over the run, how much of it here unknown (its 2 windows "
                                "are too few to say); with all of it counted this value would be "
                                "55.56, so it may read high"),
            std::string::npos)
      << v.bias->reason;
  // 13 windows that read 1.6x: no value "with that time counted" from so few.
  credit.windows_credited = 13;
  credit.deltas = {13.0 * kPeriod * 1.6};
  credit.products = {13.0 * kPeriod * kPeriod * 1.6 * 1.6};
  v = Evaluate(table, kFaultsPerMs);
  ASSERT_TRUE(v.bias);
  EXPECT_EQ(v.bias->reason.find("this value is"), std::string::npos) << v.bias->reason;
  EXPECT_NE(v.bias->reason.find("its 13 windows are too few to say"), std::string::npos)
      << v.bias->reason;
  // 19 windows over 30 samples span most of them but are fewer than 20; 20 are enough (read at
  // 3x, beyond the wide interval of 30 samples).
  ReportTable few = TableOf(events, 5000, 1.0, 0, 40);
  few.total_period[0] = few.rows[0].self_period[0] = few.rows[0].total_period[0] = 30 * kPeriod;
  few.total_samples[0] = few.rows[0].self_samples[0] = few.rows[0].total_samples[0] = 30;
  few.total_period[1] = few.rows[0].self_period[1] = few.rows[0].total_period[1] = 150;
  few.total_samples[1] = few.rows[0].self_samples[1] = few.rows[0].total_samples[1] = 150;
  few.groups[0].read_totals = {30 * kPeriod + 40000000};
  for (const double windows : {19.0, 20.0}) {
    GroupCredit& own = few.rows[0].groups[0];
    own.windows_credited = static_cast<uint64_t>(windows);
    own.deltas = {windows * kPeriod * 3};
    own.products = {windows * kPeriod * kPeriod * 3 * 3};
    v = Evaluate(few, kFaultsPerMs);
    ASSERT_TRUE(v.bias) << windows;
    EXPECT_EQ(v.bias->reason.find("over 20 windows here 3.00x") != std::string::npos, windows == 20)
        << v.bias->reason;
    EXPECT_EQ(v.bias->reason.find("its 19 windows are too few to say") != std::string::npos,
              windows == 19)
        << v.bias->reason;
  }
  // 499 windows over its 1,000 samples are still too few; 500 are enough: the row's own stretch
  // gives the value.
  for (const double windows : {499.0, 500.0}) {
    credit.windows_credited = static_cast<uint64_t>(windows);
    credit.deltas = {windows * kPeriod * 1.6};
    credit.products = {windows * kPeriod * kPeriod * 1.6 * 1.6};
    v = Evaluate(table, kFaultsPerMs);
    ASSERT_TRUE(v.bias);
    EXPECT_EQ(
        v.bias->reason.find("over 500 windows here 1.60x the time its samples stand for; with "
                            "that time counted this value is 62.5") != std::string::npos,
        windows == 500)
        << v.bias->reason;
    EXPECT_EQ(v.bias->reason.find("its 499 windows span too few of its 1000 samples to say") !=
                  std::string::npos,
              windows == 499)
        << v.bias->reason;
    EXPECT_EQ(v.bias->reason.find("this value is") == std::string::npos, windows == 499)
        << v.bias->reason;
  }
}

// The report table's builder keeps what a clock that reads itself held across lost samples apart
// from the ticks its timer missed (ClockLeftOutTime's rule, which frames and intervals use too),
// and ClockLeftOutOfReads, which the rows' reasons and the header's line read, leaves it out. By
// hand: reads 50, 200 (two ticks missed: 100 left out), a loss, 450 (four samples lost: 200
// across it), 500 us; four samples of 50 us.
class OneFunctionResolver : public FrameResolver {
 public:
  ResolvedFrame Resolve(const Mapping*, uint64_t) override {
    ResolvedFrame r;
    r.module = "/bin/prog";
    r.function = "f";
    r.resolved = true;
    return r;
  }
};

ReportTable TableOfReads(const EventDesc& clock, bool lost, const SampleFilter& filter = {}) {
  OneFunctionResolver resolver;
  // Each sample taken when the clock reads what it does, on a record clock starting at 1 ns.
  auto builder = ReportTableBuilder::Create({clock, Other("page-faults", PERF_TYPE_SOFTWARE, 2)},
                                            resolver, {SortKey::kSymbol}, filter, 1);
  EXPECT_TRUE(builder.ok());
  const auto add = [&](uint64_t read) {
    Sample s = ClockSample(1, 0, read);
    s.pid = 1;
    s.ip = 0x1000;
    s.time = 1 + read;
    (*builder)->OnSample(s);
  };
  add(50000);
  add(200000);
  ThrottleRecord other;  // the faults' throttle: not the clock's
  other.event = 1;
  other.throttled = true;
  (*builder)->OnThrottle(other);
  if (lost) {
    LostRecord loss;
    loss.lost = 4;
    (*builder)->OnLost(loss);
  }
  add(450000);
  add(500000);
  return (*builder)->Finish();
}

TEST(ClockLeftOutOfReads, ATablesClockKeepsItsReadsAcrossLostSamplesApart) {
  EventDesc both = UserClock(true);
  both.name = "task-clock";
  both.exclude_kernel = false;
  ReportTable table = TableOfReads(both, /*lost=*/true);
  ASSERT_EQ(table.groups.size(), 1u);
  EXPECT_EQ(table.groups[0].read_totals, (std::vector<uint64_t>{500000}));
  EXPECT_EQ(table.groups[0].leader_read_across_interrupts, 200000u);
  auto reads = ClockLeftOutOfReads(table, table.groups[0]);
  ASSERT_TRUE(reads);
  EXPECT_FALSE(reads->one_mode);
  EXPECT_DOUBLE_EQ(reads->read, 500000);
  EXPECT_DOUBLE_EQ(reads->left_out, 100000);
  EXPECT_TRUE(reads->BeyondLateness());
  // Without the loss the same reads are ticks missed: 300 us.
  table = TableOfReads(both, /*lost=*/false);
  EXPECT_EQ(table.groups[0].leader_read_across_interrupts, 0u);
  reads = ClockLeftOutOfReads(table, table.groups[0]);
  ASSERT_TRUE(reads);
  EXPECT_DOUBLE_EQ(reads->left_out, 300000);
  // A clock in one mode keeps its reads across the loss: they hold the kernel's time too.
  table = TableOfReads(UserClock(true), /*lost=*/true);
  reads = ClockLeftOutOfReads(table, table.groups[0]);
  ASSERT_TRUE(reads);
  EXPECT_TRUE(reads->one_mode);
  EXPECT_DOUBLE_EQ(reads->left_out, 300000);
  // A time range from 300 us holds the last two samples (a window of 50 us beyond its period of
  // 50): the 400 us the reads counted before it are not the range's, which left nothing out.
  SampleFilter from_300us;
  from_300us.time_start = 0.0003;
  table = TableOfReads(both, /*lost=*/false, from_300us);
  EXPECT_EQ(table.total_period[0], 100000u);
  reads = ClockLeftOutOfReads(table, table.groups[0]);
  ASSERT_TRUE(reads);
  EXPECT_DOUBLE_EQ(reads->read, 100000);
  EXPECT_DOUBLE_EQ(reads->left_out, 0);
  EXPECT_FALSE(reads->BeyondLateness());
  // A clock in both modes beside other members does not keep its reads across losses apart:
  // nothing is said; in one mode the whole of it is the other mode's time, as before.
  table = TableOfReads(both, /*lost=*/true);
  table.groups[0].members.push_back(1);
  table.groups[0].read_totals.push_back(0);
  EXPECT_FALSE(ClockLeftOutOfReads(table, table.groups[0]));
  table = TableOfReads(UserClock(true), /*lost=*/true);
  table.groups[0].members.push_back(1);
  table.groups[0].read_totals.push_back(0);
  reads = ClockLeftOutOfReads(table, table.groups[0]);
  ASSERT_TRUE(reads);
  EXPECT_DOUBLE_EQ(reads->left_out, 300000);
  // A group led by an event that is not a timer clock says nothing of the kind.
  EventDesc faults = Other("page-faults", PERF_TYPE_SOFTWARE, 2);
  faults.sample_type = PERF_SAMPLE_READ;
  faults.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
  faults.group_leader = 0;
  faults.group_members = {0};
  table = TableOfReads(faults, /*lost=*/true);
  ASSERT_EQ(table.groups.size(), 1u);
  EXPECT_FALSE(ClockLeftOutOfReads(table, table.groups[0]));
}

TEST(ReadClocksSampledAlone, AClockBesideOtherEventsReadsItself) {
  for (const char* list :
       {"task-clock:u,page-faults", "page-faults,task-clock", "cpu-clock:k,cs"}) {
    auto groups = ParseEventList(list);
    ASSERT_TRUE(groups.ok()) << list;
    EXPECT_TRUE(ReadClocksSampledAlone(&*groups)) << list;
    const size_t clock = std::string(list).starts_with("page-faults") ? 1 : 0;
    EXPECT_TRUE((*groups)[clock].is_group() && (*groups)[clock].leader_sampling) << list;
    EXPECT_FALSE((*groups)[1 - clock].is_group()) << list;
  }
  // Alone, already in a group, or not a timer clock: left as it is.
  for (const char* list :
       {"task-clock:u", "task-clock", "{task-clock:u,page-faults}:S", "cycles:u,page-faults"}) {
    auto given = ParseEventList(list);
    ASSERT_TRUE(given.ok()) << list;
    EXPECT_FALSE(ReadClocksSampledAlone(&*given)) << list;
  }
}

// A clock in both modes whose row's windows read 1.08 times the time its samples stand for (the
// shape a CI run's nested 1 ms calls had: ticks missed in stretches of 0.5-1.4 ms) reads 8 %
// high, over user work too; one whose reads match its samples, or that was not read, says nothing.
TEST(ClockLeftOutBias, AClockInBothModesNamesTheTicksItsTimerMissed) {
  EventDesc both = UserClock(true);
  both.name = "task-clock";
  both.exclude_kernel = false;
  const std::vector<EventDesc> events = {both, Other("page-faults", PERF_TYPE_SOFTWARE, 2)};
  MetricValue v = Evaluate(TableOf(events, 5000, 1.08, 0, 4), kFaultsPerMs);
  ASSERT_TRUE(v.value && v.bias);
  EXPECT_NEAR(*v.value, 100, 1e-9);
  EXPECT_EQ(v.bias->kind, WindowBiasKind::kClockMissedTicks);
  EXPECT_NE(v.bias->reason.find("clock missed ticks: task-clock's timer missed ticks"),
            std::string::npos)
      << v.bias->reason;
  EXPECT_NE(v.bias->reason.find("1.08x"), std::string::npos) << v.bias->reason;
  EXPECT_NE(v.bias->reason.find("this value is 92.59, so it reads high"), std::string::npos)
      << v.bias->reason;
  const std::vector<EventDesc> user_work = {
      both, Other("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS)};
  v = Evaluate(TableOf(user_work, 50000, 1.08, 0, 4), "ipns = instructions / task-clock");
  ASSERT_TRUE(v.bias);
  EXPECT_EQ(v.bias->kind, WindowBiasKind::kClockMissedTicks);
  // The timer's usual lateness, well inside the interval.
  v = Evaluate(TableOf(events, 5000, 1.002, 0, 0.1), kFaultsPerMs);
  EXPECT_FALSE(v.bias) << v.bias->reason;
  // Not read: nothing known, and nothing said (a clock in both modes leaves out nothing else).
  EventDesc unread = both;
  unread.sample_type = 0;
  unread.group_members.clear();
  v = Evaluate(TableOf({unread, events[1]}, 5000, 1.08, 0, 4), kFaultsPerMs);
  EXPECT_FALSE(v.bias) << v.bias->reason;
}

}  // namespace
}  // namespace clock_left_out_test
}  // namespace tprof
