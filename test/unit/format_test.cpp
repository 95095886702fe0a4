// Round trip, truncation, corruption and versioning of the .tprof format.
#include <gtest/gtest.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <random>
#include <variant>

#include "core/analysis/off_cpu_reasons.h"
#include "core/format/chunk.h"
#include "core/format/format_spec.h"
#include "core/format/profile_reader.h"
#include "core/format/profile_writer.h"
#include "core/format/record_codec.h"
#include "core/model/kernel_entry_credit.h"
#include "test/support/mapping_named_resolver.h"
#include "test/support/record_generator.h"

namespace tprof {
namespace {

using namespace tprof::testing;

struct WrittenProfile {
  std::string bytes;
  std::vector<AnyRecord> records;
};

WrittenProfile WriteRandomProfile(uint32_t seed, size_t count, size_t chunk_size,
                                  bool background_compression = false) {
  WrittenProfile out;
  WriterOptions options;
  options.chunk_size = chunk_size;
  options.background_compression = background_compression;
  auto writer = ProfileWriter::Create(std::make_unique<StringSink>(out.bytes), TestMetadata(),
                                      TestEvents(), options);
  EXPECT_TRUE(writer.ok());
  RecordGenerator gen(seed);
  for (size_t i = 0; i < count; ++i) {
    AnyRecord r = gen.Next();
    Status s = std::visit([&](const auto& rec) { return writer.value()->Write(rec); }, r);
    EXPECT_TRUE(s.ok());
    out.records.push_back(std::move(r));
  }
  EXPECT_TRUE(writer.value()->Finish({123456789, 99, {}}).ok());
  return out;
}

// Offsets at which chunks start, found by walking the framing (independently of the reader).
std::vector<size_t> ChunkOffsets(const std::string& bytes) {
  std::vector<size_t> offsets;
  size_t offset = format::kFileHeaderSize;
  while (offset + format::kChunkHeaderSize <= bytes.size()) {
    ChunkHeader h;
    if (ParseChunkHeader(reinterpret_cast<const uint8_t*>(bytes.data()) + offset,
                         bytes.size() - offset, &h) != ChunkHeaderStatus::kOk)
      break;
    offsets.push_back(offset);
    offset += format::kChunkHeaderSize + h.stored_size;
  }
  return offsets;
}

TEST(FormatTest, RoundTripOfRandomRecords) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    WrittenProfile p = WriteRandomProfile(seed, 5000, 4096);
    auto reader = ProfileReader::OpenBytes(p.bytes);
    ASSERT_TRUE(reader.ok()) << reader.error().message();
    EXPECT_EQ(reader->metadata().command_line, TestMetadata().command_line);
    EXPECT_EQ(reader->metadata().cpu.model, 85u);
    EXPECT_EQ(reader->metadata().duration_ns, 123456789u);
    ASSERT_EQ(reader->events().size(), 3u);
    EXPECT_EQ(reader->events()[1].name, "instructions");
    EXPECT_EQ(reader->events()[0].group_members, (std::vector<uint32_t>{0, 1, 2}));
    CollectingVisitor visitor;
    auto summary = reader->ReadRecords(visitor);
    ASSERT_TRUE(summary.ok()) << summary.error().message();
    EXPECT_TRUE(summary->complete);
    EXPECT_TRUE(summary->warning.empty());
    ASSERT_EQ(visitor.records.size(), p.records.size());
    for (size_t i = 0; i < p.records.size(); ++i)
      ASSERT_TRUE(visitor.records[i] == p.records[i]) << i;
    EXPECT_GT(ChunkOffsets(p.bytes).size(), 20u);  // the small chunk size gave many chunks
  }
}

// Compressing on the writer's own thread changes when chunks are written, not what: the file is
// byte for byte the one written in line.
TEST(FormatTest, BackgroundCompressionWritesTheSameFile) {
  WrittenProfile in_line = WriteRandomProfile(7, 5000, 4096);
  WrittenProfile background = WriteRandomProfile(7, 5000, 4096, /*background_compression=*/true);
  EXPECT_GT(ChunkOffsets(in_line.bytes).size(), 10u);
  EXPECT_EQ(in_line.bytes, background.bytes);
}

// A sink that fails after `good` writes, as a full disk does.
class FailingSink : public ByteSink {
 public:
  explicit FailingSink(int good) : good_(good) {}
  Status Write(std::string_view) override {
    return good_-- > 0 ? Status::Ok() : Status(Error("No space left on device"));
  }
  Status Commit() override { return Status::Ok(); }

 private:
  int good_;
};

TEST(FormatTest, BackgroundWriteErrorsSurfaceAtFinish) {
  for (bool background : {false, true}) {
    WriterOptions options;
    options.chunk_size = 1024;
    options.background_compression = background;
    auto writer = ProfileWriter::Create(std::make_unique<FailingSink>(8), TestMetadata(),
                                        TestEvents(), options);
    ASSERT_TRUE(writer.ok());
    RecordGenerator gen(3);
    std::string first_error;  // in line at the Write that failed; in the background, later
    for (int i = 0; i < 2000; ++i) {
      AnyRecord r = gen.Next();
      Status s = std::visit([&](const auto& rec) { return writer.value()->Write(rec); }, r);
      if (!s.ok() && first_error.empty()) first_error = s.error().message();
    }
    Status finished = writer.value()->Finish({1, 1, {}});
    ASSERT_FALSE(finished.ok()) << background;
    if (first_error.empty()) first_error = finished.error().message();
    EXPECT_NE(first_error.find("No space left"), std::string::npos) << first_error;
  }
}

