// Binary encoding of profile records inside one records chunk. State (the previous timestamp and
// the table of callchains already written) is local to a chunk, so every chunk decodes on its own
// and a damaged chunk never poisons the ones after it.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/error.h"
#include "core/model/profile.h"

namespace tprof {

class RecordEncoder {
 public:
  void Encode(const Sample& sample);
  void Encode(const MmapRecord& mmap);
  void Encode(const CommRecord& comm);
  void Encode(const TaskRecord& task);
  void Encode(const LostRecord& lost);
  void Encode(const ThrottleRecord& throttle);
  // Appends a record of any kind with an opaque body after its time; used to test forward
  // compatibility.
  void EncodeRaw(uint32_t kind, uint64_t time, const std::string& body);

  const std::string& bytes() const { return out_; }
  // Hands over the encoded bytes; the encoder is then empty, as after Reset(), and goes on in
  // `spare` (a buffer handed over before, whose pages are already there).
  std::string TakeBytes(std::string spare = {}) {
    std::string bytes = std::exchange(out_, std::move(spare));
    Reset();
    out_.reserve(bytes.capacity());
    return bytes;
  }
  // The last sample's callchain as a number that only an equal callchain shares (its id in
  // the chunk it went into, with that chunk's number); kNoChainKey when it had none.
  static constexpr uint64_t kNoChainKey = UINT64_MAX;
  uint64_t last_chain_key() const { return last_chain_key_; }
  size_t size() const { return out_.size(); }
  uint32_t record_count() const { return record_count_; }
  // Starts a new chunk: drops the bytes and the chunk-local state.
  void Reset();

 private:
  void BeginRecord(uint32_t kind);
  void EndRecord();
  // EndRecord with `tail` as the body's last field (PutBytes), written once, not via body_.
  void EndRecordWithBytes(std::string_view tail);
  void PutTime(uint64_t time);
  void PutCallchain(const std::vector<uint64_t>& chain);
  // The id + 1 of `chain` among those already in this chunk; 0 when it is new, and from now on
  // it is one of them.
  uint32_t ChainReference(const std::vector<uint64_t>& chain);
  void EncodeInFull(const Sample& sample);  // any sample, field by field

  std::string out_;
  std::string body_;
  uint32_t kind_ = 0;
  uint32_t record_count_ = 0;
  uint64_t previous_time_ = 0;
  // Callchains already in this chunk: hash -> stack id, with the frames kept to rule out
  // collisions (a colliding chain is simply written in full).
  std::unordered_map<uint64_t, uint32_t> stack_ids_;
  std::vector<std::vector<uint64_t>> stacks_;
  uint64_t chunk_number_ = 0;  // chunks begun before this one
  uint64_t last_chain_key_ = kNoChainKey;
};

class RecordDecoder {
 public:
  // Decodes one chunk's records into the visitor. Unknown record kinds (from a newer minor
  // version) are skipped by their length; unknown trailing fields of known kinds are ignored.
  // Returns the number of records decoded.
  Result<uint64_t> DecodeChunk(const uint8_t* data, size_t size, RecordVisitor& visitor);
  // The same for a chunk whose header says it holds `records` records: another count is an error.
  Result<uint64_t> DecodeChunk(std::string_view payload, uint64_t records, RecordVisitor& visitor);

 private:
  Result<uint64_t> DecodeRecords(const uint8_t* data, size_t size, RecordVisitor& visitor);
  void VisitPendingSample(RecordVisitor& visitor);

  uint64_t previous_time_ = 0;
  // This chunk's callchains so far, end to end: chain i is
  // [stack_ends_[i - 1], stack_ends_[i]) of stack_frames_. One buffer rather than a vector per
  // chain: a chunk holds thousands, and allocating each was a tenth of the decoding.
  std::vector<uint64_t> stack_frames_;
  std::vector<size_t> stack_ends_;
  // For a visitor that takes deferred callchains, stack_frames_ holds each chain's leaf context
  // and this the whole chain, by chain as stack_ends_.
  std::vector<DeferredCallchain> deferred_chains_;
  // Two samples, reused so that decoding does not allocate per sample: one being decoded, the
  // one before it waiting to be visited (see RecordVisitor::OnSampleAhead).
  Sample samples_[2];
  size_t decoding_ = 0;   // index into samples_
  bool pending_ = false;  // samples_[1 - decoding_] is yet to be visited
};

}  // namespace tprof
