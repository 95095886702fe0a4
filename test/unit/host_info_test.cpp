// CPU detection from /proc/cpuinfo text, as the kernels of both architectures print it.
#include "pmu/host_info.h"

#include <gtest/gtest.h>

namespace tprof {
namespace {

// The arm lab's emulated Neoverse N1 r4p1; the kernel's sysfs midr_el1 read 0x414fd0c1 there.
constexpr const char* kNeoverseN1 =
    "processor\t: 0\n"
    "BogoMIPS\t: 125.00\n"
    "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid\n"
    "CPU implementer\t: 0x41\n"
    "CPU architecture: 8\n"
    "CPU variant\t: 0x4\n"
    "CPU part\t: 0xd0c\n"
    "CPU revision\t: 1\n"
    "\n"
    "processor\t: 1\n"
    "CPU implementer\t: 0x41\n"
    "CPU architecture: 8\n"
    "CPU variant\t: 0x3\n"
    "CPU part\t: 0xd49\n"
    "CPU revision\t: 0\n";

TEST(HostInfoTest, ArmMidrComesFromTheFirstProcessorsCpuinfoFields) {
  CpuDescription cpu = ParseCpuInfo(kNeoverseN1);
  EXPECT_EQ(cpu.vendor, "ARM");
  EXPECT_EQ(cpu.midr, 0x414fd0c1u);
}

TEST(HostInfoTest, X86HasVendorFamilyAndModelAndNoMidr) {
  CpuDescription cpu = ParseCpuInfo(
      "processor\t: 0\n"
      "vendor_id\t: GenuineIntel\n"
      "cpu family\t: 6\n"
      "model\t\t: 143\n"
      "model name\t: Intel(R) Xeon(R) Platinum 8488C\n"
      "stepping\t: 8\n"
      "\n"
      "processor\t: 1\n"
      "vendor_id\t: AuthenticAMD\n");
  EXPECT_EQ(cpu.vendor, "GenuineIntel");
  EXPECT_EQ(cpu.family, 6u);
  EXPECT_EQ(cpu.model, 143u);
  EXPECT_EQ(cpu.stepping, 8u);
  EXPECT_EQ(cpu.midr, 0u);
}

TEST(HostInfoTest, ArmWithoutAPartNumberHasNoMidr) {
  CpuDescription cpu = ParseCpuInfo("processor\t: 0\nCPU implementer\t: 0x41\n");
  EXPECT_EQ(cpu.vendor, "ARM");
  EXPECT_EQ(cpu.midr, 0u);
}

}  // namespace
}  // namespace tprof