// Names of any bytes (an event named in a perf.data file, a command line, a host) come back byte
// for byte: the JSON chunks hold their visible form for older readers and the bytes in hex.
TEST(FormatTest, NamesThatAreNotUtf8RoundTripByteForByte) {
  const std::string event_name = "cyc\xffles\x80", word = "./bad\xfe\xffname", host = "h\xc3";
  Metadata metadata = TestMetadata();
  metadata.command_line = {word, "plain", "\xe2\x82"};
  metadata.hostname = host;
  std::vector<EventDesc> events = TestEvents();
  events[0].name = event_name;
  std::string bytes;
  auto writer =
      ProfileWriter::Create(std::make_unique<StringSink>(bytes), metadata, events, WriterOptions{});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer.value()->Finish({1, 2, {}}).ok());
  auto reader = ProfileReader::OpenBytes(bytes);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  EXPECT_EQ(reader->events()[0].name, event_name);
  EXPECT_EQ(reader->events()[1].name, TestEvents()[1].name);
  EXPECT_EQ(reader->metadata().command_line, (std::vector<std::string>{word, "plain", "\xe2\x82"}));
  EXPECT_EQ(reader->metadata().hostname, host);
}

TEST(FormatTest, EmptyProfileRoundTrips) {
  WrittenProfile p = WriteRandomProfile(9, 0, 4096);
  auto reader = ProfileReader::OpenBytes(p.bytes);
  ASSERT_TRUE(reader.ok());
  CollectingVisitor visitor;
  auto summary = reader->ReadRecords(visitor);
  ASSERT_TRUE(summary.ok());
  EXPECT_TRUE(summary->complete);
  EXPECT_TRUE(visitor.records.empty());
}

// Reads a damaged or cut profile; returns false when the reader reported an error.
// A visitor that says it has threads of its own, so that the reader decodes on the visiting
// thread (ChunkDecodeThread) rather than handing decoded records over (BackgroundReplay).
struct CollectingVisitorWithThreads : CollectingVisitor {
  bool has_own_threads() const override { return true; }
};

struct ReadOutcome {
  bool ok = false;
  std::vector<AnyRecord> records;
  ReadSummary summary;
  std::string error;
};

ReadOutcome ReadWith(ProfileReader& reader, CollectingVisitor& visitor,
                     ProfileReader::Visiting visiting) {
  ReadOutcome out;
  auto result = reader.ReadRecords(visitor, visiting);
  out.ok = result.ok();
  if (result.ok())
    out.summary = result.value();
  else
    out.error = result.error().message();
  out.records = std::move(visitor.records);
  return out;
}

// Reads the records every way the reader can (decoding beside the visitor, decoding on the
// visitor's thread while this one inflates, all on this thread), which must agree on the records
// read, the summary and the error.
bool ReadPrefix(std::string_view bytes, std::vector<AnyRecord>* records, ReadSummary* summary,
                std::string* error) {
  auto reader = ProfileReader::OpenBytes(bytes);
  if (!reader.ok()) {
    *error = reader.error().message();
    return false;
  }
  CollectingVisitor beside, in_line;
  CollectingVisitorWithThreads decoding_elsewhere;
  ReadOutcome a = ReadWith(*reader, beside, ProfileReader::Visiting::kBesideDecoding);
  ReadOutcome b = ReadWith(*reader, decoding_elsewhere, ProfileReader::Visiting::kBesideDecoding);
  ReadOutcome c = ReadWith(*reader, in_line, ProfileReader::Visiting::kOnThisThread);
  for (const ReadOutcome* other : {&b, &c}) {
    EXPECT_EQ(other->ok, a.ok);
    EXPECT_EQ(other->error, a.error);
    EXPECT_TRUE(other->records == a.records);
    EXPECT_EQ(other->summary.complete, a.summary.complete);
    EXPECT_EQ(other->summary.records_read, a.summary.records_read);
    EXPECT_EQ(other->summary.samples_read, a.summary.samples_read);
    EXPECT_EQ(other->summary.warning, a.summary.warning);
  }
  if (!a.ok) {
    *error = a.error;
    return false;
  }
  *summary = a.summary;
  *records = std::move(a.records);
  return true;
}

void ExpectPrefix(const std::vector<AnyRecord>& read, const std::vector<AnyRecord>& all) {
  ASSERT_LE(read.size(), all.size());
  for (size_t i = 0; i < read.size(); ++i) ASSERT_TRUE(read[i] == all[i]) << "record " << i;
}

TEST(FormatTest, TruncationAtEveryChunkBoundaryKeepsEveryCompleteChunk) {
  WrittenProfile p = WriteRandomProfile(4, 3000, 2048);
  std::vector<size_t> offsets = ChunkOffsets(p.bytes);
  ASSERT_GT(offsets.size(), 10u);
  size_t previous_count = 0;
  // offsets[0..1] are metadata and events; offsets.back() is the trailer.
  for (size_t i = 1; i < offsets.size(); ++i) {
    std::vector<AnyRecord> read;
    ReadSummary summary;
    std::string error;
    ASSERT_TRUE(
        ReadPrefix(std::string_view(p.bytes).substr(0, offsets[i]), &read, &summary, &error))
        << "cut at " << offsets[i] << ": " << error;
    EXPECT_FALSE(summary.complete);
    EXPECT_NE(summary.warning.find("incomplete"), std::string::npos) << summary.warning;
    EXPECT_EQ(summary.bytes_lost, 0u);  // cut exactly at a boundary: nothing partial
    ExpectPrefix(read, p.records);
    EXPECT_GE(read.size(), previous_count);
    previous_count = read.size();
  }
  // Cut just before the trailer: every record is there, but the file is still incomplete.
  EXPECT_EQ(previous_count, p.records.size());
}

