// Facts about the machine recorded into a profile's metadata.
#pragma once

#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/model/profile.h"

namespace tprof {

// Fills hostname, kernel release, architecture, CPU count and CPU description.
void FillHostMetadata(Metadata* metadata);
// The CPU this runs on: /proc/cpuinfo, and on Arm the MIDR from sysfs (else from cpuinfo).
CpuDescription DetectCpu();
// /proc/cpuinfo's first processor: x86 vendor, family, model, stepping and model name; on Arm
// the MIDR assembled from the implementer, variant, part and revision fields.
CpuDescription ParseCpuInfo(const std::string& cpuinfo);
// Online CPU numbers from /sys/devices/system/cpu/online.
std::vector<int> OnlineCpus();
// Nanoseconds on CLOCK_MONOTONIC (the clock of record timestamps) and on the wall clock.
uint64_t MonotonicNowNs();
uint64_t RealtimeNowNs();
// The highest sampling rate the kernel allows (kernel.perf_event_max_sample_rate, which it
// lowers by itself where sampling interrupts take long), as perf reads it for -F max.
Result<uint64_t> ReadMaxSampleRate();

}  // namespace tprof
