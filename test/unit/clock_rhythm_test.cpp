// ClockRhythm on constructed runs of a timer clock's samples, and through the report table to a
// sampled rate's reason: a loop of a few sampling periods is named, long calls, a shuffled order
// and broken runs are not, and a row the loop never leaves (main) or a value the clock cannot
// move (no faults) is not flagged. The sequences are written out by hand; which lag they repeat
// at is read off them.
#include "core/analysis/clock_rhythm.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <random>
#include <unordered_map>
#include <vector>

#include "core/analysis/call_tree.h"
#include "core/analysis/derived_metrics.h"
#include "core/analysis/frame_metric.h"
#include "core/analysis/report_table.h"

namespace tprof {
namespace {

constexpr uint64_t kPeriod = 50000;  // ns: a 20 kHz clock

EventDesc TaskClock() {
  EventDesc e;
  e.name = "task-clock";
  e.type = PERF_TYPE_SOFTWARE;
  e.config = PERF_COUNT_SW_TASK_CLOCK;
  e.use_frequency = true;
  e.period_or_frequency = 20000;
  return e;
}

EventDesc PageFaults() {
  EventDesc e;
  e.name = "page-faults";
  e.type = PERF_TYPE_SOFTWARE;
  e.config = PERF_COUNT_SW_PAGE_FAULTS;
  e.period_or_frequency = 1;
  return e;
}

Sample ClockSample(uint64_t time, uint32_t tid = 7) {
  Sample s;
  s.event = 0;
  s.period = kPeriod;
  s.time = time;
  s.pid = 7;
  s.tid = tid;
  return s;
}

// Runs `rows` (one per sample, a period apart) through a detector whose stacks are the rows.
ClockRhythm::Result Detect(const std::vector<uint32_t>& rows, uint64_t gap_every = 0) {
  ClockRhythm rhythm({TaskClock(), PageFaults()});
  uint64_t time = 1000000;
  for (size_t i = 0; i < rows.size(); ++i) {
    time += gap_every && i % gap_every == 0 ? 10 * kPeriod : kPeriod;
    rhythm.Add(ClockSample(time), rows[i]);
  }
  return rhythm.Find([](uint32_t stack) { return stack; });
}

// Stretches of `lengths[i]` samples in row i, in turn, `rounds` times.
std::vector<uint32_t> Loop(const std::vector<uint32_t>& lengths, int rounds) {
  std::vector<uint32_t> rows;
  for (int r = 0; r < rounds; ++r)
    for (uint32_t f = 0; f < lengths.size(); ++f) rows.insert(rows.end(), lengths[f], f);
  return rows;
}

TEST(ClockRhythmTest, ALoopOfAFewPeriodsIsFoundAtItsLength) {
  // Three functions of 2, 3 and 4 samples in turn: the same row 9 apart every time, 1 apart 6
  // times in 9.
  const auto found = Detect(Loop({2, 3, 4}, 200));
  ASSERT_EQ(found.findings.size(), 1u);
  const ClockRhythmFinding& f = found.findings[0];
  EXPECT_EQ(f.lag, 9u);
  EXPECT_DOUBLE_EQ(f.same_at_lag, 1.0);
  EXPECT_NEAR(f.same_next, 6.0 / 9, 0.01);
  EXPECT_EQ(f.period_ns, kPeriod);
  EXPECT_EQ(f.threads, 1u);
  EXPECT_EQ(f.samples_in_step, 1800u);
  EXPECT_EQ(f.samples_seen, 1800u);
  // Each stretch ends in a step to the next row: 200 steps out of each.
  uint64_t steps_out_of_0 = 0;
  for (const auto& [step, times] : found.steps[0])
    if (step.first == 0) steps_out_of_0 += times;
  EXPECT_EQ(steps_out_of_0, 200u);
}

TEST(ClockRhythmTest, LongCallsAShuffledOrderAndBrokenRunsAreNotALoop) {
  // Calls of 40 samples in turn: the row stays from one sample to the next (117 in 120), and
  // no lag repeats it more often.
  EXPECT_TRUE(Detect(Loop({40, 40, 40}, 20)).findings.empty());
  // The same short calls in a shuffled order: no lag repeats the row.
  std::mt19937 random(5);
  std::vector<uint32_t> shuffled;
  for (int r = 0; r < 300; ++r) {
    std::vector<uint32_t> order = {0, 1, 2};
    std::shuffle(order.begin(), order.end(), random);
    for (uint32_t f : order) shuffled.insert(shuffled.end(), 2 + f, f);
  }
  EXPECT_TRUE(Detect(shuffled).findings.empty());
  // The loop, but the thread switched out every 5 samples: no two samples 9 apart in one run.
  EXPECT_TRUE(Detect(Loop({2, 3, 4}, 200), 5).findings.empty());
  // Too few samples to say.
  EXPECT_TRUE(Detect(Loop({2, 3, 4}, 20)).findings.empty());
}

TEST(ClockRhythmTest, OnlyTimerClocksBesideAnotherSampledEventAreWatched) {
  EventDesc cycles;
  cycles.name = "cycles";
  cycles.type = PERF_TYPE_HARDWARE;
  cycles.config = PERF_COUNT_HW_CPU_CYCLES;
  cycles.period_or_frequency = 4000;
  EventDesc cpu_clock = TaskClock();
  cpu_clock.config = PERF_COUNT_SW_CPU_CLOCK;
  ClockRhythm rhythm({cycles, TaskClock(), PageFaults(), cpu_clock});
  EXPECT_FALSE(rhythm.Watches(0));
  EXPECT_TRUE(rhythm.Watches(1));
  EXPECT_FALSE(rhythm.Watches(2));
  EXPECT_TRUE(rhythm.Watches(3));
  // The clock alone: no value reads it beside another event's count, nothing to watch.
  ClockRhythm alone({TaskClock()});
  EXPECT_FALSE(alone.Watches(0));
  EXPECT_FALSE(alone.watches_any());
}

// Addresses 0x1000.. are f, 0x2000.. g, 0x3000.. main (f and g's caller).
class LoopResolver : public FrameResolver {
 public:
  ResolvedFrame Resolve(const Mapping*, uint64_t address) override {
    ResolvedFrame r;
    r.module = "/bin/prog";
    r.function = address < 0x2000 ? "f" : address < 0x3000 ? "g" : "main";
    r.frames.push_back({r.function, "", "prog.c", 1, 0, false});
    r.resolved = true;
    return r;
  }
};

struct Rates {
  MetricValue f, g, main;
};

// faults_per_ms = page-faults / task-clock * 1000000 of the row named `function` (an empty
// value when there is none).
MetricValue FaultsPerMsOfRow(const ReportTable& table, const std::string& function,
                             bool inclusive) {
  auto metric = ParseUserMetric("faults_per_ms = page-faults / task-clock * 1000000", table.events);
  EXPECT_TRUE(metric.ok());
  auto plan = DerivedMetrics::Plan(table, {}, "", {*metric});
  EXPECT_TRUE(plan.ok());
  size_t column = 0;
  for (size_t c = 0; c < plan->columns().size(); ++c)
    if (plan->columns()[c].name == "faults_per_ms") column = c;
  for (const ReportRow& row : table.rows)
    if (row.keys[0] == function) return plan->Evaluate(column, table, row, inclusive);
  return {};
}

// task-clock at 20 kHz and every page fault, over a loop of f (`f_samples` clock samples, one
// fault each) then g (`g_samples`, no fault), both called from main; the faults/ms per function
// with --children.
Rates FaultsPerMs(uint32_t f_samples, uint32_t g_samples, int rounds) {
  LoopResolver resolver;
  const std::vector<EventDesc> events = {TaskClock(), PageFaults()};
  auto builder = ReportTableBuilder::Create(events, resolver, {SortKey::kSymbol}, {}, 0);
  EXPECT_TRUE(builder.ok());
  uint64_t time = 1000000;
  // The addresses vary within a function, as a sampled loop's do: rows, not stacks, repeat.
  uint64_t offset = 0;
  const auto add = [&](uint64_t base, bool fault) {
    Sample s = ClockSample(time);
    s.ip = base + (offset++ % 64);
    s.callchain = {kContextUser, s.ip, 0x3010};
    (*builder)->OnSample(s);
    if (fault) {
      Sample p = s;
      p.event = 1;
      p.period = 1;
      (*builder)->OnSample(p);
    }
    time += kPeriod;
  };
  for (int r = 0; r < rounds; ++r) {
    for (uint32_t i = 0; i < f_samples; ++i) add(0x1000, true);
    for (uint32_t i = 0; i < g_samples; ++i) add(0x2000, false);
  }
  const ReportTable table = (*builder)->Finish();
  return {FaultsPerMsOfRow(table, "f", /*inclusive=*/true),
          FaultsPerMsOfRow(table, "g", /*inclusive=*/true),
          FaultsPerMsOfRow(table, "main", /*inclusive=*/true)};
}

// faults_per_ms of every frame under `root`, read with `rhythm` (null: without it).
std::unordered_map<const CallNode*, FrameMetric> FaultsPerMsOfFrames(
    const CallNode& root, const std::vector<EventDesc>& events, const FrameClockRhythm* rhythm) {
  auto metric = ParseUserMetric("faults_per_ms = page-faults / task-clock * 1000000", events);
  EXPECT_TRUE(metric.ok());
  if (!metric.ok()) return {};
  auto plan = FrameMetricEvaluator::Plan(root, events, "faults_per_ms", {}, {*metric});
  EXPECT_TRUE(plan.ok()) << plan.error().message();
  if (!plan.ok()) return {};
  return plan->Compute(root, 1, 0, rhythm);
}

TEST(ClockRhythmTest, ARateOfAFunctionInALoopOfAFewPeriodsSaysTheClockMayBeInStep) {
  // f 2 samples, g 1, 1,000 rounds: f's rate 1 fault per 50 us sample, 20 faults/ms, its
  // interval (Poisson, 2,000 samples) some ±6 %; the loop leaves f after 2 samples, so its
  // count may be off by a quarter sample in 2 (12.5 %), beyond that.
  Rates rates = FaultsPerMs(2, 1, 1000);
  ASSERT_TRUE(rates.f.value);
  EXPECT_DOUBLE_EQ(*rates.f.value, 20.0);
  ASSERT_TRUE(rates.f.bias);
  EXPECT_EQ(rates.f.bias->kind, WindowBiasKind::kClockInStep);
  EXPECT_NE(rates.f.bias->reason.find("repeat every 3 samples"), std::string::npos)
      << rates.f.bias->reason;
  EXPECT_NE(rates.f.bias->reason.find("a loop of about 150 us"), std::string::npos)
      << rates.f.bias->reason;
  EXPECT_NE(rates.f.bias->reason.find("may then be 12 % off"), std::string::npos)
      << rates.f.bias->reason;
  // g never faults: 0 over any time, which no clock error moves.
  ASSERT_TRUE(rates.g.value);
  EXPECT_EQ(*rates.g.value, 0.0);
  EXPECT_FALSE(rates.g.bias) << rates.g.bias->reason;
  // main holds the whole loop: where in it the samples land does not change its share.
  ASSERT_TRUE(rates.main.value);
  EXPECT_NEAR(*rates.main.value, 2.0 / 3 * 20, 1e-9);
  EXPECT_FALSE(rates.main.bias) << rates.main.bias->reason;
}

TEST(ClockRhythmTest, ARateOfLongCallsInALoopIsNotFlagged) {
  // f 40 samples, g 40: the row stays from one sample to the next 78 times in 80, and no lag
  // repeats it more often.
  Rates rates = FaultsPerMs(40, 40, 50);
  ASSERT_TRUE(rates.f.value);
  EXPECT_FALSE(rates.f.bias) << rates.f.bias->reason;
}

// Calls shorter than the clock's period, f g h called in turn, faulting at every call (page-faults
// sampled at each fault, delivered after the clock's samples, as per-CPU buffers may give them:
// found by time). Locked: the clock's samples keep to one function for 4 samples at a time,
// though the faults show all three running in every period: 3 of 4 periods from f end in f
// again, against f's third of the samples. Free: the samples land in f or g at random, f 90 % of
// the time, and 90 % of f's periods end in f again, its share. The thread is switched out every
// 48 samples (4 rounds of f, g, h), which breaks the run.
std::vector<Sample> ShortCallSamples(bool locked) {
  std::mt19937 random(11);
  std::vector<Sample> clocks, faults;
  uint64_t time = 1000000;
  for (int i = 0; i < 2880; ++i) {
    time += i % 48 == 0 ? 20 * kPeriod : kPeriod;
    const uint64_t base = locked ? std::vector<uint64_t>{0x1000, 0x2000, 0x3000}[(i / 4) % 3]
                          : random() % 10 < 9 ? 0x1000
                                              : 0x2000;
    Sample clock = ClockSample(time);
    clock.ip = base + static_cast<uint64_t>(i % 64);
    clock.callchain = {kContextUser, clock.ip};
    clocks.push_back(clock);
    // Every function runs (and faults) in every period.
    for (uint64_t f : {0x1008, 0x2008, 0x3008}) {
      if (!locked && f == 0x3008) continue;
      Sample fault = clock;
      fault.event = 1;
      fault.period = 1;
      fault.time = time + (f - 0x1000) / 0x1000 * 10000 + 5000;
      fault.ip = f;
      fault.callchain = {kContextUser, f};
      faults.push_back(fault);
    }
  }
  clocks.insert(clocks.end(), faults.begin(), faults.end());
  return clocks;
}

MetricValue FaultsPerMsOfF(bool locked) {
  LoopResolver resolver;
  const std::vector<EventDesc> events = {TaskClock(), PageFaults()};
  auto builder = ReportTableBuilder::Create(events, resolver, {SortKey::kSymbol}, {}, 0);
  EXPECT_TRUE(builder.ok());
  for (const Sample& sample : ShortCallSamples(locked)) (*builder)->OnSample(sample);
  return FaultsPerMsOfRow((*builder)->Finish(), "f", /*inclusive=*/false);
}

TEST(ClockRhythmTest, AClockKeptToTheLoopsPhaseOverShortCallsIsNamed) {
  const MetricValue locked = FaultsPerMsOfF(true);
  ASSERT_TRUE(locked.value);
  // f's 960 samples stand for 48 ms; its 2,880 faults came one a period: 60 faults/ms, where
  // its true share of the time is unknown to the samples.
  EXPECT_DOUBLE_EQ(*locked.value, 60.0);
  ASSERT_TRUE(locked.bias);
  EXPECT_EQ(locked.bias->kind, WindowBiasKind::kClockStepsOver);
  // 60 runs of 48 samples, f's 16 in each in 4 stretches of 4, each followed by g: 3 of each
  // stretch's 4 periods end in f again, 720 of 960, each with g's and h's faults in it.
  EXPECT_NE(locked.bias->reason.find("of this row's 960 samples of task-clock, 720 followed one"),
            std::string::npos)
      << locked.bias->reason;
  EXPECT_NE(locked.bias->reason.find("a sample of page-faults in another function"),
            std::string::npos)
      << locked.bias->reason;
  EXPECT_NE(locked.bias->reason.find("75 % of this row's periods with another function's work "
                                     "in them ended in it again, where a free phase gives its "
                                     "share of the samples, 33 %"),
            std::string::npos)
      << locked.bias->reason;
  EXPECT_NE(locked.bias->reason.find("may be off by them, 75 %"), std::string::npos)
      << locked.bias->reason;
}

// A free phase over the same short calls: as many of f's periods end in f again as its share
// says, which the test above reads as no lock. The calls are still shorter than the period (f's
// faults show it entered in every period, 2,879 times, against 2,594 of its samples), and on
// metric_oracle's 10 us calls a lock that test missed left rates 12-18 % off, confident; at
// 9-20 kHz they came out 12-40 % off. So short calls are named whatever the phase: the share of
// them a fixed-period clock gives has no bound but the whole.
TEST(ClockRhythmTest, CallsShorterThanTheClocksPeriodAreNamedWhateverThePhase) {
  const MetricValue free = FaultsPerMsOfF(false);
  ASSERT_TRUE(free.value);
  ASSERT_TRUE(free.bias);
  EXPECT_EQ(free.bias->kind, WindowBiasKind::kClockStepsOver);
  EXPECT_NE(free.bias->reason.find("this row entered 2879 times, more than the 2594 samples of "
                                   "task-clock it holds"),
            std::string::npos)
      << free.bias->reason;
  EXPECT_NE(free.bias->reason.find("shorter than the clock's period (50 us)"), std::string::npos)
      << free.bias->reason;

  // The flame graph's frames say the same of f's frame, and nothing of g's (0 faults a ms, which
  // no share of the time moves).
  LoopResolver resolver;
  const std::vector<EventDesc> events = {TaskClock(), PageFaults()};
  CallTreeBuilder tree(events, resolver, {});
  for (const Sample& sample : ShortCallSamples(false)) tree.OnSample(sample);
  const FrameClockRhythm rhythm = tree.ClockRhythmOfFrames();
  const CallNode& root = tree.root();
  const auto frames = FaultsPerMsOfFrames(root, events, &rhythm);
  const CallNode* f = root.Find("f", "/bin/prog", FrameKind::kUser);
  ASSERT_NE(f, nullptr);
  const MetricValue& f_rate = frames.at(f).value;
  ASSERT_TRUE(f_rate.bias);
  EXPECT_EQ(f_rate.bias->kind, WindowBiasKind::kClockStepsOver);
  EXPECT_NE(f_rate.bias->reason.find("entered 2879 times"), std::string::npos)
      << f_rate.bias->reason;

  // Calls of many periods (f 40 samples, g 40, faults in f only): f entered once a round, 50
  // times against its 2,000 samples; nothing to name.
  EXPECT_FALSE(FaultsPerMs(40, 40, 50).f.bias);
}

// A short call between long ones, in no fixed order: f (`f_samples` of the clock's samples a
// call, one fault each, sampled at every fault) after 2-5 samples of g, which never faults,
// `rounds` times on thread 7, and as many rounds on thread 8, where no fault is sampled (the
// other event never samples that thread), switched out every 50 rounds (its run broken). All the
// faults land in f, so they cannot show f entered: only the clock's own samples do, each of f's
// after one in g (but the first after each break, which follows nothing).
std::vector<Sample> IsolatedCallSamples(uint32_t f_samples, int rounds) {
  std::mt19937 random(3);
  std::vector<Sample> samples;
  for (uint32_t tid : {7u, 8u}) {
    uint64_t time = 1000000, offset = 0;
    const auto add = [&](uint64_t base, bool fault) {
      Sample s = ClockSample(time, tid);
      s.ip = base + (offset++ % 64);
      s.callchain = {kContextUser, s.ip, 0x3010};
      samples.push_back(s);
      if (fault && tid == 7) {
        Sample p = s;
        p.event = 1;
        p.period = 1;
        samples.push_back(p);
      }
      time += kPeriod;
    };
    for (int r = 0; r < rounds; ++r) {
      if (tid == 8 && r % 50 == 0) time += 20 * kPeriod;
      for (uint32_t i = 2 + random() % 4; i > 0; --i) add(0x2000, false);
      for (uint32_t i = 0; i < f_samples; ++i) add(0x1000, true);
    }
  }
  return samples;
}

// The step-over workload's touching call (5-9 us, its 4 faults at once, between 100 us of
// work) sampled at 20 kHz: its faults per ms came out 1219 +-119 against 745 and 792 +-68 against
// 610 with nothing said, where 598 of its 604 and 875 of its 886 clock samples that followed
// another came after one outside it. Fails if a row that never held the clock twice running gives
// a rate unflagged.
TEST(ClockRhythmTest, ACallThatNeverHoldsTheClockTwiceRunningIsNamed) {
  LoopResolver resolver;
  const std::vector<EventDesc> events = {TaskClock(), PageFaults()};
  auto builder = ReportTableBuilder::Create(events, resolver, {SortKey::kSymbol}, {}, 0);
  ASSERT_TRUE(builder.ok());
  for (const Sample& sample : IsolatedCallSamples(1, 400)) (*builder)->OnSample(sample);
  const ReportTable table = (*builder)->Finish();
  for (bool inclusive : {false, true}) {
    const MetricValue f = FaultsPerMsOfRow(table, "f", inclusive);
    ASSERT_TRUE(f.value);
    // One fault a 50 us sample on thread 7, none sampled on thread 8: 800 samples, 400 faults.
    EXPECT_DOUBLE_EQ(*f.value, 10.0);
    ASSERT_TRUE(f.bias) << "inclusive " << inclusive;
    EXPECT_EQ(f.bias->kind, WindowBiasKind::kClockStepsOver);
    // 400 calls on each thread, each one sample after 2-5 of g's: thread 8's count too, though
    // no fault was sampled there (its 8 breaks fall before a g).
    EXPECT_NE(f.bias->reason.find("of the 800 samples of task-clock this row holds that came a "
                                  "period (50 us) after another on the thread, 800 came after "
                                  "one outside it"),
              std::string::npos)
        << f.bias->reason;
    // g never faults, and main holds the whole loop.
    const MetricValue g = FaultsPerMsOfRow(table, "g", inclusive);
    EXPECT_FALSE(g.bias) << g.bias->reason;
  }
  EXPECT_FALSE(FaultsPerMsOfRow(table, "main", true).bias);

  // The flame graph's frame of f says the same.
  CallTreeBuilder tree(events, resolver, {});
  for (const Sample& sample : IsolatedCallSamples(1, 400)) tree.OnSample(sample);
  const FrameClockRhythm rhythm = tree.ClockRhythmOfFrames();
  const CallNode& root = tree.root();
  const auto frames = FaultsPerMsOfFrames(root, events, &rhythm);
  const CallNode* main_frame = root.Find("main", "/bin/prog", FrameKind::kUser);
  ASSERT_NE(main_frame, nullptr);
  const CallNode* f_frame = main_frame->Find("f", "/bin/prog", FrameKind::kUser);
  ASSERT_NE(f_frame, nullptr);
  const MetricValue& f_rate = frames.at(f_frame).value;
  ASSERT_TRUE(f_rate.bias);
  EXPECT_NE(f_rate.bias->reason.find("seldom held the clock for two periods running"),
            std::string::npos)
      << f_rate.bias->reason;

  // Calls of two samples: half of f's samples follow one in f, its calls are a period or more;
  // not this reason (a call's edges may still be).
  auto longer = ReportTableBuilder::Create(events, resolver, {SortKey::kSymbol}, {}, 0);
  ASSERT_TRUE(longer.ok());
  for (const Sample& sample : IsolatedCallSamples(2, 400)) (*longer)->OnSample(sample);
  const MetricValue two = FaultsPerMsOfRow((*longer)->Finish(), "f", false);
  ASSERT_TRUE(two.value);
  EXPECT_TRUE(!two.bias || two.bias->reason.find("seldom held the clock") == std::string::npos)
      << two.bias->reason;
}

// Calls a period or longer, in no order a lag finds: f and g called at random, each call one
// or two of the clock's samples long with a fault at its entry (so f is entered about once for
// every 1.5 of its samples). No call is shorter than the period, and the rows repeat at no lag,
// but a fixed-period clock over calls this short moves each call's count by part of a sample
// (metric_oracle's calls of 1.1 periods came out 8 % off, confident, in one CI run): each entry
// may be off by a quarter period, which here is beyond the interval, and f's rate says so. Long
// calls' quarter periods stay inside it (FaultsPerMs(40, 40, 50) above: 50 entries in 2,000).
TEST(ClockRhythmTest, CallsOfAFewPeriodsAreNamedByTheirEdges) {
  LoopResolver resolver;
  const std::vector<EventDesc> events = {TaskClock(), PageFaults()};
  auto builder = ReportTableBuilder::Create(events, resolver, {SortKey::kSymbol}, {}, 0);
  ASSERT_TRUE(builder.ok());
  std::mt19937 random(5);
  uint64_t time = 1000000, offset = 0;
  uint64_t f_calls = 0, f_samples = 0;
  for (int call = 0; call < 3000; ++call) {
    const bool f = random() % 2 == 0;
    const uint64_t base = f ? 0x1000 : 0x2000;
    Sample fault = ClockSample(time + kPeriod / 2);
    fault.event = 1;
    fault.period = 1;
    fault.ip = base + 8;
    fault.callchain = {kContextUser, fault.ip, 0x3010};
    (*builder)->OnSample(fault);
    const int length = 1 + static_cast<int>(random() % 2);
    for (int i = 0; i < length; ++i) {
      time += kPeriod;
      Sample s = ClockSample(time);
      s.ip = base + (offset++ % 64);
      s.callchain = {kContextUser, s.ip, 0x3010};
      (*builder)->OnSample(s);
    }
    f_calls += f;
    f_samples += f ? length : 0;
  }
  const MetricValue rate = FaultsPerMsOfRow((*builder)->Finish(), "f", /*inclusive=*/false);
  ASSERT_TRUE(rate.value);
  EXPECT_NEAR(*rate.value, static_cast<double>(f_calls) / (f_samples * 0.05), 1e-9);
  ASSERT_TRUE(rate.bias) << "f entered " << f_calls << " times in " << f_samples << " samples";
  EXPECT_EQ(rate.bias->kind, WindowBiasKind::kClockStepsOver);
  // Entries are read from the faults: a fault in f after one in g (f after f is no entry seen).
  EXPECT_NE(rate.bias->reason.find("against the " + std::to_string(f_samples) +
                                   " samples of task-clock it holds"),
            std::string::npos)
      << rate.bias->reason;
  EXPECT_NE(rate.bias->reason.find("a quarter period a call"), std::string::npos)
      << rate.bias->reason;
  EXPECT_FALSE(FaultsPerMs(40, 40, 50).f.bias);
}

// The flame graph's frames coloured by the rate: the same loop (f 2 samples, g 1, under main),
// frames rather than rows; f's frame says the clock may be in step, main's and g's do not.
TEST(ClockRhythmTest, AFlameGraphFrameInALoopOfAFewPeriodsSaysTheClockMayBeInStep) {
  LoopResolver resolver;
  const std::vector<EventDesc> events = {TaskClock(), PageFaults()};
  CallTreeBuilder tree(events, resolver, {});
  uint64_t time = 1000000, offset = 0;
  for (int r = 0; r < 1000; ++r)
    for (uint64_t base : {0x1000, 0x1000, 0x2000}) {
      Sample s = ClockSample(time);
      s.ip = base + (offset++ % 64);
      s.callchain = {kContextUser, s.ip, 0x3010};
      tree.OnSample(s);
      if (base == 0x1000) {
        s.event = 1;
        s.period = 1;
        tree.OnSample(s);
      }
      time += kPeriod;
    }
  const FrameClockRhythm rhythm = tree.ClockRhythmOfFrames();
  ASSERT_EQ(rhythm.findings.size(), 1u);
  EXPECT_EQ(rhythm.findings[0].lag, 3u);
  const CallNode& root = tree.root();
  const auto frames = FaultsPerMsOfFrames(root, events, &rhythm);
  const CallNode* main = root.Find("main", "/bin/prog", FrameKind::kUser);
  ASSERT_NE(main, nullptr);
  const CallNode* f = main->Find("f", "/bin/prog", FrameKind::kUser);
  const CallNode* g = main->Find("g", "/bin/prog", FrameKind::kUser);
  ASSERT_NE(f, nullptr);
  ASSERT_NE(g, nullptr);
  const MetricValue& f_rate = frames.at(f).value;
  ASSERT_TRUE(f_rate.value);
  EXPECT_DOUBLE_EQ(*f_rate.value, 20.0);
  ASSERT_TRUE(f_rate.bias);
  EXPECT_EQ(f_rate.bias->kind, WindowBiasKind::kClockInStep);
  EXPECT_NE(f_rate.bias->reason.find("repeat every 3 samples"), std::string::npos)
      << f_rate.bias->reason;
  EXPECT_FALSE(frames.at(g).value.bias) << frames.at(g).value.bias->reason;
  EXPECT_FALSE(frames.at(main).value.bias) << frames.at(main).value.bias->reason;
  // Without the rhythm, no reason.
  EXPECT_FALSE(FaultsPerMsOfFrames(root, events, nullptr).at(f).value.bias);
}

}  // namespace
}  // namespace tprof