TEST(FormatTest, TruncationAtRandomOffsetsReadsAPrefixWithAWarning) {
  WrittenProfile p = WriteRandomProfile(5, 3000, 2048);
  std::mt19937 rng(42);
  for (int i = 0; i < 300; ++i) {
    size_t cut = std::uniform_int_distribution<size_t>(0, p.bytes.size() - 1)(rng);
    std::vector<AnyRecord> read;
    ReadSummary summary;
    std::string error;
    if (!ReadPrefix(std::string_view(p.bytes).substr(0, cut), &read, &summary, &error)) {
      // Only a cut inside the fixed file header or the first chunks may fail outright.
      EXPECT_LT(cut, ChunkOffsets(p.bytes)[1] + 64) << error;
      EXPECT_FALSE(error.empty());
      continue;
    }
    EXPECT_FALSE(summary.complete) << "cut at " << cut;
    EXPECT_FALSE(summary.warning.empty());
    ExpectPrefix(read, p.records);
  }
}

TEST(FormatTest, EveryFlippedBitIsDetected) {
  WrittenProfile p = WriteRandomProfile(6, 400, 1024);
  std::mt19937 rng(7);
  int errors = 0, incomplete = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string damaged = p.bytes;
    size_t byte = std::uniform_int_distribution<size_t>(0, damaged.size() - 1)(rng);
    damaged[byte] = static_cast<char>(damaged[byte] ^ (1 << (rng() % 8)));
    std::vector<AnyRecord> read;
    ReadSummary summary;
    std::string error;
    if (!ReadPrefix(damaged, &read, &summary, &error)) {
      ++errors;
      EXPECT_FALSE(error.empty());
      continue;
    }
    // A flip in a chunk (its checksum no longer matches) or its size field (it looks cut
    // short) ends the reading there: reported as incomplete, never read as a complete file,
    // and what was read is the records before the damage.
    ASSERT_FALSE(summary.complete) << "flip at byte " << byte << " went unnoticed";
    EXPECT_NE(summary.warning, "") << "flip at byte " << byte;
    ++incomplete;
    ExpectPrefix(read, p.records);
  }
  // Flips in the file header and the metadata are errors (nothing to read without them); most
  // land in records chunks and read up to them.
  EXPECT_GT(incomplete, 1000);
  std::cout << "flipped bits: " << errors << " errors, " << incomplete << " read as incomplete\n";
}

// A damaged chunk in the middle: the chunks before it are read, and the warning names the
// chunk's offset and the checksum (it was an error that lost every record).
TEST(FormatTest, AChecksumMismatchStopsTheReadingThereAndNamesTheOffset) {
  WrittenProfile p = WriteRandomProfile(8, 500, 1024);
  std::vector<size_t> offsets = ChunkOffsets(p.bytes);
  std::string damaged = p.bytes;
  size_t target = offsets[3] + format::kChunkHeaderSize + 5;
  damaged[target] ^= 0x10;
  std::vector<AnyRecord> read;
  ReadSummary summary;
  std::string error;
  ASSERT_TRUE(ReadPrefix(damaged, &read, &summary, &error)) << error;
  EXPECT_FALSE(summary.complete);
  EXPECT_NE(summary.warning.find("offset " + std::to_string(offsets[3])), std::string::npos)
      << summary.warning;
  EXPECT_NE(summary.warning.find("checksum"), std::string::npos) << summary.warning;
  ExpectPrefix(read, p.records);
  EXPECT_FALSE(read.empty()) << "the chunks before the damage hold records";
}

