// Byte order conversion of kernel records written on a machine of the other endianness, so the
// shared record parser (core/perfdata/perf_record_parser.h) only ever sees native bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/perfdata/perf_record_parser.h"

namespace tprof {

// Rewrites, in place, the body of a PERF_RECORD_* (the bytes after its header) into native byte
// order, field by field as its type and `layout` describe it. `layout` is the record's event for
// a sample, the first event for the sample_id block of other records. Bytes the model ignores
// (RAW payloads, stack copies) are left alone; a body shorter than its layout is converted as far
// as it goes, and the parser reports it as malformed.
void SwapPerfRecordBody(uint32_t type, uint16_t misc, uint8_t* body, size_t size,
                        const PerfRecordLayout& layout);

// A branch entry's flags word as a big-endian compiler lays out the bitfield, converted to the
// little-endian packing BranchEntry uses (mispred in bit 0, cycles in bits 4..19, ...).
uint64_t SwapBranchFlags(uint64_t big_endian_flags);

}  // namespace tprof
