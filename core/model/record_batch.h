// Records handed from the thread that reads them to a thread that analyses them, so that
// decoding a profile overlaps with the visitors' work (a report's aggregation, a diff's).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/model/profile.h"

namespace tprof {

// Records kept in their order. Samples go into slots reused from one filling to the next: a
// refill copies into vectors that already have room rather than allocating per sample.
class RecordBatch {
 public:
  // Each adds a copy of the record and returns how many the batch holds.
  size_t OnSample(const Sample& sample);
  size_t OnMmap(const MmapRecord& r) { return Keep(Kind::kMmap, mmaps_, r); }
  size_t OnComm(const CommRecord& r) { return Keep(Kind::kComm, comms_, r); }
  size_t OnTask(const TaskRecord& r) { return Keep(Kind::kTask, tasks_, r); }
  size_t OnLost(const LostRecord& r) { return Keep(Kind::kLost, losts_, r); }
  size_t OnThrottle(const ThrottleRecord& r) { return Keep(Kind::kThrottle, throttles_, r); }

  // Passes every record, in order, to `visitor`.
  void Replay(RecordVisitor& visitor) const;
  // Empties the batch, keeping the samples' room.
  void Clear();
  bool empty() const { return order_.empty(); }

 private:
  enum class Kind : uint8_t { kSample, kMmap, kComm, kTask, kLost, kThrottle };
  template <typename RecordT>
  size_t Keep(Kind kind, std::vector<RecordT>& records, const RecordT& record) {
    order_.emplace_back(kind, static_cast<uint32_t>(records.size()));
    records.push_back(record);
    return order_.size();
  }

  std::vector<std::pair<Kind, uint32_t>> order_;  // kind, index in its vector
  std::vector<Sample> samples_;                   // [0, samples_used_) hold this batch's
  size_t samples_used_ = 0;
  std::vector<MmapRecord> mmaps_;
  std::vector<CommRecord> comms_;
  std::vector<TaskRecord> tasks_;
  std::vector<LostRecord> losts_;
  std::vector<ThrottleRecord> throttles_;
};

// Replays the records it is given into a visitor on a thread of its own, in their order, a
// batch at a time. Batches are small (a few hundred records), so that a batch is still in the
// shared cache when the other thread reads it, and a few of them circulate: when the visitor
// falls behind, the reader waits for one to come back, so memory stays bounded whatever the
// profile's size. The visitor is used by that thread alone until Finish returns.
class BackgroundReplay : public RecordVisitor {
 public:
  explicit BackgroundReplay(RecordVisitor& visitor, size_t batch_records = 256,
                            size_t batches = 16);
  BackgroundReplay(const BackgroundReplay&) = delete;
  BackgroundReplay& operator=(const BackgroundReplay&) = delete;
  ~BackgroundReplay() override { Finish(); }

  void OnSample(const Sample& s) override { Added(Filling().OnSample(s)); }
  void OnMmap(const MmapRecord& r) override { Added(Filling().OnMmap(r)); }
  void OnComm(const CommRecord& r) override { Added(Filling().OnComm(r)); }
  void OnTask(const TaskRecord& r) override { Added(Filling().OnTask(r)); }
  void OnLost(const LostRecord& r) override { Added(Filling().OnLost(r)); }
  void OnThrottle(const ThrottleRecord& r) override { Added(Filling().OnThrottle(r)); }

  // Hands over what is filled and waits until every record has been replayed. Idempotent; no
  // records may follow.
  void Finish();

 private:
  RecordBatch& Filling();  // the batch to add to (waits for one to be free)
  void Added(size_t records) {
    if (records >= batch_records_) HandOver();
  }
  void HandOver();  // queues the batch being filled, if it holds anything
  void Work();

  RecordVisitor& visitor_;
  const size_t batch_records_;
  std::vector<RecordBatch> batches_;
  RecordBatch* filling_ = nullptr;  // the reader's; not shared
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<RecordBatch*> free_;   // guarded by mutex_
  std::deque<RecordBatch*> queue_;  // guarded by mutex_
  bool done_ = false;               // guarded by mutex_
  std::thread thread_;
};

}  // namespace tprof