// ReadChunksOfKind checks the checksums of the chunks it returns and leaves the others' to the
// reader of those: a damaged records chunk still gives the intact symbols, and reading the
// records then fails on it; a damaged chunk of the kind asked for fails the read of that kind.
TEST(FormatTest, ReadingChunksOfOneKindChecksThoseAndReadingRecordsChecksTheirs) {
  // Random records, then two chunks of a section kind before the trailer.
  WrittenProfile p = WriteRandomProfile(9, 500, 1024);
  std::string bytes;
  {
    WriterOptions options;
    options.chunk_size = 1024;
    auto writer = ProfileWriter::Create(std::make_unique<StringSink>(bytes), TestMetadata(),
                                        TestEvents(), options);
    ASSERT_TRUE(writer.ok());
    for (const AnyRecord& r : p.records)
      ASSERT_TRUE(std::visit([&](const auto& rec) { return writer.value()->Write(rec); }, r).ok());
    ASSERT_TRUE(writer.value()->WriteOpaqueChunk(0x4242, "first section payload").ok());
    ASSERT_TRUE(writer.value()->WriteOpaqueChunk(0x4242, "second section payload").ok());
    ASSERT_TRUE(writer.value()->Finish({1, 1, {}}).ok());
  }
  const std::vector<size_t> offsets = ChunkOffsets(bytes);
  ASSERT_GT(offsets.size(), 6u);
  auto kind_at = [&](size_t offset) {
    ChunkHeader h;
    EXPECT_EQ(ParseChunkHeader(reinterpret_cast<const uint8_t*>(bytes.data()) + offset,
                               bytes.size() - offset, &h),
              ChunkHeaderStatus::kOk);
    return h;
  };
  size_t records_chunk = 0, section_chunk = 0;
  for (size_t offset : offsets) {
    const ChunkHeader h = kind_at(offset);
    if (h.kind == format::ChunkKind::kRecords && h.stored_size > 16 && !records_chunk)
      records_chunk = offset;
    if (static_cast<uint16_t>(h.kind) == 0x4242 && !section_chunk) section_chunk = offset;
  }
  ASSERT_NE(records_chunk, 0u);
  ASSERT_NE(section_chunk, 0u);

  std::string damaged_records = bytes;
  damaged_records[records_chunk + format::kChunkHeaderSize + 5] ^= 0x10;
  auto reader = ProfileReader::OpenBytes(damaged_records);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  auto sections = reader->ReadChunksOfKind(0x4242);
  ASSERT_TRUE(sections.ok()) << sections.error().message();
  EXPECT_EQ(*sections,
            (std::vector<std::string>{"first section payload", "second section payload"}));
  // The records are read up to the damaged chunk, which the summary names.
  CollectingVisitor visitor;
  auto summary = reader->ReadRecords(visitor);
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_FALSE(summary->complete);
  EXPECT_NE(summary->warning.find("offset " + std::to_string(records_chunk)), std::string::npos)
      << summary->warning;
  EXPECT_NE(summary->warning.find("checksum"), std::string::npos);

  std::string damaged_section = bytes;
  damaged_section[section_chunk + format::kChunkHeaderSize + 2] ^= 0x10;
  auto section_reader = ProfileReader::OpenBytes(damaged_section);
  ASSERT_TRUE(section_reader.ok());
  auto damaged = section_reader->ReadChunksOfKind(0x4242);
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.error().message().find("offset " + std::to_string(section_chunk)),
            std::string::npos)
      << damaged.error().message();
  EXPECT_NE(damaged.error().message().find("checksum"), std::string::npos);
}

void SetHeaderVersion(std::string& bytes, uint16_t major, uint16_t minor) {
  std::memcpy(bytes.data() + 8, &major, 2);
  std::memcpy(bytes.data() + 10, &minor, 2);
  uint32_t checksum = XXH32(bytes.data(), 20, 0);
  std::memcpy(bytes.data() + 20, &checksum, 4);
}

TEST(FormatTest, NewerMajorVersionIsRefusedWithAClearMessage) {
  WrittenProfile p = WriteRandomProfile(10, 10, 4096);
  SetHeaderVersion(p.bytes, format::kMajorVersion + 1, 0);
  auto reader = ProfileReader::OpenBytes(p.bytes);
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.error().message().find("newer"), std::string::npos);
  EXPECT_NE(reader.error().message().find("upgrade tprof"), std::string::npos);
}

TEST(FormatTest, HeaderCorruptionIsDetected) {
  WrittenProfile p = WriteRandomProfile(10, 10, 4096);
  p.bytes[9] ^= 1;  // the major version, without fixing the checksum
  auto reader = ProfileReader::OpenBytes(p.bytes);
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.error().message().find("corrupt"), std::string::npos);
  EXPECT_FALSE(ProfileReader::OpenBytes("GARBAGE!and more bytes here").ok());
}

TEST(FormatTest, UnknownRecordAndChunkKindsFromANewerMinorAreSkipped) {
  std::string bytes;
  WriterOptions options;
  options.minor_version_override = format::kMinorVersion + 3;
  auto writer = ProfileWriter::Create(std::make_unique<StringSink>(bytes), TestMetadata(),
                                      TestEvents(), options);
  ASSERT_TRUE(writer.ok());
  Sample first;
  first.time = 1000;
  first.ip = 0x401000;
  first.period = 7;
  Sample second = first;
  second.time = 5000;
  second.ip = 0x402000;
  ASSERT_TRUE(writer.value()->Write(first).ok());
  // A record kind from the future, with a time and a body this version cannot parse.
  ASSERT_TRUE(writer.value()->WriteRaw(200, 3000, std::string("\xff\xff\x01unknown", 10)).ok());
  ASSERT_TRUE(writer.value()->Write(second).ok());
  ASSERT_TRUE(writer.value()->WriteOpaqueChunk(0x4242, "a future section").ok());
  ASSERT_TRUE(writer.value()->Finish({1, 1, {}}).ok());

  auto reader = ProfileReader::OpenBytes(bytes);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  EXPECT_EQ(reader->minor_version(), format::kMinorVersion + 3);
  CollectingVisitor visitor;
  auto summary = reader->ReadRecords(visitor);
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_TRUE(summary->complete);
  ASSERT_EQ(visitor.records.size(), 2u);
  EXPECT_TRUE(std::get<Sample>(visitor.records[0]) == first);
  // The skipped record's time delta still applies, so the next timestamp is right.
  EXPECT_TRUE(std::get<Sample>(visitor.records[1]) == second);
}

