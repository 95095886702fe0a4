// The window method's bias detectors on constructed sample sequences: each is fed the bias it
// names and must flag it, and a sequence without it must stay unflagged.
#include "core/analysis/window_bias.h"

#include <gtest/gtest.h>

namespace tprof {
namespace {

std::string Name(const std::string& key) { return key; }

// One thread on one CPU; every window lasts 100 clock units and counts `events` events of the
// member (plus a little jitter so that windows vary, as real ones do).
class Sequence {
 public:
  // `extra`: clock the window runs beyond its usual 100 (a stall).
  void Add(const std::string& function, uint64_t events, uint64_t extra = 0) {
    clock_ += 100 + (n_ % 3) + extra;
    count_ += events;
    Sample s;
    s.tid = 1;
    s.cpu = 0;
    s.counter_values = {clock_, count_};
    attributor_.Add(s, function);
    ++n_;
  }
  // A sample of the member taken on its own, in `function`, standing for `events` events,
  // between this window's start and its end.
  void Interloper(const std::string& function, uint64_t events) {
    Sample s;
    s.tid = 1;
    s.cpu = 0;
    attributor_.AddInterloper(s, function, 1, events);
  }
  WindowBiases Detect() const {
    return DetectWindowBias(attributor_, {"clock", "faults"}, &Name).biases;
  }
  const WindowAttributor& attributor() const { return attributor_; }

