#include "core/model/record_batch.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace tprof {
namespace {

// Writes down every record it sees, and on which thread.
class RecordLog : public RecordVisitor {
 public:
  void OnSample(const Sample& s) override {
    std::string line = "sample " + std::to_string(s.time) + " " + std::to_string(s.pid) + " " +
                       std::to_string(s.ip) + " chain";
    for (uint64_t a : s.callchain) line += " " + std::to_string(a);
    line += " values";
    for (uint64_t v : s.counter_values) line += " " + std::to_string(v);
    line += " stack " + s.user_stack;
    Note(line);
  }
  void OnMmap(const MmapRecord& r) override {
    Note("mmap " + std::to_string(r.start) + " " + r.filename);
  }
  void OnComm(const CommRecord& r) override {
    Note("comm " + std::to_string(r.tid) + " " + r.comm);
  }
  void OnTask(const TaskRecord& r) override {
    Note("task " + std::to_string(r.tid) + (r.is_exit ? " exit" : " fork"));
  }
  void OnLost(const LostRecord& r) override { Note("lost " + std::to_string(r.lost)); }
  void OnThrottle(const ThrottleRecord& r) override { Note("throttle " + std::to_string(r.time)); }

  std::vector<std::string> lines;
  std::set<std::thread::id> threads;

 private:
  void Note(std::string line) {
    threads.insert(std::this_thread::get_id());
    lines.push_back(std::move(line));
  }
};

// Every kind of record, samples whose callchains, counter values and stack copies grow and
// shrink from one to the next (a reused slot must hold exactly the new sample's).
void Feed(RecordVisitor& v, int records) {
  for (int i = 0; i < records; ++i) {
    switch (i % 9) {
      case 0: {
        MmapRecord m;
        m.start = 0x1000u * i;
        m.filename = "/lib/m" + std::to_string(i);
        v.OnMmap(m);
        break;
      }
      case 1: {
        CommRecord c;
        c.tid = i;
        c.comm = "t" + std::to_string(i);
        v.OnComm(c);
        break;
      }
      case 2: {
        TaskRecord t;
        t.tid = i;
        t.is_exit = i % 2;
        v.OnTask(t);
        break;
      }
      case 3: {
        LostRecord l;
        l.lost = i;
        v.OnLost(l);
        break;
      }
      case 4: {
        ThrottleRecord t;
        t.time = i;
        v.OnThrottle(t);
        break;
      }
      default: {
        Sample s;
        s.time = i;
        s.pid = i % 7;
        s.ip = 0x400000 + i;
        for (int f = 0; f < (i * 7) % 23; ++f) s.callchain.push_back(0x500000 + i + f);
        for (int c = 0; c < i % 3; ++c) s.counter_values.push_back(i * 10 + c);
        // Now and then a stack copy as large as perf's (its room is given back at Clear).
        s.user_stack = std::string(i % 11 == 0 ? 9000 : i % 5, 'x');
        v.OnSample(s);
      }
    }
  }
}

// A visitor that takes hints: writes each down, and counts samples visited after a hint that
// are not the hinted one.
class HintLog : public RecordLog {
 public:
  void OnSampleAhead(const Sample& s) override {
    hinted.push_back(s.time);
    pending_ = s.time;
  }
  void OnSample(const Sample& s) override {
    if (expected_ && *expected_ != s.time) ++not_the_hinted_one;
    expected_ = pending_;  // a hint comes just before the sample before the hinted one
    pending_.reset();
    RecordLog::OnSample(s);
  }
  bool takes_sample_hints() const override { return true; }

  std::vector<uint64_t> hinted;  // the hinted samples' times, in order
  size_t not_the_hinted_one = 0;

