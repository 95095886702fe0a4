// Reads the text `perf script` prints: the default fields and the common -F variants (with or
// without cpu, time, period and event name; "pid" or "pid/tid"; callchains one frame per line
// or a single ip/sym/dso on the sample line; "+0x" offsets, "[unknown]" symbols, srcline lines).
// Frames arrive named, so samples get made-up addresses resolved by TextProfile::frames.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/base/error.h"
#include "core/perfdata/text_profile.h"

namespace tprof {

// Kernel code as perf script names its module: [kernel.kallsyms] (and its .init.text form),
// a vmlinux file, a kernel module (*.ko, or "[name]" as perf prints loaded modules), or an
// [unknown] module at a kernel address. [vdso], [vsyscall], [heap], [stack], [anon...],
// [uprobes] and [jit...] are user space.
bool IsKernelModule(std::string_view module_path, uint64_t address, bool has_address);

// True when the text's first sample line looks like perf script output.
bool LooksLikePerfScript(std::string_view head);

// Parses the whole text. Lines that belong to no sample (warnings, srcline, other records) are
// counted and skipped; text with no sample at all is an error naming the first bad line.
Result<TextProfile> ParsePerfScript(std::string_view text);

}  // namespace tprof