TEST(FormatTest, FileIsWrittenAsPartialAndRenamedWithTheOldKept) {
  std::string dir = ::testing::TempDir();
  std::string path = dir + "/format_test_out.tprof";
  std::remove(path.c_str());
  std::remove((path + ".old").c_str());
  for (int round = 0; round < 2; ++round) {
    auto writer = ProfileWriter::CreateFile(path, TestMetadata(), TestEvents());
    ASSERT_TRUE(writer.ok());
    Sample s;
    s.time = 1;
    s.period = static_cast<uint64_t>(round + 1);
    ASSERT_TRUE(writer.value()->Write(s).ok());
    ASSERT_TRUE(writer.value()->Flush().ok());
    EXPECT_EQ(::access((path + ".partial").c_str(), F_OK), 0);
    ASSERT_TRUE(writer.value()->Finish({1, 1, {}}).ok());
    EXPECT_NE(::access((path + ".partial").c_str(), F_OK), 0);
  }
  auto current = ProfileReader::OpenFile(path);
  auto old = ProfileReader::OpenFile(path + ".old");
  ASSERT_TRUE(current.ok());
  ASSERT_TRUE(old.ok());
  CollectingVisitor a, b;
  ASSERT_TRUE(current->ReadRecords(a).ok());
  ASSERT_TRUE(old->ReadRecords(b).ok());
  EXPECT_EQ(std::get<Sample>(a.records.at(0)).period, 2u);
  EXPECT_EQ(std::get<Sample>(b.records.at(0)).period, 1u);
}

TEST(FormatTest, OpenFileErrorsNameTheFile) {
  auto missing = ProfileReader::OpenFile("/nonexistent/profile.tprof");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("/nonexistent/profile.tprof"), std::string::npos);
}

}  // namespace
}  // namespace tprof

