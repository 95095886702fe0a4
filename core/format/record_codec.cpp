#include "core/format/record_codec.h"

#include <xxhash.h>

#include <cstring>

#include "core/format/format_spec.h"
#include "core/format/varint.h"

namespace tprof {
namespace {

using format::RecordKind;

uint64_t HashFrames(const std::vector<uint64_t>& frames) {
  return XXH3_64bits(frames.data(), frames.size() * sizeof(uint64_t));
}

}  // namespace

void RecordEncoder::Reset() {
  out_.clear();
  record_count_ = 0;
  previous_time_ = 0;
  stack_ids_.clear();
  stacks_.clear();
  ++chunk_number_;
}

void RecordEncoder::BeginRecord(uint32_t kind) {
  kind_ = kind;
  body_.clear();
}

void RecordEncoder::EndRecord() {
  ByteWriter w(out_);
  w.PutVarint(kind_);
  w.PutBytes(body_);
  ++record_count_;
}

void RecordEncoder::EndRecordWithBytes(std::string_view tail) {
  // A -g or dwarf sample's stack copy is most of its bytes: copying it into body_ and then
  // body_ into out_ was a tenth of the recorder's time at 20 kHz.
  ByteWriter w(out_);
  w.PutVarint(kind_);
  w.PutVarint(body_.size() + VarintSize(tail.size()) + tail.size());
  w.PutRaw(body_);
  w.PutBytes(tail);
  ++record_count_;
}

void RecordEncoder::PutTime(uint64_t time) {
  ByteWriter(body_).PutSigned(static_cast<int64_t>(time - previous_time_));
  previous_time_ = time;
}

uint32_t RecordEncoder::ChainReference(const std::vector<uint64_t>& chain) {
  uint64_t hash = HashFrames(chain);
  auto it = stack_ids_.find(hash);
  if (it != stack_ids_.end() && stacks_[it->second] == chain) {
    last_chain_key_ = chunk_number_ << 32 | it->second;
    return it->second + 1;
  }
  // New to this chunk: the reader numbers it as it reads it in full, so its id is the next one
  // even when its hash collides with a different chain (which keeps the table's entry).
  const auto id = static_cast<uint32_t>(stacks_.size());
  if (it == stack_ids_.end()) stack_ids_.emplace(hash, id);
  stacks_.push_back(chain);
  last_chain_key_ = chunk_number_ << 32 | id;
  return 0;
}

void RecordEncoder::PutCallchain(const std::vector<uint64_t>& chain) {
  ByteWriter w(body_);
  if (uint32_t reference = ChainReference(chain)) {
    w.PutVarint(reference);  // a chain already in this chunk
    return;
  }
  w.PutVarint(0);  // a new chain follows
  w.PutVarint(chain.size());
  uint64_t previous = 0;
  for (uint64_t frame : chain) {
    // Frames of one chain sit close together, so deltas are short.
    w.PutSigned(static_cast<int64_t>(frame - previous));
    previous = frame;
  }
}

void RecordEncoder::Encode(const Sample& s) {
  last_chain_key_ = kNoChainKey;
  if (!s.branches.empty() || s.branch_hw_index || s.user_regs_abi || !s.user_regs.empty() ||
      !s.user_stack.empty())
    return EncodeInFull(s);
  // The common sample (counters and a callchain at most) is written straight into the chunk,
  // in the same bytes EncodeInFull gives, sized once for its largest encoding: this runs once
  // per sample of an import, where growing two buffers per field was most of its cost.
  const uint32_t reference = s.callchain.empty() ? 0 : ChainReference(s.callchain);
  const bool group = !s.counter_values.empty() || s.time_enabled || s.time_running;
  size_t fields = 2 + 1 + 7 + (group ? 3 + s.counter_values.size() : 0);
  if (!s.callchain.empty()) fields += reference ? 1 : 2 + s.callchain.size();
  const size_t start = out_.size();
  out_.resize(start + fields * kMaxVarintBytes);
  char* p = PutVarintAt(out_.data() + start, static_cast<uint32_t>(RecordKind::kSample));
  char* const length_at = p++;  // one byte, room made below when the body needs more
  char* const body = p;
  p = PutVarintAt(p, ZigZagEncode(static_cast<int64_t>(s.time - previous_time_)));
  previous_time_ = s.time;
  uint64_t mask = 0;
  if (group) mask |= format::kSampleHasGroupRead;
  if (!s.callchain.empty()) mask |= format::kSampleHasCallchain;
  p = PutVarintAt(p, mask);
  p = PutVarintAt(p, s.pid);
  p = PutVarintAt(p, ZigZagEncode(static_cast<int64_t>(s.tid) - static_cast<int64_t>(s.pid)));
  p = PutVarintAt(p, s.cpu);
  p = PutVarintAt(p, s.event);
  p = PutVarintAt(p, s.period);
  p = PutVarintAt(p, s.ip);
  if (group) {
    p = PutVarintAt(p, s.time_enabled);
    p = PutVarintAt(p, s.time_running);
    p = PutVarintAt(p, s.counter_values.size());
    for (uint64_t v : s.counter_values) p = PutVarintAt(p, v);
  }
  if (reference) {
    p = PutVarintAt(p, reference);
  } else if (!s.callchain.empty()) {
    p = PutVarintAt(p, 0);
    p = PutVarintAt(p, s.callchain.size());
    uint64_t previous = 0;
    for (uint64_t frame : s.callchain) {
      p = PutVarintAt(p, ZigZagEncode(static_cast<int64_t>(frame - previous)));
      previous = frame;
    }
  }
  const size_t length = static_cast<size_t>(p - body);
  if (length >= 0x80) {
    char prefix[kMaxVarintBytes];
    const size_t n = static_cast<size_t>(PutVarintAt(prefix, length) - prefix);
    std::memmove(body + n - 1, body, length);
    std::memcpy(length_at, prefix, n);
    p += n - 1;
  } else {
    *length_at = static_cast<char>(length);
  }
  out_.resize(static_cast<size_t>(p - out_.data()));
  ++record_count_;
}

void RecordEncoder::EncodeInFull(const Sample& s) {
  BeginRecord(static_cast<uint32_t>(RecordKind::kSample));
  PutTime(s.time);
  ByteWriter w(body_);
  uint64_t mask = 0;
  if (!s.counter_values.empty() || s.time_enabled || s.time_running)
    mask |= format::kSampleHasGroupRead;
  if (!s.callchain.empty()) mask |= format::kSampleHasCallchain;
  if (!s.branches.empty() || s.branch_hw_index) mask |= format::kSampleHasBranches;
  if (s.user_regs_abi || !s.user_regs.empty() || !s.user_stack.empty())
    mask |= format::kSampleHasUserStack;
  w.PutVarint(mask);
  w.PutVarint(s.pid);
  w.PutSigned(static_cast<int64_t>(s.tid) - static_cast<int64_t>(s.pid));
  w.PutVarint(s.cpu);
  w.PutVarint(s.event);
  w.PutVarint(s.period);
  w.PutVarint(s.ip);
  if (mask & format::kSampleHasGroupRead) {
    w.PutVarint(s.time_enabled);
    w.PutVarint(s.time_running);
    w.PutVarint(s.counter_values.size());
    for (uint64_t v : s.counter_values) w.PutVarint(v);
  }
  if (mask & format::kSampleHasCallchain) PutCallchain(s.callchain);
  if (mask & format::kSampleHasBranches) {
    w.PutVarint(s.branch_hw_index);
    w.PutVarint(s.branches.size());
    uint64_t previous = 0;
    for (const BranchEntry& b : s.branches) {
      w.PutSigned(static_cast<int64_t>(b.from - previous));
      w.PutSigned(static_cast<int64_t>(b.to - b.from));
      w.PutVarint(b.flags);
      previous = b.to;
    }
  }
  if (mask & format::kSampleHasUserStack) {
    w.PutVarint(s.user_regs_abi);
    w.PutVarint(s.user_regs.size());
    for (uint64_t r : s.user_regs) w.PutVarint(r);
    return EndRecordWithBytes(s.user_stack);
  }
  EndRecord();
}

void RecordEncoder::Encode(const MmapRecord& m) {
  BeginRecord(static_cast<uint32_t>(RecordKind::kMmap));
  PutTime(m.time);
  ByteWriter w(body_);
  w.PutVarint(m.pid);
  w.PutVarint(m.tid);
  w.PutVarint(m.start);
  w.PutVarint(m.length);
  w.PutVarint(m.page_offset);
  w.PutVarint(m.prot);
  w.PutVarint(m.flags);
  w.PutVarint(m.executable ? 1 : 0);
  w.PutBytes(m.filename);
  w.PutBytes(m.build_id);
  EndRecord();
}

void RecordEncoder::Encode(const CommRecord& c) {
  BeginRecord(static_cast<uint32_t>(RecordKind::kComm));
  PutTime(c.time);
  ByteWriter w(body_);
  w.PutVarint(c.pid);
  w.PutVarint(c.tid);
  w.PutVarint(c.exec ? 1 : 0);
  w.PutBytes(c.comm);
  EndRecord();
}

void RecordEncoder::Encode(const TaskRecord& t) {
  BeginRecord(static_cast<uint32_t>(RecordKind::kTask));
  PutTime(t.time);
  ByteWriter w(body_);
  w.PutVarint(t.is_exit ? 1 : 0);
  w.PutVarint(t.pid);
  w.PutVarint(t.ppid);
  w.PutVarint(t.tid);
  w.PutVarint(t.ptid);
  EndRecord();
}

void RecordEncoder::Encode(const LostRecord& l) {
  BeginRecord(static_cast<uint32_t>(RecordKind::kLost));
  PutTime(l.time);
  ByteWriter w(body_);
  w.PutVarint(l.event);
  w.PutVarint(l.lost);
  w.PutVarint(l.samples_only ? 1 : 0);
  EndRecord();
}

void RecordEncoder::Encode(const ThrottleRecord& t) {
  BeginRecord(static_cast<uint32_t>(RecordKind::kThrottle));
  PutTime(t.time);
  ByteWriter w(body_);
  w.PutVarint(t.event);
  w.PutVarint(t.throttled ? 1 : 0);
  EndRecord();
}

void RecordEncoder::EncodeRaw(uint32_t kind, uint64_t time, const std::string& body) {
  BeginRecord(kind);
  PutTime(time);
  body_ += body;
  EndRecord();
}

namespace {

// Largest callchain or branch stack accepted; perf's own limit is far lower (PERF_MAX_STACK_DEPTH
// is 127 by default, at most 65535 via sysctl).
constexpr uint64_t kMaxFrames = 1 << 16;

}  // namespace

Result<uint64_t> RecordDecoder::DecodeChunk(std::string_view payload, uint64_t records,
                                            RecordVisitor& visitor) {
  auto decoded =
      DecodeChunk(reinterpret_cast<const uint8_t*>(payload.data()), payload.size(), visitor);
  if (decoded.ok() && decoded.value() != records)
    return Error("holds " + std::to_string(decoded.value()) + " records, its header says " +
                 std::to_string(records));
  return decoded;
}

Result<uint64_t> RecordDecoder::DecodeChunk(const uint8_t* data, size_t size,
                                            RecordVisitor& visitor) {
  auto decoded = DecodeRecords(data, size, visitor);
  VisitPendingSample(visitor);  // the last sample, or the last good one before a failure
  return decoded;
}

void RecordDecoder::VisitPendingSample(RecordVisitor& visitor) {
  if (!pending_) return;
  pending_ = false;
  visitor.OnSample(samples_[1 - decoding_]);
}

namespace {

// Decodes a callchain of `n` deltas into `frames` as far as a visitor that does not read callers
// reads it (RecordVisitor::reads_callers): to the leaf, and for a leaf that may be kernel code on
// to the user context marker and the entry after it (SplitLeaf, KernelEntryCredit). Returns how
// many entries it decoded. What it keeps is the chunk's copy for every later sample with this
// chain, whatever their ips, so a leaf before any marker (kernel or not by the sample's ip)
// counts as one that may be kernel code.
uint64_t DecodeLeafContext(ByteReader& r, uint64_t n, uint64_t* frames) {
  bool user_context = false, past_leaf = false, after_user_marker = false;
  uint64_t previous = 0;
  for (uint64_t i = 0; i < n; ++i) {
    previous += static_cast<uint64_t>(r.GetSigned());
    frames[i] = previous;
    if (past_leaf) {  // a leaf that may be kernel code: up to the user marker and one more
      if (after_user_marker) return i + 1;
      after_user_marker = previous == kContextUser;
    } else if (IsContextMarker(previous)) {
      user_context = previous != kContextKernel;
    } else if (user_context) {
      return i + 1;  // a user leaf
    } else {
      past_leaf = true;
    }
  }
  return n;
}

void DecodeDeferredChain(const DeferredCallchain& chain, std::vector<uint64_t>* frames) {
  ByteReader r(chain.bytes, chain.size);
  frames->resize(chain.frames);
  r.GetDeltaSums(frames->data(), chain.frames);  // bytes SkipVarints took: r cannot fail
}

}  // namespace

Result<uint64_t> RecordDecoder::DecodeRecords(const uint8_t* data, size_t size,
                                              RecordVisitor& visitor) {
  previous_time_ = 0;
  stack_frames_.clear();
  stack_ends_.clear();
  deferred_chains_.clear();
  const bool read_ahead = visitor.takes_sample_hints();
  const bool whole_chains = visitor.reads_callers();
  const bool defer_chains = whole_chains && visitor.takes_deferred_callchains();
  ByteReader chunk(data, size);
  uint64_t index = 0;
  while (chunk.remaining() > 0) {
    uint64_t kind = chunk.GetVarint();
    std::string_view body_bytes = chunk.GetBytes();
    if (!chunk.ok()) return Error("record " + std::to_string(index) + ": truncated record header");
    ByteReader r(body_bytes, data + size);
    // Every record body starts with its time delta, so skipping an unknown kind keeps the
    // timestamps of the records after it right.
    previous_time_ += static_cast<uint64_t>(r.GetSigned());
    auto get_time = [&] { return previous_time_; };
    // A sample held back for the look-ahead is visited before any other record, so the
    // visitor still hears every record in the file's order.
    if (static_cast<RecordKind>(kind) != RecordKind::kSample) VisitPendingSample(visitor);
    switch (static_cast<RecordKind>(kind)) {
      case RecordKind::kSample: {
        Sample& s = samples_[decoding_];
        s.ClearKeepCapacity();
        s.time = get_time();
        uint64_t mask = r.GetVarint();
        s.pid = static_cast<uint32_t>(r.GetVarint());
        s.tid = static_cast<uint32_t>(s.pid + static_cast<uint64_t>(r.GetSigned()));
        s.cpu = static_cast<uint32_t>(r.GetVarint());
        s.event = static_cast<uint32_t>(r.GetVarint());
        s.period = r.GetVarint();
        s.ip = r.GetVarint();
        if (mask & format::kSampleHasGroupRead) {
          s.time_enabled = r.GetVarint();
          s.time_running = r.GetVarint();
          uint64_t n = r.GetCount(1);
          for (uint64_t i = 0; i < n; ++i) s.counter_values.push_back(r.GetVarint());
        }
        if (mask & format::kSampleHasCallchain) {
          uint64_t ref = r.GetVarint();
          if (ref == 0) {
            uint64_t n = r.GetCount(1);
            if (n > kMaxFrames)
              return Error("record " + std::to_string(index) + ": callchain too deep");
            s.callchain.resize(n);
            if (whole_chains && !defer_chains) {
              r.GetDeltaSums(s.callchain.data(), n);
            } else {
              const uint8_t* chain_begin = r.position();
              const uint64_t kept = DecodeLeafContext(r, n, s.callchain.data());
              r.SkipVarints(n - kept);
              s.callchain.resize(kept);
              if (defer_chains) {
                if (kept < n)
                  s.deferred_callchain = {chain_begin,
                                          static_cast<size_t>(r.position() - chain_begin),
                                          static_cast<uint32_t>(n), &DecodeDeferredChain};
                deferred_chains_.push_back(s.deferred_callchain);
              }
            }
            stack_frames_.insert(stack_frames_.end(), s.callchain.begin(), s.callchain.end());
            stack_ends_.push_back(stack_frames_.size());
          } else if (ref <= stack_ends_.size()) {
            const size_t begin = ref == 1 ? 0 : stack_ends_[ref - 2];
            s.callchain.assign(
                stack_frames_.begin() + static_cast<std::ptrdiff_t>(begin),
                stack_frames_.begin() + static_cast<std::ptrdiff_t>(stack_ends_[ref - 1]));
            if (defer_chains) s.deferred_callchain = deferred_chains_[ref - 1];
          } else {
            return Error("record " + std::to_string(index) + ": reference to unknown callchain " +
                         std::to_string(ref));
          }
        }
        if (mask & format::kSampleHasBranches) {
          s.branch_hw_index = r.GetVarint();
          uint64_t n = r.GetCount(3);
          if (n > kMaxFrames)
            return Error("record " + std::to_string(index) + ": branch stack too deep");
          s.branches.resize(n);
          uint64_t previous = 0;
          for (uint64_t i = 0; i < n; ++i) {
            BranchEntry& b = s.branches[i];
            b.from = previous + static_cast<uint64_t>(r.GetSigned());
            b.to = b.from + static_cast<uint64_t>(r.GetSigned());
            b.flags = r.GetVarint();
            previous = b.to;
          }
        }
        if (mask & format::kSampleHasUserStack) {
          s.user_regs_abi = r.GetVarint();
          uint64_t n = r.GetCount(1);
          for (uint64_t i = 0; i < n; ++i) s.user_regs.push_back(r.GetVarint());
          s.user_stack = r.GetBytes();
        }
        if (!r.ok()) return Error("record " + std::to_string(index) + ": malformed sample");
        if (!read_ahead) {
          visitor.OnSample(s);
          break;
        }
        // Visited when the record after it has been decoded: if that is a sample too, the
        // visitor hears of it first (OnSampleAhead), so its lookups overlap with this one's.
        if (pending_) {
          visitor.OnSampleAhead(s);
          visitor.OnSample(samples_[1 - decoding_]);
        }
        pending_ = true;
        decoding_ = 1 - decoding_;
        break;
      }
      case RecordKind::kMmap: {
        MmapRecord m;
        m.time = get_time();
        m.pid = static_cast<uint32_t>(r.GetVarint());
        m.tid = static_cast<uint32_t>(r.GetVarint());
        m.start = r.GetVarint();
        m.length = r.GetVarint();
        m.page_offset = r.GetVarint();
        m.prot = static_cast<uint32_t>(r.GetVarint());
        m.flags = static_cast<uint32_t>(r.GetVarint());
        m.executable = r.GetVarint() != 0;
        m.filename = r.GetBytes();
        m.build_id = r.GetBytes();
        if (!r.ok()) return Error("record " + std::to_string(index) + ": malformed mmap");
        visitor.OnMmap(m);
        break;
      }
      case RecordKind::kComm: {
        CommRecord c;
        c.time = get_time();
        c.pid = static_cast<uint32_t>(r.GetVarint());
        c.tid = static_cast<uint32_t>(r.GetVarint());
        c.exec = r.GetVarint() != 0;
        c.comm = r.GetBytes();
        if (!r.ok()) return Error("record " + std::to_string(index) + ": malformed comm");
        visitor.OnComm(c);
        break;
      }
      case RecordKind::kTask: {
        TaskRecord t;
        t.time = get_time();
        t.is_exit = r.GetVarint() != 0;
        t.pid = static_cast<uint32_t>(r.GetVarint());
        t.ppid = static_cast<uint32_t>(r.GetVarint());
        t.tid = static_cast<uint32_t>(r.GetVarint());
        t.ptid = static_cast<uint32_t>(r.GetVarint());
        if (!r.ok()) return Error("record " + std::to_string(index) + ": malformed task record");
        visitor.OnTask(t);
        break;
      }
      case RecordKind::kLost: {
        LostRecord l;
        l.time = get_time();
        l.event = static_cast<uint32_t>(r.GetVarint());
        l.lost = r.GetVarint();
        l.samples_only = r.GetVarint() != 0;
        if (!r.ok()) return Error("record " + std::to_string(index) + ": malformed lost record");
        visitor.OnLost(l);
        break;
      }
      case RecordKind::kThrottle: {
        ThrottleRecord t;
        t.time = get_time();
        t.event = static_cast<uint32_t>(r.GetVarint());
        t.throttled = r.GetVarint() != 0;
        if (!r.ok())
          return Error("record " + std::to_string(index) + ": malformed throttle record");
        visitor.OnThrottle(t);
        break;
      }
      default:
        break;  // a kind from a newer minor version: skipped by its length
    }
    ++index;
  }
  return index;
}

}  // namespace tprof
