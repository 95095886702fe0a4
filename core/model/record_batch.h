// Records handed from the thread that reads them to a thread that analyses them, so that
// decoding a profile overlaps with the visitors' work (a report's aggregation, a diff's).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/base/circulating_slots.h"
#include "core/model/profile.h"

namespace tprof {

// Records kept in their order. Samples go into slots reused from one filling to the next: a
// refill copies into vectors that already have room rather than allocating per sample (except
// for stack copies, whose room is given back: a few large ones must not stay in every slot).
class RecordBatch {
 public:
  // Each adds a copy of the record.
  void OnSample(const Sample& sample);
  void OnMmap(const MmapRecord& r) { Keep(Kind::kMmap, mmaps_, r); }
  void OnComm(const CommRecord& r) { Keep(Kind::kComm, comms_, r); }
  void OnTask(const TaskRecord& r) { Keep(Kind::kTask, tasks_, r); }
  void OnLost(const LostRecord& r) { Keep(Kind::kLost, losts_, r); }
  void OnThrottle(const ThrottleRecord& r) { Keep(Kind::kThrottle, throttles_, r); }

  // Passes every record, in order, to `visitor`. One that takes hints hears of the batch's next
  // sample (RecordVisitor::OnSampleAhead) just before each sample that has one.
  void Replay(RecordVisitor& visitor) const;
  // Empties the batch, keeping the samples' room.
  void Clear();
  bool empty() const { return order_.empty(); }
  size_t size() const { return order_.size(); }  // records
  size_t bytes() const { return bytes_; }        // about what its records hold

 private:
  enum class Kind : uint8_t { kSample, kMmap, kComm, kTask, kLost, kThrottle };
  template <typename RecordT>
  void Keep(Kind kind, std::vector<RecordT>& records, const RecordT& record) {
    order_.emplace_back(kind, static_cast<uint32_t>(records.size()));
    records.push_back(record);
    bytes_ += sizeof(RecordT);
  }

  std::vector<std::pair<Kind, uint32_t>> order_;  // kind, index in its vector
  size_t bytes_ = 0;
  std::vector<Sample> samples_;  // [0, samples_used_) hold this batch's
  size_t samples_used_ = 0;
  std::vector<MmapRecord> mmaps_;
  std::vector<CommRecord> comms_;
  std::vector<TaskRecord> tasks_;
  std::vector<LostRecord> losts_;
  std::vector<ThrottleRecord> throttles_;
};

// Replays the records it is given into a visitor on a thread of its own, in their order, a
// batch at a time. Batches are small (a few hundred records, at most `batch_bytes`), so that a
// batch is still in the shared cache when the other thread reads it, and a few of them
// circulate: when the visitor falls behind, the reader waits for one to come back, so memory
// stays bounded whatever the profile's size. The visitor is used by that thread alone until
// Finish returns.
class BackgroundReplay : public RecordVisitor {
 public:
  explicit BackgroundReplay(RecordVisitor& visitor, size_t batch_records = 256, size_t batches = 16,
                            size_t batch_bytes = 256 << 10);
  BackgroundReplay(const BackgroundReplay&) = delete;
  BackgroundReplay& operator=(const BackgroundReplay&) = delete;
  ~BackgroundReplay() override { Finish(); }

  void OnSample(const Sample& s) override { Add(s, &RecordBatch::OnSample); }
  void OnMmap(const MmapRecord& r) override { Add(r, &RecordBatch::OnMmap); }
  void OnComm(const CommRecord& r) override { Add(r, &RecordBatch::OnComm); }
  void OnTask(const TaskRecord& r) override { Add(r, &RecordBatch::OnTask); }
  void OnLost(const LostRecord& r) override { Add(r, &RecordBatch::OnLost); }
  void OnThrottle(const ThrottleRecord& r) override { Add(r, &RecordBatch::OnThrottle); }
  bool reads_callers() const override { return visitor_.reads_callers(); }
  // As its visitor does. A batch completes every deferred chain it keeps (the decoder's bytes
  // are gone by the replay): given every sample, deferring would only move the decoding.
  bool takes_deferred_callchains() const override { return visitor_.takes_deferred_callchains(); }

  // Hands over what is filled and waits until every record has been replayed. Idempotent; no
  // records may follow.
  void Finish() {
    HandOver();
    slots_.Finish();
  }

 private:
  template <typename RecordT>
  void Add(const RecordT& record, void (RecordBatch::*add)(const RecordT&)) {
    RecordBatch& batch = slots_.Filling();
    (batch.*add)(record);
    if (batch.size() >= batch_records_ || batch.bytes() >= batch_bytes_) HandOver();
  }
  void HandOver() {  // queues the batch being filled, if it holds anything
    if (slots_.filling() && !slots_.Filling().empty()) slots_.HandOver();
  }

  RecordVisitor& visitor_;
  const size_t batch_records_;
  const size_t batch_bytes_;
  CirculatingSlots<RecordBatch> slots_;  // last: its thread replays into visitor_
};

}  // namespace tprof