namespace tprof {
namespace {

TEST(FormatTest, AZeroFilledTailIsTruncationNotCorruption) {
  std::string bytes;
  auto writer = ProfileWriter::Create(std::make_unique<StringSink>(bytes), testing::TestMetadata(),
                                      testing::TestEvents());
  ASSERT_TRUE(writer.ok());
  Sample s;
  s.time = 5;
  ASSERT_TRUE(writer.value()->Write(s).ok());
  ASSERT_TRUE(writer.value()->Flush().ok());
  bytes.append(4096, '\0');  // what a crash can leave after the last write
  auto reader = ProfileReader::OpenBytes(bytes);
  ASSERT_TRUE(reader.ok());
  testing::CollectingVisitor visitor;
  auto summary = reader->ReadRecords(visitor);
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_FALSE(summary->complete);
  EXPECT_EQ(summary->bytes_lost, 4096u);
  EXPECT_EQ(visitor.records.size(), 1u);
}

TEST(FormatTest, MetadataThatIsNotUtf8IsWrittenNotThrown) {
  std::string bytes;
  Metadata metadata = testing::TestMetadata();
  metadata.command_line = {"./prog", std::string("caf\xe9", 4)};  // Latin-1, invalid UTF-8
  auto writer =
      ProfileWriter::Create(std::make_unique<StringSink>(bytes), metadata, testing::TestEvents());
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer.value()->Finish({1, 1, {}}).ok());
  auto reader = ProfileReader::OpenBytes(bytes);
  ASSERT_TRUE(reader.ok());
  ASSERT_EQ(reader->metadata().command_line.size(), 2u);
  EXPECT_EQ(reader->metadata().command_line[1].substr(0, 3), "caf");
}

// The trailer keeps a --call-graph dwarf recording's unwinding statistics; a file without them
// has none.
TEST(FormatTest, TrailerKeepsTheUnwindingStatistics) {
  UnwindStatistics stats;
  stats.samples = 120;
  stats.complete = 100;
  stats.user_frames = 900;
  stats.stopped[static_cast<size_t>(UnwindEnd::kNoCfi)] = {15, 3, {"/usr/lib/libfoo.so", {}}};
  stats.stopped[static_cast<size_t>(UnwindEnd::kStackCopyTooShort)] = {5, 0, {}};
  for (bool with : {true, false}) {
    std::string bytes;
    auto writer =
        ProfileWriter::Create(std::make_unique<StringSink>(bytes), TestMetadata(), TestEvents());
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE(writer.value()->Finish({1, 1, with ? std::optional(stats) : std::nullopt}).ok());
    auto reader = ProfileReader::OpenBytes(bytes);
    ASSERT_TRUE(reader.ok());
    if (!with) {
      EXPECT_FALSE(reader->recorded_unwinding().has_value());
      continue;
    }
    ASSERT_TRUE(reader->recorded_unwinding().has_value());
    const UnwindStatistics& read = *reader->recorded_unwinding();
    EXPECT_EQ(read.samples, 120u);
    EXPECT_EQ(read.complete, 100u);
    EXPECT_EQ(read.user_frames, 900u);
    for (size_t i = 0; i < kUnwindEndCount; ++i) {
      EXPECT_EQ(read.stopped[i].samples, stats.stopped[i].samples) << i;
      EXPECT_EQ(read.stopped[i].leaf_only, stats.stopped[i].leaf_only) << i;
      EXPECT_EQ(read.stopped[i].named.module, stats.stopped[i].named.module) << i;
    }
  }
}

// The decoder reads one sample ahead: a visitor hears of a sample (OnSampleAhead) just before the
// one before it is visited, only when no other record comes between, and every record is still
// visited once, in order, including the samples before a malformed record.
TEST(FormatTest, TheDecoderTellsOfTheNextSampleWithoutReorderingRecords) {
  struct Log : RecordVisitor {
    std::vector<std::string> events;
    void OnSample(const Sample& s) override { events.push_back("s" + std::to_string(s.time)); }
    void OnSampleAhead(const Sample& s) override {
      events.push_back("ahead" + std::to_string(s.time));
    }
    void OnMmap(const MmapRecord& r) override { events.push_back("m" + std::to_string(r.time)); }
    void OnComm(const CommRecord& r) override { events.push_back("c" + std::to_string(r.time)); }
    bool takes_sample_hints() const override { return hints; }
    bool hints = true;
  };
  auto sample = [](uint64_t time) {
    Sample s;
    s.time = time;
    s.pid = s.tid = 3;
    s.period = 1;
    s.ip = 0x10 + time;
    s.callchain = {kContextUser, s.ip, 0x99};
    return s;
  };
  RecordEncoder encoder;
  encoder.Encode(sample(1));
  encoder.Encode(sample(2));
  MmapRecord m;
  m.time = 3;
  m.filename = "a.so";
  encoder.Encode(m);
  for (uint64_t t : {4, 5, 6}) encoder.Encode(sample(t));
  CommRecord c;
  c.time = 7;
  c.comm = "x";
  encoder.Encode(c);
  encoder.Encode(sample(8));
  const std::string whole = encoder.bytes();

  Log log;
  RecordDecoder decoder;
  auto decoded = decoder.DecodeChunk(std::string_view(whole), 8, log);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message();
  EXPECT_EQ(log.events, (std::vector<std::string>{"ahead2", "s1", "s2", "m3", "ahead5", "s4",
                                                  "ahead6", "s5", "s6", "c7", "s8"}));
  // A visitor that takes no hints gets none, and the same records in the same order.
  Log plain;
  plain.hints = false;
  ASSERT_TRUE(RecordDecoder().DecodeChunk(std::string_view(whole), 8, plain).ok());
  EXPECT_EQ(plain.events,
            (std::vector<std::string>{"s1", "s2", "m3", "s4", "s5", "s6", "c7", "s8"}));

  // The next chunk starts afresh: nothing of the last one is left waiting.
  RecordEncoder next;
  next.Encode(sample(20));
  next.Encode(sample(21));
  const std::string second = next.bytes();
  log.events.clear();
  ASSERT_TRUE(decoder.DecodeChunk(std::string_view(second), 2, log).ok());
  EXPECT_EQ(log.events, (std::vector<std::string>{"ahead21", "s20", "s21"}));

  // A sample cut short after two good ones: both good ones are visited, then the error.
  RecordEncoder cut;
  for (uint64_t t : {30, 31, 32}) cut.Encode(sample(t));
  const std::string damaged = cut.bytes().substr(0, cut.bytes().size() - 2);
  log.events.clear();
  auto failed = RecordDecoder().DecodeChunk(std::string_view(damaged), 3, log);
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(log.events, (std::vector<std::string>{"ahead31", "s30", "s31"}));
}

// Chains as perf records them: a user stack after the user marker, or a kernel stack, then the
// user marker and the user stack.
std::vector<std::vector<uint64_t>> PerfLikeChains(std::mt19937_64& random) {
  std::vector<std::vector<uint64_t>> chains;
  for (int c = 0; c < 40; ++c) {
    std::vector<uint64_t> chain;
    if (c % 2) {
      chain.push_back(kContextKernel);
      for (int k = 0; k < 1 + c % 7; ++k) chain.push_back(0xffffffff81000000ull + random() % 4096);
    }
    chain.push_back(kContextUser);
    for (int u = 0; u < 2 + c % 20; ++u) chain.push_back(0x400000 + random() % 65536);
    chains.push_back(chain);
  }
  return chains;
}

// One chunk of `records` of the generator's, half of the samples' chains replaced by one of
// `chains`.
std::string EncodeMixedRecords(testing::RecordGenerator& generator, std::mt19937_64& random,
                               const std::vector<std::vector<uint64_t>>& chains, uint64_t records) {
  RecordEncoder encoder;
  for (uint64_t i = 0; i < records; ++i) {
    testing::AnyRecord record = generator.Next();
    if (auto* sample = std::get_if<Sample>(&record); sample && random() % 2) {
      sample->callchain = chains[random() % chains.size()];
      sample->ip = sample->callchain[1];
    }
    std::visit([&](const auto& r) { encoder.Encode(r); }, record);
  }
  return encoder.bytes();
}

// Cut anywhere, `bytes` decode for an `Other` visitor as for one that takes whole chains: the
// same failure or success, and records that `alike` finds alike.
template <typename Other, typename Alike>
void ExpectCutsDecodeAlike(const std::string& bytes, std::mt19937_64& random, Alike alike) {
  for (int cut = 0; cut < 300; ++cut) {
    const std::string damaged = bytes.substr(0, random() % bytes.size());
    testing::CollectingVisitor whole;
    Other other;
    auto a = RecordDecoder().DecodeChunk(damaged.data(), damaged.size(), whole);
    auto b = RecordDecoder().DecodeChunk(damaged.data(), damaged.size(), other);
    ASSERT_EQ(b.ok(), a.ok()) << "cut at " << damaged.size();
    if (!a.ok()) {
      EXPECT_EQ(b.error().message(), a.error().message());
    }
    EXPECT_TRUE(alike(whole, other)) << "cut at " << damaged.size();
  }
}

// A visitor that reads only a sample's leaf (RecordVisitor::reads_callers false) gets a prefix of
// each callchain, and through KernelEntryCredit the same leaf, context and credited pc as from
// the whole chain; every other field whole. On damaged bytes both decodings stop alike.
TEST(RecordCodec, ADecoderForLeafReadersKeepsWhatTheyRead) {
  struct LeafReader : testing::CollectingVisitor {
    bool reads_callers() const override { return false; }
  };
  std::vector<EventDesc> events(3);
  for (EventDesc& e : events) e.sample_regs_user = UserPcRegisterBit("x86_64");
  // The generator's chains (markers in odd places, none before the leaf) and half of the
  // samples' replaced by chains as perf records them: a user stack after the user marker, or a
  // kernel stack, then the user marker and the user stack.
  std::mt19937_64 random(5);
  const std::vector<std::vector<uint64_t>> perf_chains = PerfLikeChains(random);
  testing::RecordGenerator generator(31);
  const uint64_t records = 20000;
  const std::string bytes = EncodeMixedRecords(generator, random, perf_chains, records);

  testing::CollectingVisitor whole, whole_credited;
  LeafReader leaf, leaf_credited;
  KernelEntryCredit credit_whole(events, "x86_64", whole_credited);
  KernelEntryCredit credit_leaf(events, "x86_64", leaf_credited);
  ASSERT_FALSE(credit_leaf.reads_callers());
  // A filter that reads the kernel stack itself asks for whole chains whatever follows it.
  testing::MappingNamedResolver resolver;
  std::array<int, kOffCpuReasons> no_reasons;
  no_reasons.fill(-1);
  EXPECT_TRUE(OffCpuReasonSplitter(resolver, 0, no_reasons, leaf).reads_callers());
  for (RecordVisitor* v :
       std::initializer_list<RecordVisitor*>{&whole, &leaf, &credit_whole, &credit_leaf}) {
    auto decoded = RecordDecoder().DecodeChunk(std::string_view(bytes), records, *v);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message();
  }
  ASSERT_EQ(leaf.records.size(), whole.records.size());
  ASSERT_EQ(leaf_credited.records.size(), whole_credited.records.size());
  size_t samples = 0, shortened = 0, kernel_leaves = 0;
  for (size_t i = 0; i < whole.records.size(); ++i) {
    const auto* w = std::get_if<Sample>(&whole.records[i]);
    if (!w) {
      EXPECT_EQ(leaf.records[i], whole.records[i]) << i;
      continue;
    }
    ++samples;
    Sample l = std::get<Sample>(leaf.records[i]);
    ASSERT_LE(l.callchain.size(), w->callchain.size()) << i;
    EXPECT_TRUE(std::equal(l.callchain.begin(), l.callchain.end(), w->callchain.begin())) << i;
    shortened += l.callchain.size() < w->callchain.size();
    const SplitStack a = SplitLeaf(*w), b = SplitLeaf(l);
    EXPECT_EQ(b.has_leaf, a.has_leaf) << i;
    EXPECT_EQ(b.leaf, a.leaf) << i;
    EXPECT_EQ(b.leaf_kernel, a.leaf_kernel) << i;
    kernel_leaves += a.leaf_kernel;
    l.callchain = w->callchain;
    EXPECT_EQ(l, *w) << i;  // the rest of the sample is whole
    const Sample& cw = std::get<Sample>(whole_credited.records[i]);
    const Sample& cl = std::get<Sample>(leaf_credited.records[i]);
    EXPECT_EQ(cl.ip, cw.ip) << i;
    EXPECT_EQ(SplitLeaf(cl).leaf, SplitLeaf(cw).leaf) << i;
    EXPECT_EQ(SplitLeaf(cl).leaf_kernel, SplitLeaf(cw).leaf_kernel) << i;
  }
  const KernelCreditStatistics& sw = credit_whole.statistics();
  const KernelCreditStatistics& sl = credit_leaf.statistics();
  EXPECT_EQ(sl.kernel_samples, sw.kernel_samples);
  EXPECT_EQ(sl.from_callchain, sw.from_callchain);
  EXPECT_EQ(sl.from_registers, sw.from_registers);
  EXPECT_EQ(sl.without_user_context, sw.without_user_context);
  // The generator's mix: chains cut, kernel leaves credited both ways.
  EXPECT_GT(shortened, samples / 4);
  EXPECT_GT(kernel_leaves, samples / 10);
  EXPECT_GT(sw.from_callchain, 0u);
  EXPECT_GT(sw.from_registers, 0u);

  ExpectCutsDecodeAlike<LeafReader>(bytes, random, [](const auto& whole, const auto& leaf) {
    return whole.records.size() == leaf.records.size();
  });
}

// A visitor that takes deferred callchains (RecordVisitor::takes_deferred_callchains) gets each
// chain's leaf context decoded and the rest as the chunk holds it: completed, every sample is the
// one a whole decoding gives, equal bytes stand for equal chains (written in full or referred to
// in the chunk), and KernelEntryCredit rewrites the same samples. Other visitors, and any behind a
// filter, get whole chains; on damaged bytes both decodings stop alike.
TEST(RecordCodec, DeferredCallchainsCompleteToTheWholeOnes) {
  struct Deferring : testing::CollectingVisitor {
    bool takes_deferred_callchains() const override { return true; }
    void OnSample(const Sample& s) override {
      if (s.deferred_callchain) {
        ++deferred;
        const DeferredCallchain& d = s.deferred_callchain;
        bytes.push_back(std::string(reinterpret_cast<const char*>(d.bytes), d.size));
        leaf_contexts.push_back(s.callchain);
      } else {
        bytes.emplace_back();
        leaf_contexts.emplace_back();
      }
      Sample whole = s;
      CompleteCallchain(whole);
      records.push_back(whole);
    }
    size_t deferred = 0;
    std::vector<std::string> bytes;  // per sample: its deferred bytes, or empty
    std::vector<std::vector<uint64_t>> leaf_contexts;
  };
  std::vector<EventDesc> events(3);
  for (EventDesc& e : events) e.sample_regs_user = UserPcRegisterBit("x86_64");
  std::mt19937_64 random(11);
  const std::vector<std::vector<uint64_t>> perf_chains = PerfLikeChains(random);
  // Two chunks: a chain written in full in the second was referred to in the first.
  std::vector<std::string> chunks;
  std::vector<uint64_t> chunk_records;
  testing::RecordGenerator generator(37);
  for (int c = 0; c < 2; ++c) {
    chunks.push_back(EncodeMixedRecords(generator, random, perf_chains, 10000));
    chunk_records.push_back(10000);
  }
  testing::CollectingVisitor whole, whole_credited, filtered;
  Deferring deferring, deferring_credited, behind_filter;
  KernelEntryCredit credit_whole(events, "x86_64", whole_credited);
  KernelEntryCredit credit_deferring(events, "x86_64", deferring_credited);
  ForwardingVisitor filter(behind_filter);
  EXPECT_TRUE(credit_deferring.takes_deferred_callchains());
  EXPECT_FALSE(filter.takes_deferred_callchains());
  EXPECT_FALSE(credit_whole.takes_deferred_callchains());
  for (RecordVisitor* v : std::initializer_list<RecordVisitor*>{&whole, &deferring, &credit_whole,
                                                                &credit_deferring, &filter}) {
    RecordDecoder decoder;
    for (size_t c = 0; c < chunks.size(); ++c) {
      auto decoded = decoder.DecodeChunk(std::string_view(chunks[c]), chunk_records[c], *v);
      ASSERT_TRUE(decoded.ok()) << decoded.error().message();
    }
  }
  EXPECT_EQ(deferring.records, whole.records);
  EXPECT_EQ(deferring_credited.records, whole_credited.records);
  EXPECT_EQ(behind_filter.records, whole.records);
  EXPECT_EQ(behind_filter.deferred, 0u);
  const KernelCreditStatistics& sw = credit_whole.statistics();
  const KernelCreditStatistics& sd = credit_deferring.statistics();
  EXPECT_EQ(sd.from_callchain, sw.from_callchain);
  EXPECT_EQ(sd.from_registers, sw.from_registers);
  EXPECT_GT(sw.from_callchain, 100u);
  // Bytes and chains go one to one; the leaf context is the chain's start.
  std::map<std::string, std::vector<uint64_t>> chain_of_bytes;
  std::map<std::vector<uint64_t>, std::string> bytes_of_chain;
  size_t samples = 0;
  for (size_t i = 0, s = 0; i < whole.records.size(); ++i) {
    const auto* w = std::get_if<Sample>(&whole.records[i]);
    if (!w) continue;
    ++samples;
    const std::string& bytes = deferring.bytes[s];
    const std::vector<uint64_t>& leaf = deferring.leaf_contexts[s++];
    if (bytes.empty()) continue;
    ASSERT_LT(leaf.size(), w->callchain.size()) << i;
    EXPECT_TRUE(std::equal(leaf.begin(), leaf.end(), w->callchain.begin())) << i;
    EXPECT_EQ(chain_of_bytes.try_emplace(bytes, w->callchain).first->second, w->callchain) << i;
    EXPECT_EQ(bytes_of_chain.try_emplace(w->callchain, bytes).first->second, bytes) << i;
  }
  // Every chain as perf records them (half of the samples) has callers past its leaf's context.
  EXPECT_GT(deferring.deferred, samples * 4 / 10);
  EXPECT_GE(chain_of_bytes.size(), perf_chains.size());

  ExpectCutsDecodeAlike<Deferring>(chunks[0], random, [](const auto& whole, const auto& deferred) {
    return whole.records == deferred.records;
  });
}

// A sample with a deferred callchain reaches a visitor that does not take them completed, and
// one that does as it came.
TEST(RecordCodec, AVisitorThatDoesNotTakeDeferredChainsGetsThemWhole) {
  Sample full;
  full.pid = full.tid = 4;
  full.ip = 0x401000;
  full.callchain = {kContextUser, 0x401000, 0x402000, 0x403000, 0x404000};
  RecordEncoder encoder;
  encoder.Encode(full);
  encoder.Encode(full);
  struct Taking : testing::CollectingVisitor {
    bool takes_deferred_callchains() const override { return true; }
    void OnSample(const Sample& s) override {
      Sample scratch;
      OnSampleWithChainFor(plain, s, scratch);
      OnSampleWithChainFor(taking, s, scratch);
    }
    testing::CollectingVisitor plain;
    struct : testing::CollectingVisitor {
      bool takes_deferred_callchains() const override { return true; }
      void OnSample(const Sample& s) override { deferred += s.deferred_callchain ? 1 : 0; }
      int deferred = 0;
    } taking;
  } visitor;
  ASSERT_TRUE(RecordDecoder().DecodeChunk(std::string_view(encoder.bytes()), 2, visitor).ok());
  ASSERT_EQ(visitor.plain.records.size(), 2u);
  EXPECT_EQ(std::get<Sample>(visitor.plain.records[0]), full);
  EXPECT_EQ(std::get<Sample>(visitor.plain.records[1]), full);  // referred to in the chunk
  EXPECT_EQ(visitor.taking.deferred, 2);
}

}  // namespace
}  // namespace tprof