 private:
  std::optional<uint64_t> pending_, expected_;
};

// Feeds `records` through a replay in batches of 64 (three in flight) to `replayed`, which
// must visit what a visitor fed them directly visits; returns how many of them are samples.
size_t FeedReplayedAsDirect(int records, RecordLog& replayed) {
  RecordLog direct;
  Feed(direct, records);
  {
    BackgroundReplay replay(replayed, /*batch_records=*/64, /*batches=*/3);
    Feed(replay, records);
  }
  EXPECT_EQ(replayed.lines, direct.lines);  // hints change nothing that is visited
  size_t samples = 0;
  for (const std::string& line : direct.lines) samples += line.rfind("sample ", 0) == 0;
  return samples;
}

TEST(BackgroundReplay, AVisitorThatTakesHintsHearsOfEachNextSampleOfTheBatch) {
  HintLog replayed;
  const size_t samples = FeedReplayedAsDirect(2000, replayed);
  EXPECT_EQ(replayed.not_the_hinted_one, 0u);
  // Every sample is hinted but each batch's first (no sample before it in the batch to be
  // hinted at).
  const size_t batches = (replayed.lines.size() + 63) / 64;
  EXPECT_GE(replayed.hinted.size(), samples - batches);
  EXPECT_LT(replayed.hinted.size(), samples);
}

// A visitor that takes no hints hears of none.
TEST(BackgroundReplay, AVisitorThatTakesNoHintsHearsOfNone) {
  struct Counting : RecordLog {
    size_t hints = 0;
    void OnSampleAhead(const Sample&) override { ++hints; }
  } replayed;
  {
    BackgroundReplay replay(replayed, 64, 3);
    Feed(replay, 500);
  }
  EXPECT_EQ(replayed.hints, 0u);
  EXPECT_FALSE(replayed.lines.empty());
}

// A visitor that takes runs of samples ahead: each run must be exactly the samples visited next,
// up to the next record of another kind or the batch's end, given before the first of them.
class RunLog : public RecordLog {
 public:
  void OnSamplesAhead(std::span<const Sample> samples) override {
    if (!ahead_.empty()) ++run_before_the_last_was_visited;
    for (const Sample& s : samples) ahead_.push_back(s.time);
    runs.push_back(samples.size());
  }
  void OnSample(const Sample& s) override {
    if (ahead_.empty() || ahead_.front() != s.time)
      ++not_given_ahead;
    else
      ahead_.erase(ahead_.begin());
    RecordLog::OnSample(s);
  }
  void OnMmap(const MmapRecord& r) override { Other(), RecordLog::OnMmap(r); }
  void OnComm(const CommRecord& r) override { Other(), RecordLog::OnComm(r); }
  void OnTask(const TaskRecord& r) override { Other(), RecordLog::OnTask(r); }
  void OnLost(const LostRecord& r) override { Other(), RecordLog::OnLost(r); }
  void OnThrottle(const ThrottleRecord& r) override { Other(), RecordLog::OnThrottle(r); }
  bool takes_sample_runs() const override { return true; }

  std::vector<size_t> runs;  // each run's length
  size_t not_given_ahead = 0, run_before_the_last_was_visited = 0, other_inside_a_run = 0;

 private:
  void Other() { other_inside_a_run += !ahead_.empty(); }
  std::vector<uint64_t> ahead_;  // samples given ahead, not yet visited
};

TEST(BackgroundReplay, AVisitorThatTakesRunsHearsOfEachRunOfSamplesBeforeItsFirst) {
  RunLog replayed;
  const size_t samples = FeedReplayedAsDirect(3000, replayed);
  EXPECT_EQ(replayed.not_given_ahead, 0u);
  EXPECT_EQ(replayed.run_before_the_last_was_visited, 0u);
  EXPECT_EQ(replayed.other_inside_a_run, 0u);
  // Feed gives four samples after each five other records; a batch's end may cut a run.
  size_t given = 0;
  for (size_t run : replayed.runs) {
    EXPECT_GE(run, 1u);
    EXPECT_LE(run, 4u);
    given += run;
  }
  EXPECT_EQ(given, samples);
  EXPECT_GE(replayed.runs.size(), samples / 4);
  EXPECT_LE(replayed.runs.size(), samples / 4 + (3000 + 63) / 64);
}

TEST(BackgroundReplay, ReplaysEveryRecordInOrderOnOneOtherThread) {
  RecordLog direct;
  Feed(direct, 5000);
  RecordLog replayed;
  {
    BackgroundReplay replay(replayed, /*batch_records=*/64, /*batches=*/3);
    Feed(replay, 5000);
    replay.Finish();
    replay.Finish();  // idempotent
  }
  ASSERT_EQ(replayed.lines.size(), direct.lines.size());
  EXPECT_EQ(replayed.lines, direct.lines);
  ASSERT_EQ(replayed.threads.size(), 1u);
  EXPECT_NE(*replayed.threads.begin(), std::this_thread::get_id());
}

TEST(BackgroundReplay, BatchesBoundedByBytesStillReplayEverythingInOrder) {
  RecordLog direct;
  Feed(direct, 3000);
  RecordLog replayed;
  {
    BackgroundReplay replay(replayed, /*batch_records=*/256, /*batches=*/2,
                            /*batch_bytes=*/16 << 10);
    Feed(replay, 3000);
  }
  EXPECT_EQ(replayed.lines, direct.lines);
}

TEST(BackgroundReplay, DestroyingWithoutFinishStillDeliversEverything) {
  RecordLog replayed;
  {
    BackgroundReplay replay(replayed, 100, 2);
    Feed(replay, 1001);
  }
  RecordLog direct;
  Feed(direct, 1001);
  EXPECT_EQ(replayed.lines, direct.lines);
}

}  // namespace
}  // namespace tprof