 private:
  WindowAttributor attributor_{2};
  uint64_t clock_ = 0, count_ = 0, n_ = 0;
};

bool Flagged(const WindowBiases& found, const std::string& function, WindowBiasKind kind) {
  auto it = found.find(function);
  if (it == found.end() || it->second.size() < 2) return false;
  for (const WindowBias& b : it->second[1])
    if (b.kind == kind) return true;
  return false;
}

// A function that makes no events, whose windows step over another's short calls without a
// sample of the clock landing in them: its windows count the other's events, and nothing in
// the windows' ends shows it. The events' own samples (taken beside the group) place some of
// those events in the other function, inside the windows credited here: flagged, with them
// named. The same samples in the function's own rows flag nothing, and too few to move the value
// beyond its interval only widen it.
TEST(WindowBiasTest, MemberSamplesInOtherFunctionsInsideCreditedWindowsFlagSpans) {
  Sequence stepped, own, few;
  stepped.Add("work", 0);
  own.Add("work", 0);
  few.Add("work", 0);
  for (int w = 0; w < 400; ++w) {
    if (w % 20 == 0) stepped.Interloper("touch", 40);  // one sample in ten calls of touch
    stepped.Add("work", w % 2 ? 4 : 0);                // a touch call every other window
    if (w % 20 == 0) own.Interloper("work", 40);
    own.Add("work", w % 2 ? 4 : 0);
    if (w == 100) few.Interloper("touch", 1);
    few.Add("work", w % 2 ? 4 : 0);
  }
  const WindowBiases found = stepped.Detect();
  ASSERT_TRUE(Flagged(found, "work", WindowBiasKind::kSpansCalls));
  EXPECT_NE(found.at("work")[1].front().reason.find("(touch)"), std::string::npos)
      << found.at("work")[1].front().reason;
  EXPECT_TRUE(own.Detect().empty());
  const WindowFindings small = DetectWindowBias(few.attributor(), {"clock", "faults"}, &Name);
  EXPECT_TRUE(small.biases.empty());
  ASSERT_TRUE(small.bounds.count("work"));
  EXPECT_GT(small.bounds.at("work")[1], 0);
}

// Calls of 10 windows each, f then g in turn. Spread: every window of f holds 4 events, of g 1,
// the windows between them 2 or 3. At entry: the same events, but all of a call's at its start,
// so they fall in the window from the previous call.
TEST(WindowBiasTest, EventsAtACallsEntryFlagBothFunctionsOfTheEdge) {
  Sequence spread, entry;
  for (int call = 0; call < 40; ++call) {
    for (int w = 0; w < 10; ++w) spread.Add("f", w == 0 ? 2 + call % 2 : 4 + (w % 2));
    for (int w = 0; w < 10; ++w) spread.Add("g", w == 0 ? 2 + call % 2 : 1);
    for (int w = 0; w < 10; ++w) entry.Add("f", w == 0 ? 40 : w % 4 == 0);
    for (int w = 0; w < 10; ++w) entry.Add("g", w == 0 ? 10 : 0);
  }
  const WindowBiases found = entry.Detect();
  EXPECT_TRUE(Flagged(found, "f", WindowBiasKind::kCallEdges));
  EXPECT_TRUE(Flagged(found, "g", WindowBiasKind::kCallEdges));
  EXPECT_NE(found.at("f")[1].front().reason.find("windows from"), std::string::npos)
      << found.at("f")[1].front().reason;
  EXPECT_TRUE(spread.Detect().empty());
  EXPECT_TRUE(found.count("f") && found.at("f")[0].empty()) << "the leader is never flagged";
}

// f's calls and g's, 10 windows each in turn; f's windows hold 20-22 events, g's 5-7 (a
// quarter), and the window from g's call into f's holds 7 more than the mean of the two. Over
// f's time that is 0.7 a window, at least 0.4 beyond the rates' intervals: beyond f's own
// interval (some 0.09) but within 5 % of the larger rate of the two (1.05), so neither is flagged
// and both intervals take it: 2-3 % of f's value, 7-12 % of g's (a function at a quarter of its
// neighbour's rate read 3.5 % low with an interval of 2.5 % before, issue 57). The window from f
// into g holds the mean.
TEST(WindowBiasTest, EdgesTooSmallToFlagGoIntoTheInterval) {
  Sequence s;
  for (int call = 0; call < 40; ++call) {
    for (int w = 0; w < 10; ++w) s.Add("f", w == 0 ? 20 + call % 2 : 20 + w % 3);
    for (int w = 0; w < 10; ++w) s.Add("g", w == 0 ? 13 + call % 2 : 5 + w % 3);
  }
  const WindowFindings found = DetectWindowBias(s.attributor(), {"clock", "faults"}, &Name);
  EXPECT_TRUE(found.biases.empty());
  for (const std::string f : {"f", "g"}) {
    ASSERT_TRUE(found.bounds.count(f)) << f;
    ASSERT_EQ(found.bounds.at(f).size(), 2u);
    EXPECT_EQ(found.bounds.at(f)[0], 0) << "the leader has no bound";
    // 7 events more than the mean in each of 40 windows over the function's 400 windows of
    // about 101 clock units, less the rates' intervals (what the edges surely hold beyond it).
    EXPECT_GT(found.bounds.at(f)[1] * 101, 0.4) << f;
    EXPECT_LE(found.bounds.at(f)[1] * 101, 0.7) << f;
  }
}

// The windows between calls hold fewer events than either function's credited windows: the
// events are in the calls' middles, which the credited windows over-represent.
TEST(WindowBiasTest, QuietCallEdgesFlagCallMiddles) {
  Sequence s;
  for (int call = 0; call < 40; ++call) {
    for (int w = 0; w < 10; ++w) s.Add("f", w == 0 ? 0 : 20 + w % 3);
    for (int w = 0; w < 10; ++w) s.Add("g", w == 0 ? 0 : 10 + w % 3);
  }
  const WindowBiases found = s.Detect();
  EXPECT_TRUE(Flagged(found, "f", WindowBiasKind::kCallMiddles));
  EXPECT_TRUE(Flagged(found, "g", WindowBiasKind::kCallMiddles));
}

// Calls of f (4 windows, 40 events each) and g (4 windows, 10 each) in turn, as the oracle's
// 1 ms calls under 250 us windows. One window from f's call into g's lasts 50 windows (a stall:
// seen in a CI run's recording, 13.75 ms among windows of 250 us, at the exit of faults_heavy,
// whose [g] value read 163.7 +-4.6 faults/ms against a truth of 144.8 with the stall's time in
// it): both functions are flagged, with the time. The same stall inside one of f's calls is in
// its credited windows, windows from f into g 1.4x the longest of f's own (551 against 401)
// are no stall, and neither is the one window from start-up code into f's first call (the
// set-up between them, seen under load: main's 0.75-1 ms before the oracle's first call): none
// flags anything.
TEST(WindowBiasTest, AStallAcrossACallEdgeFlagsBothFunctions) {
  Sequence stalled, inside, usual, start_up;
  start_up.Add("main", 0);
  for (int call = 0; call < 100; ++call) {
    const bool stall = call == 50;
    // A call's first window starts in the other's call: it holds the mean of the two.
    for (int w = 0; w < 4; ++w) {
      const uint64_t events = w == 0 ? 25 : 40;
      stalled.Add("f", events);
      inside.Add("f", events, stall && w == 2 ? 5000 : 0);
      usual.Add("f", events, call % 10 == 0 && w == 2 ? 300 : 0);
      start_up.Add("f", events, call == 0 && w == 0 ? 5000 : 0);
    }
    for (int w = 0; w < 4; ++w) {
      const uint64_t events = w == 0 ? 25 : 10;
      stalled.Add("g", events, stall && w == 0 ? 5000 : 0);
      inside.Add("g", events);
      usual.Add("g", events, call % 10 == 5 && w == 0 ? 450 : 0);
      start_up.Add("g", events);
    }
  }
  const WindowBiases found = stalled.Detect();
  for (const std::string f : {"f", "g"}) {
    ASSERT_TRUE(Flagged(found, f, WindowBiasKind::kCallEdges)) << f;
    const std::string& reason = found.at(f)[1].front().reason;
    EXPECT_NE(reason.find("time at call edges: 1 window"), std::string::npos) << reason;
    EXPECT_NE(reason.find("from f into g"), std::string::npos) << reason;
    // 5,000 of the clock over f's 300 credited windows of about 101: 14 % lower at most.
    EXPECT_NE(reason.find("up to 14 % lower"), std::string::npos) << reason;
  }
  EXPECT_TRUE(inside.Detect().empty());
  EXPECT_TRUE(usual.Detect().empty());
  EXPECT_TRUE(start_up.Detect().empty()) << start_up.Detect().begin()->first;
}

// f's calls are interrupted by calls of g short enough for one sample to land in them now and
// then: f g f (a single return). Where no sample lands, f's window steps over g's call and is
// credited whole to f, g's events inside: f's value is flagged where g's rate differs from f's.
TEST(WindowBiasTest, ShortCallsBetweenAFunctionsSamplesFlagSpans) {
  Sequence s, apart;
  for (int round = 0; round < 100; ++round) {
    // f, f, g, f, f: two windows that stayed in f (the second stepped over a g call), one return.
    s.Add("f", 1 + round % 2);
    s.Add("f", 30);  // stepped over g: g's events in f's window
    s.Add("g", 30);
    s.Add("f", 30);
    s.Add("f", 1);
    s.Add("h", 2);
    s.Add("h", 2 + round % 2);
    // Control: the same rates, g's calls long (never a single return).
    for (int w = 0; w < 5; ++w) apart.Add("f", 1 + (w + round) % 2);
    for (int w = 0; w < 5; ++w) apart.Add("g", 30 + w % 2);
  }
  const auto& runs = s.attributor().runs();
  EXPECT_EQ(runs.at("f").single_returns, 100u);
  ASSERT_TRUE(SpanShare(runs.at("f")).has_value());
  EXPECT_NEAR(*SpanShare(runs.at("f")), 100.0 / 200.0, 1e-9);  // 200 windows stayed in f
  EXPECT_TRUE(Flagged(s.Detect(), "f", WindowBiasKind::kSpansCalls));
  EXPECT_EQ(apart.attributor().runs().at("f").single_returns, 0u);
  EXPECT_FALSE(Flagged(apart.Detect(), "f", WindowBiasKind::kSpansCalls));
}

// The same interruptions, but by a function whose rate is f's own, while a function of another
// rate runs elsewhere (another phase, never between f's samples): what f's windows may have
// stepped over counts like f, and f is not flagged (seen on the demo: mix_helper, which never
// faults, was flagged for memset's faults in another phase).
TEST(WindowBiasTest, OnlyTheFunctionsSeenBetweenASamplesOwnCount) {
  Sequence s;
  for (int round = 0; round < 100; ++round) {
    for (const char* function : {"f", "f", "h", "f", "f"}) s.Add(function, 1 + round % 2);
  }
  for (int w = 0; w < 200; ++w) s.Add("g", 30 + w % 2);
  EXPECT_EQ(s.attributor().runs().at("f").single_returns, 100u);
  const WindowBiases found = s.Detect();
  EXPECT_FALSE(Flagged(found, "f", WindowBiasKind::kSpansCalls))
      << (found.count("f") ? found.at("f")[1].front().reason : "");
}

// A function whose credited windows saw no event at all, interrupted by a function that makes
// many: had its windows stepped over those calls, their events would show; its 0 stands
// (seen on a program of two functions, one faulting: the other's 0 faults/ms was flagged).
TEST(WindowBiasTest, AZeroNextToBusyFunctionsIsNotFlaggedForSpans) {
  Sequence s;
  for (int round = 0; round < 100; ++round) {
    s.Add("f", 0);
    s.Add("f", 0);
    s.Add("g", 30 + round % 2);
    s.Add("f", 0);
    s.Add("f", 0);
    for (int w = 0; w < 3; ++w) s.Add("g", 30 + (w + round) % 2);
  }
  ASSERT_GT(s.attributor().runs().at("f").single_returns, 0u);
  EXPECT_FALSE(Flagged(s.Detect(), "f", WindowBiasKind::kSpansCalls));
}

// Calls shorter than a window: most windows from f end elsewhere, and the few that end in f came
// back from another of its calls. Flagged however wide the value's interval is (a wide interval
// hid it from the share-times-spread test: the oracle's 35 us calls at 4 kHz).
TEST(WindowBiasTest, AFunctionMostOfWhoseWindowsLeaveItIsFlagged) {
  Sequence s;
  for (int round = 0; round < 60; ++round) {
    for (const char* function : {"f", "g", "h"}) s.Add(function, 3 + round % 5);
    if (round % 6 == 0) s.Add("f", 3 + round % 4);  // f -> f now and then
  }
  const auto& runs = s.attributor().runs().at("f");
  ASSERT_GT(runs.windows_stay, 0u);
  ASSERT_LT(2 * runs.windows_stay, runs.windows_from);
  EXPECT_TRUE(Flagged(s.Detect(), "f", WindowBiasKind::kSpansCalls));
}

}  // namespace
}  // namespace tprof
